/*
 * test_trace.c - syscall tracing end to end, with exact counts: the `syscalls` workload
 * makes exactly 50 000 getppid, 2 000 write and 300 failing openat per worker, and that is
 * what must come back, in per-call and summary modes, for threads started after the open,
 * for launched commands and their children, and under a flood that a tiny ring buffer
 * cannot hold. Every error a caller can provoke returns its code.
 */
#include <bpf/libbpf.h>
#include <criterion/criterion.h>
#include <linux/capability.h>
#include <sched.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <cjson/cJSON.h>

#include "kperf/kperf.h"
#include "trace_testutil.h"

struct counts {
	uint64_t getppid, write, openat, openat_err, all, procs;
};

static void add(struct counts *c, const char *name, uint64_t calls, uint64_t errors)
{
	if (!strcmp(name, "getppid"))
		c->getppid += calls;
	else if (!strcmp(name, "write"))
		c->write += calls;
	else if (!strcmp(name, "openat")) {
		c->openat += calls;
		c->openat_err += errors;
	}
	c->all += calls;
}

/* summary counts of process <tgid> (0: every process) */
static struct counts summary_counts(int pd, int tgid)
{
	struct PmuTraceSummary *s = NULL;
	struct counts c = { 0 };
	int n = PmuTraceReadSummary(pd, &s), i, last = -1;

	cr_assert_geq(n, 0, "PmuTraceReadSummary: %s", Perror());
	for (i = 0; i < n; i++) {
		if (tgid && s[i].pid != tgid)
			continue;
		if (s[i].pid != last)
			c.procs++;
		last = s[i].pid;
		add(&c, s[i].funcs, s[i].calls, s[i].errors);
	}
	PmuTraceSummaryFree(s);
	return c;
}

static struct counts record_counts(const struct PmuTraceData *d, int n, int tgid)
{
	struct counts c = { 0 };
	int i;

	for (i = 0; i < n; i++)
		if (!tgid || d[i].pid == tgid)
			add(&c, d[i].funcs, 1, KperfTraceGetExt(d, i)->ret < 0);
	return c;
}

static void assert_workload(const struct counts *c, uint64_t workers)
{
	cr_assert_eq(c->getppid, 50000 * workers, "getppid %lu", c->getppid);
	cr_assert_eq(c->write, 2000 * workers, "write %lu", c->write);
	cr_assert_eq(c->openat, 300 * workers, "openat %lu", c->openat);
	cr_assert_eq(c->openat_err, 300 * workers, "openat errors %lu", c->openat_err);
}

Test(trace, per_call_records_are_exact)
{
	struct PmuTraceAttr a = { 0 };
	struct KperfTraceOpts x = KPERF_OPTS(KperfTraceOpts);
	struct PmuTraceData *d = NULL;
	struct PmuTraceStats st;
	struct counts c;
	pid_t pid;
	int pd = tt_trace_workload(&a, &x, NULL, &pid), n, i;

	n = PmuTraceRead(pd, &d);
	cr_assert_gt(n, 52300, "%d records: %s", n, Perror());
	c = record_counts(d, n, pid);
	assert_workload(&c, 1);
	cr_assert_eq(c.all, (uint64_t)n, "records of other processes");
	for (i = 0; i < n; i++) {
		cr_assert_eq(d[i].pid, pid);
		cr_assert_eq(d[i].tid, pid);
		cr_assert_str_eq(d[i].comm, "syscalls");
		cr_assert_geq(d[i].cpu, 0);
		cr_assert_gt(d[i].startTs, 0);
		cr_assert_gt(d[i].elapsedTime, 0.0);
		cr_assert_lt(d[i].elapsedTime, 1000.0);
		if (!strcmp(d[i].funcs, "openat"))
			cr_assert_eq(KperfTraceGetExt(d, i)->ret, -ENOENT);
		if (!strcmp(d[i].funcs, "getppid"))
			cr_assert_eq(KperfTraceGetExt(d, i)->ret, getpid(),
				     "getppid of the workload is this test");
		if (i)
			cr_assert_geq(d[i].startTs, d[i - 1].startTs,
				      "one thread: records in order");
	}
	PmuTraceDataFree(d);
	PmuTraceDataFree(d); /* a second free is ignored */
	cr_assert_eq(PmuTraceRead(pd, &d), 0, "records are handed out once");
	cr_assert_null(d);
	c = summary_counts(pd, pid);
	assert_workload(&c, 1);
	cr_assert_eq(PmuTraceGetStats(pd, &st), 0);
	cr_assert_eq(st.records, (uint64_t)n);
	cr_assert_eq(st.dropped, 0);
	cr_assert_eq(st.fallback, tu_expected_syscall_fallback());
	tt_finish(pd);
}

