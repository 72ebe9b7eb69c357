/*
 * test_sysstack.c - syscalls with their call stacks (issue 10, PmuTraceAttr.callStack and
 * symbolMode): per-call records carry the stack taken at sys_enter, the summary by stack is
 * counted in the kernel. The `sysstack` workload calls getppid 300 times from ppid_from_a and
 * 200 times from ppid_from_b: the counts per stack are exact, the leaf user function of each
 * stack is the one that made the call, with the line of the call under DWARF. Bad input.
 */
#include <criterion/criterion.h>
#include <signal.h>

#include "kperf/kperf.h"
#include "sysstack_testutil.h"
#include "trace_testutil.h"

/* the user leaf of <s> is <fn>, and under DWARF on the line of <marker> */
static void assert_leaf(const struct Stack *s, const char *fn, const char *marker, bool dwarf)
{
	const struct Symbol *u = ss_user_leaf(s);

	cr_assert(u, "no user frame in the stack");
	cr_assert_str_eq(u->symbolName, fn);
	cr_assert(strstr(u->module, "sysstack"), "module %s", u->module);
	if (dwarf) {
		cr_assert(u->fileName && strstr(u->fileName, "sysstack.c"), "file %s",
			  u->fileName ? u->fileName : "(null)");
		cr_assert_eq(u->lineNum, ss_marker_line(marker), "%s: line %u", fn, u->lineNum);
	}
}

static const char *leaf_name(const struct Stack *s)
{
	const struct Symbol *u = ss_user_leaf(s);

	return u && u->symbolName ? u->symbolName : "";
}

Test(sysstack, records_carry_the_stack_at_entry_dwarf)
{
	struct PmuTraceAttr a = { .callStack = 1, .symbolMode = RESOLVE_ELF_DWARF };
	struct KperfTraceOpts x = KPERF_OPTS(KperfTraceOpts);
	struct PmuTraceData *d;
	struct PmuTraceStats st;
	struct tu_proc w;
	int pd = ss_trace(&a, &x, &w), n, i, na = 0, nb = 0;

	n = PmuTraceRead(pd, &d);
	cr_assert_eq(n, SS_A + SS_B, "%d records: %s", n, Perror());
	for (i = 0; i < n; i++) {
		const char *leaf;

		cr_assert_not_null(d[i].stack, "record %d has no stack", i);
		/* kernel frames first: the way into the syscall */
		cr_assert_geq(d[i].stack->symbol->addr, 0xffff800000000000ULL,
			      "record %d does not start in the kernel", i);
		leaf = leaf_name(d[i].stack);
		if (!strcmp(leaf, "ppid_from_a")) {
			/* the first 300 calls are ppid_from_a's */
			cr_assert_lt(na + nb, SS_A);
			if (!na)
				assert_leaf(d[i].stack, "ppid_from_a", "SYSSTACK_LINE_A", true);
			na++;
		} else {
			cr_assert_str_eq(leaf, "ppid_from_b");
			if (!nb)
				assert_leaf(d[i].stack, "ppid_from_b", "SYSSTACK_LINE_B", true);
			nb++;
		}
	}
	cr_assert_eq(na, SS_A);
	cr_assert_eq(nb, SS_B);
	PmuTraceDataFree(d);
	cr_assert_eq(PmuTraceGetStats(pd, &st), 0);
	cr_assert_eq(st.stacksLost, 0);
	cr_assert_eq(st.stackSummaryDropped, 0);
	tu_kill(&w);
	tt_finish(pd);
}

