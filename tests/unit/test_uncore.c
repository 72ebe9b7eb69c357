/*
 * test_uncore.c - device (uncore) metrics (user/uncore): PMU discovery and the exact event
 * names on the fixture trees (a 2-socket Kunpeng 920, a 2-socket x86 server), how those
 * names become perf_event_attr bits, every bad input with its code, the aggregation math on
 * hand-built PmuData arrays, and this machine, which has none of these PMUs.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "events/events.h"
#include "fixtures/fixture.h"
#include "kperf/kperf.h"
#include "topo/topo.h"
#include "uncore/uncore.h"

static void use(const char *fixture)
{
	fx_use(fixture);
	kp_topo_reset();
}

/* ---- names and PCI addresses ---- */

Test(uncore, pmu_kinds)
{
	int idx;

	cr_assert_eq(kp_unc_kind("hisi_sccl1_ddrc2", &idx), KP_UNC_HISI_DDRC);
	cr_assert_eq(idx, 2);
	cr_assert_eq(kp_unc_kind("hisi_sccl3_ddrc3_1", &idx), KP_UNC_HISI_DDRC);
	cr_assert_eq(idx, 3);
	cr_assert_eq(kp_unc_kind("uncore_imc_5", &idx), KP_UNC_INTEL_IMC);
	cr_assert_eq(idx, 5);
	cr_assert_eq(kp_unc_kind("hisi_sccl3_l3c10", &idx), KP_UNC_HISI_L3C);
	cr_assert_eq(idx, -1);
	cr_assert_eq(kp_unc_kind("hisi_sccl7_hha1", NULL), KP_UNC_HISI_HHA);
	cr_assert_eq(kp_unc_kind("hisi_pcie0_core1", NULL), KP_UNC_HISI_PCIE);
	cr_assert_eq(kp_unc_kind("smmuv3_pmcg_148020", NULL), KP_UNC_SMMU_PMCG);
	cr_assert_eq(kp_unc_kind("armv8_pmuv3_0", NULL), KP_UNC_ARM_CORE);
	cr_assert_eq(kp_unc_kind("cpu", NULL), KP_UNC_INTEL_CORE);
	cr_assert_eq(kp_unc_kind("cpu_atom", NULL), KP_UNC_INTEL_CORE);
	cr_assert_eq(kp_unc_kind("hisi_sccl1_ddrcx", NULL), KP_UNC_OTHER);
	cr_assert_eq(kp_unc_kind("hisi_sccl1_l3c0x", NULL), KP_UNC_OTHER);
	cr_assert_eq(kp_unc_kind("smmuv3_pmcg_zz", NULL), KP_UNC_OTHER);
	cr_assert_eq(kp_unc_kind("uncore_imc_free_running_0", NULL), KP_UNC_OTHER);
	cr_assert_eq(kp_unc_kind("software", NULL), KP_UNC_OTHER);
	cr_assert_eq(kp_unc_kind(NULL, NULL), KP_UNC_OTHER);
}

Test(uncore, bdf_parse_and_format)
{
	unsigned dom, rid;
	char buf[16];

	cr_assert_eq(kp_unc_parse_bdf("01:00.0", &dom, &rid), 0);
	cr_assert_eq(dom, 0);
	cr_assert_eq(rid, 0x100);
	cr_assert_eq(kp_unc_parse_bdf("0000:81:00.0", &dom, &rid), 0);
	cr_assert_eq(rid, 0x8100);
	cr_assert_eq(kp_unc_parse_bdf("0001:02:1F.7", &dom, &rid), 0);
	cr_assert_eq(dom, 1);
	cr_assert_eq(rid, 0x2ff);
	cr_assert_eq(kp_unc_parse_bdf("01:20.0", &dom, &rid), -EINVAL); /* device > 1f */
	cr_assert_eq(kp_unc_parse_bdf("01:00.8", &dom, &rid), -EINVAL); /* function > 7 */
	cr_assert_eq(kp_unc_parse_bdf("100:00.0", &dom, &rid), -EINVAL); /* bus > ff */
	cr_assert_eq(kp_unc_parse_bdf("zz:00.0", &dom, &rid), -EINVAL);
	cr_assert_eq(kp_unc_parse_bdf("01:00.0 ", &dom, &rid), -EINVAL);
	cr_assert_eq(kp_unc_parse_bdf("01:00", &dom, &rid), -EINVAL);
	cr_assert_eq(kp_unc_parse_bdf("", &dom, &rid), -EINVAL);
	cr_assert_eq(kp_unc_parse_bdf(NULL, &dom, &rid), -EINVAL);
	kp_unc_format_bdf(0, 0x8100, buf, sizeof(buf));
	cr_assert_str_eq(buf, "81:00.0");
	kp_unc_format_bdf(1, 0x2ff, buf, sizeof(buf));
	cr_assert_str_eq(buf, "0001:02:1f.7");
}

/* ---- PmuDeviceBdfList ---- */

Test(uncore, kunpeng_pcie_bdf_list)
{
	static const char *const want[] = { "01:00.0", "02:00.0", "02:00.1", "81:00.0" };
	const char **list;
	unsigned n = 99, i;

	use("kunpeng920");
	list = PmuDeviceBdfList(PMU_BDF_TYPE_PCIE, &n);
	cr_assert_not_null(list, "%s", Perror());
	/* 7d:00.0 sits on a root bus; 82:00.0 is below 80:04.0, outside bdf_min..bdf_max */
	cr_assert_eq(n, 4);
	for (i = 0; i < n; i++)
		cr_assert_str_eq(list[i], want[i]);
	cr_assert_null(list[n]);
	PmuDeviceBdfListFree();
	PmuDeviceBdfListFree();
}

