/*
 * syscall_cgroup.bpf.h - the summary by cgroup of syscall.bpf.c (cfg.by_cgroup, for the
 * agent): a per-CPU hash of (cgroup, command name, syscall) rows, written at sys_exit with the
 * cgroup the task is in then (bpf_get_current_cgroup_id(): a helper of every tracing program
 * type, tp_btf and the fallback's tracepoints alike, since 4.18). The workload of a call is
 * known in the kernel when it is made, so a process that lives a millisecond is attributed as
 * well as one that lives a day, and nothing has to be moved when processes exit: the rows
 * stay as long as their cgroup is used (userspace deletes those of emptied cgroups).
 *
 * Included by syscall.bpf.c after its maps and add_call(); a row that cannot be made goes
 * where the process summary's would: the syscall's overflow row when the map is full
 * (-E2BIG), its no-memory row when the allocator had nothing ready (no exits ring here: the
 * rows are few and long-lived, so that is rare).
 */
#ifndef KPERF_BPF_SYSCALL_CGROUP_BPF_H
#define KPERF_BPF_SYSCALL_CGROUP_BPF_H

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 1); /* resized by userspace with cfg.by_cgroup */
	__type(key, struct kp_sys_cg_key);
	__type(value, struct kp_sys_stat);
} cg_summary SEC(".maps");

static __always_inline void update_cg_summary(__u32 tgid, __u32 nr, __u64 dur, long ret)
{
	struct kp_sys_cg_key key = { .nr = nr };
	struct kp_sys_stat *s, *init;
	__u32 zero = 0, idx;
	int err;

	if (tgid != KP_PID_OUTSIDE) {
		key.cgid = bpf_get_current_cgroup_id();
		bpf_get_current_comm(key.comm, sizeof(key.comm));
	}
	s = bpf_map_lookup_elem(&cg_summary, &key);
	if (!s) {
		init = bpf_map_lookup_elem(&zero_stat, &zero);
		if (!init)
			return;
		err = map_answer(bpf_map_update_elem(&cg_summary, &key, init, BPF_NOEXIST));
		s = bpf_map_lookup_elem(&cg_summary, &key);
		if (!s) {
			count(err == -KP_E2BIG ? KP_CNT_SUMMARY_FULL : KP_CNT_NOMEM_FOLDED);
			idx = err == -KP_E2BIG ? nr : nr + cfg.nomem_base;
			s = bpf_map_lookup_elem(&by_nr, &idx);
			if (!s) {
				count(KP_CNT_STATE_FULL);
				return;
			}
		}
	}
	add_call(s, dur, ret);
}

#endif
