/*
 * offcpu_event.h - what offcpu.bpf.c shares with its owner (user/offcpu): the per-thread state, the
 * aggregation key and value, and the load-time configuration. Fixed-width types only.
 */
#ifndef KPERF_BPF_OFFCPU_EVENT_H
#define KPERF_BPF_OFFCPU_EVENT_H

#include "stack_capture.h"

#define KP_OFF_COMM 16

/* value of the targets maps (tgid -> state, task -> state) */
enum kp_off_target {
	KP_OFF_ACTIVE = 1, /* followed */
	KP_OFF_UNTIL_EXEC = 2, /* followed from its next exec on */
};

/* indexes of the per-CPU counters array */
enum kp_off_counter {
	KP_OFFC_MAP_FULL = 0, /* a block not counted: the aggregation map was full */
	KP_OFFC_THREADS_FULL = 1, /* a thread not followed: the thread map was full */
	KP_OFFC_CAP = 2, /* + enum kp_cap_fail: a stack not kept (the block is counted without) */
	/* with cfg.slices: a slice not recorded, the ring buffer was full */
	KP_OFFC_SLICE_LOST = KP_OFFC_CAP + KP_CAP_FAILS,
	/* with cfg.slices: a slice shorter than cfg.min_slice_ns, left out */
	KP_OFFC_SLICE_SHORT,
	KP_OFFC_MAX
};

/* a followed thread, keyed by its task_struct's address (known at switch-in without reading
 * the task: so the programs need no BTF) */
struct kp_off_thread {
	__u64 start_ns; /* when its open block began (it left the cpu), 0: none open */
	__u64 kstack; /* the stacks it left the cpu with (stack ids, KP_CAP_NONE) */
	__u64 ustack;
	__u32 tgid;
	__u32 tid;
	__u32 exited; /* it is exiting: its last switch is not a block */
	__u32 preempted; /* its open block began runnable (preempted, waiting for a cpu) */
	__u64 on_since; /* when it came onto the cpu, 0: not known to be on it */
	/* the kernel stack it left the cpu with when its hold stopped it (unwind.bpf.h), until
	 * it leaves the cpu elsewhere; 0: none */
	__u64 hold_kstack;
	char comm[KP_OFF_COMM];
};

/* the kstack of an aggregation key that holds a thread's time on the cpu (measured at its
 * switches), not a block: even, so no stack id (a hash | 1) is ever equal to it */
#define KP_OFF_ON_CPU 2ULL

/* aggregation key: one (process, thread, stacks) */
struct kp_off_key {
	__u32 tgid;
	__u32 tid;
	__u64 kstack;
	__u64 ustack;
};

struct kp_off_val {
	__u64 count; /* blocks */
	__u64 total_ns; /* their time off the cpu */
	char comm[KP_OFF_COMM];
};

struct kp_off_config {
	__u8 filter_pid; /* only the processes of `targets` and their children */
	__u8 kernel_stack; /* take the kernel stack at switch-out */
	__u8 user_stack; /* take the user stack at switch-out */
	__u8 blocked_only; /* leave out preemptions: time runnable, waiting for a cpu */
	__u32 self_tgid; /* the collector: never followed unless a target */
	/* where task_struct keeps its state (__state, or state before 5.14), from the kernel's
	 * BTF: a task that leaves the cpu runnable was preempted. state_size 0: not known (no
	 * BTF), only the scheduler's preempt flag tells */
	__u32 state_off;
	__u32 state_size;
	/* where it keeps tgid, pid and comm (0: not known): a thread of a followed process that
	 * comes onto the cpu before it ever left it is followed from then on (its time on the
	 * cpu is measured from its first slice) */
	__u32 tgid_off;
	__u32 pid_off;
	__u32 comm_off;
	/* 1: each block is a record of the ring buffer `slices` (struct kp_off_slice) instead
	 * of time added to the aggregation maps; no time on the cpu is measured */
	__u32 slices;
	__u64 min_slice_ns; /* with slices: shorter ones are counted (KP_OFFC_SLICE_SHORT) only */
};

/* with cfg.slices: one slice a thread spent off the cpu, from its switch out to its switch
 * back in (bpf_ktime_get_ns: CLOCK_MONOTONIC) */
struct kp_off_slice {
	__u64 start_ns;
	__u64 end_ns;
	__u64 kstack; /* the stacks it left the cpu with (stack ids, KP_CAP_NONE) */
	__u64 ustack;
	__u32 tgid;
	__u32 tid;
	__u32 preempted; /* it left the cpu runnable: preempted, not blocked */
	__u32 pad;
	char comm[KP_OFF_COMM];
};

#endif
