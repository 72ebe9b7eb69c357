// SPDX-License-Identifier: GPL-2.0
/*
 * sample.bpf.c - sampling, aggregated in the kernel.
 *
 * kp_sample runs on every overflow of a sampling perf event (cpu-clock, cycles, ...). It
 * captures the kernel and user stacks (stack_capture.bpf.h: kept by their frames) and counts (tgid, tid, cpu, event, stacks) in a
 * hash map, so userspace reads one entry per distinct stack instead of one per sample.
 * There are two such maps: userspace flips `gen` and drains the one no longer written.
 * With a timeline, each sample goes through the ring buffer instead, with its timestamp.
 *
 * kp_tp_record runs on every hit of a tracepoint (a BPF program attached to a tracepoint
 * runs for all its hits, whatever perf event it came through: so it filters processes and
 * cpus itself) and copies the raw record (fixed part and __data_loc payloads) into the
 * ring buffer. Records that cannot be reserved and samples that cannot be counted are
 * counted themselves. kp_tp_fork / kp_tp_exit keep the process filter up to date. Like a
 * perf event, it records one hit in <period> (tp_paced), unless the period is 1.
 *
 * Processes and threads are named as the caller sees them (pidns.bpf.h): in the keys, the
 * records (their common_pid included) and the tracepoint filter.
 *
 * Which event of the task fired comes from the attach cookie. Kernels before 5.15 have
 * none: there kp_sample_by_id finds the event by its perf event id (event_ids, filled by
 * userspace), and each tracepoint gets its own copy of the program (kp_tp_record_N).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "sample.h"
#include "bounds.h"
#include "pidns.bpf.h"
#include "stack_capture.bpf.h"

char LICENSE[] SEC("license") = "GPL";

const volatile struct kp_sample_config cfg = {};

/* which aggregation map is written (generation & 1); flipped by userspace */
__u32 gen = 0;

struct counts_map {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536); /* resized by userspace */
	__type(key, struct kp_sample_key);
	__type(value, struct kp_sample_val);
};

struct counts_map counts0 SEC(".maps");
struct counts_map counts1 SEC(".maps");

/* tracepoint (and filter_sample) process filter: tgid -> enum kp_sample_target (perThread:
 * tid -> KP_SAMPLE_TARGET_ON) */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, __u8);
} targets SEC(".maps");

/* tracepoints with cgroupNameList: the cgroups, in the order of the list */
struct {
	__uint(type, BPF_MAP_TYPE_CGROUP_ARRAY);
	__uint(max_entries, 1); /* resized by userspace when used */
	__type(key, __u32);
	__type(value, __u32);
} cgroups SEC(".maps");

/* kernels without attach cookies: perf event id -> index of the event in the task */
struct {
	__uint(type, BPF_MAP_TYPE_HASH); /* preallocated: perf_event programs need that */
	__uint(max_entries, 1); /* resized by userspace when used */
	__type(key, __u64);
	__type(value, __u32);
} event_ids SEC(".maps");

/* kernel and user stacks by their frames (stack_capture.bpf.h): a stack-trace map's buckets
 * collide and lose stacks, these ids never do; a full map is a counted drop */
KP_CAP_STACK_MAP(stacks);

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4 << 20); /* resized by userspace */
} records SEC(".maps");

/* room to assemble a raw record before it is copied out (too big for the stack) */
struct scratch {
	struct kp_sample_rec hdr;
	__u8 raw[KP_MAX_RAW];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct scratch);
} scratch_buf SEC(".maps");

/* tracepoints with a period: hits per (event, cgroup), index evt * max(ncgroups, 1) + cgroup */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1); /* resized by userspace */
	__type(key, __u32);
	__type(value, struct kp_tp_pace);
} tp_pace SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, KP_SCNT_MAX);
	__type(key, __u32);
	__type(value, __u64);
} counters SEC(".maps");

static __always_inline void count(__u32 idx)
{
	__u64 *c = bpf_map_lookup_elem(&counters, &idx);

	if (c)
		*c += 1;
}

/* <regs>: a perf event's registers (NULL for a tracepoint): where the unwinder starts when
 * the event interrupted user code */
