/*
 * offcpu - a thread with a known split between computing and waiting, for the off-CPU and
 * wall-clock tests, and a pipe ping-pong for the off-CPU benchmark.
 *
 * Each round the worker (the main thread) computes in compute() for <C> ms of its own CPU
 * time, then waits in wait_on_pipe() for a byte that a helper thread writes <B> ms after
 * being asked. At the end it prints what it measured itself, from the go on:
 *   pid=P worker_tid=T cpu_ns=N wall_ns=N blocked_ns=N
 * cpu_ns: the worker's CPU time (CLOCK_THREAD_CPUTIME_ID); wall_ns: its wall time;
 * blocked_ns: the time it spent inside the read()s of wait_on_pipe (CLOCK_MONOTONIC).
 *
 *   offcpu [--rounds N] [--compute-ms C] [--block-ms B] [--wait] [--fork]
 *   offcpu --pingpong N [--wait]
 * --fork: a child process does the work (the parent waits for it): a command's child.
 * --pingpong: two threads pass a byte back and forth over two pipes N times, then print
 * "pingpong_ns=N", the wall time it took.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long rounds = 10, compute_ms = 20, block_ms = 20;
static int ask[2], reply[2];

static unsigned long long clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ULL + (unsigned long long)ts.tv_nsec;
}

__attribute__((noinline)) unsigned long compute(long ms)
{
	unsigned long long start = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	volatile unsigned long x = 0;
	unsigned long i;

	while (clock_ns(CLOCK_THREAD_CPUTIME_ID) - start < (unsigned long long)ms * 1000000ULL)
		for (i = 0; i < 20000; i++)
			x += i * i;
	return x;
}

/* read one byte: the call the worker blocks in (its own frame, so that frame pointers show
 * wait_on_pipe as the caller of libc's read) */
__attribute__((noinline)) int read_byte(int fd)
{
	char c;

	return read(fd, &c, 1) == 1 ? 0 : -1;
}

__attribute__((noinline)) unsigned long long wait_on_pipe(void)
{
	unsigned long long t0;

	if (write(ask[1], "a", 1) != 1)
		exit(4);
	t0 = clock_ns(CLOCK_MONOTONIC);
	if (read_byte(reply[0]))
		exit(5);
	return clock_ns(CLOCK_MONOTONIC) - t0;
}

static void *helper(void *arg)
{
	struct timespec d = { block_ms / 1000, (block_ms % 1000) * 1000000L };
	char c;

	(void)arg;
	while (read(ask[0], &c, 1) == 1) {
		nanosleep(&d, NULL);
		if (write(reply[1], "r", 1) != 1)
			break;
	}
	return NULL;
}

static int work(void)
{
	unsigned long long cpu0, wall0, blocked = 0;
	pthread_t h;
	long r;

	if (pipe(ask) || pipe(reply) || pthread_create(&h, NULL, helper, NULL))
		return 2;
	cpu0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	wall0 = clock_ns(CLOCK_MONOTONIC);
	for (r = 0; r < rounds; r++) {
		compute(compute_ms);
		blocked += wait_on_pipe();
	}
	printf("pid=%d worker_tid=%ld cpu_ns=%llu wall_ns=%llu blocked_ns=%llu\n", (int)getpid(),
	       (long)syscall(SYS_gettid), clock_ns(CLOCK_THREAD_CPUTIME_ID) - cpu0,
	       clock_ns(CLOCK_MONOTONIC) - wall0, blocked);
	fflush(stdout);
	close(ask[1]);
	pthread_join(h, NULL);
	return 0;
}

/* ---- ping-pong ---- */

static int ping[2], pong[2];
static long bounces;

static void *ponger(void *arg)
{
	char c;
	long i;

	(void)arg;
	for (i = 0; i < bounces; i++)
		if (read(ping[0], &c, 1) != 1 || write(pong[1], &c, 1) != 1)
			break;
	return NULL;
}

static int pingpong(void)
{
	unsigned long long t0;
	pthread_t t;
	char c = 'p';
	long i;

	if (pipe(ping) || pipe(pong) || pthread_create(&t, NULL, ponger, NULL))
		return 2;
	t0 = clock_ns(CLOCK_MONOTONIC);
	for (i = 0; i < bounces; i++)
		if (write(ping[1], &c, 1) != 1 || read(pong[0], &c, 1) != 1)
			return 3;
	printf("pingpong_ns=%llu\n", clock_ns(CLOCK_MONOTONIC) - t0);
	pthread_join(t, NULL);
	return 0;
}

int main(int argc, char **argv)
{
	int wait_go = 0, in_child = 0, st, i;
	pid_t pid;
	char go;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
			rounds = atol(argv[++i]);
		else if (!strcmp(argv[i], "--compute-ms") && i + 1 < argc)
			compute_ms = atol(argv[++i]);
		else if (!strcmp(argv[i], "--block-ms") && i + 1 < argc)
			block_ms = atol(argv[++i]);
		else if (!strcmp(argv[i], "--pingpong") && i + 1 < argc)
			bounces = atol(argv[++i]);
		else if (!strcmp(argv[i], "--wait"))
			wait_go = 1;
		else if (!strcmp(argv[i], "--fork"))
			in_child = 1;
		else
			return 2;
	}
	if (wait_go && read(0, &go, 1) != 1)
		return 3;
	if (bounces)
		return pingpong();
	if (!in_child)
		return work();
	fflush(stdout);
	pid = fork();
	if (pid == 0)
		_exit(work());
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		return 2;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}
