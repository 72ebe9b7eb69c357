/*
 * pidns_activity.c - mstx markers and off-CPU time inside a PID namespace (suite pidns_in,
 * started by suite pidns of test_pidns.c under `unshare --pid --fork --mount-proc`; skipped
 * anywhere else; pidns_inner.c has the others): the markers of a process given by its
 * namespace pid, and of the child it forks, carry the namespace's pids; without a pid list,
 * the processes the caller starts are seen by their namespace pids and a marking process of
 * the host, which is none of them, is not collected; with allPids it is, as pid -1. Off-CPU records (blockedSample, record
 * --off-cpu -p NSPID) are the namespace's pids and tids, with the blocking stack resolved.
 */
#include <criterion/criterion.h>

#include "core/pidns.h"
#include "kperf/kperf.h"
#include "pidns_testutil.h"
#include "trace_testutil.h"

static const enum KperfActivityKind MARKER[] = { KPERF_ACTIVITY_KIND_MARKER };

#define INNER_ONLY()                                                                         \
	do {                                                                                 \
		if (!getenv("KPERF_PIDNS_INNER"))                                            \
			cr_skip_test("runs inside a PID namespace, started by suite pidns"); \
		cr_assert(!kp_pidns_is_host(), "not inside a PID namespace");                \
	} while (0)

/* the "tick" marks of <r> by pid: <mine> of pid <pid>, <child> of one other pid of this
 * namespace (*cpid), <outside> of pid -1 */
static void ticks(const struct KperfActivityRecord *r, int n, int pid, int *mine, int *child,
		  int *cpid, int *outside)
{
	int i;

	*mine = *child = *outside = 0;
	*cpid = 0;
	for (i = 0; i < n; i++) {
		if (strcmp(r[i].name, "tick"))
			continue;
		if (r[i].pid == -1) {
			cr_assert_eq(r[i].tid, -1);
			cr_assert_str_eq(r[i].comm, "[outside namespace]");
			(*outside)++;
		} else if (r[i].pid == pid) {
			cr_assert_eq(r[i].tid, pid, "the ticks are marked by the main thread");
			(*mine)++;
		} else {
			cr_assert(!*cpid || *cpid == r[i].pid,
				  "ticks of pids %d and %d (the workload is %d)", *cpid, r[i].pid,
				  pid);
			*cpid = r[i].pid;
			cr_assert_eq(r[i].tid, r[i].pid);
			(*child)++;
		}
	}
}

static int read_markers(int ad, struct KperfActivityRecord **all)
{
	struct KperfActivityRecord *r;
	int n = 0, k, i;

	*all = NULL;
	while ((k = KperfActivityRead(ad, 200, &r)) > 0) {
		*all = realloc(*all, (size_t)(n + k) * sizeof(**all));
		cr_assert(*all);
		for (i = 0; i < k; i++) {
			(*all)[n + i] = r[i];
			(*all)[n + i].name = strdup(r[i].name);
			(*all)[n + i].comm = strdup(r[i].comm);
			(*all)[n + i].domain = (*all)[n + i].channel = NULL;
		}
		n += k;
		KperfActivityFree(r);
	}
	cr_assert_geq(k, 0, "%s", Perror());
	return n;
}

static void free_markers(struct KperfActivityRecord *r, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		free((void *)r[i].name);
		free((void *)r[i].comm);
	}
	free(r);
}

/* by its namespace pid, children followed: 5 ticks of the process, 5 of its forked child */
Test(pidns_in, markers_by_pid)
{
	struct tu_proc p;
	struct KperfActivityOpts o = { .sz = sizeof(o), .numPid = 1 };
	struct KperfActivityRecord *r;
	int ad, n, mine, child, cpid, outside, pid;

	INNER_ONLY();
	p = tu_spawn("mstx_wl", "--wait", "--marks", "5", "--fork", NULL);
	pid = p.pid; /* tu_wait forgets it */
	o.pidList = &pid;
	ad = KperfActivityOpen(MARKER, 1, &o);
	cr_assert_geq(ad, 0, "%s", Perror());
	cr_assert_eq(KperfActivityEnable(ad), 0, "%s", Perror());
	tu_go(&p);
	cr_assert_eq(tu_wait(&p), 0);
	n = read_markers(ad, &r);
	KperfActivityClose(ad);
	ticks(r, n, pid, &mine, &child, &cpid, &outside);
	cr_assert_eq(mine, 5);
	cr_assert_eq(child, 5, "the forked child's ticks, by its pid in this namespace");
	cr_assert_gt(cpid, pid, "the child's pid %d is this namespace's", cpid);
	cr_assert_eq(outside, 0);
	free_markers(r, n);
	cr_assert_eq(tu_bpf_fds(), 0, "BPF objects left open");
}

