/*
 * unwind.bpf.h - user stacks unwound from the tables user/unwind compiles out of .eh_frame
 * (bpf/unwind_table.h), for stack_capture.bpf.h. Starting from the user registers (pc, sp,
 * the frame pointer, arm64's link register), each frame: the mapping of the pc in the
 * process's sorted mappings (kp_uw_procs, by tgid), its row by binary search in the shared
 * row array (kp_uw_rows: one copy of a library's rows whatever the number of processes that
 * map it), then the CFA, the return address and the caller's frame pointer, read with
 * bpf_probe_read_user. Where a mapping has no table (JIT code, no .eh_frame) or a row says
 * there is none, frame pointers; those frames are marked in the stack's fp_mask.
 *
 * It stops cleanly: at the outermost frame (the return address undefined: _start, thread
 * starts), at an address no user code can have (0, non-canonical, the kernel's range), at a
 * pc in no known mapping (the process mapped code since its tables were loaded: the tgid is
 * put in kp_uw_want for userspace to load again, and the stack keeps the frames found so far,
 * flagged), at a rule BPF cannot evaluate, at unreadable memory. Each is counted.
 *
 * One frame is one call of a global function (kp_uw_step, verified once, 5.6+): no bpf_loop
 * and no tail call needed for the 127 frames of a stack, and the verifier of 5.10 accepts it.
 * Bounded loops (5.3+) only inside. The includer defines kp_cap_scratch (stack_capture.bpf.h)
 * first. The owner sizes kp_uw_rows and kp_uw_procs (1 entry each when it does not unwind)
 * and sets kp_uw_on.
 */
#ifndef KPERF_BPF_UNWIND_BPF_H
#define KPERF_BPF_UNWIND_BPF_H

#include <bpf/bpf_core_read.h>
#include "unwind_table.h"
#include "user_regs.h"
#include "bounds.h"
#include "pidns.bpf.h"

#define KP_UW_PF_EXITING 0x00000004 /* task_struct.flags: in do_exit */
#define KP_UW_SEARCH_STEPS 24 /* rows of one mapping: at most 2^24 */
#define KP_UW_MAP_STEPS 7 /* log2(KP_UW_MAX_MAPS) + 1 */
#ifndef KP_UW_MAX_DEPTH
#define KP_UW_MAX_DEPTH KP_CAP_MAX_FRAMES /* user frames of one stack */
#endif

#if defined(__TARGET_ARCH_x86)
#define KP_UW_USER_END 0x00007ffffffff000ULL /* above it: non-canonical or the kernel */
#else
#define KP_UW_USER_END 0x0001000000000000ULL /* 48-bit (and 52-bit LVA) user space */
#define KP_UW_PAC_MASK 0x0000ffffffffffffULL /* pointer authentication bits of x30 */
#endif

/* set by the owner before load: unwind user stacks from tables */
const volatile bool kp_uw_on = false;

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1); /* resized by userspace */
	__type(key, __u32);
	__type(value, struct kp_uw_row);
} kp_uw_rows SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1); /* resized by userspace */
	__type(key, __u32);
	__type(value, struct kp_uw_proc);
} kp_uw_procs SEC(".maps");

/* processes whose tables are missing or stale: tgid -> the last time it was asked (ns) */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, __u64);
} kp_uw_want SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, KP_UW_CNT_MAX);
	__type(key, __u32);
	__type(value, __u64);
} kp_uw_counters SEC(".maps");

/* the walk of one stack, between two frames (per CPU: a program runs on one CPU at a time) */
struct kp_uw_walk {
	__u64 pc, sp, fp, lr;
	__u32 tgid;
	__u32 n; /* frames in kp_cap_scratch so far */
	__u32 exact; /* the pc is the interrupted one, not a return address */
	__u32 max;
	/* CPython (pyframes.bpf.h): _PyEval_EvalFrameDefault's range (0, 0: not Python), the
	 * next interpreter frame to show, 0 not looked for yet / 1 found / 2 none */
	__u64 py_lo, py_hi, py_frame;
	__u32 py_state;
	__u32 py_put; /* at this step: 0 not the interpreter, 1 + the Python frames put */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct kp_uw_walk);
} kp_uw_walks SEC(".maps");

