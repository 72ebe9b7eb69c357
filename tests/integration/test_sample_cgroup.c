/*
 * test_sample_cgroup.c - SAMPLING of the processes of cgroups (cgroupNameList), as libkperf
 * does it: per (cgroup, event, cpu) perf events that follow the cgroup and its descendants,
 * PmuData.cgroupName set to the name given; tracepoints recorded once per cgroup of the
 * list the task is in. Workloads run inside a cgroup made for the test and outside it.
 */
#include <criterion/criterion.h>
#include <sys/stat.h>

#include "kperf/kperf.h"
#include "testutil.h"

struct cg {
	char top[256], sub[300]; /* paths */
	char topname[64], subname[128]; /* relative to the cgroup2 mount */
};

/* <name> and <name>/sub under the cgroup2 mount; skips the test where none can be made */
static void make_cgroups(struct cg *c, const char *what)
{
	const char *root = access("/sys/fs/cgroup/unified", F_OK) ? "/sys/fs/cgroup" :
								    "/sys/fs/cgroup/unified";

	snprintf(c->topname, sizeof(c->topname), "kperf-%s-%d", what, getpid());
	snprintf(c->subname, sizeof(c->subname), "%s/sub", c->topname);
	snprintf(c->top, sizeof(c->top), "%s/%s", root, c->topname);
	snprintf(c->sub, sizeof(c->sub), "%s/%s", root, c->subname);
	if (mkdir(c->top, 0755))
		cr_skip_test("cannot create a cgroup v2 directory: %s", strerror(errno));
	cr_assert_eq(mkdir(c->sub, 0755), 0, "%s", strerror(errno));
}

static void join(const char *cg, pid_t pid)
{
	char procs[512];
	FILE *f;

	snprintf(procs, sizeof(procs), "%s/cgroup.procs", cg);
	f = fopen(procs, "w");
	cr_assert_not_null(f);
	fprintf(f, "%d\n", pid);
	cr_assert_eq(fclose(f), 0, "joining %s: %s", cg, strerror(errno));
}

static void remove_cgroups(struct cg *c)
{
	rmdir(c->sub);
	rmdir(c->top);
}

Test(sample_cgroup, samples_only_the_processes_of_the_cgroup_and_its_descendants)
{
	struct cg c;
	char *evts[] = { "cpu-clock" }, *cgs[1];
	struct PmuAttr a = { .evtList = evts,
			     .numEvt = 1,
			     .cgroupNameList = cgs,
			     .numCgroup = 1,
			     .period = 1000000, /* ns of cpu-clock: 1 ms */
			     .symbolMode = NO_SYMBOL_RESOLVE };
	struct tu_proc inside, outside;
	struct PmuData *d;
	int pd, n, i;
	pid_t in_pid, out_pid;
	long ncpus = sysconf(_SC_NPROCESSORS_ONLN);
	int64_t last_ts = 0;

	make_cgroups(&c, "samplecg");
	cgs[0] = c.topname;
	inside = tu_spawn("cpuburn", "--ms", "300", "--wait", NULL);
	outside = tu_spawn("cpuburn", "--ms", "300", "--wait", NULL);
	in_pid = inside.pid;
	out_pid = outside.pid;
	join(c.sub, in_pid); /* below the cgroup asked for: followed too */
	pd = PmuOpen(SAMPLING, &a);
	cr_assert_gt(pd, 0, "%s", Perror());
	cr_assert_eq(PmuEnable(pd), 0, "%s", Perror());
	tu_go(&inside);
	tu_go(&outside);
	tu_wait(&inside);
	tu_wait(&outside);
	PmuDisable(pd);
	n = PmuRead(pd, &d);
	cr_assert_gt(n, 0, "%s", Perror());
	for (i = 0; i < n; i++) {
		cr_assert_eq(d[i].pid, in_pid, "a sample of pid %d (inside: %d, outside: %d)",
			     d[i].pid, in_pid, out_pid);
		cr_assert_str_eq(d[i].cgroupName, c.topname);
		cr_assert_str_eq(d[i].evt, "cpu-clock");
		cr_assert_str_eq(d[i].comm, "cpuburn");
		cr_assert_eq(d[i].count, 1, "one record per sample");
		cr_assert(d[i].cpu >= 0 && d[i].cpu < ncpus);
		cr_assert_geq(d[i].ts, last_ts, "records in time order");
		last_ts = d[i].ts;
	}
	PmuDataFree(d);
	PmuClose(pd);
	cr_assert_eq(tu_bpf_fds(), 0, "BPF objects left open");
	remove_cgroups(&c);
}