Test(trace, summary_only_is_exact_and_has_no_records)
{
	struct PmuTraceAttr a = { 0 };
	struct KperfTraceOpts x = KPERF_OPTS(KperfTraceOpts, .summaryOnly = 1);
	struct PmuTraceSummary *s;
	struct PmuTraceData *d;
	struct counts c;
	pid_t pid;
	int pd = tt_trace_workload(&a, &x, NULL, &pid), n, i;
	uint64_t hist_sum;

	cr_assert_eq(PmuTraceRead(pd, &d), 0);
	c = summary_counts(pd, pid);
	assert_workload(&c, 1);
	n = PmuTraceReadSummary(pd, &s);
	for (i = 0; i < n; i++) {
		int j;

		for (hist_sum = 0, j = 0; j < KPERF_HIST_SLOTS; j++)
			hist_sum += s[i].hist[j];
		cr_assert_eq(hist_sum, s[i].calls, "%s: histogram total", s[i].funcs);
		cr_assert_leq(s[i].minNs, s[i].maxNs);
		cr_assert_geq(s[i].totalNs, s[i].minNs * s[i].calls);
		cr_assert_leq(s[i].totalNs, s[i].maxNs * s[i].calls);
		cr_assert_str_eq(s[i].comm, "syscalls");
	}
	PmuTraceSummaryFree(s);
	tt_finish(pd);
}

Test(trace, threads_started_after_open_are_counted)
{
	struct PmuTraceAttr a = { 0 };
	struct KperfTraceOpts x = KPERF_OPTS(KperfTraceOpts, .summaryOnly = 1);
	char *args[] = { "--threads", "4", NULL };
	struct counts c;
	pid_t pid;
	int pd = tt_trace_workload(&a, &x, args, &pid);

	c = summary_counts(pd, pid);
	assert_workload(&c, 4);
	cr_assert_eq(c.procs, 1, "threads are reported under their process");
	tt_finish(pd);
}

Test(trace, only_the_named_syscalls)
{
	const char *funcs[] = { "getppid", "openat" };
	struct PmuTraceAttr a = { .funcs = funcs, .numFuncs = 2 };
	struct KperfTraceOpts x = KPERF_OPTS(KperfTraceOpts);
	struct PmuTraceData *d;
	struct counts c;
	pid_t pid;
	int pd = tt_trace_workload(&a, &x, NULL, &pid), n;

	c = summary_counts(pd, 0);
	cr_assert_eq(c.getppid, 50000);
	cr_assert_eq(c.openat, 300);
	cr_assert_eq(c.write, 0);
	cr_assert_eq(c.all, 50300, "only getppid and openat");
	n = PmuTraceRead(pd, &d);
	cr_assert_eq(n, 50300);
	PmuTraceDataFree(d);
	tt_finish(pd);
}

Test(trace, min_duration_filters_records_not_the_summary)
{
	struct PmuTraceAttr a = { 0 };
	struct KperfTraceOpts x = KPERF_OPTS(KperfTraceOpts, .minDurationNs = 5000000000ULL);
	struct PmuTraceData *d;
	struct counts c;
	pid_t pid;
	int pd = tt_trace_workload(&a, &x, NULL, &pid);

	cr_assert_eq(PmuTraceRead(pd, &d), 0, "no call lasts 5 s");
	c = summary_counts(pd, pid);
	assert_workload(&c, 1);
	tt_finish(pd);
}

