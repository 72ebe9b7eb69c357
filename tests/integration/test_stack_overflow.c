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
#include <stdbool.h>
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

/* the calls of the pid 0 rows of a summary by stack, by reason */
struct overflow {
	uint64_t full, nomem;
	unsigned own; /* rows of the process */
};

/* The summary by stack of a trace: <pid>'s rows and the pid 0 rows add up to the 500 calls
 * and to the summary's total time, and agree with the counters. A pid 0 row is "[map full]"
 * with the frame "[stack table full]", or "[no memory]" with "[no memory for a stack row]".
 * A row the kernel cannot allocate (-ENOMEM, the map not full: KPERF_BPF_FAULT_NOMEM below)
 * goes to userspace through the exits ring and is counted in its row there (a row the kernel
 * map does not hold), in the no-memory row only when that ring is full too. A full map is told
 * by the low 32 bits of the update's answer: before Linux 6.4 the 5.10 and 6.1 amd64 guests'
 * -E2BIG read 4294967289 and every row past the 4 was taken for a failed allocation. */
static struct overflow check_rows(int pd, pid_t pid)
{
	struct KperfTraceStackSummary *s;
	struct PmuTraceSummary *sum;
	struct PmuTraceStats st;
	struct overflow o = { 0 };
	uint64_t calls = 0, total = 0;
	unsigned pid0 = 0;
	int n, i;

	n = KperfTraceReadStackSummary(pd, &s);
	cr_assert_gt(n, 0, "%s", Perror());
	for (i = 0; i < n; i++) {
		bool full;

		cr_assert_str_eq(s[i].funcs, "getppid");
		cr_assert_eq(s[i].errors, 0);
		calls += s[i].calls;
		total += s[i].totalNs;
		if (s[i].pid == pid) {
			o.own++;
			cr_assert_str_eq(s[i].comm, "sysstack");
			continue;
		}
		pid0++;
		cr_assert_eq(s[i].pid, 0, "row of pid %d", (int)s[i].pid);
		full = !strcmp(s[i].comm, KPERF_TRACE_OVERFLOW_COMM);
		cr_assert(full || !strcmp(s[i].comm, KPERF_TRACE_NOMEM_COMM), "%s", s[i].comm);
		cr_assert_not_null(s[i].stack);
		cr_assert_str_eq(s[i].stack->symbol->symbolName,
				 full ? KPERF_TRACE_STACK_FULL : KPERF_TRACE_STACK_NOMEM);
		cr_assert_null(s[i].stack->next, "one frame");
		cr_assert_eq(s[i].kernelFrames, 0);
		cr_assert_gt(s[i].calls, 0);
		*(full ? &o.full : &o.nomem) += s[i].calls;
	}
	cr_assert_eq(pid0, (o.full > 0) + (o.nomem > 0), "one row per reason (one syscall)");
	cr_assert_eq(calls, 500, "every call counted: %" PRIu64, calls);
	KperfTraceStackSummaryFree(s);
	cr_assert_eq(PmuTraceReadSummary(pd, &sum), 1);
	cr_assert_eq(sum[0].calls, 500);
	cr_assert_eq(sum[0].totalNs, total, "the same calls: %" PRIu64 " ns vs %" PRIu64,
		     sum[0].totalNs, total);
	PmuTraceSummaryFree(sum);
	cr_assert_eq(PmuTraceGetStats(pd, &st), 0);
	cr_assert_eq(st.stackSummaryDropped, o.full);
	cr_assert_eq(st.stackSummaryNoMemory, o.nomem);
	return o;
}