static __always_inline void fill_common(void *ctx, const struct kp_uw_hint *regs, __u32 *cpu,
					__u64 *kstack_id, __u64 *ustack_id)
{
	*cpu = bpf_get_smp_processor_id();
	*kstack_id = cfg.kernel_stack ?
			     kp_capture_stack(ctx, false, &stacks, &counters, KP_SCNT_CAP) :
			     KP_CAP_NONE;
	*ustack_id = cfg.user_stack ? kp_capture_stack_regs(ctx, true, regs, &stacks, &counters,
							    KP_SCNT_CAP) :
				      KP_CAP_NONE;
}

static __always_inline __u64 wakeup_flags(void)
{
	return bpf_ringbuf_query(&records, BPF_RB_AVAIL_DATA) >= cfg.wakeup_bytes ?
		       BPF_RB_FORCE_WAKEUP :
		       BPF_RB_NO_WAKEUP;
}

static __always_inline int sample(struct bpf_perf_event_data *ctx, __u32 evt)
{
	struct kp_sample_key key = {};
	struct kp_sample_val *val, init = {};
	struct kp_uw_hint hint;
	__u64 id, period = ctx->sample_period;
	void *map;

	/* per-cpu events sampling processes (blocked sampling): a cpu-clock event per thread
	 * restarts its timer at every context switch, a per-cpu one does not */
	id = kp_pidns_current();
	if (cfg.filter_sample) {
		/* the targets are the caller's namespace's pids, as the fork tracking's */
		__u32 tgid = id >> 32;
		__u8 *t = bpf_map_lookup_elem(&targets, &tgid);

		if (!t || *t != KP_SAMPLE_TARGET_ON)
			return 0;
	}
	key.evt = evt;
	KP_UW_HINT_OF(ctx, &hint);
	fill_common(ctx, &hint, &key.cpu, &key.kstack_id, &key.ustack_id);
	key.tgid = id >> 32;
	key.tid = (__u32)id;
	if (!key.kstack_id && !key.ustack_id)
		key.ip = PT_REGS_IP(&ctx->regs);

	if (cfg.timeline) {
		struct kp_sample_rec *r = bpf_ringbuf_reserve(&records, sizeof(*r), 0);

		if (!r) {
			count(KP_SCNT_RB_DROPPED);
			return 0;
		}
		r->ts = bpf_ktime_get_ns();
		r->period = period;
		r->ip = key.ip;
		r->tgid = key.tgid;
		r->tid = key.tid;
		r->cpu = key.cpu;
		r->evt = key.evt;
		r->kstack_id = key.kstack_id;
		r->ustack_id = key.ustack_id;
		r->raw_size = 0;
		r->pad = 0;
		bpf_get_current_comm(r->comm, sizeof(r->comm));
		bpf_ringbuf_submit(r, wakeup_flags());
		return 0;
	}

	map = (gen & 1) ? (void *)&counts1 : (void *)&counts0;
	val = bpf_map_lookup_elem(map, &key);
	if (!val) {
		bpf_get_current_comm(init.comm, sizeof(init.comm));
		init.count = 1;
		init.period = period;
		if (bpf_map_update_elem(map, &key, &init, BPF_NOEXIST) == 0)
			return 0;
		val = bpf_map_lookup_elem(map, &key); /* another CPU created it meanwhile */
		if (!val) {
			count(KP_SCNT_MAP_FULL);
			return 0;
		}
	}
	__sync_fetch_and_add(&val->count, 1);
	__sync_fetch_and_add(&val->period, period);
	return 0;
}

SEC("perf_event")
int kp_sample(struct bpf_perf_event_data *ctx)
{
	return sample(ctx, (__u32)bpf_get_attach_cookie(ctx));
}

/* Before 5.15: the context is the kernel's bpf_perf_event_data_kern, whose event is the
 * perf event that overflowed; a thread's inherited copy counts for its parent's id, the
 * one userspace registered. */
SEC("perf_event")
int kp_sample_by_id(struct bpf_perf_event_data *ctx)
{
	struct bpf_perf_event_data_kern *kctx = (void *)ctx;
	struct perf_event *event = BPF_CORE_READ(kctx, event), *parent;
	__u64 id;
	__u32 *evt;

	parent = BPF_CORE_READ(event, parent);
	id = parent ? BPF_CORE_READ(parent, id) : BPF_CORE_READ(event, id);
	evt = bpf_map_lookup_elem(&event_ids, &id);
	if (!evt)
		return 0; /* not one of ours: cannot happen, the program is only attached to ours */
	return sample(ctx, *evt);
}

