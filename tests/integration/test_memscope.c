/*
 * test_memscope.c - `kperf-bpf memscope` records tests/workloads/memscope_wl.c's leaks run
 * exactly: the rows of its five leaked blocks (function, size, the function that called the
 * allocator), its three marks, the realloc move, nothing lost, and no BPF program left
 * behind. Here so that the kernel matrix (make test-kernels) loads memscope.bpf.c on every
 * kernel; the analyses of the file are tests/python/test_memscope.py's.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/core.h"
#include "testutil.h"

#define HEADER                                                                            \
	"ID,Event,Event Type,Name,Timestamp(ns),Process Id,Thread ID,Device ID,Ptr,Attr," \
	"Call Stack(Python),Call Stack(C)\n"

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf;
	long n;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = calloc(1, (size_t)n + 1);
	if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	return buf;
}

/* the line of <csv> that holds all of <a>, <b> and <c> */
static int rows_with(const char *csv, const char *a, const char *b, const char *c)
{
	const char *line = csv, *end;
	int n = 0;

	for (; *line; line = *end ? end + 1 : end) {
		char buf[4096];
		size_t len;

		end = strchrnul(line, '\n');
		len = (size_t)(end - line) < sizeof(buf) - 1 ? (size_t)(end - line) :
							       sizeof(buf) - 1;
		memcpy(buf, line, len);
		buf[len] = '\0';
		n += strstr(buf, a) && strstr(buf, b) && strstr(buf, c);
	}
	return n;
}

Test(memscope, leaks_run_recorded, .timeout = 300)
{
	char cmd[9000], cli[4096], out[] = "/tmp/kp-memscope-XXXXXX.csv", *stdout_text, *csv;
	int fd = mkstemps(out, 4), status = -1, before = tu_bpf_prog_count();

	cr_assert(fd >= 0);
	close(fd);
	snprintf(cli, sizeof(cli), "%s", tu_path("bin/kperf-bpf")); /* tu_path: one buffer */
	snprintf(cmd, sizeof(cmd), "%s memscope -o %s -- %s leaks 2>&1", cli, out,
		 tu_path("workloads/memscope_wl"));
	stdout_text = tu_run(cmd, &status);
	cr_assert_not_null(stdout_text);
	cr_assert_eq(status, 0, "%s: status %d", cmd, status);
	cr_assert(strstr(stdout_text, "leaks 0x"), "%s", stdout_text);
	csv = slurp(out);
	unlink(out);
	cr_assert_not_null(csv);
	cr_assert(!strncmp(csv, HEADER, strlen(HEADER)), "%.200s", csv);
	cr_expect_eq(
		rows_with(csv, "MALLOC,HOST,malloc,", "{size:100,", "leak_small (memscope_wl)"), 1);
	cr_expect_eq(rows_with(csv, "MALLOC,HOST,calloc,", "{size:300,", "leak_calloc"), 1);
	cr_expect_eq(rows_with(csv, "MALLOC,HOST,realloc,", "{size:262144,", "leak_realloc"), 1);
	cr_expect_eq(rows_with(csv, "FREE,HOST,realloc,", "{size:16,", ""), 1);
	cr_expect_eq(rows_with(csv, "MALLOC,HOST,posix_memalign,", "{size:512,", "leak_memalign"),
		     1);
	cr_expect_eq(rows_with(csv, "MALLOC,MMAP,mmap,", "{size:16384,", "leak_mmap"), 1);
	if (kp_have(KP_FEAT_ATTACH_COOKIE)) {
		cr_expect_eq(rows_with(csv, "MSTX,Mark,test,", "{domain:default,", ""), 3);
		cr_expect_eq(
			rows_with(csv, "SYSTEM,LOST,lost_events,",
				  "{ringbuf:0,inflight:0,sampled:0,stacks:0,marks:0,not_kept:0}",
				  ""),
			1);
	} else {
		/* a command's marks need attach cookies (5.15): said, not silently missing */
		cr_expect_eq(rows_with(csv, "MSTX,", "", ""), 0);
		cr_expect(strstr(stdout_text,
				 "the mstx marks of a command kperf-bpf starts are not "
				 "collected"),
			  "%s", stdout_text);
		cr_expect_eq(
			rows_with(csv, "SYSTEM,LOST,lost_events,",
				  "{ringbuf:0,inflight:0,sampled:0,stacks:0,marks:0,not_kept:0,"
				  "marks_unavailable:1}",
				  ""),
			1);
	}
	free(csv);
	free(stdout_text);
	cr_expect_leq(tu_bpf_prog_count_settle(before), before, "BPF programs left loaded");
}

Test(memscope, bad_pid)
{
	char cmd[4200], *text;
	int status = -1;

	snprintf(cmd, sizeof(cmd), "%s memscope -o /tmp/kp-memscope-none.csv -p 2147483 2>&1",
		 tu_path("bin/kperf-bpf"));
	text = tu_run(cmd, &status);
	cr_assert_not_null(text);
	cr_expect_eq(status, 1);
	cr_expect(strstr(text, "kperf-bpf memscope: ") && strstr(text, "2147483"), "%s", text);
	cr_expect(access("/tmp/kp-memscope-none.csv", F_OK) != 0);
	free(text);
}