#include "pyframes.bpf.h"

static __always_inline void kp_uw_count(__u32 idx)
{
	__u64 *c = bpf_map_lookup_elem(&kp_uw_counters, &idx);

	if (c)
		*c += 1;
}

static __always_inline void kp_uw_ask(__u32 tgid)
{
	__u64 now = bpf_ktime_get_ns();

	bpf_map_update_elem(&kp_uw_want, &tgid, &now, BPF_ANY);
}

/* A launched command held until its tables are loaded (userspace puts its tgid here before
 * its exec, KP_UW_HOLD_EXEC): at its exec it stops (SIGSTOP) and asks, userspace loads what is
 * mapped (the program, ld.so, the vdso), places kp_uw_entry at the program's entry point and
 * continues it (KP_UW_HOLD_ENTRY); at the entry, ld.so has mapped every library the program
 * needs: it stops and asks again, userspace loads them and continues it, armed again
 * (KP_UW_HOLD_EXEC) for its next exec: a wrapper (env, nice, taskset, chroot, sh -c) execs the
 * real program, which is held the same way. The processes it forks are armed at their fork
 * (kp_uw_hold_fork): a shell, make or time that forks the real program has it held at its
 * exec too. So its first samples, before and after main, unwind from tables, not from frame
 * pointers. The process's exit drops its entry. Key 0 (no process's tgid) is userspace's "the
 * hold is over": once it is there nothing stops and nothing is armed any more, so userspace
 * can continue what is stopped and know that no program stops anything after it. */
#define KP_UW_SIGSTOP 19
enum kp_uw_hold_state {
	KP_UW_HOLD_EXEC = 1, /* armed: stop at the exec */
	KP_UW_HOLD_EXEC_STOPPED = 2, /* stopped at the exec, for userspace */
	KP_UW_HOLD_ENTRY = 3, /* armed: stop at the entry point */
	KP_UW_HOLD_ENTRY_STOPPED = 4, /* stopped at the entry point, for userspace */
};
#define KP_UW_HOLD_OVER 0 /* the key that says the hold is over */

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024); /* the command and the processes of its tree alive at once */
	__type(key, __u32);
	__type(value, __u32);
} kp_uw_hold SEC(".maps");

static __always_inline bool kp_uw_hold_over(void)
{
	__u32 over = KP_UW_HOLD_OVER;

	return bpf_map_lookup_elem(&kp_uw_hold, &over) != NULL;
}

/* a held process reaching state <from>: stopped, asked for, marked <from> + 1 (an object
 * that shares the map with the one that stopped it asks for its own tables) */
static __always_inline void kp_uw_hold_stop(__u32 tgid, __u32 from)
{
	__u32 *h = bpf_map_lookup_elem(&kp_uw_hold, &tgid);

	if (!h || (*h != from && *h != from + 1) || !tgid || kp_uw_hold_over())
		return;
	/* the signal before the state: userspace continues only what it sees stopped */
	if (*h == from)
		bpf_send_signal(KP_UW_SIGSTOP);
	*h = from + 1;
	kp_uw_ask(tgid); /* every object that shares the map loads its tables */
}

/* a held process <ptgid> forks <ctgid> (an owner's sched_process_fork program calls this):
 * the child is held at its exec too (a full map leaves it unheld: its first samples are
 * frame pointers', counted as taken before its tables) */
static __always_inline void kp_uw_hold_fork(__u32 ptgid, __u32 ctgid)
{
	__u32 armed = KP_UW_HOLD_EXEC;

	if (!kp_uw_on || !ptgid || !ctgid || ptgid == ctgid || ctgid == (__u32)-1 ||
	    !bpf_map_lookup_elem(&kp_uw_hold, &ptgid) || kp_uw_hold_over())
		return;
	bpf_map_update_elem(&kp_uw_hold, &ctgid, &armed, BPF_NOEXIST);
}

/* <tgid> is stopped by its hold (its time stopped is kperf-bpf's, not the program's) */
static __always_inline bool kp_uw_holding(__u32 tgid)
{
	__u32 *h = bpf_map_lookup_elem(&kp_uw_hold, &tgid);

	return h && (*h == KP_UW_HOLD_EXEC_STOPPED || *h == KP_UW_HOLD_ENTRY_STOPPED);
}

