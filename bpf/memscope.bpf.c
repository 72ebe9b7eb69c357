// SPDX-License-Identifier: GPL-2.0
/*
 * memscope.bpf.c - the allocator calls of a process, and the evidence that it uses its blocks
 * (kperf-bpf memscope, user/memscope).
 *
 * Uprobes on the entries of the allocator functions (malloc, calloc, realloc, free,
 * posix_memalign, aligned_alloc, memalign, valloc, pvalloc, mmap, munmap, brk) of the library
 * that provides them, placed per process by userspace, and uretprobes on those that return a
 * block. The entry keeps its arguments in `inflight`, keyed by the kernel's thread id (never
 * the process: two threads in malloc at once must not mix their sizes), and the return
 * writes one record. An allocator call made inside another (realloc(NULL, n) calling malloc,
 * malloc calling mmap, realloc(p, 0) calling free) is the outer call's business: it only
 * counts its depth. Records go through one ring buffer; a record that cannot be reserved, a
 * call whose state cannot be kept and a stack that cannot be kept are counted.
 *
 * Sampled mode (cfg.sample_bytes): a per-CPU countdown of bytes, reset at each sample to a
 * gap drawn from an exponential distribution of mean sample_bytes (a table of its quantiles
 * indexed by a random number), so a block of s bytes is sampled with probability
 * 1 - exp(-s / mean), as jemalloc and tcmalloc do; only sampled blocks are remembered
 * (`sampled`), so only their frees are recorded. Userspace rescales.
 *
 * "Use" evidence: first-touch page faults of a recorded process (exceptions:page_fault_user;
 * faults taken inside the allocator are its own), the buffer of its read/write/pread64/
 * pwrite64/recvfrom/sendto calls (raw_syscalls:sys_enter), and kperf_mem_access(ptr, size)
 * calls. Which block they fall in is for userspace to tell.
 *
 * A launched command is a target from its exec on (sched_process_exec): before it, the
 * child is still kperf-bpf's code. Pids are the caller's namespace's (pidns.bpf.h).
 *
 * Following children (cfg.follow): a recorded process's fork adds the child to `targets`
 * and tells userspace (a FORK record). A child that shares its parent's memory (vfork,
 * CLONE_VM) already has the probes and is recorded at once. Any other child has the
 * parent's breakpoints in its copied memory but no probe of its own until userspace places
 * them, which takes longer than a child takes to reach its first malloc: so the child stops
 * itself (SIGSTOP, sent at its return from fork, before it runs any code of its own) and
 * userspace continues it (SIGCONT) once its probes are in place.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "memscope_event.h"
#include "pidns.bpf.h"
#include "stack_capture.bpf.h"

char LICENSE[] SEC("license") = "GPL";

const volatile struct kp_ms_config cfg = {};

/* flipped by userspace: the probes stay attached from open to close */
volatile __u32 enabled = 0;

/* tgid (the caller's namespace's) -> enum kp_ms_target */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024); /* resized by userspace */
	__type(key, __u32);
	__type(value, __u8);
} targets SEC(".maps");

/* a call between its entry and its return */
struct inflight {
	__u64 size;
	__u64 arg; /* realloc: the old block; posix_memalign: where the block goes */
	__u64 stack;
	__u64 callsite;
	__u32 depth; /* allocator calls made inside this one, plus one */
	__u16 func;
	__u8 record; /* 0: filtered out (min_size, not sampled): only the depth counts */
	__u8 old_sampled; /* realloc in sampled mode: the old block was a sampled one */
	__u8 first; /* the process's first call: wake the reader */
	__u8 pad[7];
};

/* kernel tid -> its call in flight (LRU: a thread killed inside malloc leaves no entry) */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384); /* resized by userspace */
	__type(key, __u32);
	__type(value, struct inflight);
} inflight SEC(".maps");

/* sampled mode: (tgid << 32 | 0) ^ ptr of each sampled live block -> 1 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536); /* resized by userspace */
	__type(key, __u64);
	__type(value, __u8);
} sampled SEC(".maps");

/* sampled mode: bytes left before the next sample, per CPU */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __s64);
} sample_left SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 16 << 20); /* resized by userspace */
} events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, KP_MS_CNT_MAX);
	__type(key, __u32);
	__type(value, __u64);
} counters SEC(".maps");

KP_CAP_STACK_MAP(stacks);

/* ---- the one place that differs by architecture ---- */

