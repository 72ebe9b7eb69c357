/*
 * test_trace_names.c - a per-call record names its thread as the thread was named when the
 * call returned (issue 15: exactness kept whatever the record's layout). The `syscalls`
 * workload's threads rename themselves before each kind of call (--rename: wK-getppid,
 * wK-write, wK-openat); every record must carry its thread's name of that moment, exactly,
 * in the task-storage object, in the raw_syscalls fallback, and under a flood that a tiny
 * ring buffer cannot hold (what is kept is named right; every call is a record or a drop).
 */
#include <criterion/criterion.h>
#include <stdio.h>

#include "kperf/kperf.h"
#include "trace_testutil.h"

#define THREADS 3

/* the named threads seen, in order of their first record */
struct seen {
	int tid[THREADS];
	long calls[THREADS][3]; /* getppid, write, openat */
	int n;
};

static int thread_index(struct seen *s, int tid)
{
	int i;

	for (i = 0; i < s->n; i++)
		if (s->tid[i] == tid)
			return i;
	cr_assert_lt(s->n, THREADS, "more than %d named threads", THREADS);
	s->tid[s->n] = tid;
	return s->n++;
}

/* every getppid, write and openat record of the trace: named as its phase, by the K its
 * thread's first one has (no two threads with the same); <all>: every call is there */
static void check_names(int pd, bool all)
{
	static const char *const phase[] = { "getppid", "write", "openat" };
	struct PmuTraceData *d = NULL;
	struct seen s = { .n = 0 };
	int ks[THREADS] = { -1, -1, -1 }, n, i, p, w, k;
	char want[32];

	n = PmuTraceRead(pd, &d);
	cr_assert_gt(n, 0, "%s", Perror());
	for (i = 0; i < n; i++) {
		for (p = 0; p < 3 && strcmp(d[i].funcs, phase[p]); p++)
			;
		if (p == 3)
			continue;
		cr_assert_eq(sscanf(d[i].comm, "w%d-", &k), 1, "%s record of %s", d[i].funcs,
			     d[i].comm);
		w = thread_index(&s, d[i].tid);
		if (ks[w] < 0)
			ks[w] = k;
		snprintf(want, sizeof(want), "w%d-%s", ks[w], phase[p]);
		cr_assert_str_eq(d[i].comm, want, "record %d (tid %d)", i, d[i].tid);
		s.calls[w][p]++;
	}
	if (all)
		cr_assert_eq(s.n, THREADS);
	for (w = 0; w < s.n; w++) {
		for (i = 0; i < w; i++)
			cr_assert_neq(ks[i], ks[w], "two threads named w%d", ks[w]);
		if (all) {
			cr_assert_eq(s.calls[w][0], 5000);
			cr_assert_eq(s.calls[w][1], 200);
			cr_assert_eq(s.calls[w][2], 30);
		}
	}
	PmuTraceDataFree(d);
}

/* THREADS renaming threads, every record kept; <fallback>: the object it must have used */
static void trace_renaming(unsigned fallback)
{
	struct PmuTraceAttr a = { 0 };
	struct KperfTraceOpts x = KPERF_OPTS(KperfTraceOpts);
	char *args[] = { "--threads", "3",   "--rename", "--getppid", "5000",
			 "--writes",  "200", "--fails",	 "30",	      NULL };
	struct PmuTraceStats st;
	int pd = tt_trace_workload(&a, &x, args, NULL);

	check_names(pd, true);
	cr_assert_eq(PmuTraceGetStats(pd, &st), 0);
	cr_assert_eq(st.dropped, 0);
	cr_assert_eq(st.fallback, fallback);
	tt_finish(pd);
}

Test(trace_names, records_name_their_thread_as_it_was)
{
	trace_renaming(tu_expected_syscall_fallback());
}

Test(trace_names, fallback_records_name_their_thread_as_it_was)
{
	setenv("KPERF_BPF_FORCE_COMPAT", "1", 1);
	trace_renaming(1);
	unsetenv("KPERF_BPF_FORCE_COMPAT");
}

/* a 4 KiB ring: most records (and names) are dropped; those that are kept are named right,
 * and every call is a record or a drop */
Test(trace_names, dropped_names_do_not_misname_records)
{
	struct PmuTraceAttr a = { 0 };
	struct KperfTraceOpts x = KPERF_OPTS(KperfTraceOpts, .ringBufferKb = 4);
	char *args[] = { "--threads", "3", "--rename", "--getppid", "100000", NULL };
	struct PmuTraceSummary *s = NULL;
	struct PmuTraceStats st;
	uint64_t calls = 0;
	int pd = tt_trace_workload(&a, &x, args, NULL), n, i;

	check_names(pd, false);
	cr_assert_eq(PmuTraceGetStats(pd, &st), 0);
	cr_assert_gt(st.dropped, 0);
	n = PmuTraceReadSummary(pd, &s);
	cr_assert_gt(n, 0);
	for (i = 0; i < n; i++)
		calls += s[i].calls;
	PmuTraceSummaryFree(s);
	cr_assert_eq(st.records + st.dropped, calls, "every call is a record or a drop");
	tt_finish(pd);
}
