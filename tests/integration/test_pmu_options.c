/*
 * test_pmu_options.c - PmuAttr's options with libkperf's semantics, end to end: BPF mode
 * counting (enableBpf) against the normal mode on the same process, following its children,
 * per cgroup with descendants; perThread sampling of the existing threads only (tracepoints
 * too); per-event EvtAttr periods and exclude flags (only the first numEvtAttr events take
 * one) and libkperf's precedence of PmuAttr's period; sampling groups; and every bad
 * combination with libkperf's code and a message.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <sys/stat.h>

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

/* the threads of <pid> now */
static int threads_of(pid_t pid, int *tids, int max)
{
	char path[64];
	struct dirent *de;
	int n = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	cr_assert_not_null(d);
	while ((de = readdir(d)))
		if (atoi(de->d_name) > 0 && n < max)
			tids[n++] = atoi(de->d_name);
	closedir(d);
	return n;
}

static bool in(const int *v, int n, int x)
{
	int i;

	for (i = 0; i < n; i++)
		if (v[i] == x)
			return true;
	return false;
}

/* ---- BPF mode ---- */

Test(bpf_mode, same_counts_as_the_normal_mode_children_included)
{
	/* 2 threads that exist at the open, 1 child forked after it: 3 workers, each 100
	 * naps of 1 ms (clock_nanosleep) then 150 ms of CPU */
	char *argv[] = { "naps", "--threads",  "2", "--naps", "100", "--burn-ms",
			 "150",	 "--children", "1", "--wait", NULL };
	char *evts[] = { "syscalls:sys_enter_clock_nanosleep", "task-clock", "context-switches" };
	struct tu_proc w = tu_spawn_v(argv, 0);
	struct PmuAttr a = { .evtList = evts, .numEvt = 3, .numPid = 1 };
	struct PmuData *dn, *db;
	int pids[] = { w.pid }, tids[16], ntids, pdn, pdb, nn, nb, i, before;
	uint64_t tc_n, tc_b, cs_n, cs_b;

	before = tu_bpf_prog_count();
	ntids = threads_of(w.pid, tids, 16);
	cr_assert_eq(ntids, 3, "main and 2 workers");
	a.pidList = pids;
	pdn = PmuOpen(COUNTING, &a);
	cr_assert_gt(pdn, 0, "%s", Perror());
	a.enableBpf = 1;
	pdb = PmuOpen(COUNTING, &a);
	cr_assert_gt(pdb, 0, "%d %s", Perrorno(), Perror());
	cr_assert_eq(PmuEnable(pdn), 0);
	cr_assert_eq(PmuEnable(pdb), 0, "%s", Perror());
	tu_go(&w);
	cr_assert_eq(tu_wait(&w), 0);
	PmuDisable(pdb);
	PmuDisable(pdn);
	nn = PmuRead(pdn, &dn);
	nb = PmuRead(pdb, &db);
	cr_assert_gt(nb, 0, "%s", Perror());
	/* an event the tasks cause themselves is charged exactly, whatever the timing */
	cr_assert_eq(sum_event(dn, nn, "syscalls:sys_enter_clock_nanosleep"), 300);
	cr_assert_eq(sum_event(db, nb, "syscalls:sys_enter_clock_nanosleep"), 300);
	/* time: what the CPUs' clocks advanced while a task was on them (BPF mode: its
	 * interrupts too) against the tasks' own clocks, at least the work done */
	tc_n = sum_event(dn, nn, "task-clock");
	tc_b = sum_event(db, nb, "task-clock");
	cs_n = sum_event(dn, nn, "context-switches");
	cs_b = sum_event(db, nb, "context-switches");
	cr_assert_gt(tc_n, 440000000ULL, "3 workers x 150 ms: %lu ns", tc_n);
	cr_assert_gt(tc_b, 440000000ULL, "3 workers x 150 ms in BPF mode: %lu ns", tc_b);
	cr_assert_geq(cs_n, 300, "3 x 100 naps: %lu switches", cs_n);
	cr_assert_geq(cs_b, 300, "3 x 100 naps: %lu switches in BPF mode", cs_b);
	for (i = 0; i < nb; i++) {
		cr_assert_eq(db[i].pid, pids[0]);
		cr_assert(in(tids, ntids, db[i].tid), "tid %d: a thread of the open", db[i].tid);
		cr_assert(db[i].cpu >= 0 && db[i].cpu < 4096);
		cr_assert_not_null(db[i].cpuTopo);
		cr_assert_eq(db[i].cpuTopo->coreId, db[i].cpu);
		cr_assert_gt(db[i].count, 0, "only what advanced is reported");
		cr_assert_float_eq(db[i].countPercent, 1.0, 1e-9);
		cr_assert_eq(db[i].groupId, -1);
		cr_assert_str_eq(db[i].comm, "naps");
	}
	PmuDataFree(db);
	PmuDataFree(dn);
	/* nothing advanced since: the next read is empty */
	nb = PmuRead(pdb, &db);
	cr_assert_eq(nb, 0, "%d records after the process exited", nb);
	PmuClose(pdb);
	PmuClose(pdn);
	cr_assert_eq(tu_bpf_fds(), 0, "BPF objects left open");
	cr_assert_eq(tu_bpf_prog_count_settle(before), before, "BPF programs left loaded");
}