/* At a function's entry, the address it returns to: on the stack on x86_64, in the link
 * register on arm64. It is the allocation's call site, which a frame-pointer walk from the
 * entry skips (the caller's frame is not linked yet). */
static __always_inline __u64 return_address(struct pt_regs *ctx)
{
	__u64 ra = 0;

#if defined(__TARGET_ARCH_x86)
	bpf_probe_read_user(&ra, sizeof(ra), (void *)PT_REGS_SP(ctx));
#else
	ra = PT_REGS_RET(ctx);
#endif
	return ra;
}

/* A uprobe's registers are the user's: the .eh_frame unwinder starts from them (on every
 * kernel, where a program without them needs bpf_task_pt_regs, 5.15+). At an entry, the pc is
 * the function's first instruction, whose row says the return address is at the top of the
 * stack (x86_64) or in x30 (arm64). */
static __always_inline void user_hint(struct pt_regs *ctx, struct kp_uw_hint *h)
{
	h->user = 1;
	h->pad = 0;
	h->pc = PT_REGS_IP(ctx);
	h->sp = PT_REGS_SP(ctx);
	h->fp = PT_REGS_FP(ctx);
#if defined(__TARGET_ARCH_x86)
	h->lr = 0;
#else
	h->lr = PT_REGS_RET(ctx);
#endif
}

/* ---- helpers ---- */

static __always_inline void count(__u32 idx)
{
	__u64 *c = bpf_map_lookup_elem(&counters, &idx);

	if (c)
		*c += 1;
}

/* The current task as the caller names it, when it is a recorded process; 0 otherwise.
 * *first (NULL: not asked, the tracepoints): this is the process's first allocator call (the
 * reader is woken at once, so that it reads the process's mappings while it runs: a short
 * program would be gone at the next tick; the loader's reads and faults come before its
 * libraries are mapped, so they do not count). */
static __always_inline __u64 target_ids(__u8 *first)
{
	__u64 ids;
	__u32 tgid;
	__u8 *t;

	if (first)
		*first = 0;
	if (!enabled)
		return 0;
	ids = kp_pidns_current();
	tgid = ids >> 32;
	t = bpf_map_lookup_elem(&targets, &tgid);
	if (!t || (*t != KP_MS_TARGET_ON && *t != KP_MS_TARGET_SEEN))
		return 0;
	if (first && *t == KP_MS_TARGET_ON) {
		*t = KP_MS_TARGET_SEEN;
		*first = 1;
	}
	return ids;
}

static __always_inline void submit(struct kp_ms_event *e, __u8 wake)
{
	__u64 flags = BPF_RB_NO_WAKEUP;

	/* one wake-up per call would cost more than the call: the reader also polls */
	if (wake || bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) >= cfg.wakeup_bytes)
		flags = BPF_RB_FORCE_WAKEUP;
	bpf_ringbuf_submit(e, flags);
}

static __always_inline struct kp_ms_event *reserve(__u64 ids, __u16 kind, __u16 func)
{
	struct kp_ms_event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);

	if (!e) {
		count(KP_MS_CNT_DROPPED);
		return NULL;
	}
	e->ts = bpf_ktime_get_ns();
	e->tgid = ids >> 32;
	e->tid = (__u32)ids;
	e->kind = kind;
	e->func = func;
	e->ptr = 0;
	e->size = 0;
	e->old = 0;
	e->stack = 0;
	e->callsite = 0;
	e->nr = 0;
	return e;
}

/* sampled mode: is a block of <size> bytes sampled? */
static __always_inline bool sample(__u64 size)
{
	__u32 zero = 0, r;
	__s64 *left = bpf_map_lookup_elem(&sample_left, &zero);

	if (!left)
		return false;
	*left -= (__s64)size;
	if (*left > 0)
		return false;
	r = bpf_get_prandom_u32();
	*left = (__s64)cfg.exp_gap[KP_BOUND(r, KP_MS_EXP_TABLE - 1)];
	return true;
}

static __always_inline __u64 sampled_key(__u64 ids, __u64 ptr)
{
	return ((ids >> 32) << 48) ^ ptr;
}

/* Entry of a function that returns a block (or mmap): keep its arguments. <size> is what it
 * asks for, <arg> the old block (realloc) or the out-pointer (posix_memalign). */
