/*
 * pidns_inner.c - the PID namespace tests that run inside a namespace (suite pidns_in).
 * test_pidns.c starts this binary under `unshare --pid --fork --mount-proc` with
 * KPERF_PIDNS_INNER=1 and checks that the test it names passed; run anywhere else, each test
 * skips. In here, every pid is the namespace's: what the library takes (pid lists, launched
 * commands) and what it gives back (records, summaries, samples, counts) must be these pids,
 * with the same exact counts as on the host, and a process the namespace does not contain is
 * pid -1 "[outside namespace]", never a wrong local pid.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <cjson/cJSON.h>

#include "core/pidns.h"
#include "export/export.h"
#include "kperf/kperf.h"
#include "pidns_testutil.h"
#include "trace_testutil.h"
#include "utrace_testutil.h"

TestSuite(pidns_in, .timeout = 180);

#define INNER()                                                                              \
	do {                                                                                 \
		if (!getenv("KPERF_PIDNS_INNER"))                                            \
			cr_skip_test("runs inside a PID namespace, started by suite pidns"); \
		cr_assert(!kp_pidns_is_host(), "not inside a PID namespace");                \
	} while (0)

/* the syscalls workload traced by its pid (the namespace's) with the C API: exact */
static void trace_by_pid(void)
{
	struct PmuTraceAttr a = { 0 };
	struct KperfTraceOpts x = KPERF_OPTS(KperfTraceOpts);
	struct PmuTraceData *d = NULL;
	struct ns_counts c = { 0 };
	pid_t pid;
	int pd = tt_trace_workload(&a, &x, NULL, &pid), n, i;

	cr_assert_lt(pid, 1000, "pid %d is not a pid of this young namespace", pid);
	n = PmuTraceRead(pd, &d);
	cr_assert_gt(n, 0, "%s", Perror());
	for (i = 0; i < n; i++) {
		cr_assert_eq(d[i].pid, pid, "a record of pid %d", d[i].pid);
		cr_assert_eq(d[i].tid, pid);
		cr_assert_str_eq(d[i].comm, "syscalls");
		if (!strcmp(d[i].funcs, "getppid"))
			cr_assert_eq(KperfTraceGetExt(d, i)->ret, getpid(),
				     "getppid returns this test's pid in the namespace");
		ns_add(&c, d[i].funcs, 1, KperfTraceGetExt(d, i)->ret < 0);
	}
	ns_assert_workload(&c, 1);
	PmuTraceDataFree(d);
	c = ns_summary(pd, pid);
	ns_assert_workload(&c, 1);
	c = ns_summary(pd, 0);
	ns_assert_workload(&c, 1);
	tt_finish(pd);
}

Test(pidns_in, trace_by_pid)
{
	INNER();
	trace_by_pid();
	setenv("KPERF_BPF_FORCE_COMPAT", "1", 1);
	trace_by_pid();
}

/* `kperf-bpf trace -p NSPID`: the final cumulative summary, exact */
static void trace_cli_by_pid(void)
{
	char *argv[] = { "syscalls", "--wait", NULL };
	struct tu_proc w = tu_spawn_v(argv, 0);
	char *out, *last;
	cJSON *doc, *procs, *sc;
	struct ns_counts c = { 0 };
	int status, pid = w.pid;

	out = ns_cli_by_pid(&w, "trace --format json -i 0.1 -e getppid,write,openat", &status);
	cr_assert_eq(status, 0, "%s", out);
	out[strlen(out) - 1] = '\0';
	last = strrchr(out, '\n') ? strrchr(out, '\n') + 1 : out;
	doc = cJSON_Parse(last);
	cr_assert_not_null(doc, "%s", last);
	procs = cJSON_GetObjectItem(doc, "processes");
	cr_assert_eq(cJSON_GetArraySize(procs), 1, "%s", last);
	cr_assert_eq(cJSON_GetObjectItem(cJSON_GetArrayItem(procs, 0), "pid")->valueint, pid);
	cJSON_ArrayForEach(sc, cJSON_GetObjectItem(cJSON_GetArrayItem(procs, 0), "syscalls"))
		ns_add(&c, cJSON_GetObjectItem(sc, "name")->valuestring,
		       (uint64_t)cJSON_GetObjectItem(sc, "calls")->valuedouble,
		       (uint64_t)cJSON_GetObjectItem(sc, "errors")->valuedouble);
	ns_assert_workload(&c, 1);
	cJSON_Delete(doc);
	free(out);
}

