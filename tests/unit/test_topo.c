/*
 * test_topo.c - CPU topology and frequency (user/topo): exact values on the fixture trees
 * (a 2-socket Kunpeng 920, a 2-socket x86 server), on a tree that grows a CPU, and on this
 * machine against what the test reads from /sys and /proc itself.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/core.h"
#include "fixtures/fixture.h"
#include "kperf/kperf.h"
#include "topo/topo.h"

static void use(const char *fixture)
{
	fx_use(fixture);
	kp_topo_reset();
}

static void assert_list(const unsigned *got, int n, const unsigned *want, int nwant)
{
	int i;

	cr_assert_eq(n, nwant, "got %d cpus, want %d", n, nwant);
	for (i = 0; i < n; i++)
		cr_assert_eq(got[i], want[i], "cpu #%d: got %u, want %u", i, got[i], want[i]);
}

static void assert_ilist(const int *got, int n, const int *want, int nwant)
{
	int i;

	cr_assert_eq(n, nwant, "got %d cpus, want %d", n, nwant);
	for (i = 0; i < n; i++)
		cr_assert_eq(got[i], want[i], "cpu #%d: got %d, want %d", i, got[i], want[i]);
}

/* ---- Kunpeng 920: 2 sockets, 4 numa nodes, clusters of 4 cores ---- */

Test(topo, kunpeng_cpu_topology)
{
	struct CpuTopology t;
	struct kp_cpu_info info;

	use("kunpeng920");
	cr_assert_eq(kp_topo_cpu_count(), 32);
	cr_assert_eq(kp_topo_cpu(13, &t), 0);
	cr_assert_eq(t.coreId, 13);
	cr_assert_eq(t.numaId, 1);
	cr_assert_eq(t.socketId, 0);
	cr_assert_eq(kp_topo_cpu(21, &t), 0);
	cr_assert_eq(t.coreId, 21);
	cr_assert_eq(t.numaId, 2);
	cr_assert_eq(t.socketId, 1);
	cr_assert_eq(kp_topo_cpu(31, &t), 0);
	cr_assert_eq(t.numaId, 3);
	cr_assert_eq(t.socketId, 1);

	cr_assert_eq(kp_topo_cpu_info(21, &info), 0);
	cr_assert_eq(info.cpu, 21);
	cr_assert_eq(info.coreId, 5); /* core_id within the package */
	cr_assert_eq(info.socketId, 1);
	cr_assert_eq(info.numaId, 2);
	cr_assert_eq(info.dieId, 0);
	cr_assert_eq(info.clusterId, 5); /* raw cluster_id 1 of socket 1 -> dense index 5 */
	cr_assert(info.online);

	cr_assert_eq(kp_topo_cluster_source(), KP_CLUSTER_SYSFS);
	cr_assert_str_eq(kp_topo_cluster_source_name(kp_topo_cluster_source()), "cluster_id");
	cr_assert_eq(kp_topo_cluster_count(), 8);
}

Test(topo, kunpeng_bad_cpu)
{
	struct CpuTopology t;

	use("kunpeng920");
	cr_assert_eq(kp_topo_cpu(32, &t), -ENOENT);
	cr_assert_eq(Perrorno(), KPERF_ERR_INVALID_ID);
	cr_assert(strstr(Perror(), "cpu 32 does not exist: this machine has cpus 0-31"), "%s",
		  Perror());
	cr_assert_eq(kp_topo_cpu(-1, &t), -ENOENT);
	cr_assert_eq(Perrorno(), KPERF_ERR_INVALID_ID);
}

Test(topo, kunpeng_numa_cores)
{
	static const unsigned want[] = { 16, 17, 18, 19, 20, 21, 22, 23 };
	unsigned *list = NULL;
	int n;

	use("kunpeng920");
	n = PmuGetNumaCore(2, &list);
	assert_list(list, n, want, 8);
	cr_assert_eq(Perrorno(), SUCCESS);
	free(list);
}

Test(topo, kunpeng_numa_does_not_exist)
{
	unsigned *list = (unsigned *)1;

	use("kunpeng920");
	/* libkperf's codes: a node it cannot read is LIBPERF_ERR_KERNEL_NOT_SUPPORT */
	cr_assert_eq(PmuGetNumaCore(4, &list), -1);
	cr_assert_null(list);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_KERNEL_NOT_SUPPORT);
	cr_assert_str_eq(Perror(), "numa node 4 does not exist: this machine has numa nodes 0-3");
	cr_assert_eq(PmuGetNumaCore(0x80000000u, &list), -1);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_KERNEL_NOT_SUPPORT);
	cr_assert_eq(PmuGetNumaCore(0, NULL), -1);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_NULL_POINTER);
}