/* Without a pid list, the markers of the caller and of every process it starts (there is no
 * every-process mode): two workloads started inside the namespace after the collection opened
 * are both seen, each by its namespace pid; the host's marker loop (KPERF_PIDNS_HOSTPID),
 * marking meanwhile through the same library, is none of them and is not collected at all. */
/* two mstx_wl started after <o> opened, marking 5 and 3 times while the host's loop
 * (KPERF_PIDNS_HOSTPID) marks for <host_us> more: both exact by their namespace pids, nothing
 * dropped; the ticks of pid -1 are returned */
static int two_workloads(const struct KperfActivityOpts *o, useconds_t host_us)
{
	struct KperfActivityStats st = { 0 };
	struct KperfActivityRecord *r;
	struct tu_proc p, q;
	int ad, n, mine, other, opid, outside, pid, qpid;

	INNER_ONLY();
	cr_assert(getenv("KPERF_PIDNS_HOSTPID"), "KPERF_PIDNS_HOSTPID is not set");
	ad = KperfActivityOpen(MARKER, 1, o);
	cr_assert_geq(ad, 0, "%s", Perror());
	cr_assert_eq(KperfActivityEnable(ad), 0, "%s", Perror());
	p = tu_spawn("mstx_wl", "--wait", "--marks", "5", NULL);
	q = tu_spawn("mstx_wl", "--wait", "--marks", "3", NULL);
	pid = p.pid; /* tu_wait forgets them */
	qpid = q.pid;
	tu_go(&p);
	tu_go(&q);
	cr_assert_eq(tu_wait(&p), 0);
	cr_assert_eq(tu_wait(&q), 0);
	usleep(host_us); /* the host's loop marks meanwhile */
	cr_assert_eq(KperfActivityDisable(ad), 0);
	n = read_markers(ad, &r);
	cr_assert_eq(KperfActivityGetStats(ad, &st), 0);
	KperfActivityClose(ad);
	ticks(r, n, pid, &mine, &other, &opid, &outside);
	cr_assert_eq(mine, 5,
		     "%d ticks of pid %d in %d records (%d of pid %d, %d outside; %u probes in %u "
		     "files, %lu dropped)",
		     mine, pid, n, other, opid, outside, st.probes, st.probeFiles,
		     (unsigned long)st.dropped);
	cr_assert_eq(opid, qpid, "the other ticks are the second workload's (pid %d), not %d", qpid,
		     opid);
	cr_assert_eq(other, 3);
	cr_assert_gt(pid, 1);
	cr_assert_lt(qpid, 1000, "pids of this namespace");
	cr_assert_eq(st.dropped, 0);
	free_markers(r, n);
	cr_assert_eq(tu_bpf_fds(), 0, "BPF objects left open");
	return outside;
}

Test(pidns_in, markers_of_every_process)
{
	char lib[4096];
	const char *files[] = { lib };
	/* the probes of this process's own copy (this test binary, linked statically) and of
	 * the libkperf-bpf.so the workloads map */
	struct KperfActivityOpts o = { .sz = sizeof(o), .probeFiles = files, .numProbeFiles = 1 };

	snprintf(lib, sizeof(lib), "%s/lib/libkperf-bpf.so.0", tu_build());
	cr_assert_eq(two_workloads(&o, 100000), 0,
		     "the host's loop is not a process of the caller's");
}

