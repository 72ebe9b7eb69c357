/*
 * open.c - PmuDeviceOpen and PmuDeviceBdfList: check the requested metrics, find the PMUs
 * and events that measure them on this machine (uncore.h has the table), and open those
 * events with the core counting API, PmuOpen(COUNTING), which returns the task handle.
 *
 * A machine without the PMU a metric needs is refused with libkperf's code for it
 * (LIBPERF_ERR_NOT_SUPPORT_METRIC, LIBPERF_ERR_NOT_SUPPORT_PCIE_COUNTING for PCIe) and a
 * sentence naming the metric and the PMU, never with an empty result.
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "uncore.h"

struct metric_info {
	const char *name;
	enum PmuMetricMode mode;
	enum { NEEDS_NONE, NEEDS_BDF, NEEDS_PORT } needs;
	const char *pmu; /* what it needs, for messages */
};

static const struct metric_info metrics[] = {
	[PMU_DDR_READ_BW] = { "PMU_DDR_READ_BW", PMU_METRIC_CHANNEL, NEEDS_NONE,
			      "a HiSilicon DDRC (hisi_sccl*_ddrc*) or Intel IMC (uncore_imc_*) PMU" },
	[PMU_DDR_WRITE_BW] = { "PMU_DDR_WRITE_BW", PMU_METRIC_CHANNEL, NEEDS_NONE,
			       "a HiSilicon DDRC (hisi_sccl*_ddrc*) or Intel IMC (uncore_imc_*) "
			       "PMU" },
	[PMU_L3_TRAFFIC] = { "PMU_L3_TRAFFIC", PMU_METRIC_CORE, NEEDS_NONE,
			     "a core PMU that counts last-level cache accesses (armv8_*/ll_cache, "
			     "or Intel cpu/cache-references)" },
	[PMU_L3_MISS] = { "PMU_L3_MISS", PMU_METRIC_CORE, NEEDS_NONE,
			  "a core PMU that counts last-level cache misses (armv8_*/ll_cache_miss, "
			  "or Intel cpu/cache-misses)" },
	[PMU_L3_REF] = { "PMU_L3_REF", PMU_METRIC_CORE, NEEDS_NONE,
			 "a core PMU that counts last-level cache accesses (armv8_*/ll_cache, or "
			 "Intel cpu/cache-references)" },
	[PMU_L3_LAT] = { "PMU_L3_LAT", PMU_METRIC_CLUSTER, NEEDS_NONE,
			 "a HiSilicon L3C PMU v2 (hisi_sccl*_l3c* with the tt_core filter)" },
	[PMU_PCIE_RX_MRD_BW] = { "PMU_PCIE_RX_MRD_BW", PMU_METRIC_BDF, NEEDS_BDF,
				 "a HiSilicon PCIe PMU (hisi_pcie*_core*)" },
	[PMU_PCIE_RX_MWR_BW] = { "PMU_PCIE_RX_MWR_BW", PMU_METRIC_BDF, NEEDS_BDF,
				 "a HiSilicon PCIe PMU (hisi_pcie*_core*)" },
	[PMU_PCIE_TX_MRD_BW] = { "PMU_PCIE_TX_MRD_BW", PMU_METRIC_BDF, NEEDS_BDF,
				 "a HiSilicon PCIe PMU (hisi_pcie*_core*)" },
	[PMU_PCIE_TX_MWR_BW] = { "PMU_PCIE_TX_MWR_BW", PMU_METRIC_BDF, NEEDS_BDF,
				 "a HiSilicon PCIe PMU (hisi_pcie*_core*)" },
	[PMU_PCIE_RX_MRD_LAT] = { "PMU_PCIE_RX_MRD_LAT", PMU_METRIC_BDF, NEEDS_PORT,
				  "a HiSilicon PCIe PMU (hisi_pcie*_core*)" },
	[PMU_PCIE_RX_MWR_LAT] = { "PMU_PCIE_RX_MWR_LAT", PMU_METRIC_BDF, NEEDS_PORT,
				  "a HiSilicon PCIe PMU (hisi_pcie*_core*)" },
	[PMU_PCIE_TX_MRD_LAT] = { "PMU_PCIE_TX_MRD_LAT", PMU_METRIC_BDF, NEEDS_PORT,
				  "a HiSilicon PCIe PMU (hisi_pcie*_core*)" },
	[PMU_SMMU_TRAN] = { "PMU_SMMU_TRAN", PMU_METRIC_BDF, NEEDS_BDF,
			    "an SMMUv3 PMCG (smmuv3_pmcg_*) of the SMMU in front of the device" },
	[PMU_HHA_CROSS_NUMA] = { "PMU_HHA_CROSS_NUMA", PMU_METRIC_NUMA, NEEDS_NONE,
				 "a HiSilicon HHA PMU (hisi_sccl*_hha*)" },
	[PMU_HHA_CROSS_SOCKET] = { "PMU_HHA_CROSS_SOCKET", PMU_METRIC_NUMA, NEEDS_NONE,
				   "a HiSilicon HHA PMU (hisi_sccl*_hha*)" },
};