/* the current process exec'ed (an owner's sched_process_exec program calls this): its
 * mappings are new, its entry goes (stacks meanwhile: frame pointers, counted) and userspace is
 * asked to load the new ones; a held command stops here */
static __always_inline void kp_uw_exec_reset(void)
{
	__u32 tgid = kp_pidns_current() >> 32;

	if (!kp_uw_on)
		return;
	/* a held one is marked stopped before its entry goes: a sample that interrupts this
	 * program in between finds it held, not a process without tables (kp_uw_unwind) */
	kp_uw_hold_stop(tgid, KP_UW_HOLD_EXEC);
	bpf_map_delete_elem(&kp_py_procs, &tgid); /* another program now: looked at again */
	if (bpf_map_delete_elem(&kp_uw_procs, &tgid) == 0)
		kp_uw_ask(tgid);
}

/* the process <tgid> is gone (its last thread, or its leader, exits): no hold is left armed
 * for a later process given its pid */
static __always_inline void kp_uw_exit_reset(__u32 tgid)
{
	bpf_map_delete_elem(&kp_uw_hold, &tgid);
}

/* placed by userspace at a held command's entry point (its pid only) */
SEC("uprobe")
int kp_uw_entry(void *ctx)
{
	kp_uw_hold_stop(kp_pidns_current() >> 32, KP_UW_HOLD_ENTRY);
	return 0;
}

/* The current task is in execve, its exec program not past (in_execve is cleared when the
 * exec is done): its user registers are the old program's until the kernel sets the new one's
 * (its entry point), its memory already the new program's, its tables (kp_uw_procs) the old
 * one's until the exec program drops them. A user stack read there mixes two programs (the old
 * pc shown in the new one's mappings, as [unknown]); the task is in the kernel's exec and has no
 * user stack of either: none is taken (kernel frames only). Frame pointers would do the same
 * mix, so the caller takes none either. */
static __always_inline bool kp_uw_in_execve(void)
{
	struct task_struct *t = (struct task_struct *)bpf_get_current_task();

	if (!bpf_core_field_exists(t->in_execve))
		return false;
	return BPF_CORE_READ_BITFIELD_PROBED(t, in_execve) != 0;
}

/* where a user stack starts, as a program was handed it (a perf event's registers) */
struct kp_uw_hint {
	__u64 pc, sp, fp, lr;
	__u32 user; /* they are user registers (the event interrupted user code) */
	__u32 pad;
};

/* a perf_event program's registers into a hint: read field by field at constant offsets (the
 * verifier refuses a context pointer moved and dereferenced, and wants 8-byte loads of the
 * registers). The layout is the ABI's (bpf_user_pt_regs_t, user_regs.h), not CO-RE's: the
 * kernel's x86 pt_regs made cs a u16 in a union (6.9, FRED) and was "unsigned short cs,
 * __csh" before, so a relocated 8-byte load of cs is refused by libbpf on 5.10 and 6.1
 * ("unexpected mem size: got 8, exp 2") and sampling did not load there. */
#define KP_UW_HINT_REGS(ctx) ((const volatile struct kp_user_regs *)(ctx))
#if defined(__TARGET_ARCH_x86)
#define KP_UW_HINT_OF(ctx, h)                                    \
	do {                                                     \
		(h)->user = (KP_UW_HINT_REGS(ctx)->cs & 3) == 3; \
		(h)->pc = KP_UW_HINT_REGS(ctx)->ip;              \
		(h)->sp = KP_UW_HINT_REGS(ctx)->sp;              \
		(h)->fp = KP_UW_HINT_REGS(ctx)->bp;              \
		(h)->lr = 0;                                     \
	} while (0)
#else
#define KP_UW_HINT_OF(ctx, h)                                          \
	do {                                                           \
		(h)->user = (KP_UW_HINT_REGS(ctx)->pstate & 0xf) == 0; \
		(h)->pc = KP_UW_HINT_REGS(ctx)->pc;                    \
		(h)->sp = KP_UW_HINT_REGS(ctx)->sp;                    \
		(h)->fp = KP_UW_HINT_REGS(ctx)->regs[29];              \
		(h)->lr = KP_UW_HINT_REGS(ctx)->regs[30];              \
	} while (0)
