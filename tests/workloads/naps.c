/*
 * naps - sleeps a known number of times and burns a known amount of CPU, in threads that
 * exist before a collector attaches and in child processes created after it did.
 *
 *   naps [--naps N] [--burn-ms MS] [--threads T] [--children C] [--wait]
 *
 * T worker threads (default 1) are started first; with --wait they block until the go
 * byte arrives on stdin, so a collector can open the process (threads included) first.
 * After it, C child processes are forked, each running one worker. A worker makes N
 * sleeps of 1 ms (each one a switch away from the CPU), then burns MS ms of its own CPU
 * time. The main thread only waits. So the process and its children make at least
 * (T + C) * N context switches and use about (T + C) * MS ms of CPU.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long naps = 100, burn_ms;
static pthread_mutex_t go_lock = PTHREAD_MUTEX_INITIALIZER;

static unsigned long long thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ULL + (unsigned long long)ts.tv_nsec;
}

static void work(void)
{
	struct timespec ms = { 0, 1000000 };
	volatile unsigned long x = 0;
	unsigned long long start;
	long i;

	for (i = 0; i < naps; i++)
		nanosleep(&ms, NULL);
	start = thread_cpu_ns();
	while (thread_cpu_ns() - start < (unsigned long long)burn_ms * 1000000ULL)
		for (i = 0; i < 10000; i++)
			x += (unsigned long)i;
}

static void *worker(void *arg)
{
	(void)arg;
	/* held by main until the go byte: the thread exists, but has not started */
	pthread_mutex_lock(&go_lock);
	pthread_mutex_unlock(&go_lock);
	work();
	return NULL;
}

int main(int argc, char **argv)
{
	int threads = 1, children = 0, wait_go = 0, i;
	pthread_t tids[64];
	pid_t pids[64];
	char go;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--naps") && i + 1 < argc)
			naps = atol(argv[++i]);
		else if (!strcmp(argv[i], "--burn-ms") && i + 1 < argc)
			burn_ms = atol(argv[++i]);
		else if (!strcmp(argv[i], "--threads") && i + 1 < argc)
			threads = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--children") && i + 1 < argc)
			children = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--wait"))
			wait_go = 1;
	}
	if (threads < 0 || threads > 64 || children < 0 || children > 64)
		return 2;
	pthread_mutex_lock(&go_lock);
	for (i = 0; i < threads; i++)
		pthread_create(&tids[i], NULL, worker, NULL);
	if (wait_go && read(0, &go, 1) != 1)
		return 3;
	for (i = 0; i < children; i++) {
		pids[i] = fork();
		if (pids[i] == 0) {
			work();
			_exit(0);
		}
	}
	pthread_mutex_unlock(&go_lock);
	for (i = 0; i < threads; i++)
		pthread_join(tids[i], NULL);
	for (i = 0; i < children; i++)
		waitpid(pids[i], NULL, 0);
	return 0;
}