/* sysfs event names of the PCIe metrics: numerator, denominator */
static const char *const pcie_events[][2] = {
	[PMU_PCIE_RX_MRD_BW] = { "rx_mrd_flux", "rx_mrd_time" },
	[PMU_PCIE_RX_MWR_BW] = { "rx_mwr_flux", "rx_mwr_time" },
	[PMU_PCIE_TX_MRD_BW] = { "tx_mrd_flux", "tx_mrd_time" },
	[PMU_PCIE_TX_MWR_BW] = { "tx_mwr_flux", "tx_mwr_time" },
	[PMU_PCIE_RX_MRD_LAT] = { "rx_mrd_latency", "rx_mrd_cnt" },
	[PMU_PCIE_RX_MWR_LAT] = { "rx_mwr_latency", "rx_mwr_cnt" },
	[PMU_PCIE_TX_MRD_LAT] = { "tx_mrd_latency", "tx_mrd_cnt" },
};

const char *kp_unc_metric_name(int metric)
{
	if (metric < 0 || (size_t)metric >= KP_ARRAY_SIZE(metrics))
		return NULL;
	return metrics[metric].name;
}

enum PmuMetricMode kp_unc_metric_mode(enum PmuDeviceMetric metric)
{
	if ((int)metric < 0 || (size_t)metric >= KP_ARRAY_SIZE(metrics))
		return PMU_METRIC_INVALID;
	return metrics[metric].mode;
}

const char *kp_unc_pcie_event(enum PmuDeviceMetric metric, int which)
{
	if (metric < PMU_PCIE_RX_MRD_BW || metric > PMU_PCIE_TX_MRD_LAT || which < 0 || which > 1)
		return NULL;
	return pcie_events[metric][which];
}

