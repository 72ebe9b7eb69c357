/*
 * sample.h - what sample.bpf.c shares with its owner (user/pmu/sampling.c).
 * Fixed-width types only.
 */
#ifndef KPERF_BPF_SAMPLE_H
#define KPERF_BPF_SAMPLE_H

#define KP_MAX_STACK 127 /* frames per stack (the kernel's perf_event_max_stack) */
#define KP_MAX_EVENTS 64 /* events of one task (attach cookies index kp_evt_cfg) */
#define KP_MAX_DATA_LOC 8 /* __data_loc fields followed when copying a raw record */
#define KP_MAX_RAW 8192 /* bytes of one raw tracepoint record */
#define KP_SAMPLE_COMM 16
/* cgroupNameList: the evt of a key or a record is the event's index | the cgroup's index
 * (in cgroupNameList) << KP_EVT_CGROUP_SHIFT. Sampling events carry both in their attach
 * cookie; a tracepoint's program finds the cgroups of the task that hit it itself, among
 * at most KP_SAMPLE_TP_CGROUPS (one bit each of a mask). */
#define KP_EVT_CGROUP_SHIFT 16
#define KP_EVT_INDEX_MASK 0xffff
#define KP_SAMPLE_MAX_CGROUPS (1 << (32 - KP_EVT_CGROUP_SHIFT))
#define KP_SAMPLE_TP_CGROUPS 64

enum kp_sample_counter {
	KP_SCNT_MAP_FULL = 0, /* sample not counted: the aggregation map is full */
	KP_SCNT_RB_DROPPED = 1, /* record lost: the ring buffer was full */
	KP_SCNT_CAP = 2, /* stacks not kept (stack_capture.h): + enum kp_cap_fail (3 counters) */
	KP_SCNT_MAX = 5
};

/* the values of `targets`: sampled, or a launched command sampled from its exec on (a per-cpu
 * event or a tracepoint sees it before, as kperf-bpf's child: perf's enable_on_exec, for the
 * programs that filter processes themselves) */
enum kp_sample_target {
	KP_SAMPLE_TARGET_ON = 1,
	KP_SAMPLE_TARGET_EXEC = 2,
};

/* aggregation key: one distinct (process, thread, cpu, event, stacks) */
struct kp_sample_key {
	__u32 tgid;
	__u32 tid;
	__u32 cpu;
	__u32 evt; /* index of the event in the task (and cgroup: KP_EVT_CGROUP_SHIFT) */
	__u64 ip; /* the sampled address when no stacks are collected */
	/* the stacks' ids in the stack map (stack_capture.bpf.h: keyed by their frames, never
	 * two stacks under one id), 0 when none */
	__u64 kstack_id;
	__u64 ustack_id; /* unwound from tables or by frame pointers (kp_cap_stack.flags) */
};

struct kp_sample_val {
	__u64 count; /* samples */
	__u64 period; /* sum of their periods */
	char comm[KP_SAMPLE_COMM];
};

/* a record in the ring buffer: a timeline sample, or a tracepoint hit with its raw data */
struct kp_sample_rec {
	__u64 ts;
	__u64 period;
	__u64 ip;
	__u32 tgid;
	__u32 tid;
	__u32 cpu;
	__u32 evt;
	__u32 raw_size; /* bytes of raw record following this header */
	__u32 pad;
	__u64 kstack_id; /* see kp_sample_key */
	__u64 ustack_id;
	char comm[KP_SAMPLE_COMM];
	/* __u8 raw[raw_size] */
};

/* per event, indexed by the attach cookie */
struct kp_evt_cfg {
	__u32 tp_id; /* tracepoints: the event id (common_type) */
	__u32 fixed_size; /* tracepoints: end of the fixed fields */
	__u32 nloc; /* __data_loc fields to follow */
	__u16 loc_off[KP_MAX_DATA_LOC]; /* their offsets */
	__u8 loc_rel[KP_MAX_DATA_LOC]; /* 1: __rel_loc (offset relative to the field end) */
	/* tracepoints: perf's sample period, counted per (event, cgroup, CPU) in tp_pace: a
	 * record every <period> hits (0 and 1: every hit), or with gap_ns (useFreq) at most one
	 * per gap_ns; a record's period is the number of hits it stands for */
	__u32 period;
	__u64 gap_ns;
};

/* a tracepoint's hits on one CPU since its last record (tp_pace) */
struct kp_tp_pace {
	__u64 hits;
	__u64 last_ns; /* when the last record was taken (useFreq) */
};

#define KP_SAMPLE_CPU_WORDS 128 /* tracepoint cpu filter: cpus 0..8191 */
/* tracepoints of one task on kernels without bpf_get_attach_cookie (before 5.15): each has
 * its own copy of the program, kp_tp_record_N, which knows its event from tp_slot_evt[N] */
#define KP_TP_SLOTS 8

struct kp_sample_config {
	__u8 kernel_stack; /* collect kernel stacks */
	__u8 user_stack; /* collect user stacks */
	__u8 timeline; /* samples go to the ring buffer instead of the hash */
	__u8 filter_pid; /* tracepoints: only the processes of `targets` */
	__u8 filter_cpu; /* tracepoints: only the cpus of cpu_mask */
	__u8 filter_tid; /* perThread: `targets` holds threads (the ones of the open), not tgids */
	__u8 filter_sample; /* per-cpu sampling events: only the processes of `targets` */
	__u8 pad[1];
	__u32 tp_slot_evt[KP_TP_SLOTS]; /* kernels without attach cookies: see KP_TP_SLOTS */
	__u32 ncgroups; /* tracepoints: records only for tasks in cgroups[0..ncgroups) */
	__u32 pad2;
	__u64 wakeup_bytes;
	__u64 cpu_mask[KP_SAMPLE_CPU_WORDS];
	struct kp_evt_cfg evt[KP_MAX_EVENTS];
};

#endif
