/*
 * test_pmu_opts.c - the PmuAttr options whose hardware this machine lacks, tested on their
 * logic: the user-space counter read (enableUserAccess) on fake perf mmap pages (sequence
 * lock, counter width, time scaling), its system checks on fixture trees, its refusals with
 * libkperf's codes, and its path through PmuOpen/PmuEnable/PmuRead on a fixture that allows
 * rdpmc; the hardware-metric table of PmuOpenWithHWMetric (events, groups, periods) with
 * its names resolved on the Kunpeng 920 fixture, its validation, the kernel-config check of
 * enableHwMetric, and the refusals on this machine.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/core.h"
#include "events/events.h"
#include "fixtures/fixture.h"
#include "kperf/kperf.h"
#include "pmu/pmu.h"

/* ---- the read through the mmap page ---- */

struct fake {
	struct perf_event_mmap_page *pc;
	uint64_t pmc; /* what the counter register holds */
	uint64_t ts; /* what the time base reads */
	unsigned last_idx; /* the register asked for */
	int pmc_calls, ts_calls;
	int bump_at; /* on this pmc call, simulate the kernel rescheduling the event */
};

static uint64_t fake_pmc(unsigned idx, void *ctx)
{
	struct fake *f = ctx;

	f->last_idx = idx;
	if (++f->pmc_calls == f->bump_at) {
		/* the kernel moved the event meanwhile: new offset, new counter, lock bumped */
		f->pc->lock += 2;
		f->pc->offset = 7000;
		f->pc->index = 5;
		return 0xdeadbeef; /* a torn read: must not be used */
	}
	return f->pmc;
}

static uint64_t fake_ts(void *ctx)
{
	struct fake *f = ctx;

	f->ts_calls++;
	return f->ts;
}

static struct perf_event_mmap_page *page(void)
{
	struct perf_event_mmap_page *pc = calloc(1, sizeof(*pc));

	cr_assert_not_null(pc);
	pc->cap_user_rdpmc = 1;
	pc->cap_user_time = 1;
	pc->lock = 4;
	pc->index = 3;
	pc->pmc_width = 48;
	pc->time_enabled = 1000;
	pc->time_running = 1000;
	return pc;
}

Test(uaccess_read, counter_plus_offset_and_the_register_asked_for)
{
	struct perf_event_mmap_page *pc = page();
	struct fake f = { .pc = pc, .pmc = 1234 };
	struct kp_ua_value v;

	pc->offset = 100;
	cr_assert_eq(kp_ua_read_page(pc, fake_pmc, fake_ts, &f, &v), 0);
	cr_assert_eq(v.count, 1334);
	cr_assert_eq(f.last_idx, 2, "index 3 is hardware counter 2");
	cr_assert_eq(v.enabled, 1000);
	cr_assert_eq(v.running, 1000);
	cr_assert_eq(f.ts_calls, 0, "no time base read when the event ran all the time");
	free(pc);
}

Test(uaccess_read, a_48_bit_counter_is_sign_extended)
{
	struct perf_event_mmap_page *pc = page();
	/* the kernel starts the counter at -100 (in 48 bits) and compensates in offset */
	struct fake f = { .pc = pc, .pmc = (1ULL << 48) - 100 };
	struct kp_ua_value v;

	pc->offset = 5000;
	cr_assert_eq(kp_ua_read_page(pc, fake_pmc, fake_ts, &f, &v), 0);
	cr_assert_eq(v.count, 4900);
	/* bits above the width are not the counter's */
	f.pmc = (0xabcdULL << 48) | 25;
	cr_assert_eq(kp_ua_read_page(pc, fake_pmc, fake_ts, &f, &v), 0);
	cr_assert_eq(v.count, 5025);
	/* a full 64-bit counter is taken as it is */
	pc->pmc_width = 64;
	f.pmc = (uint64_t)-100;
	cr_assert_eq(kp_ua_read_page(pc, fake_pmc, fake_ts, &f, &v), 0);
	cr_assert_eq(v.count, 4900);
	free(pc);
}

