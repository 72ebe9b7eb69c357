/*
 * api.c - the public topology calls of pmu.h: PmuGetCpuFreq, PmuGetNumaCore,
 * PmuGetClusterCore.
 *
 * As in libkperf, the core lists are plain malloc'd arrays the caller releases with free():
 * C code written for libkperf does exactly that, so they are not put in the registry.
 */
#include <errno.h>
#include <stdlib.h>

#include "core/core.h"
#include "kperf/pcerrc.h"
#include "topo.h"

KP_EXPORT int64_t PmuGetCpuFreq(unsigned core)
{
	int64_t hz;
	int err;

	kp_clear();
	if (core > (unsigned)INT32_MAX) {
		kp_fail(LIBPERF_ERR_CPUFREQ_NOT_CONFIG, -EINVAL, "cpu %u does not exist", core);
		return -1;
	}
	err = kp_topo_cpu_freq((int)core, &hz, NULL);
	if (err)
		return kp_public_fail(err);
	return hz;
}

/* the int list of the topology module as the unsigned list of the public API */
static int public_list(int n, int *cpus, unsigned **coreList)
{
	if (n < 0)
		return kp_public_fail(n);
	/* same size and representation for the non-negative ids: reuse the block */
	*coreList = (unsigned *)cpus;
	return n;
}

KP_EXPORT int PmuGetNumaCore(unsigned nodeId, unsigned **coreList)
{
	int *cpus = NULL, n;

	kp_clear();
	if (!coreList) {
		kp_fail(LIBPERF_ERR_NULL_POINTER, -EINVAL, "PmuGetNumaCore: coreList is NULL");
		return -1;
	}
	*coreList = NULL;
	if (nodeId > (unsigned)INT32_MAX) {
		kp_fail(LIBPERF_ERR_KERNEL_NOT_SUPPORT, -EINVAL, "numa node %u does not exist",
			nodeId);
		return -1;
	}
	n = kp_topo_numa_cpus((int)nodeId, &cpus);
	return public_list(n, cpus, coreList);
}

KP_EXPORT int PmuGetClusterCore(unsigned clusterId, unsigned **coreList)
{
	int *cpus = NULL, n;

	kp_clear();
	if (!coreList) {
		kp_fail(LIBPERF_ERR_NULL_POINTER, -EINVAL, "PmuGetClusterCore: coreList is NULL");
		return -1;
	}
	*coreList = NULL;
	if (clusterId > (unsigned)INT32_MAX) {
		kp_fail(LIBPERF_ERR_CLUSTER_ID_OVERSIZE, -EINVAL, "cluster %u does not exist",
			clusterId);
		return -1;
	}
	n = kp_topo_cluster_cpus((int)clusterId, &cpus);
	return public_list(n, cpus, coreList);
}
