/*
 * cli_list.c - `kperf-bpf list`: exact output for filters, what this machine lacks is
 * absent, the fixture's uncore events, and the exit status of each case.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/perf_event.h>

#include "testutil.h"

static char *run(const char *args, int *status)
{
	char cmd[8192];

	snprintf(cmd, sizeof(cmd), "%s %s 2>/dev/null", tu_path("bin/kperf-bpf"), args);
	return tu_run(cmd, status);
}

static bool has_line(const char *text, const char *line)
{
	size_t n = strlen(line);
	const char *p;

	for (p = text; (p = strstr(p, line)); p += n)
		if ((p == text || p[-1] == '\n') && (p[n] == '\n' || !p[n]))
			return true;
	return false;
}

Test(cli_list, trace_filter_prints_exactly_the_match)
{
	int st = -1;
	char *out = run("list trace sched_switch", &st);

	cr_assert_not_null(out);
	cr_expect_eq(st, 0);
	cr_expect_str_eq(out, "sched:sched_switch\n");
	free(out);
	out = run("list trace SCHED_PROCESS_EXE", &st);
	cr_expect_eq(st, 0);
	cr_expect_str_eq(out, "sched:sched_process_exec\n", "the filter ignores case");
	free(out);
}

Test(cli_list, core_has_cpu_clock_and_no_cycles_here)
{
	struct perf_event_attr a = { .size = sizeof(a),
				     .type = PERF_TYPE_HARDWARE,
				     .config = PERF_COUNT_HW_CPU_CYCLES,
				     .disabled = 1,
				     .exclude_kernel = 1 };
	int st = -1, fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
	char *out = run("list core", &st);

	cr_assert_not_null(out);
	cr_expect_eq(st, 0);
	cr_expect(has_line(out, "cpu-clock"), "%s", out);
	cr_expect(has_line(out, "task-clock"));
	cr_expect(has_line(out, "context-switches"));
	/* this VM has no hardware PMU: the kernel refuses cycles, so the list has none */
	cr_expect_eq(has_line(out, "cycles"), fd >= 0, "%s", out);
	if (fd >= 0)
		close(fd);
	free(out);
}

Test(cli_list, uncore_of_the_fixture)
{
	int st = -1;
	char *out = run("list uncore ddrc", &st), cmd[8192];

	cr_expect_str_eq(out, "", "this machine has no uncore PMU");
	free(out);
	/* a Kunpeng 920 (tests/fixtures/gen.sh) */
	snprintf(cmd, sizeof(cmd),
		 "KPERF_BPF_SYSFS=tests/fixtures/kunpeng920 %s list uncore sccl3_ddrc",
		 tu_path("bin/kperf-bpf"));
	out = tu_run(cmd, &st);
	cr_expect_eq(st, 0);
	cr_expect_str_eq(out, "hisi_sccl3_ddrc0/flux_rd/\nhisi_sccl3_ddrc0/flux_wr/\n"
			      "hisi_sccl3_ddrc1/flux_rd/\nhisi_sccl3_ddrc1/flux_wr/\n"
			      "hisi_sccl3_ddrc2/flux_rd/\nhisi_sccl3_ddrc2/flux_wr/\n"
			      "hisi_sccl3_ddrc3/flux_rd/\nhisi_sccl3_ddrc3/flux_wr/\n");
	free(out);
}

Test(cli_list, syscalls_and_all)
{
	int st = -1;
	char *out = run("list syscall getppid", &st);

	cr_expect_eq(st, 0);
	cr_expect_str_eq(out, "getppid\n");
	free(out);
	/* without a kind: core, uncore and trace */
	out = run("list sched:sched_process_f", &st);
	cr_expect_eq(st, 0);
	cr_expect_str_eq(out, "sched:sched_process_fork\nsched:sched_process_free\n");
	free(out);
	out = run("list all cpu-clock", &st);
	cr_expect_eq(st, 0);
	cr_expect_str_eq(out, "cpu-clock\n");
	free(out);
}

Test(cli_list, nothing_matched_and_bad_arguments)
{
	int st = -1;
	char *out = run("list trace no-such-event-anywhere", &st);

	cr_expect_eq(st, 1);
	cr_expect_str_eq(out, "");
	free(out);
	out = run("list core cpu-clock extra", &st);
	cr_expect_eq(st, 2);
	cr_expect_str_eq(out, "");
	free(out);
	out = run("list --help", &st);
	cr_expect_eq(st, 0);
	cr_expect(strstr(out, "usage: kperf-bpf list") == out, "%s", out);
	free(out);
}