Test(trace, tiny_ring_buffer_drops_are_counted_and_summary_stays_exact)
{
	struct PmuTraceAttr a = { 0 };
	struct KperfTraceOpts x = KPERF_OPTS(KperfTraceOpts, .ringBufferKb = 4);
	char *args[] = { "--getppid", "200000", NULL };
	struct PmuTraceData *d;
	struct PmuTraceStats st;
	struct counts sum;
	pid_t pid;
	int pd = tt_trace_workload(&a, &x, args, &pid), n;

	n = PmuTraceRead(pd, &d);
	cr_assert_geq(n, 0);
	cr_assert_eq(GetWarn(), KPERF_WARN_RECORDS_DROPPED, "warning: %s", GetWarnMsg());
	cr_assert(strstr(GetWarnMsg(), "summary is still exact"), "%s", GetWarnMsg());
	PmuTraceDataFree(d);
	sum = summary_counts(pd, pid);
	cr_assert_eq(sum.getppid, 200000);
	cr_assert_eq(sum.write, 2000);
	cr_assert_eq(PmuTraceGetStats(pd, &st), 0);
	cr_assert_eq(st.ringBufferKb, 4);
	cr_assert_gt(st.dropped, 0);
	cr_assert_eq(st.records + st.dropped, sum.all, "every call is a record or a drop");
	tt_finish(pd);
}

Test(trace, process_that_exits_mid_trace)
{
	struct PmuTraceAttr a = { 0 };
	struct KperfTraceOpts x = KPERF_OPTS(KperfTraceOpts);
	struct tu_proc w = tu_spawn("syscalls", "--wait", "--getppid", "1000", NULL);
	struct PmuTraceData *d;
	int pids[] = { w.pid }, pd, n;
	struct counts c;

	a.pidList = pids;
	a.numPid = 1;
	pd = KperfTraceOpen(TRACE_SYS_CALL, &a, &x);
	cr_assert_gt(pd, 0, "%s", Perror());
	PmuTraceEnable(pd);
	tu_go(&w);
	tu_wait(&w);
	tu_sleep_ms(50);
	/* still enabled, the process is gone: reading works and has all its calls */
	n = PmuTraceRead(pd, &d);
	c = record_counts(d, n, pids[0]);
	cr_assert_eq(c.getppid, 1000);
	cr_assert_eq(c.openat_err, 300);
	PmuTraceDataFree(d);
	tt_finish(pd);
}

Test(trace, disabled_window_is_not_counted)
{
	struct PmuTraceAttr a = { 0 };
	struct KperfTraceOpts x = KPERF_OPTS(KperfTraceOpts, .summaryOnly = 1);
	struct tu_proc w1 = tu_spawn("syscalls", "--wait", NULL);
	int pids[] = { w1.pid }, pd;
	struct counts c;

	a.pidList = pids;
	a.numPid = 1;
	pd = KperfTraceOpen(TRACE_SYS_CALL, &a, &x);
	cr_assert_gt(pd, 0, "%s", Perror());
	/* never enabled: the whole run is invisible */
	tu_go(&w1);
	tu_wait(&w1);
	c = summary_counts(pd, pids[0]);
	cr_assert_eq(c.all, 0);
	tt_finish(pd);
}

Test(trace, every_process_when_no_pid_is_given)
{
	struct PmuTraceAttr a = { 0 };
	struct KperfTraceOpts x = KPERF_OPTS(KperfTraceOpts, .summaryOnly = 1, .excludeSelf = 1);
	struct tu_proc w;
	struct counts c;
	int pd;

	pd = KperfTraceOpen(TRACE_SYS_CALL, &a, &x);
	cr_assert_gt(pd, 0, "%s", Perror());
	w = tu_spawn("syscalls", "--wait", NULL);
	PmuTraceEnable(pd);
	tu_go(&w);
	c.procs = (uint64_t)w.pid;
	tu_wait(&w);
	PmuTraceDisable(pd);
	c = summary_counts(pd, (int)c.procs);
	assert_workload(&c, 1);
	c = summary_counts(pd, getpid());
	cr_assert_eq(c.all, 0, "excludeSelf: the tracer's own syscalls are not traced");
	tt_finish(pd);
}