Test(bpf_mode, reads_are_deltas_that_agree_with_the_normal_mode)
{
	char *argv[] = { "naps", "--naps", "0", "--burn-ms", "600", "--wait", NULL };
	char *evts[] = { "task-clock" };
	struct tu_proc w = tu_spawn_v(argv, 0);
	int pids[] = { w.pid }, pdn, pdb, r, n;
	struct PmuAttr a = { .evtList = evts, .numEvt = 1, .pidList = pids, .numPid = 1 };
	struct PmuData *d;
	uint64_t tn = 0, tb = 0;

	pdn = PmuOpen(COUNTING, &a);
	a.enableBpf = 1;
	pdb = PmuOpen(COUNTING, &a);
	cr_assert(pdn > 0 && pdb > 0, "%s", Perror());
	PmuEnable(pdn);
	PmuEnable(pdb);
	tu_go(&w);
	/* a CPU-bound thread rarely leaves its CPU: each read charges it up to now (the
	 * program runs on every CPU first). Read after the normal mode, the BPF mode's sum
	 * cannot be less than it (a CPU's clock runs at least as long as the task's own),
	 * and read before the next normal read, not more than that (with room for
	 * interrupts, which the CPU's clock counts and the task's does not); without the
	 * runs at the read it would stop at the thread's last switch */
	for (r = 0; r < 3; r++) {
		tu_sleep_ms(150);
		n = PmuRead(pdn, &d);
		tn += sum_event(d, n, "task-clock");
		PmuDataFree(d);
		cr_assert_leq(tb, tn + tn / 2, "read %d: BPF mode %lu ns, normal mode %lu ns after",
			      r, tb, tn);
		n = PmuRead(pdb, &d);
		tb += sum_event(d, n, "task-clock");
		PmuDataFree(d);
		cr_assert_geq(tb, tn, "read %d: BPF mode %lu ns, normal mode %lu ns before", r, tb,
			      tn);
	}
	cr_assert_gt(tn, 0);
	tu_wait(&w);
	PmuClose(pdb);
	PmuClose(pdn);
}

static int cgroup_dir(char *cg, size_t size, const char *name)
{
	const char *root = access("/sys/fs/cgroup/unified", F_OK) ? "/sys/fs/cgroup" :
								    "/sys/fs/cgroup/unified";

	snprintf(cg, size, "%s/%s", root, name);
	return mkdir(cg, 0755);
}

static void join_cgroup(const char *cg, pid_t pid)
{
	char procs[512];
	FILE *f;

	snprintf(procs, sizeof(procs), "%s/cgroup.procs", cg);
	f = fopen(procs, "w");
	cr_assert_not_null(f);
	fprintf(f, "%d\n", pid);
	fclose(f);
}