Test(uaccess_read, retries_when_the_kernel_updates_the_page)
{
	struct perf_event_mmap_page *pc = page();
	struct fake f = { .pc = pc, .pmc = 40, .bump_at = 1 };
	struct kp_ua_value v;

	pc->offset = 100;
	cr_assert_eq(kp_ua_read_page(pc, fake_pmc, fake_ts, &f, &v), 0);
	cr_assert_eq(f.pmc_calls, 2, "the torn read is redone");
	cr_assert_eq(v.count, 7040, "the second snapshot: offset 7000 + 40");
	cr_assert_eq(f.last_idx, 4, "index 5 after the move");
	free(pc);
}

Test(uaccess_read, multiplexed_times_are_brought_up_to_now)
{
	struct perf_event_mmap_page *pc = page();
	struct fake f = { .pc = pc, .pmc = 10, .ts = 5000 };
	struct kp_ua_value v;

	pc->time_enabled = 1000;
	pc->time_running = 400;
	/* 2 ns per cycle: mult 2048 >> shift 10 */
	pc->time_mult = 2048;
	pc->time_shift = 10;
	pc->time_offset = (uint64_t)-9000;
	cr_assert_eq(kp_ua_read_page(pc, fake_pmc, fake_ts, &f, &v), 0);
	/* 5000 cycles = 10000 ns, minus 9000: 1000 ns since the page was written */
	cr_assert_eq(f.ts_calls, 1);
	cr_assert_eq(v.enabled, 2000);
	cr_assert_eq(v.running, 1400);
	/* a short time base (cap_user_time_short): cycles wrap at time_mask */
	pc->cap_user_time_short = 1;
	pc->time_cycles = 4096;
	pc->time_mask = 0xfff;
	pc->time_offset = 0;
	f.ts = 0x10000 + 100; /* 4096 + ((65636 - 4096) & 0xfff) = 4196 cycles */
	cr_assert_eq(kp_ua_read_page(pc, fake_pmc, fake_ts, &f, &v), 0);
	cr_assert_eq(v.enabled, 1000 + 8392);
	cr_assert_eq(v.running, 400 + 8392);
	/* without cap_user_time the page's times are taken as they are */
	pc->cap_user_time = 0;
	pc->cap_user_time_short = 0;
	cr_assert_eq(kp_ua_read_page(pc, fake_pmc, fake_ts, &f, &v), 0);
	cr_assert_eq(v.enabled, 1000);
	cr_assert_eq(v.running, 400);
	free(pc);
}

Test(uaccess_read, no_rdpmc_and_no_counter)
{
	struct perf_event_mmap_page *pc = page();
	struct fake f = { .pc = pc };
	struct kp_ua_value v;

	pc->cap_user_rdpmc = 0;
	cr_assert_eq(kp_ua_read_page(pc, fake_pmc, fake_ts, &f, &v), -ENODEV);
	pc->cap_user_rdpmc = 1;
	pc->index = 0;
	cr_assert_eq(kp_ua_read_page(pc, fake_pmc, fake_ts, &f, &v), -EAGAIN);
	cr_assert_eq(f.pmc_calls, 0, "no register read for an event that is not on one");
	free(pc);
}

/* ---- the system checks ---- */

static char tmp_root[64];

static void tree(const char *rel, const char *content)
{
	char path[512], cmd[600];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", tmp_root, rel);
	snprintf(cmd, sizeof(cmd), "mkdir -p $(dirname %s)", path);
	cr_assert_eq(system(cmd), 0);
	f = fopen(path, "w");
	cr_assert_not_null(f);
	fputs(content, f);
	fclose(f);
}

static void tmp_setup(void)
{
	snprintf(tmp_root, sizeof(tmp_root), "/tmp/kperf-ua-%d", getpid());
	mkdir(tmp_root, 0755);
}

static void tmp_teardown(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmp_root);
	if (system(cmd)) {
		/* a leftover in /tmp */
	}
}