/* the end of the record: its fixed part, or the furthest __data_loc payload */
static __always_inline __u32 raw_size(void *ctx, const volatile struct kp_evt_cfg *e)
{
	__u32 size = e->fixed_size, i;

	for (i = 0; i < KP_MAX_DATA_LOC; i++) {
		__u32 loc = 0, end;

		if (i >= e->nloc)
			break;
		if (bpf_probe_read_kernel(&loc, sizeof(loc), ctx + (e->loc_off[i] & 0xffff)))
			continue;
		end = (loc & 0xffff) + (loc >> 16);
		if (e->loc_rel[i])
			end += e->loc_off[i] + 4;
		if (end > size)
			size = end;
	}
	return size;
}

static __always_inline bool tp_wanted(__u64 id)
{
	__u32 target = cfg.filter_tid ? (__u32)id : (__u32)(id >> 32);

	/* the collector's own hits are kept (as perf and libkperf do): it reads at most a few
	 * times a second, so it cannot feed back into what it records */
	if (cfg.filter_cpu) {
		__u32 cpu = bpf_get_smp_processor_id();

		if (cpu >= KP_SAMPLE_CPU_WORDS * 64)
			return false;
		if (!(cfg.cpu_mask[KP_BOUND(cpu >> 6, KP_SAMPLE_CPU_WORDS - 1)] &
		      (1ULL << (cpu & 63))))
			return false;
	}
	if (cfg.filter_pid) {
		__u8 *t = bpf_map_lookup_elem(&targets, &target);

		if (!t || *t != KP_SAMPLE_TARGET_ON)
			return false;
	}
	return true;
}

/* cgroupNameList: is the current task in cgroup <i> (or below it), as a cgroup perf event
 * of libkperf's would count it? Nothing the verifier tracks differs between the answers, so
 * the loops over the cgroups stay linear for it (a mask of the answers would not). */
static __always_inline bool in_cgroup(__u32 i)
{
	return bpf_current_task_under_cgroup(&cgroups, i) == 1;
}

static __always_inline bool in_any_cgroup(void)
{
	__u32 i;

	for (i = 0; i < KP_SAMPLE_TP_CGROUPS; i++) {
		if (i >= cfg.ncgroups)
			break;
		if (in_cgroup(i))
			return true;
	}
	return false;
}

/* Is this hit of event <e> (slot <slot> of tp_pace) recorded, as a perf event with its
 * sample period would sample it? 0: no; else the number of hits the record stands for. A
 * perf event counts its hits per CPU, so does tp_pace. */
static __always_inline __u64 tp_paced(const volatile struct kp_evt_cfg *e, __u32 slot)
{
	struct kp_tp_pace *p;
	__u64 n, now;

	if (e->period <= 1 && !e->gap_ns)
		return 1;
	p = bpf_map_lookup_elem(&tp_pace, &slot);
	if (!p)
		return 0;
	n = ++p->hits;
	if (e->gap_ns) {
		now = bpf_ktime_get_ns();
		if (p->last_ns && now - p->last_ns < e->gap_ns)
			return 0;
		p->last_ns = now;
	} else if (n < e->period) {
		return 0;
	}
	p->hits = 0;
	return n;
}

