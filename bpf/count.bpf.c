// SPDX-License-Identifier: GPL-2.0
/*
 * count.bpf.c - counting in BPF mode (PmuAttr.enableBpf): per-CPU counters, one per
 * (event, CPU), charged to the task that ran.
 *
 * Each event is opened once per CPU for every task; its fd sits in `events` at
 * evt * ncpus + cpu. Whenever a task leaves a CPU (sched_switch: `current` is still the
 * task that ran), kp_count_switch reads the CPU's counters and adds what they advanced
 * since the previous switch on that CPU to the slots the task belongs to: its own thread
 * slot (pid mode: `owners`, tid -> slot, filled by userspace with the threads that exist
 * at PmuOpen and extended to the threads and processes they create), or the slot of every
 * cgroup of `cgroups` it is in, its own or an ancestor (cgroup mode). Userspace runs the
 * same program on each CPU (BPF_PROG_TEST_RUN) before it reads, to charge the tasks that
 * are on a CPU right now. Sums are per CPU and only ever grow; userspace takes deltas.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "count.h"

char LICENSE[] SEC("license") = "GPL";

/* <idx> & <mask> computed in the register that then indexes: clang may otherwise check or
 * mask a copy, which 5.10's verifier does not carry over (the kernel matrix's bpf/bounds.h
 * does the same, as KP_BOUND) */
#define SLOT_INDEX(idx)                                                             \
	({                                                                          \
		__u64 v_ = (__u64)(idx);                                            \
		asm volatile("%0 &= %1" : "+r"(v_) : "i"(KP_COUNT_MAX_LEVELS - 1)); \
		v_;                                                                 \
	})

const volatile __u32 nevents = 1; /* events of the task, at most KP_COUNT_MAX_EVENTS */
const volatile __u32 ncpus = 1; /* the stride of `events`: possible CPUs */
const volatile __u8 by_cgroup = 0; /* 1: charge cgroups, 0: charge thread slots */

struct {
	__uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
	__uint(max_entries, 1); /* nevents * ncpus, set by userspace */
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(__u32));
} events SEC(".maps");

/* per CPU and event: the reading at the previous switch on this CPU */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, KP_COUNT_MAX_EVENTS);
	__type(key, __u32);
	__type(value, struct kp_count_val);
} prev SEC(".maps");

/* per CPU: the sums of slot * nevents + evt */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1); /* slots * nevents, set by userspace */
	__type(key, __u32);
	__type(value, struct kp_count_val);
} sums SEC(".maps");

/* pid mode: thread -> slot */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, __u32);
} owners SEC(".maps");

/* the slots the task leaving the CPU is charged to (a map value: 5.10's verifier does not
 * let a program index its stack with a variable) */
struct scratch {
	__u32 slots[KP_COUNT_MAX_LEVELS];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct scratch);
} scratch SEC(".maps");

/* cgroup mode: cgroup id -> slot */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u64);
	__type(value, __u32);
} cgroups SEC(".maps");

/* the slots of the cgroups of `cgroups` that hold the current task; returns their number */
static __always_inline int cgroup_slots(struct scratch *sc)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	struct cgroup *cg = BPF_CORE_READ(task, cgroups, dfl_cgrp);
	int n = 0, i;

	for (i = 0; i < KP_COUNT_MAX_LEVELS && cg; i++) {
		__u64 id = BPF_CORE_READ(cg, kn, id);
		__u32 *slot = bpf_map_lookup_elem(&cgroups, &id);

		if (slot && n < KP_COUNT_MAX_LEVELS) {
			sc->slots[SLOT_INDEX(n)] = *slot;
			n++;
		}
		/* `self` is the first member of struct cgroup: a parent css is its cgroup */
		cg = (struct cgroup *)BPF_CORE_READ(cg, self.parent);
	}
	return n;
}

static __always_inline void charge(__u32 slot, __u32 evt, const struct kp_count_val *d)
{
	__u32 key = slot * nevents + evt;
	struct kp_count_val *sum = bpf_map_lookup_elem(&sums, &key);

	if (!sum)
		return;
	sum->counter += d->counter;
	sum->enabled += d->enabled;
	sum->running += d->running;
}

SEC("raw_tp/sched_switch")
int kp_count_switch(void *ctx)
{
	__u32 cpu = bpf_get_smp_processor_id(), evt, zero = 0;
	struct scratch *sc = bpf_map_lookup_elem(&scratch, &zero);
	int n = 0, i;

	if (!sc)
		return 0;
	if (by_cgroup) {
		n = cgroup_slots(sc);
	} else {
		__u32 tid = (__u32)bpf_get_current_pid_tgid();
		__u32 *slot = bpf_map_lookup_elem(&owners, &tid);

		if (slot) {
			sc->slots[0] = *slot;
			n = 1;
		}
	}
	for (evt = 0; evt < KP_COUNT_MAX_EVENTS && evt < nevents; evt++) {
		struct bpf_perf_event_value now;
		struct kp_count_val *last, d;
		__u32 key = evt;

		last = bpf_map_lookup_elem(&prev, &key);
		if (!last)
			break;
		/* no counter on this CPU (not in cpuList, or offline): nothing to charge */
		if (bpf_perf_event_read_value(&events, (__u64)evt * ncpus + cpu, &now, sizeof(now)))
			continue;
		/* the reading advances whoever ran, so a counted task is never charged for
		 * the time of a task that is not */
		d.counter = now.counter - last->counter;
		d.enabled = now.enabled - last->enabled;
		d.running = now.running - last->running;
		last->counter = now.counter;
		last->enabled = now.enabled;
		last->running = now.running;
		for (i = 0; i < KP_COUNT_MAX_LEVELS && i < n; i++)
			charge(sc->slots[SLOT_INDEX(i)], evt, &d);
	}
	return 0;
}

/* a thread or process created by a counted thread is counted in its creator's slot */
SEC("raw_tp/task_newtask")
int BPF_PROG(kp_count_newtask, struct task_struct *task)
{
	__u32 parent = (__u32)bpf_get_current_pid_tgid();
	__u32 child = (__u32)BPF_CORE_READ(task, pid);
	__u32 *slot;

	if (by_cgroup)
		return 0;
	slot = bpf_map_lookup_elem(&owners, &parent);
	if (slot) {
		__u32 s = *slot;

		bpf_map_update_elem(&owners, &child, &s, BPF_NOEXIST);
	}
	return 0;
}

/* the task is gone for good (after its last switch): its tid may be reused */
SEC("raw_tp/sched_process_free")
int BPF_PROG(kp_count_free, struct task_struct *task)
{
	__u32 tid = (__u32)BPF_CORE_READ(task, pid);

	if (!by_cgroup)
		bpf_map_delete_elem(&owners, &tid);
	return 0;
}
