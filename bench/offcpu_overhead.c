/*
 * offcpu_overhead - what off-CPU tracing costs a context-switch-heavy process, as ratios
 * measured in one run.
 *
 * A child process has two threads pass a byte back and forth over two pipes N times (every
 * pass a block and a wake-up) and reports ns per round trip. It runs untraced, under
 * kperf-bpf's off-CPU tracing without stacks (the sched_switch program and its maps alone),
 * with user stacks (what libkperf's blocked sampling keeps), with kernel and user stacks (kperf-bpf record --off-cpu), in wall mode (the same plus
 * cpu-clock samples), with cpu-clock samples alone (what wall mode adds), and, where installed, under offcputime of bcc's libbpf-tools (kernel
 * and user stacks as well) and `perf record -e sched:sched_switch -g`. Configurations are
 * interleaved over several rounds; each median is compared with the untraced median.
 *
 *   offcpu_overhead [--trips N] [--rounds R] [--no-peers]
 */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kperf/kperf.h"
#include "offcpu/offcpu.h"

#define MAX_ROUNDS 31

enum config {
	UNTRACED,
	NO_STACKS,
	USER_STACKS,
	OFF_CPU,
	WALL,
	CPU_SAMPLES,
	OFFCPUTIME,
	PERF_RECORD,
	NCONFIG
};

static const char *const names[NCONFIG] = {
	"untraced",
	"kperf-bpf off-CPU, no stacks",
	"kperf-bpf off-CPU, user stacks (libkperf's)",
	"kperf-bpf off-CPU (record --off-cpu)",
	"kperf-bpf wall (off-CPU + cpu-clock 1 kHz)",
	"kperf-bpf record -g (cpu-clock 1 kHz only)",
	"offcputime (bcc libbpf-tools)",
	"perf record -e sched:sched_switch -g",
};

struct child {
	pid_t pid;
	int go, result;
};

static long trips = 100000;
static int ping[2], pong[2];

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static void *ponger(void *arg)
{
	char c;
	long i;

	(void)arg;
	for (i = 0; i < trips; i++)
		if (read(ping[0], &c, 1) != 1 || write(pong[1], &c, 1) != 1)
			break;
	return NULL;
}

/* a process that waits for a byte, then ping-pongs <trips> times and writes ns per trip */
static struct child spawn(void)
{
	int go[2], res[2];
	struct child c;
	char b;