static __always_inline int tp_record(void *ctx, __u32 evt)
{
	__u32 zero = 0, i;
	__u64 size; /* 64-bit: a 32-bit bound is checked on a copy the verifier does not link */
	const volatile struct kp_evt_cfg *e;
	struct scratch *s;
	__u64 id, period = 1;

	id = kp_pidns_current();
	if (!tp_wanted(id))
		return 0;
	if (cfg.ncgroups && !in_any_cgroup())
		return 0;
	if (evt >= KP_MAX_EVENTS)
		return 0;
	evt = KP_BOUND(evt, KP_MAX_EVENTS - 1);
	e = &cfg.evt[evt];
	/* with cgroups, each cgroup's event has its own period: see the loop below */
	if (!cfg.ncgroups) {
		period = tp_paced(e, evt);
		if (!period)
			return 0;
	}
	s = bpf_map_lookup_elem(&scratch_buf, &zero);
	if (!s)
		return 0;
	size = raw_size(ctx, e);
	fill_common(ctx, NULL, &s->hdr.cpu, &s->hdr.kstack_id, &s->hdr.ustack_id);
	s->hdr.ts = bpf_ktime_get_ns();
	s->hdr.period = period;
	s->hdr.ip = 0;
	s->hdr.tgid = id >> 32;
	s->hdr.tid = (__u32)id;
	s->hdr.evt = evt;
	s->hdr.pad = 0;
	bpf_get_current_comm(s->hdr.comm, sizeof(s->hdr.comm));
	barrier_var(size);
	if (size > KP_MAX_RAW)
		size = KP_MAX_RAW; /* a longer record is cut; its __data_loc checks catch it */
	if (bpf_probe_read_kernel(s->raw, size, ctx))
		size = 0;
	/* the kernel lends the record's first 8 bytes (its common header) to BPF as a pt_regs
	 * pointer and fills the header only afterwards, for perf: rebuild what it holds */
	if (size >= 8) {
		*(__u16 *)&s->raw[0] = (__u16)e->tp_id;
		s->raw[2] = 0; /* common_flags */
		s->raw[3] = 0; /* common_preempt_count */
		*(__s32 *)&s->raw[4] = (__s32)(__u32)id;
	}
	s->hdr.raw_size = size;
	if (!cfg.ncgroups) {
		if (bpf_ringbuf_output(&records, s, sizeof(s->hdr) + size, wakeup_flags()))
			count(KP_SCNT_RB_DROPPED);
		return 0;
	}
	/* one record per cgroup of the list the task is in, as one event per cgroup has */
	for (i = 0; i < KP_SAMPLE_TP_CGROUPS; i++) {
		if (i >= cfg.ncgroups)
			break;
		if (!in_cgroup(i))
			continue;
		period = tp_paced(e, evt * cfg.ncgroups + i);
		if (!period)
			continue;
		s->hdr.evt = evt | (i << KP_EVT_CGROUP_SHIFT);
		s->hdr.period = period;
		if (bpf_ringbuf_output(&records, s, sizeof(s->hdr) + size, wakeup_flags()))
			count(KP_SCNT_RB_DROPPED);
	}
	return 0;
}

SEC("tracepoint")
int kp_tp_record(void *ctx)
{
	return tp_record(ctx, (__u32)bpf_get_attach_cookie(ctx));
}

#define TP_RECORD_SLOT(n)                                  \
	SEC("tracepoint")                                  \
	int kp_tp_record_##n(void *ctx)                    \
	{                                                  \
		return tp_record(ctx, cfg.tp_slot_evt[n]); \
	}

TP_RECORD_SLOT(0)
TP_RECORD_SLOT(1)
TP_RECORD_SLOT(2)
TP_RECORD_SLOT(3)
TP_RECORD_SLOT(4)
TP_RECORD_SLOT(5)
TP_RECORD_SLOT(6)
TP_RECORD_SLOT(7)
_Static_assert(KP_TP_SLOTS == 8, "one kp_tp_record_N per slot");

/* processes forked by a target are targets too, in its state (threads share the tgid) */
SEC("tp_btf/sched_process_fork")
int BPF_PROG(kp_tp_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 ptgid = kp_pidns_task_tgid(parent), ctgid = kp_pidns_task_tgid(child);
	__u8 *t, st;

	if (ptgid == ctgid || ctgid == KP_PID_OUTSIDE)
		return 0;
	t = bpf_map_lookup_elem(&targets, &ptgid);
	if (t) {
		st = *t;
		bpf_map_update_elem(&targets, &ctgid, &st, BPF_ANY);
	}
	return 0;
}

/* a launched command execs: sampled from here on (before, it was kperf-bpf's child: its
 * samples and tracepoint hits, in the launcher's code and in execve, are not the command's) */