Test(trace, every_process_includes_the_caller_by_default)
{
	struct PmuTraceAttr a = { 0 };
	struct KperfTraceOpts x = KPERF_OPTS(KperfTraceOpts, .summaryOnly = 1);
	struct counts c;
	int pd, i;

	pd = KperfTraceOpen(TRACE_SYS_CALL, &a, &x);
	cr_assert_gt(pd, 0, "%s", Perror());
	PmuTraceEnable(pd);
	for (i = 0; i < 1000; i++)
		syscall(SYS_getppid);
	PmuTraceDisable(pd);
	c = summary_counts(pd, getpid());
	cr_assert_geq(c.getppid, 1000, "libkperf traces its caller too: %lu getppid",
		      (unsigned long)c.getppid);
	tt_finish(pd);
}

static void pin_to_cpu0(void)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(0, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

Test(trace, cpu_filter)
{
	struct PmuTraceAttr a = { 0 };
	struct KperfTraceOpts x = KPERF_OPTS(KperfTraceOpts, .summaryOnly = 1);
	int cpu1[] = { 1 }, cpu0[] = { 0 }, pd1, pd0;
	struct tu_proc w;

	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		cr_skip_test("needs 2 cpus");
	pin_to_cpu0(); /* the workload inherits the affinity */
	w = tu_spawn("syscalls", "--wait", NULL);
	a.cpuList = cpu1;
	a.numCpu = 1;
	pd1 = KperfTraceOpen(TRACE_SYS_CALL, &a, &x);
	a.cpuList = cpu0;
	pd0 = KperfTraceOpen(TRACE_SYS_CALL, &a, &x);
	cr_assert(pd0 > 0 && pd1 > 0, "%s", Perror());
	PmuTraceEnable(pd0);
	PmuTraceEnable(pd1);
	tu_go(&w);
	a.numPid = (unsigned)w.pid;
	tu_wait(&w);
	cr_assert_eq(summary_counts(pd1, (int)a.numPid).getppid, 0);
	cr_assert_eq(summary_counts(pd0, (int)a.numPid).getppid, 50000);
	PmuTraceClose(pd1);
	tt_finish(pd0);
}

Test(trace, cgroup_filter)
{
	char cg[256], procs[300], buf[32];
	struct PmuTraceAttr a = { 0 };
	struct KperfTraceOpts x = KPERF_OPTS(KperfTraceOpts, .summaryOnly = 1);
	struct tu_proc in, out;
	FILE *f;
	int pd;

	snprintf(cg, sizeof(cg), "/sys/fs/cgroup/unified/kperf-test-%d", getpid());
	if (access("/sys/fs/cgroup/unified", F_OK))
		snprintf(cg, sizeof(cg), "/sys/fs/cgroup/kperf-test-%d", getpid());
	if (mkdir(cg, 0755))
		cr_skip_test("cannot create a cgroup v2 directory: %s", strerror(errno));
	in = tu_spawn("syscalls", "--wait", NULL);
	out = tu_spawn("syscalls", "--wait", NULL);
	snprintf(procs, sizeof(procs), "%s/cgroup.procs", cg);
	f = fopen(procs, "w");
	cr_assert_not_null(f);
	fprintf(f, "%d\n", in.pid);
	fclose(f);
	x.cgroupPath = cg;
	pd = KperfTraceOpen(TRACE_SYS_CALL, &a, &x);
	cr_assert_gt(pd, 0, "%s", Perror());
	PmuTraceEnable(pd);
	tu_go(&in);
	tu_go(&out);
	snprintf(buf, sizeof(buf), "%d", in.pid);
	a.numPid = (unsigned)out.pid;
	a.numCpu = (unsigned)in.pid;
	tu_wait(&in);
	tu_wait(&out);
	assert_workload(&(struct counts){ 0 }, 0);
	{
		struct counts cin = summary_counts(pd, (int)a.numCpu);
		struct counts cout = summary_counts(pd, (int)a.numPid);
		struct counts all = summary_counts(pd, 0);

		assert_workload(&cin, 1);
		cr_assert_eq(cout.all, 0, "a process outside the cgroup was traced");
		cr_assert_eq(all.procs, 1);
	}
	tt_finish(pd);
	rmdir(cg);
}

Test(trace, kernel_without_btf_uses_the_fallback)
{
	struct PmuTraceAttr a = { 0 };
	struct KperfTraceOpts x = KPERF_OPTS(KperfTraceOpts);
	struct PmuTraceData *d;
	struct PmuTraceStats st;
	char *args[] = { "--threads", "2", NULL };
	struct counts c;
	pid_t pid;
	int pd, n;

	setenv("KPERF_BPF_BTF", "/nonexistent/vmlinux", 1);
	pd = tt_trace_workload(&a, &x, args, &pid);
	cr_assert_eq(PmuTraceGetStats(pd, &st), 0);
	cr_assert_eq(st.fallback, 1);
	n = PmuTraceRead(pd, &d);
	c = record_counts(d, n, pid);
	assert_workload(&c, 2);
	PmuTraceDataFree(d);
	c = summary_counts(pd, pid);
	assert_workload(&c, 2);
	tt_finish(pd);
}

Test(trace, fallback_warning_is_reported_at_open)
{
	struct PmuTraceAttr a = { 0 };
	struct KperfTraceOpts x = KPERF_OPTS(KperfTraceOpts, .summaryOnly = 1);
	int pd;

	setenv("KPERF_BPF_BTF", "/nonexistent/vmlinux", 1);
	pd = KperfTraceOpen(TRACE_SYS_CALL, &a, &x);
	cr_assert_gt(pd, 0, "%s", Perror());
	cr_assert_eq(GetWarn(), KPERF_WARN_FALLBACK);
	cr_assert(strstr(GetWarnMsg(), "no BTF"), "%s", GetWarnMsg());
	tt_finish(pd);
}

/* ---- errors ---- */

Test(trace_errors, nonexistent_pid)
{
	int pids[] = { 999999999 };
	struct PmuTraceAttr a = { .pidList = pids, .numPid = 1 };
	struct KperfTraceOpts x = KPERF_OPTS(KperfTraceOpts);

	/* libkperf checks a trace's pids as PmuOpen's pidList: LIBPERF_ERR_INVALID_PIDLIST */
	cr_assert_eq(KperfTraceOpen(TRACE_SYS_CALL, &a, &x), -1);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_INVALID_PIDLIST);
	cr_assert(strstr(Perror(), "999999999"), "%s", Perror());
	pids[0] = -3;
	cr_assert_eq(KperfTraceOpen(TRACE_SYS_CALL, &a, &x), -1);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_INVALID_PIDLIST);
	a.pidList = NULL;
	cr_assert_eq(KperfTraceOpen(TRACE_SYS_CALL, &a, &x), -1);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_INVALID_PIDLIST);
	cr_assert_eq(tu_bpf_fds(), 0);
}

