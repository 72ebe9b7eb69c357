/*
 * sysstack_testutil.h - what the syscall stack tests share: run the `sysstack` workload
 * (getppid from ppid_from_a and ppid_from_b, known counts) under a trace by pid, kept alive
 * until the test is done with its stacks, and the facts to check a stack against (the leaf
 * user function, the line of its marker in the workload's source).
 */
#ifndef KPERF_SYSSTACK_TESTUTIL_H
#define KPERF_SYSSTACK_TESTUTIL_H

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "kperf/kperf.h"
#include "testutil.h"

#define SS_A 300
#define SS_B 200

/* the line of <marker> in tests/workloads/sysstack.c */
static inline unsigned ss_marker_line(const char *marker)
{
	char path[4096], line[512];
	unsigned n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/tests/workloads/sysstack.c", KPERF_SRCDIR);
	f = fopen(path, "r");
	cr_assert(f, "cannot open the workload's source");
	while (fgets(line, sizeof(line), f)) {
		n++;
		if (strstr(line, marker) && !strstr(line, "markers")) {
			fclose(f);
			return n;
		}
	}
	fclose(f);
	cr_assert_fail("no %s in sysstack.c", marker);
	return 0;
}

/* the first user frame of a stack (kernel frames come first) */
static inline const struct Symbol *ss_user_leaf(const struct Stack *s)
{
	for (; s; s = s->next)
		if (s->symbol && s->symbol->addr < 0xffff800000000000ULL)
			return s->symbol;
	return NULL;
}

/* trace the sysstack workload <argv> (with --wait --hold) by pid with <a> and <x> until it
 * made its calls; the workload is left alive (tu_kill it) and the handle disabled */
static inline int ss_trace_argv(struct PmuTraceAttr *a, const struct KperfTraceOpts *x,
				struct tu_proc *w, char **argv)
{
	static const char *funcs[] = { "getppid" };
	char buf[8] = { 0 };
	int pid, pd;

	*w = tu_spawn_v(argv, 1);
	cr_assert_gt(w->pid, 0);
	pid = w->pid;
	a->funcs = funcs;
	a->numFuncs = 1;
	a->pidList = &pid;
	a->numPid = 1;
	pd = KperfTraceOpen(TRACE_SYS_CALL, a, x);
	a->pidList = NULL;
	a->numPid = 0;
	cr_assert_gt(pd, 0, "KperfTraceOpen: %d %s", Perrorno(), Perror());
	cr_assert_eq(PmuTraceEnable(pd), 0, "%s", Perror());
	tu_go(w);
	cr_assert_eq(read(w->out_fd, buf, 5), 5, "the workload did not finish its calls");
	cr_assert_str_eq(buf, "done\n");
	cr_assert_eq(PmuTraceDisable(pd), 0);
	return pd;
}

/* ss_trace_argv of `sysstack --wait --hold 300 200` */
static inline int ss_trace(struct PmuTraceAttr *a, const struct KperfTraceOpts *x,
			   struct tu_proc *w)
{
	char *argv[] = { "sysstack", "--wait", "--hold", "300", "200", NULL };

	return ss_trace_argv(a, x, w, argv);
}

#endif
