/*
 * bounds.h - array indexes every verifier accepts. Older verifiers (5.10, 6.1) do not carry a
 * bound checked on one register over to a copy of it, and clang freely checks a copy and
 * indexes with the original, or turns a mask into something the verifier cannot bound. So an
 * index into a map value or a global array is masked by KP_BOUND, in inline assembly, in the
 * register that then indexes: clang can neither drop the mask nor move it, and the array
 * has a power-of-two size so the mask is its bound.
 */
#ifndef KPERF_BPF_BOUNDS_H
#define KPERF_BPF_BOUNDS_H

/* <idx> & <mask> (mask = 2^n - 1, a constant), as the verifier will see it */
#define KP_BOUND(idx, mask)                                              \
	({                                                               \
		__u64 kp_bound_v = (__u64)(idx);                         \
		asm volatile("%0 &= %1" : "+r"(kp_bound_v) : "i"(mask)); \
		kp_bound_v;                                              \
	})

#endif
