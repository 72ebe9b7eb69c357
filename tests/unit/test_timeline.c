/*
 * test_timeline.c - the timeline's store and Chrome writer on made-up records: JSON strings
 * (escapes, UTF-8 kept, invalid UTF-8 replaced), ranges paired from their two ends, as
 * complete events when they nest on their thread and as async pairs when they cross threads
 * or overlap without nesting, a range still open, an end without its start, stack frames as a
 * tree, the event limit; syscalls through the collector's path (kp_tl_add_syscall) written
 * exactly as through activity records, with threads renamed and unknown numbers.
 */
#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "timeline/timeline.h"
#include "trace/trace.h"

static char *json_of(const char *in)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	kp_json_string(f, in);
	fclose(f);
	return buf;
}

Test(timeline_unit, json_strings)
{
	static const struct {
		const char *in, *out;
	} cases[] = {
		{ "plain", "\"plain\"" },
		{ "q\"b\\", "\"q\\\"b\\\\\"" },
		{ "a\nb\x01", "\"a\\u000ab\\u0001\"" },
		{ "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80",
		  "\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\"" },
		{ "x\xffy", "\"x\\ufffdy\"" },
		{ "\xc0\xaf", "\"\\ufffd\\ufffd\"" }, /* overlong '/' */
		{ "\xed\xa0\x80", "\"\\ufffd\\ufffd\\ufffd\"" }, /* a surrogate */
		{ "\xe2\x82", "\"\\ufffd\\ufffd\"" }, /* cut short */
		{ "\xf4\x90\x80\x80", "\"\\ufffd\\ufffd\\ufffd\\ufffd\"" }, /* past U+10FFFF */
		{ NULL, "\"\"" },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *s = json_of(cases[i].in);

		cr_expect_str_eq(s, cases[i].out, "case %zu", i);
		free(s);
	}
}

static struct KperfActivityRecord rec(unsigned flag, uint64_t ts, uint64_t id, int tid,
				      const char *name, const char *domain)
{
	struct KperfActivityRecord r = { 0 };

	r.kind = KPERF_ACTIVITY_KIND_MARKER;
	r.flag = flag;
	r.start = r.end = ts;
	r.id = id;
	r.pid = 100;
	r.tid = tid;
	r.cpu = 1;
	r.nr = -1;
	r.name = name;
	r.domain = domain;
	r.comm = tid == 100 ? "main" : "worker";
	r.channel = "";
	return r;
}

static struct KperfActivityRecord sys(uint64_t ts, uint64_t end, int tid, long ret)
{
	struct KperfActivityRecord r = rec(0, ts, 0, tid, "read", "");

	r.kind = KPERF_ACTIVITY_KIND_KERNEL;
	r.end = end;
	r.ret = ret;
	return r;
}

static char *write_store(struct kp_tl_store *s, cJSON **doc)
{
	struct kp_tl_meta m = { .dropped = 2, .command = "cmd" };
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	cr_assert_eq(kp_tl_write_chrome(f, s, &m), 0);
	fclose(f);
	*doc = cJSON_Parse(buf);
	cr_assert(*doc, "not JSON:\n%s", buf);
	return buf;
}

enum { START = KPERF_ACTIVITY_FLAG_MARKER_START, END = KPERF_ACTIVITY_FLAG_MARKER_END };

