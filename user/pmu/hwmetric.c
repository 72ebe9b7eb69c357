/*
 * hwmetric.c - PmuOpenWithHWMetric and PmuAttr.enableHwMetric: HiSilicon's hardware
 * metric sampling, which needs a kernel built with CONFIG_HISILICON_HW_METRIC (openEuler
 * 6.6.0-108 and later) on a Kunpeng. libkperf refuses PmuOpenWithHWMetric on x86 outright.
 *
 * Each bit of PmuHwMetricAttr.metric becomes one group of two events (the table: libkperf's
 * names), in the order of the bits: the i-th metric asked for takes basePeriodList[i] as the
 * sample period of its first event and basePeriodList[i] * thresholdList[i] as the period of
 * its second. The task is a SAMPLING PmuOpen of those events with enableHwMetric, which asks
 * the driver for metric sampling (config2 bit 0).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>

#include "core/core.h"
#include "kperf/pcerrc.h"
#include "pmu.h"
#include "arch.h"

static const struct {
	unsigned long metric;
	const char *evt[2];
} table[] = {
	{ PMU_HWM_CPI, { "armv8_pmuv3_0/inst_retired/", "armv8_pmuv3_0/cpu_cycles/" } },
	{ PMU_HWM_CACHE_MISS, { "cache-references", "cache-misses" } },
	{ PMU_HWM_L3_CACHE_MISS, { "LLC-loads", "LLC-load-misses" } },
	{ PMU_HWM_L2D_CACHE_MISS,
	  { "armv8_pmuv3_0/l2d_cache/", "armv8_pmuv3_0/l2d_cache_refill/" } },
	{ PMU_HWM_L1_DCACHE_MISS, { "L1-dcache-loads", "L1-dcache-load-misses" } },
	{ PMU_HWM_L1_ICACHE_LOAD_MISS, { "L1-icache-loads", "L1-icache-load-misses" } },
	{ PMU_HWM_DTLB_LOAD_MISS, { "dTLB-loads", "dTLB-load-misses" } },
	{ PMU_HWM_ITLD_LOAD_MISS, { "iTLB-loads", "iTLB-load-misses" } },
	{ PMU_HWM_BRACH_LOADS_MISS, { "branch-loads", "branch-load-misses" } },
};

#define KCONFIG_OPTION "CONFIG_HISILICON_HW_METRIC=y"

int kp_hwmetric_events(const struct PmuHwMetricAttr *a, const char **evts,
		       struct EvtAttr *evt_attrs, unsigned max)
{
	unsigned long known = 0;
	unsigned n = 0, i, m = 0;

	if (!a)
		return kp_fail(LIBPERF_ERR_INVALID_HWMETRIC_ATTR, -EINVAL, "hwMetricAttr is NULL");
	if (!a->thresholdList)
		return kp_fail(LIBPERF_ERR_INVALID_HWMETRIC_ATTR, -EINVAL,
			       "thresholdList is NULL: give one threshold per metric");
	if (!a->basePeriodList)
		return kp_fail(LIBPERF_ERR_INVALID_HWMETRIC_ATTR, -EINVAL,
			       "basePeriodList is NULL: give one base period per metric");
	for (i = 0; i < KP_ARRAY_SIZE(table); i++)
		known |= table[i].metric;
	if (a->metric & ~known)
		return kp_fail(LIBPERF_ERR_INVALID_HWMETRIC_ATTR, -EINVAL,
			       "metric 0x%lx has bits that are no PmuHwMetric (0x%lx)", a->metric,
			       a->metric & ~known);
	if (!a->metric)
		return kp_fail(LIBPERF_ERR_INVALID_HWMETRIC_ATTR, -EINVAL,
			       "metric is 0: name at least one PmuHwMetric");
	for (i = 0; i < KP_ARRAY_SIZE(table); i++) {
		double base, second;

		if (!(a->metric & table[i].metric))
			continue;
		base = (double)a->basePeriodList[m];
		second = base * a->thresholdList[m];
		if (!(a->thresholdList[m] > 0) || second > (double)UINT_MAX)
			return kp_fail(LIBPERF_ERR_INVALID_HWMETRIC_ATTR, -EINVAL,
				       "thresholdList[%u] is %g: the period of '%s' (base period "
				       "%u times it) must be a positive 32-bit number",
				       m, a->thresholdList[m], table[i].evt[1],
				       a->basePeriodList[m]);
		if (n + 2 > max)
			return kp_fail(LIBPERF_ERR_INVALID_HWMETRIC_ATTR, -E2BIG,
				       "too many metrics");
		evts[n] = table[i].evt[0];
		evts[n + 1] = table[i].evt[1];
		evt_attrs[n] =
			(struct EvtAttr){ .groupId = (int)m + 1, .period = a->basePeriodList[m] };
		evt_attrs[n + 1] =
			(struct EvtAttr){ .groupId = (int)m + 1, .period = (unsigned)second };
		n += 2;
		m++;
	}
	return (int)n;
}

bool kp_hwmetric_kconfig(const char *path)
{
	char line[256];
	bool found = false;
	FILE *f = fopen(path, "r");

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f))
		found = !strncmp(line, KCONFIG_OPTION, strlen(KCONFIG_OPTION)) &&
			(line[strlen(KCONFIG_OPTION)] == '\n' || !line[strlen(KCONFIG_OPTION)]);
	fclose(f);
	return found;
}

int kp_hwmetric_check(enum PmuTaskType type, const struct PmuAttr *a)
{
	char path[512];
	struct utsname u;

	if (!a->enableHwMetric)
		return 0;
	if (type != SAMPLING)
		return kp_fail(LIBPERF_ERR_NOT_SUPPORT_HWMETRIC, -EINVAL,
			       "enableHwMetric is for SAMPLING only");
	if (uname(&u))
		return kp_fail(LIBPERF_ERR_NOT_SUPPORT_HWMETRIC, -errno, "uname: %s",
			       strerror(errno));
	snprintf(path, sizeof(path), "/boot/config-%s", u.release);
	if (!kp_hwmetric_kconfig(path))
		return kp_fail(LIBPERF_ERR_NOT_SUPPORT_HWMETRIC, -EOPNOTSUPP,
			       "this kernel (%s) has no hardware metric sampling: %s does not say "
			       "%s (HiSilicon kernels 6.6.0-108 and later)",
			       u.release, path, KCONFIG_OPTION);
	return 0;
}

KP_EXPORT int PmuOpenWithHWMetric(struct PmuHwMetricAttr *hwMetricAttr)
{
	const char *evts[2 * KP_ARRAY_SIZE(table)];
	struct EvtAttr evt_attrs[2 * KP_ARRAY_SIZE(table)];
	struct PmuAttr attr = { 0 };
	int pids[1], n;

	kp_clear();
	if (KP_ARCH_X86)
		return kp_fail(LIBPERF_ERR_INTERFACE_NOT_SUPPORT_X86, -EOPNOTSUPP,
			       "PmuOpenWithHWMetric samples HiSilicon hardware metrics: not "
			       "available on x86"),
		       -1;
	n = kp_hwmetric_events(hwMetricAttr, evts, evt_attrs, KP_ARRAY_SIZE(evts));
	if (n < 0)
		return -1;
	attr.evtList = (char **)evts;
	attr.numEvt = (unsigned)n;
	attr.evtAttr = evt_attrs;
	attr.numEvtAttr = (unsigned)n;
	attr.enableHwMetric = 1;
	if (hwMetricAttr->pid > 0) {
		pids[0] = (int)hwMetricAttr->pid;
		attr.pidList = pids;
		attr.numPid = 1;
	}
	return PmuOpen(SAMPLING, &attr);
}
