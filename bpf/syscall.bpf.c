// SPDX-License-Identifier: GPL-2.0
/*
 * syscall.bpf.c - syscall latency, aggregated in the kernel.
 *
 * sys_enter: filter (syscall set, cpu, process, cgroup) before touching any map, then
 * remember the start time in the thread's task storage. sys_exit: compute the duration,
 * add it to the per-CPU summary of (process, syscall) and, when asked, reserve a
 * per-call record in the ring buffer. A record that cannot be reserved is counted.
 *
 * The process filter, where the kernel has BTF: a target's threads carry their state in the
 * task storage (marked by kp_mark_targets, a task iterator run at attach, and by kp_proc_fork
 * for the threads and children created afterwards), so sys_enter of any other thread is one
 * task-storage miss, with no hash lookup and nothing written.
 *
 * The summary: a per-CPU hash of (process, syscall) rows; with a single process (and no
 * children to follow), the by_nr per-CPU array indexed by syscall number instead. A call the
 * hash has no room for (-E2BIG) is counted in by_nr, the per-syscall overflow row; one whose
 * row the kernel's allocator could not give at that moment (-ENOMEM: the map is not full)
 * goes to userspace in the exits ring and is added to its row there. When a process's
 * last thread exits, a note in the exits ring tells userspace to move its rows out of the
 * map into its own table, so the map holds the live processes only.
 *
 * With cfg.by_cgroup (the agent) the summary is by (cgroup, command, syscall) instead:
 * syscall_cgroup.bpf.h.
 *
 * Built twice: as is (tp_btf + task storage, needs kernel BTF) and with KPERF_COMPAT
 * (classic raw_syscalls tracepoints + an LRU hash keyed by tid, no CO-RE at all), so
 * kernels without BTF still work.
 *
 * Processes are named as the caller sees them (pidns.bpf.h): the targets, the summary keys
 * and the records hold pids of the caller's PID namespace.
 *
 * With stacks (cfg.kernel_stack, cfg.user_stack, a load-time choice) sys_enter also takes the
 * stacks with stack_capture.bpf.h, the records carry their ids and sys_exit adds the call to
 * stack_summary, keyed by (process, syscall, stacks). Without, the verifier drops all of it:
 * the path of every call is the same as before.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "syscall.h"
#include "bounds.h"
#ifdef KPERF_COMPAT
#define KP_PIDNS_NO_CORE 1
#endif
#include "pidns.bpf.h"
#include "stack_capture.bpf.h"

#define KP_E2BIG 7 /* what a full hash map's update returns, negated */
#define KP_ENOMEM 12 /* ... and one whose allocator had nothing ready */

/* What a map update answered, as the int it is: the maps' ops returned an int until Linux 6.4
 * (d7ba4cc900bf, "bpf: return long from bpf_map_ops funcs") and the verifier calls the op
 * directly, so the 64-bit register may hold that int zero-extended (x86-64: a full hash's -E2BIG
 * reads 4294967289 on 5.10 and 6.1), which a 64-bit compare with -7 misses: every full-map
 * answer then looked like a failed allocation. The low 32 bits are the answer on every
 * kernel. */
static __always_inline int map_answer(long ret)
{
	return (int)ret;
}

_Static_assert(KP_CNT_CAP + KP_CAP_FAILS <= KP_CNT_STACK_LATE, "stack counters do not fit");

char LICENSE[] SEC("license") = "GPL";

const volatile struct kp_sys_config cfg = {};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 8192); /* resized by userspace */
	__type(key, __u32); /* tgid */
	__type(value, __u8); /* enum kp_target_state */
} targets SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_CGROUP_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} cgroup_filter SEC(".maps");

#ifdef KPERF_COMPAT
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32); /* tid */
	__type(value, struct kp_task_state);
} task_state SEC(".maps");
#else
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct kp_task_state);
} task_state SEC(".maps");
#endif

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 16384); /* resized by userspace */
	__type(key, struct kp_sys_key);
	__type(value, struct kp_sys_stat);
} summary SEC(".maps");

/* per syscall number: the single process's summary (cfg.single), else the calls the summary
 * hash had no room for (-E2BIG), and from cfg.nomem_base on, those whose row the kernel could
 * not allocate and the exits ring could not take */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1); /* resized by userspace: the syscall numbers */
	__type(key, __u32);
	__type(value, struct kp_sys_stat);
} by_nr SEC(".maps");

