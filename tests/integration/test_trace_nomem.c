/*
 * test_trace_nomem.c - a summary row the kernel cannot allocate (issue 19): -ENOMEM from the
 * map's allocator (a transient want of memory, the map not full) is told from a full map
 * (-E2BIG, tested in test_outputs.c and test_qa_trace.c) and reported as such; its calls stay
 * in their process's row, brought there through the exits ring, and only when that ring is
 * full too are they counted without their process, in the pid 0 "[no memory]" rows.
 *
 * No test can make the kernel's allocator fail at will: KPERF_BPF_FAULT_NOMEM=1 makes every
 * new row fail as it would (=2: and the exits ring as if full), through the same code.
 */
#include <criterion/criterion.h>
#include <cjson/cJSON.h>

#include "trace_testutil.h"

#define CHILDREN 200
#define CALLS 10
#define ALL ((CHILDREN + 1) * CALLS)

/* trace -e getppid of the workload and its CHILDREN children, one at a time, CALLS each,
 * with the fault <fault>; <err> "2>&1" or "2>/dev/null" */
static char *run(int fault, const char *format, const char *err, int *status)
{
	char cmd[8192];

	snprintf(cmd, sizeof(cmd),
		 "KPERF_BPF_FAULT_NOMEM=%d %s/bin/kperf-bpf trace -e getppid --format %s -- "
		 "%s/workloads/syscalls --children %d --one-at-a-time --getppid %d --writes 0 "
		 "--fails 0 %s",
		 fault, tu_build(), format, tu_build(), CHILDREN, CALLS, err);
	return tu_run(cmd, status);
}

static double num(const cJSON *doc, const char *name)
{
	const cJSON *o = cJSON_GetObjectItem(doc, name);

	cr_assert_not_null(o, "no \"%s\"", name);
	return o->valuedouble;
}

Test(trace_nomem, rows_not_allocated_keep_their_calls_json)
{
	const cJSON *p;
	long procs = 0;
	int st = -1;
	char *out = run(1, "json", "2>/dev/null", &st);
	cJSON *doc;

	cr_assert_not_null(out);
	cr_assert_eq(st, 0, "%.2000s", out);
	doc = cJSON_Parse(out);
	cr_assert_not_null(doc, "%.2000s", out);
	cr_expect_eq(num(doc, "alloc_failed"), ALL);
	cr_expect_eq(num(doc, "no_memory"), 0);
	cr_expect_eq(num(doc, "overflow"), 0);
	cr_expect_eq(num(doc, "not_counted"), 0);
	cJSON_ArrayForEach(p, cJSON_GetObjectItem(doc, "processes"))
	{
		cr_assert_neq(cJSON_GetObjectItem(p, "pid")->valueint, 0, "a pid 0 row");
		cr_assert_eq(cJSON_GetObjectItem(p, "calls")->valuedouble, CALLS,
			     "pid %d: %.0f calls", cJSON_GetObjectItem(p, "pid")->valueint,
			     cJSON_GetObjectItem(p, "calls")->valuedouble);
		procs++;
	}
	cr_expect_eq(procs, CHILDREN + 1);
	cJSON_Delete(doc);
	free(out);
}

/* a warning line other than the one a kernel without tp_btf always gives (5.10: the
 * raw_syscalls fallback) */
static bool other_warnings(const char *out)
{
	const char *w;

	for (w = strstr(out, "warning"); w; w = strstr(w + 1, "warning")) {
		const char *eol = strchr(w, '\n');
		const char *fb = strstr(w, "raw_syscalls fallback");

		if (!fb || (eol && fb > eol))
			return true;
	}
	return false;
}

Test(trace_nomem, rows_not_allocated_are_said_csv_and_table)
{
	char line[256];
	int st = -1;
	char *out = run(1, "csv", "2>&1", &st);

	cr_assert_not_null(out);
	cr_assert_eq(st, 0, "%.2000s", out);
	snprintf(line, sizeof(line), "\nalloc_failed,,,,,,,,,,%d,", ALL);
	cr_expect(strstr(out, line), "%.3000s", out);
	cr_expect(!strstr(out, "\nsummary,0,"), "%.3000s", out);
	snprintf(line, sizeof(line),
		 "kperf-bpf trace: note: %d calls found no memory for their row in the kernel "
		 "at that moment (the summary map was not full): they are counted in their "
		 "process's row all the same\n",
		 ALL);
	cr_expect(strstr(out, line), "%.3000s", out);
	cr_expect(!other_warnings(out), "%.3000s", out);
	free(out);

	out = run(1, "table", "2>/dev/null", &st);
	cr_assert_eq(st, 0, "%.2000s", out);
	snprintf(line, sizeof(line),
		 " %d calls found no memory for their row in the kernel at that moment (the map "
		 "was not full): they are counted in their process's row.\n",
		 ALL);
	cr_expect(strstr(out, line), "%.3000s", out);
	free(out);
}

/* the exits ring full too: the calls are counted per syscall without their process, and
 * said to be for want of memory, not a full map */
Test(trace_nomem, ring_full_too_counts_them_in_no_memory_rows)
{
	char line[512];
	int st = -1;
	char *out = run(2, "table", "2>&1", &st);
	cJSON *doc;

	cr_assert_not_null(out);
	cr_assert_eq(st, 0, "%.2000s", out);
	snprintf(line, sizeof(line), " [no memory] (0), %d calls,", ALL);
	cr_expect(strstr(out, line), "%.3000s", out);
	cr_expect(!strstr(out, "[map full]"), "%.3000s", out);
	snprintf(line, sizeof(line),
		 "kperf-bpf trace: warning: %d calls are counted without their process (pid 0, "
		 "[no memory]): the kernel could not allocate their rows at that moment and the "
		 "ring that brings such calls to their rows was full\n",
		 ALL);
	cr_expect(strstr(out, line), "%.3000s", out);
	snprintf(line, sizeof(line),
		 " WARNING: %d calls are counted without their process (pid 0, [no memory]): "
		 "the kernel could not allocate their rows at that moment.\n",
		 ALL);
	cr_expect(strstr(out, line), "%.3000s", out);
	free(out);

	out = run(2, "json", "2>/dev/null", &st);
	cr_assert_eq(st, 0, "%.2000s", out);
	doc = cJSON_Parse(out);
	cr_assert_not_null(doc, "%.2000s", out);
	cr_expect_eq(num(doc, "alloc_failed"), ALL);
	cr_expect_eq(num(doc, "no_memory"), ALL);
	cr_expect_eq(num(doc, "overflow"), 0);
	cr_expect_eq(num(doc, "not_counted"), 0);
	cJSON_Delete(doc);
	free(out);

	out = run(2, "csv", "2>/dev/null", &st);
	cr_assert_eq(st, 0, "%.2000s", out);
	snprintf(line, sizeof(line), "\nsummary,0,,\"[no memory]\",,getppid,%d,,,,%d,0,",
		 (int)SYS_getppid, ALL);
	cr_expect(strstr(out, line), "%.3000s", out);
	snprintf(line, sizeof(line), "\nno_memory,,,,,,,,,,%d,", ALL);
	cr_expect(strstr(out, line), "%.3000s", out);
	free(out);
}