	if (pipe(go) || pipe(res))
		exit(1);
	c.pid = fork();
	if (c.pid == 0) {
		pthread_t t;
		double t0, ns;
		long i;

		close(go[1]);
		close(res[0]);
		if (pipe(ping) || pipe(pong) || pthread_create(&t, NULL, ponger, NULL))
			_exit(1);
		if (read(go[0], &b, 1) != 1)
			_exit(1);
		t0 = now_ns();
		for (i = 0; i < trips; i++)
			if (write(ping[1], &b, 1) != 1 || read(pong[0], &b, 1) != 1)
				_exit(1);
		ns = (now_ns() - t0) / (double)trips;
		pthread_join(t, NULL);
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

static double run(struct child *c)
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

static int ignore(void *ctx, const struct kp_offcpu_block *b)
{
	(void)ctx;
	(void)b;
	return 0;
}

static double kperf(struct child *c, enum config cfg)
{
	char *evts[] = { "cpu-clock" };
	struct PmuAttr a = { .pidList = &c->pid,
			     .numPid = 1,
			     .blockedSample = cfg != CPU_SAMPLES,
			     .callStack = 1,
			     .symbolMode = RESOLVE_ELF,
			     .useFreq = 1,
			     .freq = 1000 };
	struct KperfPmuOpts o = KPERF_OPTS(KperfPmuOpts, .aggregate = 1,
					   .blockedKernelStack = cfg != USER_STACKS,
					   .offCpuOnly = cfg == OFF_CPU || cfg == USER_STACKS);
	struct PmuData *d = NULL;
	double ns;
	int pd;

	if (cfg == CPU_SAMPLES) {
		a.evtList = evts;
		a.numEvt = 1;
		o.blockedKernelStack = 0;
	}
	pd = KperfOpen(SAMPLING, &a, &o);

	if (pd < 0 || PmuEnable(pd)) {
		fprintf(stderr, "kperf-bpf: %s\n", Perror());
		run(c);
		return -1;
	}
	ns = run(c);
	PmuDisable(pd);
	if (PmuRead(pd, &d) < 0)
		fprintf(stderr, "kperf-bpf: %s\n", Perror());
	PmuDataFree(d);
	PmuClose(pd);
	return ns;
}

static double measure(enum config cfg)
{
	struct child c = spawn();
	char pidarg[32];
	pid_t tool = -1;
	double ns;

	snprintf(pidarg, sizeof(pidarg), "%d", c.pid);
	switch (cfg) {
	case UNTRACED:
		return run(&c);
	case NO_STACKS: {
		struct kp_offcpu_opts o = { .pids = &c.pid, .npids = 1, .blocked_only = true };
		struct kp_offcpu *oc = NULL;

		if (kp_offcpu_open(&o, &oc) || kp_offcpu_enable(oc)) {
			fprintf(stderr, "kperf-bpf: %s\n", Perror());
			kp_offcpu_close(oc);
			run(&c);
			return -1;
		}
		ns = run(&c);
		kp_offcpu_disable(oc, ignore, NULL);
		kp_offcpu_close(oc);
		return ns;
	}
	case USER_STACKS:
	case OFF_CPU:
	case WALL:
	case CPU_SAMPLES:
		return kperf(&c, cfg);
	case OFFCPUTIME: {
		char *argv[] = { "offcputime", "-p", pidarg, "3600", NULL };

		tool = start_tool(argv, 1500);
		break;
	}
	case PERF_RECORD: {
		char *argv[] = { "perf", "record", "-q",   "-e", "sched:sched_switch",
				 "-g",	 "-p",	   pidarg, "-o", "/tmp/kperf-offcpu-bench.data",
				 NULL };

		tool = start_tool(argv, 1500);
		break;
	}
	default:
		break;
	}
	ns = run(&c);
	if (tool > 0) {
		kill(tool, SIGINT);
		waitpid(tool, NULL, 0);
	}
	unlink("/tmp/kperf-offcpu-bench.data");
	return ns;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	double results[NCONFIG][MAX_ROUNDS], med[NCONFIG];
	bool on[NCONFIG], peers = true;
	int rounds = 5, r, c, i;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--trips") && i + 1 < argc)
			trips = atol(argv[++i]);
		else if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
			rounds = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--no-peers"))
			peers = false;
	}
	if (rounds < 1 || rounds > MAX_ROUNDS || trips < 1000) {
		fprintf(stderr,
			"usage: offcpu_overhead [--trips N>=1000] [--rounds 1..31] [--no-peers]\n");
		return 2;
	}
	for (c = 0; c < NCONFIG; c++)
		on[c] = c < OFFCPUTIME;
	on[OFFCPUTIME] = peers && have("offcputime");
	on[PERF_RECORD] = peers && have("perf");
	printf("off-CPU tracing overhead: %ld ping-pong round trips over pipes per run (two "
	       "threads), %d rounds, median\n\n",
	       trips, rounds);
	for (r = 0; r < rounds; r++)
		for (c = 0; c < NCONFIG; c++)
			if (on[c])
				results[c][r] = measure((enum config)c);
	printf("%-46s %12s %10s\n", "configuration", "ns/trip", "ratio");
	for (c = 0; c < NCONFIG; c++) {
		if (!on[c]) {
			printf("%-46s %12s %10s\n", names[c], "-",
			       peers ? "(not installed)" : "(skipped)");
			continue;
		}
		qsort(results[c], (size_t)rounds, sizeof(double), cmp_double);
		med[c] = results[c][rounds / 2];
		printf("%-46s %12.1f %9.2fx\n", names[c], med[c], med[c] / med[UNTRACED]);
	}
	return 0;
}
