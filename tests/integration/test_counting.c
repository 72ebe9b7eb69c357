/*
 * test_counting.c - PmuOpen(COUNTING): counts agree with what the workloads did, deltas
 * per read, per-cpu and per-thread records, groups, PmuCollect/PmuStop, the data
 * lifecycle, and every error a caller can provoke.
 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>
#include <sys/stat.h>
#include <cjson/cJSON.h>

#include "kperf/kperf.h"
#include "testutil.h"

static uint64_t sum_event(const struct PmuData *d, int n, const char *evt)
{
	uint64_t s = 0;
	int i;

	for (i = 0; i < n; i++)
		if (!strcmp(d[i].evt, evt))
			s += d[i].count;
	return s;
}

static unsigned long long read_cpu_ns(struct tu_proc *p)
{
	char buf[128] = "";
	ssize_t n = read(p->out_fd, buf, sizeof(buf) - 1);
	unsigned long long ns = 0;

	if (n > 0) {
		buf[n] = '\0';
		sscanf(buf, "cpu_ns=%llu", &ns);
	}
	close(p->out_fd);
	return ns;
}

Test(counting, task_clock_matches_cpu_time)
{
	char *argv[] = { "cpuburn", "--ms", "400", "--threads", "2", "--wait", NULL };
	char *evts[] = { "task-clock", "context-switches" };
	struct tu_proc w = tu_spawn_v(argv, 1);
	struct PmuAttr a = { .evtList = evts, .numEvt = 2 };
	struct PmuData *d;
	int pids[] = { w.pid }, pd, n, i;
	unsigned long long cpu_ns;
	uint64_t tc;

	a.pidList = pids;
	a.numPid = 1;
	pd = PmuOpen(COUNTING, &a);
	cr_assert_gt(pd, 0, "%s", Perror());
	cr_assert_eq(PmuEnable(pd), 0);
	tu_go(&w);
	cpu_ns = read_cpu_ns(&w);
	tu_wait(&w);
	PmuDisable(pd);
	n = PmuRead(pd, &d);
	cr_assert_geq(n, 2, "%s", Perror());
	tc = sum_event(d, n, "task-clock");
	cr_assert_gt(cpu_ns, 700000000ULL, "the workload burned %llu ns", cpu_ns);
	cr_assert(tc > cpu_ns * 0.9 && tc < cpu_ns * 1.1,
		  "task-clock %lu ns vs the process's own CPU time %llu ns", tc, cpu_ns);
	for (i = 0; i < n; i++) {
		cr_assert_eq(d[i].pid, pids[0]);
		cr_assert_eq(d[i].cpu, -1);
		cr_assert_null(d[i].cpuTopo, "a per-thread count has no cpu");
		cr_assert_float_eq(d[i].countPercent, 1.0, 1e-9, "software events never multiplex");
		cr_assert_eq(d[i].groupId, -1);
	}
	PmuDataFree(d);
	PmuClose(pd);
}

Test(counting, page_faults_at_least_the_pages_touched)
{
	char *evts[] = { "page-faults", "minor-faults" };
	struct tu_proc w = tu_spawn("pages", "--pages", "5000", "--wait", NULL);
	struct PmuAttr a = { .evtList = evts, .numEvt = 2 };
	struct PmuData *d;
	int pids[] = { w.pid }, pd, n;

	a.pidList = pids;
	a.numPid = 1;
	pd = PmuOpen(COUNTING, &a);
	cr_assert_gt(pd, 0, "%s", Perror());
	PmuEnable(pd);
	tu_go(&w);
	cr_assert_eq(tu_wait(&w), 0);
	n = PmuRead(pd, &d);
	cr_assert_geq(sum_event(d, n, "page-faults"), 5000);
	cr_assert_lt(sum_event(d, n, "page-faults"), 5500, "faults of the touched pages only");
	cr_assert_geq(sum_event(d, n, "minor-faults"), 5000);
	PmuDataFree(d);
	PmuClose(pd);
}

Test(counting, reads_are_deltas)
{
	char *evts[] = { "cpu-clock" };
	int cpus[] = { 0 };
	struct PmuAttr a = { .evtList = evts, .numEvt = 1, .cpuList = cpus, .numCpu = 1 };
	struct PmuData *d1, *d2;
	int pd = PmuOpen(COUNTING, &a), n1, n2;

	cr_assert_gt(pd, 0, "%s", Perror());
	PmuEnable(pd);
	tu_sleep_ms(200);
	n1 = PmuRead(pd, &d1);
	tu_sleep_ms(200);
	n2 = PmuRead(pd, &d2);
	cr_assert_eq(n1, 1);
	cr_assert_eq(n2, 1);
	cr_assert_eq(d1[0].cpu, 0);
	cr_assert_eq(d1[0].pid, -1);
	/* cpu-clock on a cpu runs all the time: each read is ~200 ms, not cumulative */
	cr_assert(d1[0].count > 150000000 && d1[0].count < 400000000, "%lu", d1[0].count);
	cr_assert(d2[0].count > 150000000 && d2[0].count < 400000000, "%lu", d2[0].count);
	cr_assert_gt(d2[0].ts, d1[0].ts);
	PmuDataFree(d1);
	PmuDataFree(d2);
	PmuClose(pd);
}