Test(sysstack, summary_by_stack_is_exact)
{
	struct PmuTraceAttr a = { .callStack = 1, .symbolMode = RESOLVE_ELF_DWARF };
	struct KperfTraceOpts x = KPERF_OPTS(KperfTraceOpts, .summaryOnly = 1);
	struct KperfTraceStackSummary *s;
	struct PmuTraceSummary *sum;
	struct PmuTraceData *d;
	struct tu_proc w;
	int pd = ss_trace(&a, &x, &w), n, i, ia = -1, ib = -1;

	cr_assert_eq(PmuTraceRead(pd, &d), 0, "summaryOnly: no records");
	n = KperfTraceReadStackSummary(pd, &s);
	cr_assert_eq(n, 2, "%d stacks: %s", n, Perror());
	for (i = 0; i < n; i++) {
		cr_assert_str_eq(s[i].funcs, "getppid");
		cr_assert_eq(s[i].pid, w.pid);
		cr_assert_str_eq(s[i].comm, "sysstack");
		cr_assert_not_null(s[i].stack);
		cr_assert_gt(s[i].kernelFrames, 0);
		if (!strcmp(leaf_name(s[i].stack), "ppid_from_a"))
			ia = i;
		else if (!strcmp(leaf_name(s[i].stack), "ppid_from_b"))
			ib = i;
	}
	cr_assert(ia >= 0 && ib >= 0, "stacks of %s and %s", leaf_name(s[0].stack),
		  leaf_name(s[1].stack));
	cr_assert_eq(s[ia].calls, SS_A);
	cr_assert_eq(s[ib].calls, SS_B);
	cr_assert_eq(s[ia].errors + s[ib].errors, 0);
	assert_leaf(s[ia].stack, "ppid_from_a", "SYSSTACK_LINE_A", true);
	assert_leaf(s[ib].stack, "ppid_from_b", "SYSSTACK_LINE_B", true);
	/* sorted by total time, and the two add up to the syscall's summary */
	cr_assert_geq(s[0].totalNs, s[1].totalNs);
	cr_assert_eq(PmuTraceReadSummary(pd, &sum), 1);
	cr_assert_eq(sum[0].calls, SS_A + SS_B);
	cr_assert_eq(sum[0].totalNs, s[0].totalNs + s[1].totalNs);
	PmuTraceSummaryFree(sum);
	KperfTraceStackSummaryFree(s);
	tu_kill(&w);
	tt_finish(pd);
}

Test(sysstack, elf_only_has_no_lines_and_no_symbols_has_no_stacks)
{
	struct PmuTraceAttr a = { .callStack = 1, .symbolMode = RESOLVE_ELF };
	struct KperfTraceOpts x = KPERF_OPTS(KperfTraceOpts);
	struct PmuTraceData *d;
	struct tu_proc w;
	int pd = ss_trace(&a, &x, &w), n, i;

	n = PmuTraceRead(pd, &d);
	cr_assert_eq(n, SS_A + SS_B);
	assert_leaf(d[0].stack, "ppid_from_a", NULL, false);
	assert_leaf(d[n - 1].stack, "ppid_from_b", NULL, false);
	cr_assert_eq(ss_user_leaf(d[0].stack)->lineNum, 0, "no lines without DWARF");
	PmuTraceDataFree(d);
	tu_kill(&w);
	tt_finish(pd);

	/* libkperf's NO_SYMBOL_RESOLVE: no stack on the records */
	a.symbolMode = NO_SYMBOL_RESOLVE;
	pd = ss_trace(&a, &x, &w);
	n = PmuTraceRead(pd, &d);
	cr_assert_eq(n, SS_A + SS_B);
	for (i = 0; i < n; i++)
		cr_assert_null(d[i].stack);
	PmuTraceDataFree(d);
	tu_kill(&w);
	tt_finish(pd);

	/* and without callStack neither */
	a.callStack = 0;
	a.symbolMode = RESOLVE_ELF_DWARF;
	pd = ss_trace(&a, &x, &w);
	n = PmuTraceRead(pd, &d);
	cr_assert_eq(n, SS_A + SS_B);
	for (i = 0; i < n; i++)
		cr_assert_null(d[i].stack);
	PmuTraceDataFree(d);
	tu_kill(&w);
	tt_finish(pd);
}

Test(sysstack, a_full_stack_map_counts_the_calls_without_their_stack)
{
	struct PmuTraceAttr a = { .callStack = 1, .symbolMode = RESOLVE_ELF };
	/* one stack: the kernel's way into getppid, the same for every call, takes it */
	struct KperfTraceOpts x = KPERF_OPTS(KperfTraceOpts, .summaryOnly = 1, .stackEntries = 1);
	struct KperfTraceStackSummary *s;
	struct PmuTraceStats st;
	struct tu_proc w;
	int pd = ss_trace(&a, &x, &w), n;

	n = KperfTraceReadStackSummary(pd, &s);
	cr_assert_eq(n, 1, "%d stacks", n);
	cr_assert_eq(s[0].calls, SS_A + SS_B);
	cr_assert_null(ss_user_leaf(s[0].stack), "no user stack was kept");
	cr_assert_eq(GetWarn(), KPERF_WARN_RECORDS_DROPPED, "%s", GetWarnMsg());
	cr_assert(strstr(GetWarnMsg(), "500 call stacks were not kept (500: stack map full, "
				       "raise stackEntries"),
		  "%s", GetWarnMsg());
	KperfTraceStackSummaryFree(s);
	cr_assert_eq(PmuTraceGetStats(pd, &st), 0);
	cr_assert_eq(st.stacksLost, SS_A + SS_B);
	tu_kill(&w);
	tt_finish(pd);
}

