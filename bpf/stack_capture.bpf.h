/*
 * stack_capture.bpf.h - the one place where the programs that aggregate by stack (off-CPU,
 * syscall stacks) take a stack. Today a stack is what bpf_get_stack gives, as sampling does:
 * the kernel's unwinder for kernel stacks, frame pointers for user stacks. When the
 * .eh_frame unwinder (bpf/stack.bpf.h, user/unwind) lands, kp_capture_stack is the function
 * to switch; its callers keep their keys (a 64-bit stack id) and their maps.
 *
 *   KP_CAP_STACK_MAP(name);                                   a map of stacks by id
 *   id = kp_capture_stack(ctx, user, &map, &counters, base);  KP_CAP_NONE when none
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
 * id, or KP_CAP_NONE (a task without user memory has no user stack: not a failure). */
static __always_inline __u64 kp_capture_stack(void *ctx, bool user, void *stacks, void *counters,
					      __u32 base)
{
	struct kp_cap_stack *s, *v;
	__u32 zero = 0, n, i, attempt;
	__u64 h = 0, id;
	long bytes;

	s = bpf_map_lookup_elem(&kp_cap_scratch, &zero);
	if (!s)
		return KP_CAP_NONE;
	bytes = bpf_get_stack(ctx, s->ip, KP_CAP_MAX_FRAMES * sizeof(__u64),
			      user ? BPF_F_USER_STACK : 0);
	if (bytes <= 0) {
		if (bytes < 0 && bytes != -KP_CAP_EFAULT)
			kp_cap_count(counters, base + KP_CAP_FAIL_READ);
		return KP_CAP_NONE;
	}
	n = (__u32)bytes / sizeof(__u64);
	s->n = n;
	for (i = 0; i < KP_CAP_MAX_FRAMES; i++) {
		if (i >= n)
			break;
		h = kp_cap_mix(h, s->ip[KP_BOUND(i, KP_CAP_MAX_FRAMES)]);
	}
	id = h | 1; /* never KP_CAP_NONE */
	for (attempt = 0; attempt < 2; attempt++) {
		bool same = true;

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
		if (v->n == n) {
			for (i = 0; i < KP_CAP_MAX_FRAMES; i++) {
				if (i >= n)
					break;
				if (v->ip[KP_BOUND(i, KP_CAP_MAX_FRAMES)] !=
				    s->ip[KP_BOUND(i, KP_CAP_MAX_FRAMES)]) {
					same = false;
					break;
				}
			}
			if (same)
				return id;
		}
		id = kp_cap_mix(id, 0x5bd1e995) | 1;
	}
	kp_cap_count(counters, base + KP_CAP_FAIL_CLASH);
	return KP_CAP_NONE;
}

#endif
