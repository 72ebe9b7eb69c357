/*
 * cpuburn - burns CPU in hot_loop() (or, with --lib, in wl_lib_work() of libwl.so: this
 * workload uses_lib) for a given CPU time, then prints the CPU time this process used
 * from the go on (CLOCK_PROCESS_CPUTIME_ID, ns; without --wait, from main) as "cpu_ns=N".
 * For counting tests (task-clock, counted from before the go, must agree with it: the
 * start-up before it is left out, which under an emulator is not small) and sampling tests
 * (hot_loop, or wl_lib_work, must be the hottest).
 *
 *   cpuburn [--ms N | --iters N] [--threads T] [--lib] [--wait]
 * --iters does a fixed amount of work instead (N calls of hot_loop(200000)): what a
 * benchmark needs, since time spent in interrupts is charged to the task's CPU time.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "libwl.h"

static long burn_ms = 500;
static int in_lib;
static long iters;

static unsigned long long thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ULL + (unsigned long long)ts.tv_nsec;
}

__attribute__((noinline)) unsigned long hot_loop(unsigned long n)
{
	volatile unsigned long x = 0;
	unsigned long i;

	/* one line, so that every sample of the loop has the same source line */
	/* clang-format off */
	for (i = 0; i < n; i++) x += i * i; /* HOT_LINE */
	/* clang-format on */
	return x;
}

static void *burn(void *arg)
{
	unsigned long long start = thread_cpu_ns();

	(void)arg;
	for (long k = 0; k < iters; k++)
		hot_loop(200000);
	while (!iters && thread_cpu_ns() - start < (unsigned long long)burn_ms * 1000000ULL) {
		if (in_lib)
			wl_lib_work(200000);
		else
			hot_loop(200000);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int threads = 1, wait_go = 0, i;
	pthread_t tids[64];
	struct timespec ts, t0;
	char go;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--ms") && i + 1 < argc)
			burn_ms = atol(argv[++i]);
		else if (!strcmp(argv[i], "--threads") && i + 1 < argc)
			threads = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--wait"))
			wait_go = 1;
		else if (!strcmp(argv[i], "--lib"))
			in_lib = 1;
		else if (!strcmp(argv[i], "--iters") && i + 1 < argc)
			iters = atol(argv[++i]);
	}
	if (threads < 1 || threads > 64)
		return 2;
	if (wait_go && read(0, &go, 1) != 1)
		return 3;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);
	for (i = 1; i < threads; i++)
		pthread_create(&tids[i], NULL, burn, NULL);
	burn(NULL);
	for (i = 1; i < threads; i++)
		pthread_join(tids[i], NULL);
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	printf("cpu_ns=%llu\n", (unsigned long long)(ts.tv_sec - t0.tv_sec) * 1000000000ULL +
					(unsigned long long)ts.tv_nsec -
					(unsigned long long)t0.tv_nsec);
	return 0;
}