Test(uncore, kunpeng_smmu_bdf_list)
{
	static const char *const want[] = { "01:00.0", "02:00.0", "02:00.1" };
	const char **list, **again;
	unsigned n = 0, n2 = 0, i;

	use("kunpeng920");
	list = PmuDeviceBdfList(PMU_BDF_TYPE_SMMU, &n);
	cr_assert_not_null(list, "%s", Perror());
	/* the SMMU at 0x200000000 has no PMCG: its devices are not listed */
	cr_assert_eq(n, 3);
	for (i = 0; i < n; i++)
		cr_assert_str_eq(list[i], want[i]);
	again = PmuDeviceBdfList(PMU_BDF_TYPE_SMMU, &n2);
	cr_assert_eq(n2, 3);
	cr_assert_neq(again, list); /* a new array: the first one stays valid */
	cr_assert_str_eq(list[2], "02:00.1");
	PmuDeviceBdfListFree();
}

Test(uncore, bdf_list_without_pmus)
{
	unsigned n = 7;

	use("x86_2s");
	cr_assert_null(PmuDeviceBdfList(PMU_BDF_TYPE_PCIE, &n));
	cr_assert_eq(n, 0);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_NOT_SUPPORT_PCIE_COUNTING);
	cr_assert(strstr(Perror(), "no HiSilicon PCIe PMU (hisi_pcie*_core*"), "%s", Perror());
	cr_assert_null(PmuDeviceBdfList(PMU_BDF_TYPE_SMMU, &n));
	cr_assert_eq(Perrorno(), LIBPERF_ERR_NOT_SUPPORT_METRIC);
	cr_assert(strstr(Perror(), "no SMMUv3 PMCG (smmuv3_pmcg_*"), "%s", Perror());
}

Test(uncore, bdf_list_bad_arguments)
{
	unsigned n;

	use("kunpeng920");
	cr_assert_null(PmuDeviceBdfList((enum PmuBdfType)5, &n));
	cr_assert_eq(Perrorno(), LIBPERF_ERR_INVALID_PMU_BDF_TYPE);
	cr_assert_str_eq(Perror(),
			 "PmuDeviceBdfList: 5 is not a PmuBdfType (PMU_BDF_TYPE_PCIE = 0, "
			 "PMU_BDF_TYPE_SMMU = 1)");
	cr_assert_null(PmuDeviceBdfList(PMU_BDF_TYPE_PCIE, NULL));
	cr_assert_eq(Perrorno(), LIBPERF_ERR_NULL_POINTER);
}

/* ---- the events PmuDeviceOpen opens ---- */

/* the event names for one attr, or the negative error */
static int names_for(enum PmuDeviceMetric metric, const char *bdf, const char *port, char ***names)
{
	struct PmuDeviceAttr attr = { metric, (char *)bdf, (char *)port };
	struct kp_unc_attr *a;
	int n;

	*names = NULL;
	n = kp_unc_check_attrs(&attr, 1, &a);
	if (n < 0)
		return n;
	n = kp_unc_event_names(a, n, names, NULL);
	free(a);
	return n;
}

static void assert_names(char **got, int n, const char *const *want, int nwant)
{
	int i;

	cr_assert_eq(n, nwant, "got %d names, want %d (%s)", n, nwant, n < 0 ? Perror() : "");
	for (i = 0; i < n; i++)
		cr_assert_str_eq(got[i], want[i], "name %d", i);
	kp_unc_names_free(got, n);
}

Test(uncore, kunpeng_ddr_events)
{
	char **names;
	int n;

	use("kunpeng920");
	n = names_for(PMU_DDR_READ_BW, NULL, NULL, &names);
	cr_assert_eq(n, 16, "%s", Perror());
	cr_assert_str_eq(names[0], "hisi_sccl1_ddrc0/flux_rd/");
	cr_assert_str_eq(names[3], "hisi_sccl1_ddrc3/flux_rd/");
	cr_assert_str_eq(names[4], "hisi_sccl3_ddrc0/flux_rd/");
	cr_assert_str_eq(names[15], "hisi_sccl7_ddrc3/flux_rd/");
	kp_unc_names_free(names, n);
	n = names_for(PMU_DDR_WRITE_BW, NULL, NULL, &names);
	cr_assert_eq(n, 16);
	cr_assert_str_eq(names[9], "hisi_sccl5_ddrc1/flux_wr/");
	kp_unc_names_free(names, n);
}

Test(uncore, kunpeng_l3_events)
{
	static const char *const ref[] = { "armv8_pmuv3_0/ll_cache/" }, *const miss[] = {
		"armv8_pmuv3_0/ll_cache_miss/"
	};
	struct PmuDeviceAttr attr[] = {
		{ PMU_L3_TRAFFIC }, { PMU_L3_REF }, { PMU_L3_MISS }, { PMU_L3_REF }
	};
	struct kp_unc_attr *a;
	char **names;
	int n;

	use("kunpeng920");
	n = names_for(PMU_L3_REF, NULL, NULL, &names);
	assert_names(names, n, ref, 1);
	n = names_for(PMU_L3_MISS, NULL, NULL, &names);
	assert_names(names, n, miss, 1);
	/* traffic and ref count the same event: it is opened once; the duplicate attr goes */
	n = kp_unc_check_attrs(attr, 4, &a);
	cr_assert_eq(n, 3);
	n = kp_unc_event_names(a, n, &names, NULL);
	free(a);
	cr_assert_eq(n, 2);
	cr_assert_str_eq(names[0], "armv8_pmuv3_0/ll_cache/");
	cr_assert_str_eq(names[1], "armv8_pmuv3_0/ll_cache_miss/");
	kp_unc_names_free(names, n);

	n = names_for(PMU_L3_LAT, NULL, NULL, &names);
	cr_assert_eq(n, 8, "%s", Perror());
	cr_assert_str_eq(names[0], "hisi_sccl1_l3c0/config=0x80,tt_core=0xff/");
	cr_assert_str_eq(names[7], "hisi_sccl7_l3c1/config=0x80,tt_core=0xff/");
	kp_unc_names_free(names, n);
}

