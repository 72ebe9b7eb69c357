// SPDX-License-Identifier: GPL-2.0
/*
 * offcpu.bpf.c - time off the CPU, summed per (process, thread, stack) in the kernel.
 *
 * At sched_switch, the thread leaving the cpu (the current task) takes its stacks and the
 * time; when it comes back (it is `next` of a later switch) the time it was away is added to
 * its (tgid, tid, kernel stack, user stack) entry of the aggregation map. A block still open
 * when the collection ends is closed by userspace from the thread map. As in sample.bpf.c
 * there are two aggregation maps: userspace flips `gen` and drains the one no longer written.
 *
 * A switch is a block when the thread waits for something (it is no longer runnable), or,
 * unless only those are asked for, when it was preempted and waits for a cpu. Telling them
 * apart reads the task's state at an offset userspace found in the kernel's BTF (without
 * BTF only in-kernel preemptions are told, by the tracepoint's preempt flag).
 *
 * With cfg.slices (a timeline), each block is a record of its own instead (start, end, the
 * reason: blocked or preempted, the stacks), through a ring buffer; the aggregation maps and
 * the time on the cpu are left alone, and a block shorter than cfg.min_slice_ns is counted.
 *
 * Which threads: the processes of `targets` (by tgid), the processes they fork (found by
 * their task at fork, by their tgid from their first switch on), or every process. A
 * target that is to be followed from its exec on (a launched command) is armed at the exec.
 *
 * No program relies on a kernel struct's layout (CO-RE): a thread is keyed by the address of
 * its task_struct, which the tracepoints pass, and everything else comes from helpers about
 * the current task (the task state aside, read where userspace says). So the object needs no
 * BTF: the raw tracepoint programs (raw_tp/) run on kernels without
 * it, the tp_btf/ ones (the same code) everywhere else; userspace loads one set.
 *
 * Pids, followed and reported, are those of the caller's PID namespace (pidns.bpf.h; the
 * walk to a task that is not the current one uses offsets userspace read in the kernel's
 * BTF); a thread the caller does not see is KP_PID_OUTSIDE (-1), and only a collection of
 * every process reports one.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "offcpu_event.h"
#include "stack_capture.bpf.h"
#define KP_PIDNS_NO_CORE 1
#include "pidns.bpf.h"

char LICENSE[] SEC("license") = "GPL";

const volatile struct kp_off_config cfg = {};

/* which aggregation map is written (generation & 1); flipped by userspace */
__u32 gen = 0;

struct counts_map {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384); /* resized by userspace */
	__type(key, struct kp_off_key);
	__type(value, struct kp_off_val);
};

struct counts_map counts0 SEC(".maps");
struct counts_map counts1 SEC(".maps");

/* followed threads: task address -> state */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 32768); /* resized by userspace */
	__type(key, __u64);
	__type(value, struct kp_off_thread);
} threads SEC(".maps");

/* processes followed: tgid -> enum kp_off_target */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 8192); /* resized by userspace */
	__type(key, __u32);
	__type(value, __u8);
} targets SEC(".maps");

/* tasks forked by a followed process, until their tgid is in `targets`: task -> state */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 8192); /* resized by userspace */
	__type(key, __u64);
	__type(value, __u8);
} children SEC(".maps");

KP_CAP_STACK_MAP(stacks);

/* with cfg.slices: one struct kp_off_slice per slice (a page when unused; resized by
 * userspace, which polls it: no wakeups) */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
} slices SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, KP_OFFC_MAX);
	__type(key, __u32);
	__type(value, __u64);
} counters SEC(".maps");

static __always_inline void count(__u32 idx)
{
	__u64 *c = bpf_map_lookup_elem(&counters, &idx);

	if (c)
		*c += 1;
}

/* The state of the process <tgid> whose task is <task>: 0 when not followed. */
static __always_inline __u8 target_state(__u32 tgid, __u64 task)
{
	__u8 *st, active = KP_OFF_ACTIVE;

	if (!cfg.filter_pid)
		return tgid && tgid != cfg.self_tgid ? KP_OFF_ACTIVE : 0;
	st = bpf_map_lookup_elem(&targets, &tgid);
	if (st)
		return *st;
	st = bpf_map_lookup_elem(&children, &task);
	if (!st)
		return 0;
	/* a forked process: its other threads are found by its tgid from now on */
	if (*st == KP_OFF_ACTIVE)
		bpf_map_update_elem(&targets, &tgid, &active, BPF_NOEXIST);
	return *st;
}