/* the first cpu past the possible ones (one vCPU or many: a list of one entry, within the
 * machine's count of cpus), and a negative one, each with its exact message */
Test(trace_errors, cpu_out_of_range)
{
	int possible = libbpf_num_possible_cpus();
	int cpus[] = { possible };
	struct PmuTraceAttr a = { .cpuList = cpus, .numCpu = 1 };
	struct KperfTraceOpts x = KPERF_OPTS(KperfTraceOpts);
	char want[128];

	cr_assert_gt(possible, 0);
	cr_assert_eq(KperfTraceOpen(TRACE_SYS_CALL, &a, &x), -1);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_INVALID_CPULIST);
	snprintf(want, sizeof(want),
		 "cpu %d is out of range: this machine has cpus 0-%d (or -1 for any cpu)", possible,
		 possible - 1);
	cr_assert(strstr(Perror(), want), "%s", Perror());
	cpus[0] = -2;
	cr_assert_eq(KperfTraceOpen(TRACE_SYS_CALL, &a, &x), -1);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_INVALID_CPULIST);
	cr_assert(strstr(Perror(), "cpu -2 is out of range"), "%s", Perror());
	/* the names are checked before the cpus, as libkperf does */
	a.funcs = (const char *[]){ "opnat" };
	a.numFuncs = 1;
	cr_assert_eq(KperfTraceOpen(TRACE_SYS_CALL, &a, &x), -1);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_INVALID_SYSCALL_FUN);
	cr_assert_eq(tu_bpf_fds(), 0);
}