Test(uncore, kunpeng_hha_events)
{
	struct PmuDeviceAttr attr[] = { { PMU_HHA_CROSS_NUMA }, { PMU_HHA_CROSS_SOCKET } };
	struct kp_unc_attr *a;
	char **names;
	int n;

	use("kunpeng920");
	n = names_for(PMU_HHA_CROSS_NUMA, NULL, NULL, &names);
	cr_assert_eq(n, 16);
	cr_assert_str_eq(names[0], "hisi_sccl1_hha0/rx_ops_num/");
	cr_assert_str_eq(names[1], "hisi_sccl1_hha0/rx_sccl/");
	kp_unc_names_free(names, n);
	n = kp_unc_check_attrs(attr, 2, &a);
	n = kp_unc_event_names(a, n, &names, NULL);
	free(a);
	cr_assert_eq(n, 24); /* rx_ops_num once per HHA */
	cr_assert_str_eq(names[16], "hisi_sccl1_hha0/rx_outer/");
	kp_unc_names_free(names, n);
}

Test(uncore, kunpeng_pcie_and_smmu_events)
{
	static const char *const rx_mrd[] = { "hisi_pcie0_core0/rx_mrd_flux,bdf=0x201/",
					      "hisi_pcie0_core0/rx_mrd_time,bdf=0x201/" },
				 *const tx_mwr[] = { "hisi_pcie0_core1/tx_mwr_flux,bdf=0x8100/",
						     "hisi_pcie0_core1/tx_mwr_time,bdf=0x8100/" },
				 *const lat0[] = { "hisi_pcie0_core0/rx_mrd_latency,port=0x100/",
						   "hisi_pcie0_core0/rx_mrd_cnt,port=0x100/" },
				 *const lat1[] = { "hisi_pcie0_core1/tx_mrd_latency,port=0x1/",
						   "hisi_pcie0_core1/tx_mrd_cnt,port=0x1/" },
				 *const smmu[] = { "smmuv3_pmcg_148020/transaction,filter_enable=1,"
						   "filter_stream_id=0x200/" };
	char **names;
	int n;

	use("kunpeng920");
	n = names_for(PMU_PCIE_RX_MRD_BW, "02:00.1", NULL, &names);
	assert_names(names, n, rx_mrd, 2);
	n = names_for(PMU_PCIE_TX_MWR_BW, "0000:81:00.0", NULL, &names);
	assert_names(names, n, tx_mwr, 2);
	n = names_for(PMU_PCIE_RX_MRD_LAT, NULL, "00:04.0", &names);
	assert_names(names, n, lat0, 2);
	n = names_for(PMU_PCIE_TX_MRD_LAT, NULL, "80:00.0", &names);
	assert_names(names, n, lat1, 2);
	n = names_for(PMU_SMMU_TRAN, "02:00.0", NULL, &names);
	assert_names(names, n, smmu, 1);
}

/* each PCIe pair is one group (one counter of the PMU, read together); nothing else is */
Test(uncore, pcie_pairs_are_grouped)
{
	struct PmuDeviceAttr attr[] = { { PMU_DDR_READ_BW },
					{ PMU_PCIE_RX_MRD_BW, "02:00.1" },
					{ PMU_PCIE_RX_MRD_LAT, NULL, "00:04.0" },
					{ PMU_SMMU_TRAN, "02:00.0" } };
	struct kp_unc_attr *a;
	int n, i, *groups;
	char **names;

	use("kunpeng920");
	n = kp_unc_check_attrs(attr, 4, &a);
	cr_assert_eq(n, 4);
	n = kp_unc_event_names(a, n, &names, &groups);
	free(a);
	cr_assert_eq(n, 21, "%s", Perror());
	for (i = 0; i < 16; i++)
		cr_assert_eq(groups[i], -1, "%s", names[i]);
	cr_assert_str_eq(names[16], "hisi_pcie0_core0/rx_mrd_flux,bdf=0x201/");
	cr_assert_eq(groups[16], 0);
	cr_assert_eq(groups[17], 0);
	cr_assert_str_eq(names[18], "hisi_pcie0_core0/rx_mrd_latency,port=0x100/");
	cr_assert_eq(groups[18], 1);
	cr_assert_eq(groups[19], 1);
	cr_assert_eq(groups[20], -1);
	kp_unc_names_free(names, n);
	free(groups);
}

Test(uncore, x86_events)
{
	static const char *const ref[] = { "cpu/cache-references/" };
	char **names;
	int n;

	use("x86_2s");
	n = names_for(PMU_DDR_READ_BW, NULL, NULL, &names);
	cr_assert_eq(n, 6, "%s", Perror());
	cr_assert_str_eq(names[0], "uncore_imc_0/cas_count_read/");
	cr_assert_str_eq(names[5], "uncore_imc_5/cas_count_read/");
	kp_unc_names_free(names, n);
	n = names_for(PMU_L3_REF, NULL, NULL, &names);
	assert_names(names, n, ref, 1);
}

