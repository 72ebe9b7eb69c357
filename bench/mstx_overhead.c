/*
 * mstx_overhead - what the mstx markers and the timeline cost, measured in one run.
 *
 *  - one mstxMarkA of libkperf-bpf.so (dlopen'ed: called through a pointer, as a program
 *    linked with the library calls it through its PLT), not collected and collected
 *    (KperfActivityOpen on this process), beside an empty function called the same way;
 *    of a collected one, the part its BPF program takes (BPF_ENABLE_STATS); and the floor
 *    of any collector of that marker: an empty BPF program on the same USDT site
 *    (bpf/bench_floor.bpf.c floor_mark), the uprobe's trap alone;
 *  - a child making N getppid() calls, untraced, under a timeline (KperfTimeline*:
 *    syscalls, CPU samples at 999 Hz and markers; syscalls only) and under PmuTrace* per-call
 *    records (what `kperf-bpf trace --events` reads): per call, the child's wall time and CPU
 *    time (the syscall programs run in its syscalls: their share, from BPF_ENABLE_STATS), and
 *    the CPU time the reading took in this process (the timeline's thread, the trace's poller,
 *    the last drain and, for the trace, PmuTraceRead); the ratio to untraced of CPU time plus
 *    reading, which a loaded machine changes far less than wall time.
 * Configurations are interleaved over rounds; a marker's cost is the fastest batch of a
 * round, and rounds are compared by their median.
 *
 *   mstx_overhead [--marks N] [--calls N] [--rounds R] [--no-marks]
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "kperf/kperf.h"
#include "skel/bench_floor.skel.h"

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

static uint64_t cpu_ns(int who)
{
	struct rusage ru;

	getrusage(who, &ru);
	return (uint64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000ULL +
	       (uint64_t)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000ULL;
}

/* what a child measured of its <calls> getppid(): wall and CPU time per call */
struct child_res {
	double wall_ns, cpu_ns;
};

/* a child that waits for a byte, makes <calls> getppid() and writes its ns per call (wall
 * and its own CPU time: the BPF programs run in its syscalls, so they count in it) */
static pid_t child(long calls, int *go, int *res)
{
	int g[2], r[2];
	pid_t pid;

	if (pipe(g) || pipe(r))
		return -1;
	pid = fork();
	if (pid == 0) {
		struct child_res cr;
		uint64_t t0, c0;
		char b;
		long i;

		close(g[1]);
		close(r[0]);
		if (read(g[0], &b, 1) != 1)
			_exit(1);
		c0 = cpu_ns(RUSAGE_SELF);
		t0 = now_ns();
		for (i = 0; i < calls; i++)
			syscall(SYS_getppid);
		cr.wall_ns = (double)(now_ns() - t0) / (double)calls;
		cr.cpu_ns = (double)(cpu_ns(RUSAGE_SELF) - c0) / (double)calls;
		if (write(r[1], &cr, sizeof(cr)) != sizeof(cr))
			_exit(1);
		_exit(0);
	}
	close(g[0]);
	close(r[1]);
	*go = g[1];
	*res = r[0];
	return pid;
}

/* The run time of the BPF programs whose names start with <prefix> loaded after program id
 * <after> (those of the run: kp_sys_ the syscall programs at entry and exit, kp_mstx_mark the
 * marker program of mstxMarkA), in ns; BPF_ENABLE_STATS is on. */
static uint64_t prog_ns(uint32_t after, const char *prefix)
{
	uint32_t id = after;
	uint64_t ns = 0;

	while (!bpf_prog_get_next_id(id, &id)) {
		struct bpf_prog_info info;
		uint32_t len = sizeof(info);
		int fd = bpf_prog_get_fd_by_id(id);

		if (fd < 0)
			continue;
		memset(&info, 0, sizeof(info));
		if (!bpf_obj_get_info_by_fd(fd, &info, &len) &&
		    !strncmp(info.name, prefix, strlen(prefix)))
			ns += info.run_time_ns;
		close(fd);
	}
	return ns;
}

/* the highest BPF program id now */
static uint32_t last_prog_id(void)
{
	uint32_t id = 0;

	while (!bpf_prog_get_next_id(id, &id))
		;
	return id;
}

