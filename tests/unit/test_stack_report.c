/*
 * test_stack_report.c - the outputs of the summary by stack (trace --stack) from hand-built
 * rows: folded lines (user frames under the syscall, weighted by total ns, kernel frames
 * left out), the table section (top N per process and syscall, lines under DWARF), JSON and
 * CSV rows, and a per-call record's stack.
 */
#include <criterion/criterion.h>
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>

#include "export/export.h"

static struct Symbol main_s = { .addr = 0x401000,
				.module = "/w/sysstack",
				.symbolName = "main",
				.fileName = "/src/sysstack.c",
				.lineNum = 80 };
static struct Symbol a_s = { .addr = 0x401100,
			     .module = "/w/sysstack",
			     .symbolName = "ppid_from_a",
			     .fileName = "/src/sysstack.c",
			     .lineNum = 48 };
static struct Symbol b_s = { .addr = 0x401200,
			     .module = "/w/sysstack",
			     .symbolName = "ppid_from_b" };
static struct Symbol k_s = { .addr = 0xffffffff81000000UL,
			     .module = "[kernel.kallsyms]",
			     .symbolName = "do_syscall_64" };

/* kernel frame first, then user frames leaf first */
static struct Stack a3 = { .symbol = &main_s }, a2 = { .symbol = &a_s, .next = &a3 },
		    a1 = { .symbol = &k_s, .next = &a2 };
static struct Stack b3 = { .symbol = &main_s }, b2 = { .symbol = &b_s, .next = &b3 },
		    b1 = { .symbol = &k_s, .next = &b2 };

static const struct KperfTraceStackSummary rows[] = {
	{ .funcs = "getppid",
	  .nr = 110,
	  .pid = 42,
	  .comm = "sysstack",
	  .calls = 300,
	  .totalNs = 900000,
	  .minNs = 1000,
	  .maxNs = 9000,
	  .stack = &a1,
	  .kernelFrames = 1 },
	{ .funcs = "getppid",
	  .nr = 110,
	  .pid = 42,
	  .comm = "sysstack",
	  .calls = 200,
	  .totalNs = 400000,
	  .minNs = 1000,
	  .maxNs = 5000,
	  .stack = &b1,
	  .kernelFrames = 1 },
	{ .funcs = "getppid",
	  .nr = 110,
	  .pid = 42,
	  .comm = "sysstack",
	  .calls = 7,
	  .totalNs = 7000,
	  .minNs = 1000,
	  .maxNs = 1000,
	  .stack = NULL },
};

static const struct PmuTraceSummary sum[] = {
	{ .funcs = "getppid",
	  .nr = 110,
	  .pid = 42,
	  .comm = "sysstack",
	  .calls = 507,
	  .totalNs = 1307000 },
};

static char *render(void (*fn)(FILE *))
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	fn(f);
	fclose(f);
	return buf;
}

static void folded(FILE *f)
{
	cr_assert_eq(kp_report_stacks_folded(f, rows, 3), 0);
}

Test(stack_report, folded_user_frames_under_the_syscall)
{
	char *out = render(folded);

	cr_assert_str_eq(out, "sysstack;main;ppid_from_a;getppid_[k] 900000\n"
			      "sysstack;main;ppid_from_b;getppid_[k] 400000\n"
			      "sysstack;getppid_[k] 7000\n");
	free(out);
}

static void table_top1(FILE *f)
{
	kp_report_syscall_stacks(f, KP_FORMAT_TABLE, sum, 1, rows, 3, 1);
}

static void table_all(FILE *f)
{
	kp_report_syscall_stacks(f, KP_FORMAT_TABLE, sum, 1, rows, 3, 5);
}

Test(stack_report, table_top_stacks)
{
	char *out = render(table_top1);

	cr_assert(strstr(out, "sysstack (42) getppid: 507 calls in 3 stacks\n"), "%s", out);
	cr_assert(strstr(out, "  #1  300 calls  total 0.900 ms  avg 3.000 us  max 9.000 us"
			      "  errors 0\n"
			      "      ppid_from_a  sysstack.c:48\n"
			      "      main  sysstack.c:80\n"),
		  "%s", out);
	cr_assert_null(strstr(out, "#2"), "%s", out);
	free(out);
	out = render(table_all);
	cr_assert(strstr(out, "      ppid_from_b  (sysstack)\n"), "%s", out);
	cr_assert(strstr(out, "  #3  7 calls"), "%s", out);
	cr_assert(strstr(out, "      [stack not kept]\n"), "%s", out);
	cr_assert_null(strstr(out, "do_syscall_64"), "kernel frames are not in the table");
	free(out);
}

static void json(FILE *f)
{
	fputc('{', f);
	fputs("\"x\":1", f);
	kp_report_syscall_stacks(f, KP_FORMAT_JSON, sum, 1, rows, 3, 1);
	fputc('}', f);
}