/* the names parse into the attr bits the kernel's format files describe */
Test(uncore, kunpeng_events_parse_into_attrs)
{
	struct kp_event ev;

	use("kunpeng920");
	cr_assert_eq(kp_event_parse("hisi_sccl1_ddrc0/flux_rd/", false, &ev), 0, "%s", Perror());
	cr_assert_eq(ev.attr.type, 4008);
	cr_assert_eq(ev.attr.config, 0x1);
	cr_assert(ev.uncore);
	cr_assert_eq(ev.ncpus, 1);
	cr_assert_eq(ev.cpus[0], 8); /* SCCL 1 is numa node 1 */
	kp_event_free(&ev);

	cr_assert_eq(kp_event_parse("hisi_pcie0_core0/rx_mrd_flux,bdf=0x201/", false, &ev), 0, "%s",
		     Perror());
	cr_assert_eq(ev.attr.config, 0x804);
	cr_assert_eq(ev.attr.config2, 0x201ULL << 16);
	kp_event_free(&ev);

	cr_assert_eq(kp_event_parse("hisi_pcie0_core1/tx_mrd_cnt,port=0x1/", false, &ev), 0);
	cr_assert_eq(ev.attr.config, 0x10011);
	cr_assert_eq(ev.attr.config2, 0x1);
	kp_event_free(&ev);

	cr_assert_eq(kp_event_parse("smmuv3_pmcg_148020/transaction,filter_enable=1,"
				    "filter_stream_id=0x200/",
				    false, &ev),
		     0, "%s", Perror());
	cr_assert_eq(ev.attr.config, 0x1);
	cr_assert_eq(ev.attr.config1, (1ULL << 33) | 0x200);
	kp_event_free(&ev);

	cr_assert_eq(kp_event_parse("hisi_sccl1_l3c0/config=0x80,tt_core=0xff/", false, &ev), 0,
		     "%s", Perror());
	cr_assert_eq(ev.attr.config, 0x80);
	cr_assert_eq(ev.attr.config2, 0xff);
	cr_assert_eq(ev.cpus[0], 8);
	kp_event_free(&ev);

	cr_assert_eq(kp_event_parse("armv8_pmuv3_0/ll_cache/", false, &ev), 0, "%s", Perror());
	cr_assert_eq(ev.attr.type, 4200);
	cr_assert_eq(ev.attr.config, 0x32);
	cr_assert(!ev.uncore);
	kp_event_free(&ev);
}

/* ---- bad input ---- */

static int open1(enum PmuDeviceMetric metric, const char *bdf, const char *port)
{
	struct PmuDeviceAttr attr = { metric, (char *)bdf, (char *)port };

	return PmuDeviceOpen(&attr, 1);
}

Test(uncore, open_null_or_empty)
{
	struct PmuDeviceAttr attr = { PMU_DDR_READ_BW };

	use("kunpeng920");
	cr_assert_eq(PmuDeviceOpen(NULL, 1), -1);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_PMU_DEVICES_NULL);
	cr_assert_str_eq(Perror(),
			 "no device metric given: PmuDeviceAttr array is NULL and its length 1");
	cr_assert_eq(PmuDeviceOpen(&attr, 0), -1);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_PMU_DEVICES_NULL);
}

Test(uncore, open_invalid_metric)
{
	use("kunpeng920");
	cr_assert_eq(open1((enum PmuDeviceMetric)99, NULL, NULL), -1);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_INVALID_PMU_DEVICES_METRIC);
	cr_assert_str_eq(Perror(),
			 "PmuDeviceAttr 0: 99 is not a PmuDeviceMetric (0 PMU_DDR_READ_BW "
			 ".. 15 PMU_HHA_CROSS_SOCKET)");
	cr_assert_eq(open1((enum PmuDeviceMetric) - 1, NULL, NULL), -1);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_INVALID_PMU_DEVICES_METRIC);
}

Test(uncore, open_missing_or_malformed_bdf)
{
	use("kunpeng920");
	cr_assert_eq(open1(PMU_PCIE_RX_MRD_BW, NULL, NULL), -1);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_INVALID_PMU_DEVICES_BDF);
	cr_assert_str_eq(Perror(), "PMU_PCIE_RX_MRD_BW needs PmuDeviceAttr.bdf: the PCI device to "
				   "measure, e.g. \"01:00.0\" (PmuDeviceBdfList lists them)");
	cr_assert_eq(open1(PMU_PCIE_RX_MWR_LAT, "01:00.0", NULL), -1);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_NOT_SUPPORT_PCIE_PORT);
	cr_assert(strstr(Perror(),
			 "PMU_PCIE_RX_MWR_LAT needs PmuDeviceAttr.port: the PCI root port"),
		  "%s", Perror());
	cr_assert_eq(open1(PMU_SMMU_TRAN, "1:2:3", NULL), -1);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_INVALID_BDF_VALUE);
	cr_assert_str_eq(Perror(), "PMU_SMMU_TRAN: bdf \"1:2:3\" is not a PCI address of the form "
				   "bb:dd.f or dddd:bb:dd.f (hex, device <= 1f, function <= 7)");
}

