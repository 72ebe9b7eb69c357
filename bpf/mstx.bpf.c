// SPDX-License-Identifier: GPL-2.0
/*
 * mstx.bpf.c - the mstx markers of libkperf-bpf (user/mstx), collected.
 *
 * Three programs, attached by userspace with libbpf's USDT support to the probes
 * kperf:mark, kperf:range_start and kperf:range_end of every file that holds them. A call is
 * timed first, then filtered (collection paused, process, disabled domain: no map is written
 * for a call that is filtered out, a disabled domain only bumps a counter), then recorded in
 * the ring buffer; a record that cannot be reserved is counted.
 *
 * The process filter (`targets`, tgid -> 1) follows forks through the classic
 * sched_process_fork tracepoint (child_pid at the offset tracefs gives) and forgets a process
 * when its main thread exits; that is the only place processes are handled here.
 *
 * Pids, filtered and reported, are those of the caller's PID namespace (pidns.bpf.h): in a
 * namespace, forks are followed through the raw tracepoint instead (the record's child_pid
 * is the initial namespace's; the child's task gives its pid in the caller's), and a marker
 * of a process the caller does not see reports KP_PID_OUTSIDE (-1).
 *
 * Nothing needs BTF: USDT arguments are read by libbpf's usdt.bpf.h (by attach cookie, or
 * by address on kernels before 5.15), so this loads on every kernel with ring buffers (the
 * pid walk of a namespace takes its offsets from the kernel's BTF, read by userspace).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/usdt.bpf.h>
#include "mstx_event.h"
#define KP_PIDNS_NO_CORE 1
#include "pidns.bpf.h"

char LICENSE[] SEC("license") = "GPL";

const volatile struct kp_mstx_config cfg = {};

/* flipped by userspace (KperfActivityEnable/Disable): the probes stay attached */
volatile __u32 enabled = 0;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 8192); /* resized by userspace */
	__type(key, __u32); /* tgid */
	__type(value, __u8);
} targets SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, struct kp_mstx_domain);
	__type(value, __u8);
} disabled_domains SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 8 << 20); /* resized by userspace */
} events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, KP_MSTX_CNT_MAX);
	__type(key, __u32);
	__type(value, __u64);
} counters SEC(".maps");

static __always_inline void count(__u32 idx)
{
	__u64 *c = bpf_map_lookup_elem(&counters, &idx);

	if (c)
		*c += 1;
}

static __always_inline int record(__u32 kind, __u64 id, const char *domain, const char *msg)
{
	__u64 now = bpf_ktime_get_ns(), pid_tgid, flags = BPF_RB_NO_WAKEUP;
	struct kp_mstx_domain key = {};
	struct kp_mstx_event *e;
	__u32 tgid;

	if (!enabled)
		return 0;
	pid_tgid = kp_pidns_current();
	tgid = pid_tgid >> 32;
	if (cfg.filter_pid && !bpf_map_lookup_elem(&targets, &tgid))
		return 0;
	/* NULL: outside any domain */
	if (!domain)
		__builtin_memcpy(key.name, "default", sizeof("default"));
	else if (bpf_probe_read_user_str(key.name, sizeof(key.name), domain) < 0)
		key.name[0] = '\0';
	if (bpf_map_lookup_elem(&disabled_domains, &key)) {
		count(KP_MSTX_CNT_FILTERED);
		return 0;
	}
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		count(KP_MSTX_CNT_DROPPED);
		return 0;
	}
	e->ts = now;
	e->id = id;
	e->tgid = tgid;
	e->tid = (__u32)pid_tgid;
	e->cpu = bpf_get_smp_processor_id();
	e->kind = kind;
	bpf_get_current_comm(e->comm, sizeof(e->comm));
	__builtin_memcpy(e->domain, key.name, sizeof(key.name));
	e->msg[0] = '\0';
	if (msg && bpf_probe_read_user_str(e->msg, sizeof(e->msg), msg) < 0)
		e->msg[0] = '\0';
	/* one wake-up per call would cost more than the call: wake the reader only when a good
	 * part of the buffer waits (it also polls on a timer) */
	if (bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) >= cfg.wakeup_bytes)
		flags = BPF_RB_FORCE_WAKEUP;
	bpf_ringbuf_submit(e, flags);
	return 0;
}

SEC("usdt")
int BPF_USDT(kp_mstx_mark, __u64 id, const char *domain, const char *msg)
{
	return record(KP_MSTX_MARK, id, domain, msg);
}

SEC("usdt")
int BPF_USDT(kp_mstx_range_start, __u64 id, const char *domain, const char *msg)
{
	return record(KP_MSTX_RANGE_START, id, domain, msg);
}

SEC("usdt")
int BPF_USDT(kp_mstx_range_end, __u64 id, const char *domain)
{
	return record(KP_MSTX_RANGE_END, id, domain, NULL);
}

/* ---- the process filter: follow forks, forget on exit ---- */

static __always_inline void follow_fork(__u32 parent, __u32 child)
{
	__u8 one = 1;

	if (!bpf_map_lookup_elem(&targets, &parent))
		return;
	if (child && child != parent && child != KP_PID_OUTSIDE)
		bpf_map_update_elem(&targets, &child, &one, BPF_ANY);
}

/* in the initial namespace: the child's pid is in the record */
SEC("tracepoint/sched/sched_process_fork")
int kp_mstx_fork(void *ctx)
{
	__u32 child = 0;

	/* child_pid is a tid: for a new thread it is a harmless extra entry, removed when that
	 * thread exits */
	bpf_probe_read_kernel(&child, sizeof(child), ctx + (cfg.fork_child_pid_off & 0xfff));
	follow_fork(bpf_get_current_pid_tgid() >> 32, child);
	return 0;
}

/* in a PID namespace: the child's pid in the caller's namespace, read from its task */
SEC("raw_tracepoint/sched_process_fork")
int kp_mstx_fork_ns(struct bpf_raw_tracepoint_args *ctx)
{
	follow_fork(kp_pidns_current() >> 32, kp_pidns_task_tgid((const void *)ctx->args[1]));
	return 0;
}

SEC("tracepoint/sched/sched_process_exit")
int kp_mstx_exit(void *ctx)
{
	__u32 tid = (__u32)kp_pidns_current();

	bpf_map_delete_elem(&targets, &tid);
	return 0;
}
