/*
 * test_names.c - syscall names and numbers, event names, tracefs formats, and the
 * syscall report's numbers (quantiles, JSON, CSV).
 */
#include <errno.h>
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <cjson/cJSON.h>

#include "core/core.h"
#include "events/events.h"
#include "export/export.h"
#include "kperf/kperf.h"
#include "trace/trace.h"
#include "tracefs/tracefs.h"

Test(syscalls, numbers_of_x86_64)
{
	cr_assert_eq(PmuSysCallNumber("getppid"), 110);
	cr_assert_eq(PmuSysCallNumber("openat"), 257);
	cr_assert_eq(PmuSysCallNumber("sys_write"), 1);
	cr_assert_eq(PmuSysCallNumber("newstat"), 4, "tracepoint alias of stat");
	cr_assert_str_eq(kp_syscall_name(0), "read");
	cr_assert_str_eq(kp_syscall_name(435), "clone3");
	cr_assert_str_eq(kp_syscall_name(462), "mseal");
	cr_assert_null(kp_syscall_name(-1));
	cr_assert_null(kp_syscall_name(100000));
}

Test(syscalls, unknown_name_suggests_close_ones)
{
	cr_assert_eq(PmuSysCallNumber("getppidd"), -1);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_INVALID_SYSCALL_FUN);
	cr_assert(strstr(Perror(), "unknown syscall 'getppidd'"), "%s", Perror());
	cr_assert(strstr(Perror(), "did you mean getppid"), "%s", Perror());
	cr_assert_eq(PmuSysCallNumber(""), -1);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_INVALID_SYSCALL_FUN);
	cr_assert_eq(PmuSysCallNumber(NULL), -1);
}

Test(syscalls, list_is_what_this_kernel_has)
{
	unsigned n = 0, i;
	const char **names = PmuSysCallFuncList(&n);
	int getppid = 0, mseal = 0, set_thread_area = 0;
	char path[512];

	cr_assert_not_null(names);
	/* x86_64 has over 330 syscalls, arm64's generic table about 290 */
	cr_assert_gt(n, 250);
	for (i = 0; i < n; i++) {
		getppid += !strcmp(names[i], "getppid");
		mseal += !strcmp(names[i], "mseal");
		set_thread_area += !strcmp(names[i], "set_thread_area");
	}
	cr_assert_eq(getppid, 1);
	/* mseal (462) is newer than the build headers: listed when this kernel has it */
	snprintf(path, sizeof(path), "%s/events/syscalls/sys_enter_mseal",
		 kp_tracefs() ? kp_tracefs() : "/sys/kernel/tracing");
	cr_assert_eq(mseal, access(path, F_OK) == 0,
		     "mseal is listed exactly when the running kernel has it");
	if (kp_syscall_names_from_kernel())
		cr_assert_eq(set_thread_area, 0, "x86_64 kernels do not implement it");
	PmuTraceDataFree((void *)names); /* a list is not trace data: ignored, no crash */
	cr_assert_eq(PmuSysCallFuncList(&i), names, "the library keeps one list");
	cr_assert_eq(i, n);
	PmuSysCallFuncListFree();
	PmuSysCallFuncListFree();
	names = PmuSysCallFuncList(&i);
	cr_assert_not_null(names, "built again after the free");
	cr_assert_eq(i, n);
}

/* an event of pmu/event/ longer than the parser's buffer is refused, not read past (found by
 * the event_spec fuzz target: the last byte was looked for where snprintf said it would be) */
Test(events, long_pmu_event_is_refused)
{
	char name[400];
	struct kp_event ev;

	memset(name, 'a', sizeof(name));
	memcpy(name, "cpu/", 4);
	name[sizeof(name) - 2] = '/';
	name[sizeof(name) - 1] = '\0';
	cr_assert_eq(kp_event_parse(name, false, &ev), -EINVAL);
	cr_expect_eq(Perrorno(), LIBPERF_ERR_INVALID_EVENT);
	cr_expect(strstr(Perror(), "the event of pmu/event/ is longer than 255 bytes"), "%s",
		  Perror());
}

Test(events, software_hardware_pmu_tracepoint)
{
	struct kp_event ev;

	cr_assert_eq(kp_event_parse("task-clock:u", true, &ev), 0);
	cr_assert_eq(ev.attr.type, PERF_TYPE_SOFTWARE);
	cr_assert_eq(ev.attr.config, PERF_COUNT_SW_TASK_CLOCK);
	cr_assert(ev.attr.exclude_kernel);
	cr_assert_not(ev.attr.exclude_user);
	kp_event_free(&ev);

	cr_assert_eq(kp_event_parse("L1-dcache-load-misses", false, &ev), 0);
	cr_assert_eq(ev.attr.type, PERF_TYPE_HW_CACHE);
	cr_assert_eq(ev.attr.config, PERF_COUNT_HW_CACHE_L1D | (PERF_COUNT_HW_CACHE_OP_READ << 8) |
					     (PERF_COUNT_HW_CACHE_RESULT_MISS << 16));
	kp_event_free(&ev);

	cr_assert_eq(kp_event_parse("r1a2b", false, &ev), 0);
	cr_assert_eq(ev.attr.type, PERF_TYPE_RAW);
	cr_assert_eq(ev.attr.config, 0x1a2b);
	kp_event_free(&ev);

	cr_assert_eq(kp_event_parse("sched:sched_switch", true, &ev), 0);
	cr_assert_eq(ev.attr.type, PERF_TYPE_TRACEPOINT);
	cr_assert_str_eq(ev.tp_event, "sched_switch");
	kp_event_free(&ev);
}

