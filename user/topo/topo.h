/*
 * topo.h - the CPU topology of the machine (socket, numa node, die, cluster of each CPU) and
 * its CPU frequency, read from sysfs (kp_sysfs(), so tests can point it at a fixture tree).
 *
 * The topology is read once, on first use, into an immutable snapshot that every thread
 * reads without a lock: kp_topo_cpu() is an array lookup, cheap enough to fill
 * PmuData.cpuTopo for every record. A CPU the snapshot does not know (hot-plugged later)
 * triggers one re-read. kp_topo_reset() forgets the snapshot (tests that switch the sysfs
 * root, or after CPU hotplug); snapshots handed out before stay valid until exit.
 *
 * What a "cluster" is (kp_topo_cluster_source):
 *   KP_CLUSTER_SYSFS    topology/cluster_id when every CPU has a valid one (arm64 with PPTT:
 *                       on Kunpeng 920 the 4 cores that share an L3 tag partition, the CCL of
 *                       HiSilicon's documents; x86 kernels put the L2 id there when known);
 *   KP_CLUSTER_L3       otherwise the CPUs that share a last-level (L3) cache, from
 *                       cache/index* /shared_cpu_list (an AMD CCX, an Intel socket);
 *   KP_CLUSTER_DIE      otherwise the die (topology/die_id);
 *   KP_CLUSTER_PACKAGE  otherwise the package.
 * Invalid cluster ids are those the kernel prints for "unknown": -1 and 65535 (this x86 VM).
 * Cluster ids are dense indexes 0..n-1 ordered by the lowest CPU of each cluster, so that
 * cluster k of a Kunpeng 920 is CPUs 4k..4k+3 as in libkperf, whatever raw ids the firmware
 * gave (raw ids repeat across packages on some machines).
 */
#ifndef KPERF_TOPO_H
#define KPERF_TOPO_H

#include <stdbool.h>
#include <stdint.h>

#include "kperf/kperf.h"

struct kp_cpu_info {
	int cpu;
	/* topology/core_id: the core within its package (threads share it) */
	int coreId;
	/* topology/physical_package_id; 0 when the firmware gives -1 */
	int socketId;
	/* the node whose cpulist holds the CPU; 0 on a kernel without NUMA, -1 when nodes
	 * exist but none lists it */
	int numaId;
	/* topology/die_id, 0 when absent */
	int dieId;
	/* dense cluster index, see above */
	int clusterId;
	bool online;
};

enum kp_cluster_source {
	KP_CLUSTER_SYSFS,
	KP_CLUSTER_L3,
	KP_CLUSTER_DIE,
	KP_CLUSTER_PACKAGE,
};

/*
 * The libkperf view of <cpu> for PmuData.cpuTopo: coreId is the logical CPU number (as
 * libkperf fills it: "系统核ID"), numaId and socketId as in kp_cpu_info.
 * 0, or -ENOENT with KPERF_ERR_INVALID_ID recorded when the CPU does not exist.
 */
int kp_topo_cpu(int cpu, struct CpuTopology *out);
/* Everything known about <cpu>; errors as kp_topo_cpu. */
int kp_topo_cpu_info(int cpu, struct kp_cpu_info *out);
/* One past the highest CPU id that exists (possible CPUs). */
int kp_topo_cpu_count(void);

/*
 * CPU lists, ascending, malloc'd into *cpus (free()); the return value is their number.
 * A node / socket / cluster that does not exist: -ENOENT with KPERF_ERR_INVALID_ID and a
 * message naming the ids that do exist. A numa node without CPUs (memory only) returns 0
 * and *cpus = NULL.
 */
int kp_topo_numa_cpus(int node, int **cpus);
int kp_topo_socket_cpus(int socket, int **cpus);
int kp_topo_cluster_cpus(int cluster, int **cpus);
/* The numa node ids (ascending, malloc'd); returns their number. */
int kp_topo_numa_nodes(int **ids);
int kp_topo_cluster_count(void);
enum kp_cluster_source kp_topo_cluster_source(void);
const char *kp_topo_cluster_source_name(enum kp_cluster_source src);

/* Forget the snapshot: the next call re-reads sysfs. */
void kp_topo_reset(void);

/*
 * The current frequency of <cpu> in Hz (freq.c). Sources, in order:
 *   1. cpufreq: devices/system/cpu/cpuN/cpufreq/scaling_cur_freq (kHz) under kp_sysfs();
 *   2. /proc/cpuinfo "cpu MHz" of that processor. On x86 the kernel computes it from the
 *      APERF/MPERF counters when the CPU has them (a measured, real-time value), else it is
 *      the calibrated TSC frequency. Measuring APERF/MPERF ourselves through the msr PMU
 *      would need those counters, which a CPU without them (this VM: the msr PMU has only
 *      "tsc") lacks; the TSC runs at a constant rate and says nothing the kernel does not.
 * *source (optional) names the source used. Errors: KPERF_ERR_INVALID_ID (no such CPU),
 * LIBPERF_ERR_KERNEL_NOT_SUPPORT (neither source has this CPU).
 */
int kp_topo_cpu_freq(int cpu, int64_t *hz, const char **source);
/* The cpufreq figure alone (source 1 above): 0, or -ENOENT (nothing recorded) when the kernel
 * has no cpufreq for <cpu>. */
int kp_topo_cpufreq_hz(int cpu, int64_t *hz);

/*
 * CPU frequency sampling (cpufreq.c: PmuOpenCpuFreqSampling and its calls). Tests take the
 * samples themselves: with manual mode on, PmuOpenCpuFreqSampling starts no thread and
 * kp_cpufreq_sample_now() takes one sample of every CPU, as the thread does each period.
 */
void kp_cpufreq_manual(bool on);
void kp_cpufreq_sample_now(void);

/* "cpu MHz" of processor <cpu> in the text of a /proc/cpuinfo, exactly, in Hz:
 * 0, or -ENOENT when the text has no such processor or no MHz line for it. */
int kp_topo_cpuinfo_hz(const char *cpuinfo, int cpu, int64_t *hz);

#endif