Test(topo, kunpeng_cluster_cores)
{
	static const unsigned c0[] = { 0, 1, 2, 3 }, c5[] = { 20, 21, 22, 23 },
			      c7[] = { 28, 29, 30, 31 };
	unsigned *list = NULL;
	int n;

	use("kunpeng920");
	n = PmuGetClusterCore(0, &list);
	assert_list(list, n, c0, 4);
	free(list);
	n = PmuGetClusterCore(5, &list);
	assert_list(list, n, c5, 4);
	free(list);
	n = PmuGetClusterCore(7, &list);
	assert_list(list, n, c7, 4);
	free(list);
}

Test(topo, kunpeng_cluster_does_not_exist)
{
	unsigned *list = NULL;

	use("kunpeng920");
	cr_assert_eq(PmuGetClusterCore(8, &list), -1);
	cr_assert_null(list);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_CLUSTER_ID_OVERSIZE);
	cr_assert_str_eq(Perror(), "cluster 8 does not exist: this machine has clusters 0-7");
	cr_assert_eq(PmuGetClusterCore(0x80000000u, &list), -1);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_CLUSTER_ID_OVERSIZE);
	cr_assert_eq(PmuGetClusterCore(1, NULL), -1);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_NULL_POINTER);
}

Test(topo, kunpeng_socket_cores)
{
	int *cpus, n, i;

	use("kunpeng920");
	n = kp_topo_socket_cpus(1, &cpus);
	cr_assert_eq(n, 16);
	for (i = 0; i < n; i++)
		cr_assert_eq(cpus[i], 16 + i);
	free(cpus);
	cr_assert_eq(kp_topo_socket_cpus(2, &cpus), -ENOENT);
	cr_assert_null(cpus);
	cr_assert_str_eq(Perror(), "socket 2 does not exist: this machine has sockets 0-1");
}

Test(topo, kunpeng_cpu_freq_from_cpufreq)
{
	int64_t hz;
	const char *src = NULL;

	use("kunpeng920");
	cr_assert_eq(PmuGetCpuFreq(0), 2600000000LL);
	cr_assert_eq(PmuGetCpuFreq(5), 2000000000LL);
	cr_assert_eq(PmuGetCpuFreq(31), 2600000000LL);
	cr_assert_eq(kp_topo_cpu_freq(5, &hz, &src), 0);
	cr_assert_eq(hz, 2000000000LL);
	cr_assert_str_eq(src, "cpufreq");
}

Test(topo, cpu_freq_of_missing_core)
{
	use("kunpeng920");
	/* libkperf: no cpufreq file for the core, LIBPERF_ERR_CPUFREQ_NOT_CONFIG */
	cr_assert_eq(PmuGetCpuFreq(32), -1);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_CPUFREQ_NOT_CONFIG);
	cr_assert(strstr(Perror(), "cpu 32 does not exist"), "%s", Perror());
	cr_assert_eq(PmuGetCpuFreq(0xffffffffu), -1);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_CPUFREQ_NOT_CONFIG);
}

/* ---- x86: 2 sockets x 4 cores x 2 threads, one L3 per socket, no cluster ids ---- */

Test(topo, x86_topology_and_l3_clusters)
{
	static const int s0[] = { 0, 1, 2, 3, 8, 9, 10, 11 }, s1[] = { 4, 5, 6, 7, 12, 13, 14, 15 };
	struct kp_cpu_info info;
	struct CpuTopology t;
	int *cpus, n;

	use("x86_2s");
	cr_assert_eq(kp_topo_cpu_count(), 16);
	cr_assert_eq(kp_topo_cluster_source(), KP_CLUSTER_L3);
	cr_assert_str_eq(kp_topo_cluster_source_name(KP_CLUSTER_L3), "l3");
	cr_assert_eq(kp_topo_cluster_count(), 2);
	cr_assert_eq(kp_topo_cpu_info(9, &info), 0);
	cr_assert_eq(info.coreId, 1);
	cr_assert_eq(info.socketId, 0);
	cr_assert_eq(info.numaId, 0);
	cr_assert_eq(info.clusterId, 0);
	cr_assert_eq(kp_topo_cpu(12, &t), 0);
	cr_assert_eq(t.coreId, 12);
	cr_assert_eq(t.socketId, 1);
	cr_assert_eq(t.numaId, 1);
	cr_assert_eq(kp_topo_cpu_info(12, &info), 0);
	cr_assert_eq(info.coreId, 0);
	cr_assert_eq(info.clusterId, 1);

	n = kp_topo_cluster_cpus(0, &cpus);
	assert_ilist(cpus, n, s0, 8);
	free(cpus);
	n = kp_topo_cluster_cpus(1, &cpus);
	assert_ilist(cpus, n, s1, 8);
	free(cpus);
	n = kp_topo_numa_cpus(1, &cpus);
	assert_ilist(cpus, n, s1, 8);
	free(cpus);
}