#endif

/* Where a task's user registers are on kernels without bpf_task_pt_regs (before 5.15): at the
 * top of its kernel stack, task->stack + kp_uw_regs_off (THREAD_SIZE less struct pt_regs,
 * x86_64 and arm64 alike), kp_uw_stack_off the offset of task_struct.stack. Set by the owner
 * before load from the kernel's BTF (user/unwind/task_regs.c); 0: not known, no registers. */
const volatile __u32 kp_uw_stack_off = 0;
const volatile __u32 kp_uw_regs_off = 0;

/* pc, sp, fp and lr of the saved user registers at <regs> into <w>, read field by field (a
 * whole struct on the stack, 272 bytes on arm64, put kp_sample over 6.1's 512-byte limit for
 * a call chain); with <check>, false unless they are user code's (a kernel thread has none
 * there) */
static __always_inline bool kp_uw_read_regs(const void *regs, struct kp_uw_walk *w, bool check)
{
	__u64 mode = 0;

#if defined(__TARGET_ARCH_x86)
	if (bpf_probe_read_kernel(&w->pc, 8, regs + __builtin_offsetof(struct kp_user_regs, ip)) ||
	    bpf_probe_read_kernel(&w->sp, 8, regs + __builtin_offsetof(struct kp_user_regs, sp)) ||
	    bpf_probe_read_kernel(&w->fp, 8, regs + __builtin_offsetof(struct kp_user_regs, bp)) ||
	    (check &&
	     bpf_probe_read_kernel(&mode, 8, regs + __builtin_offsetof(struct kp_user_regs, cs))))
		return false;
	w->lr = 0;
	return !check || (mode & 3) == 3;
#else
	if (bpf_probe_read_kernel(&w->pc, 8, regs + __builtin_offsetof(struct kp_user_regs, pc)) ||
	    bpf_probe_read_kernel(&w->sp, 8, regs + __builtin_offsetof(struct kp_user_regs, sp)) ||
	    bpf_probe_read_kernel(&w->fp, 8,
				  regs + __builtin_offsetof(struct kp_user_regs, regs[29])) ||
	    bpf_probe_read_kernel(&w->lr, 8,
				  regs + __builtin_offsetof(struct kp_user_regs, regs[30])) ||
	    (check && bpf_probe_read_kernel(
			      &mode, 8, regs + __builtin_offsetof(struct kp_user_regs, pstate))))
		return false;
	return !check || (mode & 0xf) == 0;
#endif
}

/* the current task's saved user registers into <w>: bpf_task_pt_regs (5.15+), else where the
 * owner found them, at the top of its kernel stack (5.10: samples taken in the kernel, as in a
 * syscall, and the syscall programs, whose context has no user registers) */
static __always_inline bool kp_uw_task_regs(struct kp_uw_walk *w)
{
	void *task, *stack = NULL;

	if (bpf_core_enum_value_exists(enum bpf_func_id, BPF_FUNC_task_pt_regs)) {
		void *regs = (void *)bpf_task_pt_regs(bpf_get_current_task_btf());

		return regs && kp_uw_read_regs(regs, w, false);
	}
	if (!kp_uw_regs_off)
		return false;
	task = (void *)bpf_get_current_task();
	if (bpf_probe_read_kernel(&stack, sizeof(stack), task + kp_uw_stack_off) || !stack)
		return false;
	return kp_uw_read_regs(stack + kp_uw_regs_off, w, true);
}

/* the user registers of the current task: <hint> when they are the user's, else the task's
 * saved ones */
static __always_inline bool kp_uw_regs(const struct kp_uw_hint *hint, struct kp_uw_walk *w)
{
	if (hint && hint->user) {
		w->pc = hint->pc;
		w->sp = hint->sp;
		w->fp = hint->fp;
		w->lr = hint->lr;
		return true;
	}
	return kp_uw_task_regs(w);
}