Test(pidns_in, trace_cli_by_pid)
{
	INNER();
	trace_cli_by_pid();
	setenv("KPERF_BPF_FORCE_COMPAT", "1", 1);
	trace_cli_by_pid();
}

/* `kperf-bpf trace -- COMMAND`: the command and its children, by their namespace pids */
static void trace_cli_launched(void)
{
	char cmd[1024], *out;
	cJSON *doc, *proc, *sc;
	struct ns_counts c = { 0 };
	int status, nproc = 0;

	snprintf(cmd, sizeof(cmd),
		 "%s/bin/kperf-bpf trace --format json -- %s/workloads/syscalls --children 2",
		 tu_build(), tu_build());
	out = tu_run(cmd, &status);
	cr_assert_eq(status, 0, "%s", out);
	doc = cJSON_Parse(out);
	cr_assert_not_null(doc, "%s", out);
	cJSON_ArrayForEach(proc, cJSON_GetObjectItem(doc, "processes"))
	{
		int pid = cJSON_GetObjectItem(proc, "pid")->valueint;

		nproc++;
		cr_assert(pid > getpid() && pid < 1000, "pid %d is not a child's in the namespace",
			  pid);
		cr_assert_str_eq(cJSON_GetObjectItem(proc, "comm")->valuestring, "syscalls");
		cJSON_ArrayForEach(sc, cJSON_GetObjectItem(proc, "syscalls"))
			ns_add(&c, cJSON_GetObjectItem(sc, "name")->valuestring,
			       (uint64_t)cJSON_GetObjectItem(sc, "calls")->valuedouble,
			       (uint64_t)cJSON_GetObjectItem(sc, "errors")->valuedouble);
	}
	cr_assert_eq(nproc, 3, "the command and its 2 children: %s", out);
	cr_assert_eq(c.getppid, 150000);
	cr_assert_eq(c.write, 6000);
	cr_assert_geq(c.openat_err, 900);
	cJSON_Delete(doc);
	free(out);
}

Test(pidns_in, trace_cli_launched)
{
	INNER();
	trace_cli_launched();
	setenv("KPERF_BPF_FORCE_COMPAT", "1", 1);
	trace_cli_launched();
}

/* PmuOpen(SAMPLING) on a spinner by its namespace pid: hot_loop is the leaf of >= 80% */
Test(pidns_in, record_by_pid)
{
	char *evts[] = { "cpu-clock" };
	char *argv[] = { "cpuburn", "--ms", "400", "--wait", NULL };
	struct tu_proc w;
	struct PmuAttr a = { .evtList = evts,
			     .numEvt = 1,
			     .useFreq = 1,
			     .freq = 999,
			     .callStack = 1,
			     .symbolMode = RESOLVE_ELF };
	struct PmuData *d = NULL;
	uint64_t all, hot;
	int pids[1], pd, n, i;

	INNER();
	w = tu_spawn_v(argv, 0);
	pids[0] = w.pid;
	a.pidList = pids;
	a.numPid = 1;
	pd = PmuOpen(SAMPLING, &a);
	cr_assert_gt(pd, 0, "PmuOpen: %d %s", Perrorno(), Perror());
	cr_assert_eq(PmuEnable(pd), 0, "%s", Perror());
	tu_go(&w);
	cr_assert_eq(tu_wait(&w), 0);
	PmuDisable(pd);
	/* after the exit: the symbols were recorded under the namespace's pid */
	n = PmuRead(pd, &d);
	cr_assert_gt(n, 0, "PmuRead: %s", Perror());
	for (i = 0; i < n; i++) {
		cr_assert_eq(d[i].pid, pids[0]);
		cr_assert_eq(d[i].tid, pids[0]);
		cr_assert_str_eq(d[i].comm, "cpuburn");
	}
	ns_leaf_share(d, n, "hot_loop", &all, &hot);
	cr_assert_gt(all, 50, "%lu samples", all);
	cr_assert_geq(hot * 10, all * 8, "hot_loop is the leaf of %lu of %lu samples", hot, all);
	PmuDataFree(d);
	PmuClose(pd);
	cr_assert_eq(tu_bpf_fds(), 0, "BPF objects left open");
}

/* perf events process <pid> holds open */
static int perf_fds_of(pid_t pid)
{
	char path[320], link[256];
	struct dirent *e;
	int n = 0;
	ssize_t len;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	d = opendir(path);
	while (d && (e = readdir(d))) {
		snprintf(path, sizeof(path), "/proc/%d/fd/%s", (int)pid, e->d_name);
		len = readlink(path, link, sizeof(link) - 1);
		if (len <= 0)
			continue;
		link[len] = '\0';
		n += strstr(link, "[perf_event]") != NULL;
	}
	if (d)
		closedir(d);
	return n;
}