Test(events, bad_names_have_codes)
{
	struct kp_event ev;

	kp_clear();
	cr_assert_eq(kp_event_parse("cpu-clok", true, &ev), -ENOENT);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_INVALID_EVENT);
	cr_assert(strstr(Perror(), "did you mean cpu-clock"), "%s", Perror());
	kp_clear();
	/* a PMU this machine lacks: libkperf's "invalid event", and -ENODEV for the CLI */
	cr_assert_eq(kp_event_parse("nosuchpmu/x/", true, &ev), -ENODEV);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_INVALID_EVENT);
	cr_assert(strstr(Perror(), "this machine has no PMU called 'nosuchpmu'"), "%s", Perror());
	kp_clear();
	cr_assert_lt(kp_event_parse("sched:no_such_event", true, &ev), 0);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_INVALID_EVENT);
	kp_clear();
	cr_assert_lt(kp_event_parse("cpu-clock:q", true, &ev), 0);
	kp_clear();
	cr_assert_lt(kp_event_parse("", true, &ev), 0);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_INVALID_EVENT);
}

Test(events, hardware_event_without_pmu_is_refused)
{
	struct kp_event ev;

	if (kp_event_probe_attr(&(struct perf_event_attr){ .size = sizeof(struct perf_event_attr),
							   .type = PERF_TYPE_HARDWARE }) == 0)
		cr_skip_test("this machine has a hardware PMU");
	kp_clear();
	/* perf_event_open fails with ENOENT: libkperf's LIBPERF_ERR_OPEN_INVALID_FILE */
	cr_assert_eq(kp_event_parse("cycles", true, &ev), -ENODEV);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_OPEN_INVALID_FILE);
	cr_assert(strstr(Perror(), "no hardware PMU"), "%s", Perror());
	kp_clear();
	cr_assert_eq(kp_event_parse("r11", true, &ev), -ENODEV);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_OPEN_INVALID_FILE);
	kp_clear();
	cr_assert_eq(kp_event_parse("cycles", false, &ev), 0, "not probed: a name only");
	kp_event_free(&ev);
}

static const char sample_format[] =
	"name: sched_switch\nID: 316\nformat:\n"
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"
	"\tfield:char prev_comm[16];\toffset:8;\tsize:16;\tsigned:0;\n"
	"\tfield:pid_t prev_pid;\toffset:24;\tsize:4;\tsigned:1;\n"
	"\tfield:__data_loc char[] name;\toffset:28;\tsize:4;\tsigned:0;\n"
	"\nprint fmt: \"x\"\n";

Test(tracefs, format_fields)
{
	struct kp_tp_format *fmt;
	const struct kp_tp_field *f;

	cr_assert_eq(kp_tp_format_parse(sample_format, sizeof(sample_format) - 1, &fmt), 0);
	cr_assert_eq(fmt->id, 316);
	cr_assert_eq(fmt->nfields, 5);
	f = kp_tp_format_field(fmt, "prev_comm");
	cr_assert_not_null(f);
	cr_assert_eq(f->offset, 8);
	cr_assert_eq(f->size, 16);
	cr_assert(f->is_array);
	cr_assert_str_eq(f->type, "char[16]");
	f = kp_tp_format_field(fmt, "prev_pid");
	cr_assert(f->is_signed);
	cr_assert_str_eq(f->type, "pid_t");
	f = kp_tp_format_field(fmt, "name");
	cr_assert(f->data_loc);
	cr_assert_eq(fmt->fixed_size, 32);
	cr_assert(kp_tp_format_field(fmt, "common_pid")->is_common);
	kp_tp_format_free(fmt);
}

Test(tracefs, malformed_formats_refused)
{
	const char *bad[] = {
		"format:\n\tfield:int x;\toffset:;\tsize:4;\tsigned:0;\n",
		"format:\n\tfield:int x;\toffset:0;\tsigned:0;\n",
		"format:\n\tfield:int ;\toffset:0;\tsize:4;\tsigned:0;\n",
		"format:\n\tfield:int x\toffset:0;\tsize:4;\n",
		"\tfield:int x;\toffset:0;\tsize:4;\tsigned:0;\n",
		"format:\n\tfield:int x;\toffset:70000;\tsize:4;\tsigned:0;\n",
		"format:\n\tfield:__data_loc char[] s;\toffset:0;\tsize:8;\tsigned:0;\n",
		"name: x\nID: -4\nformat:\n",
		"",
	};
	struct kp_tp_format *fmt;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		kp_clear();
		cr_assert_lt(kp_tp_format_parse(bad[i], strlen(bad[i]), &fmt), 0, "accepted #%zu",
			     i);
		cr_assert_null(fmt);
		cr_assert_eq(Perrorno(), KPERF_ERR_INVALID_FORMAT, "#%zu: %s", i, Perror());
	}
}