/* the mapping of <pc> in <p> (sorted by start), or NULL */
static __always_inline const struct kp_uw_map *kp_uw_find_map(const struct kp_uw_proc *p, __u64 pc)
{
	__u32 lo = 0, hi = p->n, i;
	const struct kp_uw_map *m;

	if (!hi)
		return NULL;
	if (hi > KP_UW_MAX_MAPS)
		hi = KP_UW_MAX_MAPS;
	/* the last mapping with start <= pc in [lo, hi) */
	for (i = 0; i < KP_UW_MAP_STEPS; i++) {
		__u32 mid;

		if (hi - lo <= 1)
			break;
		mid = lo + (hi - lo) / 2;
		if (p->m[KP_BOUND(mid, KP_UW_MAX_MAPS - 1)].start <= pc)
			lo = mid;
		else
			hi = mid;
	}
	m = &p->m[KP_BOUND(lo, KP_UW_MAX_MAPS - 1)];
	if (pc < m->start || pc >= m->end)
		return NULL;
	return m;
}

/* the row of <off> among rows[first, first + n): the last with pc <= off */
static __always_inline const struct kp_uw_row *kp_uw_find_row(__u32 first, __u32 n, __u64 off)
{
	__u32 lo = first, hi = first + n, i, idx;
	const struct kp_uw_row *r;

	if (!n || off > 0xffffffffULL)
		return NULL;
	for (i = 0; i < KP_UW_SEARCH_STEPS; i++) {
		__u32 mid;

		if (hi - lo <= 1)
			break;
		mid = lo + (hi - lo) / 2;
		r = bpf_map_lookup_elem(&kp_uw_rows, &mid);
		if (!r)
			return NULL;
		if (r->pc <= off)
			lo = mid;
		else
			hi = mid;
	}
	idx = lo;
	r = bpf_map_lookup_elem(&kp_uw_rows, &idx);
	if (!r || r->pc > off)
		return NULL;
	return r;
}

static __always_inline bool kp_uw_read(__u64 *v, __u64 addr)
{
	return addr && bpf_probe_read_user(v, sizeof(*v), (const void *)addr) == 0;
}

/* the frame pointer record at fp: [fp] the caller's fp, [fp + 8] the return address */
static __always_inline bool kp_uw_fp_frame(struct kp_uw_walk *w, struct kp_cap_stack *s, __u32 at)
{
	__u64 fp, ra;

	if (!kp_uw_read(&fp, w->fp) || !kp_uw_read(&ra, w->fp + 8)) {
		s->flags |= KP_CAP_F_STOPPED;
		kp_uw_count(KP_UW_CNT_READ_FAULT);
		return false;
	}
	if (w->fp + 16 <= w->sp) { /* a stack grows down: the caller's frame is above */
		s->flags |= KP_CAP_F_STOPPED;
		return false;
	}
	s->fp_mask[(at >> 6) & 1] |= 1ULL << (at & 63);
	s->flags |= KP_CAP_F_FP;
	kp_uw_count(KP_UW_CNT_FP_FRAMES);
	w->sp = w->fp + 16;
	w->fp = fp;
	w->pc = ra;
	w->exact = 0;
	return true;
}

/*
 * One frame of the walk in kp_uw_walks: its pc stored in kp_cap_scratch, the caller's
 * registers computed. 0: go on; 1: the stack ends here. A global function: the verifier
 * checks it once, whatever the number of frames a program unwinds with it.
 */