/* `kperf-bpf record -p NSPID` and `record -- COMMAND`: folded stacks, hot_loop the leaf */
Test(pidns_in, record_cli)
{
	char *argv[] = { "cpuburn", "--ms", "1000", "--wait", NULL };
	char cmd[1024], line[4096], *out = NULL;
	char *rec_argv[] = { "/bin/sh", "-c", cmd, NULL };
	int status, i, ncpu = (int)sysconf(_SC_NPROCESSORS_ONLN);
	size_t len = 0;
	struct tu_proc w, r;
	uint64_t all, hot;

	INNER();
	w = tu_spawn_v(argv, 0);
	snprintf(cmd, sizeof(cmd), "exec %s/bin/kperf-bpf record -g --format folded -p %d",
		 tu_build(), w.pid);
	r = tu_spawn_v(rec_argv, 1);
	/* its events are open (one per cpu for the side band, one on the workload's thread):
	 * the workload may go */
	for (i = 0; i < 6000 && perf_fds_of(r.pid) < ncpu + 1; i++)
		tu_sleep_ms(10);
	cr_assert_geq(perf_fds_of(r.pid), ncpu + 1, "kperf-bpf record did not open its events");
	tu_go(&w);
	cr_assert_eq(tu_wait(&w), 0);
	while (ns_read_line(r.out_fd, line, sizeof(line))) {
		out = realloc(out, len + strlen(line) + 2);
		cr_assert_not_null(out);
		len += (size_t)sprintf(out + len, "%s\n", line);
	}
	close(r.out_fd);
	cr_assert_eq(tu_wait(&r), 0, "%s", out);
	cr_assert_not_null(out);
	ns_folded_leaf_share(out, "hot_loop", &all, &hot);
	cr_assert_gt(all, 50, "%lu samples", all);
	cr_assert_geq(hot * 10, all * 8, "hot_loop is the leaf of %lu of %lu samples", hot, all);
	free(out);

	snprintf(cmd, sizeof(cmd),
		 "%s/bin/kperf-bpf record -g --format folded -- %s/workloads/cpuburn --ms 400 "
		 "2>/dev/null",
		 tu_build(), tu_build());
	out = tu_run(cmd, &status);
	cr_assert_eq(status, 0, "%s", out);
	cr_assert(strstr(out, ";main;burn;hot_loop "), "%s", out);
	ns_folded_leaf_share(out, "hot_loop", &all, &hot);
	/* the start-up (the dynamic loader) is in there too: long under an emulator */
	cr_assert_gt(hot * 2, all, "hot_loop is the leaf of %lu of %lu samples", hot, all);
	free(out);
}

/* the count of <event> in the final table of `kperf-bpf stat` ("   50,000   event") */
static uint64_t stat_table_count(const char *out, const char *event)
{
	const char *p = strstr(out, "Performance counter stats");
	uint64_t v = 0;

	cr_assert_not_null(p, "%s", out);
	p = strstr(p, event);
	cr_assert_not_null(p, "%s", out);
	while (p > out && p[-1] != '\n')
		p--;
	for (; *p && *p != '\n'; p++) {
		if (*p >= '0' && *p <= '9')
			v = v * 10 + (uint64_t)(*p - '0');
		else if (*p != ',' && *p != ' ')
			break;
	}
	return v;
}

