/*
 * unwind_cost - what unwinding user stacks from .eh_frame costs (issue 21), as ratios in one
 * run, on the workload built without frame pointers (build/workloads/nofp):
 *   1. per sample at 999 Hz: the sampling program's own run time (BPF_ENABLE_STATS, the
 *      kernel's count) with callGraph dwarf and fp (bpf_get_stack), and the CPU per sample of
 *      the whole collection (kperf-bpf's process from open to a resolved PmuRead) against
 *      `perf record --call-graph dwarf` + `perf report` (when perf is installed);
 *   2. bytes leaving the kernel per sample (aggregates + distinct stacks, against perf.data);
 *   3. the unwind tables a process with N libraries needs (Debian's python3), in the kernel;
 *   4. churn: a system-wide 99 Hz profile while short processes start and exit: CPU and
 *      process entries per process started, stacks taken before their tables.
 *
 *   unwind_cost [--ms N] [--churn PROCESSES] [--churn-only]
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "kperf/kperf.h"
#include "sample.h"
#include "stack_capture.h"
#include "unwind_table.h"

static char build[4096];
static long work_ms = 1500;

static double cpu_s(int who)
{
	struct rusage ru;

	getrusage(who, &ru);
	return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
	       (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

/* argv started with stdin a pipe (it waits for a line there); its pid, the pipe in *go */
static pid_t spawn(char *const argv[], int *go)
{
	int fds[2];
	pid_t pid;

	if (pipe(fds))
		exit(1);
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		dup2(fds[0], 0);
		close(fds[1]);
		if (!freopen("/dev/null", "w", stdout))
			_exit(126);
		execvp(argv[0], argv);
		_exit(127);
	}
	close(fds[0]);
	*go = fds[1];
	usleep(200000);
	return pid;
}

/* the run time per run of the newest perf_event program named kp_sample* */
static double prog_ns_per_run(unsigned long long *runs)
{
	__u32 id = 0, best = 0;
	double ns = 0;

	*runs = 0;
	while (!bpf_prog_get_next_id(id, &id)) {
		struct bpf_prog_info info = { 0 };
		__u32 len = sizeof(info);
		int fd = bpf_prog_get_fd_by_id(id);

		if (fd < 0)
			continue;
		if (!bpf_obj_get_info_by_fd(fd, &info, &len) &&
		    info.type == BPF_PROG_TYPE_PERF_EVENT && !strncmp(info.name, "kp_sample", 9) &&
		    info.run_cnt && id > best) {
			best = id;
			*runs = info.run_cnt;
			ns = (double)info.run_time_ns / (double)info.run_cnt;
		}
		close(fd);
	}
	return ns;
}

struct kres {
	double bpf_ns, cpu_per_sample_us, bytes_per_sample, whole;
	unsigned long long samples, runs;
	struct KperfUnwindStats u;
};

/* nofp sampled at 999 Hz with <call_graph> */
static struct kres kperf(unsigned call_graph)
{
	char path[4200], ms[32], *argv[] = { path, "--ms", ms, NULL }, *evts[] = { "cpu-clock" };
	struct KperfPmuOpts o = { .sz = sizeof(o), .callGraph = call_graph };
	struct PmuAttr a = { .evtList = evts,
			     .numEvt = 1,
			     .useFreq = 1,
			     .freq = 999,
			     .callStack = 1,
			     .symbolMode = RESOLVE_ELF };
	struct kres r = { 0 };
	struct PmuData *d = NULL;
	const struct Stack *seen[4096];
	unsigned nseen = 0, whole = 0;
	double t0;
	int go, pd, n, i, pids[1];

