// SPDX-License-Identifier: GPL-2.0
/*
 * bench_floor.bpf.c - the floor of syscall tracing, for bench/trace_overhead.c: tp_btf
 * sys_enter/sys_exit programs that only read their tgid and return. Any program on the
 * syscall tracepoints puts every task of the machine on the kernel's slow path and costs two
 * program runs per call; this is that cost and nothing else, the cost every tracer pays.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/usdt.bpf.h>

char LICENSE[] SEC("license") = "GPL";

const volatile __u32 target_tgid = 0;
__u64 hits = 0;

static __always_inline void floor_work(void)
{
	/* a side effect for one process only, so the read cannot be optimised away and no
	 * cache line is shared between CPUs */
	if ((__u32)(bpf_get_current_pid_tgid() >> 32) == target_tgid)
		hits++;
}

SEC("tp_btf/sys_enter")
int BPF_PROG(floor_enter, struct pt_regs *regs, long id)
{
	floor_work();
	return 0;
}

SEC("tp_btf/sys_exit")
int BPF_PROG(floor_exit, struct pt_regs *regs, long ret)
{
	floor_work();
	return 0;
}

SEC("usdt")
int floor_mark(void *ctx)
{
	return 0;
}