/* processes whose last thread exited (struct kp_sys_exit_note) */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 << 10);
} exits SEC(".maps");

/* one zeroed value to create summary entries from (too big for the BPF stack) */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct kp_sys_stat);
} zero_stat SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 16 << 20); /* resized by userspace */
} events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, KP_CNT_MAX);
	__type(key, __u32);
	__type(value, __u64);
} counters SEC(".maps");

/* the stacks at entry, by id (resized by userspace, 1 entry without stacks) */
KP_CAP_STACK_MAP(stacks);

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 16384); /* resized by userspace, 1 entry without stacks */
	__type(key, struct kp_sys_stack_key);
	__type(value, struct kp_sys_stack_stat);
} stack_summary SEC(".maps");

/* the summary by stack's overflow rows, per syscall number: the calls stack_summary had no
 * row for, when full (-E2BIG), and from cfg.nomem_base on, when the kernel could not allocate
 * one (-ENOMEM); counted under their syscall without their process and stacks */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1); /* resized by userspace with stacks: the syscall numbers, twice */
	__type(key, __u32);
	__type(value, struct kp_sys_stack_stat);
} stack_by_nr SEC(".maps");

static __always_inline bool want_stacks(void)
{
	return cfg.kernel_stack || cfg.user_stack;
}

/* the stacks of the call being entered, before its start time is taken: their cost is not
 * part of its latency */
static __always_inline void take_stacks(void *ctx, struct kp_task_state *st)
{
	st->kstack = cfg.kernel_stack ?
			     kp_capture_stack(ctx, false, &stacks, &counters, KP_CNT_CAP) :
			     KP_CAP_NONE;
	st->ustack = cfg.user_stack ? kp_capture_stack(ctx, true, &stacks, &counters, KP_CNT_CAP) :
				      KP_CAP_NONE;
}

#include "syscall_task.bpf.h"

static __always_inline void count(__u32 idx)
{
	__u64 *c = bpf_map_lookup_elem(&counters, &idx);

	if (c)
		*c += 1;
}

/* index of the highest set bit (0 for 0): 0..63 */
static __always_inline __u32 log2_u64(__u64 v)
{
	__u32 r = 0, shift;

	shift = (v > 0xFFFFFFFFULL) << 5;
	v >>= shift;
	r |= shift;
	shift = (v > 0xFFFF) << 4;
	v >>= shift;
	r |= shift;
	shift = (v > 0xFF) << 3;
	v >>= shift;
	r |= shift;
	shift = (v > 0xF) << 2;
	v >>= shift;
	r |= shift;
	shift = (v > 0x3) << 1;
	v >>= shift;
	r |= shift;
	r |= (v >> 1);
	return r;
}

/* the filters, cheapest first; no map is written before they pass */
static __always_inline bool traced(long nr)
{
	__u32 tgid;

	if (nr < 0)
		return false;
	if (cfg.filter_syscall) {
		if (nr >= KP_SYSCALL_WORDS * 64)
			return false;
		if (!(cfg.syscall_mask[KP_BOUND(nr >> 6, KP_SYSCALL_WORDS - 1)] &
		      (1ULL << (nr & 63))))
			return false;
	}
	if (cfg.filter_cpu) {
		__u32 cpu = bpf_get_smp_processor_id();

		if (cpu >= KP_CPU_WORDS * 64)
			return false;
		if (!(cfg.cpu_mask[KP_BOUND(cpu >> 6, KP_CPU_WORDS - 1)] & (1ULL << (cpu & 63))))
			return false;
	}
	if (cfg.task_filter)
		return true; /* the thread's task storage says (on_enter) */
	/* the process as the caller names it: only the calls the cheaper filters let through
	 * pay for a translation (none in the initial namespace) */
	tgid = kp_pidns_current() >> 32;
	if (tgid == cfg.self_tgid)
		return false;
	if (cfg.filter_pid) {
		__u8 *state = bpf_map_lookup_elem(&targets, &tgid);

		if (!state || *state != KP_TARGET_ACTIVE)
			return false;
	}
	if (cfg.filter_cgroup && bpf_current_task_under_cgroup(&cgroup_filter, 0) != 1)
		return false;
	return true;
}