/* PmuOpen(COUNTING), its BPF mode, and `kperf-bpf stat -p NSPID`: the exact getppid count */
Test(pidns_in, stat_by_pid)
{
	char *evts[] = { "syscalls:sys_enter_getppid" };
	char *argv[] = { "syscalls", "--wait", NULL };
	char *bpf_argv[] = { "syscalls", "--wait", "--threads", "2", "--children", "1", NULL };
	struct PmuAttr a = { .evtList = evts, .numEvt = 1 };
	struct tu_proc w;
	struct PmuData *d = NULL;
	uint64_t total = 0;
	char *out;
	int pids[1], pd, n, i, status;

	INNER();
	w = tu_spawn_v(argv, 0);
	pids[0] = w.pid;
	a.pidList = pids;
	a.numPid = 1;
	pd = PmuOpen(COUNTING, &a);
	cr_assert_gt(pd, 0, "PmuOpen: %d %s", Perrorno(), Perror());
	cr_assert_eq(PmuEnable(pd), 0, "%s", Perror());
	tu_go(&w);
	cr_assert_eq(tu_wait(&w), 0);
	PmuDisable(pd);
	n = PmuRead(pd, &d);
	cr_assert_gt(n, 0, "PmuRead: %s", Perror());
	for (i = 0; i < n; i++) {
		cr_assert_eq(d[i].pid, pids[0]);
		total += d[i].count;
	}
	cr_assert_eq(total, 50000);
	PmuDataFree(d);
	PmuClose(pd);

	/* BPF mode: charged at each switch to the thread's slot, by its namespace tid; the
	 * threads and the child created after the open too */
	w = tu_spawn_v(bpf_argv, 0);
	pids[0] = w.pid;
	a.enableBpf = 1;
	pd = PmuOpen(COUNTING, &a);
	cr_assert_gt(pd, 0, "PmuOpen (enableBpf): %d %s", Perrorno(), Perror());
	cr_assert_eq(PmuEnable(pd), 0, "%s", Perror());
	tu_go(&w);
	cr_assert_eq(tu_wait(&w), 0);
	PmuDisable(pd);
	n = PmuRead(pd, &d);
	cr_assert_gt(n, 0, "PmuRead: %s", Perror());
	for (i = 0, total = 0; i < n; i++) {
		cr_assert_eq(d[i].pid, pids[0]);
		cr_assert(d[i].tid >= pids[0] && d[i].tid < 1000, "tid %d", d[i].tid);
		total += d[i].count;
	}
	cr_assert_eq(total, 4 * 50000, "2 threads, in the process and in its child: %lu", total);
	PmuDataFree(d);
	PmuClose(pd);
	a.enableBpf = 0;

	w = tu_spawn_v(argv, 0);
	out = ns_cli_by_pid(&w, "stat -e syscalls:sys_enter_getppid -I 100", &status);
	cr_assert_eq(status, 0, "%s", out);
	cr_assert_eq(stat_table_count(out, "syscalls:sys_enter_getppid"), 50000, "%s", out);
	free(out);
}

/* UTraceOpen by the namespace's pid: each call of ut_f, with and without attach cookies */
static void utrace_by_pid(void)
{
	char bin[PATH_MAX];
	struct SymbolSource src[1];
	struct UTraceAttr a = { .symSrc = src, .numSym = 1, .numPid = 1 };
	struct UTraceData *d = NULL;
	struct tu_proc w;
	int pids[1], pd, n, i, ent = 0, ret = 0;

	ut_artefact("workloads/utrace_wl", bin);
	src[0] = (struct SymbolSource){ bin, "ut_f" };
	w = tu_spawn("utrace_wl", "--wait", NULL);
	pids[0] = w.pid;
	a.pidList = pids;
	pd = UTraceOpen(&a);
	cr_assert_gt(pd, 0, "UTraceOpen: %d %s", Perrorno(), Perror());
	cr_assert_eq(UTraceEnable(pd), 0, "%s", Perror());
	tu_go(&w);
	cr_assert_eq(tu_wait(&w), 0);
	cr_assert_eq(UTraceDisable(pd), 0);
	n = UTraceRead(pd, &d);
	cr_assert_geq(n, 0, "UTraceRead: %s", Perror());
	for (i = 0; i < n; i++) {
		cr_assert_eq(d[i].tid, pids[0]);
		cr_assert_str_eq(d[i].func, "ut_f");
		ent += !d[i].isRet;
		ret += (int)d[i].isRet;
	}
	cr_assert_eq(ent, 1004);
	cr_assert_eq(ret, 1004);
	UTraceDataFree(d);
	UTraceClose(pd);
	cr_assert_eq(tu_bpf_fds(), 0, "BPF objects left open");
}

Test(pidns_in, utrace_by_pid)
{
	INNER();
	utrace_by_pid();
	/* without cookies the probe is told by (pid, address): the pid must be the one whose
	 * maps were read */
	setenv("KPERF_BPF_NO_COOKIE", "1", 1);
	utrace_by_pid();
}

/* ---- two nested namespaces ---- */

/* `unshare --pid --fork --mount-proc syscalls --wait ...` started from here: the workload is
 * the init of a namespace nested in this one; *child its pid as this namespace sees it */
static struct tu_proc spawn_nested(const char *args, pid_t *child)
{
	char cmd[1024], path[64], buf[64];
	char *argv[] = { "/bin/sh", "-c", cmd, NULL };
	struct tu_proc u;
	int i;