Test(bpf_mode, cgroups_count_their_processes_and_their_descendants)
{
	char top[256], sub[300], topname[64], subname[128];
	char *evts[] = { "syscalls:sys_enter_getppid", "task-clock" }, *cgs[2];
	struct PmuAttr a = {
		.evtList = evts, .numEvt = 2, .cgroupNameList = cgs, .numCgroup = 2, .enableBpf = 1
	};
	struct tu_proc inside, outside;
	struct PmuData *d;
	uint64_t g_top = 0, g_sub = 0, t_sub = 0;
	long ncpus = sysconf(_SC_NPROCESSORS_ONLN);
	int pd, n, i;

	snprintf(topname, sizeof(topname), "kperf-bpfcount-%d", getpid());
	snprintf(subname, sizeof(subname), "%s/sub", topname);
	if (cgroup_dir(top, sizeof(top), topname))
		cr_skip_test("cannot create a cgroup v2 directory: %s", strerror(errno));
	cr_assert_eq(cgroup_dir(sub, sizeof(sub), subname), 0);
	cgs[0] = topname;
	cgs[1] = subname;
	inside = tu_spawn("syscalls", "--getppid", "3000", "--writes", "0", "--fails", "0",
			  "--wait", NULL);
	outside = tu_spawn("syscalls", "--getppid", "2000", "--writes", "0", "--fails", "0",
			   "--wait", NULL);
	join_cgroup(sub, inside.pid);
	pd = PmuOpen(COUNTING, &a);
	cr_assert_gt(pd, 0, "%s", Perror());
	PmuEnable(pd);
	tu_go(&inside);
	tu_go(&outside);
	tu_wait(&inside);
	tu_wait(&outside);
	PmuDisable(pd);
	n = PmuRead(pd, &d);
	cr_assert_eq(n, 2 * 2 * ncpus, "one record per cgroup, event and cpu: %d", n);
	for (i = 0; i < n; i++) {
		bool getppid = !strcmp(d[i].evt, "syscalls:sys_enter_getppid");

		cr_assert_not_null(d[i].cgroupName);
		cr_assert_eq(d[i].pid, -1);
		cr_assert_eq(d[i].tid, -1);
		if (!strcmp(d[i].cgroupName, topname))
			g_top += getppid ? d[i].count : 0;
		else if (!strcmp(d[i].cgroupName, subname))
			*(getppid ? &g_sub : &t_sub) += d[i].count;
		else
			cr_assert_fail("cgroup %s", d[i].cgroupName);
	}
	/* the calls of the process inside, not one of the other's */
	cr_assert_eq(g_sub, 3000);
	cr_assert_eq(g_top, 3000, "%s holds %s", topname, subname);
	cr_assert_gt(t_sub, 0);
	PmuDataFree(d);
	PmuClose(pd);
	rmdir(sub);
	rmdir(top);
}

Test(bpf_mode, bad_combinations_each_with_its_message)
{
	char *evts[] = { "task-clock", "task-clock" }, *many[33], names[33][8];
	int pids[] = { getpid() }, i, before = tu_bpf_prog_count();
	struct EvtAttr ea[] = { { .groupId = -1 } };
	struct PmuAttr a = {
		.evtList = evts, .numEvt = 1, .pidList = pids, .numPid = 1, .enableBpf = 1
	};

	cr_assert_eq(PmuOpen(SAMPLING, &a), -1);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_INVALID_BPF_PARAM);
	cr_assert(strstr(Perror(), "COUNTING only"), "%s", Perror());
	a.pidList = NULL;
	a.numPid = 0;
	cr_assert_eq(PmuOpen(COUNTING, &a), -1);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_INVALID_BPF_PARAM);
	cr_assert(strstr(Perror(), "give a pidList or a cgroupNameList"), "%s", Perror());
	a.pidList = pids;
	a.numPid = 1;
	a.evtAttr = ea;
	a.numEvtAttr = 1;
	cr_assert_eq(PmuOpen(COUNTING, &a), -1);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_INVALID_BPF_PARAM);
	cr_assert(strstr(Perror(), "evtAttr"), "%s", Perror());
	a.evtAttr = NULL;
	a.numEvtAttr = 0;
	a.numEvt = 2;
	cr_assert_eq(PmuOpen(COUNTING, &a), -1);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_INVALID_BPF_PARAM);
	cr_assert(strstr(Perror(), "event 'task-clock' is listed twice"), "%s", Perror());
	for (i = 0; i < 33; i++) {
		snprintf(names[i], sizeof(names[i]), "e%d", i);
		many[i] = names[i];
	}
	a.evtList = many;
	a.numEvt = 33;
	cr_assert_eq(PmuOpen(COUNTING, &a), -1);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_INVALID_BPF_PARAM);
	cr_assert(strstr(Perror(), "33 events: BPF mode counts at most 32"), "%s", Perror());
	cr_assert_eq(tu_bpf_fds(), 0);
	cr_assert_eq(tu_bpf_prog_count_settle(before), before);
}

/* ---- sampling: perThread, periods, exclude flags, groups ---- */

struct run {
	struct PmuData *d;
	int n;
};

/* sample <argv> (started with --wait) with <a> until it exits */
static struct run sample(char *const argv[], struct PmuAttr *a, int *tids, int *ntids)
{
	struct tu_proc w = tu_spawn_v(argv, 0);
	struct run r;
	int pids[1], pd;

