/*
 * test_stack_overflow.c - the summary by stack's overflow rows (issue 19): a call whose
 * (process, syscall, stacks) row the kernel cannot make (the map full, or no memory at that
 * moment) is counted in its syscall's pid 0 row with a one-frame stack that says why, never
 * lost. `sysstack --deep 40 400 100` makes its 500 getppid calls from 41 distinct stacks (40
 * depths of ppid_at_depth, 10 calls each, then ppid_from_b); a summary of 4 rows keeps 4 of
 * them, and every row together, the overflow row included, has exactly the 500 calls:
 * through the API (both BPF variants), the fault of the allocator (KPERF_BPF_FAULT_NOMEM)
 * and the CLI's table, JSON, CSV, folded and SVG outputs; every warning of a read is said.
 */
#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <inttypes.h>
#include <stdlib.h>

#include "kperf/kperf.h"
#include "sysstack_testutil.h"
#include "trace_testutil.h"

#define DEEP "40"
#define ROWS 4
/* frame pointers: the first stacks (depths 0 to 3, 10 calls each) have their rows, the calls
 * of the 37 others are the overflow row's (the .eh_frame unwinder, whose tables load while
 * the first calls are made, may take their first stacks otherwise) */
#define OVERFLOW (500 - ROWS * 10)

static char *deep_argv[] = { "sysstack", "--wait", "--hold", "--deep", DEEP, "400", "100", NULL };

/* the summary by stack of a trace of 4 rows: <pid>'s rows and the overflow rows <want_comm>
 * (whose one frame is <frame>) add up to the 500 calls and the summary's total time; the
 * overflow rows' calls */
static uint64_t check_rows(int pd, pid_t pid, unsigned kept, const char *want_comm,
			   const char *frame)
{
	struct KperfTraceStackSummary *s;
	struct PmuTraceSummary *sum;
	uint64_t calls = 0, total = 0, overflow = 0;
	unsigned own = 0, pid0 = 0;
	int n, i;

	n = KperfTraceReadStackSummary(pd, &s);
	cr_assert_eq(n, (int)kept + 1, "%d rows: %s", n, Perror());
	for (i = 0; i < n; i++) {
		cr_assert_str_eq(s[i].funcs, "getppid");
		cr_assert_eq(s[i].errors, 0);
		calls += s[i].calls;
		total += s[i].totalNs;
		if (s[i].pid == pid) {
			own++;
			cr_assert_str_eq(s[i].comm, "sysstack");
			continue;
		}
		pid0++;
		cr_assert_eq(s[i].pid, 0, "row of pid %d", (int)s[i].pid);
		cr_assert_str_eq(s[i].comm, want_comm);
		cr_assert_not_null(s[i].stack);
		cr_assert_str_eq(s[i].stack->symbol->symbolName, frame);
		cr_assert_null(s[i].stack->next, "one frame");
		cr_assert_eq(s[i].kernelFrames, 0);
		cr_assert_gt(s[i].calls, 0);
		overflow += s[i].calls;
	}
	cr_assert_eq(own, kept);
	cr_assert_eq(pid0, 1);
	cr_assert_eq(calls, 500, "every call counted: %" PRIu64, calls);
	KperfTraceStackSummaryFree(s);
	cr_assert_eq(PmuTraceReadSummary(pd, &sum), 1);
	cr_assert_eq(sum[0].calls, 500);
	cr_assert_eq(sum[0].totalNs, total, "the same calls: %" PRIu64 " ns vs %" PRIu64,
		     sum[0].totalNs, total);
	PmuTraceSummaryFree(sum);
	return overflow;
}

static void full_map(bool compat)
{
	struct PmuTraceAttr a = { .callStack = 1, .symbolMode = RESOLVE_ELF };
	struct KperfTraceOpts x = KPERF_OPTS(KperfTraceOpts, .summaryOnly = 1,
					     .summaryEntries = ROWS,
					     .callGraph = KPERF_CALL_GRAPH_FP);
	struct KperfTraceStackSummary *s;
	struct PmuTraceStats st;
	struct tu_proc w;
	uint64_t overflow;
	char want[256];
	int pd;

	if (compat)
		setenv("KPERF_BPF_FORCE_COMPAT", "1", 1);
	pd = ss_trace_argv(&a, &x, &w, deep_argv);
	unsetenv("KPERF_BPF_FORCE_COMPAT");
	overflow = check_rows(pd, w.pid, ROWS, KPERF_TRACE_OVERFLOW_COMM, KPERF_TRACE_STACK_FULL);
	cr_assert_eq(overflow, OVERFLOW, "%" PRIu64, overflow);
	cr_assert_eq(PmuTraceGetStats(pd, &st), 0);
	cr_assert_eq(st.fallback, compat);
	cr_assert_eq(st.stackSummaryDropped, overflow);
	cr_assert_eq(st.stackSummaryNoMemory, 0);
	/* said when read */
	cr_assert_gt(KperfTraceReadStackSummary(pd, &s), 0);
	KperfTraceStackSummaryFree(s);
	snprintf(want, sizeof(want),
		 "%" PRIu64 " calls are counted in the summary by stack without their process "
		 "and stack (pid 0, [stack table full]): its map was full (raise summaryEntries)",
		 overflow);
	cr_assert_eq(GetWarn(), KPERF_WARN_SUMMARY_FULL);
	cr_assert_str_eq(GetWarnMsg(), want);
	tu_kill(&w);
	tt_finish(pd);
}

