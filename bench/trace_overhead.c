/*
 * trace_overhead - what syscall tracing costs a process, as ratios measured in one run.
 *
 * A child process makes N getppid() calls and reports ns per call: of its own CPU time by
 * default (the time the kernel charges the thread, syscalls and the programs run in them
 * included, but not the time other tasks of a shared machine hold its CPU), of wall-clock
 * time with --wall (what the README figures before 2026-11-29 are). It runs untraced, under
 * the floor (bpf/bench_floor.bpf.c: sys_enter/sys_exit programs that only read their tgid:
 * what any program on those tracepoints costs every process), under kperf-bpf in
 * summary-only and per-call modes, untraced while another process is traced (a bystander),
 * and, where installed, under bpftrace, `perf trace -s` and `strace -c`. The configurations
 * are interleaved over several rounds; the median of each is given as a ratio to the
 * untraced median and to the floor's. Then one more run of the floor and of kperf-bpf's two
 * modes with kernel.bpf_stats_enabled (BPF_ENABLE_STATS, for that pass only: the accounting
 * adds two clock reads to every program run, which would narrow the ratios) gives the
 * programs' own time per call (sys_enter + sys_exit). Also reports how long
 * `kperf-bpf trace` takes to attach.
 *
 *   trace_overhead [--calls N] [--rounds R] [--no-peers] [--wall] [--ring-kb KB]
 *
 * --ring-kb: kperf-bpf's ring buffer for the per-call records (ringBufferKb; default its
 * default).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "kperf/kperf.h"
#include "skel/bench_floor.skel.h"

#define MAX_ROUNDS 31

enum config {
	UNTRACED,
	FLOOR,
	SUMMARY,
	PER_CALL,
	OTHER_TRACED,
	BPFTRACE,
	PERF_TRACE,
	STRACE,
	NCONFIG
};

static const char *const names[NCONFIG] = {
	"untraced",
	"floor: empty sys_enter/exit (read tgid)",
	"kperf-bpf summary only",
	"kperf-bpf per-call records",
	"bystander: untraced, another one traced",
	"bpftrace (per-syscall latency histogram)",
	"perf trace -s",
	"strace -c",
};

struct child {
	pid_t pid;
	int go, result;
};

static long calls = 2000000;
static bool wall; /* wall-clock time per call, not the child's CPU time */
static unsigned ring_kb; /* KperfTraceOpts.ringBufferKb, 0: the default */
static unsigned long long drops; /* per-call records dropped, all rounds */
/* run time and count of the sys_enter + sys_exit programs (the floor's, kperf-bpf's) of the
 * stats pass, per configuration */
static unsigned long long run_ns[NCONFIG][2], run_cnt[NCONFIG][2]; /* [sys_enter, sys_exit] */
static bool stats_pass; /* BPF_ENABLE_STATS is on: collect run_ns, run_cnt */

/* add the run time of the loaded sys_enter/sys_exit programs of <cfg> (bpf_stats) */
static void prog_stats(enum config cfg)
{
	const char *enter = cfg == FLOOR ? "floor_enter" : "kp_sys_enter";
	const char *exit = cfg == FLOOR ? "floor_exit" : "kp_sys_exit";
	__u32 id = 0;

	if (!stats_pass)
		return;
	while (!bpf_prog_get_next_id(id, &id)) {
		struct bpf_prog_info info = { 0 };
		__u32 len = sizeof(info);
		int fd = bpf_prog_get_fd_by_id(id);

		if (fd < 0)
			continue;
		if (!bpf_obj_get_info_by_fd(fd, &info, &len) &&
		    (!strcmp(info.name, enter) || !strcmp(info.name, exit))) {
			int which = !strcmp(info.name, exit);

			run_ns[cfg][which] += info.run_time_ns;
			run_cnt[cfg][which] += info.run_cnt;
		}
		close(fd);
	}
}

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(wall ? CLOCK_MONOTONIC : CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* a process that waits for a byte, makes <n> getppid calls, and writes ns per call */
static struct child spawn_loop(long n)
{
	int go[2], res[2];
	struct child c;
	char b;

	if (pipe(go) || pipe(res))
		exit(1);
	c.pid = fork();
	if (c.pid == 0) {
		double t0, ns;
		long i;

		close(go[1]);
		close(res[0]);
		if (read(go[0], &b, 1) != 1)
			_exit(1);
		t0 = now_ns();
		for (i = 0; i < n; i++)
			syscall(SYS_getppid);
		ns = (now_ns() - t0) / (double)n;
		if (write(res[1], &ns, sizeof(ns)) != sizeof(ns))
			_exit(1);
		_exit(0);
	}
	close(go[0]);
	close(res[1]);
	c.go = go[1];
	c.result = res[0];
	return c;
}

static double run_loop(struct child *c)
{
	double ns = -1;

	if (write(c->go, "g", 1) != 1 || read(c->result, &ns, sizeof(ns)) != sizeof(ns))
		ns = -1;
	close(c->go);
	close(c->result);
	waitpid(c->pid, NULL, 0);
	return ns;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* start a peer tool on <pid>; returns its pid, after giving it time to attach */
static pid_t start_tool(char *const argv[], long settle_ms)
{
	pid_t p = fork();

	if (p == 0) {
		int devnull = open("/dev/null", O_WRONLY);

		dup2(devnull, 1);
		dup2(devnull, 2);
		execvp(argv[0], argv);
		_exit(127);
	}
	sleep_ms(settle_ms);
	return p;
}

static bool have(const char *tool)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "command -v %s >/dev/null 2>&1", tool);
	return system(cmd) == 0;
}