Test(sample_cgroup, a_tracepoint_is_recorded_once_per_cgroup_the_task_is_in)
{
	struct cg c;
	char *evts[] = { "syscalls:sys_enter_getppid", "cpu-clock" }, *cgs[2];
	struct PmuAttr a = { .evtList = evts,
			     .numEvt = 2,
			     .cgroupNameList = cgs,
			     .numCgroup = 2,
			     .period = 1000000,
			     .symbolMode = NO_SYMBOL_RESOLVE };
	struct tu_proc inside, outside;
	struct PmuData *d;
	int pd, n, i, top = 0, sub = 0;
	pid_t in_pid;

	make_cgroups(&c, "tpcg");
	cgs[0] = c.topname;
	cgs[1] = c.subname;
	inside = tu_spawn("syscalls", "--getppid", "1000", "--writes", "0", "--fails", "0",
			  "--wait", NULL);
	outside = tu_spawn("syscalls", "--getppid", "700", "--writes", "0", "--fails", "0",
			   "--wait", NULL);
	in_pid = inside.pid;
	join(c.sub, in_pid); /* in both cgroups of the list: sub, and top above it */
	pd = PmuOpen(SAMPLING, &a);
	cr_assert_gt(pd, 0, "%s", Perror());
	cr_assert_eq(PmuEnable(pd), 0, "%s", Perror());
	tu_go(&inside);
	tu_go(&outside);
	tu_wait(&inside);
	tu_wait(&outside);
	PmuDisable(pd);
	n = PmuRead(pd, &d);
	cr_assert_geq(n, 2000, "%s", Perror());
	for (i = 0; i < n; i++) {
		cr_assert_eq(d[i].pid, in_pid, "a record of pid %d (%s)", d[i].pid, d[i].evt);
		cr_assert_not_null(d[i].cgroupName);
		if (strcmp(d[i].evt, "syscalls:sys_enter_getppid"))
			continue;
		cr_assert_not_null(d[i].rawData);
		if (!strcmp(d[i].cgroupName, c.topname))
			top++;
		else if (!strcmp(d[i].cgroupName, c.subname))
			sub++;
		else
			cr_assert_fail("cgroup %s", d[i].cgroupName);
	}
	cr_assert_eq(top, 1000);
	cr_assert_eq(sub, 1000);
	PmuDataFree(d);
	PmuClose(pd);
	cr_assert_eq(tu_bpf_fds(), 0, "BPF objects left open");
	remove_cgroups(&c);
}

Test(sample_cgroup, bad_cgroup_lists_each_with_its_code)
{
	char *evts[] = { "syscalls:sys_enter_getppid" }, *cgs[65];
	struct PmuAttr a = { .evtList = evts, .numEvt = 1, .cgroupNameList = cgs };
	int pids[] = { getpid() }, i;
	struct cg c;

	make_cgroups(&c, "badcg");
	for (i = 0; i < 65; i++)
		cgs[i] = c.topname;
	/* a tracepoint's program tests the task against each cgroup itself: at most 64 */
	a.numCgroup = 65;
	cr_assert_eq(PmuOpen(SAMPLING, &a), -1);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_INVALID_CGROUP_LIST);
	cr_assert(strstr(Perror(), "65 cgroups: tracepoints are sampled for at most 64 cgroups"),
		  "%s", Perror());
	a.numCgroup = 64;
	i = PmuOpen(SAMPLING, &a);
	cr_assert_gt(i, 0, "%s", Perror());
	PmuClose(i);
	/* libkperf's checks: the list and the pids exclude each other; a missing cgroup */
	a = (struct PmuAttr){ .evtList = evts,
			      .numEvt = 1,
			      .cgroupNameList = cgs,
			      .numCgroup = 1,
			      .pidList = pids,
			      .numPid = 1 };
	cr_assert_eq(PmuOpen(SAMPLING, &a), -1);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_INVALID_CGROUP_LIST);
	cr_assert(strstr(Perror(), "give either pidList or cgroupNameList, not both"), "%s",
		  Perror());
	cgs[0] = "kperf-no-such-cgroup";
	a = (struct PmuAttr){ .evtList = evts, .numEvt = 1, .cgroupNameList = cgs, .numCgroup = 1 };
	cr_assert_eq(PmuOpen(SAMPLING, &a), -1);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_OPEN_INVALID_FILE);
	cr_assert(strstr(Perror(), "kperf-no-such-cgroup"), "%s", Perror());
	a = (struct PmuAttr){ .evtList = evts, .numEvt = 1, .numCgroup = 1 };
	cr_assert_eq(PmuOpen(SAMPLING, &a), -1);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_INVALID_CGROUP_LIST);
	cr_assert(strstr(Perror(), "cgroupNameList is NULL but numCgroup is 1"), "%s", Perror());
	cr_assert_eq(tu_bpf_fds(), 0);
	remove_cgroups(&c);
}
