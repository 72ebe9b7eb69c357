// SPDX-License-Identifier: GPL-2.0
/*
 * bench_floor.bpf.c - the cheapest possible syscall tracer, for bench/trace_overhead.c:
 * tp_btf sys_enter/sys_exit programs that only look the process up in a filter map and
 * return. What a traced call costs above this is what kperf-bpf's own work costs; this
 * itself is the kernel's syscall-tracepoint slow path plus two program runs.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "GPL";

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 64);
	__type(key, __u32);
	__type(value, __u8);
} targets SEC(".maps");

__u64 hits = 0;

static __always_inline void filter(void)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;

	if (bpf_map_lookup_elem(&targets, &tgid))
		hits++; /* a side effect, so the lookup cannot be optimised away */
}

SEC("tp_btf/sys_enter")
int BPF_PROG(floor_enter, struct pt_regs *regs, long id)
{
	filter();
	return 0;
}

SEC("tp_btf/sys_exit")
int BPF_PROG(floor_exit, struct pt_regs *regs, long ret)
{
	filter();
	return 0;
}