#ifndef KPERF_COMPAT
#define KP_S_IFMT 00170000
#define KP_S_IFSOCK 0140000
#define KP_S_IFIFO 0010000

/* What file descriptor <fd> of the current task is (socket, pipe, other) and its inode, for
 * the calls of fd_mask: read through task->files->fdt, which the call itself pins while it
 * runs. */
static __always_inline void classify_fd(struct kp_task_state *st, long nr, long fd)
{
	struct task_struct *task;
	struct fdtable *fdt;
	struct file **fds, *f = NULL;
	struct inode *inode;
	__u32 mode;

	st->fd_kind = KP_FD_NONE;
	st->fd_ino = 0;
	if (!cfg.classify_fd || nr >= KP_SYSCALL_WORDS * 64 ||
	    !(cfg.fd_mask[KP_BOUND(nr >> 6, KP_SYSCALL_WORDS - 1)] & (1ULL << (nr & 63))))
		return;
	st->fd_kind = KP_FD_OTHER;
	task = bpf_get_current_task_btf();
	fdt = BPF_CORE_READ(task, files, fdt);
	if (!fdt || fd < 0 || (__u64)fd >= BPF_CORE_READ(fdt, max_fds))
		return;
	fds = BPF_CORE_READ(fdt, fd);
	if (bpf_probe_read_kernel(&f, sizeof(f), &fds[fd]) || !f)
		return;
	inode = BPF_CORE_READ(f, f_inode);
	mode = BPF_CORE_READ(inode, i_mode) & KP_S_IFMT;
	if (mode == KP_S_IFSOCK)
		st->fd_kind = KP_FD_SOCKET;
	else if (mode == KP_S_IFIFO)
		st->fd_kind = KP_FD_PIPE;
	else
		return;
	st->fd_ino = BPF_CORE_READ(inode, i_ino);
}
#endif

static __always_inline void on_enter(void *ctx, long nr, long arg0)
{
	struct kp_task_state *st;

	if (!traced(nr))
		return;
#ifdef KPERF_COMPAT
	/* the kernel's own tid: the in-flight state is per thread, whatever its namespace */
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct kp_task_state init = { .nr = nr, .fd = arg0 };

	if (want_stacks())
		take_stacks(ctx, &init);
	init.start_ns = bpf_ktime_get_ns();
	if (bpf_map_update_elem(&task_state, &tid, &init, BPF_ANY))
		count(KP_CNT_STATE_FULL);
	(void)st;
#else
	if (cfg.task_filter) {
		/* a target's threads have their storage already; any other has none */
		kp_task_t *t = cur_task();

		if (no_storage(t))
			return;
		st = bpf_task_storage_get(&task_state, t, 0, 0);
		if (!st || st->state != KP_TARGET_ACTIVE)
			return;
		if (cfg.filter_cgroup && bpf_current_task_under_cgroup(&cgroup_filter, 0) != 1)
			return;
	} else {
		st = bpf_task_storage_get(&task_state, bpf_get_current_task_btf(), 0,
					  BPF_LOCAL_STORAGE_GET_F_CREATE);
		if (!st) {
			count(KP_CNT_STATE_FULL);
			return;
		}
	}
	st->nr = nr;
	st->fd = arg0;
	classify_fd(st, nr, arg0);
	if (want_stacks())
		take_stacks(ctx, st);
	st->start_ns = bpf_ktime_get_ns();
#endif
}

static __always_inline void add_call(struct kp_sys_stat *s, __u64 dur, long ret)
{
	__u32 slot;

	s->calls++;
	if (ret < 0)
		s->errors++;
	s->total_ns += dur;
	if (s->calls == 1 || dur < s->min_ns)
		s->min_ns = dur;
	if (dur > s->max_ns)
		s->max_ns = dur;
	/* log2_u64 is < 64 already, but that is not what an older verifier can see */
	slot = log2_u64(dur);
	s->hist[KP_BOUND(slot, KP_HIST_BPF_SLOTS - 1)]++;
}

/* the call's row could not be allocated at this moment (-ENOMEM, not a full map): the call
 * goes to userspace in the exits ring, where it is added to its process's row; with the ring
 * full too, to its syscall's no-memory row (by_nr's second half) */