	snprintf(path, sizeof(path), "%s/workloads/nofp", build);
	snprintf(ms, sizeof(ms), "%ld", work_ms);
	pids[0] = spawn(argv, &go);
	a.pidList = pids;
	a.numPid = 1;
	t0 = cpu_s(RUSAGE_SELF);
	pd = KperfOpen(SAMPLING, &a, &o);
	if (pd < 0 || PmuEnable(pd)) {
		fprintf(stderr, "unwind_cost: %s\n", Perror());
		exit(1);
	}
	if (write(go, "g\n", 2) != 2)
		exit(1);
	close(go);
	waitpid(pids[0], NULL, 0);
	PmuDisable(pd);
	r.bpf_ns = prog_ns_per_run(&r.runs);
	n = PmuRead(pd, &d);
	r.cpu_per_sample_us = cpu_s(RUSAGE_SELF) - t0;
	KperfPmuGetUnwindStats(pd, &r.u);
	for (i = 0; i < n; i++) {
		const struct Stack *s;
		unsigned k;

		r.samples += d[i].count ? d[i].count : 1;
		for (s = d[i].stack; s; s = s->next)
			if (s->symbol && s->symbol->symbolName &&
			    !strcmp(s->symbol->symbolName, "main"))
				break;
		whole += s ? (d[i].count ? d[i].count : 1) : 0;
		for (k = 0; k < nseen && seen[k] != d[i].stack; k++)
			;
		if (k == nseen && nseen < 4096)
			seen[nseen++] = d[i].stack;
	}
	r.cpu_per_sample_us = r.samples ? r.cpu_per_sample_us * 1e6 / (double)r.samples : 0;
	/* each aggregate drained once; each distinct stack (user and kernel) read once */
	r.bytes_per_sample =
		r.samples ?
			((double)n * (sizeof(struct kp_sample_key) + sizeof(struct kp_sample_val)) +
			 2.0 * nseen * sizeof(struct kp_cap_stack)) /
				(double)r.samples :
			0;
	r.whole = r.samples ? 100.0 * whole / (double)r.samples : 0;
	if (n > 0)
		PmuDataFree(d);
	PmuClose(pd);
	return r;
}

/* `sh -c <cmd>`: the CPU time it and its children took */
static double run_cpu(const char *cmd)
{
	double c0 = cpu_s(RUSAGE_CHILDREN);

	if (system(cmd) != 0)
		return -1;
	return cpu_s(RUSAGE_CHILDREN) - c0;
}

static void perf_dwarf(const struct kres *kd)
{
	char cmd[9000];
	double rec, rep, bytes;
	unsigned long long samples = 0;
	struct stat st;
	FILE *f;

	if (system("perf version >/dev/null 2>&1")) {
		printf("perf --call-graph dwarf: perf is not installed\n");
		return;
	}
	snprintf(cmd, sizeof(cmd),
		 "echo go | perf record -q -F 999 --call-graph dwarf -o /tmp/kp-uwc.data -- "
		 "%s/workloads/nofp --ms %ld >/dev/null 2>&1",
		 build, work_ms);
	rec = run_cpu(cmd);
	rep = run_cpu("perf report -i /tmp/kp-uwc.data --stdio >/dev/null 2>&1");
	bytes = stat("/tmp/kp-uwc.data", &st) ? 0 : (double)st.st_size;
	f = popen("perf script -i /tmp/kp-uwc.data -F tid 2>/dev/null | wc -l", "r");
	if (!f || fscanf(f, "%llu", &samples) != 1)
		samples = 0;
	if (f)
		pclose(f);
	unlink("/tmp/kp-uwc.data");
	if (!samples || rec < 0 || rep < 0) {
		printf("perf --call-graph dwarf: no samples\n");
		return;
	}
	printf("%-34s %9.1f %12s %12.0f   (%llu samples; record %.2f s + report %.2f s CPU; "
	       "its own CPU: the workload's taken off)\n",
	       "perf record --call-graph dwarf", (rec + rep - work_ms / 1e3) * 1e6 / samples, "-",
	       bytes / samples, samples, rec, rep);
	printf("ratio perf dwarf / kperf-bpf dwarf, CPU per sample: %.1fx; bytes per sample: "
	       "%.0fx\n",
	       (rec + rep - work_ms / 1e3) * 1e6 / samples /
		       (kd->cpu_per_sample_us + kd->bpf_ns / 1e3),
	       bytes / samples / kd->bytes_per_sample);
}

