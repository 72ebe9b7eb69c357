/*
 * stack_capture.h - stacks kept by their frames, as the programs that aggregate by stack
 * store them (off-CPU now, syscalls next): a 64-bit id, a hash of the frames, keys the frames
 * in a hash map, so two different stacks never share an entry (a stack-map bucket would
 * silently take the second one or drop it). Shared by bpf/stack_capture.bpf.h and the
 * userspace owners of those maps. Fixed-width types only.
 */
#ifndef KPERF_BPF_STACK_CAPTURE_H
#define KPERF_BPF_STACK_CAPTURE_H

#define KP_CAP_MAX_FRAMES 127 /* the kernel's default perf_event_max_stack */
#define KP_CAP_NONE 0ULL /* no stack: none asked, none there, or not kept (counted) */

/* the value of a stack map entry: n frames, leaf first (one slot more than the frames, so
 * that a power-of-two mask bounds an index into it for the verifier) */
struct kp_cap_stack {
	__u32 n;
	__u32 flags; /* user stacks: KP_CAP_F_* (unwind_table.h) */
	__u64 fp_mask[2]; /* user stacks: bit i, frame i was found by frame pointers */
	__u64 ip[KP_CAP_MAX_FRAMES + 1];
};

/* why a stack was not kept: the including program counts these at its own base index */
enum kp_cap_fail {
	KP_CAP_FAIL_FULL = 0, /* the stack map is full */
	KP_CAP_FAIL_CLASH = 1, /* two different stacks had the same id twice over */
	KP_CAP_FAIL_READ = 2, /* the stack could not be read (not a missing user stack) */
	KP_CAP_FAILS
};

#endif