Test(counting, system_wide_has_one_record_per_cpu_and_event)
{
	char *evts[] = { "cpu-clock", "context-switches" };
	struct PmuAttr a = { .evtList = evts, .numEvt = 2 };
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	struct PmuData *d;
	int pd = PmuOpen(COUNTING, &a), n, i;

	cr_assert_gt(pd, 0, "%s", Perror());
	PmuEnable(pd);
	tu_sleep_ms(100);
	n = PmuRead(pd, &d);
	cr_assert_eq(n, 2 * ncpu);
	for (i = 0; i < n; i++) {
		cr_assert_geq(d[i].cpu, 0);
		cr_assert_lt(d[i].cpu, ncpu);
		cr_assert_not_null(d[i].cpuTopo);
		cr_assert_eq(d[i].cpuTopo->coreId, d[i].cpu);
		if (access("/sys/devices/system/node/node1", F_OK)) /* a single numa node */
			cr_assert_eq(d[i].cpuTopo->numaId, 0);
	}
	PmuDataFree(d);
	PmuClose(pd);
}

Test(counting, groups_keep_their_id)
{
	char *evts[] = { "task-clock", "context-switches", "page-faults" };
	struct EvtAttr groups[] = { { 3 }, { 3 }, { -1 } };
	struct PmuAttr a = { .evtList = evts, .numEvt = 3, .evtAttr = groups, .numEvtAttr = 3 };
	struct tu_proc w = tu_spawn("pages", "--pages", "100", "--wait", NULL);
	struct PmuData *d;
	int pids[] = { w.pid }, pd, n, i;

	a.pidList = pids;
	a.numPid = 1;
	pd = PmuOpen(COUNTING, &a);
	cr_assert_gt(pd, 0, "%s", Perror());
	PmuEnable(pd);
	tu_go(&w);
	tu_wait(&w);
	n = PmuRead(pd, &d);
	cr_assert_eq(n, 3);
	for (i = 0; i < n; i++)
		cr_assert_eq(d[i].groupId, strcmp(d[i].evt, "page-faults") ? 3 : -1);
	cr_assert_gt(sum_event(d, n, "task-clock"), 0, "the group member follows its leader");
	cr_assert_geq(sum_event(d, n, "page-faults"), 100);
	PmuDataFree(d);
	PmuClose(pd);
}

Test(counting, children_are_counted)
{
	char *evts[] = { "page-faults" };
	struct tu_proc w = tu_spawn("pages", "--pages", "2000", "--children", "3", "--wait", NULL);
	struct PmuAttr a = { .evtList = evts, .numEvt = 1, .includeNewFork = 1 };
	struct PmuData *d;
	int pids[] = { w.pid }, pd, n;
	uint64_t faults;

	a.pidList = pids;
	a.numPid = 1;
	pd = PmuOpen(COUNTING, &a);
	cr_assert_gt(pd, 0, "%s", Perror());
	PmuEnable(pd);
	tu_go(&w);
	cr_assert_eq(tu_wait(&w), 0);
	n = PmuRead(pd, &d);
	faults = sum_event(d, n, "page-faults");
	PmuDataFree(d);
	PmuClose(pd);
	/* 4 processes touching 2000 pages each: only counting the children gets there */
	cr_assert_geq(faults, 8000, "%lu faults", faults);
	cr_assert_lt(faults, 9000, "%lu faults", faults);
}

static void *stop_later(void *arg)
{
	tu_sleep_ms(300);
	PmuStop(*(int *)arg);
	return NULL;
}