Test(stack_report, json_has_every_stack_and_frame)
{
	char *out = render(json);
	cJSON *doc = cJSON_Parse(out), *s, *f0;

	cr_assert_not_null(doc, "%s", out);
	s = cJSON_GetObjectItem(doc, "stacks");
	cr_assert_eq(cJSON_GetArraySize(s), 3, "all stacks, whatever the top");
	f0 = cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetArrayItem(s, 0), "frames"), 0);
	cr_assert_str_eq(cJSON_GetObjectItem(f0, "symbol")->valuestring, "do_syscall_64");
	cr_assert(cJSON_IsTrue(cJSON_GetObjectItem(f0, "kernel")));
	cr_assert_eq(cJSON_GetObjectItem(cJSON_GetArrayItem(s, 1), "calls")->valueint, 200);
	cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItem(cJSON_GetArrayItem(s, 2), "frames")),
		     0);
	cJSON_Delete(doc);
	free(out);
}

static void csv(FILE *f)
{
	kp_report_csv_header_stack(f);
	kp_report_syscall_stacks(f, KP_FORMAT_CSV, sum, 1, rows, 1, 1);
}

Test(stack_report, csv_stack_rows)
{
	char *out = render(csv);

	cr_assert_str_eq(out,
			 "kind,pid,tid,comm,cpu,syscall,nr,start_ns,ret,dur_ns,calls,errors,"
			 "total_ns,min_ns,max_ns,avg_ns,p50_ns,p99_ns,elapsed_s,hist,stack\n"
			 "stack,42,,\"sysstack\",,getppid,110,,,,300,0,900000,1000,9000,3000,,,,,"
			 "\"main;ppid_from_a\"\n");
	free(out);
}

static void event(FILE *f)
{
	struct PmuTraceData d = { .funcs = "getppid",
				  .startTs = 5,
				  .elapsedTime = 0.001,
				  .pid = 42,
				  .tid = 42,
				  .cpu = 1,
				  .comm = "sysstack",
				  .stack = &a1 };
	struct KperfTraceDataExt x = { .ret = 1, .nr = 110 };

	kp_report_event(f, KP_FORMAT_TABLE, &d, &x, 0, true);
}

Test(stack_report, an_event_with_its_stack)
{
	char *out = render(event);

	cr_assert(strstr(out, "getppid() = 1"), "%s", out);
	cr_assert(strstr(out,
			 "\n        ppid_from_a  sysstack.c:48\n        main  sysstack.c:80\n"),
		  "%s", out);
	free(out);
}

/* the summary by stack's overflow row (pid 0, one frame that says why) and a comm with a
 * blank and a ';': each stays one frame of its folded line (flamegraph.pl and speedscope
 * split frames at ';' and the count at the last blank) */
static struct Symbol full_s = { .module = "", .symbolName = "[stack table full]" };
static struct Stack full1 = { .symbol = &full_s };
static const struct KperfTraceStackSummary odd_rows[] = {
	{ .funcs = "getppid",
	  .nr = 110,
	  .pid = 0,
	  .comm = "[map full]",
	  .calls = 460,
	  .totalNs = 46000,
	  .stack = &full1 },
	{ .funcs = "getppid",
	  .nr = 110,
	  .pid = 43,
	  .comm = "my job;2\tx",
	  .calls = 3,
	  .totalNs = 3000,
	  .stack = &a1,
	  .kernelFrames = 1 },
};

static void folded_odd(FILE *f)
{
	cr_assert_eq(kp_report_stacks_folded(f, odd_rows, 2), 0);
}

static void table_odd(FILE *f)
{
	static const struct PmuTraceSummary s[] = {
		{ .funcs = "getppid", .nr = 110, .pid = 43, .comm = "my job;2\tx", .calls = 3 },
	};

	kp_report_syscall_stacks(f, KP_FORMAT_TABLE, s, 1, odd_rows, 2, 5);
}

static void csv_odd(FILE *f)
{
	kp_report_syscall_stacks(f, KP_FORMAT_CSV, sum, 1, odd_rows, 1, 1);
}

Test(stack_report, overflow_row_and_odd_comms_in_every_format)
{
	char *out = render(folded_odd);

	cr_assert_str_eq(out, "[map_full];[stack_table_full];getppid_[k] 46000\n"
			      "my_job_2_x;main;ppid_from_a;getppid_[k] 3000\n");
	free(out);
	out = render(table_odd);
	cr_assert(strstr(out, "\n[map full] (0) getppid: 460 calls without their process and "
			      "stack\n  #1  460 calls  total 0.046 ms  avg 0.100 us  max 0.000 us"
			      "  errors 0\n      [stack table full]\n"),
		  "%s", out);
	free(out);
	out = render(csv_odd);
	cr_assert_str_eq(out, "stack,0,,\"[map full]\",,getppid,110,,,,460,0,46000,0,0,100,,,,,"
			      "\"[stack table full]\"\n");
	free(out);
}