Test(uncore, open_bdf_not_covered)
{
	use("kunpeng920");
	cr_assert_eq(open1(PMU_PCIE_TX_MRD_BW, "7d:00.0", NULL), -1);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_NOT_SUPPORT_PCIE_BDF);
	cr_assert_str_eq(Perror(),
			 "PMU_PCIE_TX_MRD_BW: bdf 7d:00.0 is not below a root port that "
			 "a HiSilicon PCIe PMU monitors; the bdfs it can measure: 01:00.0, "
			 "02:00.0, 02:00.1, 81:00.0");
	cr_assert_eq(open1(PMU_SMMU_TRAN, "81:00.0", NULL), -1);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_NOT_SUPPORT_SMMU_BDF);
	cr_assert_str_eq(Perror(),
			 "PMU_SMMU_TRAN: bdf 81:00.0 is not behind an SMMU that has an "
			 "SMMUv3 PMCG; the bdfs it can measure: 01:00.0, 02:00.0, 02:00.1");
	cr_assert_eq(open1(PMU_PCIE_RX_MRD_LAT, NULL, "80:04.0"), -1);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_NOT_SUPPORT_PCIE_PORT);
	cr_assert_str_eq(Perror(),
			 "PMU_PCIE_RX_MRD_LAT: 80:04.0 is not a root port that a HiSilicon "
			 "PCIe PMU monitors; the root ports they monitor: 00:00.0, 00:04.0, "
			 "80:00.0");
}

Test(uncore, x86_fixture_lacks_hisilicon_pmus)
{
	use("x86_2s");
	cr_assert_eq(open1(PMU_L3_LAT, NULL, NULL), -1);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_NOT_SUPPORT_METRIC);
	cr_assert(strstr(Perror(), "PMU_L3_LAT needs a HiSilicon L3C PMU v2 (hisi_sccl*_l3c* with "
				   "the tt_core filter); this machine has none"),
		  "%s", Perror());
	cr_assert_eq(open1(PMU_HHA_CROSS_SOCKET, NULL, NULL), -1);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_NOT_SUPPORT_METRIC);
	cr_assert_eq(open1(PMU_PCIE_RX_MWR_BW, "00:00.0", NULL), -1);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_NOT_SUPPORT_PCIE_COUNTING);
	cr_assert(strstr(Perror(), "PMU_PCIE_RX_MWR_BW needs a HiSilicon PCIe PMU"), "%s",
		  Perror());
	cr_assert_eq(open1(PMU_SMMU_TRAN, "00:00.0", NULL), -1);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_NOT_SUPPORT_METRIC);
	cr_assert(strstr(Perror(), "PMU_SMMU_TRAN needs an SMMUv3 PMCG"), "%s", Perror());
}

/* The fixture's PMUs do not exist in this kernel: the names reach PmuOpen, parse, and the
 * kernel refuses the PMU type. */
Test(uncore, kunpeng_open_reaches_pmuopen)
{
	use("kunpeng920");
	cr_assert_eq(open1(PMU_DDR_READ_BW, NULL, NULL), -1);
	/* perf_event_open: ENOENT for the unknown type, libkperf's OPEN_INVALID_FILE */
	cr_assert_eq(Perrorno(), LIBPERF_ERR_OPEN_INVALID_FILE, "%d %s", Perrorno(), Perror());
	cr_assert(strstr(Perror(), "hisi_sccl1_ddrc0/flux_rd/"), "%s", Perror());
}

/* ---- this machine ---- */

/* does /sys have a PMU whose name starts with one of <prefixes>? */
static bool sys_has_pmu(const char *const *prefixes)
{
	struct dirent *de;
	bool found = false;
	DIR *d = opendir("/sys/bus/event_source/devices");
	int i;

	while (d && !found && (de = readdir(d)))
		for (i = 0; prefixes[i] && !found; i++)
			found = !strncmp(de->d_name, prefixes[i], strlen(prefixes[i]));
	if (d)
		closedir(d);
	return found;
}

Test(uncore, real_machine_refuses_every_metric)
{
	static const char *const ddr[] = { "hisi_sccl", "uncore_imc_", NULL },
				 *const core[] = { "armv8_", "armv9_", "cpu", NULL },
				 *const hisi[] = { "hisi_sccl", NULL },
				 *const pcie[] = { "hisi_pcie", NULL },
				 *const smmu[] = { "smmuv3_pmcg_", NULL };
	const char *const *needs[] = {
		[PMU_DDR_READ_BW] = ddr,      [PMU_DDR_WRITE_BW] = ddr,
		[PMU_L3_TRAFFIC] = core,      [PMU_L3_MISS] = core,
		[PMU_L3_REF] = core,	      [PMU_L3_LAT] = hisi,
		[PMU_PCIE_RX_MRD_BW] = pcie,  [PMU_PCIE_RX_MWR_BW] = pcie,
		[PMU_PCIE_TX_MRD_BW] = pcie,  [PMU_PCIE_TX_MWR_BW] = pcie,
		[PMU_PCIE_RX_MRD_LAT] = pcie, [PMU_PCIE_RX_MWR_LAT] = pcie,
		[PMU_PCIE_TX_MRD_LAT] = pcie, [PMU_SMMU_TRAN] = smmu,
		[PMU_HHA_CROSS_NUMA] = hisi,  [PMU_HHA_CROSS_SOCKET] = hisi,
	};
	int m, checked = 0;

	use(NULL);
	for (m = PMU_DDR_READ_BW; m <= PMU_HHA_CROSS_SOCKET; m++) {
		char want[64];

		if (sys_has_pmu(needs[m]))
			continue; /* a machine with that hardware: not what this test is about */
		cr_assert_eq(open1((enum PmuDeviceMetric)m, "00:00.0", "00:00.0"), -1);
		/* libkperf: no PCIe PMU is NOT_SUPPORT_PCIE_COUNTING, any other missing PMU
		 * NOT_SUPPORT_METRIC */
		cr_assert_eq(Perrorno(),
			     needs[m] == pcie ? LIBPERF_ERR_NOT_SUPPORT_PCIE_COUNTING :
						LIBPERF_ERR_NOT_SUPPORT_METRIC,
			     "%s: %d %s", kp_unc_metric_name(m), Perrorno(), Perror());
		snprintf(want, sizeof(want), "%s needs ", kp_unc_metric_name(m));
		cr_assert(!strncmp(Perror(), want, strlen(want)), "%s", Perror());
		cr_assert(strstr(Perror(), "; this machine has none (see /sys/bus/event_source/"
					   "devices)"),
			  "%s", Perror());
		checked++;
	}
	cr_log_info("%d of 16 metrics refused on this machine", checked);
	if (!sys_has_pmu(ddr)) {
		open1(PMU_DDR_READ_BW, NULL, NULL);
		cr_assert_str_eq(Perror(),
				 "PMU_DDR_READ_BW needs a HiSilicon DDRC (hisi_sccl*_ddrc*) "
				 "or Intel IMC (uncore_imc_*) PMU; this machine has none "
				 "(see /sys/bus/event_source/devices)");
	}
}