int kp_unc_check_attrs(const struct PmuDeviceAttr *attr, unsigned n, struct kp_unc_attr **out)
{
	struct kp_unc_attr *v;
	unsigned i;
	int kept = 0, j;

	*out = NULL;
	if (!attr || !n)
		return kp_fail(
			LIBPERF_ERR_PMU_DEVICES_NULL, -EINVAL,
			"no device metric given: PmuDeviceAttr array is %s and its length %u",
			attr ? "set" : "NULL", n);
	v = calloc(n, sizeof(*v));
	if (!v)
		return kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
	for (i = 0; i < n; i++) {
		const struct metric_info *m;
		struct kp_unc_attr a = { 0 };
		const char *what, *s;

		if (!kp_unc_metric_name((int)attr[i].metric)) {
			free(v);
			return kp_fail(
				LIBPERF_ERR_INVALID_PMU_DEVICES_METRIC, -EINVAL,
				"PmuDeviceAttr %u: %d is not a PmuDeviceMetric (0 %s .. %d %s)", i,
				(int)attr[i].metric, metrics[0].name,
				(int)KP_ARRAY_SIZE(metrics) - 1,
				metrics[KP_ARRAY_SIZE(metrics) - 1].name);
		}
		m = &metrics[attr[i].metric];
		a.metric = attr[i].metric;
		if (m->needs != NEEDS_NONE) {
			/* bdf and port are ignored by the other metrics, as in libkperf */
			what = m->needs == NEEDS_PORT ? "port" : "bdf";
			s = m->needs == NEEDS_PORT ? attr[i].port : attr[i].bdf;
			if (!s) {
				free(v);
				return kp_fail(
					m->needs == NEEDS_PORT ?
						LIBPERF_ERR_NOT_SUPPORT_PCIE_PORT :
						LIBPERF_ERR_INVALID_PMU_DEVICES_BDF,
					-EINVAL,
					"%s needs PmuDeviceAttr.%s: the PCI %s to measure, e.g. "
					"\"01:00.0\" (PmuDeviceBdfList lists them)",
					m->name, what,
					m->needs == NEEDS_PORT ? "root port" : "device");
			}
			if (kp_unc_parse_bdf(s, &a.domain, &a.rid)) {
				free(v);
				return kp_fail(
					LIBPERF_ERR_INVALID_BDF_VALUE, -EINVAL,
					"%s: %s \"%s\" is not a PCI address of the form bb:dd.f "
					"or dddd:bb:dd.f (hex, device <= 1f, function <= 7)",
					m->name, what, s);
			}
			a.hasBdf = true;
			kp_unc_format_bdf(a.domain, a.rid, a.bdf, sizeof(a.bdf));
		}
		for (j = 0; j < kept; j++)
			if (v[j].metric == a.metric && v[j].hasBdf == a.hasBdf &&
			    v[j].domain == a.domain && v[j].rid == a.rid)
				break;
		if (j == kept)
			v[kept++] = a;
	}
	*out = v;
	return kept;
}

/* ---- event names ---- */

struct names {
	char **v;
	int *groups; /* parallel to v: the EvtAttr group of each name, -1 for none */
	size_t cap, gcap;
	int n;
	int group; /* the group of the names added now */
	int next_group; /* the next free group id */
};

static int KP_PRINTF(2, 3) names_add(struct names *l, const char *fmt, ...)
{
	va_list ap;
	char *s;
	int i, r;

	va_start(ap, fmt);
	r = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (r < 0)
		return kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
	for (i = 0; i < l->n; i++) {
		if (!strcmp(l->v[i], s)) {
			free(s);
			return 0;
		}
	}
	if (kp_grow((void **)&l->v, &l->cap, (size_t)l->n + 1, sizeof(*l->v)) ||
	    kp_grow((void **)&l->groups, &l->gcap, (size_t)l->n + 1, sizeof(*l->groups))) {
		free(s);
		return kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
	}
	l->groups[l->n] = l->group;
	l->v[l->n++] = s;
	return 0;
}

static int not_present(const struct metric_info *m)
{
	return kp_fail(LIBPERF_ERR_NOT_SUPPORT_METRIC, -ENODEV,
		       "%s needs %s; this machine has none (see %s/bus/event_source/devices)",
		       m->name, m->pmu, kp_sysfs());
}

/* "<pmu>/<alias>/" for every PMU of <kind> that has all of <aliases> (NULL-terminated) */
static int add_simple(struct names *l, enum kp_unc_kind kind, const char *const *aliases,
		      int *found)
{
	char **pmus;
	int n = kp_unc_pmus(kind, &pmus), i, j, err = 0;

	if (n < 0)
		return n;
	for (i = 0; i < n && !err; i++) {
		for (j = 0; aliases[j] && kp_unc_has_event(pmus[i], aliases[j]); j++)
			;
		if (aliases[j])
			continue;
		for (j = 0; aliases[j] && !err; j++)
			err = names_add(l, "%s/%s/", pmus[i], aliases[j]);
		(*found)++;
	}
	kp_unc_names_free(pmus, n);
	return err;
}

/* Intel's cache-references / cache-misses are the last level cache only when they are the
 * architectural LONGEST_LAT_CACHE event (0x2e); on AMD they count the L2 */