static void full_map(bool compat)
{
	struct PmuTraceAttr a = { .callStack = 1, .symbolMode = RESOLVE_ELF };
	struct KperfTraceOpts x = KPERF_OPTS(KperfTraceOpts, .summaryOnly = 1,
					     .summaryEntries = ROWS,
					     .callGraph = KPERF_CALL_GRAPH_FP);
	struct KperfTraceStackSummary *s;
	struct PmuTraceStats st;
	struct overflow o;
	struct tu_proc w;
	char want[256];
	int pd;

	if (compat)
		setenv("KPERF_BPF_FORCE_COMPAT", "1", 1);
	pd = ss_trace_argv(&a, &x, &w, deep_argv);
	unsetenv("KPERF_BPF_FORCE_COMPAT");
	o = check_rows(pd, w.pid);
	cr_assert_eq(PmuTraceGetStats(pd, &st), 0);
	/* the fallback when asked for (5.10 has nothing else) */
	cr_assert(!compat || st.fallback);
	/* the exits ring had room for any call whose row the kernel could not allocate */
	cr_assert_eq(o.nomem, 0, "stacks lost %" PRIu64, st.stacksLost);
	/* the first 4 stacks, 10 calls each, the rest in the overflow row (unless a stack was
	 * not kept: a clash in the stack map, a row without it) */
	cr_assert_eq(o.own, ROWS);
	if (!st.stacksLost)
		cr_assert_eq(o.full, OVERFLOW, "%" PRIu64, o.full);
	/* said when read */
	cr_assert_gt(KperfTraceReadStackSummary(pd, &s), 0);
	KperfTraceStackSummaryFree(s);
	snprintf(want, sizeof(want),
		 "%" PRIu64 " calls are counted in the summary by stack without their process "
		 "and stack (pid 0, [stack table full]): its map was full (raise summaryEntries)",
		 o.full);
	cr_assert(!o.full || strstr(GetWarnMsg(), want), "%s", GetWarnMsg());
	snprintf(want, sizeof(want),
		 "%" PRIu64 " calls are counted in the summary by stack without their process "
		 "and stack (pid 0, [no memory for a stack row]): ",
		 o.nomem);
	cr_assert(!o.nomem || strstr(GetWarnMsg(), want), "%s", GetWarnMsg());
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

/* no memory for a row at that moment (the map not full): the call goes to userspace, where
 * it is counted in its row all the same (41 rows: 40 depths, 10 calls each, and ppid_from_b's
 * 100); with the exits ring full too, in the [no memory] row */
static void no_memory(const char *fault)
{
	struct PmuTraceAttr a = { .callStack = 1, .symbolMode = RESOLVE_ELF };
	struct KperfTraceOpts x =
		KPERF_OPTS(KperfTraceOpts, .summaryOnly = 1, .callGraph = KPERF_CALL_GRAPH_FP);
	struct KperfTraceStackSummary *s;
	struct PmuTraceStats st;
	struct overflow o;
	struct tu_proc w;
	int pd, n, i;

	setenv("KPERF_BPF_FAULT_NOMEM", fault, 1);
	pd = ss_trace_argv(&a, &x, &w, deep_argv);
	unsetenv("KPERF_BPF_FAULT_NOMEM");
	o = check_rows(pd, w.pid);
	cr_assert_eq(PmuTraceGetStats(pd, &st), 0);
	cr_assert_eq(st.stackSummaryDropped, 0);
	if (!strcmp(fault, "2")) {
		cr_assert_eq(o.nomem, 500);
		cr_assert_eq(o.own, 0);
		cr_assert_eq(st.stackSummaryNoMemory, 500);
	} else {
		cr_assert_eq(o.nomem, 0);
		cr_assert_eq(o.own, 41);
		cr_assert_eq(st.stackSummaryNoMemory, 0);
		n = KperfTraceReadStackSummary(pd, &s);
		cr_assert_eq(n, 41);
		for (i = 0; i < n; i++) {
			cr_assert_eq(s[i].calls, s[i].calls == 100 ? 100u : 10u, "%" PRIu64,
				     s[i].calls);
			cr_assert_not_null(s[i].stack, "its stacks resolved: %d", i);
		}
		KperfTraceStackSummaryFree(s);
	}
	tu_kill(&w);
	tt_finish(pd);
}

Test(sysstack_overflow, rows_without_memory_are_made_in_userspace)
{
	no_memory("1");
}

Test(sysstack_overflow, rows_without_memory_nor_ring_are_counted_per_syscall)
{
	no_memory("2");
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

/* the calls stderr says are in the pid 0 rows, by reason (0 when it says none) */
static struct overflow said(const char *err)
{
	static const char head[] = "kperf-bpf trace: warning: ";
	static const char mid[] = " calls are counted in the summary by stack without their "
				  "process and stack (pid 0, ";
	struct overflow o = { 0 };
	const char *p;

	for (p = strstr(err, head); p; p = strstr(p + 1, head)) {
		char *end;
		uint64_t n = strtoull(p + sizeof(head) - 1, &end, 10);

		if (strncmp(end, mid, sizeof(mid) - 1))
			continue;
		end += sizeof(mid) - 1;
		if (!strncmp(end,
			     "[stack table full]): its map was full (raise --summary-entries)\n",
			     64))
			o.full += n;
		else if (!strncmp(end,
				  "[no memory for a stack row]): the kernel could not allocate "
				  "their rows at that moment and the ring that brings such calls "
				  "to their rows was full\n",
				  145))
			o.nomem += n;
		else
			cr_assert(0, "an odd warning: %s", p);
	}
	return o;
}

/* a pid 0 row's comm and frame: the reason's */
static bool pid0_row(const char *comm, const char *frame, struct overflow *o, uint64_t calls)
{
	bool full = !strcmp(comm, "[map full]");

	cr_assert(full || !strcmp(comm, "[no memory]"), "%s", comm);
	cr_assert_str_eq(frame, full ? "[stack table full]" : "[no memory for a stack row]");
	*(full ? &o->full : &o->nomem) += calls;
	return full;
}

/* the rows every output has: the process's 4 and one pid 0 row per reason, whose calls stderr
 * says too */
static void same_as_said(const struct overflow *rows, const struct overflow *err, unsigned own,
			 const char *errtext)
{
	cr_assert_eq(rows->full, err->full);
	cr_assert_eq(rows->nomem, 0, "the exits ring had room: %s", errtext);
	/* the calls of the rows past the 4: in the overflow row */
	cr_assert_gt(rows->full, 0, "%s", errtext);
	/* the 4 first stacks' 40 calls unless a stack was not kept (a clash in the stack map: a
	 * row without it) */
	cr_assert_eq(own, ROWS);
	if (!strstr(errtext, " call stacks were not kept"))
		cr_assert_eq(rows->full, OVERFLOW, "%s", errtext);
}

Test(sysstack_overflow, cli_outputs_show_the_overflow_row)
{
	char err[8192], want[256], *out, *line, *save = NULL;
	struct overflow o = { 0 }, e;
	uint64_t calls = 0, c;
	unsigned lines = 0, own = 0;
	cJSON *doc, *s;

	/* JSON */
	out = cli("json", err, sizeof(err));
	doc = cJSON_Parse(out);
	cr_assert_not_null(doc, "not JSON: %.500s", out);
	cJSON_ArrayForEach(s, cJSON_GetObjectItem(doc, "stacks"))
	{
		c = (uint64_t)cJSON_GetObjectItem(s, "calls")->valuedouble;
		calls += c;
		cr_assert_str_eq(cJSON_GetObjectItem(s, "syscall")->valuestring, "getppid");
		if (cJSON_GetObjectItem(s, "pid")->valueint) {
			own++;
			continue;
		}
		pid0_row(cJSON_GetObjectItem(s, "comm")->valuestring,
			 cJSON_GetObjectItem(
				 cJSON_GetArrayItem(cJSON_GetObjectItem(s, "frames"), 0), "symbol")
				 ->valuestring,
			 &o, c);
	}
	cr_assert_eq(calls, 500, "%.3000s", out);
	e = said(err);
	same_as_said(&o, &e, own, err);
	cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItem(doc, "stacks")),
		     own + (o.full > 0) + (o.nomem > 0));
	cJSON_Delete(doc);
	free(out);

	/* CSV: stack,pid,,"comm",,syscall,nr,,,,calls,... ,"folded frames" */
	out = cli("csv", err, sizeof(err));
	calls = 0;
	own = 0;
	o = (struct overflow){ 0 };
	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		const char *p = line;
		int field;

		if (strncmp(line, "stack,", 6))
			continue;
		for (field = 0; field < 10 && p; field++)
			p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL;
		cr_assert_not_null(p, "%s", line);
		c = strtoull(p, NULL, 10);
		calls += c;
		if (!strncmp(line, "stack,0,,\"[map full]\",,getppid,", 31))
			pid0_row("[map full]",
				 strstr(line, ",\"[stack table full]\"") ? "[stack table full]" :
									   line,
				 &o, c);
		else if (!strncmp(line, "stack,0,,\"[no memory]\",,getppid,", 32))
			pid0_row("[no memory]",
				 strstr(line, ",\"[no memory for a stack row]\"") ?
					 "[no memory for a stack row]" :
					 line,
				 &o, c);
		else
			own++;
	}
	cr_assert_eq(calls, 500, "%s", out);
	e = said(err);
	same_as_said(&o, &e, own, err);
	free(out);

	/* the table: the kept rows and the pid 0 rows, each with its calls */
	out = cli("table", err, sizeof(err));
	calls = 0;
	for (line = strstr(out, "  #"); line; line = strstr(line + 1, "  #")) {
		unsigned rank;

		cr_assert_eq(sscanf(line, "  #%u  %" SCNu64 " calls", &rank, &c), 2, "%.80s", line);
		calls += c;
	}
	e = said(err);
	/* the process's 4 rows, and the calls they could not hold in a pid 0 row, said */
	line = strstr(out, "getppid: 500 calls in ");
	cr_assert_not_null(line, "%s", out);
	cr_assert_eq(sscanf(line, "getppid: 500 calls in %u stacks", &lines), 1, "%s", out);
	cr_assert_eq(lines, ROWS, "%s", out);
	cr_assert_gt(e.full, 0, "nothing said: %s", err);
	cr_assert_eq(calls, 500, "%s", out);
	snprintf(want, sizeof(want),
		 "\n[map full] (0) getppid: %" PRIu64 " calls without their process and stack\n",
		 e.full);
	cr_assert(!e.full || strstr(out, want), "no '%s' in %s", want, out);
	cr_assert(!e.full || strstr(out, "      [stack table full]\n"), "%s", out);
	snprintf(want, sizeof(want),
		 "\n[no memory] (0) getppid: %" PRIu64 " calls without their process and stack\n",
		 e.nomem);
	cr_assert(!e.nomem || strstr(out, want), "no '%s' in %s", want, out);
	cr_assert(!e.nomem || strstr(out, "      [no memory for a stack row]\n"), "%s", out);
	free(out);

	/* folded: one line per stack, the pid 0 rows' under their comm (a root frame: its
	 * blank folded like the frames') */
	out = cli("folded", err, sizeof(err));
	e = said(err);
	o = (struct overflow){ 0 };
	lines = 0;
	save = NULL;
	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		lines++;
		o.full += !strncmp(line, "[map_full];[stack_table_full];getppid_[k] ", 42);
		o.nomem +=
			!strncmp(line, "[no_memory];[no_memory_for_a_stack_row];getppid_[k] ", 52);
	}
	cr_assert_eq(o.full, e.full > 0, "%s", out);
	cr_assert_eq(o.nomem, e.nomem > 0, "%s", out);
	cr_assert_geq(lines, 2, "%s", out);
	free(out);

	/* the flame graph: the pid 0 rows' frames under the root */
	out = cli("svg", err, sizeof(err));
	e = said(err);
	cr_assert(!e.full || strstr(out, "<title>[map full]"), "%.3000s", out);
	cr_assert(!e.full || strstr(out, "<title>[stack table full]"), "%.3000s", out);
	cr_assert(!e.nomem || strstr(out, "<title>[no memory]"), "%.3000s", out);
	cr_assert(!e.nomem || strstr(out, "<title>[no memory for a stack row]"), "%.3000s", out);
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
	int pd = ss_trace_argv(&a, &x, &w, deep_argv), n, i, full = 0;

	n = KperfTraceReadStackSummary(pd, &s);
	cr_assert_gt(n, 0);
	for (i = 0; i < n; i++)
		full += !s[i].pid;
	KperfTraceStackSummaryFree(s);
	cr_assert(strstr(GetWarnMsg(), " call stacks were not kept ("), "%s", GetWarnMsg());
	/* with a pid 0 row (the map full, or the row not allocated and the ring full), its
	 * warning too */
	cr_assert(!full || strstr(GetWarnMsg(), " calls are counted in the summary by stack "
						"without their process and stack (pid 0, ["),
		  "%s", GetWarnMsg());
	tu_kill(&w);
	tt_finish(pd);
}
