/*
 * test_cpufreq.c - PmuOpenCpuFreqSampling / PmuReadCpuFreqDetail / PmuCloseCpuFreqSampling on
 * fixture sysfs trees: a copy of the Kunpeng 920 tree whose scaling_cur_freq files the tests
 * rewrite between samples (taken by hand: manual mode, no thread), the x86 tree without
 * cpufreq, and this machine as it is.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/core.h"
#include "fixtures/fixture.h"
#include "kperf/kperf.h"
#include "topo/topo.h"

static char tree[PATH_MAX];

/* a private copy of fixture <name>, as the sysfs root */
static void use_copy(const char *name)
{
	char cmd[2 * PATH_MAX + 32];

	snprintf(tree, sizeof(tree), "/tmp/kperf-cpufreq-XXXXXX");
	cr_assert_not_null(mkdtemp(tree));
	snprintf(cmd, sizeof(cmd), "cp -r '%s/.' '%s'", fx_path(name), tree);
	cr_assert_eq(system(cmd), 0);
	setenv("KPERF_BPF_SYSFS", tree, 1);
	kp_topo_reset();
}

static void set_khz(int cpu, long khz)
{
	char path[PATH_MAX + 64];
	FILE *f;

	snprintf(path, sizeof(path), "%s/devices/system/cpu/cpu%d/cpufreq/scaling_cur_freq", tree,
		 cpu);
	f = fopen(path, "w");
	cr_assert_not_null(f, "%s", path);
	fprintf(f, "%ld\n", khz);
	fclose(f);
}

static void cleanup(void)
{
	char cmd[PATH_MAX + 16];

	PmuCloseCpuFreqSampling();
	kp_cpufreq_manual(false);
	if (tree[0]) {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tree);
		cr_expect_eq(system(cmd), 0);
	}
	fx_use(NULL);
	kp_topo_reset();
}

static void expect_cpu(const struct PmuCpuFreqDetail *d, int cpu, uint64_t min, uint64_t max,
		       uint64_t avg)
{
	cr_assert_eq(d[cpu].cpuId, cpu);
	cr_assert_eq(d[cpu].minFreq, min, "cpu %d min %lu", cpu, (unsigned long)d[cpu].minFreq);
	cr_assert_eq(d[cpu].maxFreq, max, "cpu %d max %lu", cpu, (unsigned long)d[cpu].maxFreq);
	cr_assert_eq(d[cpu].avgFreq, avg, "cpu %d avg %lu", cpu, (unsigned long)d[cpu].avgFreq);
}

TestSuite(cpufreq, .fini = cleanup);

Test(cpufreq, min_max_avg_of_the_samples_then_the_next_interval)
{
	struct PmuCpuFreqDetail *d;
	unsigned n = 0;

	use_copy("kunpeng920");
	kp_cpufreq_manual(true);
	/* the open takes the first sample: cpu5 at 2.0 GHz, the others at 2.6 */
	cr_assert_eq(PmuOpenCpuFreqSampling(100), 0);
	cr_assert_eq(Perrorno(), SUCCESS);
	set_khz(5, 3000000);
	set_khz(7, 1200000);
	kp_cpufreq_sample_now();
	set_khz(5, 1000000);
	kp_cpufreq_sample_now();
	d = PmuReadCpuFreqDetail(&n);
	cr_assert_not_null(d);
	cr_assert_eq(n, 32);
	expect_cpu(d, 0, 2600000000ULL, 2600000000ULL, 2600000000ULL);
	expect_cpu(d, 5, 1000000000ULL, 3000000000ULL, 2000000000ULL);
	/* 2.6 + 1.2 + 1.2 GHz over three samples */
	expect_cpu(d, 7, 1200000000ULL, 2600000000ULL, 1666666666ULL);
	expect_cpu(d, 31, 2600000000ULL, 2600000000ULL, 2600000000ULL);

	/* no sample since that read: each cpu's frequency now */
	d = PmuReadCpuFreqDetail(&n);
	cr_assert_eq(n, 32);
	expect_cpu(d, 5, 1000000000ULL, 1000000000ULL, 1000000000ULL);
	expect_cpu(d, 7, 1200000000ULL, 1200000000ULL, 1200000000ULL);

	/* one sample: the interval is that sample alone */
	set_khz(5, 2200000);
	kp_cpufreq_sample_now();
	d = PmuReadCpuFreqDetail(&n);
	expect_cpu(d, 5, 2200000000ULL, 2200000000ULL, 2200000000ULL);
}

Test(cpufreq, open_twice_keeps_the_sampler)
{
	struct PmuCpuFreqDetail *d;
	unsigned n = 0;

	use_copy("kunpeng920");
	kp_cpufreq_manual(true);
	cr_assert_eq(PmuOpenCpuFreqSampling(100), 0);
	set_khz(0, 1000000);
	/* a second open takes no sample and keeps the interval of the first */
	cr_assert_eq(PmuOpenCpuFreqSampling(5000), 0);
	kp_cpufreq_sample_now();
	d = PmuReadCpuFreqDetail(&n);
	expect_cpu(d, 0, 1000000000ULL, 2600000000ULL, 1800000000ULL);
}