/* ---- aggregation ---- */

static struct PmuData rec(const char *evt, int cpu, uint64_t count)
{
	struct PmuData d = { 0 };

	d.evt = evt;
	d.cpu = cpu;
	d.count = count;
	d.pid = -1;
	d.tid = -1;
	return d;
}

static int metric(struct PmuData *d, unsigned n, struct PmuDeviceAttr *a, unsigned na,
		  struct PmuDeviceData **out)
{
	int r = PmuGetDevMetric(d, n, a, na, out);

	cr_assert_geq(r, 0, "%s", Perror());
	return r;
}

Test(uncore, ddr_bandwidth_per_channel)
{
	struct PmuData d[] = {
		rec("hisi_sccl3_ddrc0/flux_rd/", 0, 100),
		rec("hisi_sccl3_ddrc1/flux_rd/", 0, 10),
		rec("hisi_sccl1_ddrc0/flux_rd/", 8, 1),
		rec("hisi_sccl7_ddrc3/flux_rd/", 16, 1000),
		rec("hisi_sccl3_ddrc0/flux_wr/", 0, 4),
		rec("cpu-clock", 1, 123456),
		rec("hisi_sccl3_ddrc0/flux_rd/", 0, 5),
	};
	struct PmuDeviceAttr a[] = { { PMU_DDR_READ_BW }, { PMU_DDR_WRITE_BW } };
	struct PmuDeviceData *out;
	int n;

	use("kunpeng920");
	n = metric(d, 7, a, 2, &out);
	cr_assert_eq(n, 5);
	/* sorted by (socket, numa, channel); bytes = 32 per count */
	cr_assert_eq(out[0].metric, PMU_DDR_READ_BW);
	cr_assert_eq(out[0].mode, PMU_METRIC_CHANNEL);
	cr_assert_eq(out[0].socketId, 0);
	cr_assert_eq(out[0].ddrNumaId, 0);
	cr_assert_eq(out[0].channelId, 0);
	cr_assert_eq(out[0].count, 105 * 32.0);
	cr_assert_eq(out[1].channelId, 1);
	cr_assert_eq(out[1].count, 320.0);
	cr_assert_eq(out[2].ddrNumaId, 1);
	cr_assert_eq(out[2].channelId, 0);
	cr_assert_eq(out[2].count, 32.0);
	cr_assert_eq(out[3].socketId, 1);
	cr_assert_eq(out[3].ddrNumaId, 2);
	cr_assert_eq(out[3].channelId, 3);
	cr_assert_eq(out[3].count, 32000.0);
	cr_assert_eq(out[4].metric, PMU_DDR_WRITE_BW);
	cr_assert_eq(out[4].count, 128.0);
	DevDataFree(out);
	DevDataFree(out); /* a second free is ignored */
}

Test(uncore, x86_imc_bandwidth)
{
	struct PmuData d[] = { rec("uncore_imc_2/cas_count_write/", 0, 3),
			       rec("uncore_imc_2/cas_count_write/", 4, 1),
			       rec("uncore_imc_2/cas_count_read/", 4, 1000) };
	struct PmuDeviceAttr a = { PMU_DDR_WRITE_BW };
	struct PmuDeviceData *out;

	use("x86_2s");
	cr_assert_eq(metric(d, 3, &a, 1, &out), 2);
	cr_assert_eq(out[0].socketId, 0);
	cr_assert_eq(out[0].ddrNumaId, 0);
	cr_assert_eq(out[0].channelId, 2);
	cr_assert_eq(out[0].count, 192.0);
	cr_assert_eq(out[1].socketId, 1);
	cr_assert_eq(out[1].ddrNumaId, 1);
	cr_assert_eq(out[1].count, 64.0);
	DevDataFree(out);
}