/* the entry of the current task (<task>, <id> its pid_tgid) if it is followed, created at its
 * first switch; NULL otherwise */
static __always_inline struct kp_off_thread *follow(__u64 task, __u64 id, __u32 exited)
{
	struct kp_off_thread init = {}, *t;
	__u32 tgid = id >> 32;

	t = bpf_map_lookup_elem(&threads, &task);
	if (t)
		return t;
	if (!tgid || target_state(tgid, task) != KP_OFF_ACTIVE)
		return NULL;
	init.tgid = tgid;
	init.tid = (__u32)id;
	init.exited = exited;
	bpf_get_current_comm(init.comm, sizeof(init.comm));
	if (bpf_map_update_elem(&threads, &task, &init, BPF_NOEXIST)) {
		count(KP_OFFC_THREADS_FULL);
		return NULL;
	}
	return bpf_map_lookup_elem(&threads, &task);
}

/* <task>, coming onto the cpu and not followed yet: its entry if it is a thread of a followed
 * process, read from the task where userspace says its fields are */
/* the pids of <task> (not the current one): tgid << 32 | tid, read where userspace says; 0
 * when they cannot be read */
static __always_inline __u64 task_ids(__u64 task)
{
	__u32 tgid = 0, tid = 0;

	/* in a PID namespace: the task's pids in it, found through its struct pid */
	if (kp_pidns.on)
		return kp_pidns_walk_ids((const void *)task);
	if (!cfg.tgid_off ||
	    bpf_probe_read_kernel(&tgid, sizeof(tgid), (const void *)(task + cfg.tgid_off)) ||
	    bpf_probe_read_kernel(&tid, sizeof(tid), (const void *)(task + cfg.pid_off)))
		return 0;
	return (__u64)tgid << 32 | tid;
}

static __always_inline struct kp_off_thread *follow_next(__u64 task)
{
	struct kp_off_thread init = {};
	__u64 ids = task_ids(task);
	__u32 tgid = ids >> 32;

	init.tid = (__u32)ids;
	if (!tgid || target_state(tgid, task) != KP_OFF_ACTIVE)
		return NULL;
	init.tgid = tgid;
	if (!cfg.comm_off || bpf_probe_read_kernel(init.comm, sizeof(init.comm),
						   (const void *)(task + cfg.comm_off)))
		return NULL;
	if (bpf_map_update_elem(&threads, &task, &init, BPF_NOEXIST))
		return NULL; /* full: counted when it leaves the cpu */
	return bpf_map_lookup_elem(&threads, &task);
}

/* add <delta> to the entry of (t's thread, kstack, ustack) of the current generation */
static __always_inline void add(struct kp_off_thread *t, __u64 kstack, __u64 ustack, __u64 delta)
{
	struct kp_off_key key = {
		.tgid = t->tgid, .tid = t->tid, .kstack = kstack, .ustack = ustack
	};
	struct kp_off_val *v, init = { .count = 1, .total_ns = delta };
	void *map = (gen & 1) ? (void *)&counts1 : (void *)&counts0;

	/* one thread comes back on one cpu at a time: its entries have no concurrent writer */
	v = bpf_map_lookup_elem(map, &key);
	if (v) {
		v->count++;
		v->total_ns += delta;
		return;
	}
	__builtin_memcpy(init.comm, t->comm, sizeof(init.comm));
	if (bpf_map_update_elem(map, &key, &init, BPF_NOEXIST))
		count(KP_OFFC_MAP_FULL);
}

/* Does <task>, leaving the cpu, stay runnable? Preempted in the kernel (<preempt>), or at a
 * return to user space, or yielding: its state is still TASK_RUNNING (0) then. */
