/*
 * utrace_event.h - what utrace.bpf.c shares with its owner (user/utrace/utrace_bpf.c): the record
 * of one probe hit, the counters and the load-time configuration. Fixed-width types only.
 */
#ifndef KPERF_BPF_UTRACE_EVENT_H
#define KPERF_BPF_UTRACE_EVENT_H

#define KP_UT_COMM_LEN 16

enum kp_ut_counter {
	KP_UT_CNT_DROPPED = 0, /* hit not recorded: the ring buffer was full */
	KP_UT_CNT_MAX
};

/* one hit of a probe; userspace tells which function (and entry or return) from (tgid, ip) */
struct kp_ut_event {
	__u64 ts_ns; /* CLOCK_MONOTONIC, taken first thing */
	__u64 ip; /* the probed address in the process */
	__u64 g; /* the Go runtime's g (its register at the probe), when asked */
	__u32 tgid;
	__u32 tid;
	__u32 cpu;
	__u32 pad;
	char comm[KP_UT_COMM_LEN];
};

struct kp_ut_config {
	__u64 wakeup_bytes; /* force a reader wake-up once this much data is waiting */
	__u8 filter_pid; /* only the processes of `targets` */
	__u8 fetch_g; /* read the g register into each record */
	__u8 pad[6];
};

#endif