Test(cpufreq, read_without_sampler_gives_the_current_frequency)
{
	struct PmuCpuFreqDetail *d;
	unsigned n = 0;

	use_copy("kunpeng920");
	d = PmuReadCpuFreqDetail(&n);
	cr_assert_not_null(d);
	cr_assert_eq(n, 32);
	cr_assert_eq(Perrorno(), SUCCESS);
	expect_cpu(d, 0, 2600000000ULL, 2600000000ULL, 2600000000ULL);
	expect_cpu(d, 5, 2000000000ULL, 2000000000ULL, 2000000000ULL);

	/* after a close, the same: what libkperf's test does after PmuCloseCpuFreqSampling */
	kp_cpufreq_manual(true);
	cr_assert_eq(PmuOpenCpuFreqSampling(100), 0);
	PmuCloseCpuFreqSampling();
	set_khz(5, 1500000);
	d = PmuReadCpuFreqDetail(&n);
	cr_assert_eq(n, 32);
	expect_cpu(d, 5, 1500000000ULL, 1500000000ULL, 1500000000ULL);
}

Test(cpufreq, the_thread_samples_every_period)
{
	struct PmuCpuFreqDetail *d;
	unsigned n = 0;

	/* the frequencies do not change: whatever number of samples the thread took, every
	 * interval has the fixture's figures */
	use_copy("kunpeng920");
	cr_assert_eq(PmuOpenCpuFreqSampling(1), 0);
	usleep(20000);
	d = PmuReadCpuFreqDetail(&n);
	cr_assert_eq(n, 32);
	expect_cpu(d, 5, 2000000000ULL, 2000000000ULL, 2000000000ULL);
	expect_cpu(d, 6, 2600000000ULL, 2600000000ULL, 2600000000ULL);
	PmuCloseCpuFreqSampling();
	cr_assert_eq(Perrorno(), SUCCESS);
	/* closing again is harmless */
	PmuCloseCpuFreqSampling();
	cr_assert_eq(Perrorno(), SUCCESS);
}

Test(cpufreq, bad_period)
{
	use_copy("kunpeng920");
	cr_assert_eq(PmuOpenCpuFreqSampling(0), -1);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_INVALID_CPU_FREQ_PERIOD);
	cr_assert_str_eq(Perror(), "period is 0 ms: it must be between 1 and 10000 ms");
	cr_assert_eq(PmuOpenCpuFreqSampling(10001), -1);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_INVALID_CPU_FREQ_PERIOD);
	cr_assert_str_eq(Perror(), "period is 10001 ms: it must be between 1 and 10000 ms");
	kp_cpufreq_manual(true);
	cr_assert_eq(PmuOpenCpuFreqSampling(10000), 0);
}

Test(cpufreq, machine_without_cpufreq)
{
	struct PmuCpuFreqDetail *d;
	char want[PATH_MAX + 200];
	unsigned n = 0;
	int cpu;

	use_copy("x86_2s");
	cr_assert_eq(PmuOpenCpuFreqSampling(100), -1);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_CPUFREQ_NOT_CONFIG);
	snprintf(want, sizeof(want),
		 "cpu 0 has no cpufreq (%s/devices/system/cpu/cpu0/cpufreq/scaling_cur_freq): the "
		 "kernel has no cpufreq driver for this machine",
		 tree);
	cr_assert_str_eq(Perror(), want);
	/* a read still answers, with 0 for what is unknown */
	d = PmuReadCpuFreqDetail(&n);
	cr_assert_not_null(d);
	cr_assert_eq(n, 16);
	for (cpu = 0; cpu < 16; cpu++)
		expect_cpu(d, cpu, 0, 0, 0);
}

Test(cpufreq, null_cpu_num)
{
	use_copy("kunpeng920");
	cr_assert_null(PmuReadCpuFreqDetail(NULL));
	cr_assert_eq(Perrorno(), LIBPERF_ERR_NULL_POINTER);
	cr_assert_str_eq(Perror(), "cpuNum cannot be NULL");
}

/* this machine: sampling works exactly when every CPU has cpufreq */
Test(cpufreq, this_machine)
{
	char path[PATH_MAX];
	int cpu, ncpu = (int)sysconf(_SC_NPROCESSORS_CONF);
	bool all = true;

	fx_use(NULL);
	kp_topo_reset();
	for (cpu = 0; cpu < ncpu; cpu++) {
		snprintf(path, sizeof(path),
			 "/sys/devices/system/cpu/cpu%d/cpufreq/scaling_cur_freq", cpu);
		all &= access(path, R_OK) == 0;
	}
	kp_cpufreq_manual(true);
	if (all) {
		cr_assert_eq(PmuOpenCpuFreqSampling(100), 0);
	} else {
		cr_assert_eq(PmuOpenCpuFreqSampling(100), -1);
		cr_assert_eq(Perrorno(), LIBPERF_ERR_CPUFREQ_NOT_CONFIG);
	}
}