static int add_intel_llc(struct names *l, const char *alias, int *found)
{
	char **pmus, *terms;
	int n = kp_unc_pmus(KP_UNC_INTEL_CORE, &pmus), i, err = 0;

	if (n < 0)
		return n;
	for (i = 0; i < n && !err; i++) {
		terms = kp_unc_event_terms(pmus[i], alias);
		if (terms && strstr(terms, "event=0x2e") && !strstr(terms, "event=0x2e0")) {
			err = names_add(l, "%s/%s/", pmus[i], alias);
			(*found)++;
		}
		free(terms);
	}
	kp_unc_names_free(pmus, n);
	return err;
}

static int add_l3_lat(struct names *l, int *found)
{
	char **pmus;
	int n = kp_unc_pmus(KP_UNC_HISI_L3C, &pmus), i, err = 0;

	if (n < 0)
		return n;
	for (i = 0; i < n && !err; i++) {
		if (!kp_unc_has_format(pmus[i], "tt_core"))
			continue; /* v1 L3C: no latency event */
		err = names_add(l, "%s/config=0x80,tt_core=0xff/", pmus[i]);
		(*found)++;
	}
	kp_unc_names_free(pmus, n);
	return err;
}

static int not_covered(const struct metric_info *m, const struct kp_unc_attr *a,
		       const struct kp_cover *c, int n, bool port)
{
	char list[512] = "";
	size_t len = 0;
	int i;

	for (i = 0; i < n && len + 20 < sizeof(list); i++)
		len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%s", i ? ", " : "",
					c[i].bdf);
	if (i < n)
		snprintf(list + len, sizeof(list) - len, ", ...");
	if (port)
		return kp_fail(LIBPERF_ERR_NOT_SUPPORT_PCIE_PORT, -ENOENT,
			       "%s: %s is not a root port that a HiSilicon PCIe PMU monitors; the "
			       "root ports they monitor: %s",
			       m->name, a->bdf, n ? list : "none");
	return kp_fail(a->metric == PMU_SMMU_TRAN ? LIBPERF_ERR_NOT_SUPPORT_SMMU_BDF :
						    LIBPERF_ERR_NOT_SUPPORT_PCIE_BDF,
		       -ENOENT, "%s: bdf %s is not %s; the bdfs it can measure: %s", m->name,
		       a->bdf,
		       a->metric == PMU_SMMU_TRAN ? "behind an SMMU that has an SMMUv3 PMCG" :
						    "below a root port that a HiSilicon PCIe PMU "
						    "monitors",
		       n ? list : "none");
}

static int add_covered(struct names *l, const struct kp_unc_attr *a)
{
	const struct metric_info *m = &metrics[a->metric];
	enum kp_cover_kind kind = a->metric == PMU_SMMU_TRAN ? KP_COVER_SMMU :
				  m->needs == NEEDS_PORT     ? KP_COVER_PCIE_PORT :
							       KP_COVER_PCIE;
	struct kp_cover *c;
	int n, i, err;

	n = kp_unc_cover(kind, &c);
	if (n == -ENODEV && kind == KP_COVER_SMMU)
		return not_present(m);
	if (n == -ENODEV) /* no PCIe PMU: libkperf's own code for that */
		return kp_fail(
			LIBPERF_ERR_NOT_SUPPORT_PCIE_COUNTING, n,
			"%s needs %s; this machine has none (see %s/bus/event_source/devices)",
			m->name, m->pmu, kp_sysfs());
	if (n < 0)
		return n;
	for (i = 0; i < n; i++)
		if (c[i].domain == a->domain && c[i].rid == a->rid)
			break;
	if (i == n) {
		err = not_covered(m, a, c, n, kind == KP_COVER_PCIE_PORT);
		free(c);
		return err;
	}
	if (kind == KP_COVER_SMMU) {
		err = names_add(l, "%s/transaction,filter_enable=1,filter_stream_id=0x%x/",
				c[i].pmu, a->rid);
	} else if (!kp_unc_has_event(c[i].pmu, pcie_events[a->metric][0]) ||
		   !kp_unc_has_event(c[i].pmu, pcie_events[a->metric][1])) {
		err = kp_fail(LIBPERF_ERR_NOT_SUPPORT_METRIC, -ENODEV,
			      "%s needs the events %s and %s, which the PCIe PMU %s lacks", m->name,
			      pcie_events[a->metric][0], pcie_events[a->metric][1], c[i].pmu);
	} else {
		/* a flux/time or latency/count pair shares one counter of the PMU when grouped
		 * (hisi-pcie-pmu.rst: perf stat -g), and is read at the same instant */
		const char *filter = kind == KP_COVER_PCIE_PORT ? "port" : "bdf";
		unsigned value = kind == KP_COVER_PCIE_PORT ? 1u << c[i].portBit : a->rid;

		l->group = l->next_group++;
		err = names_add(l, "%s/%s,%s=0x%x/", c[i].pmu, pcie_events[a->metric][0], filter,
				value);
		if (!err)
			err = names_add(l, "%s/%s,%s=0x%x/", c[i].pmu, pcie_events[a->metric][1],
					filter, value);
		l->group = -1;
	}
	free(c);
	return err;
}

