/*
 * event_list.c - PmuEventList: core events are exactly those this kernel opens, PMU
 * discovery on the fixture trees (kunpeng920 and x86_2s, written by tests/fixtures/gen.sh;
 * pmu_kinds for the edge cases of classification), caching and freeing. The tracepoint
 * list needs tracefs (root): tests/integration/tp_fields.c.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/perf_event.h>

#include "core/core.h"
#include "events/events.h"
#include "fixtures/fixture.h"
#include "kperf/pcerrc.h"
#include "kperf/kperf.h"

static bool in_list(const char **names, unsigned n, const char *name)
{
	unsigned i;

	for (i = 0; i < n; i++)
		if (!strcmp(names[i], name))
			return true;
	return false;
}

/* the test's own opinion, independent of the library: can this kernel open it? */
static bool kernel_opens(__u32 type, __u64 config)
{
	struct perf_event_attr a;
	int fd;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = type;
	a.config = config;
	a.disabled = 1;
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
	if (fd >= 0) {
		close(fd);
		return true;
	}
	return errno == EACCES || errno == EPERM;
}

Test(event_list, core_lists_exactly_what_the_kernel_opens)
{
	static const struct {
		const char *name;
		__u32 type;
		__u64 config;
	} probes[] = {
		{ "cpu-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK },
		{ "task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK },
		{ "page-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS },
		{ "context-switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES },
		{ "cs", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES },
		{ "dummy", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_DUMMY },
		{ "cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES },
		{ "instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS },
		{ "branch-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES },
		{ "L1-dcache-load-misses", PERF_TYPE_HW_CACHE,
		  PERF_COUNT_HW_CACHE_L1D | PERF_COUNT_HW_CACHE_OP_READ << 8 |
			  PERF_COUNT_HW_CACHE_RESULT_MISS << 16 },
	};
	const char **names;
	unsigned n = 0, i;

	names = PmuEventList(CORE_EVENT, &n);
	cr_assert_not_null(names, "%s", Perror());
	cr_expect_eq(Perrorno(), SUCCESS);
	cr_expect_null(names[n], "NULL-terminated");
	for (i = 0; i < sizeof(probes) / sizeof(probes[0]); i++)
		cr_expect_eq(in_list(names, n, probes[i].name),
			     kernel_opens(probes[i].type, probes[i].config), "%s", probes[i].name);
	/* this machine (a VM without a PMU): software events only */
	if (!kernel_opens(PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES)) {
		cr_expect(!in_list(names, n, "cycles"));
		cr_expect(!in_list(names, n, "LLC-loads"));
	}
	cr_expect_str_eq(names[0], "cpu-clock", "software events come first, in table order");
	/* every listed name is one the parser accepts */
	for (i = 0; i < n; i++) {
		struct kp_event ev;

		cr_expect_eq(kp_event_parse(names[i], false, &ev), 0, "%s: %s", names[i], Perror());
		kp_event_free(&ev);
	}
}

Test(event_list, uncore_of_a_kunpeng_920)
{
	const char **names;
	unsigned n = 0, i, ddrc = 0;
	struct kp_event ev;

	fx_use("kunpeng920");
	names = PmuEventList(UNCORE_EVENT, &n);
	cr_assert_not_null(names, "%s", Perror());
	/* 2 PCIe PMUs x 14, 4 SCCLs x (4 DDRC x 2 + 2 HHA x 3 + 2 L3C x 1), 1 SMMU PMCG x 2 */
	cr_assert_eq(n, 94, "%u events", n);
	cr_expect_null(names[n]);
	cr_expect_str_eq(names[0], "hisi_pcie0_core0/rx_mrd_cnt/");
	cr_expect_str_eq(names[n - 1], "smmuv3_pmcg_148020/transaction/");
	for (i = 0; i < n; i++) {
		if (i)
			cr_expect_lt(strcmp(names[i - 1], names[i]), 0, "sorted: %s", names[i]);
		ddrc += strstr(names[i], "_ddrc") != NULL;
		/* every name is one the parser opens on the fixture's PMU */
		cr_expect_eq(kp_event_parse(names[i], false, &ev), 0, "%s: %s", names[i], Perror());
		cr_expect(ev.uncore, "%s", names[i]);
		kp_event_free(&ev);
	}
	cr_expect_eq(ddrc, 32);
	cr_expect(in_list(names, n, "hisi_sccl1_ddrc0/flux_rd/"));
	cr_expect(in_list(names, n, "hisi_sccl7_hha1/rx_sccl/"));
	cr_expect(!in_list(names, n, "armv8_pmuv3_0/cpu_cycles/"), "the core PMU is not uncore");
}

Test(event_list, core_pmu_events_of_the_fixtures)
{
	const char **names;
	unsigned n = 0;

	fx_use("kunpeng920");
	names = PmuEventList(CORE_EVENT, &n);
	cr_assert_not_null(names, "%s", Perror());
	cr_assert_geq(n, 6);
	/* the core PMU's sysfs events come last, sorted, not probed (a fixture) */
	cr_expect_str_eq(names[n - 6], "armv8_pmuv3_0/cpu_cycles/");
	cr_expect_str_eq(names[n - 5], "armv8_pmuv3_0/inst_retired/");
	cr_expect_str_eq(names[n - 4], "armv8_pmuv3_0/l2d_cache/");
	cr_expect_str_eq(names[n - 3], "armv8_pmuv3_0/l2d_cache_refill/");
	cr_expect_str_eq(names[n - 2], "armv8_pmuv3_0/ll_cache/");
	cr_expect_str_eq(names[n - 1], "armv8_pmuv3_0/ll_cache_miss/");
	cr_expect(in_list(names, n, "cpu-clock"), "generic events are probed on this kernel");
	PmuEventListFree();

	fx_use("x86_2s");
	names = PmuEventList(CORE_EVENT, &n);
	cr_assert_not_null(names, "%s", Perror());
	cr_expect_str_eq(names[n - 3], "cpu/cache-misses/");
	cr_expect_str_eq(names[n - 2], "cpu/cache-references/");
	cr_expect_str_eq(names[n - 1], "cpu/cpu-cycles/");
	names = PmuEventList(UNCORE_EVENT, &n);
	cr_assert_eq(n, 12, "6 IMCs x 2, without their .scale and .unit files");
	cr_expect_str_eq(names[0], "uncore_imc_0/cas_count_read/");
	cr_expect_str_eq(names[11], "uncore_imc_5/cas_count_write/");
}

Test(event_list, how_pmus_are_classified)
{
	const char **names;
	unsigned n = 0;

	fx_use("pmu_kinds");
	names = PmuEventList(UNCORE_EVENT, &n);
	cr_assert_not_null(names, "%s", Perror());
	/* power: a cpumask, and its .scale/.unit files are not events; breakpoint: no events */
	cr_assert_eq(n, 1);
	cr_expect_str_eq(names[0], "power/energy-pkg/");
	names = PmuEventList(CORE_EVENT, &n);
	cr_assert_geq(n, 2);
	/* type 4 (PERF_TYPE_RAW) makes a core PMU whatever its name */
	cr_expect_str_eq(names[n - 2], "armv7_cortex_a15/cpu_cycles/");
	cr_expect_str_eq(names[n - 1], "armv7_cortex_a15/inst_retired/");
	/* msr has events but neither a cpumask, a cpus file nor type 4: in no list */
	cr_expect(!in_list(names, n, "msr/tsc/"));
	names = PmuEventList(ALL_EVENT, &n);
	cr_expect(names == NULL || !in_list(names, n, "msr/tsc/"));
}

Test(event_list, no_pmu_directory_is_an_empty_list)
{
	const char **names;
	unsigned n = 99;

	setenv("KPERF_BPF_SYSFS", "/nonexistent/kperf-sysfs", 1);
	names = PmuEventList(UNCORE_EVENT, &n);
	cr_assert_not_null(names, "%s", Perror());
	cr_expect_eq(n, 0);
	cr_expect_null(names[0]);
	cr_expect_eq(Perrorno(), SUCCESS);
}

Test(event_list, cached_and_freed)
{
	const char **a, **b, **c;
	unsigned n1 = 0, n2 = 0, n3 = 0;

	a = PmuEventList(CORE_EVENT, &n1);
	b = PmuEventList(CORE_EVENT, &n2);
	cr_assert_not_null(a);
	cr_expect_eq(a, b, "repeated calls return the same array");
	cr_expect_eq(n1, n2);
	cr_expect_not_null(PmuEventList(CORE_EVENT, NULL), "numEvt may be NULL");
	PmuEventListFree();
	PmuEventListFree(); /* twice is harmless */
	c = PmuEventList(CORE_EVENT, &n3);
	cr_assert_not_null(c);
	cr_expect_eq(n3, n1);
	cr_expect_str_eq(c[0], "cpu-clock");
	/* released through the wrong *Free: the library notices and builds it again */
	PmuTraceDataFree((struct PmuTraceData *)c);
	c = PmuEventList(CORE_EVENT, &n3);
	cr_assert_not_null(c);
	cr_expect_eq(n3, n1);
	cr_expect_str_eq(c[0], "cpu-clock");
	PmuEventListFree();
}

Test(event_list, a_new_sysfs_root_rebuilds_and_keeps_the_old_list)
{
	const char **fixture, **none;
	unsigned n1 = 0, n2 = 9;

	fx_use("kunpeng920");
	fixture = PmuEventList(UNCORE_EVENT, &n1);
	cr_assert_eq(n1, 94);
	setenv("KPERF_BPF_SYSFS", "/nonexistent/kperf-sysfs", 1);
	none = PmuEventList(UNCORE_EVENT, &n2);
	cr_expect_eq(n2, 0);
	cr_expect_neq(fixture, none);
	/* whoever holds the first list can still read it */
	cr_expect_str_eq(fixture[93], "smmuv3_pmcg_148020/transaction/");
	PmuEventListFree();
}

Test(event_list, invalid_type)
{
	unsigned n = 7;

	cr_expect_null(PmuEventList((enum PmuEventType)9, &n));
	cr_expect_eq(n, 0);
	cr_expect_eq(Perrorno(), LIBPERF_ERR_QUERY_EVENT_TYPE_INVALID);
	cr_expect_str_eq(Perror(), "event type 9 is not one of CORE_EVENT (0), UNCORE_EVENT (1), "
				   "TRACE_EVENT (2), ALL_EVENT (3)");
	cr_expect_null(PmuEventList((enum PmuEventType) - 1, &n));
	cr_expect_eq(Perrorno(), LIBPERF_ERR_QUERY_EVENT_TYPE_INVALID);
}