/* allPids: every process, without a pid list. The two workloads started after the collection
 * opened are both seen by their namespace pids; the host's marker loop (a new process every
 * 10 ms, mapping the same libkperf-bpf.so.0) is collected too but, outside the caller's
 * view, only as pid -1 "[outside namespace]", never as a pid of this namespace. */
Test(pidns_in, markers_of_all_pids)
{
	struct KperfActivityOpts o = { .sz = sizeof(o), .allPids = 1 };

	cr_assert_gt(two_workloads(&o, 300000), 0,
		     "the host's loop marks through the same file: pid -1");
}

/* ---- off-CPU time ---- */

static bool stack_has(const struct Stack *st, const char *fn)
{
	for (; st; st = st->next)
		if (st->symbol && st->symbol->symbolName && !strcmp(st->symbol->symbolName, fn))
			return true;
	return false;
}

/* the offcpu workload (4 rounds of 5 ms computing, 30 ms blocked in wait_on_pipe), by its
 * namespace pid: every record is its pid, the worker's blocks are on its namespace tid */
Test(pidns_in, offcpu_by_pid)
{
	char *argv[] = { "offcpu", "--rounds", "4", "--compute-ms", "5", "--block-ms",
			 "30",	   "--wait",   NULL };
	char *argv_long[] = { "offcpu", "--rounds",   "100", "--compute-ms",
			      "5",	"--block-ms", "30",  NULL };
	struct tu_proc w = tu_spawn_v(argv, 1);
	struct PmuAttr a = {
		.numPid = 1, .blockedSample = 1, .callStack = 1, .symbolMode = RESOLVE_ELF
	};
	struct PmuData *d = NULL;
	char buf[512], cmd[1024], *out;
	int pd, n, i, pid, tid = 0, status;
	uint64_t blocks = 0;
	ssize_t k, got = 0;

	INNER_ONLY();
	cr_assert_gt(w.pid, 0);
	a.pidList = &w.pid;
	pd = KperfOpen(SAMPLING, &a, &KPERF_OPTS(KperfPmuOpts, .offCpuOnly = 1));
	cr_assert_gt(pd, 0, "%d %s", Perrorno(), Perror());
	cr_assert_eq(PmuEnable(pd), 0, "%s", Perror());
	tu_go(&w);
	while ((k = read(w.out_fd, buf + got, sizeof(buf) - 1 - (size_t)got)) > 0)
		got += k;
	buf[got] = '\0';
	close(w.out_fd);
	pid = w.pid;
	cr_assert_eq(tu_wait(&w), 0);
	cr_assert(strstr(buf, "worker_tid=") &&
			  sscanf(strstr(buf, "worker_tid="), "worker_tid=%d", &tid) == 1,
		  "the workload said: %s", buf);
	cr_assert_eq(PmuDisable(pd), 0, "%s", Perror());
	n = PmuRead(pd, &d);
	cr_assert_gt(n, 0, "%s", Perror());
	for (i = 0; i < n; i++) {
		cr_assert_eq(d[i].pid, pid, "a record of pid %d (%s)", d[i].pid, d[i].comm);
		if (d[i].tid == tid && stack_has(d[i].stack, "wait_on_pipe"))
			blocks += d[i].count;
	}
	cr_assert_eq(blocks, 4, "the worker (tid %d here) blocked 4 times in wait_on_pipe", tid);
	PmuDataFree(d);
	PmuClose(pd);
	/* the CLI, by the namespace pid, for 0.5 s of a workload blocking every 35 ms for
	 * 3.5 s: the blocking function is in the profile */
	w = tu_spawn_v(argv_long, 0);
	cr_assert_gt(w.pid, 0);
	snprintf(cmd, sizeof(cmd),
		 "%s/bin/kperf-bpf record --off-cpu -g --format folded -d 0.5 -p %d 2>&1 | "
		 "grep -c ';wait_on_pipe'",
		 tu_build(), w.pid);
	out = tu_run(cmd, &status);
	tu_kill(&w);
	cr_assert_gt(atoi(out), 0, "no folded stack through wait_on_pipe: %s", out);
	free(out);
	cr_assert_eq(tu_bpf_fds(), 0, "BPF objects left open");
}