/* python3 (libpython, libc, libm, libz, libexpat...): its tables in the kernel */
static void tables_of_python(void)
{
	char *argv[] = { "python3", "-c",
			 "import sys; sys.stdin.readline(); sum(i * i for i in range(3000000))",
			 NULL };
	char *evts[] = { "cpu-clock" }, path[64], line[4096], last[4096] = "";
	struct PmuAttr a = { .evtList = evts,
			     .numEvt = 1,
			     .useFreq = 1,
			     .freq = 99,
			     .callStack = 1,
			     .symbolMode = NO_SYMBOL_RESOLVE };
	struct KperfUnwindStats u;
	int go, pd, pids[1], libs = 0;
	FILE *f;

	pids[0] = spawn(argv, &go);
	a.pidList = pids;
	a.numPid = 1;
	pd = KperfOpen(SAMPLING, &a, NULL);
	if (pd < 0 || PmuEnable(pd))
		exit(1);
	if (write(go, "\n", 1) != 1)
		exit(1);
	usleep(300000); /* its modules imported */
	snprintf(path, sizeof(path), "/proc/%d/maps", pids[0]);
	f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f)) {
		char *file = strchr(line, '/');

		if (strstr(line, " r-xp ") && file && strcmp(file, last)) {
			libs++;
			snprintf(last, sizeof(last), "%s", file);
		}
	}
	if (f)
		fclose(f);
	close(go);
	waitpid(pids[0], NULL, 0);
	PmuDisable(pd);
	KperfPmuGetUnwindStats(pd, &u);
	PmuClose(pd);
	printf("python3 (%d executable files mapped): %llu tables, %llu rows, %.0f KiB of rows "
	       "in the kernel (16 B a row; the row array is preallocated: 16 MiB, the process map "
	       "1024 x %zu B)\n",
	       libs, u.tables, u.rows, u.rowBytes / 1024.0, sizeof(struct kp_uw_proc));
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* a fresh shell (not a fork of this big process) starts /bin/true <count> times: how many it
 * started, and the seconds it took */
static long shell_loop(int count, double *seconds)
{
	double t0 = now_s();
	long started = 0;
	pid_t loop;
	int p[2];
	FILE *f;

	if (pipe(p))
		exit(1);
	fflush(NULL);
	loop = fork();
	if (loop == 0) {
		char script[256];

		/* fd 3: sh takes one digit (the profiler's open fds push the pipe's above 9) */
		snprintf(script, sizeof(script),
			 "i=0; while [ $i -lt %d ]; do /bin/true; i=$((i + 1)); done; echo $i >&3",
			 count);
		close(p[0]);
		if (p[1] != 3 && (dup2(p[1], 3) < 0 || close(p[1])))
			_exit(126);
		execl("/bin/sh", "sh", "-c", script, NULL);
		_exit(127);
	}
	close(p[1]);
	f = fdopen(p[0], "r");
	if (!f || fscanf(f, "%ld", &started) != 1)
		started = 0;
	if (f)
		fclose(f);
	waitpid(loop, NULL, 0);
	*seconds = now_s() - t0;
	return started;
}

/* <count> short processes started one after the other by a shell, the whole system sampled,
 * and the same loop unprofiled just before (same conditions: the rate ratio) */
