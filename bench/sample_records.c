/*
 * sample_records - sampling as libkperf does it by default, one PmuData per sample: what it
 * costs a process that keeps both CPUs busy, and what PmuRead costs per sample, as ratios
 * measured in one run.
 *
 * The workload (cpuburn --threads 2 --iters N: both threads do the same fixed work) runs
 * untraced, sampled by kperf-bpf at 999 Hz with call stacks (cpu-clock, RESOLVE_ELF) in the
 * default mode (one record per sample) and in the aggregated mode (KperfOpen aggregate=1:
 * one record per distinct stack, counted in the kernel), and under `perf record -g -F 999`
 * (when installed). Rounds are interleaved; medians of the wall times are compared. After
 * each kperf-bpf run the PmuRead that turns its samples into resolved PmuData is timed
 * (the array freed after), divided by the number of samples.
 *
 *   sample_records [--iters N] [--rounds R]
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kperf/kperf.h"

enum config { UNTRACED, KDEFAULT, KAGG, PERF, NCONFIG };

static const char *const names[NCONFIG] = {
	"untraced",
	"kperf-bpf, one record per sample",
	"kperf-bpf, aggregated (aggregate=1)",
	"perf record -g -F 999",
};

static char workload[4096];
static long iters = 12000; /* about 0.9 s of both CPUs here */

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

struct child {
	pid_t pid;
	int go;
};

/* cpuburn with 2 threads, waiting for a byte on stdin */
static struct child spawn(void)
{
	char n[32];
	int fds[2];
	struct child c;

	snprintf(n, sizeof(n), "%ld", iters);
	if (pipe(fds))
		exit(1);
	fflush(NULL);
	c.pid = fork();
	if (c.pid == 0) {
		char *argv[] = { workload, "--threads", "2", "--iters", n, "--wait", NULL };

		dup2(fds[0], 0);
		close(fds[1]);
		if (!freopen("/dev/null", "w", stdout))
			_exit(126);
		execv(workload, argv);
		_exit(127);
	}
	close(fds[0]);
	c.go = fds[1];
	usleep(100000); /* let it reach its read() */
	return c;
}

static double run(struct child *c)
{
	double t0 = now_ms();

	if (write(c->go, "g", 1) != 1)
		return -1;
	close(c->go);
	waitpid(c->pid, NULL, 0);
	return now_ms() - t0;
}

struct read_cost {
	double ms; /* PmuRead + PmuDataFree */
	uint64_t samples;
	int records;
};

static double measure_kperf(bool aggregate, struct read_cost *rc)
{
	struct child c = spawn();
	char *evts[] = { "cpu-clock" };
	int pids[] = { c.pid };
	struct PmuAttr a = { .evtList = evts,
			     .numEvt = 1,
			     .pidList = pids,
			     .numPid = 1,
			     .useFreq = 1,
			     .freq = 999,
			     .callStack = 1,
			     .symbolMode = RESOLVE_ELF };
	struct PmuData *d;
	double ms, t0;
	int pd = KperfOpen(SAMPLING, &a, &KPERF_OPTS(KperfPmuOpts, .aggregate = aggregate)), n, i;

	if (pd < 0 || PmuEnable(pd)) {
		fprintf(stderr, "kperf-bpf: %s\n", Perror());
		exit(1);
	}
	ms = run(&c);
	PmuDisable(pd);
	t0 = now_ms();
	n = PmuRead(pd, &d);
	rc->records = n;
	rc->samples = 0;
	for (i = 0; i < n; i++)
		rc->samples += d[i].count;
	PmuDataFree(d);
	rc->ms = now_ms() - t0;
	PmuClose(pd);
	return ms;
}

static double measure_perf(void)
{
	static const char *out = "/tmp/kperf-bench-records-perf.data";
	struct child c = spawn();
	char pid[32];
	pid_t perf;
	double ms;

	snprintf(pid, sizeof(pid), "%d", c.pid);
	fflush(NULL);
	perf = fork();
	if (perf == 0) {
		char *argv[] = { "perf", "record", "-q", "-g",	      "-F", "999",
				 "-p",	 pid,	   "-o", (char *)out, NULL };

		if (!freopen("/dev/null", "w", stderr))
			_exit(126);
		execvp("perf", argv);
		_exit(127);
	}
	usleep(1500000); /* perf record attaches */
	ms = run(&c);
	waitpid(perf, NULL, 0);
	unlink(out);
	unlink("/tmp/kperf-bench-records-perf.data.old");
	return ms;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(double), cmp);
	return v[n / 2];
}

int main(int argc, char **argv)
{
	const char *build = getenv("KPERF_BUILD");
	double res[NCONFIG][15], med[NCONFIG], per[2][15], recs[2][15];
	bool have_perf = system("perf version >/dev/null 2>&1") == 0;
	struct read_cost rc;
	int rounds = 5, r, c, i;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--iters") && i + 1 < argc)
			iters = atol(argv[++i]);
		else if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
			rounds = atoi(argv[++i]);
	}
	if (rounds < 1 || rounds > 15 || iters < 100) {
		fprintf(stderr, "usage: sample_records [--iters N>=100] [--rounds 1..15]\n");
		return 2;
	}
	snprintf(workload, sizeof(workload), "%s/workloads/cpuburn", build ? build : "build");
	printf("Sampling both CPUs at 999 Hz with call stacks: cpuburn --threads 2 --iters %ld "
	       "(fixed work), %d rounds, medians\n\n",
	       iters, rounds);
	for (r = 0; r < rounds; r++) {
		struct child ch = spawn();

		res[UNTRACED][r] = run(&ch);
		res[KDEFAULT][r] = measure_kperf(false, &rc);
		per[0][r] = rc.ms * 1e6 / (double)(rc.samples ? rc.samples : 1);
		recs[0][r] = (double)rc.records;
		res[KAGG][r] = measure_kperf(true, &rc);
		per[1][r] = rc.ms * 1e6 / (double)(rc.samples ? rc.samples : 1);
		recs[1][r] = (double)rc.samples / (rc.records ? rc.records : 1);
		if (have_perf)
			res[PERF][r] = measure_perf();
	}
	for (c = 0; c < NCONFIG; c++)
		if (c != PERF || have_perf)
			med[c] = median(res[c], rounds);
	printf("%-38s %10s %12s\n", "configuration", "wall ms", "vs untraced");
	for (c = 0; c < NCONFIG; c++) {
		if (c == PERF && !have_perf) {
			printf("%-38s %10s %12s\n", names[c], "-", "(no perf)");
			continue;
		}
		printf("%-38s %10.1f %11.3fx\n", names[c], med[c], med[c] / med[UNTRACED]);
	}
	if (have_perf)
		printf("\nkperf-bpf (one record per sample) / perf record: %.3fx\n",
		       med[KDEFAULT] / med[PERF]);
	printf("\nPmuRead + PmuDataFree per sample (RESOLVE_ELF, stacks):\n");
	printf("  one record per sample   %8.0f ns  (%.0f records)\n", median(per[0], rounds),
	       median(recs[0], rounds));
	printf("  aggregated              %8.0f ns  (%.1f samples per record)\n",
	       median(per[1], rounds), median(recs[1], rounds));
	printf("  ratio                   %8.2fx\n",
	       median(per[0], rounds) / median(per[1], rounds));
	return 0;
}