Test(topo, x86_memory_only_node)
{
	unsigned *list = (unsigned *)1;
	int *ids, n;

	use("x86_2s");
	n = kp_topo_numa_nodes(&ids);
	cr_assert_eq(n, 3);
	cr_assert_eq(ids[0], 0);
	cr_assert_eq(ids[1], 1);
	cr_assert_eq(ids[2], 2);
	free(ids);
	/* a node that exists without CPUs: an empty list, not an error */
	cr_assert_eq(PmuGetNumaCore(2, &list), 0);
	cr_assert_null(list);
	cr_assert_eq(Perrorno(), SUCCESS);
	cr_assert_eq(PmuGetNumaCore(3, &list), -1);
	cr_assert_str_eq(Perror(), "numa node 3 does not exist: this machine has numa nodes 0-2");
}

Test(topo, cpuinfo_parsing)
{
	static const char x86[] =
		"processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu MHz\t\t: 2096.001\n"
		"cache size\t: 512 KB\n\nprocessor\t: 1\nvendor_id\t: AuthenticAMD\n"
		"cpu MHz\t\t: 3400.5\n\nprocessor\t: 10\ncpu MHz\t\t: 800.000\n";
	static const char arm[] = "processor\t: 0\nBogoMIPS\t: 200.00\nFeatures\t: fp asimd\n"
				  "CPU implementer\t: 0x48\n\nprocessor\t: 1\nBogoMIPS\t: 200.00\n";
	int64_t hz = 0;

	cr_assert_eq(kp_topo_cpuinfo_hz(x86, 0, &hz), 0);
	cr_assert_eq(hz, 2096001000LL);
	cr_assert_eq(kp_topo_cpuinfo_hz(x86, 1, &hz), 0);
	cr_assert_eq(hz, 3400500000LL);
	cr_assert_eq(kp_topo_cpuinfo_hz(x86, 10, &hz), 0);
	cr_assert_eq(hz, 800000000LL);
	cr_assert_eq(kp_topo_cpuinfo_hz(x86, 2, &hz), -ENOENT);
	cr_assert_eq(kp_topo_cpuinfo_hz(arm, 0, &hz), -ENOENT);
	cr_assert_eq(kp_topo_cpuinfo_hz("", 0, &hz), -ENOENT);
}

/* ---- a CPU that appears after the first read (hotplug) ---- */

static void put(const char *root, const char *rel, const char *text)
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

Test(topo, hotplugged_cpu_is_found)
{
	char root[] = "/tmp/kperf-topo-XXXXXX", cmd[PATH_MAX];
	struct CpuTopology t;

	cr_assert_not_null(mkdtemp(root));
	put(root, "devices/system/cpu/possible", "0-3\n");
	put(root, "devices/system/cpu/cpu0/topology/physical_package_id", "0\n");
	put(root, "devices/system/cpu/cpu0/topology/core_id", "0\n");
	setenv("KPERF_BPF_SYSFS", root, 1);
	kp_topo_reset();
	cr_assert_eq(kp_topo_cpu(0, &t), 0);
	cr_assert_eq(t.numaId, 0); /* no node directories: a kernel without NUMA */
	cr_assert_eq(kp_topo_cpu(1, &t), -ENOENT);
	put(root, "devices/system/cpu/cpu1/topology/physical_package_id", "1\n");
	put(root, "devices/system/cpu/cpu1/topology/core_id", "0\n");
	cr_assert_eq(kp_topo_cpu(1, &t), 0);
	cr_assert_eq(t.socketId, 1);
	cr_assert_eq(t.numaId, 0);
	cr_assert_eq(kp_topo_cluster_source(), KP_CLUSTER_PACKAGE);
	cr_assert_eq(kp_topo_cluster_count(), 2);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	cr_assert_eq(system(cmd), 0);
}