	snprintf(cmd, sizeof(cmd),
		 "exec unshare --pid --fork --mount-proc %s/workloads/syscalls %s", tu_build(),
		 args);
	u = tu_spawn_v(argv, 0);
	cr_assert_gt(u.pid, 0);
	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", u.pid, u.pid);
	*child = 0;
	for (i = 0; i < 500 && *child <= 0; i++) {
		FILE *f = fopen(path, "r");

		if (f && fgets(buf, sizeof(buf), f))
			*child = atoi(buf);
		if (f)
			fclose(f);
		if (*child <= 0)
			tu_sleep_ms(10);
	}
	cr_assert_gt(*child, 0, "the nested namespace's init did not start");
	cr_assert_eq(tu_wait_blocked(*child), 0, "the nested workload is not waiting");
	return u;
}

static void trace_nested(void)
{
	struct PmuTraceAttr a = { .numPid = 1 };
	struct PmuTraceData *d = NULL;
	struct ns_counts c = { 0 };
	struct tu_proc u;
	pid_t child;
	int pd, n, i;

	u = spawn_nested("--wait", &child);
	a.pidList = &child;
	pd = PmuTraceOpen(TRACE_SYS_CALL, &a);
	cr_assert_gt(pd, 0, "PmuTraceOpen: %d %s", Perrorno(), Perror());
	cr_assert_eq(PmuTraceEnable(pd), 0, "%s", Perror());
	tu_go(&u);
	cr_assert_eq(tu_wait(&u), 0);
	cr_assert_eq(PmuTraceDisable(pd), 0);
	n = PmuTraceRead(pd, &d);
	cr_assert_gt(n, 0, "%s", Perror());
	for (i = 0; i < n; i++) {
		/* in its own namespace it is pid 1: here it is <child> */
		cr_assert_eq(d[i].pid, child, "a record of pid %d", d[i].pid);
		cr_assert_eq(d[i].tid, child);
		if (!strcmp(d[i].funcs, "getppid"))
			cr_assert_eq(KperfTraceGetExt(d, i)->ret, 0,
				     "a namespace's init has no parent in its namespace");
		ns_add(&c, d[i].funcs, 1, KperfTraceGetExt(d, i)->ret < 0);
	}
	ns_assert_workload(&c, 1);
	PmuTraceDataFree(d);
	c = ns_summary(pd, child);
	ns_assert_workload(&c, 1);
	tt_finish(pd);
}

/* `trace -- unshare ... syscalls --children 1`: forks followed into the nested namespace */
static void trace_cli_nested(void)
{
	char cmd[1024], *out;
	cJSON *doc, *proc, *sc;
	struct ns_counts c = { 0 };
	int status, nproc = 0;

	snprintf(cmd, sizeof(cmd),
		 "%s/bin/kperf-bpf trace --format json -- unshare --pid --fork --mount-proc "
		 "%s/workloads/syscalls --children 1",
		 tu_build(), tu_build());
	out = tu_run(cmd, &status);
	cr_assert_eq(status, 0, "%s", out);
	doc = cJSON_Parse(out);
	cr_assert_not_null(doc, "%s", out);
	cJSON_ArrayForEach(proc, cJSON_GetObjectItem(doc, "processes"))
	{
		if (strcmp(cJSON_GetObjectItem(proc, "comm")->valuestring, "syscalls"))
			continue;
		nproc++;
		/* 1 and 2 in the nested namespace; more here, where the tests came first */
		cr_assert_gt(cJSON_GetObjectItem(proc, "pid")->valueint, 2, "%s", out);
		cJSON_ArrayForEach(sc, cJSON_GetObjectItem(proc, "syscalls"))
			ns_add(&c, cJSON_GetObjectItem(sc, "name")->valuestring,
			       (uint64_t)cJSON_GetObjectItem(sc, "calls")->valuedouble,
			       (uint64_t)cJSON_GetObjectItem(sc, "errors")->valuedouble);
	}
	cr_assert_eq(nproc, 2, "the nested init and its child: %s", out);
	cr_assert_eq(c.getppid, 100000);
	cr_assert_eq(c.write, 4000);
	cJSON_Delete(doc);
	free(out);
}

Test(pidns_in, nested_namespaces)
{
	INNER();
	trace_nested();
	trace_cli_nested();
	/* the fallback has no CO-RE: it walks with the offsets of the kernel's BTF */
	setenv("KPERF_BPF_FORCE_COMPAT", "1", 1);
	trace_nested();
	trace_cli_nested();
}

/* ---- a pid reused after its process exited ---- */