static int add_metric(struct names *l, const struct kp_unc_attr *a)
{
	static const char *const rd[] = { "flux_rd", NULL }, *const wr[] = { "flux_wr", NULL },
				 *const imc_rd[] = { "cas_count_read", NULL },
				 *const imc_wr[] = { "cas_count_write", NULL },
				 *const ll[] = { "ll_cache", NULL },
				 *const ll_miss[] = { "ll_cache_miss", NULL },
				 *const cross_numa[] = { "rx_ops_num", "rx_sccl", NULL },
				 *const cross_skt[] = { "rx_ops_num", "rx_outer", NULL };
	const struct metric_info *m = &metrics[a->metric];
	int found = 0, err = 0;

	switch (a->metric) {
	case PMU_DDR_READ_BW:
	case PMU_DDR_WRITE_BW: {
		bool read = a->metric == PMU_DDR_READ_BW;

		err = add_simple(l, KP_UNC_HISI_DDRC, read ? rd : wr, &found);
		if (!err)
			err = add_simple(l, KP_UNC_INTEL_IMC, read ? imc_rd : imc_wr, &found);
		break;
	}
	case PMU_L3_TRAFFIC:
	case PMU_L3_REF:
	case PMU_L3_MISS: {
		bool miss = a->metric == PMU_L3_MISS;

		err = add_simple(l, KP_UNC_ARM_CORE, miss ? ll_miss : ll, &found);
		if (!err)
			err = add_intel_llc(l, miss ? "cache-misses" : "cache-references", &found);
		break;
	}
	case PMU_L3_LAT:
		err = add_l3_lat(l, &found);
		break;
	case PMU_HHA_CROSS_NUMA:
	case PMU_HHA_CROSS_SOCKET:
		err = add_simple(l, KP_UNC_HISI_HHA,
				 a->metric == PMU_HHA_CROSS_NUMA ? cross_numa : cross_skt, &found);
		break;
	default:
		return add_covered(l, a);
	}
	if (!err && !found)
		err = not_present(m);
	return err;
}

int kp_unc_event_names(const struct kp_unc_attr *attr, int n, char ***names, int **groups)
{
	struct names l = { .group = -1 };
	int i, err = 0;

	*names = NULL;
	if (groups)
		*groups = NULL;
	for (i = 0; i < n && !err; i++)
		err = add_metric(&l, &attr[i]);
	if (err) {
		kp_unc_names_free(l.v, l.n);
		free(l.groups);
		return err;
	}
	*names = l.v;
	if (groups)
		*groups = l.groups;
	else
		free(l.groups);
	return l.n;
}

