/*
 * test_collectv.c - PmuCollectV: several tasks over one window (exact syscall counts of two
 * counting tasks, two sampling tasks until both processes exit, every sample inside the
 * window, an end by PmuStop on every task) and its bad arguments; PmuExit: the resolver
 * forgets the task's processes and later reads carry no stacks.
 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdatomic.h>

#include "core/core.h"
#include "kperf/kperf.h"
#include "sym/sym.h"
#include "testutil.h"

static int open_on(enum PmuTaskType type, const char *evt, int pid, enum SymbolMode mode,
		   unsigned on_exec)
{
	char *evts[] = { (char *)evt };
	int pids[] = { pid }, pd;
	struct PmuAttr a = { .evtList = evts,
			     .numEvt = 1,
			     .pidList = pids,
			     .numPid = 1,
			     .freq = 999,
			     .useFreq = type == SAMPLING,
			     .callStack = 1,
			     .symbolMode = mode,
			     .enableOnExec = on_exec };

	pd = PmuOpen(type, &a);
	cr_assert_gt(pd, 0, "%s: %s", evt, Perror());
	return pd;
}

static uint64_t total(int pd, const char *evt)
{
	struct PmuData *d;
	uint64_t s = 0;
	int n = PmuRead(pd, &d), i;

	cr_assert_geq(n, 0, "%s", Perror());
	for (i = 0; i < n; i++) {
		cr_assert_str_eq(d[i].evt, evt);
		s += d[i].count;
	}
	PmuDataFree(d);
	return s;
}

static bool exited(pid_t pid)
{
	int st;

	return waitpid(pid, &st, WNOHANG) == pid;
}

Test(collectv, two_counting_tasks_count_every_call, .timeout = 60)
{
	char prog[4096];
	char *argv[] = { prog, "--getppid", "1000", "--writes", "0", "--fails", "0", NULL };
	struct tu_child c;
	int pds[2];

	snprintf(prog, sizeof(prog), "%s", tu_path("workloads/syscalls"));
	c = tu_exec_later(argv, -1);
	cr_assert_gt(c.pid, 0);
	/* both start counting at the exec, and -1 collects until the process is gone */
	pds[0] = open_on(COUNTING, "syscalls:sys_enter_getppid", c.pid, NO_SYMBOL_RESOLVE, 1);
	pds[1] = open_on(COUNTING, "syscalls:sys_exit_getppid", c.pid, NO_SYMBOL_RESOLVE, 1);
	cr_assert_eq(write(c.go, "g", 1), 1);
	close(c.go);
	cr_assert_eq(PmuCollectV(pds, 2, -1), SUCCESS, "%s", Perror());
	cr_assert(exited(c.pid), "PmuCollectV(-1) returned before the process exited");
	close(c.out);
	cr_assert_eq(total(pds[0], "syscalls:sys_enter_getppid"), 1000);
	cr_assert_eq(total(pds[1], "syscalls:sys_exit_getppid"), 1000);
	PmuClose(pds[0]);
	PmuClose(pds[1]);
}

Test(collectv, two_sampling_tasks_until_both_exit, .timeout = 60)
{
	struct tu_proc w[2] = { tu_spawn("cpuburn", "--ms", "300", "--wait", NULL),
				tu_spawn("cpuburn", "--ms", "300", "--wait", NULL) };
	int pds[2], k, n, i;
	struct PmuData *d;

	for (k = 0; k < 2; k++)
		pds[k] = open_on(SAMPLING, "cpu-clock", w[k].pid, NO_SYMBOL_RESOLVE, 0);
	tu_go(&w[0]);
	tu_go(&w[1]);
	cr_assert_eq(PmuCollectV(pds, 2, -1), SUCCESS, "%s", Perror());
	for (k = 0; k < 2; k++) {
		cr_assert(exited(w[k].pid), "workload %d still runs", k);
		n = PmuRead(pds[k], &d);
		cr_assert_gt(n, 0, "task %d: %s", k, Perror());
		for (i = 0; i < n; i++)
			cr_assert_eq(d[i].pid, w[k].pid, "task %d has a sample of %d", k, d[i].pid);
		w[k].pid = -1;
		PmuDataFree(d);
		PmuClose(pds[k]);
	}
	cr_assert_eq(tu_bpf_fds(), 0, "BPF objects left open");
}