static void churn(int count)
{
	double seconds;
	char *evts[] = { "cpu-clock" };
	struct PmuAttr a = { .evtList = evts,
			     .numEvt = 1,
			     .useFreq = 1,
			     .freq = 99,
			     .callStack = 1,
			     .symbolMode = RESOLVE_ELF };
	struct KperfUnwindStats u;
	struct PmuData *d = NULL;
	struct rusage ru;
	double c0, c1, base_s;
	long started, base;
	int pd, n;

	base = shell_loop(count, &base_s);
	c0 = cpu_s(RUSAGE_SELF);
	pd = KperfOpen(SAMPLING, &a, NULL);
	if (pd < 0 || PmuEnable(pd)) {
		fprintf(stderr, "unwind_cost: %s\n", Perror());
		exit(1);
	}
	started = shell_loop(count, &seconds);
	PmuDisable(pd);
	n = PmuRead(pd, &d);
	c1 = cpu_s(RUSAGE_SELF);
	KperfPmuGetUnwindStats(pd, &u);
	getrusage(RUSAGE_SELF, &ru);
	printf("churn, %.1f s system-wide at 99 Hz, %ld processes started (%.0f/s): kperf-bpf "
	       "%.2f s CPU (%.0f us per process started), max RSS %ld MiB; %llu process "
	       "entries written, %llu stacks by frame pointers before their tables, %llu cut at "
	       "new code; %d records%s%s\n",
	       seconds, started, (double)started / seconds, c1 - c0,
	       started ? (c1 - c0) * 1e6 / started : 0, ru.ru_maxrss / 1024, u.processes,
	       u.stacksNotLoaded, u.stacksUnknownMap, n, GetWarn() ? "; warning: " : "",
	       GetWarn() ? GetWarnMsg() : "");
	printf("churn unprofiled: %ld processes in %.1f s (%.0f/s); profiled / unprofiled rate "
	       "%.2f\n",
	       base, base_s, (double)base / base_s,
	       base && seconds > 0 ? ((double)started / seconds) / ((double)base / base_s) : 0);
	if (n > 0)
		PmuDataFree(d);
	PmuClose(pd);
}

int main(int argc, char **argv)
{
	const char *b = getenv("KPERF_BUILD");
	struct kres kd, kf;
	int i, churn_n = 2000, churn_only = 0, stats_fd;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--ms") && i + 1 < argc)
			work_ms = atol(argv[++i]);
		else if (!strcmp(argv[i], "--churn") && i + 1 < argc)
			churn_n = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--churn-only"))
			churn_only = 1;
	}
	if (churn_only) { /* the process-start cost alone (issue 21's churn figures) */
		churn(churn_n);
		return 0;
	}
	snprintf(build, sizeof(build), "%s", b ? b : "build");
	stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME); /* while the fd is open */
	if (stats_fd < 0)
		fprintf(stderr, "unwind_cost: no BPF run-time statistics: %s\n", strerror(errno));
	kd = kperf(KPERF_CALL_GRAPH_DWARF);
	kf = kperf(KPERF_CALL_GRAPH_FP);
	printf("nofp (-O2 -fomit-frame-pointer) for %ld ms of CPU, cpu-clock at 999 Hz\n\n",
	       work_ms);
	printf("%-34s %9s %12s %12s %8s\n", "method", "BPF ns", "CPU us/smpl", "bytes/smpl",
	       "to main");
	printf("%-34s %9.0f %12.1f %12.0f %7.1f%%   (%llu samples)\n",
	       "kperf-bpf dwarf (.eh_frame)", kd.bpf_ns, kd.cpu_per_sample_us, kd.bytes_per_sample,
	       kd.whole, kd.samples);
	printf("%-34s %9.0f %12.1f %12.0f %7.1f%%   (%llu samples)\n",
	       "kperf-bpf fp (bpf_get_stack)", kf.bpf_ns, kf.cpu_per_sample_us, kf.bytes_per_sample,
	       kf.whole, kf.samples);
	printf("ratio dwarf / fp, BPF run time per sample: %.2fx (target <= 1.5x)\n",
	       kf.bpf_ns > 0 ? kd.bpf_ns / kf.bpf_ns : 0);
	printf("frames found (dwarf): %llu .eh_frame, %llu .debug_frame, %llu plt, %llu fp\n\n",
	       kd.u.framesEhFrame, kd.u.framesDebugFrame, kd.u.framesPlt, kd.u.framesFp);
	perf_dwarf(&kd);
	printf("\n");
	tables_of_python();
	printf("\n");
	churn(churn_n);
	if (stats_fd >= 0)
		close(stats_fd);
	return 0;
}