Test(uaccess_check, x86_rdpmc_attribute, .init = tmp_setup, .fini = tmp_teardown)
{
	char path[512];

	cr_assert_lt(kp_ua_check_x86(tmp_root), 0);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_CHECK_USER_ACCESS);
	cr_assert(strstr(Perror(), "no core PMU"), "%s", Perror());
	tree("bus/event_source/devices/cpu/rdpmc", "0\n");
	cr_assert_lt(kp_ua_check_x86(tmp_root), 0);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_CHECK_USER_ACCESS);
	cr_assert(strstr(Perror(), "echo 1 >") && strstr(Perror(), "cpu/rdpmc"), "%s", Perror());
	tree("bus/event_source/devices/cpu/rdpmc", "1\n");
	cr_assert_eq(kp_ua_check_x86(tmp_root), 0);
	/* a hybrid part names its big cores' PMU cpu_core */
	snprintf(path, sizeof(path), "%s/bus/event_source/devices/cpu/rdpmc", tmp_root);
	cr_assert_eq(unlink(path), 0);
	tree("bus/event_source/devices/cpu_core/rdpmc", "2\n");
	cr_assert_eq(kp_ua_check_x86(tmp_root), 0);
	cr_assert_eq(kp_ua_check_x86(fx_path("x86_2s")), 0, "the fixture allows rdpmc");
}

Test(uaccess_check, arm64_kernel_and_sysctl, .init = tmp_setup, .fini = tmp_teardown)
{
	char sysctl[128];

	snprintf(sysctl, sizeof(sysctl), "%s/perf_user_access", tmp_root);
	cr_assert_lt(kp_ua_check_arm64(sysctl, "6.1.0-28-arm64"), 0);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_CHECK_USER_ACCESS);
	cr_assert(strstr(Perror(), "Linux 6.6 or later (this is 6.1.0-28-arm64)"), "%s", Perror());
	cr_assert_lt(kp_ua_check_arm64(sysctl, "6.6.0"), 0);
	cr_assert(strstr(Perror(), "is missing"), "%s", Perror());
	tree("perf_user_access", "0\n");
	cr_assert_lt(kp_ua_check_arm64(sysctl, "6.6.0"), 0);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_CHECK_USER_ACCESS);
	cr_assert(strstr(Perror(), "sysctl kernel.perf_user_access=1"), "%s", Perror());
	tree("perf_user_access", "1\n");
	cr_assert_eq(kp_ua_check_arm64(sysctl, "6.6.0-108.0.0.113.oe2403.aarch64"), 0);
	cr_assert_eq(kp_ua_check_arm64(sysctl, "7.0.1"), 0);
}

/* ---- enableUserAccess through PmuOpen ---- */

static int ua_open(enum PmuTaskType type, int pid, int cpu, struct EvtAttr *ea)
{
	char *evts[] = { "task-clock" };
	int pids[] = { pid }, cpus[] = { cpu };
	struct PmuAttr a = { .evtList = evts,
			     .numEvt = 1,
			     .pidList = pids,
			     .numPid = 1,
			     .cpuList = cpus,
			     .numCpu = 1,
			     .evtAttr = ea,
			     .numEvtAttr = ea ? 1 : 0,
			     .enableUserAccess = 1,
			     .useFreq = 1,
			     .freq = 100 };

	return PmuOpen(type, &a);
}

/* both modes at once, which only the first check refuses (no BPF is loaded) */
static int ua_open_bpf(void)
{
	char *evts[] = { "task-clock" };
	int pids[] = { 0 }, cpus[] = { -1 };
	struct PmuAttr a = { .evtList = evts,
			     .numEvt = 1,
			     .pidList = pids,
			     .numPid = 1,
			     .cpuList = cpus,
			     .numCpu = 1,
			     .enableUserAccess = 1,
			     .enableBpf = 1 };

	return PmuOpen(COUNTING, &a);
}