	cr_assert_gt(w.pid, 0);
	if (ntids)
		*ntids = threads_of(w.pid, tids, 16);
	pids[0] = w.pid;
	a->pidList = pids;
	a->numPid = 1;
	pd = PmuOpen(SAMPLING, a);
	cr_assert_gt(pd, 0, "PmuOpen: %d %s", Perrorno(), Perror());
	cr_assert_eq(PmuEnable(pd), 0, "%s", Perror());
	tu_go(&w);
	cr_assert_eq(tu_wait(&w), 0);
	PmuDisable(pd);
	r.n = PmuRead(pd, &r.d);
	cr_assert_geq(r.n, 0, "PmuRead: %s", Perror());
	PmuClose(pd);
	a->pidList = NULL;
	a->numPid = 0;
	cr_assert_eq(tu_bpf_fds(), 0);
	return r;
}

static int count_of(const struct run *r, const char *evt, uint64_t *period_sum)
{
	int i, n = 0;

	if (period_sum)
		*period_sum = 0;
	for (i = 0; i < r->n; i++) {
		if (strcmp(r->d[i].evt, evt))
			continue;
		n += (int)r->d[i].count;
		if (period_sum)
			*period_sum += r->d[i].period;
	}
	return n;
}

Test(per_thread, samples_the_threads_of_the_open_only)
{
	/* 2 worker threads exist at the open; the child is forked after it */
	char *argv[] = { "naps", "--threads",  "2", "--naps", "0", "--burn-ms",
			 "200",	 "--children", "1", "--wait", NULL };
	char *evts[] = { "cpu-clock" };
	struct PmuAttr a = { .evtList = evts, .numEvt = 1, .useFreq = 1, .freq = 999 };
	int tids[16], ntids, seen[16], nseen = 0, i;
	bool child = false;
	struct run r;

	a.perThread = 1;
	r = sample(argv, &a, tids, &ntids);
	cr_assert_eq(ntids, 3);
	cr_assert_gt(r.n, 0);
	for (i = 0; i < r.n; i++) {
		cr_assert(in(tids, ntids, r.d[i].tid), "tid %d was not there at the open",
			  r.d[i].tid);
		if (!in(seen, nseen, r.d[i].tid))
			seen[nseen++] = r.d[i].tid;
	}
	/* the 2 burning threads; the main thread only waits (a slow machine may catch it in
	 * fork once or twice) */
	for (i = 0; i < ntids; i++)
		cr_assert(tids[i] == r.d[0].pid || in(seen, nseen, tids[i]),
			  "worker thread %d was not sampled", tids[i]);
	PmuDataFree(r.d);
	/* without perThread the child is sampled too (inherit) */
	a.perThread = 0;
	r = sample(argv, &a, tids, &ntids);
	for (i = 0; i < r.n; i++)
		child |= !in(tids, ntids, r.d[i].tid);
	cr_assert(child, "the child forked after the open was not sampled");
	PmuDataFree(r.d);
}

Test(per_thread, tracepoints_of_the_threads_of_the_open_only)
{
	/* the main thread makes 500 getppid, then a child forked after the open 500 more */
	char *argv[] = { "syscalls", "--getppid",  "500", "--writes", "0", "--fails",
			 "0",	     "--children", "1",	  "--wait",   NULL };
	char *evts[] = { "syscalls:sys_enter_getppid" };
	struct PmuAttr a = { .evtList = evts, .numEvt = 1, .perThread = 1 };
	int tids[16], ntids, i;
	struct run r;

	r = sample(argv, &a, tids, &ntids);
	cr_assert_eq(ntids, 1);
	cr_assert_eq(count_of(&r, "syscalls:sys_enter_getppid", NULL), 500);
	for (i = 0; i < r.n; i++)
		cr_assert_eq(r.d[i].tid, tids[0], "tid %d was not there at the open", r.d[i].tid);
	PmuDataFree(r.d);
	/* without perThread the child is followed */
	a.perThread = 0;
	r = sample(argv, &a, NULL, NULL);
	cr_assert_eq(count_of(&r, "syscalls:sys_enter_getppid", NULL), 1000);
	PmuDataFree(r.d);
}