Test(trace_errors, unknown_syscall)
{
	const char *funcs[] = { "read", "opnat" };
	struct PmuTraceAttr a = { .funcs = funcs, .numFuncs = 2 };
	struct KperfTraceOpts x = KPERF_OPTS(KperfTraceOpts);

	cr_assert_eq(KperfTraceOpen(TRACE_SYS_CALL, &a, &x), -1);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_INVALID_SYSCALL_FUN);
	cr_assert(strstr(Perror(), "'opnat'"), "%s", Perror());
	cr_assert(strstr(Perror(), "did you mean openat"), "%s", Perror());
	a.funcs = NULL;
	cr_assert_eq(KperfTraceOpen(TRACE_SYS_CALL, &a, &x), -1);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_INVALID_SYSCALL_FUN);
	cr_assert_str_eq(Perror(), "funcs is NULL but numFuncs is 2");
}

Test(trace_errors, invalid_handle)
{
	struct PmuTraceData *d = (void *)1;
	struct PmuTraceSummary *s;
	struct PmuTraceStats st;

	cr_assert_eq(PmuTraceEnable(12345), -1);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_INVALID_PD);
	cr_assert_eq(PmuTraceDisable(-1), -1);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_INVALID_PD);
	cr_assert_eq(PmuTraceRead(0, &d), -1);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_INVALID_PD);
	cr_assert_null(d);
	cr_assert_eq(PmuTraceReadSummary(777, &s), -1);
	cr_assert_eq(PmuTraceGetStats(777, &st), -1);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_INVALID_PD);
	PmuTraceClose(777); /* no crash */
	cr_assert_eq(Perrorno(), LIBPERF_ERR_INVALID_PD);
}

Test(trace_errors, closed_handle)
{
	struct PmuTraceAttr a = { 0 };
	struct KperfTraceOpts x = KPERF_OPTS(KperfTraceOpts, .summaryOnly = 1);
	struct PmuTraceData *d;
	int pd = KperfTraceOpen(TRACE_SYS_CALL, &a, &x);

	cr_assert_gt(pd, 0, "%s", Perror());
	PmuTraceClose(pd);
	cr_assert_eq(PmuTraceRead(pd, &d), -1);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_INVALID_PD);
	PmuTraceClose(pd);
	cr_assert_eq(tu_bpf_fds(), 0);
}

Test(trace_errors, bad_attributes)
{
	struct PmuTraceAttr a = { 0 };
	struct KperfTraceOpts x = KPERF_OPTS(KperfTraceOpts);

	cr_assert_eq(KperfTraceOpen((enum PmuTraceType)7, &a, &x), -1);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_INVALID_TRACE_TYPE);
	/* libkperf checks the attributes' pointer first */
	cr_assert_eq(PmuTraceOpen((enum PmuTraceType)7, NULL), -1);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_NULL_POINTER);
	cr_assert_eq(KperfTraceOpen(TRACE_SYS_CALL, NULL, &x), -1);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_NULL_POINTER);
	x.ringBufferKb = 4u << 20;
	cr_assert_eq(KperfTraceOpen(TRACE_SYS_CALL, &a, &x), -1);
	cr_assert_eq(Perrorno(), KPERF_ERR_INVALID_ATTR);
	x.ringBufferKb = 0;
	x.fromExec = 1;
	cr_assert_eq(KperfTraceOpen(TRACE_SYS_CALL, &a, &x), -1);
	cr_assert_eq(Perrorno(), KPERF_ERR_INVALID_ATTR);
	x.fromExec = 0;
	/* libkperf's cgroup codes: a path it cannot open, one that is not a cgroup */
	x.cgroupPath = "/nonexistent-cgroup";
	cr_assert_eq(KperfTraceOpen(TRACE_SYS_CALL, &a, &x), -1);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_OPEN_INVALID_FILE);
	x.cgroupPath = "/tmp";
	cr_assert_eq(KperfTraceOpen(TRACE_SYS_CALL, &a, &x), -1);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_INVALID_CGROUP_LIST);
	cr_assert(strstr(Perror(), "not a cgroup v2 directory"), "%s", Perror());
	cr_assert_eq(PmuTraceRead(1, NULL), -1);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_NULL_POINTER);
}