Test(timeline_unit, ranges_marks_and_syscalls)
{
	struct kp_tl_store s;
	struct KperfActivityRecord r[] = {
		rec(START, 1000, 1, 100, "outer", "default"),
		rec(START, 2000, 2, 100, "inner", "db"),
		sys(2100, 2500, 100, 42),
		rec(END, 3000, 2, 100, "", "db"),
		rec(KPERF_ACTIVITY_FLAG_MARKER_INSTANTANEOUS, 3500, 3, 100, "m\"q", "default"),
		rec(START, 4000, 4, 100, "a", "default"), /* a and b overlap without nesting */
		rec(START, 4500, 5, 100, "b", "default"),
		rec(END, 5000, 4, 100, "", "default"),
		rec(END, 6000, 5, 100, "", "default"),
		rec(END, 7000, 1, 100, "", "default"),
		rec(START, 8000, 6, 100, "handoff", "default"),
		rec(END, 9000, 6, 101, "", "default"),
		rec(END, 9100, 77, 100, "", "default"), /* its start came before */
		rec(START, 9500, 7, 100, "open", "default"),
		sys(9600, 9900, 101, -11),
	};
	const char *want[] = {
		"{\"name\":\"outer\",\"cat\":\"default\",\"ph\":\"X\",\"ts\":1.000,\"pid\":100,"
		"\"tid\":100,\"dur\":6.000}",
		"{\"name\":\"inner\",\"cat\":\"db\",\"ph\":\"X\",\"ts\":2.000,\"pid\":100,\"tid\":"
		"100,\"dur\":1.000}",
		"{\"name\":\"read\",\"cat\":\"syscall\",\"ph\":\"X\",\"ts\":2.100,\"pid\":100,"
		"\"tid\":100,\"dur\":0.400,\"args\":{\"ret\":42}}",
		"{\"name\":\"m\\\"q\",\"cat\":\"default\",\"ph\":\"i\",\"ts\":3.500,\"pid\":100,"
		"\"tid\":100,\"s\":\"t\",\"args\":{\"id\":3}}",
		"{\"name\":\"a\",\"cat\":\"default\",\"ph\":\"X\",\"ts\":4.000,\"pid\":100,\"tid\":"
		"100,\"dur\":1.000}",
		"{\"name\":\"b\",\"cat\":\"default\",\"ph\":\"b\",\"ts\":4.500,\"pid\":100,\"tid\":"
		"100,\"id2\":{\"local\":\"0x5\"},\"args\":{\"id\":5,\"end_tid\":100}}",
		"{\"name\":\"b\",\"cat\":\"default\",\"ph\":\"e\",\"ts\":6.000,\"pid\":100,\"tid\":"
		"100,\"id2\":{\"local\":\"0x5\"}}",
		"{\"name\":\"handoff\",\"cat\":\"default\",\"ph\":\"e\",\"ts\":9.000,\"pid\":100,"
		"\"tid\":101,\"id2\":{\"local\":\"0x6\"}}",
		"{\"name\":\"open\",\"cat\":\"default\",\"ph\":\"X\",\"ts\":9.500,\"pid\":100,"
		"\"tid\":100,\"dur\":0.400,\"args\":{\"unfinished\":true}}",
		"{\"name\":\"read\",\"cat\":\"syscall\",\"ph\":\"X\",\"ts\":9.600,\"pid\":100,"
		"\"tid\":101,\"dur\":0.300,\"args\":{\"ret\":-11}}",
		"{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":100,\"tid\":101,\"args\":{\"name\":"
		"\"worker\"}}",
		"{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":100,\"tid\":100,\"args\":{\"name\":"
		"\"main\"}}",
		"\"syscalls\":2,\"samples\":0,\"marks\":1,\"ranges\":5,\"openRanges\":1,\"dropped\":"
		"2,\"notKept\":0,\"command\":\"cmd\"",
	};
	cJSON *doc;
	char *out;
	size_t i;

	kp_tl_store_init(&s, 1000);
	for (i = 0; i < sizeof(r) / sizeof(r[0]); i++)
		cr_assert_eq(kp_tl_add_activity(&s, &r[i]), 0);
	cr_expect_eq(s.unmatched_ends, 1);
	out = write_store(&s, &doc);
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		cr_expect(strstr(out, want[i]), "missing %s in\n%s", want[i], out);
	/* time order: outer before inner (same thread, encloses it), a's end before b's */
	cr_expect(strstr(out, "\"outer\"") < strstr(out, "\"inner\""));
	cr_expect(strstr(out, "\"name\":\"inner\"") < strstr(out, "\"name\":\"read\""));
	cJSON_Delete(doc);
	free(out);
	kp_tl_store_free(&s);
}