static double measure(enum config cfg, long n)
{
	struct child c = spawn_loop(n), other;
	char pidarg[32], script[512];
	pid_t tool = -1;
	double ns = -1;
	int pd = -1, pids[1];

	pids[0] = c.pid;
	snprintf(pidarg, sizeof(pidarg), "%d", c.pid);
	switch (cfg) {
	case UNTRACED:
		return run_loop(&c);
	case FLOOR: {
		struct bench_floor_bpf *skel = bench_floor_bpf__open();

		if (skel)
			skel->rodata->target_tgid = (__u32)c.pid;
		if (!skel || bench_floor_bpf__load(skel) || bench_floor_bpf__attach(skel)) {
			fprintf(stderr, "floor: cannot load the BPF object\n");
			run_loop(&c);
			bench_floor_bpf__destroy(skel);
			return -1;
		}
		ns = run_loop(&c);
		prog_stats(cfg);
		bench_floor_bpf__destroy(skel);
		return ns;
	}
	case SUMMARY:
	case PER_CALL:
	case OTHER_TRACED: {
		struct PmuTraceAttr a = { .pidList = pids, .numPid = 1 };
		struct KperfTraceOpts x = KPERF_OPTS(KperfTraceOpts, .summaryOnly = cfg != PER_CALL,
						     .ringBufferKb = ring_kb);
		struct PmuTraceStats st;

		if (cfg == OTHER_TRACED) {
			other = spawn_loop(1);
			pids[0] = other.pid;
		}
		pd = KperfTraceOpen(TRACE_SYS_CALL, &a, &x);
		if (pd < 0 || PmuTraceEnable(pd)) {
			fprintf(stderr, "kperf-bpf: %s\n", Perror());
			return -1;
		}
		ns = run_loop(&c);
		if (cfg == PER_CALL) {
			struct PmuTraceData *d;
			int n;

			/* read what the poller stored: the drops are known once all is in */
			while ((n = PmuTraceRead(pd, &d)) > 0)
				PmuTraceDataFree(d);
			if (PmuTraceGetStats(pd, &st) == 0)
				drops += st.dropped;
		}
		prog_stats(cfg);
		PmuTraceClose(pd);
		if (cfg == OTHER_TRACED)
			run_loop(&other);
		return ns;
	}
	case BPFTRACE: {
		char *argv[] = { "bpftrace", "-e", script, NULL };

		snprintf(script, sizeof(script),
			 "tracepoint:raw_syscalls:sys_enter /pid == %d/ { @start[tid] = nsecs; } "
			 "tracepoint:raw_syscalls:sys_exit /@start[tid]/ { "
			 "@us[args->id] = hist(nsecs - @start[tid]); delete(@start[tid]); }",
			 c.pid);
		tool = start_tool(argv, 3000);
		break;
	}
	case PERF_TRACE: {
		char *argv[] = { "perf", "trace", "-s", "-p", pidarg, NULL };

		tool = start_tool(argv, 2000);
		break;
	}
	case STRACE: {
		char *argv[] = { "strace", "-c", "-p", pidarg, NULL };

		tool = start_tool(argv, 1000);
		break;
	}
	default:
		break;
	}
	ns = run_loop(&c);
	if (tool > 0) {
		kill(tool, SIGINT);
		waitpid(tool, NULL, 0);
	}
	return ns;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double attach_ms(void)
{
	const char *build = getenv("KPERF_BUILD");
	char cmd[512], buf[4096];
	double ms = -1;
	size_t n;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "%s/bin/kperf-bpf trace --format json -- true 2>/dev/null",
		 build ? build : "build");
	f = popen(cmd, "r");
	if (!f)
		return -1;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	pclose(f);
	if (strstr(buf, "\"attach_ms\":"))
		ms = atof(strstr(buf, "\"attach_ms\":") + 12);
	return ms;
}