/* the next process forked in this namespace gets <pid> (root: ns_last_pid) */
static void next_pid_is(pid_t pid)
{
	FILE *f = fopen("/proc/sys/kernel/ns_last_pid", "w");

	cr_assert_not_null(f, "ns_last_pid: %s", strerror(errno));
	fprintf(f, "%d", pid - 1);
	cr_assert_eq(fclose(f), 0);
}

static void trace_reused(void)
{
	char *first[] = { "syscalls", "--wait", "--getppid", "1000", NULL };
	char *second[] = { "syscalls", "--getppid", "777", NULL };
	struct PmuTraceAttr a = { .numPid = 1 };
	struct PmuTraceData *d = NULL;
	struct tu_proc w, b;
	int pid, pd, n, i, getppid = 0;
	struct ns_counts c;

	w = tu_spawn_v(first, 0);
	pid = w.pid;
	a.pidList = &pid;
	pd = PmuTraceOpen(TRACE_SYS_CALL, &a);
	cr_assert_gt(pd, 0, "PmuTraceOpen: %d %s", Perrorno(), Perror());
	cr_assert_eq(PmuTraceEnable(pd), 0, "%s", Perror());
	tu_go(&w);
	cr_assert_eq(tu_wait(&w), 0);
	next_pid_is(pid);
	b = tu_spawn_v(second, 0);
	cr_assert_eq(b.pid, pid, "the pid was not reused (%d, not %d)", b.pid, pid);
	cr_assert_eq(tu_wait(&b), 0);
	cr_assert_eq(PmuTraceDisable(pd), 0);
	c = ns_summary(pd, pid);
	cr_assert_eq(c.getppid, 1000, "the new process of pid %d was traced too", pid);
	n = PmuTraceRead(pd, &d);
	for (i = 0; i < n; i++)
		getppid += !strcmp(d[i].funcs, "getppid");
	cr_assert_eq(getppid, 1000);
	PmuTraceDataFree(d);
	tt_finish(pd);
}

Test(pidns_in, pid_reused_after_exit)
{
	char *evts[] = { "cpu-clock" };
	char *burn[] = { "cpuburn", "--ms", "300", "--wait", NULL };
	char *other[] = { "syscalls", "--getppid", "300000", NULL };
	struct PmuAttr a = { .evtList = evts,
			     .numEvt = 1,
			     .useFreq = 1,
			     .freq = 999,
			     .callStack = 1,
			     .symbolMode = RESOLVE_ELF,
			     .numPid = 1 };
	struct PmuData *d = NULL;
	struct tu_proc w, b;
	uint64_t all, hot;
	int pid, pd, n, i;

	INNER();
	trace_reused();
	setenv("KPERF_BPF_FORCE_COMPAT", "1", 1);
	trace_reused();

	/* sampling: the samples of the new process are not the old one's */
	w = tu_spawn_v(burn, 0);
	pid = w.pid;
	a.pidList = &pid;
	pd = PmuOpen(SAMPLING, &a);
	cr_assert_gt(pd, 0, "PmuOpen: %d %s", Perrorno(), Perror());
	cr_assert_eq(PmuEnable(pd), 0, "%s", Perror());
	tu_go(&w);
	cr_assert_eq(tu_wait(&w), 0);
	next_pid_is(pid);
	b = tu_spawn_v(other, 0);
	cr_assert_eq(b.pid, pid);
	cr_assert_eq(tu_wait(&b), 0);
	PmuDisable(pd);
	n = PmuRead(pd, &d);
	cr_assert_gt(n, 0, "PmuRead: %s", Perror());
	for (i = 0; i < n; i++)
		cr_assert_str_eq(d[i].comm, "cpuburn", "a sample of the process that took pid %d",
				 pid);
	ns_leaf_share(d, n, "hot_loop", &all, &hot);
	cr_assert_geq(hot * 10, all * 8, "hot_loop is the leaf of %lu of %lu samples", hot, all);
	PmuDataFree(d);
	PmuClose(pd);
	cr_assert_eq(tu_bpf_fds(), 0);
}

/* ---- what this namespace does not contain ---- */

/* KPERF_PIDNS_HOSTPID: a process of the host (busy calling getppid), outside this namespace */
static int host_pid(void)
{
	const char *v = getenv("KPERF_PIDNS_HOSTPID");

	cr_assert(v && atoi(v) > 0, "KPERF_PIDNS_HOSTPID is not set");
	return atoi(v);
}

