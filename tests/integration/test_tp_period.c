/*
 * test_tp_period.c - a tracepoint sampled at its period, as libkperf's perf event samples it:
 * PmuAttr's period before the event's evtAttr period, 4000 when neither gives one, a
 * frequency with useFreq. The workload (syscalls) makes an exact number of getppid calls on
 * one CPU (pinned before its exec), so period N gives exactly floor(hits / N) records, each
 * standing for N hits. Also `kperf-bpf record -e TRACEPOINT`, which keeps perf record's
 * default of every hit unless -c or -F is given.
 */
#include <criterion/criterion.h>
#include <limits.h>
#include <sched.h>
#include <time.h>

#include "core/core.h"
#include "kperf/kperf.h"
#include "testutil.h"

#define GETPPID "syscalls:sys_enter_getppid"
#define GETPPID_EXIT "syscalls:sys_exit_getppid"
#define PIN_CPU 0

struct run {
	struct PmuData *d;
	int n;
	pid_t pid;
	uint64_t elapsed_ns; /* from before PmuEnable to after PmuDisable */
};

static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ULL + (uint64_t)t.tv_nsec;
}

/* sample <a> on the syscalls workload making <hits> getppid, pinned to PIN_CPU */
static struct run run_pinned(struct PmuAttr *a, long hits)
{
	char path[PATH_MAX], n[32], out[256];
	char *argv[] = { path, "--getppid", n, "--writes", "0", "--fails", "0", NULL };
	struct run r = { 0 };
	struct tu_child c;
	int pids[1], pd;
	uint64_t t0;

	cr_assert_not_null(realpath(tu_path("workloads/syscalls"), path));
	snprintf(n, sizeof(n), "%ld", hits);
	c = tu_exec_later(argv, PIN_CPU);
	cr_assert_gt(c.pid, 0);
	r.pid = pids[0] = c.pid;
	a->pidList = pids;
	a->numPid = 1;
	pd = PmuOpen(SAMPLING, a);
	cr_assert_gt(pd, 0, "PmuOpen: %d %s", Perrorno(), Perror());
	t0 = now_ns();
	cr_assert_eq(PmuEnable(pd), 0, "%s", Perror());
	cr_assert_eq(tu_exec_finish(&c, out, sizeof(out)), 0, "workload: %s", out);
	cr_assert_eq(PmuDisable(pd), 0, "%s", Perror());
	r.elapsed_ns = now_ns() - t0;
	r.n = PmuRead(pd, &r.d);
	cr_assert_geq(r.n, 0, "PmuRead: %s", Perror());
	cr_assert_neq(GetWarn(), KPERF_WARN_RECORDS_DROPPED, "%s", GetWarnMsg());
	PmuClose(pd);
	a->pidList = NULL;
	a->numPid = 0;
	cr_assert_eq(tu_bpf_fds(), 0, "BPF objects left open after PmuClose");
	return r;
}

/* the records of <evt>: each a tracepoint record of the workload on PIN_CPU; returns how
 * many, and checks each stands for <period> hits (0: any) */
static int records_of(const struct run *r, const char *evt, uint64_t period)
{
	int i, n = 0;

	for (i = 0; i < r->n; i++) {
		if (strcmp(r->d[i].evt, evt))
			continue;
		n++;
		cr_assert_not_null(r->d[i].rawData, "a tracepoint record without rawData");
		cr_assert_eq(r->d[i].count, 1);
		cr_assert_eq(r->d[i].pid, r->pid);
		cr_assert_eq(r->d[i].cpu, PIN_CPU, "the workload is pinned");
		if (period)
			cr_assert_eq(r->d[i].period, period, "record %d of %s: period %lu", i, evt,
				     (unsigned long)r->d[i].period);
	}
	return n;
}

Test(tp_period, period_n_gives_one_record_per_n_hits)
{
	char *evts[] = { GETPPID };
	struct PmuAttr a = { .evtList = evts, .numEvt = 1, .period = 1000 };
	struct run r = run_pinned(&a, 10007);

	cr_assert_eq(r.n, 10, "%d records of 10007 hits at period 1000", r.n);
	cr_assert_eq(records_of(&r, GETPPID, 1000), 10);
	for (int i = 1; i < r.n; i++)
		cr_assert_geq(r.d[i].ts, r.d[i - 1].ts, "records in time order");
	PmuDataFree(r.d);
}

Test(tp_period, period_1_records_every_hit)
{
	char *evts[] = { GETPPID };
	struct PmuAttr a = { .evtList = evts, .numEvt = 1, .period = 1 };
	struct run r = run_pinned(&a, 3001);

	cr_assert_eq(records_of(&r, GETPPID, 1), 3001);
	cr_assert_eq(r.n, 3001);
	PmuDataFree(r.d);
}

Test(tp_period, no_period_anywhere_is_libkperfs_4000)
{
	char *evts[] = { GETPPID };
	struct PmuAttr a = { .evtList = evts, .numEvt = 1 };
	struct run r = run_pinned(&a, 50000);

	cr_assert_eq(records_of(&r, GETPPID, 4000), 12, "50000 hits / 4000");
	cr_assert_eq(r.n, 12);
	PmuDataFree(r.d);
}

