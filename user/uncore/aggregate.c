/*
 * aggregate.c - PmuGetDevMetric and DevDataFree: turn the counts PmuRead returned for the
 * events PmuDeviceOpen opened into metric values per channel, core, cluster, numa node or
 * PCI function.
 *
 * A record is recognised by its event name alone (the "pmu/event,terms/" strings open.c
 * builds), so data from a dump or from a task the caller opened by hand aggregates the same
 * way. Where a count was measured comes from the CPU its counter ran on (PmuData.cpu, or
 * PmuData.cpuTopo when the record has no CPU), looked up in the topology module.
 *
 * Ratios whose denominator is 0 (no packet seen, no HHA operation) are NaN, not 0: a latency
 * of 0 ns would be a measurement nobody made. A bandwidth with neither flux nor time is 0.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "pmu/pmu.h"
#include "topo/topo.h"
#include "uncore.h"

#define DDRC_BYTES 32 /* a HiSilicon DDRC flux_rd / flux_wr count */
#define IMC_BYTES 64 /* an Intel IMC CAS: one 64-byte line */
#define LINE_BYTES 64 /* a last-level cache access */
#define PCIE_DW_BYTES 4 /* the PCIe PMU counts flux in double words */
#define L3C_LAT_EVENT 0x80

struct parsed {
	char pmu[128];
	char alias[64]; /* the sysfs event name, "" when given by terms only */
	long long config, bdf, port, stream; /* -1 when absent */
	enum kp_unc_kind kind;
	int channel;
};

static long long term_value(const char *s)
{
	char *end;
	long long v;

	errno = 0;
	v = strtoll(s, &end, 0);
	return errno || end == s || v < 0 ? -1 : v;
}

