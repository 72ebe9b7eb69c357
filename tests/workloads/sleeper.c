/* uses_kperf: linked with libkperf-bpf.so (the Makefile looks for this word)
 *
 * sleeper.c - known slices off the CPU, for the off-CPU slices of the timeline: the main
 * thread sleeps exactly <naps> times for <nap-ms> ms, each in nap_here() (which sleeps
 * through sleep_once(), its own frame, so that frame pointers show nap_here as the caller of
 * libc's syscall()), inside one mstx range "naps"; meanwhile a thread "spinner" computes for
 * <spin-ms> ms (CLOCK_MONOTONIC, read through the vDSO) inside a range "spin": it never waits
 * for anything, so it has no blocked slice, only preemptions when the CPUs are busy. The main
 * thread then joins it, outside the ranges.
 *
 *   sleeper [--naps N] [--nap-ms D] [--spin-ms S] [--wait]
 *
 * --wait: read one byte from stdin first, so a collector can attach. It prints
 * "pid=P main_tid=T" at the end. (The spinner is named by the main thread.)
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <kperf/mstx.h>

static long naps = 7, nap_ms = 5, spin_ms = 100;

static unsigned long long mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ULL + (unsigned long long)ts.tv_nsec;
}

__attribute__((noinline)) int sleep_once(long ms)
{
	struct timespec d = { ms / 1000, (ms % 1000) * 1000000L };

	/* syscall() leaves the frame pointer alone: the caller of this frame shows */
	return (int)syscall(SYS_nanosleep, &d, NULL);
}

__attribute__((noinline)) int nap_here(long ms)
{
	return sleep_once(ms);
}

static void *spinner(void *arg)
{
	volatile unsigned long x = 0;
	unsigned long long start;
	mstxRangeId r;
	long i;

	(void)arg;
	r = mstxRangeStartA("spin", NULL);
	start = mono_ns();
	while (mono_ns() - start < (unsigned long long)spin_ms * 1000000ULL)
		for (i = 0; i < 10000; i++)
			x += (unsigned long)i;
	mstxRangeEnd(r);
	return NULL;
}

int main(int argc, char **argv)
{
	mstxRangeId r;
	pthread_t t;
	char go;
	long i;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--naps") && i + 1 < argc)
			naps = atol(argv[++i]);
		else if (!strcmp(argv[i], "--nap-ms") && i + 1 < argc)
			nap_ms = atol(argv[++i]);
		else if (!strcmp(argv[i], "--spin-ms") && i + 1 < argc)
			spin_ms = atol(argv[++i]);
		else if (!strcmp(argv[i], "--wait") && read(0, &go, 1) != 1)
			return 2;
	}
	if (pthread_create(&t, NULL, spinner, NULL))
		return 3;
	pthread_setname_np(t, "spinner");
	r = mstxRangeStartA("naps", NULL);
	for (i = 0; i < naps; i++)
		if (nap_here(nap_ms))
			return 4;
	mstxRangeEnd(r);
	pthread_join(t, NULL);
	printf("pid=%d main_tid=%d\n", (int)getpid(), (int)gettid());
	fflush(stdout);
	return 0;
}