static __always_inline bool runnable(__u64 preempt, __u64 task)
{
	__u64 state = 0;

	if (preempt)
		return true;
	if (!cfg.state_size)
		return false;
	if (bpf_probe_read_kernel(&state, cfg.state_size == 4 ? 4 : 8,
				  (const void *)(task + cfg.state_off)))
		return false;
	return (cfg.state_size == 4 ? (__u32)state : state) == 0;
}

/* with cfg.slices: the slice of <t> from <start> to <now>, to the ring buffer */
static __always_inline void emit_slice(struct kp_off_thread *t, __u64 start, __u64 now)
{
	struct kp_off_slice *r;

	if (now - start < cfg.min_slice_ns) {
		count(KP_OFFC_SLICE_SHORT);
		return;
	}
	r = bpf_ringbuf_reserve(&slices, sizeof(*r), 0);
	if (!r) {
		count(KP_OFFC_SLICE_LOST);
		return;
	}
	r->start_ns = start;
	r->end_ns = now;
	r->kstack = t->kstack;
	r->ustack = t->ustack;
	r->tgid = t->tgid;
	r->tid = t->tid;
	r->preempted = t->preempted;
	r->pad = 0;
	__builtin_memcpy(r->comm, t->comm, sizeof(r->comm));
	bpf_ringbuf_submit(r, BPF_RB_NO_WAKEUP);
}

/* <t>, leaving the cpu with kernel stack <k> (<preempt>, <prev>: as on_switch has them), where
 * its hold stopped it: continued by userspace, it went round schedule() again in
 * do_signal_stop (the cpu was wanted when it came back), runnable, its hold already over in
 * the map (userspace arms the next stop before it sends SIGCONT). That wait is the hold's, not
 * the program's: the same kernel stack as at the stop (taken at the same place of this
 * program: its first frame is the program's own), runnable where the task's state can be read
 * (a later stop of its own is not runnable). Any other switch ends the stop's path. */
static __always_inline bool hold_resumed(struct kp_off_thread *t, __u64 k, __u64 preempt,
					 __u64 prev)
{
	if (!t->hold_kstack)
		return false;
	if (k != KP_CAP_NONE && k == t->hold_kstack && (!cfg.state_size || runnable(preempt, prev)))
		return true;
	t->hold_kstack = 0;
	return false;
}

/* prev leaves the cpu (it is still the current task here), next comes back */
static __always_inline int on_switch(void *ctx, __u64 preempt, __u64 prev, __u64 next)
{
	__u64 now = bpf_ktime_get_ns(), start;
	struct kp_off_thread *t;
	bool pre = false;

	t = follow(prev, kp_pidns_current(), 0);
	if (t && t->on_since) {
		add(t, KP_OFF_ON_CPU, 0, now - t->on_since);
		t->on_since = 0;
	}
	if (t && !t->exited && (cfg.slices || cfg.blocked_only))
		pre = runnable(preempt, prev);
	/* a launched command stopped while its unwind tables load: not a block of its own */
	if (t && !t->exited) {
		bool held = kp_uw_holding(t->tgid), block = !(cfg.blocked_only && pre);
		__u64 k = KP_CAP_NONE;

		/* one place takes the kernel stack: hold_resumed compares two of them */
		if (held || t->hold_kstack || (block && cfg.kernel_stack))
			k = kp_capture_stack(ctx, false, &stacks, &counters, KP_OFFC_CAP);
		if (held) {
			t->hold_kstack = k;
		} else if (block && !hold_resumed(t, k, preempt, prev)) {
			t->preempted = pre;
			t->kstack = cfg.kernel_stack ? k : KP_CAP_NONE;
			t->ustack = cfg.user_stack ? kp_capture_stack(ctx, true, &stacks, &counters,
								      KP_OFFC_CAP) :
						     KP_CAP_NONE;
			t->start_ns = now;
		}
	}
	t = bpf_map_lookup_elem(&threads, &next);
	if (!t && !cfg.blocked_only && !cfg.slices) /* the time on the cpu is asked for */
		t = follow_next(next);
	if (!t)
		return 0;
	if (!cfg.slices)
		t->on_since = now;
	if (!t->start_ns)
		return 0;
	start = t->start_ns;
	t->start_ns = 0;
	if (cfg.slices) {
		emit_slice(t, start, now > start ? now : start);
		return 0;
	}
	add(t, t->kstack, t->ustack, now > start ? now - start : 0);
	return 0;
}