static void assert_not_here(int pid)
{
	char want[512];

	snprintf(want, sizeof(want),
		 "no process or thread with pid %d exists in this PID namespace (%s, where "
		 "kperf-bpf runs): pids are the namespace's, and a process outside it cannot be a "
		 "target from here",
		 pid, kp_pidns_name());
	cr_assert_eq(Perrorno(), LIBPERF_ERR_INVALID_PIDLIST, "%d %s", Perrorno(), Perror());
	cr_assert_str_eq(Perror(), want);
}

Test(pidns_in, target_outside_the_namespace)
{
	char *evts[] = { "cpu-clock" };
	int pid, pids[1], status;
	struct PmuTraceAttr ta = { .pidList = pids, .numPid = 1 };
	struct PmuAttr pa = { .evtList = evts, .numEvt = 1, .pidList = pids, .numPid = 1 };
	char cmd[512], *out;

	INNER(); /* before host_pid(): its variable is set only inside */
	pid = pids[0] = host_pid();
	cr_assert_neq(kill(pid, 0), 0, "pid %d is in this namespace too", pid);
	cr_assert_eq(PmuTraceOpen(TRACE_SYS_CALL, &ta), -1);
	assert_not_here(pid);
	cr_assert_eq(PmuOpen(COUNTING, &pa), -1);
	assert_not_here(pid);
	cr_assert_eq(PmuOpen(SAMPLING, &pa), -1);
	assert_not_here(pid);
	snprintf(cmd, sizeof(cmd), "%s/bin/kperf-bpf trace -p %d 2>&1", tu_build(), pid);
	out = tu_run(cmd, &status);
	cr_assert_eq(status, 1);
	cr_assert(strstr(out, "exists in this PID namespace"), "%s", out);
	free(out);
	cr_assert_eq(tu_bpf_fds(), 0);
}

/* Everything, from in here: the host's getppid loop is pid -1, never a pid of this namespace */
Test(pidns_in, every_process_from_inside)
{
	const char *funcs[] = { "getppid" };
	struct PmuTraceAttr a = { .funcs = funcs, .numFuncs = 1 };
	struct PmuTraceSummary *s = NULL;
	struct PmuTraceData *d = NULL;
	char *argv[] = { "syscalls", "--wait", NULL };
	uint64_t outside = 0, mine = 0, out_records = 0;
	struct tu_proc w;
	int pd, n, i, pid;

	INNER();
	(void)host_pid();
	w = tu_spawn_v(argv, 0);
	pid = w.pid;
	pd = PmuTraceOpen(TRACE_SYS_CALL, &a);
	cr_assert_gt(pd, 0, "PmuTraceOpen: %d %s", Perrorno(), Perror());
	cr_assert_eq(PmuTraceEnable(pd), 0, "%s", Perror());
	tu_go(&w);
	cr_assert_eq(tu_wait(&w), 0);
	cr_assert_eq(PmuTraceDisable(pd), 0);
	n = PmuTraceReadSummary(pd, &s);
	cr_assert_gt(n, 0, "%s", Perror());
	for (i = 0; i < n; i++) {
		if (s[i].pid == -1) {
			cr_assert_str_eq(s[i].comm, "[outside namespace]");
			outside += s[i].calls;
		} else {
			/* nothing else calls getppid in this namespace */
			cr_assert_eq(s[i].pid, pid, "getppid of pid %d (%s)", s[i].pid, s[i].comm);
			mine += s[i].calls;
		}
	}
	cr_assert_eq(mine, 50000);
	cr_assert_gt(outside, 0, "the host's getppid loop is counted, as pid -1");
	PmuTraceSummaryFree(s);
	n = PmuTraceRead(pd, &d);
	for (i = 0; i < n; i++) {
		cr_assert(d[i].pid == -1 || d[i].pid == pid, "a record of pid %d", d[i].pid);
		if (d[i].pid == -1) {
			cr_assert_eq(d[i].tid, -1);
			cr_assert_str_eq(d[i].comm, "[outside namespace]");
			out_records++;
		}
	}
	cr_assert_gt(out_records, 0);
	PmuTraceDataFree(d);
	tt_finish(pd);
}

