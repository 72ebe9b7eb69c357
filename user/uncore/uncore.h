/*
 * uncore.h - the device metrics of pmu.h (PmuDeviceOpen, PmuGetDevMetric, PmuDeviceBdfList):
 * which PMUs and events measure each metric, found in sysfs (kp_sysfs()), and how counts
 * become metric values.
 *
 * Metric        PMU (sysfs name)                      events                unit, per
 * DDR_READ_BW   hisi_sccl<S>_ddrc<C>[_<n>]            flux_rd (x32 bytes)   bytes, channel
 *               uncore_imc_<C> (Intel)                cas_count_read (x64)
 * DDR_WRITE_BW  same                                  flux_wr, cas_count_write
 * L3_REF        core PMU: armv8_* / armv9_*           ll_cache              count, core
 *               Intel cpu, cpu_core, cpu_atom         cache-references (LONGEST_LAT_CACHE)
 * L3_MISS       same                                  ll_cache_miss, cache-misses
 * L3_TRAFFIC    same as L3_REF                        x64 bytes (a line)    bytes, core
 * L3_LAT        hisi_sccl<S>_l3c<M> v2 (tt_core)      config=0x80,tt_core=0xff  cycles, cluster
 * HHA_CROSS_*   hisi_sccl<S>_hha<M>                   rx_sccl or rx_outer / rx_ops_num  ratio, numa
 * PCIE_*_BW     hisi_pcie<S>_core<C>                  *_flux,bdf= / *_time,bdf=  4*flux/time
 *                                                     = bytes/ns, bdf
 * PCIE_*_LAT    hisi_pcie<S>_core<C>                  *_latency,port= / *_cnt,port=  ns, bdf
 * SMMU_TRAN     smmuv3_pmcg_<page>                    transaction,filter_enable=1,
 *                                                     filter_stream_id=<requester id>  count, bdf
 *
 * The channel, numa node, socket, core and cluster of a count come from the CPU the
 * counter ran on (PmuData.cpu: an uncore PMU is opened on the CPU of its cpumask, which
 * lies in the SCCL / socket it serves), through the topology module.
 */
#ifndef KPERF_UNCORE_H
#define KPERF_UNCORE_H

#include <stdbool.h>
#include <stddef.h>

#include "kperf/kperf.h"

enum kp_unc_kind {
	KP_UNC_OTHER,
	KP_UNC_HISI_DDRC,
	KP_UNC_INTEL_IMC,
	KP_UNC_ARM_CORE,
	KP_UNC_INTEL_CORE,
	KP_UNC_HISI_L3C,
	KP_UNC_HISI_HHA,
	KP_UNC_HISI_PCIE,
	KP_UNC_SMMU_PMCG,
};

/* What kind of PMU <name> is, from its name alone; *index (optional) is the DDR channel of
 * a DDRC or IMC (hisi_sccl1_ddrc2_1 -> 2), else -1. */
enum kp_unc_kind kp_unc_kind(const char *name, int *index);

/* "PMU_DDR_READ_BW", NULL for a value that is not a metric */
const char *kp_unc_metric_name(int metric);
enum PmuMetricMode kp_unc_metric_mode(enum PmuDeviceMetric metric);
/* The sysfs events of a PCIe metric: <which> 0 the numerator (flux, latency), 1 the
 * denominator (time, count); NULL for other metrics. */
const char *kp_unc_pcie_event(enum PmuDeviceMetric metric, int which);

/* A PCI function: "bb:dd.f" or "dddd:bb:dd.f" (hex) -> domain and requester id
 * (bus << 8 | device << 3 | function). 0 or -EINVAL. */
int kp_unc_parse_bdf(const char *s, unsigned *domain, unsigned *rid);
/* the inverse: "01:00.0" in domain 0, "0001:01:00.0" elsewhere (buf of 16 bytes) */
void kp_unc_format_bdf(unsigned domain, unsigned rid, char *buf, size_t size);

/* ---- discovery (discover.c) ---- */

/* The PMUs of <kind> (sorted in natural order: ddrc2 before ddrc10), malloc'd names. */
int kp_unc_pmus(enum kp_unc_kind kind, char ***names);
void kp_unc_names_free(char **names, int n);
/* Does PMU <pmu> have sysfs event <alias> / format term <term>? */
bool kp_unc_has_event(const char *pmu, const char *alias);
bool kp_unc_has_format(const char *pmu, const char *term);
/* The terms of a sysfs event ("event=0x2e,umask=0x4f"), malloc'd, or NULL. */
char *kp_unc_event_terms(const char *pmu, const char *alias);

enum kp_cover_kind {
	KP_COVER_PCIE, /* endpoints below the root ports a hisi_pcie PMU monitors */
	KP_COVER_PCIE_PORT, /* those root ports (for the latency metrics' port filter) */
	KP_COVER_SMMU, /* PCI functions behind an SMMU that has a PMCG */
};

struct kp_cover {
	unsigned domain;
	unsigned rid; /* bus << 8 | devfn */
	char bdf[16]; /* as PmuDeviceBdfList prints it */
	char pmu[64]; /* the PMU that measures it */
	unsigned portBit; /* KP_COVER_PCIE_PORT: the bit of the "port" filter */
};

/*
 * The PCI functions the PMUs of <kind> measure, sorted by (domain, requester id). 0 when
 * there are such PMUs but they cover nothing; -ENODEV when the machine has no PMU of the
 * kind (LIBPERF_ERR_NOT_SUPPORT_PCIE_COUNTING for PCIe, LIBPERF_ERR_NOT_SUPPORT_METRIC for
 * SMMU).
 */
int kp_unc_cover(enum kp_cover_kind kind, struct kp_cover **out);

/* ---- PmuDeviceOpen (open.c) ---- */

/* A checked PmuDeviceAttr. */
struct kp_unc_attr {
	enum PmuDeviceMetric metric;
	bool hasBdf; /* a PCIe / SMMU metric: bdf (or port) below is set */
	unsigned domain;
	unsigned rid;
	char bdf[16]; /* canonical form of attr.bdf or attr.port */
};

/* Check attr[0..n-1] (NULL, metric, bdf/port syntax) into *out (malloc'd), without looking
 * at the machine. Duplicates are dropped. Returns the number kept. Codes as libkperf's:
 * PMU_DEVICES_NULL, INVALID_PMU_DEVICES_METRIC, INVALID_PMU_DEVICES_BDF (no bdf),
 * NOT_SUPPORT_PCIE_PORT (no port), INVALID_BDF_VALUE. */
int kp_unc_check_attrs(const struct PmuDeviceAttr *attr, unsigned n, struct kp_unc_attr **out);
/* The event names that measure <attr> on this machine, for PmuOpen: returns their number
 * (each distinct name once) or an error with libkperf's code (NOT_SUPPORT_METRIC naming the
 * metric and the PMU it needs, NOT_SUPPORT_PCIE_BDF / _SMMU_BDF / _PCIE_PORT for a bdf no
 * PMU covers). *groups (optional, malloc'd) gives the
 * EvtAttr group id of each name: the two events of a PCIe metric form a group, the others
 * are -1. */
int kp_unc_event_names(const struct kp_unc_attr *attr, int n, char ***names, int **groups);

#endif