Test(per_thread, libkperf_conditions_each_with_its_message)
{
	char *evts[] = { "cpu-clock" };
	int pids[] = { getpid() }, cpus[] = { 0 };
	struct PmuAttr a = {
		.evtList = evts, .numEvt = 1, .pidList = pids, .numPid = 1, .perThread = 1
	};

	cr_assert_eq(PmuOpen(COUNTING, &a), -1);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_NOT_SUPPORT_PER_THREAD);
	cr_assert(strstr(Perror(), "SAMPLING only"), "%s", Perror());
	a.pidList = NULL;
	a.numPid = 0;
	cr_assert_eq(PmuOpen(SAMPLING, &a), -1);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_NOT_SUPPORT_PER_THREAD);
	cr_assert(strstr(Perror(), "give a pidList"), "%s", Perror());
	a.pidList = pids;
	a.numPid = 1;
	a.cpuList = cpus;
	a.numCpu = 1;
	cr_assert_eq(PmuOpen(SAMPLING, &a), -1);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_NOT_SUPPORT_PER_THREAD);
	cr_assert(strstr(Perror(), "leave cpuList empty"), "%s", Perror());
	a.cpuList = NULL;
	a.numCpu = 0;
	a.enableOnExec = 1;
	cr_assert_eq(PmuOpen(SAMPLING, &a), -1);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_NOT_SUPPORT_PER_THREAD);
	cr_assert(strstr(Perror(), "enableOnExec"), "%s", Perror());
}

Test(sample_period, each_event_its_own_period_unless_pmuattr_gives_one)
{
	char *argv[] = { "cpuburn", "--ms", "300", "--wait", NULL };
	char *evts[] = { "cpu-clock", "task-clock" };
	struct EvtAttr ea[] = { { .groupId = -1, .period = 1000000 },
				{ .groupId = -1, .period = 4000000 } };
	struct PmuAttr a = { .evtList = evts, .numEvt = 2, .evtAttr = ea, .numEvtAttr = 2 };
	uint64_t period;
	struct run r;
	int n, m;

	/* 300 ms of CPU: a sample every 1 ms of cpu-clock, every 4 ms of task-clock. Each
	 * sample carries its event's period; how many come depends on the machine's timers
	 * (an emulator's fire late), so only their order is a fact */
	r = sample(argv, &a, NULL, NULL);
	n = count_of(&r, "cpu-clock", &period);
	cr_assert_gt(n, 0);
	cr_assert_eq(period, (uint64_t)n * 1000000, "every cpu-clock sample has period 1 ms");
	m = count_of(&r, "task-clock", &period);
	cr_assert_gt(m, 0);
	cr_assert_eq(period, (uint64_t)m * 4000000, "every task-clock sample has period 4 ms");
	cr_assert_gt(n, m, "cpu-clock every 1 ms: %d samples, task-clock every 4 ms: %d", n, m);
	PmuDataFree(r.d);
	/* libkperf: PmuAttr's period, when set, is every event's */
	a.period = 2000000;
	r = sample(argv, &a, NULL, NULL);
	n = count_of(&r, "cpu-clock", &period);
	cr_assert_gt(n, 0);
	cr_assert_eq(period, (uint64_t)n * 2000000);
	n = count_of(&r, "task-clock", &period);
	cr_assert_gt(n, 0);
	cr_assert_eq(period, (uint64_t)n * 2000000);
	PmuDataFree(r.d);
}

Test(sample_period, with_use_freq_an_event_period_is_a_frequency)
{
	char *argv[] = { "cpuburn", "--ms", "300", "--wait", NULL };
	char *evts[] = { "cpu-clock", "task-clock" };
	struct EvtAttr ea[] = { { .groupId = -1, .period = 500 },
				{ .groupId = -1, .period = 100 } };
	struct PmuAttr a = {
		.evtList = evts, .numEvt = 2, .evtAttr = ea, .numEvtAttr = 2, .useFreq = 1
	};
	struct run r = sample(argv, &a, NULL, NULL);
	int n, m;

	/* as periods (500 and 100 ns of CPU) they would give thousands of samples; as
	 * frequencies at most 150 and 30 in 300 ms of CPU (fewer where timers fire late, as
	 * under an emulator), with a margin for the kernel's first guesses */
	n = count_of(&r, "cpu-clock", NULL);
	cr_assert(n > 0 && n < 200, "cpu-clock at 500 Hz for 300 ms: %d samples", n);
	m = count_of(&r, "task-clock", NULL);
	cr_assert(m > 0 && m < 45, "task-clock at 100 Hz for 300 ms: %d samples", m);
	cr_assert_gt(n, m, "500 Hz: %d samples, 100 Hz: %d", n, m);
	PmuDataFree(r.d);
}