SEC("tp_btf/sched_process_exec")
int BPF_PROG(kp_tp_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	__u32 tgid = kp_pidns_current() >> 32;
	__u8 *t = bpf_map_lookup_elem(&targets, &tgid);

	if (t && *t == KP_SAMPLE_TARGET_EXEC)
		*t = KP_SAMPLE_TARGET_ON;
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(kp_tp_exit, struct task_struct *p)
{
	__u32 tgid;

	if (BPF_CORE_READ(p, signal, live.counter) != 0)
		return 0;
	tgid = kp_pidns_task_tgid(p);
	bpf_map_delete_elem(&targets, &tgid);
	return 0;
}

/* unwinding from tables: a process that execs has new mappings; its entry goes (its samples
 * fall back to frame pointers, counted) and userspace loads the new ones */
SEC("tp_btf/sched_process_exec") /* BTF: no tracefs needed (it may not be mounted) */
int BPF_PROG(kp_uw_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	kp_uw_exec_reset();
	return 0;
}

/* a held process forks: the child is held at its exec too (a launched command that forks its
 * real program: sh -c 'prog; true', make, time); attached while a command is held */
SEC("tp_btf/sched_process_fork")
int BPF_PROG(kp_uw_fork, struct task_struct *parent, struct task_struct *child)
{
	kp_uw_hold_fork(kp_pidns_task_tgid(parent), kp_pidns_task_tgid(child));
	return 0;
}

/* a process's last thread exits: its entry goes (a system-wide profile sees thousands of
 * processes come and go; the map would fill and the newest go without tables) */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(kp_uw_exit, struct task_struct *p)
{
	__u32 tgid;

	if (BPF_CORE_READ(p, signal, live.counter) != 0)
		return 0;
	tgid = kp_pidns_task_tgid(p);
	bpf_map_delete_elem(&kp_uw_procs, &tgid);
	bpf_map_delete_elem(&kp_uw_want, &tgid);
	bpf_map_delete_elem(&kp_py_procs, &tgid);
	kp_uw_exit_reset(tgid);
	return 0;
}

/* code mapped since a process's tables were loaded (dlopen, the libraries ld.so maps after
 * exec, an mprotect that makes a file's pages executable): perf_event_mmap is where the kernel
 * emits perf's mmap side band (PERF_RECORD_MMAP2) for every new executable mapping, called
 * with the mapping in place. A process with tables asks for them again, before its next
 * sample stops at the new code. Anonymous code (JIT) has no table: frame pointers there.
 * Where the kernel has no kprobes (and fentry cannot attach there: kernel/events is built
 * without ftrace), the exit of mmap(PROT_EXEC) of a file, from the raw syscall tracepoint:
 * one comparison per system call of the machine while it is attached (mprotect is not
 * followed there). Userspace picks one of the two. */
#define KP_VM_EXEC 0x4

static __always_inline int uw_mmap(struct vm_area_struct *vma)
{
	__u32 tgid;

	if (!(BPF_CORE_READ(vma, vm_flags) & KP_VM_EXEC) || !BPF_CORE_READ(vma, vm_file))
		return 0;
	tgid = kp_pidns_current() >> 32;
	if (bpf_map_lookup_elem(&kp_uw_procs, &tgid))
		kp_uw_ask(tgid);
	return 0;
}

SEC("kprobe/perf_event_mmap")
int BPF_KPROBE(kp_uw_mmap, struct vm_area_struct *vma)
{
	return uw_mmap(vma);
}

#define KP_PROT_EXEC 0x4
#define KP_MAP_ANONYMOUS 0x20
#if defined(__TARGET_ARCH_x86)
#define KP_NR_MMAP 9
#define KP_SYSCALL_NR(regs) BPF_CORE_READ(regs, orig_ax)
#else
#define KP_NR_MMAP 222
#define KP_SYSCALL_NR(regs) BPF_CORE_READ(regs, syscallno)
#endif

SEC("tp_btf/sys_exit")
int BPF_PROG(kp_uw_mmap_sys, struct pt_regs *regs, long ret)
{
	__u32 tgid;

	if (KP_SYSCALL_NR(regs) != KP_NR_MMAP || ret < 0)
		return 0;
	if (!(PT_REGS_PARM3_CORE_SYSCALL(regs) & KP_PROT_EXEC) ||
	    (PT_REGS_PARM4_CORE_SYSCALL(regs) & KP_MAP_ANONYMOUS))
		return 0;
	tgid = kp_pidns_current() >> 32;
	if (bpf_map_lookup_elem(&kp_uw_procs, &tgid))
		kp_uw_ask(tgid);
	return 0;
}
