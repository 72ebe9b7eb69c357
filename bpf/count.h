/*
 * count.h - what count.bpf.c shares with its owner (user/pmu/bpf_count.c).
 * Fixed-width types only.
 */
#ifndef KPERF_BPF_COUNT_H
#define KPERF_BPF_COUNT_H

#define KP_COUNT_MAX_EVENTS 32 /* events of one BPF-mode counting task */
#define KP_COUNT_MAX_LEVELS 16 /* cgroup levels looked at (a power of two: indexes are masked) */

/* one accumulated reading: the same three numbers as struct bpf_perf_event_value */
struct kp_count_val {
	__u64 counter;
	__u64 enabled;
	__u64 running;
};

#endif