static __always_inline int enter(struct pt_regs *ctx, __u16 func, __u64 size, __u64 arg)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct inflight *cur, st = {};
	__u64 ids;

	cur = bpf_map_lookup_elem(&inflight, &tid);
	if (cur) {
		cur->depth++;
		return 0;
	}
	ids = target_ids(&st.first);
	if (!ids)
		return 0;
	st.depth = 1;
	st.func = func;
	st.size = size;
	st.arg = arg;
	st.record = size >= cfg.min_size;
	if (cfg.sample_bytes) {
		if (func == KP_MS_REALLOC && arg) {
			__u64 key = sampled_key(ids, arg);

			st.old_sampled = bpf_map_lookup_elem(&sampled, &key) != NULL;
		}
		if (st.record)
			st.record = sample(size);
	}
	if (st.record) {
		st.callsite = return_address(ctx);
		if (cfg.stacks) {
			struct kp_uw_hint hint;

			user_hint(ctx, &hint);
			st.stack = kp_capture_stack_regs(ctx, true, &hint, &stacks, &counters,
							 KP_MS_CNT_CAP);
		}
	}
	if (bpf_map_update_elem(&inflight, &tid, &st, BPF_ANY))
		count(KP_MS_CNT_INFLIGHT_FULL);
	return 0;
}

/* Return of such a function with <ret>: one record, when the call is the outermost. */
static __always_inline int leave(struct pt_regs *ctx, __u64 ret)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct inflight *st = bpf_map_lookup_elem(&inflight, &tid);
	struct kp_ms_event *e;
	__u64 ids, ptr = ret, old = 0, key;
	__u8 one = 1;
	__u16 kind = KP_MS_EV_ALLOC;

	if (!st)
		return 0;
	if (st->depth > 1) {
		st->depth--;
		return 0;
	}
	ids = kp_pidns_current();
	if (st->func == KP_MS_POSIX_MEMALIGN) {
		/* it returns 0 or an errno; the block is in *memptr */
		ptr = 0;
		if (ret == 0 && st->arg)
			bpf_probe_read_user(&ptr, sizeof(ptr), (void *)st->arg);
	} else if (st->func == KP_MS_MMAP) {
		if ((__s64)ret < 0 && (__s64)ret > -4096)
			ptr = 0; /* MAP_FAILED */
	}
	if (st->func == KP_MS_REALLOC) {
		kind = KP_MS_EV_REALLOC;
		/* realloc(p, 0) frees p and returns NULL (glibc); a failed realloc(p, n > 0)
		 * leaves p alone */
		if (st->arg && (ptr || st->size == 0))
			old = st->arg;
		if (cfg.sample_bytes && old) {
			key = sampled_key(ids, old);
			if (st->old_sampled)
				bpf_map_delete_elem(&sampled, &key);
			else
				old = 0;
		}
		if (!st->record)
			ptr = 0;
		if (!ptr && !old)
			goto out;
	} else if (!st->record || !ptr) {
		goto out;
	}
	if (cfg.sample_bytes && ptr) {
		key = sampled_key(ids, ptr);
		if (bpf_map_update_elem(&sampled, &key, &one, BPF_ANY))
			count(KP_MS_CNT_SAMPLED_FULL);
	}
	e = reserve(ids, kind, st->func);
	if (!e)
		goto out;
	e->ptr = ptr;
	e->size = ptr ? st->size : 0;
	e->old = old;
	e->stack = ptr ? st->stack : 0;
	e->callsite = st->callsite;
	submit(e, st->first);
out:
	bpf_map_delete_elem(&inflight, &tid);
	return 0;
}

/* an entry-only call (free, munmap, brk, kperf_mem_access): recorded unless inside the
 * allocator */
static __always_inline int event_now(struct pt_regs *ctx, __u16 kind, __u16 func, __u64 ptr,
				     __u64 size)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct kp_ms_event *e;
	__u64 ids, key;
	__u8 first;

	if (bpf_map_lookup_elem(&inflight, &tid))
		return 0;
	ids = target_ids(&first);
	if (!ids)
		return 0;
	if (cfg.sample_bytes && func == KP_MS_FREE) {
		key = sampled_key(ids, ptr);
		if (!bpf_map_lookup_elem(&sampled, &key))
			return 0;
		bpf_map_delete_elem(&sampled, &key);
	}
	e = reserve(ids, kind, func);
	if (!e)
		return 0;
	e->ptr = ptr;
	e->size = size;
	e->callsite = return_address(ctx);
	submit(e, first);
	return 0;
}

/* ---- the allocator ---- */

SEC("uprobe")
int BPF_KPROBE(kp_ms_malloc, __u64 size)
{
	return enter(ctx, KP_MS_MALLOC, size, 0);
}

