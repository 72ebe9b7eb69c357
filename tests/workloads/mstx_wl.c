/* uses_kperf: linked with libkperf-bpf.so (the Makefile looks for this word)
 *
 * mstx_wl.c - a workload of mstx markers with exactly known calls, for the marker, activity
 * and timeline tests. In this order, on the main thread unless said:
 *   1. <marks> times mstxMarkA("tick")                          (default domain)
 *   2. "outer" range { "inner" range { <calls> getppid() } }    (nested, default domain)
 *   3. 3 x mstxDomainMarkA(alpha, "alpha-mark"), 2 x mstxDomainMarkA(beta, "beta-mark"),
 *      one "alpha-range" range in alpha around 1 getppid()
 *   4. "handoff" range started here and ended by a second thread ("mstx_wl_end")
 *   5. with --open, a range "left-open" that never ends (the process exits inside it)
 * Options: --wait (read one byte from stdin before starting, so a collector can attach),
 * --marks N (default 100), --calls N (getppid calls inside "inner", default 7), --open,
 * --loop N (repeat 1-4 N times, default 1), --fork (do it all in a child process too, after
 * the parent). It prints one line with the range ids it got: "ids outer=N inner=N
 * alpha=N handoff=N" (0 when nothing collects).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <kperf/mstx.h>

static void *end_range(void *arg)
{
	prctl(PR_SET_NAME, "mstx_wl_end");
	mstxRangeEnd(*(mstxRangeId *)arg);
	return NULL;
}

static void run(int marks, int calls)
{
	mstxDomainHandle_t alpha = mstxDomainCreateA("alpha");
	mstxDomainHandle_t beta = mstxDomainCreateA("beta");
	mstxRangeId outer, inner, a, handoff;
	pthread_t t;
	int i;

	for (i = 0; i < marks; i++)
		mstxMarkA("tick", NULL);
	outer = mstxRangeStartA("outer", NULL);
	inner = mstxRangeStartA("inner", NULL);
	for (i = 0; i < calls; i++)
		getppid();
	mstxRangeEnd(inner);
	mstxRangeEnd(outer);
	for (i = 0; i < 3; i++)
		mstxDomainMarkA(alpha, "alpha-mark", NULL);
	for (i = 0; i < 2; i++)
		mstxDomainMarkA(beta, "beta-mark", NULL);
	a = mstxDomainRangeStartA(alpha, "alpha-range", NULL);
	getppid();
	mstxDomainRangeEnd(alpha, a);
	handoff = mstxRangeStartA("handoff", NULL);
	if (pthread_create(&t, NULL, end_range, &handoff) == 0)
		pthread_join(t, NULL);
	printf("ids outer=%llu inner=%llu alpha=%llu handoff=%llu\n", (unsigned long long)outer,
	       (unsigned long long)inner, (unsigned long long)a, (unsigned long long)handoff);
	fflush(stdout);
}

int main(int argc, char **argv)
{
	int marks = 100, calls = 7, loops = 1, open = 0, do_fork = 0, i;
	pid_t child = -1;
	char go;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--wait")) {
			if (read(0, &go, 1) != 1)
				return 1;
		} else if (!strcmp(argv[i], "--marks") && i + 1 < argc) {
			marks = atoi(argv[++i]);
		} else if (!strcmp(argv[i], "--calls") && i + 1 < argc) {
			calls = atoi(argv[++i]);
		} else if (!strcmp(argv[i], "--loop") && i + 1 < argc) {
			loops = atoi(argv[++i]);
		} else if (!strcmp(argv[i], "--open")) {
			open = 1;
		} else if (!strcmp(argv[i], "--fork")) {
			do_fork = 1;
		} else {
			fprintf(stderr, "mstx_wl: unknown option %s\n", argv[i]);
			return 2;
		}
	}
	for (i = 0; i < loops; i++)
		run(marks, calls);
	if (do_fork) {
		child = fork();
		if (child == 0) {
			for (i = 0; i < loops; i++)
				run(marks, calls);
			_exit(0);
		}
		if (child > 0)
			waitpid(child, NULL, 0);
	}
	if (open)
		mstxRangeStartA("left-open", NULL);
	return 0;
}
