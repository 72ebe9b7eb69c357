/*
 * test_uncore_open.c - the whole device-metric path on real counters: PmuDeviceOpen ->
 * PmuOpen -> PmuRead -> PmuGetDevMetric. This machine has no uncore PMU, so a sysfs tree
 * built here (KPERF_BPF_SYSFS) presents two "DDRC" PMUs whose type and config are the
 * kernel's software cpu-clock, each with a cpumask of one real CPU: the counters are real,
 * the names and the placement are those of a Kunpeng DDRC.
 */
#include <criterion/criterion.h>
#include <limits.h>
#include <sys/stat.h>

#include "kperf/kperf.h"
#include "testutil.h"

static char root[] = "/tmp/kperf-uncore-XXXXXX";

static void put(const char *rel, const char *text)
{
	char path[PATH_MAX], *p;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	for (p = path + strlen(root) + 1; (p = strchr(p, '/')); p++) {
		*p = '\0';
		mkdir(path, 0755);
		*p = '/';
	}
	f = fopen(path, "w");
	cr_assert_not_null(f, "%s", path);
	fputs(text, f);
	fclose(f);
}

/* copy a small file of the real /sys into the tree */
static void copy_sys(const char *rel)
{
	char path[PATH_MAX], buf[4096] = "";
	FILE *f;

	snprintf(path, sizeof(path), "/sys/%s", rel);
	f = fopen(path, "r");
	cr_assert_not_null(f, "%s", path);
	cr_assert_not_null(fgets(buf, sizeof(buf), f));
	fclose(f);
	put(rel, buf);
}

static void cleanup(void)
{
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	if (system(cmd)) {
		/* nothing more to do in a test teardown */
	}
}

Test(uncore_open, ddr_metric_from_real_counters, .fini = cleanup)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN), c;
	int last = ncpu > 1 ? 1 : 0, pd, n, m, i;
	struct PmuDeviceAttr attr = { PMU_DDR_READ_BW };
	struct PmuDeviceData *dev;
	struct PmuData *d;
	uint64_t sum[2] = { 0, 0 };
	char rel[128], val[32];

	cr_assert_not_null(mkdtemp(root));
	copy_sys("devices/system/cpu/possible");
	copy_sys("devices/system/cpu/online");
	for (c = 0; c < ncpu; c++) {
		snprintf(rel, sizeof(rel), "devices/system/cpu/cpu%ld/topology/physical_package_id",
			 c);
		put(rel, "0\n");
		snprintf(rel, sizeof(rel), "devices/system/cpu/cpu%ld/topology/core_id", c);
		snprintf(val, sizeof(val), "%ld\n", c);
		put(rel, val);
	}
	snprintf(val, sizeof(val), "0-%ld\n", ncpu - 1);
	put("devices/system/node/node0/cpulist", val);
	for (i = 0; i < 2; i++) {
		char dir[64];

		snprintf(dir, sizeof(dir), "bus/event_source/devices/hisi_sccl1_ddrc%d", i);
		snprintf(rel, sizeof(rel), "%s/type", dir);
		put(rel, "1\n"); /* PERF_TYPE_SOFTWARE */
		snprintf(rel, sizeof(rel), "%s/cpumask", dir);
		put(rel, i && last ? "1\n" : "0\n");
		snprintf(rel, sizeof(rel), "%s/format/event", dir);
		put(rel, "config:0-63\n");
		snprintf(rel, sizeof(rel), "%s/events/flux_rd", dir);
		put(rel, "config=0x0\n"); /* PERF_COUNT_SW_CPU_CLOCK */
	}
	setenv("KPERF_BPF_SYSFS", root, 1);

	pd = PmuDeviceOpen(&attr, 1);
	cr_assert_gt(pd, 0, "%s", Perror());
	cr_assert_eq(PmuEnable(pd), 0, "%s", Perror());
	tu_sleep_ms(50);
	cr_assert_eq(PmuDisable(pd), 0, "%s", Perror());
	n = PmuRead(pd, &d);
	cr_assert_eq(n, 2, "one record per DDRC, on the CPU of its cpumask: %d (%s)", n, Perror());
	for (i = 0; i < n; i++) {
		int ch = !strcmp(d[i].evt, "hisi_sccl1_ddrc1/flux_rd/");

		cr_assert(ch || !strcmp(d[i].evt, "hisi_sccl1_ddrc0/flux_rd/"), "%s", d[i].evt);
		cr_assert_eq(d[i].cpu, ch ? last : 0);
		cr_assert_gt(d[i].count, 0);
		sum[ch] += d[i].count;
	}
	m = PmuGetDevMetric(d, (unsigned)n, &attr, 1, &dev);
	cr_assert_eq(m, 2, "%s", Perror());
	for (i = 0; i < 2; i++) {
		cr_assert_eq(dev[i].metric, PMU_DDR_READ_BW);
		cr_assert_eq(dev[i].mode, PMU_METRIC_CHANNEL);
		cr_assert_eq(dev[i].socketId, 0);
		cr_assert_eq(dev[i].ddrNumaId, 0);
		cr_assert_eq(dev[i].channelId, (unsigned)i);
		cr_assert_eq(dev[i].count, 32.0 * (double)sum[i]);
	}
	DevDataFree(dev);
	PmuDataFree(d);
	PmuClose(pd);
}
