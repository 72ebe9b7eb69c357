/*
 * mstx_overhead - what the mstx markers and the timeline cost, measured in one run.
 *
 *  - one mstxMarkA of libkperf-bpf.so (dlopen'ed: called through a pointer, as a program
 *    linked with the library calls it through its PLT), not collected and collected
 *    (KperfActivityOpen on this process), beside an empty function called the same way;
 *  - a child making N getppid() calls, untraced and under a timeline (KperfTimeline*:
 *    syscalls, CPU samples at 999 Hz and markers), as ns per call and their ratio.
 * Configurations are interleaved over rounds; a marker's cost is the fastest batch of a
 * round, and rounds are compared by their median.
 *
 *   mstx_overhead [--marks N] [--calls N] [--rounds R]
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kperf/kperf.h"

#define MAX_ROUNDS 31

typedef void (*mark_fn)(const char *, void *);

static __attribute__((noinline)) void empty(const char *m, void *s)
{
	__asm__ volatile("" ::"r"(m), "r"(s) : "memory");
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* ns per call of <fn>: the fastest of batches of 100000 calls, so that what other
 * processes do to this shared machine (preemption, cache) stays out of the number */
static double per_call(mark_fn volatile fn, long n)
{
	double best = 1e30;
	long done, k, i;

	for (done = 0; done < n; done += k) {
		mark_fn f = fn;
		uint64_t t0 = now_ns();

		k = n - done < 100000 ? n - done : 100000;
		for (i = 0; i < k; i++)
			f("bench", NULL);
		if ((double)(now_ns() - t0) / (double)k < best)
			best = (double)(now_ns() - t0) / (double)k;
	}
	return best;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp);
	return v[n / 2];
}

/* a child that waits for a byte, makes <calls> getppid() and writes its ns per call */
static pid_t child(long calls, int *go, int *res)
{
	int g[2], r[2];
	pid_t pid;

	if (pipe(g) || pipe(r))
		return -1;
	pid = fork();
	if (pid == 0) {
		char b;
		double ns;
		uint64_t t0;
		long i;

		close(g[1]);
		close(r[0]);
		if (read(g[0], &b, 1) != 1)
			_exit(1);
		t0 = now_ns();
		for (i = 0; i < calls; i++)
			syscall(SYS_getppid);
		ns = (double)(now_ns() - t0) / (double)calls;
		if (write(r[1], &ns, sizeof(ns)) != sizeof(ns))
			_exit(1);
		_exit(0);
	}
	close(g[0]);
	close(r[1]);
	*go = g[1];
	*res = r[0];
	return pid;
}

enum run { UNTRACED, TIMELINE, TIMELINE_SYSCALLS, TRACE_PER_CALL, NRUNS };

static const char *const run_names[NRUNS] = {
	"getppid, untraced",
	"getppid, under a timeline",
	"  timeline of syscalls only",
	"  kperf-bpf trace --events (for comparison)",
};

static double syscall_run(long calls, enum run mode)
{
	struct KperfTimelineOpts o = KPERF_OPTS(KperfTimelineOpts, .numPid = 1);
	struct KperfTraceOpts to = KPERF_OPTS(KperfTraceOpts);
	struct PmuTraceAttr ta = { 0 };
	double ns = -1;
	int go, res, td = -1, pd = -1;
	pid_t pid = child(calls, &go, &res);

	if (pid < 0)
		return -1;
	if (mode == TRACE_PER_CALL) {
		ta.pidList = &pid;
		ta.numPid = 1;
		pd = KperfTraceOpen(TRACE_SYS_CALL, &ta, &to);
		if (pd < 0 || PmuTraceEnable(pd)) {
			fprintf(stderr, "trace: %s\n", Perror());
			exit(1);
		}
	}
	if (mode == TIMELINE || mode == TIMELINE_SYSCALLS) {
		o.pidList = &pid;
		o.noSamples = o.noMarkers = mode == TIMELINE_SYSCALLS;
		td = KperfTimelineOpen(&o);
		if (td < 0 || KperfTimelineEnable(td)) {
			fprintf(stderr, "timeline: %s\n", Perror());
			exit(1);
		}
	}
	if (write(go, "g", 1) != 1 || read(res, &ns, sizeof(ns)) != sizeof(ns))
		ns = -1;
	waitpid(pid, NULL, 0);
	close(go);
	close(res);
	if (td >= 0) {
		KperfTimelineDisable(td);
		KperfTimelineClose(td);
	}
	if (pd >= 0)
		PmuTraceClose(pd);
	return ns;
}

int main(int argc, char **argv)
{
	const char *build = getenv("KPERF_BUILD");
	long marks = 20000000, collected_marks = 200000, calls = 200000;
	double off[MAX_ROUNDS], on[MAX_ROUNDS], base[MAX_ROUNDS], sys[NRUNS][MAX_ROUNDS];
	char lib[4096];
	const char *files[1] = { lib };
	struct KperfActivityStats st;
	enum KperfActivityKind kind = KPERF_ACTIVITY_KIND_MARKER;
	struct KperfActivityOpts ao = {
		.sz = sizeof(ao), .probeFiles = files, .numProbeFiles = 1, .bufferKb = 262144
	};
	int rounds = 5, i, ad, m;
	void *h;
	mark_fn mark;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--marks") && i + 1 < argc)
			marks = atol(argv[++i]);
		else if (!strcmp(argv[i], "--calls") && i + 1 < argc)
			calls = atol(argv[++i]);
		else if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
			rounds = atoi(argv[++i]);
		else {
			fprintf(stderr,
				"usage: mstx_overhead [--marks N] [--calls N] [--rounds R]\n");
			return 2;
		}
	}
	if (rounds < 1 || rounds > MAX_ROUNDS || marks < 1 || calls < 1)
		return 2;
	snprintf(lib, sizeof(lib), "%s/lib/libkperf-bpf.so", build ? build : "build");
	h = dlopen(lib, RTLD_NOW);
	mark = h ? (mark_fn)dlsym(h, "mstxMarkA") : NULL;
	if (!mark) {
		fprintf(stderr, "mstx_overhead: %s\n", dlerror());
		return 1;
	}
	for (i = 0; i < rounds; i++) {
		base[i] = per_call(empty, marks);
		off[i] = per_call(mark, marks);
		ad = KperfActivityOpen(&kind, 1, &ao);
		if (ad < 0 || KperfActivityEnable(ad)) {
			fprintf(stderr, "mstx_overhead: %s\n", Perror());
			return 1;
		}
		on[i] = per_call(mark, collected_marks);
		KperfActivityGetStats(ad, &st);
		KperfActivityClose(ad);
		for (m = 0; m < NRUNS; m++)
			sys[m][i] = syscall_run(calls, (enum run)m);
	}
	printf("mstx_overhead: %d rounds, medians\n", rounds);
	printf("  empty function through a pointer      %8.2f ns\n", median(base, rounds));
	printf("  mstxMarkA, not collected              %8.2f ns   (x%.2f the empty call)\n",
	       median(off, rounds), median(off, rounds) / median(base, rounds));
	printf("  mstxMarkA, collected                  %8.0f ns   (%ld marks, last round "
	       "dropped %llu)\n",
	       median(on, rounds), collected_marks, (unsigned long long)st.dropped);
	for (m = 0; m < NRUNS; m++)
		printf("  %-44s %8.1f ns   (x%.2f untraced)\n", run_names[m],
		       median(sys[m], rounds),
		       median(sys[m], rounds) / median(sys[UNTRACED], rounds));
	return 0;
}