Test(sysstack, bad_input)
{
	const char *funcs[] = { "getppid" };
	struct PmuTraceAttr a = { .funcs = funcs, .numFuncs = 1, .callStack = 1 };
	struct KperfTraceOpts x = KPERF_OPTS(KperfTraceOpts);
	struct KperfTraceStackSummary *s = (void *)1;
	int pd;

	a.symbolMode = (enum SymbolMode)7;
	cr_assert_eq(PmuTraceOpen(TRACE_SYS_CALL, &a), -1);
	cr_assert_eq(Perrorno(), KPERF_ERR_INVALID_ATTR);
	cr_assert(strstr(Perror(), "symbolMode 7 does not exist: NO_SYMBOL_RESOLVE (0), "
				   "RESOLVE_ELF (1), RESOLVE_ELF_DWARF (2)"),
		  "%s", Perror());

	a.symbolMode = RESOLVE_ELF;
	x.stackEntries = (1U << 20) + 1;
	cr_assert_eq(KperfTraceOpen(TRACE_SYS_CALL, &a, &x), -1);
	cr_assert_eq(Perrorno(), KPERF_ERR_INVALID_ATTR);
	cr_assert(strstr(Perror(), "stackEntries 1048577 is too large (at most 1048576)"), "%s",
		  Perror());

	a.callStack = 0;
	x.stackEntries = 16;
	cr_assert_eq(KperfTraceOpen(TRACE_SYS_CALL, &a, &x), -1);
	cr_assert_eq(Perrorno(), KPERF_ERR_INVALID_ATTR);
	cr_assert_str_eq(Perror(), "stackEntries is for callStack, which is 0");

	/* a trace without callStack has no summary by stack */
	x.stackEntries = 0;
	pd = KperfTraceOpen(TRACE_SYS_CALL, &a, &x);
	cr_assert_gt(pd, 0, "%s", Perror());
	cr_assert_eq(KperfTraceReadStackSummary(pd, &s), -1);
	cr_assert_null(s);
	cr_assert_eq(Perrorno(), KPERF_ERR_INVALID_ATTR);
	cr_assert(strstr(Perror(), "has no summary by stack: open it with callStack"), "%s",
		  Perror());
	cr_assert_eq(KperfTraceReadStackSummary(pd, NULL), -1);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_NULL_POINTER);
	tt_finish(pd);
	cr_assert_eq(KperfTraceReadStackSummary(pd, &s), -1, "a closed trace");
}

/* the raw_syscalls fallback (kernels without BTF or task storage, 5.10's path) takes the
 * same stacks: the same facts */
Test(sysstack, the_fallback_takes_the_same_stacks)
{
	struct PmuTraceAttr a = { .callStack = 1, .symbolMode = RESOLVE_ELF_DWARF };
	struct KperfTraceOpts x = KPERF_OPTS(KperfTraceOpts);
	struct KperfTraceStackSummary *s;
	struct PmuTraceStats st;
	struct PmuTraceData *d;
	struct tu_proc w;
	int pd, n, i, na = 0;

	setenv("KPERF_BPF_FORCE_COMPAT", "1", 1);
	pd = ss_trace(&a, &x, &w);
	cr_assert_eq(PmuTraceGetStats(pd, &st), 0);
	cr_assert_eq(st.fallback, 1);
	n = PmuTraceRead(pd, &d);
	cr_assert_eq(n, SS_A + SS_B);
	for (i = 0; i < n; i++)
		na += !strcmp(leaf_name(d[i].stack), "ppid_from_a");
	cr_assert_eq(na, SS_A);
	assert_leaf(d[n - 1].stack, "ppid_from_b", "SYSSTACK_LINE_B", true);
	PmuTraceDataFree(d);
	n = KperfTraceReadStackSummary(pd, &s);
	cr_assert_eq(n, 2, "%d stacks", n);
	cr_assert_eq(s[0].calls + s[1].calls, SS_A + SS_B);
	cr_assert(s[0].calls == SS_A || s[1].calls == SS_A);
	KperfTraceStackSummaryFree(s);
	tu_kill(&w);
	tt_finish(pd);
	unsetenv("KPERF_BPF_FORCE_COMPAT");
}