SEC("uprobe")
int BPF_KPROBE(kp_ms_calloc, __u64 n, __u64 size)
{
	return enter(ctx, KP_MS_CALLOC, n * size, 0);
}

SEC("uprobe")
int BPF_KPROBE(kp_ms_realloc, __u64 old, __u64 size)
{
	return enter(ctx, KP_MS_REALLOC, size, old);
}

SEC("uprobe")
int BPF_KPROBE(kp_ms_posix_memalign, __u64 memptr, __u64 align, __u64 size)
{
	return enter(ctx, KP_MS_POSIX_MEMALIGN, size, memptr);
}

SEC("uprobe")
int BPF_KPROBE(kp_ms_aligned_alloc, __u64 align, __u64 size)
{
	return enter(ctx, KP_MS_ALIGNED_ALLOC, size, 0);
}

SEC("uprobe")
int BPF_KPROBE(kp_ms_memalign, __u64 align, __u64 size)
{
	return enter(ctx, KP_MS_MEMALIGN, size, 0);
}

SEC("uprobe")
int BPF_KPROBE(kp_ms_valloc, __u64 size)
{
	return enter(ctx, KP_MS_VALLOC, size, 0);
}

SEC("uprobe")
int BPF_KPROBE(kp_ms_pvalloc, __u64 size)
{
	/* rounded up to whole pages (4 KiB: the size recorded is what was asked for, rounded
	 * as glibc does on the machines kperf-bpf runs on) */
	return enter(ctx, KP_MS_PVALLOC, (size + 4095) & ~4095ULL, 0);
}

SEC("uprobe")
int BPF_KPROBE(kp_ms_mmap, __u64 addr, __u64 len)
{
	return enter(ctx, KP_MS_MMAP, len, 0);
}

SEC("uretprobe")
int BPF_KRETPROBE(kp_ms_ret, __u64 ret)
{
	return leave(ctx, ret);
}

SEC("uprobe")
int BPF_KPROBE(kp_ms_free, __u64 ptr)
{
	if (!ptr)
		return 0;
	return event_now(ctx, KP_MS_EV_FREE, KP_MS_FREE, ptr, 0);
}

SEC("uprobe")
int BPF_KPROBE(kp_ms_munmap, __u64 addr, __u64 len)
{
	return event_now(ctx, KP_MS_EV_FREE, KP_MS_MUNMAP, addr, len);
}

SEC("uprobe")
int BPF_KPROBE(kp_ms_brk, __u64 addr)
{
	return event_now(ctx, KP_MS_EV_BRK, KP_MS_BRK, 0, addr);
}

SEC("uprobe")
int BPF_KPROBE(kp_ms_access, __u64 ptr, __u64 size)
{
	return event_now(ctx, KP_MS_EV_MARK, KP_MS_ACCESS_MARK, ptr, size);
}

/* ---- use evidence ---- */

/* exceptions:page_fault_user's record, as its format has it on every kernel (its BTF type is
 * trace_event_raw_x86_exceptions before 5.16, trace_event_raw_exceptions since: no CO-RE) */
struct kp_ms_fault_rec {
	__u64 common; /* type, flags, preempt count, pid */
	__u64 address;
	__u64 ip;
	__u64 error_code;
};

SEC("tracepoint/exceptions/page_fault_user")
int kp_ms_fault(struct kp_ms_fault_rec *ctx)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct kp_ms_event *e;
	__u64 ids;

	ids = target_ids(NULL);
	if (!ids || bpf_map_lookup_elem(&inflight, &tid))
		return 0;
	e = reserve(ids, KP_MS_EV_FAULT, 0);
	if (!e)
		return 0;
	e->ptr = ctx->address;
	e->nr = (__u32)ctx->error_code;
	submit(e, 0);
	return 0;
}

SEC("tracepoint/raw_syscalls/sys_enter")
int kp_ms_sys_enter(struct trace_event_raw_sys_enter *ctx)
{
	struct kp_ms_event *e;
	long nr = ctx->id;
	__u64 ids;
	int i;
	bool buf = false;

	for (i = 0; i < 8; i++)
		if (cfg.buf_syscalls[i] == nr && nr >= 0)
			buf = true;
	if (!buf)
		return 0;
	ids = target_ids(NULL);
	if (!ids)
		return 0;
	e = reserve(ids, KP_MS_EV_SYSBUF, 0);
	if (!e)
		return 0;
	e->nr = (__u32)nr;
	e->ptr = ctx->args[1];
	e->size = ctx->args[2];
	submit(e, 0);
	return 0;
}