static __always_inline void late_call(kp_task_t *t, __u32 tgid, __u32 nr, __u64 dur, long ret,
				      long err)
{
	struct kp_sys_late_call *n;
	struct kp_sys_stat *s;
	__u32 idx;

	count(KP_CNT_SUMMARY_NOMEM);
	n = cfg.fault_nomem < 2 ? bpf_ringbuf_reserve(&exits, sizeof(*n), 0) : NULL;
	if (n) {
		n->tgid = tgid;
		n->kind = KP_SYS_NOTE_CALL;
		n->nr = nr;
		n->err = (__u32)-err;
		n->dur_ns = dur;
		n->ret = ret;
		cur_comm(t, n->comm);
		bpf_ringbuf_submit(n, BPF_RB_NO_WAKEUP);
		return;
	}
	count(KP_CNT_NOMEM_FOLDED);
	idx = nr + cfg.nomem_base;
	s = bpf_map_lookup_elem(&by_nr, &idx);
	if (!s) {
		count(KP_CNT_STATE_FULL);
		return;
	}
	add_call(s, dur, ret);
}

#include "syscall_cgroup.bpf.h"

static __always_inline void update_summary(kp_task_t *t, __u32 tgid, __u32 nr, __u64 dur, long ret)
{
	struct kp_sys_key key = { .tgid = tgid, .nr = nr };
	struct kp_sys_stat *s;
	__u32 zero = 0;
	int err;

	if (cfg.by_cgroup) {
		update_cg_summary(tgid, nr, dur, ret);
		return;
	}
	if (cfg.single) {
		/* the one process: a row per syscall number, no hash */
		s = bpf_map_lookup_elem(&by_nr, &nr);
		if (!s) {
			count(KP_CNT_STATE_FULL); /* a number beyond the table: not counted */
			return;
		}
		if (!s->calls)
			cur_comm(t, s->comm);
		add_call(s, dur, ret);
		return;
	}
	s = bpf_map_lookup_elem(&summary, &key);
	if (!s) {
		struct kp_sys_stat *init = bpf_map_lookup_elem(&zero_stat, &zero);

		if (!init)
			return;
		/* -EEXIST: another thread of the process made the row meanwhile; a test may ask
		 * for the allocator's failure (cfg.fault_nomem) */
		err = cfg.fault_nomem ?
			      -KP_ENOMEM :
			      map_answer(bpf_map_update_elem(&summary, &key, init, BPF_NOEXIST));
		s = cfg.fault_nomem ? NULL : bpf_map_lookup_elem(&summary, &key);
		if (!s) {
			if (err != -KP_E2BIG) {
				/* not full: the allocator had nothing ready (-ENOMEM) */
				late_call(t, tgid, nr, dur, ret, err);
				return;
			}
			/* no room: counted all the same, in the syscall's overflow row */
			count(KP_CNT_SUMMARY_FULL);
			s = bpf_map_lookup_elem(&by_nr, &nr);
			if (!s) {
				count(KP_CNT_STATE_FULL);
				return;
			}
			add_call(s, dur, ret);
			return;
		}
		cur_comm(t, s->comm);
	}
	add_call(s, dur, ret);
}

/* a call whose row in the summary by stack could not be allocated at this moment (-ENOMEM,
 * not a full map): to userspace through the exits ring, where it is added to its row; false
 * when the ring is not read (no stack notes) or full */
static __always_inline bool late_stack_call(kp_task_t *t, const struct kp_sys_stack_key *key,
					    __u64 dur, long ret, long err)
{
	struct kp_sys_late_stack_call *n;

	if (!cfg.stack_notes || cfg.fault_nomem >= 2)
		return false;
	n = bpf_ringbuf_reserve(&exits, sizeof(*n), 0);
	if (!n)
		return false;
	n->tgid = key->tgid;
	n->kind = KP_SYS_NOTE_STACK_CALL;
	n->nr = key->nr;
	n->err = (__u32)-err;
	n->kstack = key->kstack;
	n->ustack = key->ustack;
	n->dur_ns = dur;
	n->ret = ret;
	cur_comm(t, n->comm);
	bpf_ringbuf_submit(n, BPF_RB_NO_WAKEUP);
	count(KP_CNT_STACK_LATE);
	return true;
}

