/*
 * cpufreq.c - CPU frequency sampling: PmuOpenCpuFreqSampling, PmuReadCpuFreqDetail,
 * PmuCloseCpuFreqSampling, with libkperf's semantics.
 *
 * One sampler for the whole library: a thread reads every CPU's cpufreq figure
 * (scaling_cur_freq) each <period> ms and keeps, per CPU, the minimum, the maximum and the
 * sum; a read turns them into min/max/average and starts the next interval. As in libkperf:
 *  - the period is 1..10000 ms (LIBPERF_ERR_INVALID_CPU_FREQ_PERIOD);
 *  - sampling needs cpufreq for every CPU (LIBPERF_ERR_CPUFREQ_NOT_CONFIG otherwise: a VM
 *    without a cpufreq driver). PmuGetCpuFreq falls back to /proc/cpuinfo, but a sampler of
 *    that would measure nothing the kernel does not compute itself, and libkperf refuses;
 *  - opening again while open keeps the running sampler and returns 0;
 *  - a read with no sample since the last one (or with no sampler) gives each CPU's current
 *    frequency as min, max and average, 0 where it is unknown.
 * The array a read returns belongs to the library and stays valid until the next read.
 * The first sample is taken by PmuOpenCpuFreqSampling itself, so a read right after an open
 * already covers it.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/core.h"
#include "kperf/pcerrc.h"
#include "topo.h"

#define MAX_PERIOD_MS 10000

struct acc {
	uint64_t min, max, sum, n;
};

/* ctl serialises open and close (a close joins the thread); lock guards the state below */
static pthread_mutex_t ctl = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wake;
static pthread_once_t wake_once = PTHREAD_ONCE_INIT;
static bool sampling, stopping, manual, thread_on;
static pthread_t thread;
static unsigned period_ms;
static int ncpus;
static struct acc *accs;
static struct PmuCpuFreqDetail *last; /* what the last read returned */

static void init_wake(void)
{
	pthread_condattr_t a;

	pthread_condattr_init(&a);
	pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
	pthread_cond_init(&wake, &a);
	pthread_condattr_destroy(&a);
}

static void sample_locked(void)
{
	int cpu;

	for (cpu = 0; cpu < ncpus; cpu++) {
		struct acc *a = &accs[cpu];
		int64_t hz;

		if (kp_topo_cpufreq_hz(cpu, &hz))
			continue; /* offline now: its interval has fewer samples */
		if (!a->n || (uint64_t)hz < a->min)
			a->min = (uint64_t)hz;
		if ((uint64_t)hz > a->max)
			a->max = (uint64_t)hz;
		a->sum += (uint64_t)hz;
		a->n++;
	}
}

static void *sampler(void *arg)
{
	struct timespec at;

	(void)arg;
	pthread_mutex_lock(&lock);
	clock_gettime(CLOCK_MONOTONIC, &at);
	while (!stopping) {
		at.tv_sec += period_ms / 1000;
		at.tv_nsec += (long)(period_ms % 1000) * 1000000L;
		if (at.tv_nsec >= 1000000000L) {
			at.tv_sec++;
			at.tv_nsec -= 1000000000L;
		}
		while (!stopping && pthread_cond_timedwait(&wake, &lock, &at) != ETIMEDOUT)
			;
		if (!stopping)
			sample_locked();
	}
	pthread_mutex_unlock(&lock);
	return NULL;
}

void kp_cpufreq_manual(bool on)
{
	pthread_mutex_lock(&lock);
	manual = on;
	pthread_mutex_unlock(&lock);
}

void kp_cpufreq_sample_now(void)
{
	pthread_mutex_lock(&lock);
	if (sampling)
		sample_locked();
	pthread_mutex_unlock(&lock);
}

/* every online CPU must have a cpufreq figure */
static int check_cpufreq(int n)
{
	struct kp_cpu_info info;
	int64_t hz;
	int cpu;

	for (cpu = 0; cpu < n; cpu++) {
		if (kp_topo_cpu_info(cpu, &info) || !info.online)
			continue;
		if (kp_topo_cpufreq_hz(cpu, &hz))
			return kp_fail(
				LIBPERF_ERR_CPUFREQ_NOT_CONFIG, -ENOENT,
				"cpu %d has no cpufreq "
				"(%s/devices/system/cpu/cpu%d/cpufreq/scaling_cur_freq): the "
				"kernel has no cpufreq driver for this machine",
				cpu, kp_sysfs(), cpu);
	}
	kp_clear_error();
	return 0;
}