__attribute__((noinline)) int kp_uw_step(__u32 depth)
{
	__u32 zero = 0, at;
	struct kp_uw_walk *w = bpf_map_lookup_elem(&kp_uw_walks, &zero);
	struct kp_cap_stack *s = bpf_map_lookup_elem(&kp_cap_scratch, &zero);

	/* the argument used, so that the compiler passes it: a global function's arguments
	 * are checked by the verifier, and an unused one was left as whatever r1 held */
	if (depth > KP_UW_MAX_DEPTH)
		return 1;
	const struct kp_uw_proc *proc;
	const struct kp_uw_map *m;
	const struct kp_uw_row *r = NULL;
	__u64 look, cfa = 0, ra = 0, fp;
	bool keep = true;

	if (!w || !s)
		return 1;
	if (w->n >= w->max || w->n >= KP_CAP_MAX_FRAMES) {
		s->flags |= KP_CAP_F_TRUNCATED;
		kp_uw_count(KP_UW_CNT_TRUNCATED);
		return 1;
	}
	if (w->pc < 4096 || w->pc >= KP_UW_USER_END) {
		if (w->n)
			s->flags |= KP_CAP_F_STOPPED;
		return 1;
	}
	look = w->exact ? w->pc : w->pc - 1;
	if (w->py_put) {
		/* the interpreter, whose Python frames the caller put here (kp_uw_walk_user: not
		 * called from here, so that this function and the reader are not one call chain,
		 * whose stacks 5.10 to 6.5 add up against 512 bytes): in its place unless kept */
		keep = w->py_put == 1 || kp_py_keep_interp;
		if (w->n >= w->max || w->n >= KP_CAP_MAX_FRAMES) {
			s->flags |= KP_CAP_F_TRUNCATED;
			kp_uw_count(KP_UW_CNT_TRUNCATED);
			return 1;
		}
	}
	at = w->n;
	if (keep) {
		s->ip[KP_BOUND(at, KP_CAP_MAX_FRAMES)] = w->pc;
		w->n = at + 1;
	} else {
		at = KP_CAP_MAX_FRAMES; /* not stored: no frame of its own to mark */
	}
	proc = bpf_map_lookup_elem(&kp_uw_procs, &w->tgid);
	if (!proc)
		return 1;
	m = kp_uw_find_map(proc, look);
	if (!m) {
		s->flags |= KP_CAP_F_UNKNOWN_MAP;
		kp_uw_count(KP_UW_CNT_UNKNOWN_MAP);
		kp_uw_ask(w->tgid);
		return 1;
	}
	if (m->nrows)
		r = kp_uw_find_row(m->row_off, m->nrows, look - m->adj);
	if (!r || r->cfa == KP_UW_CFA_NONE)
		return kp_uw_fp_frame(w, s, at) ? 0 : 1;
	if (r->cfa == KP_UW_CFA_END)
		return 1; /* the outermost frame */
	switch (r->cfa) {
	case KP_UW_CFA_SP:
		cfa = w->sp + r->cfa_off;
		break;
	case KP_UW_CFA_FP:
		cfa = w->fp + r->cfa_off;
		break;
	case KP_UW_CFA_SP_DEREF:
		if (!kp_uw_read(&cfa, w->sp + r->cfa_off))
			cfa = 0;
		break;
	case KP_UW_CFA_FP_DEREF:
		if (!kp_uw_read(&cfa, w->fp + r->cfa_off))
			cfa = 0;
		break;
	case KP_UW_CFA_PLT:
		cfa = w->sp + r->cfa_off + ((w->pc & 15) >= (__u64)r->fp_off ? 8 : 0);
		break;
	default:
		kp_uw_count(KP_UW_CNT_EXPR);
	}
	if (!cfa) {
		s->flags |= KP_CAP_F_STOPPED;
		return 1;
	}
	kp_uw_count(KP_UW_CNT_FRAMES);
	if (r->flags & KP_UW_F_PLT)
		kp_uw_count(KP_UW_CNT_PLT_FRAMES);
	else if (r->flags & KP_UW_F_DEBUG)
		kp_uw_count(KP_UW_CNT_DEBUG_FRAMES);
	if (r->flags & KP_UW_F_SIGNAL)
		kp_uw_count(KP_UW_CNT_SIGNAL_FRAMES);
	/* the return address */
	if (r->ra == KP_UW_REG_AT_CFA) {
		if (!kp_uw_read(&ra, cfa + r->ra_off))
			ra = 0;
	} else if (r->ra == KP_UW_REG_AT_SP) {
		if (!kp_uw_read(&ra, w->sp + r->ra_off))
			ra = 0;
	} else if (r->ra == KP_UW_REG_SAME) {
		ra = w->lr; /* arm64: still in x30 (a leaf, or the first frame) */
	}
	/* the caller's frame pointer */
	fp = w->fp;
	if (r->cfa != KP_UW_CFA_PLT) {
		if (r->fp == KP_UW_REG_AT_CFA) {
			if (!kp_uw_read(&fp, cfa + r->fp_off))
				fp = 0;
		} else if (r->fp == KP_UW_REG_AT_SP) {
			if (!kp_uw_read(&fp, w->sp + r->fp_off))
				fp = 0;
		} else if (r->fp == KP_UW_REG_VAL_CFA) {
			fp = cfa + r->fp_off;
		} else if (r->fp != KP_UW_REG_SAME) {
			fp = 0;
		}
	}
#if defined(__TARGET_ARCH_arm64)
	ra &= KP_UW_PAC_MASK;
#endif
	if (!ra) {
		s->flags |= KP_CAP_F_STOPPED;
		kp_uw_count(KP_UW_CNT_READ_FAULT);
		return 1;
	}
	/* a signal frame's caller is the interrupted pc itself, not after a call */
	w->exact = (r->flags & KP_UW_F_SIGNAL) != 0;
	w->lr = 0;
	w->sp = cfa;
	w->fp = fp;
	w->pc = ra;
	return 0;
}