/* the call by its stacks at entry; without a row for them, in its syscall's overflow row */
static __always_inline void
update_stack_summary(kp_task_t *t, __u32 tgid, const struct kp_task_state *st, __u64 dur, long ret)
{
	struct kp_sys_stack_key key = {
		.tgid = tgid, .nr = st->nr, .kstack = st->kstack, .ustack = st->ustack
	};
	struct kp_sys_stack_stat *s, init = {};

	s = bpf_map_lookup_elem(&stack_summary, &key);
	if (!s) {
		/* a test may ask for the allocator's failure (cfg.fault_nomem) */
		int err = cfg.fault_nomem ? -KP_ENOMEM :
					    map_answer(bpf_map_update_elem(&stack_summary, &key,
									   &init, BPF_NOEXIST));

		s = cfg.fault_nomem ? NULL : bpf_map_lookup_elem(&stack_summary, &key);
		if (s) {
			cur_comm(t, s->comm);
		} else {
			/* not full: the allocator had nothing ready (-ENOMEM); to userspace */
			if (err != -KP_E2BIG && late_stack_call(t, &key, dur, ret, err))
				return;
			count(err == -KP_E2BIG ? KP_CNT_STACK_SUMMARY_FULL :
						 KP_CNT_STACK_SUMMARY_NOMEM);
			/* the key's process is not needed any more: it holds the row's index */
			key.tgid = st->nr + (err == -KP_E2BIG ? 0 : cfg.nomem_base);
			s = bpf_map_lookup_elem(&stack_by_nr, &key.tgid);
			if (!s)
				return; /* a number beyond the table: counted missing */
		}
	}
	s->calls++;
	if (ret < 0)
		s->errors++;
	s->total_ns += dur;
	if (s->calls == 1 || dur < s->min_ns)
		s->min_ns = dur;
	if (dur > s->max_ns)
		s->max_ns = dur;
}

static __always_inline void emit_record(kp_task_t *t, __u64 id, const struct kp_task_state *st,
					__u64 start, __u64 dur, long ret)
{
	struct kp_sys_event *e;
	__u64 flags = BPF_RB_NO_WAKEUP, *unwoken;
	__u32 unwoken_idx = KP_CNT_UNWOKEN;

	if (dur < cfg.min_duration_ns)
		return;
	if (want_stacks()) {
		/* the record with its stacks: the same record, the ids after it */
		struct kp_sys_event_stk *es = bpf_ringbuf_reserve(&events, sizeof(*es), 0);

		if (es) {
			es->kstack = st->kstack;
			es->ustack = st->ustack;
		}
		e = (struct kp_sys_event *)es;
	} else {
		e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	}
	if (!e) {
		count(KP_CNT_DROPPED);
		return;
	}
	e->start_ns = start;
	e->dur_ns = dur;
	e->ret = ret;
	e->tgid = id >> 32;
	e->tid = (__u32)id;
	e->cpu = bpf_get_smp_processor_id();
	e->nr = st->nr;
	e->fd = st->fd;
	e->fd_kind = st->fd_kind;
	e->fd_ino = st->fd_ino;
	cur_comm(t, e->comm);
	/* wake the reader only when enough is waiting: one wake-up per call would cost
	 * more than the tracing itself; the reader also polls on a timer. Counted per CPU
	 * (no ring buffer query): every wakeup_records records of a CPU */
	unwoken = bpf_map_lookup_elem(&counters, &unwoken_idx);
	if (unwoken && ++*unwoken >= cfg.wakeup_records) {
		*unwoken = 0;
		flags = BPF_RB_FORCE_WAKEUP;
	}
	bpf_ringbuf_submit(e, flags);
}

static __always_inline void on_exit(long ret)
{
	__u64 id, now, start, dur;
	struct kp_task_state *st, copy;
	kp_task_t *t = cur_task();

#ifdef KPERF_COMPAT
	__u32 tid = (__u32)bpf_get_current_pid_tgid();

	st = bpf_map_lookup_elem(&task_state, &tid);
#else
	if (no_storage(t))
		return;
	st = bpf_task_storage_get(&task_state, t, 0, 0);
#endif
	if (!st || !st->start_ns)
		return;
	now = bpf_ktime_get_ns();
	copy = *st;
	st->start_ns = 0;
	start = copy.start_ns;
	dur = now - start;
	id = cur_ids(t);
	update_summary(t, id >> 32, copy.nr, dur, ret);
	if (want_stacks())
		update_stack_summary(t, id >> 32, &copy, dur, ret);
	if (cfg.record_events)
		emit_record(t, id, &copy, start, dur, ret);
}

