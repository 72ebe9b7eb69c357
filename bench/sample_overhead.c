/*
 * sample_overhead - what CPU profiling costs a CPU-bound process, and how long it takes
 * from the end of a collection to a resolved report, as ratios measured in one run.
 *
 * The workload (build/workloads/cpuburn --iters) does a fixed amount of work in hot_loop(); its
 * wall time untraced is compared with its wall time while sampled with call stacks at
 * 99 Hz and 999 Hz by kperf-bpf (PmuOpen SAMPLING) and by `perf record -g` (when
 * installed). Rounds are interleaved and medians compared. Then one profile is taken by
 * both tools and the time to a symbolised top-functions report is measured: PmuRead +
 * the hottest-functions summary, vs `perf report --stdio` on perf.data.
 *
 *   sample_overhead [--iters N] [--rounds R]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "export/export.h"
#include "kperf/kperf.h"

enum config { UNTRACED, K99, K999, P99, P999, NCONFIG };

static const char *const names[NCONFIG] = {
	"untraced",
	"kperf-bpf record -g, 99 Hz",
	"kperf-bpf record -g, 999 Hz",
	"perf record -g, 99 Hz",
	"perf record -g, 999 Hz",
};

static char workload[4096];
static long iters = 6000; /* about a second here */

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

/* cpuburn, waiting for a byte on stdin */
static struct child spawn(void)
{
	char n[32];
	int fds[2];
	struct child c;

	snprintf(n, sizeof(n), "%ld", iters);
	if (pipe(fds))
		exit(1);
	fflush(NULL); /* the child must not print our buffered output again */
	c.pid = fork();
	if (c.pid == 0) {
		char *argv[] = { workload, "--iters", n, "--wait", NULL };

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

/* release it and return its wall time in ms */
static double run(struct child *c)
{
	double t0 = now_ms();

	if (write(c->go, "g", 1) != 1)
		return -1;
	close(c->go);
	waitpid(c->pid, NULL, 0);
	return now_ms() - t0;
}

static double measure_kperf(unsigned freq, int *pd_out, struct PmuData **data, int *n)
{
	struct child c = spawn();
	char *evts[] = { "cpu-clock" };
	int pids[] = { c.pid };
	struct PmuAttr a = { .evtList = evts,
			     .numEvt = 1,
			     .pidList = pids,
			     .numPid = 1,
			     .useFreq = 1,
			     .freq = freq,
			     .callStack = 1,
			     .symbolMode = RESOLVE_ELF };
	double ms;
	int pd = KperfOpen(SAMPLING, &a, &KPERF_OPTS(KperfPmuOpts, .aggregate = 1));

	if (pd < 0 || PmuEnable(pd)) {
		fprintf(stderr, "kperf-bpf: %s\n", Perror());
		exit(1);
	}
	ms = run(&c);
	PmuDisable(pd);
	if (pd_out) {
		*pd_out = pd;
		return ms;
	}
	*n = PmuRead(pd, data);
	PmuDataFree(*data);
	PmuClose(pd);
	return ms;
}

static double measure_perf(unsigned freq, const char *out)
{
	struct child c = spawn();
	char pid[32], f[32];
	pid_t perf;
	double ms;

	snprintf(pid, sizeof(pid), "%d", c.pid);
	snprintf(f, sizeof(f), "%u", freq);
	fflush(NULL);
	perf = fork();
	if (perf == 0) {
		char *argv[] = { "perf", "record", "-q", "-g",	      "-F", f,
				 "-p",	 pid,	   "-o", (char *)out, NULL };

		if (!freopen("/dev/null", "w", stderr))
			_exit(126);
		execvp("perf", argv);
		_exit(127);
	}
	usleep(1500000); /* perf record attaches */
	ms = run(&c);
	waitpid(perf, NULL, 0); /* it ends with its target */
	return ms;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	const char *build = getenv("KPERF_BUILD");
	double res[NCONFIG][15], med[NCONFIG], t0, kperf_report, perf_report = -1;
	bool have_perf = system("perf version >/dev/null 2>&1") == 0;
	struct kp_hot_list hot;
	struct PmuData *d;
	int rounds = 5, r, c, i, n, pd;
	FILE *devnull;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--iters") && i + 1 < argc)
			iters = atol(argv[++i]);
		else if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
			rounds = atoi(argv[++i]);
	}
	if (rounds < 1 || rounds > 15 || iters < 100) {
		fprintf(stderr, "usage: sample_overhead [--iters N>=100] [--rounds 1..15]\n");
		return 2;
	}
	snprintf(workload, sizeof(workload), "%s/workloads/cpuburn", build ? build : "build");
	printf("CPU profiling overhead: cpuburn --iters %ld (fixed work), %d rounds, median "
	       "wall time\n\n",
	       iters, rounds);
	for (r = 0; r < rounds; r++) {
		res[UNTRACED][r] = ({
			struct child ch = spawn();
			run(&ch);
		});
		res[K99][r] = measure_kperf(99, NULL, &d, &n);
		res[K999][r] = measure_kperf(999, NULL, &d, &n);
		if (have_perf) {
			res[P99][r] = measure_perf(99, "/tmp/kperf-bench-perf.data");
			res[P999][r] = measure_perf(999, "/tmp/kperf-bench-perf.data");
		}
	}
	for (c = 0; c < NCONFIG; c++) {
		if (c >= P99 && !have_perf)
			continue;
		qsort(res[c], (size_t)rounds, sizeof(double), cmp);
		med[c] = res[c][rounds / 2];
	}
	printf("%-32s %10s %8s\n", "configuration", "wall ms", "ratio");
	for (c = 0; c < NCONFIG; c++) {
		if (c >= P99 && !have_perf) {
			printf("%-32s %10s %8s\n", names[c], "-", "(no perf)");
			continue;
		}
		printf("%-32s %10.1f %7.3fx\n", names[c], med[c], med[c] / med[UNTRACED]);
	}

	/* end of collection -> resolved report, for one 999 Hz profile of each tool */
	measure_kperf(999, &pd, &d, &n);
	t0 = now_ms();
	n = PmuRead(pd, &d);
	kp_hot_functions(d, n, &hot);
	devnull = fopen("/dev/null", "w");
	kp_report_hottest(devnull, &hot, 20);
	kperf_report = now_ms() - t0;
	kp_hot_list_free(&hot);
	PmuDataFree(d);
	PmuClose(pd);
	if (have_perf) {
		measure_perf(999, "/tmp/kperf-bench-perf.data");
		t0 = now_ms();
		if (system("perf report --stdio -i /tmp/kperf-bench-perf.data >/dev/null 2>&1") ==
		    0)
			perf_report = now_ms() - t0;
		unlink("/tmp/kperf-bench-perf.data");
		unlink("/tmp/kperf-bench-perf.data.old");
	}
	printf("\nend of collection -> resolved top-functions report (999 Hz, stacks):\n");
	printf("  kperf-bpf (PmuRead + summary)   %8.1f ms\n", kperf_report);
	if (perf_report >= 0)
		printf("  perf report --stdio             %8.1f ms   (%.1fx kperf-bpf)\n",
		       perf_report, perf_report / kperf_report);
	fclose(devnull);
	return 0;
}