Test(collectv, both_tasks_sample_the_same_window, .timeout = 60)
{
	struct tu_proc w = tu_spawn("cpuburn", "--ms", "20000", "--wait", NULL);
	const char *evts[2] = { "cpu-clock", "task-clock" };
	uint64_t t0, t1;
	struct PmuData *d;
	int pds[2], k, n, i;

	for (k = 0; k < 2; k++)
		pds[k] = open_on(SAMPLING, evts[k], w.pid, NO_SYMBOL_RESOLVE, 0);
	tu_go(&w);
	t0 = kp_now_ns();
	cr_assert_eq(PmuCollectV(pds, 2, 300), SUCCESS, "%s", Perror());
	t1 = kp_now_ns();
	for (k = 0; k < 2; k++) {
		n = PmuRead(pds[k], &d);
		cr_assert_gt(n, 0, "%s: %s", evts[k], Perror());
		for (i = 0; i < n; i++) {
			cr_assert_str_eq(d[i].evt, evts[k]);
			cr_assert_eq(d[i].pid, w.pid);
			cr_assert((uint64_t)d[i].ts >= t0 && (uint64_t)d[i].ts <= t1,
				  "%s sample at %ld outside [%lu, %lu]", evts[k], (long)d[i].ts,
				  (unsigned long)t0, (unsigned long)t1);
		}
		PmuDataFree(d);
		/* disabled again: nothing more comes */
		cr_assert_eq(PmuRead(pds[k], &d), 0);
		PmuClose(pds[k]);
	}
	tu_kill(&w);
}

struct stopper {
	int *pds;
	atomic_bool done;
};

static void *stop_all(void *arg)
{
	struct stopper *s = arg;

	/* PmuCollectV clears the stop flags when it starts: stop until it has returned */
	while (!atomic_load(&s->done)) {
		PmuStop(s->pds[0]);
		PmuStop(s->pds[1]);
		tu_sleep_ms(10);
	}
	return NULL;
}

Test(collectv, ends_when_every_task_is_stopped, .timeout = 30)
{
	struct tu_proc w = tu_spawn("cpuburn", "--ms", "60000", "--wait", NULL);
	struct stopper s = { .done = false };
	pthread_t t;
	int pds[2];

	pds[0] = open_on(SAMPLING, "cpu-clock", w.pid, NO_SYMBOL_RESOLVE, 0);
	pds[1] = open_on(COUNTING, "task-clock", w.pid, NO_SYMBOL_RESOLVE, 0);
	s.pds = pds;
	tu_go(&w);
	pthread_create(&t, NULL, stop_all, &s);
	/* 60 s asked for; the test's timeout is 30 s */
	cr_assert_eq(PmuCollectV(pds, 2, 60000), SUCCESS, "%s", Perror());
	atomic_store(&s.done, true);
	pthread_join(t, NULL);
	PmuClose(pds[0]);
	PmuClose(pds[1]);
	tu_kill(&w);
}

Test(collectv, bad_arguments)
{
	struct tu_proc w = tu_spawn("cpuburn", "--ms", "20000", "--wait", NULL);
	char *evts[] = { "cpu-clock" };
	struct PmuAttr sys = { .evtList = evts, .numEvt = 1, .freq = 99, .useFreq = 1 };
	int good, pds[2], bad = 12345;
	struct PmuData *d;

	cr_assert_eq(PmuCollectV(&bad, 1, 100), LIBPERF_ERR_INVALID_PD);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_INVALID_PD);
	cr_assert_str_eq(Perror(),
			 "invalid task handle 12345: it was never returned by an open call "
			 "of this kind, or it was closed");
	cr_assert_eq(PmuCollectV(NULL, 1, 100), LIBPERF_ERR_NULL_POINTER);
	cr_assert_str_eq(Perror(), "pd cannot be NULL when len is 1");
	cr_assert_eq(PmuCollectV(NULL, 0, 100), SUCCESS);
	cr_assert_eq(Perrorno(), SUCCESS);
	cr_assert_eq(PmuCollectV(&bad, 0, 100), SUCCESS, "len 0: nothing is looked at");
	cr_assert_eq(PmuCollectV(&bad, 1, 0), LIBPERF_ERR_INVALID_TIME);
	cr_assert_str_eq(Perror(),
			 "milliseconds is 0: give a positive time, or -1 to collect until "
			 "the processes of the pidLists exit");
	cr_assert_eq(PmuCollectV(&bad, 1, -2), LIBPERF_ERR_INVALID_TIME);

	/* a good task beside a bad one is left alone: never enabled, nothing sampled */
	good = open_on(SAMPLING, "cpu-clock", w.pid, NO_SYMBOL_RESOLVE, 0);
	tu_go(&w);
	pds[0] = good;
	pds[1] = bad;
	cr_assert_eq(PmuCollectV(pds, 2, 200), LIBPERF_ERR_INVALID_PD);
	cr_assert_eq(PmuRead(good, &d), 0);
	/* a pd given twice is one task */
	pds[1] = good;
	cr_assert_eq(PmuCollectV(pds, 2, 300), SUCCESS, "%s", Perror());
	cr_assert_gt(PmuRead(good, &d), 0);
	PmuDataFree(d);
	/* -1 needs processes to wait for */
	pds[1] = PmuOpen(SAMPLING, &sys);
	cr_assert_gt(pds[1], 0, "%s", Perror());
	cr_assert_eq(PmuCollectV(pds, 2, -1), LIBPERF_ERR_INVALID_TIME);
	cr_assert_str_eq(Perror(), "milliseconds -1 (until the processes exit) needs a pidList in "
				   "every task: one task has none");
	PmuClose(pds[1]);
	/* a closed task */
	PmuClose(good);
	cr_assert_eq(PmuCollectV(&good, 1, 100), LIBPERF_ERR_INVALID_PD);
	tu_kill(&w);
	cr_assert_eq(tu_bpf_fds(), 0, "BPF objects left open");
}