KP_EXPORT int PmuDeviceOpen(struct PmuDeviceAttr *attr, unsigned len)
{
	struct PmuAttr pattr = { 0 };
	struct kp_unc_attr *a = NULL;
	struct EvtAttr *evattr = NULL;
	int n, nn = 0, pd, *groups = NULL, i;
	char **names = NULL;

	kp_clear();
	n = kp_unc_check_attrs(attr, len, &a);
	if (n < 0)
		return kp_public_fail(n);
	nn = kp_unc_event_names(a, n, &names, &groups);
	free(a);
	if (nn < 0)
		return kp_public_fail(nn);
	evattr = calloc((size_t)nn, sizeof(*evattr));
	if (!evattr) {
		kp_unc_names_free(names, nn);
		free(groups);
		kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
		return -1;
	}
	for (i = 0; i < nn; i++)
		evattr[i].groupId = groups[i];
	pattr.evtList = names;
	pattr.numEvt = (unsigned)nn;
	pattr.evtAttr = evattr;
	/* no pidList, no cpuList: system-wide, each uncore event on the CPU of its cpumask */
	pd = PmuOpen(COUNTING, &pattr);
	kp_unc_names_free(names, nn);
	free(groups);
	free(evattr);
	return pd;
}

/* ---- PmuDeviceBdfList ---- */

static pthread_mutex_t lists_lock = PTHREAD_MUTEX_INITIALIZER;
static void **lists; /* every list returned, for PmuDeviceBdfListFree */
static size_t nlists, lists_cap;

static void release_block(void *p)
{
	free(p);
}

KP_EXPORT const char **PmuDeviceBdfList(enum PmuBdfType bdfType, unsigned *numBdf)
{
	struct kp_cover *c = NULL;
	const char **list;
	size_t size;
	char *str;
	int n, i;

	kp_clear();
	if (numBdf)
		*numBdf = 0;
	if (!numBdf) {
		kp_fail(LIBPERF_ERR_NULL_POINTER, -EINVAL, "PmuDeviceBdfList: numBdf is NULL");
		return NULL;
	}
	if (bdfType != PMU_BDF_TYPE_PCIE && bdfType != PMU_BDF_TYPE_SMMU) {
		kp_fail(LIBPERF_ERR_INVALID_PMU_BDF_TYPE, -EINVAL,
			"PmuDeviceBdfList: %d is not a PmuBdfType (PMU_BDF_TYPE_PCIE = %d, "
			"PMU_BDF_TYPE_SMMU = %d)",
			(int)bdfType, PMU_BDF_TYPE_PCIE, PMU_BDF_TYPE_SMMU);
		return NULL;
	}
	n = kp_unc_cover(bdfType == PMU_BDF_TYPE_PCIE ? KP_COVER_PCIE : KP_COVER_SMMU, &c);
	if (n < 0) {
		kp_public_fail(n);
		return NULL;
	}
	/* one block: the NULL-terminated array, then the strings */
	size = (size_t)(n + 1) * sizeof(char *) + (size_t)n * sizeof(c->bdf);
	list = malloc(size);
	if (!list) {
		free(c);
		kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
		return NULL;
	}
	str = (char *)(list + n + 1);
	for (i = 0; i < n; i++) {
		memcpy(str, c[i].bdf, sizeof(c->bdf));
		list[i] = str;
		str += sizeof(c->bdf);
	}
	list[n] = NULL;
	free(c);
	pthread_mutex_lock(&lists_lock);
	if (kp_grow((void **)&lists, &lists_cap, nlists + 1, sizeof(*lists)) ||
	    kp_registry_add(list, release_block)) {
		pthread_mutex_unlock(&lists_lock);
		free(list);
		kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
		return NULL;
	}
	lists[nlists++] = list;
	pthread_mutex_unlock(&lists_lock);
	*numBdf = (unsigned)n;
	return list;
}

KP_EXPORT void PmuDeviceBdfListFree(void)
{
	size_t i;

	kp_clear();
	pthread_mutex_lock(&lists_lock);
	for (i = 0; i < nlists; i++)
		kp_registry_release(lists[i]);
	free(lists);
	lists = NULL;
	nlists = lists_cap = 0;
	pthread_mutex_unlock(&lists_lock);
}