Test(uaccess_open, libkperf_conditions_each_with_its_message)
{
	struct EvtAttr ea = { .groupId = 1 };

	cr_assert_eq(ua_open(COUNTING, getpid(), -1, NULL), -1);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_CHECK_USER_ACCESS);
	cr_assert(strstr(Perror(), "pidList must be {0}"), "%s", Perror());
	cr_assert_eq(ua_open(COUNTING, 0, 0, NULL), -1);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_CHECK_USER_ACCESS);
	cr_assert(strstr(Perror(), "cpuList must be {-1}"), "%s", Perror());
	cr_assert_eq(ua_open(SAMPLING, 0, -1, NULL), -1);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_CHECK_USER_ACCESS);
	cr_assert(strstr(Perror(), "COUNTING only"), "%s", Perror());
	cr_assert_eq(ua_open(COUNTING, 0, -1, &ea), -1);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_CHECK_USER_ACCESS);
	cr_assert(strstr(Perror(), "evtAttr"), "%s", Perror());
	cr_assert_eq(ua_open_bpf(), -1);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_CHECK_USER_ACCESS);
	cr_assert(strstr(Perror(), "does not combine with enableBpf"), "%s", Perror());
}

Test(uaccess_open, this_machine_has_no_counters_to_read)
{
	fx_use(NULL);
	cr_assert_eq(ua_open(COUNTING, 0, -1, NULL), -1);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_CHECK_USER_ACCESS);
	cr_assert(strstr(Perror(), "no core PMU") && strstr(Perror(), "/sys/bus"), "%s", Perror());
}

/* With a sysfs that allows rdpmc, the task opens: a software event has no hardware
 * counter, which PmuEnable finds in the mmap page (libkperf's COUNTER_INDEX_IS_ZERO). A
 * read of a disabled task goes through read(2). */
Test(uaccess_open, a_software_event_has_no_counter_index)
{
	struct PmuData *d;
	int pd, n;

	fx_use("x86_2s");
	pd = ua_open(COUNTING, 0, -1, NULL);
	cr_assert_gt(pd, 0, "%d %s", Perrorno(), Perror());
	cr_assert_eq(PmuEnable(pd), -1);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_COUNTER_INDEX_IS_ZERO);
	cr_assert(strstr(Perror(), "'task-clock' has no hardware counter"), "%s", Perror());
	n = PmuRead(pd, &d);
	cr_assert_eq(n, 1, "%s", Perror());
	cr_assert_str_eq(d[0].evt, "task-clock");
	cr_assert_eq(d[0].pid, getpid());
	cr_assert_eq(d[0].tid, gettid());
	cr_assert_eq(d[0].cpu, -1);
	cr_assert_eq(d[0].groupId, -1);
	cr_assert_lt(d[0].count, 5000000, "enabled only for a moment: %lu ns", d[0].count);
	PmuDataFree(d);
	PmuClose(pd);
	fx_use(NULL);
}

/* ---- hardware metrics ---- */

Test(hwmetric, cpi_and_l3_as_libkperf_opens_them)
{
	unsigned base[] = { 1000000, 100000 };
	double thr[] = { 0.8, 0.2 };
	struct PmuHwMetricAttr a = { PMU_HWM_CPI | PMU_HWM_L3_CACHE_MISS, base, thr, 0 };
	const char *evts[32];
	struct EvtAttr ea[32];

	cr_assert_eq(kp_hwmetric_events(&a, evts, ea, 32), 4);
	cr_assert_str_eq(evts[0], "armv8_pmuv3_0/inst_retired/");
	cr_assert_str_eq(evts[1], "armv8_pmuv3_0/cpu_cycles/");
	cr_assert_str_eq(evts[2], "LLC-loads");
	cr_assert_str_eq(evts[3], "LLC-load-misses");
	cr_assert_eq(ea[0].groupId, 1);
	cr_assert_eq(ea[1].groupId, 1);
	cr_assert_eq(ea[2].groupId, 2);
	cr_assert_eq(ea[3].groupId, 2);
	cr_assert_eq(ea[0].period, 1000000);
	cr_assert_eq(ea[1].period, 800000, "base period times the threshold");
	cr_assert_eq(ea[2].period, 100000);
	cr_assert_eq(ea[3].period, 20000);
	cr_assert(!ea[0].excludeUser && !ea[0].excludeKernel);
}

