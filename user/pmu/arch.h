/*
 * arch.h - what differs by architecture in user/pmu.
 *
 * KP_ARCH_X86: libkperf refuses its arm64-only interfaces there (PmuOpenWithHWMetric).
 *
 * What reading a counter from user space takes on each architecture (uaccess.c):
 * the instruction that reads hardware counter <idx> (the perf mmap page's index - 1), the
 * one that reads the time base the page's time_* fields convert, the config1 bit that asks
 * the PMU driver for user access, and where the system says whether it is allowed.
 *
 *   x86_64   rdpmc / rdtsc; allowed unless <sysfs>/bus/event_source/devices/cpu/rdpmc
 *            (cpu_core/rdpmc on hybrid parts) is 0; no per-event request
 *   arm64    mrs pmevcntr<n>_el0 (pmccntr_el0 for index 31) / cntvct_el0; the event asks
 *            with config1 bit 1 (the armv8_pmuv3 "rdpmc" format term), and the sysctl
 *            kernel.perf_user_access must be 1 (Linux 6.6 and later)
 */
#ifndef KPERF_PMU_ARCH_H
#define KPERF_PMU_ARCH_H

#include <stdint.h>

enum kp_ua_kind { KP_UA_NONE, KP_UA_X86, KP_UA_ARM64 };

#if defined(__x86_64__) || defined(__i386__)
#define KP_ARCH_X86 1
#else
#define KP_ARCH_X86 0
#endif

#if defined(__x86_64__)

#define KP_UA_CONFIG1 0ULL
#define KP_UA_KIND KP_UA_X86

static inline uint64_t kp_ua_arch_pmc(unsigned idx)
{
	uint32_t lo, hi;

	__asm__ volatile("rdpmc" : "=a"(lo), "=d"(hi) : "c"(idx));
	return (uint64_t)hi << 32 | lo;
}

static inline uint64_t kp_ua_arch_ts(void)
{
	uint32_t lo, hi;

	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	return (uint64_t)hi << 32 | lo;
}

#elif defined(__aarch64__)

#define KP_UA_CONFIG1 0x2ULL
#define KP_UA_KIND KP_UA_ARM64

#define KP_UA_EVCNTR(n)                                                   \
	case n:                                                           \
		__asm__ volatile("mrs %0, pmevcntr" #n "_el0" : "=r"(v)); \
		break

static inline uint64_t kp_ua_arch_pmc(unsigned idx)
{
	uint64_t v = 0;

	/* the counter is named by the instruction, so each index has its own */
	switch (idx) {
		KP_UA_EVCNTR(0);
		KP_UA_EVCNTR(1);
		KP_UA_EVCNTR(2);
		KP_UA_EVCNTR(3);
		KP_UA_EVCNTR(4);
		KP_UA_EVCNTR(5);
		KP_UA_EVCNTR(6);
		KP_UA_EVCNTR(7);
		KP_UA_EVCNTR(8);
		KP_UA_EVCNTR(9);
		KP_UA_EVCNTR(10);
		KP_UA_EVCNTR(11);
		KP_UA_EVCNTR(12);
		KP_UA_EVCNTR(13);
		KP_UA_EVCNTR(14);
		KP_UA_EVCNTR(15);
		KP_UA_EVCNTR(16);
		KP_UA_EVCNTR(17);
		KP_UA_EVCNTR(18);
		KP_UA_EVCNTR(19);
		KP_UA_EVCNTR(20);
		KP_UA_EVCNTR(21);
		KP_UA_EVCNTR(22);
		KP_UA_EVCNTR(23);
		KP_UA_EVCNTR(24);
		KP_UA_EVCNTR(25);
		KP_UA_EVCNTR(26);
		KP_UA_EVCNTR(27);
		KP_UA_EVCNTR(28);
		KP_UA_EVCNTR(29);
		KP_UA_EVCNTR(30);
	case 31:
		__asm__ volatile("mrs %0, pmccntr_el0" : "=r"(v));
		break;
	default:
		break;
	}
	return v;
}

static inline uint64_t kp_ua_arch_ts(void)
{
	uint64_t v;

	__asm__ volatile("mrs %0, cntvct_el0" : "=r"(v));
	return v;
}

#else

#define KP_UA_CONFIG1 0ULL
#define KP_UA_KIND KP_UA_NONE /* user access is refused */

static inline uint64_t kp_ua_arch_pmc(unsigned idx)
{
	(void)idx;
	return 0;
}

static inline uint64_t kp_ua_arch_ts(void)
{
	return 0;
}

#endif

#endif