Test(pmuexit, the_resolver_forgets_the_task_and_reads_have_no_stacks, .timeout = 60)
{
	struct tu_proc w = tu_spawn("cpuburn", "--ms", "300", "--wait", NULL);
	struct kp_sym_stats before, during, after;
	struct PmuData *d;
	int pid = w.pid, pd, n, i;

	kp_sym_get_stats(&before);
	pd = open_on(SAMPLING, "cpu-clock", w.pid, RESOLVE_ELF, 0);
	cr_assert_eq(PmuEnable(pd), 0);
	tu_go(&w);
	cr_assert_eq(tu_wait(&w), 0);
	PmuDisable(pd);
	kp_sym_get_stats(&during);
	cr_assert_eq(during.procs, before.procs + 1, "the workload is known to the resolver");
	PmuExit(pd);
	cr_assert_eq(Perrorno(), SUCCESS);
	kp_sym_get_stats(&after);
	cr_assert_eq(after.procs, before.procs, "PmuExit left %u processes, %u before", after.procs,
		     before.procs);
	n = PmuRead(pd, &d);
	cr_assert_gt(n, 0, "%s", Perror());
	for (i = 0; i < n; i++) {
		cr_assert_eq(d[i].pid, pid);
		cr_assert_null(d[i].stack, "record %d has a stack after PmuExit", i);
		cr_assert_str_eq(d[i].comm, "cpuburn");
	}
	PmuDataFree(d);
	/* twice is harmless; the task still closes */
	PmuExit(pd);
	cr_assert_eq(Perrorno(), SUCCESS);
	PmuClose(pd);
	kp_sym_get_stats(&after);
	cr_assert_eq(after.procs, before.procs);
	cr_assert_eq(tu_bpf_fds(), 0, "BPF objects left open");
}

Test(pmuexit, counting_task_and_bad_pd)
{
	struct tu_proc w = tu_spawn("cpuburn", "--ms", "100", "--wait", NULL);
	int pd = open_on(COUNTING, "task-clock", w.pid, NO_SYMBOL_RESOLVE, 0);

	cr_assert_eq(PmuEnable(pd), 0);
	tu_go(&w);
	cr_assert_eq(tu_wait(&w), 0);
	PmuExit(pd);
	cr_assert_eq(Perrorno(), SUCCESS);
	/* nothing to resolve in counts: they read as before */
	cr_assert_gt(total(pd, "task-clock"), 50000000ULL);
	PmuClose(pd);
	PmuExit(pd);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_INVALID_PD);
	PmuExit(-1);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_INVALID_PD);
}

/* libbpf enables a perf event when it attaches a program to it: sampling must still start at
 * PmuEnable (the window of PmuCollectV and PmuCollect depends on it) */
Test(collectv, sampling_starts_at_enable_not_at_open, .timeout = 60)
{
	struct tu_proc w = tu_spawn("cpuburn", "--ms", "20000", "--wait", NULL);
	struct PmuData *d;
	uint64_t t0;
	int pd, n, i;

	tu_go(&w);
	pd = open_on(SAMPLING, "cpu-clock", w.pid, NO_SYMBOL_RESOLVE, 0);
	tu_sleep_ms(200); /* the workload burns meanwhile: nothing of this may be sampled */
	t0 = kp_now_ns();
	cr_assert_eq(PmuEnable(pd), 0);
	tu_sleep_ms(300);
	cr_assert_eq(PmuDisable(pd), 0);
	n = PmuRead(pd, &d);
	cr_assert_gt(n, 0, "%s", Perror());
	for (i = 0; i < n; i++)
		cr_assert_geq((uint64_t)d[i].ts, t0, "sample %d taken %lu ns before PmuEnable", i,
			      (unsigned long)(t0 - (uint64_t)d[i].ts));
	PmuDataFree(d);
	PmuClose(pd);
	tu_kill(&w);
}