enum run { UNTRACED, TIMELINE, TIMELINE_SYSCALLS, TRACE_PER_CALL, NRUNS };

static const char *const run_names[NRUNS] = {
	"untraced",
	"timeline (syscalls, samples, markers)",
	"timeline, syscalls only",
	"trace --events (for comparison)",
};

/* one run of a child under <mode>: its wall and CPU ns per call, and the CPU the reading
 * took in this process (the timeline's or the trace's thread, and the last drain) per call */
struct run_res {
	double wall, cpu, reader, bpf;
	uint64_t records, dropped;
};

static struct run_res syscall_run(long calls, enum run mode)
{
	struct KperfTimelineOpts o = KPERF_OPTS(KperfTimelineOpts, .numPid = 1);
	struct KperfTraceOpts to = KPERF_OPTS(KperfTraceOpts);
	struct PmuTraceAttr ta = { 0 };
	struct KperfTimelineStats tst;
	struct PmuTraceStats pst;
	struct PmuTraceData *data;
	struct run_res rr = { -1, -1, 0, 0, 0, 0 };
	struct child_res cr;
	int go, res, td = -1, pd = -1, n;
	uint64_t c0;
	uint32_t first = last_prog_id();
	pid_t pid = child(calls, &go, &res);

	if (pid < 0)
		return rr;
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
	c0 = cpu_ns(RUSAGE_SELF);
	if (write(go, "g", 1) == 1 && read(res, &cr, sizeof(cr)) == sizeof(cr)) {
		rr.wall = cr.wall_ns;
		rr.cpu = cr.cpu_ns;
	}
	waitpid(pid, NULL, 0);
	close(go);
	close(res);
	rr.bpf = (double)prog_ns(first, "kp_sys_") / (double)calls;
	if (td >= 0) {
		KperfTimelineDisable(td);
		KperfTimelineGetStats(td, &tst); /* the last drain */
		rr.records = tst.syscalls;
		rr.dropped = tst.dropped;
	}
	if (pd >= 0) {
		PmuTraceDisable(pd);
		while ((n = PmuTraceRead(pd, &data)) > 0) {
			rr.records += (uint64_t)n;
			PmuTraceDataFree(data);
		}
		PmuTraceGetStats(pd, &pst);
		rr.dropped = pst.dropped;
	}
	rr.reader = (double)(cpu_ns(RUSAGE_SELF) - c0) / (double)calls;
	if (td >= 0)
		KperfTimelineClose(td);
	if (pd >= 0)
		PmuTraceClose(pd);
	return rr;
}

/* ns per mstxMarkA with only an empty program on its USDT site (the semaphore set by the
 * attachment, as a collection sets it); 0 when it cannot be attached (said) */
static double floor_mark(mark_fn mark, const char *lib, long n)
{
	struct bench_floor_bpf *skel = bench_floor_bpf__open_and_load();
	struct bpf_link *link;
	double ns = 0;

	if (!skel) {
		fprintf(stderr, "mstx_overhead: the floor's BPF object does not load\n");
		return 0;
	}
	link = bpf_program__attach_usdt(skel->progs.floor_mark, getpid(), lib, "kperf", "mark",
					NULL);
	if (!link)
		fprintf(stderr,
			"mstx_overhead: the floor's program does not attach to kperf:mark "
			"of %s: %s\n",
			lib, strerror(errno));
	else
		ns = per_call(mark, n);
	bpf_link__destroy(link);
	bench_floor_bpf__destroy(skel);
	return ns;
}