/* ---- many threads asking at once while the snapshot is being built ---- */

static void *lookup_all(void *arg)
{
	long bad = 0;
	int i, cpu;

	(void)arg;
	for (i = 0; i < 2000; i++) {
		struct CpuTopology t;

		cpu = i % 32;
		if (kp_topo_cpu(cpu, &t) || t.coreId != cpu || t.numaId != cpu / 8 ||
		    t.socketId != cpu / 16)
			bad++;
	}
	return (void *)bad;
}

Test(topo, concurrent_lookups)
{
	pthread_t th[8];
	void *bad;
	int i;

	use("kunpeng920");
	for (i = 0; i < 8; i++)
		cr_assert_eq(pthread_create(&th[i], NULL, lookup_all, NULL), 0);
	for (i = 0; i < 8; i++) {
		cr_assert_eq(pthread_join(th[i], &bad), 0);
		cr_assert_eq((long)bad, 0, "thread %d saw %ld wrong answers", i, (long)bad);
	}
}

/* ---- this machine, against what the test reads itself ---- */

static long read_sys_long(const char *fmt, int cpu)
{
	char path[PATH_MAX];
	long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), fmt, cpu);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fscanf(f, "%ld", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

Test(topo, real_machine_matches_sysfs)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	struct CpuTopology t;
	int cpu;

	use(NULL);
	cr_assert_geq(kp_topo_cpu_count(), ncpu);
	for (cpu = 0; cpu < ncpu; cpu++) {
		long pkg = read_sys_long(
			"/sys/devices/system/cpu/cpu%d/topology/physical_package_id", cpu);

		cr_assert_eq(kp_topo_cpu(cpu, &t), 0, "cpu %d: %s", cpu, Perror());
		cr_assert_eq(t.coreId, cpu);
		cr_assert_eq(t.socketId, pkg < 0 ? 0 : pkg, "cpu %d", cpu);
	}
}

Test(topo, real_machine_numa_node0)
{
	char buf[4096] = "";
	unsigned *list;
	int *want, nwant, n, i;
	FILE *f = fopen("/sys/devices/system/node/node0/cpulist", "r");

	use(NULL);
	n = PmuGetNumaCore(0, &list);
	if (!f) {
		/* no NUMA in this kernel: node 0 is every CPU */
		cr_assert_eq(n, sysconf(_SC_NPROCESSORS_CONF));
		free(list);
		return;
	}
	cr_assert_not_null(fgets(buf, sizeof(buf), f));
	fclose(f);
	nwant = kp_parse_cpu_list(buf, &want);
	cr_assert_eq(n, nwant, "%s", Perror());
	for (i = 0; i < n; i++)
		cr_assert_eq((int)list[i], want[i]);
	free(list);
	free(want);
}

/* the frequency reported is the one cpufreq or /proc/cpuinfo shows, read around the call */
Test(topo, real_machine_cpu_freq)
{
	long khz = read_sys_long("/sys/devices/system/cpu/cpu%d/cpufreq/scaling_cur_freq", 0);
	int64_t got, before = -1, after = -1, lo, hi;
	char *text;

	use(NULL);
	if (khz > 0) {
		got = PmuGetCpuFreq(0);
		cr_assert_gt(got, 0, "%s", Perror());
		return; /* cpufreq moves too fast to compare exactly */
	}
	if (kp_read_file("/proc/cpuinfo", &text, NULL) == 0) {
		kp_topo_cpuinfo_hz(text, 0, &before);
		free(text);
	}
	got = PmuGetCpuFreq(0);
	if (kp_read_file("/proc/cpuinfo", &text, NULL) == 0) {
		kp_topo_cpuinfo_hz(text, 0, &after);
		free(text);
	}
	if (before < 0) {
		cr_assert_eq(got, -1);
		cr_assert_eq(Perrorno(), LIBPERF_ERR_CPUFREQ_NOT_CONFIG);
		return;
	}
	lo = before < after ? before : after;
	hi = before < after ? after : before;
	cr_assert(got >= lo && got <= hi, "got %lld Hz, /proc/cpuinfo said %lld then %lld",
		  (long long)got, (long long)before, (long long)after);
}