/* Sampling every CPU from in here: the host's samples are pid -1, with kernel symbols only */
Test(pidns_in, sampling_every_cpu_from_inside)
{
	char *evts[] = { "cpu-clock" };
	char *argv[] = { "cpuburn", "--ms", "400", NULL };
	struct PmuAttr a = { .evtList = evts,
			     .numEvt = 1,
			     .useFreq = 1,
			     .freq = 999,
			     .callStack = 1,
			     .symbolMode = RESOLVE_ELF };
	struct PmuData *d = NULL;
	uint64_t outside = 0, mine = 0, hot = 0;
	struct tu_proc w;
	struct Stack *st;
	int pd, n, i, pid;

	INNER();
	(void)host_pid();
	pd = PmuOpen(SAMPLING, &a);
	cr_assert_gt(pd, 0, "PmuOpen: %d %s", Perrorno(), Perror());
	cr_assert_eq(PmuEnable(pd), 0, "%s", Perror());
	/* started now: its mappings come with the side band (every process's, here) */
	w = tu_spawn_v(argv, 0);
	pid = w.pid;
	cr_assert_eq(tu_wait(&w), 0);
	PmuDisable(pd);
	n = PmuRead(pd, &d);
	cr_assert_gt(n, 0, "PmuRead: %s", Perror());
	for (i = 0; i < n; i++) {
		if (d[i].pid == -1) {
			cr_assert_eq(d[i].tid, -1);
			cr_assert_str_eq(d[i].comm, "[outside namespace]");
			/* its user frames are not looked up in any process of here; kernel
			 * frames are the kernel's, its modules' ([ext4]) and BPF programs'
			 * ([bpf]: a tracer someone else runs meanwhile) */
			for (st = d[i].stack; st; st = st->next)
				cr_assert((st->symbol->module[0] == '[' &&
					   strcmp(st->symbol->module, "[vdso]")) ||
						  !strcmp(st->symbol->symbolName, "[unknown]"),
					  "a user frame of a process out of sight: %s in %s",
					  st->symbol->symbolName, st->symbol->module);
			outside += d[i].count;
		} else if (d[i].pid == pid) {
			if (strcmp(d[i].comm, "cpuburn"))
				continue; /* before its exec: still this test's image */
			mine += d[i].count;
			hot += d[i].stack && d[i].stack->symbol &&
			       !strcmp(d[i].stack->symbol->symbolName, "hot_loop");
		} else {
			cr_assert(d[i].pid >= 0 && d[i].pid < 1000 && kill(d[i].pid, 0) == 0,
				  "pid %d (%s) is not a process of this namespace", d[i].pid,
				  d[i].comm);
		}
	}
	cr_assert_gt(outside, 0, "the host's busy process is sampled, as pid -1");
	cr_assert_gt(mine, 50);
	/* resolved as its own: its start-up (long under an emulator) aside, it burns */
	cr_assert_gt(hot * 2, mine, "hot_loop is the leaf of %lu of %lu", hot, mine);
	PmuDataFree(d);
	PmuClose(pd);
	cr_assert_eq(tu_bpf_fds(), 0);
}

/* ---- /proc of another namespace (run without --mount-proc) ---- */

Test(pidns_in, proc_of_another_namespace)
{
	char *evts[] = { "cpu-clock" };
	int self = getpid();
	struct PmuTraceAttr ta = { .pidList = &self, .numPid = 1 };
	struct PmuTraceAttr all = { 0 };
	struct PmuAttr pa = { .evtList = evts, .numEvt = 1, .pidList = &self, .numPid = 1 };
	struct PmuAttr sw = { .evtList = evts, .numEvt = 1 };
	char want[512];

	INNER();
	snprintf(want, sizeof(want),
		 "/proc belongs to another PID namespace than kperf-bpf's (%s): this process is %d "
		 "here, and another pid there; its pids would name other processes. Mount the "
		 "namespace's own /proc (unshare --pid --fork --mount-proc, or mount -t proc proc "
		 "/proc in a new mount namespace)",
		 kp_pidns_name(), self);
	cr_assert_eq(PmuTraceOpen(TRACE_SYS_CALL, &ta), -1);
	cr_assert_eq(Perrorno(), KPERF_ERR_PROC_PIDNS, "%d %s", Perrorno(), Perror());
	cr_assert_str_eq(Perror(), want);
	cr_assert_eq(PmuTraceOpen(TRACE_SYS_CALL, &all), -1, "every process");
	cr_assert_eq(Perrorno(), KPERF_ERR_PROC_PIDNS);
	cr_assert_eq(PmuOpen(COUNTING, &pa), -1);
	cr_assert_eq(Perrorno(), KPERF_ERR_PROC_PIDNS);
	cr_assert_eq(PmuOpen(SAMPLING, &sw), -1, "sampling every cpu");
	cr_assert_eq(Perrorno(), KPERF_ERR_PROC_PIDNS);
	cr_assert_str_eq(Perror(), want);
	cr_assert_eq(tu_bpf_fds(), 0);
}