Test(sysstack_overflow, a_full_summary_by_stack_counts_the_rest_per_syscall)
{
	full_map(false);
}

Test(sysstack_overflow, the_fallback_counts_the_rest_the_same_way)
{
	full_map(true);
}

/* no memory for a row at that moment (the map not full): the same, in the [no memory] row */
Test(sysstack_overflow, rows_without_memory_are_counted_per_syscall)
{
	struct PmuTraceAttr a = { .callStack = 1, .symbolMode = RESOLVE_ELF };
	struct KperfTraceOpts x = KPERF_OPTS(KperfTraceOpts, .summaryOnly = 1);
	struct PmuTraceStats st;
	struct tu_proc w;
	int pd;

	setenv("KPERF_BPF_FAULT_NOMEM", "1", 1);
	pd = ss_trace_argv(&a, &x, &w, deep_argv);
	unsetenv("KPERF_BPF_FAULT_NOMEM");
	cr_assert_eq(check_rows(pd, w.pid, 0, KPERF_TRACE_NOMEM_COMM, KPERF_TRACE_STACK_NOMEM),
		     500);
	cr_assert_eq(PmuTraceGetStats(pd, &st), 0);
	cr_assert_eq(st.stackSummaryNoMemory, 500);
	cr_assert_eq(st.stackSummaryDropped, 0);
	tu_kill(&w);
	tt_finish(pd);
}

/* `kperf-bpf trace --stack -e getppid --summary-entries 4 --format <fmt> -- sysstack --deep
 * 40 400 100` (frame pointers): its stdout (malloc'd) and its stderr into <err> */
static char *cli(const char *fmt, char *err, size_t errsize)
{
	char cmd[4096], errpath[] = "/tmp/kperf-stack-overflow-XXXXXX";
	int st = -1, fd = mkstemp(errpath);
	char *out;
	ssize_t r;

	cr_assert_geq(fd, 0);
	snprintf(cmd, sizeof(cmd),
		 "%s/bin/kperf-bpf trace --stack --call-graph fp -e getppid --summary-entries %d "
		 "--format %s -- "
		 "%s/workloads/sysstack --deep " DEEP " 400 100 2>%s",
		 tu_build(), ROWS, fmt, tu_build(), errpath);
	out = tu_run(cmd, &st);
	cr_assert_not_null(out);
	r = read(fd, err, errsize - 1);
	err[r > 0 ? r : 0] = '\0';
	close(fd);
	unlink(errpath);
	cr_assert_eq(st, 0, "%s: %.2000s %s", fmt, out, err);
	return out;
}

/* the warning on stderr, with the overflow row's calls */
static void assert_said(const char *err, uint64_t overflow)
{
	char want[512];

	snprintf(want, sizeof(want),
		 "kperf-bpf trace: warning: %" PRIu64 " calls are counted in the summary by "
		 "stack without their process and stack (pid 0, [stack table full]): its map "
		 "was full (raise --summary-entries)\n",
		 overflow);
	cr_assert(strstr(err, want), "no '%s' in '%s'", want, err);
}