/* "hisi_pcie0_core0/rx_mrd_flux,bdf=0x100/" */
static bool parse_evt(const char *evt, struct parsed *p)
{
	const char *slash, *last;
	char body[256], *tok, *save = NULL;
	size_t len;

	memset(p, 0, sizeof(*p));
	p->config = p->bdf = p->port = p->stream = -1;
	if (!evt || !(slash = strchr(evt, '/')) || !(last = strrchr(evt, '/')) || last == slash)
		return false;
	len = (size_t)(slash - evt);
	if (!len || len >= sizeof(p->pmu) || (size_t)(last - slash - 1) >= sizeof(body))
		return false;
	memcpy(p->pmu, evt, len);
	memcpy(body, slash + 1, (size_t)(last - slash - 1));
	body[last - slash - 1] = '\0';
	for (tok = strtok_r(body, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(tok, '=');

		while (*tok == ' ')
			tok++;
		if (!eq) {
			if (!p->alias[0] && strlen(tok) < sizeof(p->alias))
				strcpy(p->alias, tok);
			continue;
		}
		*eq = '\0';
		if (!strcmp(tok, "config") || !strcmp(tok, "event"))
			p->config = term_value(eq + 1);
		else if (!strcmp(tok, "bdf"))
			p->bdf = term_value(eq + 1);
		else if (!strcmp(tok, "port"))
			p->port = term_value(eq + 1);
		else if (!strcmp(tok, "filter_stream_id"))
			p->stream = term_value(eq + 1);
	}
	p->kind = kp_unc_kind(p->pmu, &p->channel);
	return true;
}

/* the PCIe PMU and port bit of a latency metric's root port */
struct port_target {
	char pmu[64];
	unsigned bits;
};

/* 0: not this metric's; 1: its count (numerator); 2: its denominator */
static int role(const struct kp_unc_attr *a, const struct parsed *p, const struct port_target *pt)
{
	const char *num, *den;

	switch (a->metric) {
	case PMU_DDR_READ_BW:
		return (p->kind == KP_UNC_HISI_DDRC && !strcmp(p->alias, "flux_rd")) ||
		       (p->kind == KP_UNC_INTEL_IMC && !strcmp(p->alias, "cas_count_read"));
	case PMU_DDR_WRITE_BW:
		return (p->kind == KP_UNC_HISI_DDRC && !strcmp(p->alias, "flux_wr")) ||
		       (p->kind == KP_UNC_INTEL_IMC && !strcmp(p->alias, "cas_count_write"));
	case PMU_L3_TRAFFIC:
	case PMU_L3_REF:
		return (p->kind == KP_UNC_ARM_CORE && !strcmp(p->alias, "ll_cache")) ||
		       (p->kind == KP_UNC_INTEL_CORE && !strcmp(p->alias, "cache-references"));
	case PMU_L3_MISS:
		return (p->kind == KP_UNC_ARM_CORE && !strcmp(p->alias, "ll_cache_miss")) ||
		       (p->kind == KP_UNC_INTEL_CORE && !strcmp(p->alias, "cache-misses"));
	case PMU_L3_LAT:
		return p->kind == KP_UNC_HISI_L3C && p->config == L3C_LAT_EVENT;
	case PMU_HHA_CROSS_NUMA:
	case PMU_HHA_CROSS_SOCKET:
		if (p->kind != KP_UNC_HISI_HHA)
			return 0;
		if (!strcmp(p->alias, "rx_ops_num"))
			return 2;
		return !strcmp(p->alias, a->metric == PMU_HHA_CROSS_NUMA ? "rx_sccl" : "rx_outer");
	case PMU_SMMU_TRAN:
		return p->kind == KP_UNC_SMMU_PMCG && !strcmp(p->alias, "transaction") &&
		       p->stream == (long long)a->rid;
	default:
		break;
	}
	/* PCIe */
	num = kp_unc_pcie_event(a->metric, 0);
	den = kp_unc_pcie_event(a->metric, 1);
	if (!num || p->kind != KP_UNC_HISI_PCIE)
		return 0;
	if (pt) {
		if (strcmp(p->pmu, pt->pmu) || p->port != (long long)pt->bits)
			return 0;
	} else if (p->bdf != (long long)a->rid) {
		return 0;
	}
	return !strcmp(p->alias, num) ? 1 : !strcmp(p->alias, den) ? 2 : 0;
}

static double factor(const struct kp_unc_attr *a, const struct parsed *p)
{
	if (a->metric == PMU_DDR_READ_BW || a->metric == PMU_DDR_WRITE_BW)
		return p->kind == KP_UNC_HISI_DDRC ? DDRC_BYTES : IMC_BYTES;
	if (a->metric == PMU_L3_TRAFFIC)
		return LINE_BYTES;
	return 1;
}

struct acc {
	int key[3];
	double num, den;
};

struct accs {
	struct acc *v;
	size_t cap;
	int n;
};

static struct acc *acc_get(struct accs *l, const int key[3])
{
	int i;

	for (i = 0; i < l->n; i++)
		if (!memcmp(l->v[i].key, key, sizeof(l->v[i].key)))
			return &l->v[i];
	if (kp_grow((void **)&l->v, &l->cap, (size_t)l->n + 1, sizeof(*l->v)))
		return NULL;
	memset(&l->v[l->n], 0, sizeof(l->v[l->n]));
	memcpy(l->v[l->n].key, key, sizeof(l->v[l->n].key));
	return &l->v[l->n++];
}

static int cmp_acc(const void *a, const void *b)
{
	const struct acc *x = a, *y = b;
	int i;

	for (i = 0; i < 3; i++)
		if (x->key[i] != y->key[i])
			return x->key[i] < y->key[i] ? -1 : 1;
	return 0;
}

/* where record <i> was counted */
static int place(const struct PmuData *d, unsigned i, struct kp_cpu_info *ci)
{
	int cpu = d->cpu >= 0 ? d->cpu : d->cpuTopo ? d->cpuTopo->coreId : -1;

	if (cpu < 0)
		return kp_fail(
			LIBPERF_ERR_INVALID_PMU_DATA, -EINVAL,
			"PmuData %u (%s) has neither a cpu nor a cpuTopo: device metrics need "
			"the CPU each uncore counter ran on",
			i, d->evt);
	if (kp_topo_cpu_info(cpu, ci))
		return kp_fail(LIBPERF_ERR_INVALID_PMU_DATA, -EINVAL,
			       "PmuData %u (%s) was counted on cpu %d, which this machine does not "
			       "have: was the data read on another machine?",
			       i, d->evt, cpu);
	return 0;
}

/* the group of a record under the metric's mode */
static void group_key(enum PmuMetricMode mode, const struct kp_cpu_info *ci, int channel,
		      int key[3])
{
	key[0] = key[1] = key[2] = 0;
	switch (mode) {
	case PMU_METRIC_CHANNEL:
		key[0] = ci->socketId;
		key[1] = ci->numaId;
		key[2] = channel;
		break;
	case PMU_METRIC_CORE:
		key[0] = ci->cpu;
		break;
	case PMU_METRIC_CLUSTER:
		key[0] = ci->clusterId;
		break;
	case PMU_METRIC_NUMA:
		key[0] = ci->numaId;
		break;
	default:
		break;
	}
}

static double value_of(const struct kp_unc_attr *a, const struct acc *c)
{
	switch (a->metric) {
	case PMU_HHA_CROSS_NUMA:
	case PMU_HHA_CROSS_SOCKET:
	case PMU_PCIE_RX_MRD_LAT:
	case PMU_PCIE_RX_MWR_LAT:
	case PMU_PCIE_TX_MRD_LAT:
		return c->den > 0 ? c->num / c->den : NAN;
	case PMU_PCIE_RX_MRD_BW:
	case PMU_PCIE_RX_MWR_BW:
	case PMU_PCIE_TX_MRD_BW:
	case PMU_PCIE_TX_MWR_BW:
		if (c->den > 0)
			return c->num * PCIE_DW_BYTES / c->den;
		return c->num > 0 ? NAN : 0;
	default:
		return c->num;
	}
}

struct result {
	const struct kp_unc_attr *attr;
	struct acc acc;
};

struct results {
	struct result *v;
	size_t cap;
	int n;
};

static int port_target(const struct kp_unc_attr *a, struct port_target *pt)
{
	struct kp_cover *c;
	int n = kp_unc_cover(KP_COVER_PCIE_PORT, &c), i;

	if (n < 0)
		return n;
	for (i = 0; i < n; i++) {
		if (c[i].domain == a->domain && c[i].rid == a->rid) {
			snprintf(pt->pmu, sizeof(pt->pmu), "%s", c[i].pmu);
			pt->bits = 1u << c[i].portBit;
			free(c);
			return 0;
		}
	}
	free(c);
	return kp_fail(LIBPERF_ERR_NOT_SUPPORT_PCIE_PORT, -ENOENT,
		       "%s: port %s is not a root port any PCIe PMU of this machine monitors",
		       kp_unc_metric_name(a->metric), a->bdf);
}

/* aggregate the records of one metric into <out> */
static int aggregate_one(const struct PmuData *data, unsigned len, const struct kp_unc_attr *a,
			 const struct parsed *parsed, struct results *out)
{
	enum PmuMetricMode mode = kp_unc_metric_mode(a->metric);
	struct port_target pt, *ptp = NULL;
	struct accs accs = { 0 };
	unsigned i;
	int err = 0, j, r;

	if (a->metric >= PMU_PCIE_RX_MRD_LAT && a->metric <= PMU_PCIE_TX_MRD_LAT) {
		err = port_target(a, &pt);
		if (err)
			return err;
		ptp = &pt;
	}
	for (i = 0; i < len && !err; i++) {
		struct kp_cpu_info ci = { 0 };
		int key[3] = { 0, 0, 0 };
		struct acc *c;

		r = role(a, &parsed[i], ptp);
		if (!r)
			continue;
		if (mode != PMU_METRIC_BDF) {
			err = place(&data[i], i, &ci);
			if (err)
				break;
			group_key(mode, &ci, parsed[i].channel, key);
		}
		c = acc_get(&accs, key);
		if (!c) {
			err = kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
			break;
		}
		if (r == 1)
			c->num += (double)data[i].count * factor(a, &parsed[i]);
		else
			c->den += (double)data[i].count;
	}
	if (!err && !accs.n) /* libkperf: a metric no record feeds is an error, not nothing */
		err = kp_fail(LIBPERF_ERR_PMU_DATA_NO_FOUND, -ENOENT,
			      "no PmuData record is an event of %s: pass the records read from the "
			      "PmuDeviceOpen task of that metric",
			      kp_unc_metric_name(a->metric));
	if (!err && accs.n)
		qsort(accs.v, (size_t)accs.n, sizeof(*accs.v), cmp_acc);
	for (j = 0; j < accs.n && !err; j++) {
		if (kp_grow((void **)&out->v, &out->cap, (size_t)out->n + 1, sizeof(*out->v))) {
			err = kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
			break;
		}
		out->v[out->n].attr = a;
		out->v[out->n++].acc = accs.v[j];
	}
	free(accs.v);
	return err;
}

static void release_block(void *p)
{
	free(p);
}

/* one block: the records, then the bdf strings they point to */
static int build(const struct results *res, struct PmuDeviceData **out)
{
	struct PmuDeviceData *v;
	char *str;
	int i;

	*out = NULL;
	if (!res->n)
		return 0;
	v = calloc(1, (size_t)res->n * (sizeof(*v) + 16));
	if (!v)
		return kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
	str = (char *)(v + res->n);
	for (i = 0; i < res->n; i++) {
		const struct kp_unc_attr *a = res->v[i].attr;
		const struct acc *c = &res->v[i].acc;

		v[i].metric = a->metric;
		v[i].mode = kp_unc_metric_mode(a->metric);
		v[i].count = value_of(a, c);
		switch (v[i].mode) {
		case PMU_METRIC_CHANNEL:
			v[i].socketId = (unsigned)c->key[0];
			v[i].ddrNumaId = (unsigned)c->key[1];
			v[i].channelId = (unsigned)c->key[2];
			break;
		case PMU_METRIC_CORE:
			v[i].coreId = (unsigned)c->key[0];
			break;
		case PMU_METRIC_CLUSTER:
			v[i].clusterId = (unsigned)c->key[0];
			break;
		case PMU_METRIC_NUMA:
			v[i].numaId = (unsigned)c->key[0];
			break;
		default:
			/* bdf, or port for the latency metrics: the same union member */
			memcpy(str, a->bdf, 16);
			v[i].bdf = str;
			str += 16;
			break;
		}
	}
	if (kp_registry_add(v, release_block)) {
		free(v);
		return kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
	}
	*out = v;
	return res->n;
}

KP_EXPORT int PmuGetDevMetric(struct PmuData *pmuData, unsigned len, struct PmuDeviceAttr *attr,
			      unsigned attrLen, struct PmuDeviceData **data)
{
	struct results res = { 0 };
	struct kp_unc_attr *a = NULL;
	struct parsed *parsed = NULL;
	unsigned i;
	int n, err = 0, j;

	kp_clear();
	if (!data) {
		kp_fail(LIBPERF_ERR_NULL_POINTER, -EINVAL, "PmuGetDevMetric: data is NULL");
		return -1;
	}
	*data = NULL;
	/* as libkperf: no records (nothing read yet) or no metric is a bad call, not nothing */
	if (!pmuData || !len || !attr || !attrLen) {
		kp_fail(LIBPERF_ERR_INVALID_MTRIC_PARAM, -EINVAL,
			"PmuGetDevMetric: %s (pmuData %s, len %u, attr %s, attrLen %u)",
			!pmuData || !len ? "no PmuData records to compute the metrics from" :
					   "no PmuDeviceAttr metric asked for",
			pmuData ? "set" : "NULL", len, attr ? "set" : "NULL", attrLen);
		return -1;
	}
	err = kp_data_check(pmuData, len, "PmuGetDevMetric");
	if (err)
		return kp_public_fail(err);
	n = kp_unc_check_attrs(attr, attrLen, &a);
	if (n < 0)
		return kp_public_fail(n);
	parsed = malloc((size_t)len * sizeof(*parsed));
	if (!parsed) {
		err = kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
		goto out;
	}
	for (i = 0; i < len; i++)
		if (!parse_evt(pmuData[i].evt, &parsed[i]))
			parsed[i].kind = KP_UNC_OTHER; /* not an uncore event: ignored */
	for (j = 0; j < n && !err; j++)
		err = aggregate_one(pmuData, len, &a[j], parsed, &res);
	if (!err)
		err = build(&res, data);
out:
	free(parsed);
	free(res.v);
	free(a);
	return err < 0 ? kp_public_fail(err) : err;
}

KP_EXPORT void DevDataFree(struct PmuDeviceData *data)
{
	kp_clear();
	kp_registry_release(data);
}