int main(int argc, char **argv)
{
	double results[NCONFIG][MAX_ROUNDS], med[NCONFIG];
	bool run[NCONFIG], peers = true;
	int rounds = 5, r, c, i, stats_fd;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--calls") && i + 1 < argc)
			calls = atol(argv[++i]);
		else if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
			rounds = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--no-peers"))
			peers = false;
		else if (!strcmp(argv[i], "--wall"))
			wall = true;
		else if (!strcmp(argv[i], "--ring-kb") && i + 1 < argc)
			ring_kb = (unsigned)atoi(argv[++i]);
	}
	if (rounds < 1 || rounds > MAX_ROUNDS || calls < 1000) {
		fprintf(stderr,
			"usage: trace_overhead [--calls N>=1000] [--rounds 1..31] [--no-peers] "
			"[--wall] [--ring-kb KB]\n");
		return 2;
	}
	for (c = 0; c < NCONFIG; c++)
		run[c] = c < BPFTRACE;
	run[BPFTRACE] = peers && have("bpftrace");
	run[PERF_TRACE] = peers && have("perf");
	run[STRACE] = peers && have("strace");

	printf("syscall tracing overhead: %ld getppid() calls per run, %d rounds, median, ns of "
	       "%s per call\n\n",
	       calls, rounds, wall ? "wall-clock time" : "the caller's CPU time");
	for (r = 0; r < rounds; r++) {
		for (c = 0; c < NCONFIG; c++) {
			/* the slow peers get fewer calls: ns per call is what is compared */
			long n = c >= PERF_TRACE ? calls / 20 : calls;

			if (!run[c] || (c >= BPFTRACE && r >= (rounds + 1) / 2))
				continue;
			results[c][r] = measure((enum config)c, n);
		}
	}
	/* the programs' own time, in a pass of its own (off again when stats_fd is closed) */
	stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
	if (stats_fd >= 0) {
		stats_pass = true;
		for (c = FLOOR; c <= OTHER_TRACED; c++)
			measure((enum config)c, calls);
		stats_pass = false;
		close(stats_fd);
	}
	for (c = 0; c < NCONFIG; c++) {
		int nr = c >= BPFTRACE ? (rounds + 1) / 2 : rounds;

		if (!run[c])
			continue;
		qsort(results[c], (size_t)nr, sizeof(double), cmp_double);
		med[c] = results[c][nr / 2];
	}
	printf("%-46s %9s %10s %9s %14s\n", "configuration", "ns/call", "x untraced", "x floor",
	       "prog ns/call");
	for (c = 0; c < NCONFIG; c++) {
		if (!run[c]) {
			printf("%-46s %9s %10s\n", names[c], "-",
			       peers ? "(not installed)" : "(skipped)");
			continue;
		}
		printf("%-46s %9.1f %9.2fx %8.2fx", names[c], med[c], med[c] / med[UNTRACED],
		       med[c] / med[FLOOR]);
		/* both programs' time per call (sys_enter + sys_exit), in the stats pass */
		if (run_cnt[c][0] && run_cnt[c][1])
			printf(" %14.1f", (double)run_ns[c][0] / (double)run_cnt[c][0] +
						  (double)run_ns[c][1] / (double)run_cnt[c][1]);
		putchar('\n');
	}
	printf("\nvs floor: summary %.2fx (target 1.15), per-call %.2fx (target 1.30, %llu records "
	       "dropped), bystander %.2fx (target 1.03)\n",
	       med[SUMMARY] / med[FLOOR], med[PER_CALL] / med[FLOOR], drops,
	       med[OTHER_TRACED] / med[FLOOR]);
	if (stats_fd < 0)
		printf("(no program run times: BPF_ENABLE_STATS refused)\n");
	for (c = FLOOR; c <= OTHER_TRACED && stats_fd >= 0; c++)
		if (run_cnt[c][0] && run_cnt[c][1])
			printf("%s: sys_enter %.1f ns/run (%llu runs), sys_exit %.1f ns/run (%llu runs)\n",
			       names[c], (double)run_ns[c][0] / (double)run_cnt[c][0],
			       run_cnt[c][0], (double)run_ns[c][1] / (double)run_cnt[c][1],
			       run_cnt[c][1]);
	if (run[BPFTRACE])
		printf("bpftrace vs kperf-bpf summary: %.2fx\n", med[BPFTRACE] / med[SUMMARY]);
	printf("kperf-bpf trace attached %.1f ms after it started\n", attach_ms());
	return 0;
}