Test(hwmetric, every_metric_in_bit_order)
{
	static const char *const want[] = {
		"armv8_pmuv3_0/inst_retired/",
		"armv8_pmuv3_0/cpu_cycles/",
		"cache-references",
		"cache-misses",
		"LLC-loads",
		"LLC-load-misses",
		"armv8_pmuv3_0/l2d_cache/",
		"armv8_pmuv3_0/l2d_cache_refill/",
		"L1-dcache-loads",
		"L1-dcache-load-misses",
		"L1-icache-loads",
		"L1-icache-load-misses",
		"dTLB-loads",
		"dTLB-load-misses",
		"iTLB-loads",
		"iTLB-load-misses",
		"branch-loads",
		"branch-load-misses",
	};
	unsigned base[9];
	double thr[9];
	struct PmuHwMetricAttr a = { 0x1ff, base, thr, 0 };
	const char *evts[32];
	struct EvtAttr ea[32];
	int i;

	for (i = 0; i < 9; i++) {
		base[i] = 1000 * (unsigned)(i + 1);
		thr[i] = 0.5;
	}
	cr_assert_eq(kp_hwmetric_events(&a, evts, ea, 32), 18);
	for (i = 0; i < 18; i++) {
		cr_assert_str_eq(evts[i], want[i]);
		cr_assert_eq(ea[i].groupId, i / 2 + 1);
		cr_assert_eq(ea[i].period,
			     i % 2 ? 500 * (unsigned)(i / 2 + 1) : 1000 * (unsigned)(i / 2 + 1));
	}
	/* the i-th list entry belongs to the i-th metric asked for, not to bit i */
	a.metric = PMU_HWM_DTLB_LOAD_MISS;
	cr_assert_eq(kp_hwmetric_events(&a, evts, ea, 32), 2);
	cr_assert_str_eq(evts[0], "dTLB-loads");
	cr_assert_eq(ea[0].period, 1000);
	cr_assert_eq(ea[1].period, 500);
}

Test(hwmetric, names_resolve_on_a_kunpeng)
{
	static const char *const raw[][2] = {
		{ "armv8_pmuv3_0/inst_retired/", "0x8" },
		{ "armv8_pmuv3_0/cpu_cycles/", "0x11" },
		{ "armv8_pmuv3_0/l2d_cache/", "0x16" },
		{ "armv8_pmuv3_0/l2d_cache_refill/", "0x17" },
	};
	struct kp_event ev;
	size_t i;

	fx_use("kunpeng920");
	for (i = 0; i < KP_ARRAY_SIZE(raw); i++) {
		cr_assert_eq(kp_event_parse(raw[i][0], false, &ev), 0, "%s: %s", raw[i][0],
			     Perror());
		cr_assert_eq(ev.attr.type, 4200);
		cr_assert_eq(ev.attr.config, strtoull(raw[i][1], NULL, 16), "%s", raw[i][0]);
		kp_event_free(&ev);
	}
	cr_assert_eq(kp_event_parse("LLC-load-misses", false, &ev), 0);
	cr_assert_eq(ev.attr.type, PERF_TYPE_HW_CACHE);
	kp_event_free(&ev);
	fx_use(NULL);
}

Test(hwmetric, bad_attributes_each_with_its_message)
{
	unsigned base[] = { 1000 };
	double thr[] = { 0.5 }, neg[] = { -1 }, huge[] = { 1e7 };
	struct PmuHwMetricAttr a = { PMU_HWM_CPI, base, NULL, 0 };
	const char *evts[32];
	struct EvtAttr ea[32];

	cr_assert_lt(kp_hwmetric_events(&a, evts, ea, 32), 0);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_INVALID_HWMETRIC_ATTR);
	cr_assert(strstr(Perror(), "thresholdList is NULL"), "%s", Perror());
	a = (struct PmuHwMetricAttr){ PMU_HWM_CPI, NULL, thr, 0 };
	cr_assert_lt(kp_hwmetric_events(&a, evts, ea, 32), 0);
	cr_assert(strstr(Perror(), "basePeriodList is NULL"), "%s", Perror());
	a = (struct PmuHwMetricAttr){ PMU_HWM_CPI | (1UL << 9), base, thr, 0 };
	cr_assert_lt(kp_hwmetric_events(&a, evts, ea, 32), 0);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_INVALID_HWMETRIC_ATTR);
	cr_assert(strstr(Perror(), "metric 0x201 has bits that are no PmuHwMetric (0x200)"), "%s",
		  Perror());
	a.metric = 0;
	cr_assert_lt(kp_hwmetric_events(&a, evts, ea, 32), 0);
	cr_assert(strstr(Perror(), "metric is 0"), "%s", Perror());
	a = (struct PmuHwMetricAttr){ PMU_HWM_CPI, base, neg, 0 };
	cr_assert_lt(kp_hwmetric_events(&a, evts, ea, 32), 0);
	cr_assert(strstr(Perror(), "thresholdList[0] is -1"), "%s", Perror());
	a.thresholdList = huge;
	cr_assert_lt(kp_hwmetric_events(&a, evts, ea, 32), 0);
	cr_assert(strstr(Perror(), "positive 32-bit number"), "%s", Perror());
	cr_assert_lt(kp_hwmetric_events(NULL, evts, ea, 32), 0);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_INVALID_HWMETRIC_ATTR);
}