Test(timeline_unit, samples_share_frames_and_the_limit_holds)
{
	struct Symbol main_s = { .symbolName = "main", .module = "/bin/app" };
	struct Symbol f_s = { .symbolName = "f", .module = "/bin/app" };
	struct Symbol g_s = { .symbolName = "g", .module = "/lib/libc.so.6" };
	struct Stack st_main = { .symbol = &main_s }, st_f = { .symbol = &f_s, .next = &st_main };
	struct Stack st_g = { .symbol = &g_s, .next = &st_main };
	struct PmuData d = { .evt = "cpu-clock", .pid = 7, .tid = 7, .cpu = 0, .comm = "app" };
	struct kp_tl_store s;
	cJSON *doc;
	char *out;
	int i;

	kp_tl_store_init(&s, 3);
	for (i = 0; i < 4; i++) {
		d.ts = 1000 * (i + 1);
		d.stack = i % 2 ? &st_g : &st_f;
		cr_assert_eq(kp_tl_add_sample(&s, &d), 0);
	}
	cr_expect_eq(s.n_samples, 3);
	cr_expect_eq(s.not_kept, 1);
	out = write_store(&s, &doc);
	cr_expect(strstr(out, "\"stackFrames\":{\n\"1\":{\"name\":\"main\",\"category\":\"app\"},"
			      "\n\"2\":{\"name\":\"f\",\"category\":\"app\",\"parent\":1},\n\"3\":"
			      "{\"name\":\"g\",\"category\":\"libc.so.6\",\"parent\":1}}"),
		  "%s", out);
	cr_expect(strstr(out, "{\"name\":\"cpu-clock\",\"cat\":\"sample\",\"ph\":\"P\",\"ts\":"
			      "2.000,\"pid\":7,\"tid\":7,\"sf\":3,\"args\":{\"cpu\":0}}"),
		  "%s", out);
	cr_expect(strstr(out, "\"notKept\":1"), "%s", out);
	cJSON_Delete(doc);
	free(out);
	kp_tl_store_free(&s);
}

/* the collector's path for syscalls and the activity records' path give the same file: names
 * of numbers (one the table does not have), threads interleaved, a thread renamed (its name
 * and its process's are the last comm seen) */
Test(timeline_unit, syscalls_fast_path_matches_activity_records)
{
	static const struct {
		int pid, tid, nr; /* nr -1: read, -2: write */
		const char *comm;
	} calls[] = {
		{ 100, 100, -1, "main" },     { 100, 101, -2, "worker" },
		{ 100, 100, -1, "main" },     { 100, 100, -1, "renamed" },
		{ 100, 101, 5000, "worker" }, { 200, 200, -2, "other" },
	};
	struct kp_tl_store fast, slow;
	cJSON *d1, *d2;
	char *o1, *o2, name[32];
	size_t i;

	kp_tl_store_init(&fast, 100);
	kp_tl_store_init(&slow, 100);
	for (i = 0; i < sizeof(calls) / sizeof(calls[0]); i++) {
		int nr = calls[i].nr == -1 ? kp_syscall_lookup("read") :
			 calls[i].nr == -2 ? kp_syscall_lookup("write") :
					     calls[i].nr;
		struct kp_tl_syscall c = { .start = 1000 * (i + 1),
					   .dur = 300,
					   .ret = (int64_t)i - 2,
					   .pid = calls[i].pid,
					   .tid = calls[i].tid,
					   .nr = nr,
					   .cpu = (int)i % 2,
					   .comm = calls[i].comm };
		struct KperfActivityRecord r = { 0 };

		cr_assert_geq(nr, 0);
		snprintf(name, sizeof(name), "%s",
			 nr == 5000 ? "syscall_5000" : kp_syscall_name(nr));
		r.kind = KPERF_ACTIVITY_KIND_KERNEL;
		r.start = c.start;
		r.end = c.start + c.dur;
		r.ret = c.ret;
		r.pid = c.pid;
		r.tid = c.tid;
		r.cpu = c.cpu;
		r.nr = nr;
		r.name = name;
		r.domain = r.channel = "";
		r.comm = c.comm;
		cr_assert_eq(kp_tl_add_syscall(&fast, &c), 0);
		cr_assert_eq(kp_tl_add_activity(&slow, &r), 0);
	}
	cr_expect_eq(fast.n_sys, 6);
	o1 = write_store(&fast, &d1);
	o2 = write_store(&slow, &d2);
	cr_expect_str_eq(o1, o2);
	cr_expect(strstr(o1, "{\"name\":\"syscall_5000\",\"cat\":\"syscall\",\"ph\":\"X\",\"ts\":"
			     "5.000,\"pid\":100,\"tid\":101,\"dur\":0.300,\"args\":{\"ret\":2}}"),
		  "%s", o1);
	cr_expect(strstr(o1, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":100,\"tid\":100,"
			     "\"args\":{\"name\":\"renamed\"}}"),
		  "%s", o1);
	cr_expect(strstr(o1, "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":100,\"tid\":101,"
			     "\"args\":{\"name\":\"worker\"}}"),
		  "%s", o1);
	cJSON_Delete(d1);
	cJSON_Delete(d2);
	free(o1);
	free(o2);
	kp_tl_store_free(&fast);
	kp_tl_store_free(&slow);
}
