/*
 * pidns.bpf.h - the pid the user sees, in every BPF program that filters or reports processes.
 *
 * A kperf-bpf running in a PID namespace (a container without hostPID, a sidecar) takes and
 * prints the pids of that namespace, while bpf_get_current_pid_tgid() gives the initial
 * namespace's. Userspace (user/core/pidns.c) fills `kp_pidns` with the caller's namespace
 * before load; then:
 *   - the caller is in the initial namespace (on == 0): the kernel's own pids, exactly the
 *     code of before (the branch is on read-only data: the verifier drops the other side);
 *   - the current task is in the caller's namespace: bpf_get_ns_current_pid_tgid() (5.7+);
 *   - any other task (one in a namespace nested below the caller's, a fork's child, a task
 *     the caller cannot see): its struct pid holds one (nr, namespace) per level, from the
 *     initial namespace down to its own; the level whose namespace is the caller's gives the
 *     pid, and no such level means the caller does not see the task: KP_PID_OUTSIDE.
 * Objects built with CO-RE find the fields by CO-RE relocations; the ones built without
 * (KP_PIDNS_NO_CORE: the raw_syscalls fallback, uprobes) get their offsets from userspace,
 * which reads them in the kernel's BTF (without BTF, only the caller's own namespace is seen).
 */
#ifndef KPERF_BPF_PIDNS_BPF_H
#define KPERF_BPF_PIDNS_BPF_H

#include "pidns_cfg.h"

const volatile struct kp_pidns_cfg kp_pidns = {};

/* where the walk reads; constants after relocation (CO-RE) or load (offsets) */
static __always_inline void kp_pidns_layout(struct kp_pidns_offsets *o)
{
#ifdef KP_PIDNS_NO_CORE
	*o = kp_pidns.off;
#else
	o->task_thread_pid = bpf_core_field_offset(struct task_struct, thread_pid);
	o->task_group_leader = bpf_core_field_offset(struct task_struct, group_leader);
	o->pid_level = bpf_core_field_offset(struct pid, level);
	o->pid_numbers = bpf_core_field_offset(struct pid, numbers);
	o->upid_size = bpf_core_type_size(struct upid);
	o->upid_nr = bpf_core_field_offset(struct upid, nr);
	o->upid_ns = bpf_core_field_offset(struct upid, ns);
	o->ns_inum = bpf_core_field_offset(struct pid_namespace, ns.inum);
#endif
}

/* the number of struct pid <pid> in the caller's namespace, KP_PID_OUTSIDE if it has none */
static __always_inline __u32 kp_pidns_nr(const struct kp_pidns_offsets *o, const void *pid)
{
	__u32 level = 0, inum, i;
	const void *upid, *ns;
	int nr;

	if (!pid || bpf_probe_read_kernel(&level, sizeof(level), pid + o->pid_level))
		return KP_PID_OUTSIDE;
	/* from the task's own level up: a task in the caller's namespace or just below it is
	 * found in one or two steps */
	for (i = 0; i < KP_PIDNS_MAX_LEVEL; i++) {
		if (i > level)
			break;
		upid = pid + o->pid_numbers + (__u64)(level - i) * o->upid_size;
		if (bpf_probe_read_kernel(&ns, sizeof(ns), upid + o->upid_ns) || !ns)
			break;
		if (bpf_probe_read_kernel(&inum, sizeof(inum), ns + o->ns_inum))
			break;
		if (inum != kp_pidns.ino)
			continue;
		if (bpf_probe_read_kernel(&nr, sizeof(nr), upid + o->upid_nr))
			break;
		return (__u32)nr;
	}
	return KP_PID_OUTSIDE;
}

/* the struct pid of <task>, or of its thread group leader */
static __always_inline const void *kp_pidns_pid_of(const struct kp_pidns_offsets *o,
						   const void *task, bool leader)
{
	const void *pid = NULL;

	if (leader && bpf_probe_read_kernel(&task, sizeof(task), task + o->task_group_leader))
		return NULL;
	if (!task || bpf_probe_read_kernel(&pid, sizeof(pid), task + o->task_thread_pid))
		return NULL;
	return pid;
}

/* the pid of <task> (leader: of its thread group) in the caller's namespace, when the caller
 * is not in the initial one (kp_pidns.on) */
static __always_inline __u32 kp_pidns_walk(const void *task, bool leader)
{
	struct kp_pidns_offsets o;

#ifdef KP_PIDNS_NO_CORE
	if (!kp_pidns.have_offsets)
		return KP_PID_OUTSIDE;
#endif
	kp_pidns_layout(&o);
	return kp_pidns_nr(&o, kp_pidns_pid_of(&o, task, leader));
}

/* both: (tgid << 32 | tid); a thread's namespaces are its leader's, so both or neither */
static __always_inline __u64 kp_pidns_walk_ids(const void *task)
{
	__u32 tgid = kp_pidns_walk(task, true), tid;

	if (tgid == KP_PID_OUTSIDE)
		return ((__u64)KP_PID_OUTSIDE << 32) | KP_PID_OUTSIDE;
	tid = kp_pidns_walk(task, false);
	return ((__u64)tgid << 32) | tid;
}

/* The current task as bpf_get_current_pid_tgid() gives it (tgid << 32 | tid), in the caller's
 * namespace; KP_PID_OUTSIDE in both halves for a task the caller does not see. */
static __always_inline __u64 kp_pidns_current(void)
{
	struct bpf_pidns_info ns;

	if (!kp_pidns.on)
		return bpf_get_current_pid_tgid();
	if (!bpf_get_ns_current_pid_tgid(kp_pidns.dev, kp_pidns.ino, &ns, sizeof(ns)))
		return ((__u64)ns.tgid << 32) | ns.pid;
	/* not in the caller's namespace itself: below it, or out of its sight */
	return kp_pidns_walk_ids((const void *)bpf_get_current_task());
}

#ifndef KP_PIDNS_NO_CORE
/* The process of any task (a fork's child, the task of a tp_btf event), in the caller's
 * namespace; KP_PID_OUTSIDE when the caller does not see it. */
static __always_inline __u32 kp_pidns_task_tgid(const struct task_struct *task)
{
	if (!kp_pidns.on)
		return BPF_CORE_READ(task, tgid);
	return kp_pidns_walk(task, true);
}

/* The thread <task> (in a tp_btf or raw_tp event, whose task is not always the current one)
 * as the caller names it; KP_PID_OUTSIDE when the caller does not see it, or no more (a
 * task whose pid was released) */
static __always_inline __u32 kp_pidns_task_tid(const struct task_struct *task)
{
	if (!kp_pidns.on)
		return BPF_CORE_READ(task, pid);
	return kp_pidns_walk(task, false);
}
#else
/* The same, in a PID namespace only (the objects without CO-RE ask it only there: in the
 * initial namespace, their programs read pids from the tracepoint records). */
static __always_inline __u32 kp_pidns_task_tgid(const void *task)
{
	return kp_pidns_walk(task, true);
}
#endif

#endif