Test(hwmetric, kernel_config, .init = tmp_setup, .fini = tmp_teardown)
{
	char path[128];

	snprintf(path, sizeof(path), "%s/config", tmp_root);
	cr_assert(!kp_hwmetric_kconfig(path), "no file");
	tree("config", "CONFIG_ARM64=y\n# CONFIG_HISILICON_HW_METRIC is not set\n");
	cr_assert(!kp_hwmetric_kconfig(path));
	tree("config", "CONFIG_HISILICON_HW_METRIC=m\nCONFIG_HISILICON_HW_METRIC_X=y\n");
	cr_assert(!kp_hwmetric_kconfig(path));
	tree("config", "CONFIG_ARM64=y\nCONFIG_HISILICON_HW_METRIC=y\nCONFIG_X=y\n");
	cr_assert(kp_hwmetric_kconfig(path));
}

Test(hwmetric, refused_on_this_machine_with_libkperfs_codes)
{
	unsigned base[] = { 1000000 };
	double thr[] = { 0.8 };
	struct PmuHwMetricAttr a = { PMU_HWM_CPI, base, thr, 0 };
	char *evts[] = { "cpu-clock" };
	struct PmuAttr pa = { .evtList = evts, .numEvt = 1, .enableHwMetric = 1 };

	/* libkperf refuses the whole interface on x86, before looking at the attributes */
	cr_assert_eq(PmuOpenWithHWMetric(&a), -1);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_INTERFACE_NOT_SUPPORT_X86);
	cr_assert_eq(PmuOpenWithHWMetric(NULL), -1);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_INTERFACE_NOT_SUPPORT_X86);
	cr_assert_eq(PmuOpen(COUNTING, &pa), -1);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_NOT_SUPPORT_HWMETRIC);
	cr_assert(strstr(Perror(), "SAMPLING only"), "%s", Perror());
	cr_assert_eq(PmuOpen(SAMPLING, &pa), -1);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_NOT_SUPPORT_HWMETRIC);
	cr_assert(strstr(Perror(), "CONFIG_HISILICON_HW_METRIC=y") &&
			  strstr(Perror(), "/boot/config-"),
		  "%s", Perror());
}

/* ---- evtAttr ---- */

Test(evt_attr_checks, libkperfs_code_for_a_bad_list)
{
	char *evts[] = { "cpu-clock" };
	struct EvtAttr ea[2] = { { .groupId = -1 }, { .groupId = -1 } };
	struct PmuAttr a = { .evtList = evts, .numEvt = 1, .numEvtAttr = 1 };

	cr_assert_eq(PmuOpen(COUNTING, &a), -1);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_INVALID_EVTATTR);
	cr_assert(strstr(Perror(), "evtAttr is NULL but numEvtAttr is 1"), "%s", Perror());
	a.evtAttr = ea;
	a.numEvtAttr = 2;
	cr_assert_eq(PmuOpen(SAMPLING, &a), -1);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_INVALID_EVTATTR);
	cr_assert(strstr(Perror(), "numEvtAttr (2) is larger than numEvt (1)"), "%s", Perror());
}