KP_EXPORT int PmuOpenCpuFreqSampling(unsigned period)
{
	int n, err;

	kp_clear();
	if (period == 0 || period > MAX_PERIOD_MS)
		return kp_fail(LIBPERF_ERR_INVALID_CPU_FREQ_PERIOD, -EINVAL,
			       "period is %u ms: it must be between 1 and %d ms", period,
			       MAX_PERIOD_MS),
		       -1;
	pthread_once(&wake_once, init_wake);
	pthread_mutex_lock(&ctl);
	pthread_mutex_lock(&lock);
	if (sampling) {
		pthread_mutex_unlock(&lock);
		pthread_mutex_unlock(&ctl);
		return 0;
	}
	n = kp_topo_cpu_count();
	err = n < 0 ? n : check_cpufreq(n);
	if (!err) {
		accs = calloc((size_t)n, sizeof(*accs));
		err = accs ? 0 : kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
	}
	if (err) {
		pthread_mutex_unlock(&lock);
		pthread_mutex_unlock(&ctl);
		return kp_public_fail(err);
	}
	ncpus = n;
	period_ms = period;
	sampling = true;
	stopping = false;
	sample_locked();
	err = manual ? 0 : pthread_create(&thread, NULL, sampler, NULL);
	thread_on = !manual && !err;
	if (err) {
		sampling = false;
		free(accs);
		accs = NULL;
		pthread_mutex_unlock(&lock);
		pthread_mutex_unlock(&ctl);
		return kp_fail(UNKNOWN_ERROR, -err, "cannot start the sampling thread: %s",
			       strerror(err)),
		       -1;
	}
	pthread_mutex_unlock(&lock);
	pthread_mutex_unlock(&ctl);
	return 0;
}

KP_EXPORT struct PmuCpuFreqDetail *PmuReadCpuFreqDetail(unsigned *cpuNum)
{
	struct PmuCpuFreqDetail *out;
	int n, cpu;

	kp_clear();
	if (!cpuNum)
		return kp_fail(LIBPERF_ERR_NULL_POINTER, -EINVAL, "cpuNum cannot be NULL"), NULL;
	*cpuNum = 0;
	pthread_mutex_lock(&lock);
	n = sampling ? ncpus : kp_topo_cpu_count();
	out = n > 0 ? calloc((size_t)n, sizeof(*out)) : NULL;
	if (!out) {
		pthread_mutex_unlock(&lock);
		kp_public_fail(n > 0 ? -ENOMEM : n);
		return NULL;
	}
	for (cpu = 0; cpu < n; cpu++) {
		struct acc *a = sampling ? &accs[cpu] : NULL;
		int64_t hz = 0;

		out[cpu].cpuId = cpu;
		if (a && a->n) {
			out[cpu].minFreq = a->min;
			out[cpu].maxFreq = a->max;
			out[cpu].avgFreq = a->sum / a->n;
			memset(a, 0, sizeof(*a)); /* the next read covers the next interval */
			continue;
		}
		if (kp_topo_cpufreq_hz(cpu, &hz))
			hz = 0;
		out[cpu].minFreq = out[cpu].maxFreq = out[cpu].avgFreq = (uint64_t)hz;
	}
	free(last);
	last = out;
	pthread_mutex_unlock(&lock);
	*cpuNum = (unsigned)n;
	return out;
}

KP_EXPORT void PmuCloseCpuFreqSampling(void)
{
	bool join;

	kp_clear();
	pthread_once(&wake_once, init_wake);
	pthread_mutex_lock(&ctl);
	pthread_mutex_lock(&lock);
	if (!sampling) {
		pthread_mutex_unlock(&lock);
		pthread_mutex_unlock(&ctl);
		return;
	}
	stopping = true;
	join = thread_on;
	pthread_cond_broadcast(&wake);
	pthread_mutex_unlock(&lock);
	if (join)
		pthread_join(thread, NULL);
	pthread_mutex_lock(&lock);
	sampling = false;
	thread_on = false;
	free(accs);
	accs = NULL;
	ncpus = 0;
	pthread_mutex_unlock(&lock);
	pthread_mutex_unlock(&ctl);
}