Test(uncore, l3_per_core)
{
	struct PmuData d[] = { rec("armv8_pmuv3_0/ll_cache/", 20, 7),
			       rec("armv8_pmuv3_0/ll_cache/", 5, 10),
			       rec("armv8_pmuv3_0/ll_cache_miss/", 5, 2) };
	struct PmuDeviceAttr a[] = { { PMU_L3_TRAFFIC }, { PMU_L3_REF }, { PMU_L3_MISS } };
	struct PmuDeviceData *out;

	use("kunpeng920");
	cr_assert_eq(metric(d, 3, a, 3, &out), 5);
	cr_assert_eq(out[0].metric, PMU_L3_TRAFFIC);
	cr_assert_eq(out[0].mode, PMU_METRIC_CORE);
	cr_assert_eq(out[0].coreId, 5);
	cr_assert_eq(out[0].count, 640.0);
	cr_assert_eq(out[1].coreId, 20);
	cr_assert_eq(out[1].count, 448.0);
	cr_assert_eq(out[2].metric, PMU_L3_REF);
	cr_assert_eq(out[2].coreId, 5);
	cr_assert_eq(out[2].count, 10.0);
	cr_assert_eq(out[3].coreId, 20);
	cr_assert_eq(out[3].count, 7.0);
	cr_assert_eq(out[4].metric, PMU_L3_MISS);
	cr_assert_eq(out[4].coreId, 5);
	cr_assert_eq(out[4].count, 2.0);
	DevDataFree(out);
}

Test(uncore, l3_latency_per_cluster)
{
	struct PmuData d[] = { rec("hisi_sccl3_l3c1/config=0x80,tt_core=0xff/", 4, 1000),
			       rec("hisi_sccl5_l3c1/config=0x80,tt_core=0xff/", 28, 50),
			       rec("hisi_sccl3_l3c1/config=0x80,tt_core=0xff/", 4, 24),
			       rec("hisi_sccl3_l3c1/rd_cpipe/", 4, 99999) };
	struct PmuDeviceAttr a = { PMU_L3_LAT };
	struct PmuDeviceData *out;

	use("kunpeng920");
	cr_assert_eq(metric(d, 4, &a, 1, &out), 2);
	cr_assert_eq(out[0].mode, PMU_METRIC_CLUSTER);
	cr_assert_eq(out[0].clusterId, 1);
	cr_assert_eq(out[0].count, 1024.0);
	cr_assert_eq(out[1].clusterId, 7);
	cr_assert_eq(out[1].count, 50.0);
	DevDataFree(out);
}

Test(uncore, hha_cross_ratios)
{
	struct PmuData d[] = {
		rec("hisi_sccl1_hha0/rx_ops_num/", 8, 200),
		rec("hisi_sccl1_hha0/rx_sccl/", 8, 50),
		rec("hisi_sccl1_hha1/rx_ops_num/", 8, 200),
		rec("hisi_sccl1_hha1/rx_sccl/", 8, 30),
		rec("hisi_sccl1_hha1/rx_outer/", 8, 40),
		rec("hisi_sccl3_hha0/rx_ops_num/", 0, 0),
		rec("hisi_sccl3_hha0/rx_sccl/", 0, 0),
	};
	struct PmuDeviceAttr a[] = { { PMU_HHA_CROSS_NUMA }, { PMU_HHA_CROSS_SOCKET } };
	struct PmuDeviceData *out;

	use("kunpeng920");
	cr_assert_eq(metric(d, 7, a, 2, &out), 4);
	cr_assert_eq(out[0].mode, PMU_METRIC_NUMA);
	cr_assert_eq(out[0].numaId, 0);
	cr_assert(isnan(out[0].count), "no operation seen: NaN, got %f", out[0].count);
	cr_assert_eq(out[1].numaId, 1);
	cr_assert_eq(out[1].count, 0.2);
	cr_assert_eq(out[2].metric, PMU_HHA_CROSS_SOCKET);
	cr_assert(isnan(out[2].count));
	cr_assert_eq(out[3].numaId, 1);
	cr_assert_eq(out[3].count, 0.1);
	DevDataFree(out);
}

Test(uncore, pcie_bandwidth_and_latency)
{
	struct PmuData d[] = {
		rec("hisi_pcie0_core0/rx_mrd_flux,bdf=0x201/", 0, 1000),
		rec("hisi_pcie0_core0/rx_mrd_time,bdf=0x201/", 0, 500),
		rec("hisi_pcie0_core0/rx_mrd_flux,bdf=0x200/", 0, 7777),
		rec("hisi_pcie0_core1/tx_mwr_flux,bdf=0x8100/", 0, 0),
		rec("hisi_pcie0_core1/tx_mwr_time,bdf=0x8100/", 0, 0),
		rec("hisi_pcie0_core0/rx_mrd_latency,port=0x100/", 0, 9000),
		rec("hisi_pcie0_core0/rx_mrd_cnt,port=0x100/", 0, 30),
		rec("hisi_pcie0_core1/rx_mrd_latency,port=0x100/", 0, 1),
		rec("hisi_pcie0_core1/tx_mrd_latency,port=0x1/", 0, 0),
		rec("hisi_pcie0_core1/tx_mrd_cnt,port=0x1/", 0, 0),
	};
	struct PmuDeviceAttr a[] = { { PMU_PCIE_RX_MRD_BW, "02:00.1" },
				     { PMU_PCIE_TX_MWR_BW, "81:00.0" },
				     { PMU_PCIE_RX_MRD_LAT, NULL, "00:04.0" },
				     { PMU_PCIE_TX_MRD_LAT, NULL, "80:00.0" } };
	struct PmuDeviceData *out;

	use("kunpeng920");
	cr_assert_eq(metric(d, 10, a, 4, &out), 4);
	cr_assert_eq(out[0].metric, PMU_PCIE_RX_MRD_BW);
	cr_assert_eq(out[0].mode, PMU_METRIC_BDF);
	cr_assert_str_eq(out[0].bdf, "02:00.1");
	cr_assert_eq(out[0].count, 8.0); /* 1000 DW * 4 bytes / 500 */
	cr_assert_str_eq(out[1].bdf, "81:00.0");
	cr_assert_eq(out[1].count, 0.0);
	cr_assert_eq(out[2].metric, PMU_PCIE_RX_MRD_LAT);
	cr_assert_str_eq(out[2].port, "00:04.0");
	cr_assert_eq(out[2].count, 300.0);
	cr_assert_str_eq(out[3].port, "80:00.0");
	cr_assert(isnan(out[3].count), "no packet: NaN, got %f", out[3].count);
	DevDataFree(out);
}

