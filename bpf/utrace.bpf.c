// SPDX-License-Identifier: GPL-2.0
/*
 * utrace.bpf.c - user function entry/return tracing (UTraceOpen).
 *
 * One program, attached by userspace as a uprobe at each function entry and at each return
 * instruction of the functions asked for, per traced process, with the probe's site as attach
 * cookie where the kernel has cookies; where it has none (before 5.15), one copy of the
 * program per site, the site a constant of the copy (cfg.site), sharing the maps. A hit is filtered by process (as the caller names it:
 * pidns.bpf.h), then recorded (time, address, thread, cpu, comm, site, and the Go g register
 * when asked) in a ring buffer. A record that cannot be reserved is counted. Nothing here
 * needs BTF: registers are read at the fixed offsets of user_regs.h, and the kernel structs
 * a PID namespace needs read at offsets userspace finds in the kernel's BTF when it has one,
 * so it loads on any kernel with ring buffers (5.8+).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "user_regs.h"
#include "utrace_event.h"
#define KP_PIDNS_NO_CORE 1
#include "pidns.bpf.h"

char LICENSE[] SEC("license") = "GPL";

const volatile struct kp_ut_config cfg = {};

/* UTraceEnable/Disable flip it: probes stay attached from open to close */
volatile __u32 enabled = 0;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1); /* resized by userspace */
	__type(key, __u32); /* tgid */
	__type(value, __u8);
} targets SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 16 << 20); /* resized by userspace */
} events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, KP_UT_CNT_MAX);
	__type(key, __u32);
	__type(value, __u64);
} counters SEC(".maps");

SEC("uprobe")
int kp_utrace_hit(void *ctx)
{
	const struct kp_user_regs *regs = ctx;
	__u64 now = bpf_ktime_get_ns(), id, flags = BPF_RB_NO_WAKEUP;
	struct kp_ut_event *e;
	__u32 tgid, key;
	__u64 *cnt;

	if (!enabled)
		return 0;
	id = kp_pidns_current();
	tgid = id >> 32;
	/* the probes are attached per process already; this also holds on kernels whose
	 * uprobe filter lets other processes mapping the file through */
	if (cfg.filter_pid && !bpf_map_lookup_elem(&targets, &tgid))
		return 0;
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		key = KP_UT_CNT_DROPPED;
		cnt = bpf_map_lookup_elem(&counters, &key);
		if (cnt)
			*cnt += 1;
		return 0;
	}
	e->ts_ns = now;
	e->ip = KP_REGS_IP(regs);
	e->g = cfg.fetch_g ? KP_REGS_GO_G(regs) : 0;
	e->tgid = tgid;
	e->tid = (__u32)id;
	e->cpu = bpf_get_smp_processor_id();
	/* a constant in read-only data: on kernels without the helper the verifier never sees
	 * the call, which it removes as dead code */
	e->site = cfg.use_cookie ? (__u32)bpf_get_attach_cookie(ctx) : cfg.site;
	bpf_get_current_comm(e->comm, sizeof(e->comm));
	/* one wake-up per hit would cost more than the hit: wake the reader only when a
	 * good part of the buffer is waiting (it also polls on a timer) */
	if (bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) >= cfg.wakeup_bytes)
		flags = BPF_RB_FORCE_WAKEUP;
	bpf_ringbuf_submit(e, flags);
	return 0;
}
