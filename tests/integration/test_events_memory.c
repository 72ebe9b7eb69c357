/*
 * test_events_memory.c - `trace --events` under a flood of calls (issue 19): its memory is
 * bounded by the ring buffer and a fixed window, at most twice what the summary alone takes
 * plus the ring buffer, whatever the number of calls; every call is either printed or
 * counted as dropped; the calls come out in the order they started.
 */
#include <criterion/criterion.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "testutil.h"

#define KB tu_path("bin/kperf-bpf")
#define CALLS 2000000
#define RINGBUF_KB 16384

/* column <idx> (0-based) of a CSV line, as a number (quoted fields may hold commas) */
static long col(const char *line, int idx)
{
	bool quoted = false;
	int c = 0;

	for (; *line && *line != '\n' && c < idx; line++) {
		if (*line == '"')
			quoted = !quoted;
		else if (*line == ',' && !quoted)
			c++;
	}
	return atol(line);
}

/* run kperf-bpf ARGS with stdout into <out> (a path), return its peak RSS in KiB */
static long peak_rss_kb(char *const argv[], const char *out, int *status)
{
	struct rusage ru;
	pid_t pid = fork();

	if (pid == 0) {
		int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);

		if (fd < 0 || dup2(fd, 1) < 0)
			_exit(126);
		execv(argv[0], argv);
		_exit(127);
	}
	cr_assert_gt(pid, 0);
	cr_assert_eq(wait4(pid, status, 0, &ru), pid);
	return ru.ru_maxrss;
}

Test(events_memory, a_flood_is_bounded_and_accounted_for, .timeout = 240)
{
	char kb[4096], wl[4096], calls[32], out[64], cmd[256], *text;
	char *summary[] = { kb,		"trace", "-e",	    "getppid",	 "--format",
			    "csv",	"--",	 wl,	    "--getppid", calls,
			    "--writes", "0",	 "--fails", "0",	 NULL };
	char *events[] = { kb,	  "trace",   "--events", "-e",	      "getppid", "--format",
			   "csv", "--",	     wl,	 "--getppid", calls,	 "--writes",
			   "0",	  "--fails", "0",	 NULL };
	long rss_summary, rss_events;
	long printed, dropped = 0, counted = 0;
	int st = -1;
	char *p;

	snprintf(kb, sizeof(kb), "%s", KB);
	snprintf(wl, sizeof(wl), "%s", tu_path("workloads/syscalls"));
	snprintf(calls, sizeof(calls), "%d", CALLS);
	snprintf(out, sizeof(out), "/tmp/kperf-flood-%d.csv", getpid());

	rss_summary = peak_rss_kb(summary, out, &st);
	cr_assert_eq(st, 0);
	rss_events = peak_rss_kb(events, out, &st);
	cr_assert_eq(st, 0);
	cr_log_info("peak RSS: summary %ld KiB, --events %ld KiB", rss_summary, rss_events);
#ifndef __SANITIZE_ADDRESS__
	cr_expect_leq(rss_events, 2 * rss_summary + RINGBUF_KB,
		      "--events took %ld KiB, the summary %ld KiB", rss_events, rss_summary);
#else
	/* AddressSanitizer keeps freed memory in quarantine: RSS says nothing here */
#endif

	/* every call: printed, or dropped and said so; the summary counts them all */
	snprintf(cmd, sizeof(cmd), "grep -c '^event,' %s", out);
	text = tu_run(cmd, NULL);
	printed = atol(text);
	free(text);
	/* the rows after the events: the summary (calls in column 10), maybe "dropped" */
	snprintf(cmd, sizeof(cmd), "grep -v '^event,' %s", out);
	text = tu_run(cmd, NULL);
	for (p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
		if (!strncmp(p, "dropped,", 8))
			dropped = col(p, 10);
		if (!strncmp(p, "summary,", 8) && strstr(p, ",getppid,"))
			counted = col(p, 10);
	}
	free(text);
	unlink(out);
	cr_expect_eq(counted, CALLS, "the summary counts every call");
	cr_expect_eq(printed + dropped, CALLS, "%ld printed, %ld dropped", printed, dropped);
}

/* 1 ms sleeps among a stream of getppid: a sleep ends (and reaches the ring buffer) after
 * hundreds of calls that started later; it is printed before them. When the machine is so
 * loaded that a sleeper wakes after more calls than the window holds, it is printed late,
 * and the command says how many were: the count printed must be the count out of order. */
Test(events_memory, events_print_in_start_order)
{
	char cmd[16384], kb[4096], tp[4096], errf[64], *out, *err, *line, *save = NULL;
	long n = 0, sleeps = 0, inversions = 0, late = 0;
	long long last = -1, start;

	snprintf(errf, sizeof(errf), "/tmp/kperf-order-%d.err", getpid());

	snprintf(kb, sizeof(kb), "%s", KB);
	snprintf(tp, sizeof(tp), "%s", tu_path("workloads/tracepoints"));
	snprintf(cmd, sizeof(cmd),
		 "%s trace --events -e getppid,clock_nanosleep --format csv -- sh -c '%s --sleeps "
		 "20 >/dev/null & %s --getppid 300000 --writes 0 --fails 0; wait' 2>%s",
		 kb, tp, tu_path("workloads/syscalls"), errf);
	out = tu_run(cmd, NULL);
	cr_assert_not_null(out);
	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (strncmp(line, "event,", 6))
			continue;
		start = col(line, 7);
		if (start < last)
			inversions++; /* behind the latest start printed */
		else
			last = start;
		sleeps += strstr(line, ",clock_nanosleep,") != NULL;
		/* sh calls getppid once too */
		n += strstr(line, ",\"syscalls\",") && strstr(line, ",getppid,");
	}
	free(out);
	cr_assert_eq(sleeps, 20);
	cr_assert_eq(n, 300000, "%ld getppid events", n);
	snprintf(cmd, sizeof(cmd), "cat %s", errf);
	err = tu_run(cmd, NULL);
	unlink(errf);
	cr_assert_not_null(err);
	if (strstr(err, " records arrived after the "))
		late = atol(strstr(err, "kperf-bpf trace: ") + strlen("kperf-bpf trace: "));
	free(err);
	cr_log_info("%ld records out of start order", inversions);
	cr_expect_eq(inversions, late, "%ld records printed after one that started later, %ld said",
		     inversions, late);
}
