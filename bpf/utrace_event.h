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

/* one hit of a probe */
struct kp_ut_event {
	__u64 ts_ns; /* CLOCK_MONOTONIC, taken first thing */
	__u64 ip; /* the probed address in the process */
	__u64 g; /* the Go runtime's g (its register at the probe), when asked */
	__u32 tgid;
	__u32 tid;
	__u32 cpu;
	/* the probe's site + 1: its attach cookie, or on kernels without cookies (before
	 * 5.15) the constant of the program's copy for that site (kp_ut_config.site); 0 when
	 * unknown, then userspace tells the site from (tgid, ip) and the process's mappings */
	__u32 site;
	char comm[KP_UT_COMM_LEN];
};

struct kp_ut_config {
	__u64 wakeup_bytes; /* force a reader wake-up once this much data is waiting */
	__u8 filter_pid; /* only the processes of `targets` */
	__u8 fetch_g; /* read the g register into each record */
	__u8 use_cookie; /* the kernel has bpf_get_attach_cookie */
	__u8 pad;
	__u32 site; /* without cookies: the site + 1 of this copy of the program (0: none) */
};

#endif