/* each tracepoint of a task is counted apart (its own slot; before 5.15 its own program) */
Test(tp_period, each_event_its_own_evtattr_period_unless_pmuattr_gives_one)
{
	char *evts[] = { GETPPID, GETPPID_EXIT };
	struct EvtAttr ea[] = { { .groupId = -1, .period = 100 }, { .groupId = -1, .period = 7 } };
	struct PmuAttr a = { .evtList = evts, .numEvt = 2, .evtAttr = ea, .numEvtAttr = 2 };
	struct run r = run_pinned(&a, 5000);

	cr_assert_eq(records_of(&r, GETPPID, 100), 50);
	cr_assert_eq(records_of(&r, GETPPID_EXIT, 7), 714, "floor(5000 / 7)");
	cr_assert_eq(r.n, 50 + 714);
	PmuDataFree(r.d);
	/* libkperf: PmuAttr's period, when set, is every event's */
	a.period = 2500;
	r = run_pinned(&a, 5000);
	cr_assert_eq(records_of(&r, GETPPID, 2500), 2);
	cr_assert_eq(records_of(&r, GETPPID_EXIT, 2500), 2);
	cr_assert_eq(r.n, 4);
	PmuDataFree(r.d);
}

/* useFreq: at most one record per 1/freq s, the first hit at once (as a perf event in
 * frequency mode starts at period 1); each stands for the hits since the previous one */
Test(tp_period, frequency_mode_at_most_one_record_per_gap)
{
	char *evts[] = { GETPPID };
	struct PmuAttr a = { .evtList = evts, .numEvt = 1, .useFreq = 1, .freq = 4 };
	const uint64_t gap = 1000000000ULL / 4;
	uint64_t total = 0;
	struct run r = run_pinned(&a, 30000);
	int i;

	cr_assert_geq(r.n, 1, "the first hit is recorded");
	cr_assert_leq((uint64_t)r.n, 1 + r.elapsed_ns / gap, "%d records in %lu ns at 4 Hz", r.n,
		      (unsigned long)r.elapsed_ns);
	cr_assert_eq(records_of(&r, GETPPID, 0), r.n);
	cr_assert_eq(r.d[0].period, 1, "the first hit stands for itself");
	for (i = 0; i < r.n; i++) {
		cr_assert_geq(r.d[i].period, 1);
		total += r.d[i].period;
	}
	cr_assert_leq(total, 30000, "records stand for %lu of 30000 hits", (unsigned long)total);
	PmuDataFree(r.d);
}

/* ---- kperf-bpf record: perf record's default for tracepoints ---- */

/* `kperf-bpf record <opts> -e GETPPID` of <hits> getppid pinned to PIN_CPU, written as a
 * dump: the (count, period) sums of its getppid records */
static void cli_record(const char *opts, long hits, uint64_t *count, uint64_t *period)
{
	char cmd[PATH_MAX * 3], path[64], *text, *line, *save = NULL, *out;
	const char *build = getenv("KPERF_BUILD");
	size_t len;
	int st;

	snprintf(path, sizeof(path), "/tmp/kperf-tpperiod-%d.txt", getpid());
	snprintf(cmd, sizeof(cmd),
		 "%s/bin/kperf-bpf record %s -e " GETPPID " --format dump -o %s -- taskset -c %d "
		 "%s/workloads/syscalls --getppid %ld --writes 0 --fails 0 2>&1",
		 build, opts, path, PIN_CPU, build, hits);
	out = tu_run(cmd, &st);
	cr_assert_not_null(out);
	cr_assert_eq(st, 0, "%s: %s", cmd, out);
	free(out);
	cr_assert_eq(kp_read_file(path, &text, &len), 0);
	*count = *period = 0;
	/* record lines: comm pid tid cpu period event count; frame lines start with a tab */
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char comm[64], evt[128];
		unsigned long long p, c;
		int pid, tid, cpu;

		if (line[0] == '\t')
			continue;
		cr_assert_eq(sscanf(line, "%63[^\t]\t%d\t%d\t%d\t%llu\t%127[^\t]\t%llu", comm, &pid,
				    &tid, &cpu, &p, evt, &c),
			     7, "'%s'", line);
		cr_assert_str_eq(evt, GETPPID);
		if (strcmp(comm, "syscalls"))
			continue;
		cr_assert_eq(cpu, PIN_CPU);
		*count += c;
		*period += p;
	}
	free(text);
	unlink(path);
}

Test(tp_period, cli_records_every_hit_unless_told_a_rate)
{
	uint64_t count, period;

	cli_record("", 2000, &count, &period);
	cr_assert_eq(count, 2000, "every hit: %lu samples", (unsigned long)count);
	cr_assert_eq(period, 2000);
	cli_record("-c 300", 2000, &count, &period);
	cr_assert_eq(count, 6, "floor(2000 / 300) samples: %lu", (unsigned long)count);
	cr_assert_eq(period, 1800);
}