/* ---- process tree: follow forks, arm on exec, forget on exit ---- */

static __always_inline void follow_fork(__u32 ptgid, __u32 ctgid)
{
	__u8 *state;
	__u8 v;

	/* a new thread: already covered by its tgid; a child the caller cannot see (its
	 * parent cannot be a target then either) */
	if (!cfg.follow_fork || ptgid == ctgid || ctgid == KP_PID_OUTSIDE)
		return;
	state = bpf_map_lookup_elem(&targets, &ptgid);
	if (!state)
		return;
	v = *state;
	bpf_map_update_elem(&targets, &ctgid, &v, BPF_ANY);
}

static __always_inline void arm_on_exec(__u32 tgid)
{
	__u8 *state = bpf_map_lookup_elem(&targets, &tgid);

	if (state && *state == KP_TARGET_UNTIL_EXEC)
		*state = KP_TARGET_ACTIVE;
}

/* the last thread of <tgid> exited: forget it as a target, and have its summary rows moved
 * out of the map (a lost note leaves them there, still counted) */
static __always_inline void process_gone(__u32 tgid)
{
	struct kp_sys_exit_note *n;

	if (cfg.filter_pid)
		bpf_map_delete_elem(&targets, &tgid);
	if (!cfg.exit_notes || tgid == KP_PID_OUTSIDE)
		return;
	n = bpf_ringbuf_reserve(&exits, sizeof(*n), 0);
	if (!n) {
		count(KP_CNT_EXITS_LOST);
		return;
	}
	n->tgid = tgid;
	n->kind = KP_SYS_NOTE_EXIT;
	/* rare next to syscalls: the reader is woken when a quarter of the ring waits, and
	 * polls on a timer */
	bpf_ringbuf_submit(n, bpf_ringbuf_query(&exits, BPF_RB_AVAIL_DATA) >= (64 << 10) ?
				      BPF_RB_FORCE_WAKEUP :
				      BPF_RB_NO_WAKEUP);
}

#ifdef KPERF_COMPAT

/* raw_syscalls records; their layout is part of the tracing ABI */
struct kp_raw_sys_enter {
	__u64 common;
	long id;
	unsigned long args[6];
};

struct kp_raw_sys_exit {
	__u64 common;
	long id;
	long ret;
};

SEC("tracepoint/raw_syscalls/sys_enter")
int kp_sys_enter(struct kp_raw_sys_enter *ctx)
{
	on_enter(ctx, ctx->id, ctx->args[0]);
	return 0;
}

SEC("tracepoint/raw_syscalls/sys_exit")
int kp_sys_exit(struct kp_raw_sys_exit *ctx)
{
	on_exit(ctx->ret);
	return 0;
}

/* in the initial namespace: the child's pid is in the record */
SEC("tracepoint/sched/sched_process_fork")
int kp_proc_fork(void *ctx)
{
	__u32 child = 0;

	/* child_pid is a tid: for a new thread it is a harmless extra entry, removed when
	 * that thread exits */
	bpf_probe_read_kernel(&child, sizeof(child), ctx + (cfg.fork_child_pid_off & 0xfff));
	follow_fork(bpf_get_current_pid_tgid() >> 32, child);
	return 0;
}

/* in a PID namespace: the record's child_pid is the initial namespace's, the child's pid in
 * the caller's namespace is read from its task (with the offsets of the kernel's BTF) */
SEC("raw_tracepoint/sched_process_fork")
int kp_proc_fork_ns(struct bpf_raw_tracepoint_args *ctx)
{
	follow_fork(kp_pidns_current() >> 32, kp_pidns_task_tgid((const void *)ctx->args[1]));
	return 0;
}

SEC("tracepoint/sched/sched_process_exec")
int kp_proc_exec(void *ctx)
{
	arm_on_exec(kp_pidns_current() >> 32);
	return 0;
}

/* without CO-RE, whether the process's last thread is leaving cannot be read: its leader's
 * exit stands for it (userspace checks that the process is gone before it moves rows) */
SEC("tracepoint/sched/sched_process_exit")
int kp_proc_exit(void *ctx)
{
	__u64 id = kp_pidns_current();
	__u32 tid = (__u32)id;

	if (cfg.filter_pid)
		bpf_map_delete_elem(&targets, &tid); /* the extra entries of threads */
	if ((__u32)id == id >> 32)
		process_gone(id >> 32);
	return 0;
}