Test(uncore, smmu_translations)
{
	struct PmuData d[] = {
		rec("smmuv3_pmcg_148020/transaction,filter_enable=1,filter_stream_id=0x200/", 0,
		    77),
		rec("smmuv3_pmcg_148020/transaction,filter_enable=1,filter_stream_id=0x100/", 0, 5),
		rec("smmuv3_pmcg_148020/transaction,filter_enable=1,filter_stream_id=0x200/", 0,
		    23),
	};
	struct PmuDeviceAttr a = { PMU_SMMU_TRAN, "0000:02:00.0" };
	struct PmuDeviceData *out;

	use("kunpeng920");
	cr_assert_eq(metric(d, 3, &a, 1, &out), 1);
	cr_assert_eq(out[0].mode, PMU_METRIC_BDF);
	cr_assert_str_eq(out[0].bdf, "02:00.0");
	cr_assert_eq(out[0].count, 100.0);
	DevDataFree(out);
}

Test(uncore, aggregation_uses_cputopo_without_cpu)
{
	struct CpuTopology topo = { 8, 1, 0 };
	struct PmuData d = rec("hisi_sccl1_ddrc2/flux_rd/", -1, 3);
	struct PmuDeviceAttr a = { PMU_DDR_READ_BW };
	struct PmuDeviceData *out;

	use("kunpeng920");
	d.cpuTopo = &topo;
	cr_assert_eq(metric(&d, 1, &a, 1, &out), 1);
	cr_assert_eq(out[0].ddrNumaId, 1);
	cr_assert_eq(out[0].channelId, 2);
	cr_assert_eq(out[0].count, 96.0);
	DevDataFree(out);
}

Test(uncore, aggregation_bad_input)
{
	struct PmuData good = rec("hisi_sccl1_ddrc2/flux_rd/", 8, 3);
	struct PmuData nocpu = rec("hisi_sccl1_ddrc2/flux_rd/", -1, 3);
	struct PmuData badcpu = rec("hisi_sccl1_ddrc2/flux_rd/", 99, 3);
	struct PmuData other = rec("cpu-clock", 0, 3);
	struct PmuDeviceAttr a = { PMU_DDR_READ_BW }, bad = { (enum PmuDeviceMetric)16 };
	struct PmuDeviceData *out = (struct PmuDeviceData *)1;

	use("kunpeng920");
	cr_assert_eq(PmuGetDevMetric(&good, 1, &a, 1, NULL), -1);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_NULL_POINTER);
	cr_assert_eq(PmuGetDevMetric(NULL, 3, &a, 1, &out), -1);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_INVALID_MTRIC_PARAM);
	cr_assert_str_eq(Perror(), "PmuGetDevMetric: no PmuData records to compute the metrics "
				   "from (pmuData NULL, len 3, attr set, attrLen 1)");
	cr_assert_null(out);
	cr_assert_eq(PmuGetDevMetric(&good, 1, NULL, 1, &out), -1);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_INVALID_MTRIC_PARAM);
	cr_assert_eq(PmuGetDevMetric(&good, 1, &a, 0, &out), -1);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_INVALID_MTRIC_PARAM);
	cr_assert_str_eq(Perror(), "PmuGetDevMetric: no PmuDeviceAttr metric asked for (pmuData "
				   "set, len 1, attr set, attrLen 0)");
	cr_assert_eq(PmuGetDevMetric(&good, 1, &bad, 1, &out), -1);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_INVALID_PMU_DEVICES_METRIC);
	cr_assert_eq(PmuGetDevMetric(&nocpu, 1, &a, 1, &out), -1);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_INVALID_PMU_DATA);
	cr_assert_str_eq(Perror(),
			 "PmuData 0 (hisi_sccl1_ddrc2/flux_rd/) has neither a cpu nor a "
			 "cpuTopo: device metrics need the CPU each uncore counter ran on");
	cr_assert_eq(PmuGetDevMetric(&badcpu, 1, &a, 1, &out), -1);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_INVALID_PMU_DATA);
	cr_assert(strstr(Perror(), "counted on cpu 99, which this machine does not have"), "%s",
		  Perror());
	/* nothing read yet, or nothing of the metric: an error, as libkperf (not an empty
	 * result that hides the mistake) */
	cr_assert_eq(PmuGetDevMetric(NULL, 0, &a, 1, &out), -1);
	cr_assert_null(out);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_INVALID_MTRIC_PARAM);
	cr_assert_eq(PmuGetDevMetric(&good, 0, &a, 1, &out), -1);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_INVALID_MTRIC_PARAM);
	cr_assert_eq(PmuGetDevMetric(&other, 1, &a, 1, &out), -1);
	cr_assert_null(out);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_PMU_DATA_NO_FOUND);
	cr_assert_str_eq(Perror(), "no PmuData record is an event of PMU_DDR_READ_BW: pass the "
				   "records read from the PmuDeviceOpen task of that metric");
	DevDataFree(NULL);
	DevDataFree((struct PmuDeviceData *)&good); /* never returned: ignored */
}
