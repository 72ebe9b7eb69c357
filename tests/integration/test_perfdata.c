/*
 * test_perfdata.c - a real sampling of cpuburn written with PmuWriteData after the process has
 * exited and the task is closed, read back by perf: as many samples as PmuData records, the
 * same pid, tid, cpu and time for each, hot_loop the hottest symbol, with and without the
 * sample id on side-band records.
 */
#include <criterion/criterion.h>
#include <limits.h>

#include "kperf/kperf.h"
#include "testutil.h"

struct key {
	int pid, tid, cpu;
	uint64_t ts;
};

static int cmp_key(const void *a, const void *b)
{
	const struct key *x = a, *y = b;

	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid - y->tid;
	return x->cpu - y->cpu;
}

static char *run(const char *fmt, const char *file)
{
	char cmd[1024], *out;
	int st;

	snprintf(cmd, sizeof(cmd), fmt, file);
	out = tu_run(cmd, &st);
	cr_assert_not_null(out);
	cr_assert_eq(st, 0, "%s: %s", cmd, out);
	return out;
}

/* the samples perf script reads, against the records written */
static void check_samples(const char *file, const struct PmuData *d, int n)
{
	struct key *want = calloc((size_t)n, sizeof(*want)),
		   *got = calloc((size_t)n + 1, sizeof(*got));
	char *out = run("perf script -i %s -F pid,tid,cpu,time --ns 2>/dev/null", file), *line;
	int i, m = 0;

	for (i = 0; i < n; i++)
		want[i] = (struct key){ d[i].pid, d[i].tid, d[i].cpu, (uint64_t)d[i].ts };
	for (line = strtok(out, "\n"); line; line = strtok(NULL, "\n")) {
		unsigned long sec, nsec;

		cr_assert_lt(m, n, "more samples than the %d records: '%s'", n, line);
		cr_assert_eq(sscanf(line, "%d/%d [%d] %lu.%lu:", &got[m].pid, &got[m].tid,
				    &got[m].cpu, &sec, &nsec),
			     5, "'%s'", line);
		got[m++].ts = sec * 1000000000ULL + nsec;
	}
	cr_assert_eq(m, n, "perf script read %d samples, %d were written", m, n);
	qsort(want, (size_t)n, sizeof(*want), cmp_key);
	qsort(got, (size_t)n, sizeof(*got), cmp_key);
	for (i = 0; i < n; i++) {
		cr_assert_eq(got[i].pid, want[i].pid, "sample %d", i);
		cr_assert_eq(got[i].tid, want[i].tid, "sample %d", i);
		cr_assert_eq(got[i].cpu, want[i].cpu, "sample %d", i);
		cr_assert_eq(got[i].ts, want[i].ts, "sample %d", i);
	}
	free(out);
	free(want);
	free(got);
}

Test(perfdata_live, sampled_workload_reads_back_in_perf, .timeout = 120)
{
	char *argv[] = { "cpuburn", "--ms", "400", "--wait", NULL };
	char *evts[] = { "cpu-clock" };
	struct PmuAttr a = { .evtList = evts,
			     .numEvt = 1,
			     .freq = 999,
			     .useFreq = 1,
			     .callStack = 1,
			     .symbolMode = RESOLVE_ELF };
	struct tu_proc w = tu_spawn_v(argv, 0);
	char path[64] = "/tmp/kperf-live-XXXXXX", *out;
	struct PmuData *d = NULL;
	int pids[1] = { w.pid }, pd, n, idhdr, i, fd;

	a.pidList = pids;
	a.numPid = 1;
	pd = PmuOpen(SAMPLING, &a);
	cr_assert_gt(pd, 0, "%s", Perror());
	cr_assert_eq(PmuEnable(pd), 0);
	tu_go(&w);
	cr_assert_eq(tu_wait(&w), 0);
	PmuDisable(pd);
	n = PmuRead(pd, &d);
	/* the process is gone and the task closed: the file is made from the records alone */
	PmuClose(pd);
	cr_assert_gt(n, 50, "%d samples: %s", n, Perror());
	for (i = 0; i < n; i++)
		cr_assert_eq(d[i].pid, pids[0]);
	fd = mkstemp(path);
	cr_assert_geq(fd, 0);
	close(fd);
	for (idhdr = 0; idhdr < 2; idhdr++) {
		PmuFile f = PmuBeginWrite(path, &a, idhdr);

		cr_assert_not_null(f, "%s", Perror());
		cr_assert_eq(PmuWriteData(f, d, n), SUCCESS, "%s", Perror());
		PmuEndWrite(f);
		cr_assert_eq(Perrorno(), SUCCESS, "%s", Perror());
		check_samples(path, d, n);
		out = run("perf report -i %s --stdio --no-children --sort sym -g none 2>/dev/null "
			  "| grep -m1 -E '^ +[0-9.]+%%'",
			  path);
		cr_assert(strstr(out, "[.] hot_loop\n"), "hottest: %s", out);
		free(out);
		out = run("perf report -i %s --stdio --no-children --sort dso -g none 2>/dev/null "
			  "| grep -m1 -E '^ +[0-9.]+%%'",
			  path);
		cr_assert(strstr(out, "%  cpuburn "), "hottest file: %s", out);
		free(out);
	}
	unlink(path);
	PmuDataFree(d);
	cr_assert_eq(tu_bpf_fds(), 0, "BPF objects left open");
}