/* ---- processes ---- */

SEC("tracepoint/sched/sched_process_exec")
int kp_ms_exec(void *ctx)
{
	__u32 tgid = kp_pidns_current() >> 32;
	__u8 on = KP_MS_TARGET_ON, *t = bpf_map_lookup_elem(&targets, &tgid);

	if (t && *t == KP_MS_TARGET_EXEC)
		bpf_map_update_elem(&targets, &tgid, &on, BPF_EXIST);
	kp_uw_exec_reset();
	return 0;
}

/* ---- children (cfg.follow) ---- */

#define KP_SIGSTOP 19

SEC("raw_tp/sched_process_fork")
int kp_ms_fork(struct bpf_raw_tracepoint_args *ctx)
{
	struct task_struct *parent = (void *)ctx->args[0], *child = (void *)ctx->args[1];
	__u32 ptgid = kp_pidns_current() >> 32, ctgid;
	__u8 state, *t = bpf_map_lookup_elem(&targets, &ptgid);
	struct kp_ms_event *e;
	bool shared;

	if (!t || (*t != KP_MS_TARGET_ON && *t != KP_MS_TARGET_SEEN))
		return 0;
	/* a new thread of the process: already recorded */
	if (BPF_CORE_READ(child, pid) != BPF_CORE_READ(child, tgid))
		return 0;
	ctgid = kp_pidns_task_tgid(child);
	if (ctgid == KP_PID_OUTSIDE || !ctgid)
		return 0;
	kp_uw_hold_fork(ptgid, ctgid); /* a held command's child: held at its exec too */
	shared = BPF_CORE_READ(child, mm) == BPF_CORE_READ(parent, mm);
	state = shared ? KP_MS_TARGET_ON : KP_MS_TARGET_FORKED;
	if (bpf_map_update_elem(&targets, &ctgid, &state, BPF_ANY))
		return 0;
	e = reserve(((__u64)ctgid << 32) | ctgid, KP_MS_EV_FORK, 0);
	if (!e) {
		/* userspace will never continue it: do not stop it */
		if (!shared) {
			state = KP_MS_TARGET_ON;
			bpf_map_update_elem(&targets, &ctgid, &state, BPF_ANY);
			count(KP_MS_CNT_NOT_STOPPED);
		}
		return 0;
	}
	e->ptr = ptgid;
	e->nr = !shared;
	submit(e, 1);
	return 0;
}

/* A followed child's return from fork, its first moment in the kernel before any code of
 * its own (x86_64's ret_from_fork leaves through the syscall exit, tracepoint included;
 * arm64's does not: there it stops at its first system call's end, after what it did
 * before; kprobes and fexit, which would catch it earlier, are not on every kernel): it
 * stops until its probes are placed. */
SEC("tracepoint/raw_syscalls/sys_exit")
int kp_ms_child_start(void *ctx)
{
	__u32 tgid = kp_pidns_current() >> 32;
	__u8 state = KP_MS_TARGET_STOPPED, *t = bpf_map_lookup_elem(&targets, &tgid);

	if (!t || *t != KP_MS_TARGET_FORKED)
		return 0;
	/* not stopped: recorded from now on, and userspace counts it as having run unprobed */
	if (bpf_send_signal(KP_SIGSTOP))
		state = KP_MS_TARGET_ON;
	bpf_map_update_elem(&targets, &tgid, &state, BPF_EXIST);
	return 0;
}

/* A thread's exit drops its call in flight; the process's (its last thread's) drops it from
 * `targets`: a followed child that exited must neither hold a slot of the map (a busy parent
 * would fill it, and its later children would go unfollowed) nor be recorded as whatever
 * process is given its pid next. */
SEC("tracepoint/sched/sched_process_exit")
int kp_ms_exit(void *ctx)
{
	struct task_struct *p = (void *)bpf_get_current_task();
	__u32 tid = (__u32)bpf_get_current_pid_tgid(), tgid;

	bpf_map_delete_elem(&inflight, &tid);
	/* the process is gone when its last thread exits (signal->live already dropped) */
	if (BPF_CORE_READ(p, signal, live.counter) != 0)
		return 0;
	tgid = kp_pidns_current() >> 32;
	bpf_map_delete_elem(&targets, &tgid);
	kp_uw_exit_reset(tgid);
	return 0;
}