Test(report, quantiles_interpolate_in_log2_slots)
{
	uint64_t hist[KPERF_HIST_SLOTS] = { 0 };

	hist[6] = 90; /* [64, 128) ns */
	hist[10] = 10; /* [1024, 2048) ns */
	cr_assert_eq(kp_hist_quantile(hist, KPERF_HIST_SLOTS, 100, 0.5, 64, 2000), 99);
	/* [1024, 2048) narrowed to [1024, 2000] by the max: halfway is 1512 */
	cr_assert_eq(kp_hist_quantile(hist, KPERF_HIST_SLOTS, 100, 0.95, 64, 2000), 1512);
	cr_assert_eq(kp_hist_quantile(hist, KPERF_HIST_SLOTS, 100, 1.0, 64, 2000), 2000);
	cr_assert_eq(kp_hist_quantile(hist, KPERF_HIST_SLOTS, 0, 0.5, 0, 0), 0);
}

/* 20 sleeps of 1.09-1.15 ms, all in the slot [2^20, 2^21) ns: the median is not the max */
Test(report, quantiles_of_one_slot_stay_between_min_and_max)
{
	uint64_t hist[KPERF_HIST_SLOTS] = { 0 }, p50, p99;

	hist[20] = 20;
	p50 = kp_hist_quantile(hist, KPERF_HIST_SLOTS, 20, 0.5, 1092501, 1154589);
	p99 = kp_hist_quantile(hist, KPERF_HIST_SLOTS, 20, 0.99, 1092501, 1154589);
	cr_assert_eq(p50, 1092501 + (1154589 - 1092501) / 2);
	cr_assert_eq(p99, 1153968, "%lu", p99);
	/* one call: every quantile is that call */
	memset(hist, 0, sizeof(hist));
	hist[12] = 1;
	cr_assert_eq(kp_hist_quantile(hist, KPERF_HIST_SLOTS, 1, 0.5, 5000, 5000), 5000);
	cr_assert_eq(kp_hist_quantile(hist, KPERF_HIST_SLOTS, 1, 0.99, 5000, 5000), 5000);
}

static struct PmuTraceSummary two_rows[2] = {
	{ .funcs = "getppid",
	  .nr = 110,
	  .pid = 42,
	  .comm = "wl",
	  .calls = 4,
	  .errors = 0,
	  .totalNs = 400,
	  .minNs = 80,
	  .maxNs = 130,
	  .hist = { [6] = 3, [7] = 1 } },
	{ .funcs = "openat",
	  .nr = 257,
	  .pid = 42,
	  .comm = "wl",
	  .calls = 2,
	  .errors = 2,
	  .totalNs = 100,
	  .minNs = 40,
	  .maxNs = 60,
	  .hist = { [5] = 2 } },
};

Test(report, json_carries_the_summary)
{
	struct kp_trace_meta m = { .duration_s = 1.5, .dropped = 3 };
	char *buf = NULL, *doc;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	cJSON *root, *proc, *sc;

	fputc('{', f);
	kp_report_syscalls(f, KP_FORMAT_JSON, two_rows, 2, &m, false);
	fputc('}', f);
	fclose(f);
	doc = buf;
	root = cJSON_Parse(doc);
	cr_assert_not_null(root, "invalid JSON: %s", doc);
	cr_assert_eq(cJSON_GetObjectItem(root, "dropped")->valuedouble, 3);
	proc = cJSON_GetArrayItem(cJSON_GetObjectItem(root, "processes"), 0);
	cr_assert_eq(cJSON_GetObjectItem(proc, "pid")->valueint, 42);
	cr_assert_eq(cJSON_GetObjectItem(proc, "calls")->valueint, 6);
	cr_assert_eq(cJSON_GetObjectItem(proc, "errors")->valueint, 2);
	sc = cJSON_GetArrayItem(cJSON_GetObjectItem(proc, "syscalls"), 1);
	cr_assert_str_eq(cJSON_GetObjectItem(sc, "name")->valuestring, "openat");
	cr_assert_eq(cJSON_GetObjectItem(sc, "avg_ns")->valueint, 50);
	cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItem(sc, "hist")), 1);
	cJSON_Delete(root);
	free(buf);
}

Test(report, csv_rows)
{
	struct kp_trace_meta m = { .duration_s = 2.5 };
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	kp_report_syscalls(f, KP_FORMAT_CSV, two_rows, 2, &m, false);
	fclose(f);
	cr_assert_str_eq(buf,
			 "summary,42,,\"wl\",,getppid,110,,,,4,0,400,80,130,100,112,129,2.500,"
			 "64:3;128:1\n"
			 "summary,42,,\"wl\",,openat,257,,,,2,2,100,40,60,50,50,59,2.500,32:2\n");
	free(buf);
}