/* the task storage's programs: the fallback has no task storage */
SEC("raw_tracepoint/sched_process_fork")
int kp_mark_fork(struct bpf_raw_tracepoint_args *ctx)
{
	return 0;
}

SEC("raw_tracepoint/sched_process_exec")
int kp_mark_targets(struct bpf_raw_tracepoint_args *ctx)
{
	return 0;
}

#else

SEC("tp_btf/sys_enter")
int BPF_PROG(kp_sys_enter, struct pt_regs *regs, long id)
{
	/* the first argument costs a read of the registers: only when a descriptor is looked at
	 * (cfg is read-only data, so the verifier drops the read when it is not) */
	on_enter(ctx, id, cfg.classify_fd ? PT_REGS_PARM1_CORE_SYSCALL(regs) : -1);
	return 0;
}

SEC("tp_btf/sys_exit")
int BPF_PROG(kp_sys_exit, struct pt_regs *regs, long ret)
{
	on_exit(ret);
	return 0;
}

/* mark <task> with <state> in its task storage (created): it is a target from now on */
static __always_inline void mark_task(struct task_struct *task, __u32 state)
{
	struct kp_task_state *st;

	st = bpf_task_storage_get(&task_state, task, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (st && st->state != KP_TARGET_ACTIVE)
		st->state = state;
}

/* the state of <task>'s process: its thread's mark, else the targets map (a thread created
 * before the task iterator reached its parent) */
static __always_inline __u32 target_state(struct task_struct *task, __u32 tgid)
{
	struct kp_task_state *st = bpf_task_storage_get(&task_state, task, 0, 0);
	__u8 *state;

	if (st && st->state)
		return st->state;
	state = bpf_map_lookup_elem(&targets, &tgid);
	return state ? *state : KP_TARGET_NONE;
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(kp_proc_fork, struct task_struct *parent, struct task_struct *child)
{
	follow_fork(kp_pidns_task_tgid(parent), kp_pidns_task_tgid(child));
	return 0;
}

/* task_filter: a new thread of a target is one too, and so is a new child when following */
SEC("tp_btf/sched_process_fork")
int BPF_PROG(kp_mark_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 ptgid = kp_pidns_task_tgid(parent), ctgid = kp_pidns_task_tgid(child), state;

	if (ptgid != ctgid && (!cfg.follow_fork || ctgid == KP_PID_OUTSIDE))
		return 0;
	state = target_state(parent, ptgid);
	if (state)
		mark_task(child, state);
	return 0;
}

/* task_filter: run once at attach, after kp_mark_fork is attached: every thread that exists
 * then of a process in the targets map is marked */
SEC("iter/task")
int kp_mark_targets(struct bpf_iter__task *ctx)
{
	struct task_struct *task = ctx->task;
	__u32 tgid;
	__u8 *state;

	if (!task)
		return 0;
	tgid = kp_pidns_task_tgid(task);
	state = bpf_map_lookup_elem(&targets, &tgid);
	if (state)
		mark_task(task, *state);
	return 0;
}

/* the compat object's program for a PID namespace: here kp_proc_fork does both */
SEC("raw_tracepoint/sched_process_fork")
int kp_proc_fork_ns(struct bpf_raw_tracepoint_args *ctx)
{
	return 0;
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(kp_proc_exec, struct task_struct *p)
{
	struct kp_task_state *st;

	arm_on_exec(kp_pidns_task_tgid(p));
	if (cfg.task_filter) {
		st = bpf_task_storage_get(&task_state, p, 0, 0);
		if (st && st->state == KP_TARGET_UNTIL_EXEC)
			st->state = KP_TARGET_ACTIVE;
	}
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(kp_proc_exit, struct task_struct *p)
{
	/* the process is gone when its last thread exits (signal->live already dropped) */
	if (BPF_CORE_READ(p, signal, live.counter) != 0)
		return 0;
	process_gone(kp_pidns_task_tgid(p));
	return 0;
}

#endif

/* unwinding from tables (both objects; loaded when user stacks are unwound): a process that
 * execs has new mappings; its entry goes (its stacks fall back to frame pointers, counted) and
 * userspace loads the new ones */
SEC("tp/sched/sched_process_exec")
int kp_uw_exec(void *ctx)
{
	kp_uw_exec_reset();
	return 0;
}