/* the stacks of `write` calls made through stdio by nofp (-O2, no frame pointers, and
 * Debian's libc, built the same way): main -> write_path -> fflush -> ... -> write */
static struct KperfTraceStackSummary *nofp_writes(unsigned call_graph, int *n, int *pd)
{
	static const char *funcs[] = { "write" };
	char *argv[] = { "nofp", "--writes", "40", NULL };
	struct PmuTraceAttr a = { .funcs = funcs, .numFuncs = 1, .callStack = 1 };
	struct KperfTraceOpts x =
		KPERF_OPTS(KperfTraceOpts, .summaryOnly = 1, .callGraph = call_graph);
	struct KperfTraceStackSummary *s = NULL;
	struct tu_proc w = tu_spawn_v(argv, 0);
	int pid = w.pid;

	cr_assert_gt(pid, 0);
	a.symbolMode = RESOLVE_ELF;
	a.pidList = &pid;
	a.numPid = 1;
	*pd = KperfTraceOpen(TRACE_SYS_CALL, &a, &x);
	cr_assert_gt(*pd, 0, "KperfTraceOpen: %d %s", Perrorno(), Perror());
	cr_assert_eq(PmuTraceEnable(*pd), 0, "%s", Perror());
	tu_go(&w);
	cr_assert_eq(tu_wait(&w), 0);
	cr_assert_eq(PmuTraceDisable(*pd), 0);
	*n = KperfTraceReadStackSummary(*pd, &s);
	cr_assert_geq(*n, 1, "%d stacks: %s", *n, Perror());
	return s;
}

/* frame <name> among the user frames of <s>: its depth from the leaf, -1 when absent */
static int user_depth(const struct Stack *s, unsigned kframes, const char *name)
{
	unsigned i = 0;

	for (; s; s = s->next, i++)
		if (i >= kframes && s->symbol && s->symbol->symbolName &&
		    !strcmp(s->symbol->symbolName, name))
			return (int)(i - kframes);
	return -1;
}

Test(sysstack, libc_call_paths_reach_main_with_the_eh_frame_unwinder)
{
	struct KperfTraceStackSummary *s;
	int n, i, pd, from_path = -1;

	s = nofp_writes(KPERF_CALL_GRAPH_DWARF, &n, &pd);
	for (i = 0; i < n; i++) {
		cr_assert_str_eq(s[i].funcs, "write");
		/* (the other writes: main's printf, and exit's flush after main returned) */
		if (user_depth(s[i].stack, s[i].kernelFrames, "write_path") >= 0) {
			cr_assert_eq(from_path, -1, "two stacks through write_path");
			from_path = i;
		}
	}
	cr_assert_geq(from_path, 0, "no stack through write_path");
	cr_assert_eq(s[from_path].calls, 40);
	cr_assert_geq(user_depth(s[from_path].stack, s[from_path].kernelFrames, "fflush"), 1);
	cr_assert_eq(user_depth(s[from_path].stack, s[from_path].kernelFrames, "main"),
		     user_depth(s[from_path].stack, s[from_path].kernelFrames, "write_path") + 1,
		     "the stack through write_path does not reach main");
	KperfTraceStackSummaryFree(s);
	tt_finish(pd);

	/* frame pointers only. x86_64: libc has none, the stack stops in it. aarch64: libc keeps
	 * frame records, and the record of the libc function write_path called holds the return
	 * address into write_path; but write_path (-fomit-frame-pointer) has no record of its
	 * own, so the walk goes on from the frame it was entered with and never finds its
	 * caller, main, which only .eh_frame gives */
	s = nofp_writes(KPERF_CALL_GRAPH_FP, &n, &pd);
	for (i = 0; i < n; i++) {
#if defined(__aarch64__)
		if (user_depth(s[i].stack, s[i].kernelFrames, "write_path") >= 0)
			cr_assert_lt(user_depth(s[i].stack, s[i].kernelFrames, "main"), 0,
				     "frame pointers alone found main above write_path");
#else
		cr_assert_lt(user_depth(s[i].stack, s[i].kernelFrames, "write_path"), 0);
#endif
	}
	KperfTraceStackSummaryFree(s);
	tt_finish(pd);
}