int main(int argc, char **argv)
{
	const char *build = getenv("KPERF_BUILD");
	long marks = 20000000, collected_marks = 200000, calls = 200000;
	double off[MAX_ROUNDS], on[MAX_ROUNDS], base[MAX_ROUNDS], on_prog[MAX_ROUNDS];
	double floor_ns[MAX_ROUNDS];
	double wall[NRUNS][MAX_ROUNDS], cpu[NRUNS][MAX_ROUNDS], rd[NRUNS][MAX_ROUNDS];
	double tot[NRUNS][MAX_ROUNDS], bpfns[NRUNS][MAX_ROUNDS];
	uint64_t recs[NRUNS] = { 0 }, drops[NRUNS] = { 0 };
	char lib[4096];
	const char *files[1] = { lib };
	struct KperfActivityStats st = { 0 };
	enum KperfActivityKind kind = KPERF_ACTIVITY_KIND_MARKER;
	struct KperfActivityOpts ao = {
		.sz = sizeof(ao), .probeFiles = files, .numProbeFiles = 1, .bufferKb = 262144
	};
	int rounds = 5, i, ad, m, no_marks = 0, stats_fd;
	uint32_t first;
	void *h;
	mark_fn mark;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--marks") && i + 1 < argc)
			marks = atol(argv[++i]);
		else if (!strcmp(argv[i], "--calls") && i + 1 < argc)
			calls = atol(argv[++i]);
		else if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
			rounds = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--no-marks"))
			no_marks = 1;
		else {
			fprintf(stderr, "usage: mstx_overhead [--marks N] [--calls N] [--rounds R] "
					"[--no-marks]\n");
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
	/* the BPF programs' run time counted while this fd is open (not a system setting) */
	stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
	for (i = 0; i < rounds; i++) {
		if (!no_marks) {
			base[i] = per_call(empty, marks);
			off[i] = per_call(mark, marks);
			first = last_prog_id();
			ad = KperfActivityOpen(&kind, 1, &ao);
			if (ad < 0 || KperfActivityEnable(ad)) {
				fprintf(stderr, "mstx_overhead: %s\n", Perror());
				return 1;
			}
			on[i] = per_call(mark, collected_marks);
			/* every call ran the program, the batches of per_call included */
			on_prog[i] =
				(double)prog_ns(first, "kp_mstx_mark") / (double)collected_marks;
			KperfActivityGetStats(ad, &st);
			KperfActivityClose(ad);
			floor_ns[i] = floor_mark(mark, lib, collected_marks);
		}
		for (m = 0; m < NRUNS; m++) {
			struct run_res rr = syscall_run(calls, (enum run)m);

			wall[m][i] = rr.wall;
			cpu[m][i] = rr.cpu;
			rd[m][i] = rr.reader;
			bpfns[m][i] = rr.bpf;
			tot[m][i] = rr.cpu + rr.reader;
			recs[m] = rr.records;
			drops[m] = rr.dropped;
		}
	}
	printf("mstx_overhead: %d rounds, medians\n", rounds);
	if (!no_marks) {
		printf("  empty function through a pointer      %8.2f ns\n", median(base, rounds));
		printf("  mstxMarkA, not collected              %8.2f ns   (x%.2f the empty "
		       "call)\n",
		       median(off, rounds), median(off, rounds) / median(base, rounds));
		printf("  mstxMarkA, collected                  %8.0f ns   (%ld marks, last round "
		       "dropped %llu; the program's share %.0f ns, the rest is the uprobe's trap)\n",
		       median(on, rounds), collected_marks, (unsigned long long)st.dropped,
		       median(on_prog, rounds));
		printf("  an empty program on the same site     %8.0f ns   (the floor: the uprobe's "
		       "trap; collected = x%.2f the floor)\n",
		       median(floor_ns, rounds), median(on, rounds) / median(floor_ns, rounds));
	}
	printf("getppid x %ld, ns per call: the traced process's wall time and CPU time (the "
	       "syscall programs' share of it in bpf%s), the CPU the reader took in this "
	       "process, and (CPU + reader) as a ratio to untraced\n",
	       calls, stats_fd < 0 ? ": BPF_ENABLE_STATS refused" : "");
	printf("  %-38s %8s %8s %8s %8s %8s %8s  %s\n", "", "wall", "x", "cpu", "bpf", "reader",
	       "cpu+rd", "records (dropped), last round");
	for (m = 0; m < NRUNS; m++)
		printf("  %-38s %8.1f %7.2fx %8.1f %8.1f %8.1f %7.2fx  %llu (%llu)\n", run_names[m],
		       median(wall[m], rounds),
		       median(wall[m], rounds) / median(wall[UNTRACED], rounds),
		       median(cpu[m], rounds), median(bpfns[m], rounds), median(rd[m], rounds),
		       median(tot[m], rounds) / median(tot[UNTRACED], rounds),
		       (unsigned long long)recs[m], (unsigned long long)drops[m]);
	if (stats_fd >= 0)
		close(stats_fd);
	return 0;
}
