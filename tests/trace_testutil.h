/*
 * trace_testutil.h - what the syscall tracing tests share: trace the `syscalls` workload by
 * pid from its first counted call to its exit, and close a task checking that no BPF
 * object is left open.
 */
#ifndef KPERF_TRACE_TESTUTIL_H
#define KPERF_TRACE_TESTUTIL_H

#include <criterion/criterion.h>

#include "kperf/kperf.h"
#include "testutil.h"

/* trace `syscalls --wait <extra...>` with <a> and <x> by pid until it exits; returns the
 * handle, disabled, and the workload's pid in *pid_out (when not NULL) */
static inline int tt_trace_workload(struct PmuTraceAttr *a, const struct KperfTraceOpts *x,
				    char *const extra[], pid_t *pid_out)
{
	char *argv[16] = { "syscalls", "--wait" };
	struct tu_proc w;
	int pids[1], pd, i;

	for (i = 0; extra && extra[i] && i < 13; i++)
		argv[2 + i] = extra[i];
	w = tu_spawn_v(argv, 0);
	cr_assert_gt(w.pid, 0);
	pids[0] = w.pid;
	a->pidList = pids;
	a->numPid = 1;
	pd = KperfTraceOpen(TRACE_SYS_CALL, a, x);
	cr_assert_gt(pd, 0, "PmuTraceOpen: %d %s", Perrorno(), Perror());
	cr_assert_eq(PmuTraceEnable(pd), 0, "%s", Perror());
	tu_go(&w);
	cr_assert_eq(tu_wait(&w), 0);
	cr_assert_eq(PmuTraceDisable(pd), 0);
	if (pid_out)
		*pid_out = pids[0];
	a->pidList = NULL;
	a->numPid = 0;
	return pd;
}

/* close a trace task: nothing of it may stay open */
static inline void tt_finish(int pd)
{
	PmuTraceClose(pd);
	cr_assert_eq(tu_bpf_fds(), 0, "BPF objects left open after PmuTraceClose");
}

#endif
