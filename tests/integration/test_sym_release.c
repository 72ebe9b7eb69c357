/*
 * test_sym_release.c - the resolver state of processes that exited is released (issue 14: the
 * agent's profiles under process churn grew without bound): a system-wide sampling task tells
 * the resolver about every process its side band sees; a read lets go of those whose exit came
 * before it, the close of the rest. A shell started under the task runs 40 /bin/true and stays
 * alive through the read: after the read the resolver knows the shell and none of the 40; after
 * the close, not the shell either. A task read after PmuDisable lets go of every process, alive
 * or not, and enabled again resolves them afresh on the same programs (the agent's pull
 * profiles, issue 14).
 */
#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kperf/kperf.h"
#include "sym/sym.h"
#include "testutil.h"

TestSuite(sym_release, .timeout = 120);

#define CHILDREN 40

Test(sym_release, exited_processes_are_forgotten_after_the_read)
{
	char *evts[] = { "cpu-clock" };
	struct PmuAttr a = { .evtList = evts,
			     .numEvt = 1,
			     .useFreq = 1,
			     .freq = 99,
			     .callStack = 1,
			     .symbolMode = RESOLVE_ELF };
	int out[2], go[2], pd, n, i, known = 0, kids[CHILDREN];
	struct PmuData *d = NULL;
	pid_t sh;
	FILE *f;

	cr_assert_eq(pipe(out), 0);
	cr_assert_eq(pipe(go), 0);
	pd = KperfOpen(SAMPLING, &a, NULL);
	cr_assert_gt(pd, 0, "KperfOpen: %d %s", Perrorno(), Perror());
	cr_assert_eq(PmuEnable(pd), 0, "%s", Perror());
	sh = fork();
	if (sh == 0) {
		char script[256];

		dup2(out[1], 1);
		dup2(go[0], 0);
		close(out[0]);
		close(go[1]);
		/* each child's pid, then "done", then it waits for a line */
		snprintf(
			script, sizeof(script),
			"for i in $(seq %d); do /bin/true & echo $!; wait; done; echo done; read x",
			CHILDREN);
		execl("/bin/sh", "sh", "-c", script, NULL);
		_exit(127);
	}
	close(out[1]);
	close(go[0]);
	f = fdopen(out[0], "r");
	cr_assert_not_null(f);
	for (i = 0; i < CHILDREN; i++)
		cr_assert_eq(fscanf(f, "%d", &kids[i]), 1);
	{
		char word[16] = "";

		cr_assert_eq(fscanf(f, "%15s", word), 1);
		cr_assert_str_eq(word, "done");
	}
	n = PmuRead(pd, &d);
	cr_assert_geq(n, 0, "PmuRead: %s", Perror());
	cr_assert(kp_sym_knows_pid(sh), "the shell, alive, is known");
	for (i = 0; i < CHILDREN; i++)
		known += kp_sym_knows_pid(kids[i]);
	cr_assert_eq(known, 0, "%d of %d exited children still known after the read", known,
		     CHILDREN);
	if (n > 0)
		PmuDataFree(d);
	PmuDisable(pd);
	PmuClose(pd);
	cr_assert(!kp_sym_knows_pid(sh), "the close let go of the shell too");
	cr_assert_eq(write(go[1], "\n", 1), 1);
	close(go[1]);
	fclose(f);
	cr_assert_eq(waitpid(sh, NULL, 0), sh);
	cr_assert_eq(tu_bpf_fds(), 0, "BPF objects left open");
}

/* the samples of <pid> in <d>, and how many of them have <fn> as their leaf */
static unsigned leaf_count(const struct PmuData *d, int n, pid_t pid, const char *fn, unsigned *of)
{
	unsigned hits = 0;
	int i;

	*of = 0;
	for (i = 0; i < n; i++) {
		if (d[i].pid != pid)
			continue;
		*of += (unsigned)d[i].count;
		if (d[i].stack && d[i].stack->symbol && d[i].stack->symbol->symbolName &&
		    !strcmp(d[i].stack->symbol->symbolName, fn))
			hits += (unsigned)d[i].count;
	}
	return hits;
}

Test(sym_release, a_read_after_disable_lets_go_of_the_living_and_a_new_enable_resolves_again)
{
	char *evts[] = { "cpu-clock" };
	struct PmuAttr a = { .evtList = evts,
			     .numEvt = 1,
			     .useFreq = 1,
			     .freq = 199,
			     .callStack = 1,
			     .symbolMode = RESOLVE_ELF };
	struct KperfPmuOpts o = KPERF_OPTS(KperfPmuOpts, .aggregate = 1);
	struct tu_proc burn = tu_spawn("cpuburn", "--ms", "30000", NULL);
	struct PmuData *d = NULL;
	unsigned of, hot;
	int pd, n, round;

	cr_assert_gt(burn.pid, 0);
	a.pidList = &burn.pid;
	a.numPid = 1;
	pd = KperfOpen(SAMPLING, &a, &o);
	cr_assert_gt(pd, 0, "KperfOpen: %d %s", Perrorno(), Perror());
	for (round = 0; round < 2; round++) {
		cr_assert_eq(PmuEnable(pd), 0, "%s", Perror());
		tu_sleep_ms(500);
		cr_assert_eq(PmuDisable(pd), 0, "%s", Perror());
		n = PmuRead(pd, &d);
		cr_assert_gt(n, 0, "round %d: PmuRead %d: %s", round, n, Perror());
		hot = leaf_count(d, n, burn.pid, "hot_loop", &of);
		cr_assert_gt(of, 0, "round %d: no sample of cpuburn", round);
		cr_assert_gt(hot * 10, of * 8, "round %d: hot_loop is the leaf of %u of %u", round,
			     hot, of);
		PmuDataFree(d);
		cr_assert(
			!kp_sym_knows_pid(burn.pid),
			"round %d: cpuburn, alive, still known after the read of the disabled task",
			round);
	}
	PmuClose(pd);
	tu_kill(&burn);
	cr_assert_eq(tu_bpf_fds(), 0, "BPF objects left open");
}