/* RESOLVE_DELAY_ELF: the records have no stack until ResolvePmuDataSymbol; written before
 * and after it, the file resolves the same */
Test(perfdata_live, delayed_resolution_before_and_after_resolving, .timeout = 120)
{
	char *argv[] = { "cpuburn", "--ms", "300", "--wait", NULL };
	char *evts[] = { "cpu-clock" };
	struct PmuAttr a = { .evtList = evts,
			     .numEvt = 1,
			     .freq = 999,
			     .useFreq = 1,
			     .callStack = 1,
			     .symbolMode = RESOLVE_DELAY_ELF };
	struct tu_proc w = tu_spawn_v(argv, 0);
	char path[64] = "/tmp/kperf-live-XXXXXX", *out;
	struct PmuData *d = NULL;
	int pids[1] = { w.pid }, pd, n, round, fd;

	a.pidList = pids;
	a.numPid = 1;
	pd = PmuOpen(SAMPLING, &a);
	cr_assert_gt(pd, 0, "%s", Perror());
	cr_assert_eq(PmuEnable(pd), 0);
	tu_go(&w);
	cr_assert_eq(tu_wait(&w), 0);
	PmuDisable(pd);
	n = PmuRead(pd, &d);
	PmuClose(pd);
	cr_assert_gt(n, 50, "%d samples: %s", n, Perror());
	cr_assert_null(d[0].stack);
	fd = mkstemp(path);
	cr_assert_geq(fd, 0);
	close(fd);
	for (round = 0; round < 2; round++) {
		PmuFile f;

		if (round) {
			cr_assert_eq(ResolvePmuDataSymbol(d), SUCCESS, "%s", Perror());
			cr_assert_not_null(d[0].stack);
		}
		f = PmuBeginWrite(path, &a, 0);
		cr_assert_not_null(f, "%s", Perror());
		cr_assert_eq(PmuWriteData(f, d, n), SUCCESS, "%s", Perror());
		PmuEndWrite(f);
		check_samples(path, d, n);
		out = run("perf report -i %s --stdio --no-children --sort sym -g none 2>/dev/null "
			  "| grep -m1 -E '^ +[0-9.]+%%'",
			  path);
		cr_assert(strstr(out, "[.] hot_loop\n"), "round %d, hottest: %s", round, out);
		free(out);
	}
	unlink(path);
	PmuDataFree(d);
	cr_assert_eq(tu_bpf_fds(), 0, "BPF objects left open");
}

/* a tracepoint sampled at period N: each sample written stands for N hits, as perf's would */
Test(perfdata_live, tracepoint_samples_carry_their_period, .timeout = 60)
{
	char *evts[] = { "syscalls:sys_enter_getppid" };
	struct PmuAttr a = {
		.evtList = evts, .numEvt = 1, .period = 250, .symbolMode = NO_SYMBOL_RESOLVE
	};
	char wl[PATH_MAX], out_buf[64], path[64] = "/tmp/kperf-tp-XXXXXX", *out;
	char *argv[] = { wl, "--getppid", "1100", "--writes", "0", "--fails", "0", NULL };
	struct PmuData *d = NULL;
	struct tu_child c;
	int pids[1], pd, n, i, fd;
	PmuFile f;

	cr_assert_not_null(realpath(tu_path("workloads/syscalls"), wl));
	c = tu_exec_later(argv, 0); /* one CPU: perf counts a tracepoint's hits per CPU */
	pids[0] = c.pid;
	a.pidList = pids;
	a.numPid = 1;
	pd = PmuOpen(SAMPLING, &a);
	cr_assert_gt(pd, 0, "%s", Perror());
	cr_assert_eq(PmuEnable(pd), 0);
	cr_assert_eq(tu_exec_finish(&c, out_buf, sizeof(out_buf)), 0);
	PmuDisable(pd);
	n = PmuRead(pd, &d);
	PmuClose(pd);
	cr_assert_eq(n, 4, "floor(1100 / 250) samples: %d", n);
	for (i = 0; i < n; i++)
		cr_assert_eq(d[i].period, 250);
	fd = mkstemp(path);
	cr_assert_geq(fd, 0);
	close(fd);
	f = PmuBeginWrite(path, &a, 0);
	cr_assert_not_null(f, "%s", Perror());
	cr_assert_eq(PmuWriteData(f, d, n), SUCCESS, "%s", Perror());
	PmuEndWrite(f);
	/* perf needs the tracepoint's format (HEADER_TRACING_DATA) to open the file at all */
	out = run("perf script -i %s -F event,period 2>&1 | awk '{print $1, $2}'", path);
	cr_assert_str_eq(out, "250 syscalls:sys_enter_getppid:\n250 syscalls:sys_enter_getppid:\n"
			      "250 syscalls:sys_enter_getppid:\n250 syscalls:sys_enter_getppid:\n");
	free(out);
	out = run("perf report -i %s --header-only 2>&1 | grep '^# event'", path);
	cr_assert(strstr(out,
			 "# event : name = syscalls:sys_enter_getppid, , id = { 1 }, type = 2, "
			 "size = 128, config = "),
		  "%s", out);
	cr_assert(strstr(out, "{ sample_period, sample_freq } = 250, "), "%s", out);
	free(out);
	unlink(path);
	PmuDataFree(d);
	cr_assert_eq(tu_bpf_fds(), 0, "BPF objects left open");
}