/*
 * Unwind the current task's user stack into kp_cap_scratch (frames leaf first, flags,
 * fp_mask): the number of frames (0 in execve: kp_uw_in_execve), or -1 when the unwinder
 * cannot start (no user registers, the process's tables not loaded: asked for) and the caller
 * falls back to bpf_get_stack.
 */
static __always_inline int kp_uw_unwind(const struct kp_uw_hint *hint, struct kp_cap_stack *s)
{
	__u32 zero = 0, i, tgid = kp_pidns_current() >> 32;
	struct kp_uw_walk *w = bpf_map_lookup_elem(&kp_uw_walks, &zero);
	const struct kp_py_proc *py;
	__u32 *held;

	if (!w)
		return -1;
	if (kp_uw_in_execve())
		return 0;
	if (!kp_uw_regs(hint, w)) {
		kp_uw_count(KP_UW_CNT_NO_REGS);
		return -1;
	}
	/* a held command between its exec and its stop: its new image's registers, the old
	 * image's tables until its entry goes (frame pointers, not counted) */
	held = bpf_map_lookup_elem(&kp_uw_hold, &tgid);
	if (held && *held == KP_UW_HOLD_EXEC_STOPPED)
		return -1;
	if (!bpf_map_lookup_elem(&kp_uw_procs, &tgid)) {
		/* a process on its way out (its entry dropped at its exit by an owner's
		 * sched_process_exit program, then its files closed), or a held command between
		 * its execve and the stop that has its tables loaded, armed or past it (the exec's
		 * own kernel path: enable_on_exec started the event before the exec program
		 * stops it): not late tables; frame pointers, not counted as a process not loaded
		 * yet (under TCG these took 4-8 samples of a 60 ms run; counting the armed ones
		 * failed unwind_owners on the 5.10 and 6.1 guests) */
		if ((BPF_CORE_READ((struct task_struct *)bpf_get_current_task(), flags) &
		     KP_UW_PF_EXITING) ||
		    held)
			return -1;
		kp_uw_count(KP_UW_CNT_NO_PROC);
		kp_uw_ask(tgid);
		return -1;
	}
	w->tgid = tgid;
	w->n = 0;
	w->exact = 1;
	w->max = KP_UW_MAX_DEPTH;
	py = bpf_map_lookup_elem(&kp_py_procs, &tgid);
	w->py_lo = py ? py->eval_lo : 0;
	w->py_hi = py ? py->eval_hi : 0;
	w->py_frame = 0;
	w->py_state = 0;
	s->flags = KP_CAP_F_DWARF;
	s->fp_mask[0] = 0;
	s->fp_mask[1] = 0;
	kp_uw_count(KP_UW_CNT_STACKS);
	for (i = 0; i < KP_UW_MAX_DEPTH + 1; i++) {
		__u64 at = w->exact ? w->pc : w->pc - 1;

		/* 0: not the interpreter; 1: the interpreter, no Python frame; more: some put */
		w->py_put = at - w->py_lo < w->py_hi - w->py_lo ? (__u32)kp_py_emit(0) + 1 : 0;
		if (kp_uw_step(i))
			break;
	}
	return (int)w->n;
}

#endif