Test(counting, collect_and_stop)
{
	char *evts[] = { "cpu-clock" };
	int cpus[] = { 0 };
	struct PmuAttr a = { .evtList = evts, .numEvt = 1, .cpuList = cpus, .numCpu = 1 };
	struct PmuData *d;
	pthread_t t;
	int pd = PmuOpen(COUNTING, &a), n;

	cr_assert_gt(pd, 0, "%s", Perror());
	cr_assert_eq(PmuCollect(pd, 200, 100), 0, "%s", Perror());
	n = PmuRead(pd, &d);
	cr_assert_eq(n, 1);
	cr_assert(d[0].count > 150000000 && d[0].count < 400000000, "%lu", d[0].count);
	PmuDataFree(d);
	/* a long collection, stopped from another thread after 300 ms */
	pthread_create(&t, NULL, stop_later, &pd);
	cr_assert_eq(PmuCollect(pd, 20000, 100), 0);
	pthread_join(t, NULL);
	n = PmuRead(pd, &d);
	cr_assert(d[0].count > 200000000 && d[0].count < 2000000000, "%lu", d[0].count);
	PmuDataFree(d);
	PmuClose(pd);
}

Test(counting, data_lifecycle)
{
	char *evts[] = { "cpu-clock" };
	struct PmuAttr a = { .evtList = evts, .numEvt = 1 };
	struct PmuData *d, *acc = NULL, fake[2];
	int pd = PmuOpen(COUNTING, &a), n;
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);

	cr_assert_gt(pd, 0, "%s", Perror());
	PmuEnable(pd);
	n = PmuRead(pd, &d);
	cr_assert_eq(PmuAppendData(d, &acc), n);
	cr_assert_eq(PmuAppendData(d, &acc), 2 * n);
	PmuClose(pd);
	PmuDataFree(d);
	PmuDataFree(d);
	/* the appended copy owns its strings: the originals are gone */
	cr_assert_str_eq(acc[2 * ncpu - 1].evt, "cpu-clock");
	memset(fake, 0, sizeof(fake));
	cr_assert_eq(PmuAppendData(fake, &acc), -1);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_INVALID_PMU_DATA);
	PmuDataFree(fake); /* not ours: ignored */
	PmuDataFree(acc);
	cr_assert_eq(PmuRead(pd, &d), -1, "read after close");
	cr_assert_eq(Perrorno(), LIBPERF_ERR_INVALID_PD);
}

/* ---- errors ---- */

static int open_one(enum PmuTaskType type, const char *evt, int *pids, unsigned npid, int *cpus,
		    unsigned ncpu)
{
	char *evts[] = { (char *)evt };
	struct PmuAttr a = { .evtList = evts,
			     .numEvt = 1,
			     .pidList = pids,
			     .numPid = npid,
			     .cpuList = cpus,
			     .numCpu = ncpu };

	return PmuOpen(type, &a);
}

