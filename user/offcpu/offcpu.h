/*
 * offcpu.h - the off-CPU module: time threads spend off the CPU (blocked, or waiting to run),
 * summed in the kernel per (process, thread, kernel stack, user stack) by offcpu.bpf.c,
 * whose only owner is offcpu.c. Used by blockedSample / KperfPmuOpts.offCpu (user/pmu) and
 * by whoever else needs blocked time (timelines).
 *
 * The life of a collection: open (load; follow forks from now on), enable (attach the
 * sched_switch program), drain (the blocks that ended since the last drain), disable (detach,
 * and close the blocks still open: they end now), close. In slices mode (on_slice set), each
 * block is a record of its own read with kp_offcpu_read_slices instead of drained sums. Every function returns 0 or a
 * negative errno with the error recorded (kp_fail).
 */
#ifndef KPERF_OFFCPU_H
#define KPERF_OFFCPU_H

#include <stdbool.h>
#include <stdint.h>

#define KP_OFFCPU_COMM 16

struct kp_offcpu;

/* one slice a thread spent off the cpu (slices mode) */
struct kp_offcpu_slice {
	uint32_t tgid, tid;
	uint64_t start_ns, end_ns; /* CLOCK_MONOTONIC */
	uint64_t kstack, ustack; /* stack ids (kp_offcpu_stack), 0 when none */
	bool preempted; /* it left the cpu runnable (waiting for a cpu, not for something) */
	bool unfinished; /* still off the cpu when the collection ended: end_ns is that end */
	char comm[KP_OFFCPU_COMM + 1];
};

/* 0 to go on, < 0 to stop (that value is returned) */
typedef int (*kp_offcpu_slice_fn)(void *ctx, const struct kp_offcpu_slice *s);

struct kp_uw_owner;

struct kp_offcpu_opts {
	const int *pids; /* processes (tgids) followed with the processes they fork from the
			  * open on; NULL: every process but the caller */
	int npids;
	bool from_exec; /* the pids are followed from their next exec on */
	bool kernel_stack; /* take the kernel stack at switch-out */
	bool user_stack; /* take the user stack at switch-out */
	bool fp_stacks; /* user stacks by frame pointers only, not from .eh_frame tables */
	/* CPython frames in the user stacks (from tables, on kernels whose verifier takes the
	 * reader: kp_py_kernel_reads), as sampling's KPERF_PY_FRAMES_ON; <python_keep_interp>:
	 * the interpreter's own frames kept too (KPERF_PY_FRAMES_KEEP_INTERP) */
	bool python_frames, python_keep_interp;
	/* the unwinder of another object (sampling's, with --wall) that holds the launched
	 * command: its kp_uw_hold map is shared (one stop, seen as such by the switches here) and
	 * this object's tables are loaded by it before the command goes on. NULL: held here. */
	struct kp_uw_owner *hold_with;
	bool blocked_only; /* only the time waiting for something, not for a cpu (preempted) */
	unsigned entries; /* distinct (thread, stack) pairs between two drains, 0: 16384 */
	unsigned stacks; /* distinct stacks of the collection, 0: 8192 */
	/* slices mode (timelines): every block is a slice of its own, handed to <on_slice>
	 * (by kp_offcpu_read_slices, and by kp_offcpu_disable for those still open) instead of
	 * being summed; blocked_only leaves the preemptions out, else they are slices too */
	kp_offcpu_slice_fn on_slice;
	void *slice_ctx;
	uint64_t min_slice_ns; /* shorter slices are counted (slices_short) and left out */
	unsigned ring_kb; /* the slices' ring buffer in KiB (a power of two is used), 0: 8192 */
};

/* time off the cpu of one (thread, stacks) since the last drain */
struct kp_offcpu_block {
	uint32_t tgid, tid;
	uint64_t kstack, ustack; /* stack ids (kp_offcpu_stack), 0 when none */
	uint64_t count; /* blocks that ended (on_cpu: slices) */
	uint64_t total_ns;
	bool on_cpu; /* not a block: the thread's time on the cpu (unless blocked_only) */
	char comm[KP_OFFCPU_COMM + 1];
};

/* 0 to go on, < 0 to stop (that value is returned) */
typedef int (*kp_offcpu_fn)(void *ctx, const struct kp_offcpu_block *b);

struct kp_offcpu_stats {
	uint64_t map_full; /* blocks not counted: the aggregation map was full */
	uint64_t threads_full; /* threads not followed: the thread map was full */
	uint64_t stack_full; /* stacks not kept: the stack map was full */
	uint64_t stack_clash; /* stacks not kept: two stacks had the same ids */
	uint64_t stack_read; /* stacks the kernel could not take */
	uint64_t slices_lost; /* slices not recorded: the ring buffer was full */
	uint64_t slices_short; /* slices shorter than min_slice_ns, left out */
	bool raw_tp; /* the raw tracepoint programs are in use (no kernel BTF) */
};

/* Load and start following the forks of the processes. */
int kp_offcpu_open(const struct kp_offcpu_opts *o, struct kp_offcpu **out);
int kp_offcpu_enable(struct kp_offcpu *c);
/* Detach; the blocks (and slices on the cpu) still open end now and go to <fn> (may be NULL:
 * forgotten). */
int kp_offcpu_disable(struct kp_offcpu *c, kp_offcpu_fn fn, void *ctx);
/* The blocks that ended since the last drain go to <fn>, and are forgotten here. */
int kp_offcpu_drain(struct kp_offcpu *c, kp_offcpu_fn fn, void *ctx);
/* Slices mode: the slices recorded since the last read go to the on_slice of the open; their
 * number, or < 0. */
int kp_offcpu_read_slices(struct kp_offcpu *c);
/* The frames of stack <id> (a kernel stack: <kernel>), leaf first, into <ips> (at most <max>);
 * their number, 0 when the stack is unknown. */
unsigned kp_offcpu_stack(struct kp_offcpu *c, uint64_t id, bool kernel, uint64_t *ips,
			 unsigned max);
void kp_offcpu_get_stats(struct kp_offcpu *c, struct kp_offcpu_stats *s);
/* the .eh_frame unwinder's figures, added to <s> (nothing with fp_stacks) */
struct kp_uw_load_stats;
void kp_offcpu_unwind_stats(struct kp_offcpu *c, struct kp_uw_load_stats *s);
void kp_offcpu_close(struct kp_offcpu *c);

#endif
