/*
 * mstx_event.h - what mstx.bpf.c shares with its owner (user/activity/mstx_bpf.c): the record of
 * one marker call, the counters and the load-time configuration. Fixed-width types only.
 */
#ifndef KPERF_BPF_MSTX_EVENT_H
#define KPERF_BPF_MSTX_EVENT_H

#define KP_MSTX_MSG_LEN 256 /* KPERF_MSTX_MESSAGE_MAX + NUL */
#define KP_MSTX_DOMAIN_LEN 64 /* KPERF_MSTX_DOMAIN_MAX + NUL */
#define KP_MSTX_COMM_LEN 16

enum kp_mstx_kind {
	KP_MSTX_MARK = 1,
	KP_MSTX_RANGE_START = 2,
	KP_MSTX_RANGE_END = 3,
};

/* indexes of the per-CPU counters array */
enum kp_mstx_counter {
	KP_MSTX_CNT_DROPPED = 0, /* record not reserved: the ring buffer was full */
	KP_MSTX_CNT_FILTERED = 1, /* call of a disabled domain, dropped in the kernel */
	KP_MSTX_CNT_MAX
};

/* a domain name as the disabled_domains map keys it: zero-padded */
struct kp_mstx_domain {
	char name[KP_MSTX_DOMAIN_LEN];
};

/* one marker call, through the ring buffer */
struct kp_mstx_event {
	__u64 ts; /* CLOCK_MONOTONIC ns (bpf_ktime_get_ns) */
	__u64 id; /* the call's id, unique in its process */
	__u32 tgid;
	__u32 tid;
	__u32 cpu;
	__u32 kind; /* enum kp_mstx_kind */
	char comm[KP_MSTX_COMM_LEN];
	char domain[KP_MSTX_DOMAIN_LEN];
	char msg[KP_MSTX_MSG_LEN]; /* "" for a range end */
};

struct kp_mstx_config {
	__u64 wakeup_bytes; /* force a reader wake-up once this much data is waiting */
	__u32 fork_child_pid_off; /* offset of child_pid in sched:sched_process_fork */
	__u8 filter_pid; /* only the processes of `targets` */
	__u8 pad[3];
};

#endif