Test(trace_errors, missing_privileges)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct none[2] = { { 0 } };
	struct PmuTraceAttr a = { 0 };
	struct KperfTraceOpts x = KPERF_OPTS(KperfTraceOpts, .summaryOnly = 1);

	/* criterion runs each test in its own process: dropping every capability is local */
	cr_assert_eq(syscall(SYS_capset, &h, none), 0);
	cr_assert_eq(KperfTraceOpen(TRACE_SYS_CALL, &a, &x), -1);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_NO_PERMISSION);
	cr_assert(strstr(Perror(), "CAP_BPF"), "%s", Perror());
	cr_assert(strstr(Perror(), "CAP_PERFMON"), "%s", Perror());
}

/* ---- the command ---- */

static cJSON *run_json(const char *args, int *status)
{
	char cmd[1024], *out;
	cJSON *doc;

	snprintf(cmd, sizeof(cmd), "%s/bin/kperf-bpf trace --format json %s", tu_build(), args);
	out = tu_run(cmd, status);
	cr_assert_not_null(out);
	doc = cJSON_Parse(out);
	cr_assert_not_null(doc, "not JSON: %.500s", out);
	free(out);
	return doc;
}

static double syscall_field(cJSON *proc, const char *name, const char *field)
{
	cJSON *sc;

	cJSON_ArrayForEach(
		sc,
		cJSON_GetObjectItem(
			proc, "syscalls")) if (!strcmp(cJSON_GetObjectItem(sc, "name")->valuestring,
						       name)) return cJSON_GetObjectItem(sc, field)
		->valuedouble;
	return 0;
}

Test(trace_cli, launch_mode_counts_children_and_not_the_launcher)
{
	char args[512];
	cJSON *doc, *proc;
	double getppid = 0, openat_err = 0;
	int status, nproc = 0;

	snprintf(args, sizeof(args), "-- %s/workloads/syscalls --children 2", tu_build());
	doc = run_json(args, &status);
	cr_assert_eq(status, 0);
	cJSON_ArrayForEach(proc, cJSON_GetObjectItem(doc, "processes"))
	{
		nproc++;
		getppid += syscall_field(proc, "getppid", "calls");
		openat_err += syscall_field(proc, "openat", "errors");
		cr_assert_eq(syscall_field(proc, "execve", "calls"), 0, "the launcher's execve");
		cr_assert_eq(syscall_field(proc, "rt_sigaction", "calls"), 0,
			     "the launcher's own syscalls before the exec");
		cr_assert_str_eq(cJSON_GetObjectItem(proc, "comm")->valuestring, "syscalls");
	}
	cr_assert_eq(nproc, 3, "the command and its 2 children");
	cr_assert_eq(getppid, 150000);
	cr_assert_geq(openat_err, 900);
	/* the attach time is reported (its size is a benchmark's business, not a test's: it
	 * passed 1 s on a loaded machine) */
	cJSON *attach = cJSON_GetObjectItem(doc, "attach_ms");
	cr_assert(attach && cJSON_IsNumber(attach) && attach->valuedouble > 0);
	cJSON_Delete(doc);
}

Test(trace_cli, launch_mode_in_the_fallback)
{
	char args[512];
	cJSON *doc, *proc;
	double getppid = 0;
	int status;

	setenv("KPERF_BPF_FORCE_COMPAT", "1", 1);
	snprintf(args, sizeof(args), "-- %s/workloads/syscalls --children 1 --threads 2",
		 tu_build());
	doc = run_json(args, &status);
	cr_assert_eq(status, 0);
	cr_assert(cJSON_IsTrue(cJSON_GetObjectItem(doc, "fallback")));
	cJSON_ArrayForEach(proc, cJSON_GetObjectItem(doc, "processes"))
		getppid += syscall_field(proc, "getppid", "calls");
	cr_assert_eq(getppid, 200000);
	cJSON_Delete(doc);
}

