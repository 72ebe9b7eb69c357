/*
 * stack_capture.bpf.h - the one place where the programs that aggregate by stack (sampling,
 * off-CPU, syscall stacks) take a stack. A kernel stack is what bpf_get_stack gives (the
 * kernel's unwinder). A user stack is unwound from the .eh_frame tables (unwind.bpf.h,
 * user/unwind) when the owner turned kp_uw_on on and loaded the process's tables, with frame
 * pointers where a mapping has none; else, or where the unwinder has no registers to start
 * from, it is bpf_get_stack's (frame pointers only).
 *
 *   KP_CAP_STACK_MAP(name);                                   a map of stacks by id
 *   id = kp_capture_stack(ctx, user, &map, &counters, base);  KP_CAP_NONE when none
 *   id = kp_capture_stack_regs(ctx, user, regs, &map, &counters, base);
 *        the same, <regs> the registers the program was given (a perf event's:
 *        KP_UW_HINT_OF), or NULL
 *
 * The id is a hash of the frames. A stack already stored under its id is compared frame by
 * frame: a different one is tried under a second id, and counted as a clash when that one is
 * taken too, so a stack is never reported under another's frames. A failure is counted in
 * the caller's per-CPU <counters> at <base> + enum kp_cap_fail.
 */
#ifndef KPERF_BPF_STACK_CAPTURE_BPF_H
#define KPERF_BPF_STACK_CAPTURE_BPF_H

#include "stack_capture.h"
#include "bounds.h"

#define KP_CAP_EFAULT 14

/* room to take a stack in before it is stored (too big for the BPF stack) */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct kp_cap_stack);
} kp_cap_scratch SEC(".maps");

#include "unwind.bpf.h" /* after kp_cap_scratch, which it fills */

/* preallocated: the programs run in the scheduler, where allocating could wake kswapd */
#define KP_CAP_STACK_MAP(name)                           \
	struct {                                         \
		__uint(type, BPF_MAP_TYPE_HASH);         \
		__uint(max_entries, 8192); /* resized */ \
		__type(key, __u64);                      \
		__type(value, struct kp_cap_stack);      \
	} name SEC(".maps")

static __always_inline __u64 kp_cap_mix(__u64 h, __u64 v)
{
	h ^= v;
	h *= 0x9e3779b97f4a7c15ULL;
	return h ^ (h >> 29);
}

static __always_inline void kp_cap_count(void *counters, __u32 idx)
{
	__u64 *c = bpf_map_lookup_elem(counters, &idx);

	if (c)
		*c += 1;
}

/* The kernel stack (<user> false) or the user stack of the context, stored in <stacks>; its
 * id, or KP_CAP_NONE (a task without user memory has no user stack: not a failure). <regs>:
 * the registers the program was handed (a perf event's, KP_UW_HINT_OF), NULL when none. */
static __always_inline __u64 kp_capture_stack_regs(void *ctx, bool user,
						   const struct kp_uw_hint *regs, void *stacks,
						   void *counters, __u32 base)
{
	struct kp_cap_stack *s, *v;
	__u32 zero = 0, n, i, attempt;
	__u64 h = 0, id;
	long bytes;
	int got = -1;

	s = bpf_map_lookup_elem(&kp_cap_scratch, &zero);
	if (!s)
		return KP_CAP_NONE;
	s->flags = 0;
	s->fp_mask[0] = 0;
	s->fp_mask[1] = 0;
	if (user && kp_uw_on)
		got = kp_uw_unwind(regs, s);
	if (got >= 0) {
		bytes = (long)got * sizeof(__u64);
	} else {
		bytes = bpf_get_stack(ctx, s->ip, KP_CAP_MAX_FRAMES * sizeof(__u64),
				      user ? BPF_F_USER_STACK : 0);
		s->flags = 0;
		s->fp_mask[0] = 0;
		s->fp_mask[1] = 0;
	}
	if (bytes <= 0) {
		if (bytes < 0 && bytes != -KP_CAP_EFAULT)
			kp_cap_count(counters, base + KP_CAP_FAIL_READ);
		return KP_CAP_NONE;
	}
	n = (__u32)bytes / sizeof(__u64);
	s->n = n;
	/* the slots past the stack zeroed, then every slot hashed and compared without a branch
	 * that leaves the loop: the verifier walks each loop once, not once per length */
	for (i = 0; i < KP_CAP_MAX_FRAMES + 1; i++)
		if (i >= n)
			s->ip[KP_BOUND(i, KP_CAP_MAX_FRAMES)] = 0;
	for (i = 0; i < KP_CAP_MAX_FRAMES + 1; i++)
		h = kp_cap_mix(h, s->ip[KP_BOUND(i, KP_CAP_MAX_FRAMES)]);
	id = h | 1; /* never KP_CAP_NONE */
	for (attempt = 0; attempt < 2; attempt++) {
		__u64 diff = 0;

		v = bpf_map_lookup_elem(stacks, &id);
		if (!v) {
			if (bpf_map_update_elem(stacks, &id, s, BPF_NOEXIST) == 0)
				return id;
			v = bpf_map_lookup_elem(stacks, &id); /* stored by another cpu meanwhile */
			if (!v) {
				kp_cap_count(counters, base + KP_CAP_FAIL_FULL);
				return KP_CAP_NONE;
			}
		}
		for (i = 0; i < KP_CAP_MAX_FRAMES + 1; i++)
			diff |= v->ip[KP_BOUND(i, KP_CAP_MAX_FRAMES)] ^
				s->ip[KP_BOUND(i, KP_CAP_MAX_FRAMES)];
		if (!diff && v->n == n)
			return id;
		id = kp_cap_mix(id, 0x5bd1e995) | 1;
	}
	kp_cap_count(counters, base + KP_CAP_FAIL_CLASH);
	return KP_CAP_NONE;
}

static __always_inline __u64 kp_capture_stack(void *ctx, bool user, void *stacks, void *counters,
					      __u32 base)
{
	return kp_capture_stack_regs(ctx, user, NULL, stacks, counters, base);
}

#endif