Test(counting_errors, each_bad_input_has_its_code)
{
	int badpid[] = { 999999999 }, badcpu[] = { 4096 }, anycpu[] = { -1 }, self[] = { 0 };
	struct PmuAttr empty = { 0 };
	char *evts[] = { "cpu-clock" };
	struct PmuAttr nopids = { .evtList = evts, .numEvt = 1, .numPid = 2 };
	int pd;

	cr_assert_eq(open_one(COUNTING, "cpu-clok", NULL, 0, NULL, 0), -1);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_INVALID_EVENT);
	cr_assert(strstr(Perror(), "did you mean cpu-clock"), "%s", Perror());
	/* a hardware event without hardware counters: perf_event_open's ENOENT, which libkperf
	 * reports as LIBPERF_ERR_OPEN_INVALID_FILE */
	if (open_one(COUNTING, "cycles", NULL, 0, NULL, 0) == -1) {
		cr_assert_eq(Perrorno(), LIBPERF_ERR_OPEN_INVALID_FILE);
		cr_assert(strstr(Perror(), "cycles"), "%s", Perror());
	}
	cr_assert_eq(open_one(COUNTING, "nosuchpmu/x/", NULL, 0, NULL, 0), -1);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_INVALID_EVENT);
	/* libkperf checks the pid list as a list: LIBPERF_ERR_INVALID_PIDLIST */
	cr_assert_eq(open_one(COUNTING, "cpu-clock", badpid, 1, NULL, 0), -1);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_INVALID_PIDLIST);
	cr_assert(strstr(Perror(), "999999999"), "%s", Perror());
	cr_assert_eq(PmuOpen(COUNTING, &nopids), -1);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_INVALID_PIDLIST);
	cr_assert_str_eq(Perror(), "pidList is NULL but numPid is 2");
	cr_assert_eq(open_one(COUNTING, "cpu-clock", NULL, 0, badcpu, 1), -1);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_INVALID_CPULIST);
	/* the cpus are checked before the pids, and both before the events */
	cr_assert_eq(open_one(COUNTING, "cpu-clok", badpid, 1, badcpu, 1), -1);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_INVALID_CPULIST);
	cr_assert_eq(open_one(COUNTING, "cpu-clok", badpid, 1, NULL, 0), -1);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_INVALID_PIDLIST);
	/* -1 in the cpu list is any cpu, pid 0 the calling process, as in libkperf */
	pd = open_one(COUNTING, "cpu-clock", self, 1, anycpu, 1);
	cr_assert_gt(pd, 0, "%s", Perror());
	PmuClose(pd);
	cr_assert_eq(PmuOpen(COUNTING, &empty), -1);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_INVALID_EVTLIST);
	cr_assert_eq(PmuOpen(COUNTING, NULL), -1);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_NULL_POINTER);
	cr_assert_eq(PmuOpen(SPE_SAMPLING, &empty), -1);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_SPE_UNAVAIL);
	cr_assert_eq(PmuOpen((enum PmuTaskType)9, &empty), -1);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_INVALID_TASK_TYPE);
	cr_assert_eq(PmuEnable(4242), -1);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_INVALID_PD);
	/* PmuCollect checks the handle first, then the times */
	cr_assert_eq(PmuCollect(4242, -5, 10), -1);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_INVALID_PD);
	pd = open_one(COUNTING, "cpu-clock", NULL, 0, NULL, 0);
	cr_assert_gt(pd, 0, "%s", Perror());
	cr_assert_eq(PmuCollect(pd, 100, 10), -1);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_INVALID_TIME);
	cr_assert_eq(PmuCollect(pd, -5, 100), -1);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_INVALID_TIME);
	/* 0 ms collects nothing long, and is no error (libkperf) */
	cr_assert_eq(PmuCollect(pd, 0, 100), 0, "%s", Perror());
	PmuClose(pd);
	PmuClose(4242);
	PmuStop(4242);
}

/* libkperf's checks of PmuOpen after the cpu and pid lists, each with its code */
Test(counting_errors, attribute_checks_in_libkperf_order)
{
	char *evts[] = { "cpu-clock" };
	char *cg[] = { "kperf-no-such-cgroup" };
	int self[] = { 0 };
	struct PmuAttr a;

	a = (struct PmuAttr){ .evtList = NULL, .numEvt = 1 };
	cr_assert_eq(PmuOpen(COUNTING, &a), -1);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_INVALID_EVTLIST);
	cr_assert_str_eq(Perror(), "evtList is NULL but numEvt is 1");
	a = (struct PmuAttr){ .evtList = evts, .numEvt = 1, .numEvtAttr = 1 };
	cr_assert_eq(PmuOpen(COUNTING, &a), -1);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_INVALID_EVTATTR);
	a = (struct PmuAttr){
		.evtList = evts, .numEvt = 1, .evtAttr = &(struct EvtAttr){ -2 }, .numEvtAttr = 1
	};
	cr_assert_eq(PmuOpen(COUNTING, &a), -1);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_INVALID_EVTATTR);
	a = (struct PmuAttr){ .evtList = evts,
			      .numEvt = 1,
			      .pidList = self,
			      .numPid = 1,
			      .cgroupNameList = cg,
			      .numCgroup = 1 };
	cr_assert_eq(PmuOpen(COUNTING, &a), -1);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_INVALID_CGROUP_LIST);
	a = (struct PmuAttr){ .evtList = evts, .numEvt = 1, .numCgroup = 1 };
	cr_assert_eq(PmuOpen(COUNTING, &a), -1);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_INVALID_CGROUP_LIST);
	a = (struct PmuAttr){ .evtList = evts, .numEvt = 1, .cgroupNameList = cg, .numCgroup = 1 };
	cr_assert_eq(PmuOpen(COUNTING, &a), -1);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_OPEN_INVALID_FILE);
	cr_assert(strstr(Perror(), "kperf-no-such-cgroup"), "%s", Perror());
	a = (struct PmuAttr){ .evtList = evts,
			      .numEvt = 1,
			      .branchSampleFilter = KPERF_SAMPLE_BRANCH_ANY };
	cr_assert_eq(PmuOpen(COUNTING, &a), -1);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_BRANCH_JUST_SUPPORT_SAMPLING);
	a = (struct PmuAttr){ .evtList = evts, .numEvt = 1, .enableOnExec = 1 };
	cr_assert_eq(PmuOpen(COUNTING, &a), -1);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_NOT_SUPPORT_EXEC_ON);
	/* SPE's own checks come before the hardware's absence */
	a = (struct PmuAttr){ .evtAttr = &(struct EvtAttr){ 1 } };
	cr_assert_eq(PmuOpen(SPE_SAMPLING, &a), -1);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_INVALID_GROUP_SPE);
	a = (struct PmuAttr){ .minLatency = 4096 };
	cr_assert_eq(PmuOpen(SPE_SAMPLING, &a), -1);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_INVALID_MIN_LATENCY);
	a = (struct PmuAttr){ .evFilter = (enum SpeEventFilter)3 };
	cr_assert_eq(PmuOpen(SPE_SAMPLING, &a), -1);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_INVALID_EVT_FILTER);
	a = (struct PmuAttr){ .dataFilter = (enum SpeFilter)(1UL << 40) };
	cr_assert_eq(PmuOpen(SPE_SAMPLING, &a), -1);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_INVALID_DATA_FILTER);
	a = (struct PmuAttr){ .enableOnExec = 1 };
	cr_assert_eq(PmuOpen(SPE_SAMPLING, &a), -1);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_NOT_SUPPORT_EXEC_ON);
	cr_assert_eq(tu_bpf_fds(), 0);
}