/* a followed process forks: the child is followed (in the parent's state) */
static __always_inline int on_fork(__u64 child)
{
	__u64 id = kp_pidns_current(), task = bpf_get_current_task();
	__u8 st;

	if (!cfg.filter_pid)
		return 0;
	st = target_state(id >> 32, task);
	if (!st)
		return 0;
	bpf_map_update_elem(&children, &child, &st, BPF_ANY);
	/* a held command's child is held at its exec too (off-CPU's own hold: --off-cpu) */
	if (kp_uw_on)
		kp_uw_hold_fork(id >> 32, task_ids(child) >> 32);
	return 0;
}

static __always_inline int on_exec(void)
{
	__u64 task = bpf_get_current_task();
	__u32 tgid = kp_pidns_current() >> 32;
	struct kp_off_thread *t;
	__u8 *st;

	st = bpf_map_lookup_elem(&targets, &tgid);
	if (st && *st == KP_OFF_UNTIL_EXEC)
		*st = KP_OFF_ACTIVE;
	st = bpf_map_lookup_elem(&children, &task);
	if (st && *st == KP_OFF_UNTIL_EXEC)
		*st = KP_OFF_ACTIVE;
	t = bpf_map_lookup_elem(&threads, &task);
	if (t)
		bpf_get_current_comm(t->comm, sizeof(t->comm));
	kp_uw_exec_reset();
	return 0;
}

/* an exiting thread's last switches are no blocks; its entry goes when its task is freed */
static __always_inline int on_exit(void)
{
	__u64 id = kp_pidns_current(), task = bpf_get_current_task();
	__u32 tgid = id >> 32;
	struct kp_off_thread *t;

	t = follow(task, id, 1);
	if (t) {
		t->exited = 1;
		t->start_ns = 0;
	}
	/* the leader's exit: a later process with the same pid is not a target */
	if (cfg.filter_pid && tgid == (__u32)id) {
		bpf_map_delete_elem(&targets, &tgid);
		kp_uw_exit_reset(tgid);
	}
	return 0;
}

static __always_inline int on_free(__u64 task)
{
	bpf_map_delete_elem(&threads, &task);
	bpf_map_delete_elem(&children, &task);
	return 0;
}

static __always_inline int on_rename(__u64 task, __u64 comm)
{
	struct kp_off_thread *t = bpf_map_lookup_elem(&threads, &task);

	if (t)
		bpf_probe_read_kernel_str(t->comm, sizeof(t->comm), (const void *)comm);
	return 0;
}

/* The same programs as tp_btf (kernel BTF) and as raw tracepoints: both get the
 * tracepoint's arguments as an array of u64. */
#define KP_OFF_PROGS(kind, sfx)                                \
	SEC(kind "/sched_switch")                              \
	int kp_off_switch##sfx(__u64 *ctx)                     \
	{                                                      \
		return on_switch(ctx, ctx[0], ctx[1], ctx[2]); \
	}                                                      \
	SEC(kind "/sched_process_fork")                        \
	int kp_off_fork##sfx(__u64 *ctx)                       \
	{                                                      \
		return on_fork(ctx[1]);                        \
	}                                                      \
	SEC(kind "/sched_process_exec")                        \
	int kp_off_exec##sfx(__u64 *ctx)                       \
	{                                                      \
		return on_exec();                              \
	}                                                      \
	SEC(kind "/sched_process_exit")                        \
	int kp_off_exit##sfx(__u64 *ctx)                       \
	{                                                      \
		return on_exit();                              \
	}                                                      \
	SEC(kind "/sched_process_free")                        \
	int kp_off_free##sfx(__u64 *ctx)                       \
	{                                                      \
		return on_free(ctx[0]);                        \
	}                                                      \
	SEC(kind "/task_rename")                               \
	int kp_off_rename##sfx(__u64 *ctx)                     \
	{                                                      \
		return on_rename(ctx[0], ctx[1]);              \
	}

KP_OFF_PROGS("tp_btf", )
KP_OFF_PROGS("raw_tp", _raw)