Test(trace_cli, exit_status_of_the_command_and_bad_commands)
{
	char cmd[512], *out;
	int status;

	snprintf(cmd, sizeof(cmd), "%s/bin/kperf-bpf trace -- sh -c 'exit 7' 2>/dev/null",
		 tu_build());
	free(tu_run(cmd, &status));
	cr_assert_eq(status, 7);
	snprintf(cmd, sizeof(cmd), "%s/bin/kperf-bpf trace -- /nonexistent/cmd 2>&1", tu_build());
	out = tu_run(cmd, &status);
	cr_assert_eq(status, 127);
	cr_assert(strstr(out, "cannot run /nonexistent/cmd: No such file or directory"), "%s", out);
	free(out);
	snprintf(cmd, sizeof(cmd), "%s/bin/kperf-bpf trace -p 999999999 2>&1", tu_build());
	out = tu_run(cmd, &status);
	cr_assert_eq(status, 1);
	cr_assert(strstr(out, "999999999"), "%s", out);
	free(out);
	snprintf(cmd, sizeof(cmd), "%s/bin/kperf-bpf trace -e getpidd -d 1 2>&1", tu_build());
	out = tu_run(cmd, &status);
	cr_assert_eq(status, 1);
	cr_assert(strstr(out, "did you mean getpid"), "%s", out);
	free(out);
	snprintf(cmd, sizeof(cmd), "%s/bin/kperf-bpf trace --format xml -d 1 2>&1", tu_build());
	out = tu_run(cmd, &status);
	cr_assert_eq(status, 1);
	free(out);
}

Test(trace_cli, events_csv_has_one_row_per_call)
{
	char cmd[512], ev[64], sum[64], *out, *line;
	int status, getppid = 0, summary = 0;

	snprintf(cmd, sizeof(cmd),
		 "%s/bin/kperf-bpf trace --events --format csv -- %s/workloads/syscalls "
		 "--getppid 1000 --writes 0 --fails 0",
		 tu_build(), tu_build());
	out = tu_run(cmd, &status);
	cr_assert_eq(status, 0);
	cr_assert(!strncmp(out, "kind,pid,tid,comm", 17), "%.200s", out);
	/* the number is the architecture's: 110 on x86_64, 173 on arm64 */
	snprintf(ev, sizeof(ev), ",getppid,%d,", SYS_getppid);
	snprintf(sum, sizeof(sum), ",getppid,%d,,,,1000,", SYS_getppid);
	for (line = strtok(out, "\n"); line; line = strtok(NULL, "\n")) {
		if (!strncmp(line, "event,", 6) && strstr(line, ev))
			getppid++;
		if (!strncmp(line, "summary,", 8) && strstr(line, sum))
			summary++;
	}
	cr_assert_eq(getppid, 1000);
	cr_assert_eq(summary, 1);
	free(out);
}

Test(trace_cli, pid_mode_ends_when_the_process_exits)
{
	char *argv[] = { "/bin/sh", "-c", "sleep 1; sleep 1", NULL };
	struct tu_proc w = tu_spawn_v(argv, 0);
	uint64_t t0 = 0;
	char cmd[512], *out;
	struct timespec ts;
	int status;

	/* the shell waits for its first sleep while the tracer attaches, then forks the
	 * second: its wait4 and clone after the attach are traced; it is not reaped until
	 * tu_wait, so the tracer must see that a zombie has exited */
	snprintf(cmd, sizeof(cmd), "%s/bin/kperf-bpf trace -p %d -d 30 2>/dev/null", tu_build(),
		 w.pid);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	t0 = (uint64_t)ts.tv_sec;
	out = tu_run(cmd, &status);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	tu_wait(&w);
	cr_assert_eq(status, 0);
	cr_assert_lt((uint64_t)ts.tv_sec - t0, 20, "the tracer ran on after the process exited");
	cr_assert(strstr(out, " wait4 "), "%s", out);
	free(out);
}

Test(trace, a_caller_that_names_its_own_pid_is_traced)
{
	int pids[] = { getpid() };
	struct PmuTraceAttr a = { .pidList = pids, .numPid = 1 };
	struct KperfTraceOpts x = KPERF_OPTS(KperfTraceOpts, .summaryOnly = 1);
	const char *funcs[] = { "getppid" };
	struct counts c;
	int pd, i;

	a.funcs = funcs;
	a.numFuncs = 1;
	pd = KperfTraceOpen(TRACE_SYS_CALL, &a, &x);
	cr_assert_gt(pd, 0, "%s", Perror());
	PmuTraceEnable(pd);
	for (i = 0; i < 1234; i++)
		syscall(SYS_getppid);
	PmuTraceDisable(pd);
	c = summary_counts(pd, getpid());
	cr_assert_eq(c.getppid, 1234);
	tt_finish(pd);
}
