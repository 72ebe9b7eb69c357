/*
 * memscope_event.h - what memscope.bpf.c shares with its owner (user/memscope/bpf.c): the
 * record of one allocator call or one piece of "use" evidence, the allocator functions the
 * probes stand for, the counters and the load-time configuration. Fixed-width types only.
 */
#ifndef KPERF_BPF_MEMSCOPE_EVENT_H
#define KPERF_BPF_MEMSCOPE_EVENT_H

/* the allocator functions, in the order userspace looks them up (the first name found at an
 * address names the probe there: glibc's aliases share addresses) */
enum kp_ms_func {
	KP_MS_MALLOC = 0,
	KP_MS_CALLOC,
	KP_MS_REALLOC,
	KP_MS_FREE,
	KP_MS_POSIX_MEMALIGN,
	KP_MS_ALIGNED_ALLOC,
	KP_MS_MEMALIGN,
	KP_MS_VALLOC,
	KP_MS_PVALLOC,
	KP_MS_MMAP,
	KP_MS_MUNMAP,
	KP_MS_BRK,
	KP_MS_ACCESS_MARK, /* kperf_mem_access(ptr, size) of libkperf-bpf: an explicit use */
	KP_MS_NFUNCS
};

/* what a record is */
enum kp_ms_kind {
	KP_MS_EV_ALLOC = 1, /* ptr, size: a block came to be (func says how) */
	KP_MS_EV_FREE = 2, /* ptr (munmap: ptr, size) released */
	KP_MS_EV_REALLOC = 3, /* old released and ptr, size allocated (ptr 0: none) */
	KP_MS_EV_FAULT = 4, /* a first-touch page fault at ptr */
	KP_MS_EV_SYSBUF = 5, /* a syscall (nr) whose buffer [ptr, ptr + size) is user memory */
	KP_MS_EV_MARK = 6, /* kperf_mem_access(ptr, size) */
	KP_MS_EV_BRK = 7, /* brk(ptr) outside the allocator: the break moved to `size` */
	KP_MS_EV_FORK = 8, /* process tgid was forked by process ptr; nr 1: it will stop
			    * (SIGSTOP) at its start until userspace places its probes */
};

/* indexes of the per-CPU counters array */
enum kp_ms_counter {
	KP_MS_CNT_DROPPED = 0, /* record not reserved: the ring buffer was full */
	KP_MS_CNT_INFLIGHT_FULL = 1, /* a call's entry state could not be kept: call lost */
	KP_MS_CNT_SAMPLED_FULL = 2, /* a sampled block could not be remembered: its free lost */
	KP_MS_CNT_CAP = 3, /* + enum kp_cap_fail: stacks not kept (stack_capture.h) */
	KP_MS_CNT_NOT_STOPPED = KP_MS_CNT_CAP + 3, /* a followed child could not be stopped */
	KP_MS_CNT_MAX
};

/* one record through the ring buffer */
struct kp_ms_event {
	__u64 ts; /* CLOCK_MONOTONIC ns (bpf_ktime_get_ns) */
	__u64 ptr;
	__u64 size;
	__u64 old; /* REALLOC: the block released */
	__u64 stack; /* user stack id in the stacks map (stack_capture.h), 0: none */
	__u64 callsite; /* the return address into the allocator's caller, 0: unknown */
	__u32 tgid; /* as the caller's PID namespace names them (pidns.bpf.h) */
	__u32 tid;
	__u16 kind; /* enum kp_ms_kind */
	__u16 func; /* enum kp_ms_func; SYSBUF: 0 */
	__u32 nr; /* SYSBUF: the syscall number; FAULT: the error code */
};

/* the state of a process in the targets map */
enum kp_ms_target {
	KP_MS_TARGET_ON = 1, /* recorded */
	KP_MS_TARGET_EXEC = 2, /* a launched command: recorded from its exec on */
	KP_MS_TARGET_SEEN = 3, /* recorded, and its first record is out */
	KP_MS_TARGET_FORKED = 4, /* a child being followed: stopped at its start, not recorded
				  * until userspace has placed its probes (then ON) */
	KP_MS_TARGET_STOPPED = 5, /* such a child, sent SIGSTOP */
};

#define KP_MS_EXP_TABLE 1024 /* quantiles of the exponential distribution (sampling) */

struct kp_ms_config {
	__u64 wakeup_bytes; /* force a reader wake-up once this much data is waiting */
	__u64 min_size; /* blocks smaller than this are not recorded (0: all) */
	__u64 sample_bytes; /* mean bytes between samples; 0: every call (exact mode) */
	__u8 stacks; /* take the user stack of each allocation (-g) */
	__u8 faults; /* the page-fault program is attached */
	__u8 follow; /* the children the recorded processes fork are recorded too */
	__u8 pad[5];
	/* sampling: the gaps between samples, in bytes, as KP_MS_EXP_TABLE quantiles of an
	 * exponential distribution of mean sample_bytes (a random index picks one) */
	__u64 exp_gap[KP_MS_EXP_TABLE];
	/* the syscall numbers whose second argument is a buffer and third its length
	 * (read, write, pread64, pwrite64, recvfrom, sendto), -1 where unused */
	__s32 buf_syscalls[8];
};

#endif