Test(counting_errors, sample_rate_above_the_kernel_limit)
{
	char *evts[] = { "cpu-clock" };
	struct PmuAttr a = { .evtList = evts, .numEvt = 1, .useFreq = 1 };
	long max = 0;
	FILE *f = fopen("/proc/sys/kernel/perf_event_max_sample_rate", "r");

	cr_assert(f && fscanf(f, "%ld", &max) == 1);
	fclose(f);
	a.freq = (unsigned)max + 1;
	cr_assert_eq(PmuOpen(SAMPLING, &a), -1);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_INVALID_SAMPLE_RATE);
	cr_assert(strstr(Perror(), "perf_event_max_sample_rate"), "%s", Perror());
}

struct stopper {
	int pd;
	atomic_bool done;
};

/* PmuStop until the collection has returned: a stop sent before PmuCollect starts is
 * forgotten by it (as in libkperf), so one PmuStop alone could be lost */
static void *stop_until_done(void *arg)
{
	struct stopper *s = arg;

	while (!atomic_load(&s->done)) {
		usleep(50000);
		PmuStop(s->pd);
	}
	return NULL;
}

/* libkperf: -1 without pids collects until PmuStop */
Test(counting, collect_until_pmustop_without_pids)
{
	char *evts[] = { "cpu-clock" };
	struct PmuAttr a = { .evtList = evts, .numEvt = 1 };
	struct stopper s = { .pd = PmuOpen(COUNTING, &a) };
	struct PmuData *d = NULL;
	pthread_t th;

	cr_assert_gt(s.pd, 0, "%s", Perror());
	atomic_init(&s.done, false);
	cr_assert_eq(pthread_create(&th, NULL, stop_until_done, &s), 0);
	cr_assert_eq(PmuCollect(s.pd, -1, 100), 0, "%s", Perror());
	atomic_store(&s.done, true);
	pthread_join(th, NULL);
	cr_assert_gt(PmuRead(s.pd, &d), 0, "%s", Perror());
	PmuDataFree(d);
	PmuClose(s.pd);
}

/* ---- the command ---- */

Test(stat_cli, json_counts_of_a_command)
{
	char cmd[512], *out;
	cJSON *doc, *ev;
	int status, seen = 0;

	snprintf(cmd, sizeof(cmd),
		 "%s/bin/kperf-bpf stat -e page-faults,task-clock,cycles --format json -- "
		 "%s/workloads/pages --pages 3000",
		 tu_build(), tu_build());
	out = tu_run(cmd, &status);
	cr_assert_eq(status, 0);
	doc = cJSON_Parse(out);
	cr_assert_not_null(doc, "%s", out);
	cJSON_ArrayForEach(ev, cJSON_GetObjectItem(doc, "events"))
	{
		const char *name = cJSON_GetObjectItem(ev, "event")->valuestring;

		if (!strcmp(name, "page-faults")) {
			cr_assert_geq(cJSON_GetObjectItem(ev, "count")->valuedouble, 3000);
			seen++;
		}
		if (!strcmp(name, "task-clock")) {
			cr_assert_gt(cJSON_GetObjectItem(ev, "count")->valuedouble, 0);
			seen++;
		}
	}
	cr_assert_eq(seen, 2);
	cJSON_Delete(doc);
	free(out);
	snprintf(cmd, sizeof(cmd), "%s/bin/kperf-bpf stat -e nosuch -- true 2>&1", tu_build());
	out = tu_run(cmd, &status);
	cr_assert_eq(status, 1);
	cr_assert(strstr(out, "unknown event 'nosuch'"), "%s", out);
	free(out);
}