Test(sample_period, no_period_anywhere_is_libkperfs_4000)
{
	char *argv[] = { "cpuburn", "--ms", "30", "--wait", NULL };
	char *evts[] = { "cpu-clock" };
	struct PmuAttr a = { .evtList = evts, .numEvt = 1 };
	struct run r = sample(argv, &a, NULL, NULL);
	int i;

	cr_assert_gt(r.n, 0);
	for (i = 0; i < r.n; i++)
		cr_assert_eq(r.d[i].period, 4000);
	PmuDataFree(r.d);
}

/* the frames of the samples of <evt>: how many are kernel and user addresses */
static void frames(const struct run *r, const char *evt, int *kernel, int *user)
{
	const struct Stack *st;
	int i;

	*kernel = *user = 0;
	for (i = 0; i < r->n; i++) {
		if (strcmp(r->d[i].evt, evt))
			continue;
		for (st = r->d[i].stack; st; st = st->next) {
			if (st->symbol->addr >= 0xffff800000000000UL)
				(*kernel)++;
			else
				(*user)++;
		}
	}
}

Test(evt_attr, exclude_user_on_one_event_only_and_only_numevtattr_count)
{
	char *argv[] = { "syscalls", "--getppid", "1000000", "--writes", "0",
			 "--fails",  "0",	  "--wait",  NULL };
	char *evts[] = { "cpu-clock", "task-clock" };
	/* the second entry is beyond numEvtAttr: task-clock must not take it */
	struct EvtAttr ea[] = { { .groupId = -1, .excludeUser = 1 },
				{ .groupId = -1, .excludeUser = 1 } };
	struct PmuAttr a = { .evtList = evts,
			     .numEvt = 2,
			     .evtAttr = ea,
			     .numEvtAttr = 1,
			     .useFreq = 1,
			     .freq = 999,
			     .symbolMode = RESOLVE_ELF };
	struct run r = sample(argv, &a, NULL, NULL);
	int k, u;

	frames(&r, "cpu-clock", &k, &u);
	cr_assert_gt(k, 0, "cpu-clock samples in the kernel: %d", k);
	cr_assert_eq(u, 0, "cpu-clock excludes user: %d user frames", u);
	frames(&r, "task-clock", &k, &u);
	cr_assert_gt(u, 0, "task-clock samples user space too");
	cr_assert_gt(k, 0);
	PmuDataFree(r.d);
}

Test(evt_attr, a_group_is_sampled_with_its_id)
{
	char *argv[] = { "cpuburn", "--ms", "200", "--wait", NULL };
	char *evts[] = { "cpu-clock", "task-clock", "page-faults" };
	struct EvtAttr ea[] = { { .groupId = 7 }, { .groupId = 7 } };
	struct PmuAttr a = { .evtList = evts,
			     .numEvt = 3,
			     .evtAttr = ea,
			     .numEvtAttr = 2,
			     .useFreq = 1,
			     .freq = 999 };
	struct run r = sample(argv, &a, NULL, NULL);
	int i, c = 0, t = 0;

	for (i = 0; i < r.n; i++) {
		if (!strcmp(r.d[i].evt, "page-faults")) {
			cr_assert_eq(r.d[i].groupId, -1);
			continue;
		}
		cr_assert_eq(r.d[i].groupId, 7, "%s", r.d[i].evt);
		c += !strcmp(r.d[i].evt, "cpu-clock");
		t += !strcmp(r.d[i].evt, "task-clock");
	}
	cr_assert(c > 100 && t > 100, "both members sample: %d and %d", c, t);
	PmuDataFree(r.d);
}

Test(evt_attr, exclude_guest_and_host_are_accepted)
{
	char *evts[] = { "task-clock" };
	int pids[] = { getpid() }, pd, n;
	struct PmuAttr a = { .evtList = evts,
			     .numEvt = 1,
			     .pidList = pids,
			     .numPid = 1,
			     .excludeGuest = 1,
			     .excludeHost = 1 };
	struct PmuData *d;
	volatile unsigned long x = 0;
	unsigned long i;

	/* software events are not split by guest and host: they count as before */
	pd = PmuOpen(COUNTING, &a);
	cr_assert_gt(pd, 0, "%s", Perror());
	PmuEnable(pd);
	for (i = 0; i < 20000000; i++)
		x += i;
	PmuDisable(pd);
	n = PmuRead(pd, &d);
	cr_assert_gt(sum_event(d, n, "task-clock"), 1000000);
	PmuDataFree(d);
	PmuClose(pd);
}