Test(sysstack_overflow, cli_outputs_show_the_overflow_row)
{
	char err[8192], *out, *line, *save = NULL;
	uint64_t calls = 0, overflow = 0, c;
	unsigned lines = 0, pid0 = 0;
	cJSON *doc, *s;

	/* JSON */
	out = cli("json", err, sizeof(err));
	doc = cJSON_Parse(out);
	cr_assert_not_null(doc, "not JSON: %.500s", out);
	cJSON_ArrayForEach(s, cJSON_GetObjectItem(doc, "stacks"))
	{
		c = (uint64_t)cJSON_GetObjectItem(s, "calls")->valuedouble;
		calls += c;
		if (cJSON_GetObjectItem(s, "pid")->valueint)
			continue;
		pid0++;
		overflow = c;
		cr_assert_str_eq(cJSON_GetObjectItem(s, "comm")->valuestring, "[map full]");
		cr_assert_str_eq(cJSON_GetObjectItem(s, "syscall")->valuestring, "getppid");
		cr_assert_str_eq(
			cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(s, "frames"), 0),
					    "symbol")
				->valuestring,
			"[stack table full]");
	}
	cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItem(doc, "stacks")), ROWS + 1);
	cr_assert_eq(pid0, 1);
	cr_assert_eq(calls, 500, "%.3000s", out);
	cr_assert_eq(overflow, OVERFLOW, "%.3000s", out);
	assert_said(err, overflow);
	cJSON_Delete(doc);
	free(out);

	/* CSV: stack,pid,,"comm",,syscall,nr,,,,calls,... ,"folded frames" */
	out = cli("csv", err, sizeof(err));
	calls = 0;
	pid0 = 0;
	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		const char *p = line;
		int field;

		if (strncmp(line, "stack,", 6))
			continue;
		lines++;
		for (field = 0; field < 10 && p; field++)
			p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL;
		cr_assert_not_null(p, "%s", line);
		c = strtoull(p, NULL, 10);
		calls += c;
		if (!strncmp(line, "stack,0,,\"[map full]\",,getppid,", 31)) {
			pid0++;
			cr_assert_eq(c, overflow, "%s", line);
			cr_assert(strstr(line, ",\"[stack table full]\""), "%s", line);
		}
	}
	cr_assert_eq(lines, ROWS + 1, "%s", out);
	cr_assert_eq(pid0, 1);
	cr_assert_eq(calls, 500);
	free(out);

	/* the table: the kept rows and the overflow row, each with its calls */
	out = cli("table", err, sizeof(err));
	calls = 0;
	for (line = strstr(out, "  #"); line; line = strstr(line + 1, "  #")) {
		unsigned rank;

		cr_assert_eq(sscanf(line, "  #%u  %" SCNu64 " calls", &rank, &c), 2, "%.80s", line);
		calls += c;
	}
	cr_assert_eq(calls, 500, "%s", out);
	cr_assert(strstr(out, "getppid: 500 calls in 4 stacks"), "%s", out);
	snprintf(err, sizeof(err),
		 "\n[map full] (0) getppid: %" PRIu64 " calls without their process and stack\n",
		 overflow);
	cr_assert(strstr(out, err), "no '%s' in %s", err, out);
	cr_assert(strstr(out, "      [stack table full]\n"), "%s", out);
	free(out);

	/* folded: one line per stack, the overflow row's under its comm */
	out = cli("folded", err, sizeof(err));
	lines = 0;
	pid0 = 0;
	save = NULL;
	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		lines++;
		/* the comm is the root frame: its blank folded like the frames' */
		pid0 += !strncmp(line, "[map_full];[stack_table_full];getppid_[k] ", 42);
	}
	cr_assert_eq(lines, ROWS + 1, "%s", out);
	cr_assert_eq(pid0, 1);
	assert_said(err, overflow);
	free(out);

	/* the flame graph: the overflow row's frames under the root */
	out = cli("svg", err, sizeof(err));
	cr_assert(strstr(out, "<title>[map full]"), "%.3000s", out);
	cr_assert(strstr(out, "<title>[stack table full]"), "%.3000s", out);
	assert_said(err, overflow);
	free(out);
}

/* a read with two reasons to warn (its map full, and stacks not kept: a stack map of 2
 * entries for 41 stacks) says both: the second does not hide the first */
Test(sysstack_overflow, every_warning_of_a_read_is_said)
{
	struct PmuTraceAttr a = { .callStack = 1, .symbolMode = RESOLVE_ELF };
	struct KperfTraceOpts x = KPERF_OPTS(KperfTraceOpts, .summaryOnly = 1, .summaryEntries = 1,
					     .stackEntries = 2, .callGraph = KPERF_CALL_GRAPH_FP);
	struct KperfTraceStackSummary *s;
	struct tu_proc w;
	int pd = ss_trace_argv(&a, &x, &w, deep_argv);

	cr_assert_gt(KperfTraceReadStackSummary(pd, &s), 0);
	KperfTraceStackSummaryFree(s);
	cr_assert(strstr(GetWarnMsg(), " calls are counted in the summary by stack without "
				       "their process and stack (pid 0, [stack table full]): "
				       "its map was full (raise summaryEntries)\n"),
		  "%s", GetWarnMsg());
	cr_assert(strstr(GetWarnMsg(), " call stacks were not kept ("), "%s", GetWarnMsg());
	tu_kill(&w);
	tt_finish(pd);
}