Test(counting, a_cgroup_counts_only_its_processes)
{
	char cg[256], procs[300], *name;
	/* long enough that the process's exit, which the cgroup counts and cpu_ns cannot,
	 * stays within the tolerance under an emulator too (make test-kernels) */
	char *in_argv[] = { "cpuburn", "--ms", "800", "--wait", NULL };
	char *evts[] = { "task-clock" }, *cgs[1];
	struct PmuAttr a = { .evtList = evts, .numEvt = 1, .cgroupNameList = cgs, .numCgroup = 1 };
	struct tu_proc in, out;
	struct PmuData *d;
	unsigned long long in_ns;
	uint64_t tc;
	FILE *f;
	int pd, n;

	snprintf(cg, sizeof(cg), "/sys/fs/cgroup/unified/kperf-count-%d", getpid());
	if (access("/sys/fs/cgroup/unified", F_OK))
		snprintf(cg, sizeof(cg), "/sys/fs/cgroup/kperf-count-%d", getpid());
	if (mkdir(cg, 0755))
		cr_skip_test("cannot create a cgroup v2 directory: %s", strerror(errno));
	name = strrchr(cg, '/') + 1; /* relative to the cgroup2 mount */
	cgs[0] = name;
	in = tu_spawn_v(in_argv, 1);
	out = tu_spawn("cpuburn", "--ms", "300", "--wait", NULL);
	snprintf(procs, sizeof(procs), "%s/cgroup.procs", cg);
	f = fopen(procs, "w");
	cr_assert_not_null(f);
	fprintf(f, "%d\n", in.pid);
	fclose(f);
	pd = PmuOpen(COUNTING, &a);
	cr_assert_gt(pd, 0, "%s", Perror());
	PmuEnable(pd);
	tu_go(&in);
	tu_go(&out);
	in_ns = read_cpu_ns(&in);
	tu_wait(&in);
	tu_wait(&out);
	PmuDisable(pd);
	n = PmuRead(pd, &d);
	tc = sum_event(d, n, "task-clock");
	cr_assert_str_eq(d[0].cgroupName, name);
	cr_assert_eq(d[0].pid, -1);
	cr_assert(tc > in_ns * 0.9 && tc < in_ns * 1.1,
		  "cgroup task-clock %lu ns vs %llu ns of CPU inside it (the other process "
		  "burned as much outside)",
		  tc, in_ns);
	PmuDataFree(d);
	PmuClose(pd);
	rmdir(cg);
}

Test(stat_cli, system_wide_while_a_command_runs)
{
	char cmd[512], *out;
	double clock = -1, elapsed;
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	cJSON *doc, *ev;
	int status;

	snprintf(cmd, sizeof(cmd),
		 "%s/bin/kperf-bpf stat -a -e cpu-clock --format json -- sleep 0.5", tu_build());
	out = tu_run(cmd, &status);
	cr_assert_eq(status, 0, "%s", out);
	doc = cJSON_Parse(out);
	cr_assert_not_null(doc, "%s", out);
	cr_assert(strstr(cJSON_GetObjectItem(doc, "target")->valuestring, "system wide while"));
	elapsed = cJSON_GetObjectItem(doc, "elapsed_s")->valuedouble;
	cJSON_ArrayForEach(ev, cJSON_GetObjectItem(doc, "events"))
		clock = cJSON_GetObjectItem(ev, "count")->valuedouble;
	/* every cpu's clock runs while the command sleeps: ncpu x elapsed */
	cr_assert(clock > 0.9 * ncpu * elapsed * 1e9 && clock < 1.1 * ncpu * elapsed * 1e9,
		  "cpu-clock %.0f ns over %.3f s on %ld cpus", clock, elapsed, ncpu);
	cJSON_Delete(doc);
	free(out);
}
