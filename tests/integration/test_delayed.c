/*
 * test_delayed.c - RESOLVE_DELAY_ELF / RESOLVE_DELAY_DWARF: PmuRead returns records without
 * stacks (as libkperf's), ResolvePmuDataSymbol fills them in place after the workload exited
 * and after PmuClose, with exactly what immediate resolution gives for the same callchains;
 * PmuAppendData keeps the callchains; the arrays hold the process's symbols until freed; every
 * bad argument with libkperf's code.
 */
#include <criterion/criterion.h>

#include "export/export.h"
#include "kperf/kperf.h"
#include "pmu/pmu.h"
#include "sym/sym.h"
#include "testutil.h"

static unsigned marker_line(const char *marker)
{
	char path[4096], line[512];
	unsigned n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/tests/workloads/cpuburn.c", KPERF_SRCDIR);
	f = fopen(path, "r");
	cr_assert_not_null(f, "%s", path);
	while (fgets(line, sizeof(line), f)) {
		n++;
		if (strstr(line, marker)) {
			fclose(f);
			return n;
		}
	}
	fclose(f);
	cr_assert_fail("no %s in cpuburn.c", marker);
	return 0;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t a = s ? strlen(s) : 0, b = strlen(suffix);

	return a >= b && !strcmp(s + a - b, suffix);
}

/* sample cpuburn until it exits; the task stays open (returned in *pd) */
static int sample_cpuburn(enum SymbolMode mode, const char *ms, struct PmuData **d, int *pd)
{
	char *argv[] = { "cpuburn", "--ms", (char *)ms, "--wait", NULL };
	char *evts[] = { "cpu-clock" };
	struct tu_proc w = tu_spawn_v(argv, 0);
	int pids[1] = { w.pid }, n;
	struct PmuAttr a = { .evtList = evts,
			     .numEvt = 1,
			     .pidList = pids,
			     .numPid = 1,
			     .useFreq = 1,
			     .freq = 999,
			     .callStack = 1,
			     .symbolMode = mode };

	cr_assert_gt(w.pid, 0);
	*pd = PmuOpen(SAMPLING, &a);
	cr_assert_gt(*pd, 0, "PmuOpen: %d %s", Perrorno(), Perror());
	cr_assert_eq(PmuEnable(*pd), 0, "%s", Perror());
	tu_go(&w);
	cr_assert_eq(tu_wait(&w), 0);
	PmuDisable(*pd);
	n = PmuRead(*pd, d);
	cr_assert_gt(n, 0, "PmuRead: %d %s", n, Perror());
	return n;
}

static void same_symbol(const struct Symbol *x, const struct Symbol *y)
{
	cr_assert_eq(x->addr, y->addr);
	cr_assert_str_eq(x->module, y->module);
	cr_assert_str_eq(x->symbolName, y->symbolName);
	cr_assert_str_eq(x->mangleName, y->mangleName);
	cr_assert_str_eq(x->fileName, y->fileName, "%s", x->symbolName);
	cr_assert_eq(x->lineNum, y->lineNum, "%s", x->symbolName);
	cr_assert_eq(x->firstLine, y->firstLine, "%s", x->symbolName);
	cr_assert_eq(x->offset, y->offset);
	cr_assert_eq(x->codeMapAddr, y->codeMapAddr);
	cr_assert_eq(x->codeMapEndAddr, y->codeMapEndAddr);
	cr_assert_str_eq(x->mntPoint, y->mntPoint);
}

Test(delayed, dwarf_resolves_after_exit_and_close_as_immediate_resolution_does)
{
	unsigned hot = marker_line("HOT_LINE"), decl = marker_line("unsigned long hot_loop(");
	struct kp_sym_stats before, after;
	struct kp_hot_list hl;
	struct PmuData *d;
	int pd, n, i, leaf_hot = 0, frames = 0;

	n = sample_cpuburn(RESOLVE_DELAY_DWARF, "300", &d, &pd);
	for (i = 0; i < n; i++) {
		const struct kp_data_chain *c = kp_data_chain_of(d, (size_t)i);

		cr_assert_null(d[i].stack, "no stack before ResolvePmuDataSymbol");
		cr_assert_not_null(c, "record %d keeps its callchain", i);
		cr_assert(c->pending);
		cr_assert_gt(c->n, 1, "callStack: more than the sampled ip");
		cr_assert_eq(c->flags, KP_SYM_DWARF);
	}
	PmuClose(pd);
	cr_assert_eq(tu_bpf_fds(), 0, "BPF objects left open");
	cr_assert_eq(ResolvePmuDataSymbol(d), SUCCESS, "%d %s", Perrorno(), Perror());
	cr_assert_eq(Perrorno(), SUCCESS);
	for (i = 0; i < n; i++) {
		const struct kp_data_chain *c = kp_data_chain_of(d, (size_t)i);
		const struct Stack *s = d[i].stack, *r;
		struct Stack *ref;

		cr_assert_not_null(s, "record %d resolved", i);
		cr_assert(!c->pending);
		/* what PmuRead would have given under RESOLVE_ELF_DWARF for these addresses */
		cr_assert_eq(kp_sym_resolve_stack(d[i].pid, c->ips, c->n, KP_SYM_DWARF, &ref), 0);
		for (r = ref; s && r; s = s->next, r = r->next, frames++)
			same_symbol(s->symbol, r->symbol);
		cr_assert(!s && !r, "record %d: as many frames as immediate resolution", i);
		if (!strcmp(d[i].stack->symbol->symbolName, "hot_loop")) {
			cr_assert(ends_with(d[i].stack->symbol->module, "/workloads/cpuburn"));
			cr_assert(ends_with(d[i].stack->symbol->fileName,
					    "tests/workloads/cpuburn.c"));
			cr_assert_eq(d[i].stack->symbol->firstLine, decl);
			leaf_hot += d[i].stack->symbol->lineNum == hot;
		}
	}
	cr_assert_gt(leaf_hot * 10, n * 7, "%d of %d samples on hot_loop's line %u", leaf_hot, n,
		     hot);
	cr_assert_gt(frames, n * 2);
	cr_assert_eq(kp_hot_functions(d, n, &hl), 0);
	cr_assert_str_eq(hl.fns[0].name, "hot_loop");
	cr_assert_eq(hl.fns[0].line, hot);
	kp_hot_list_free(&hl);
	/* resolved once: a second call changes nothing */
	{
		struct Stack *first = d[0].stack;

		cr_assert_eq(ResolvePmuDataSymbol(d), SUCCESS);
		cr_assert_eq(d[0].stack, first);
	}
	/* the array held the process's symbols; freeing it lets the resolver forget them */
	kp_sym_get_stats(&before);
	PmuDataFree(d);
	kp_sym_get_stats(&after);
	cr_assert_eq(before.procs - after.procs, 1, "%u processes known, then %u", before.procs,
		     after.procs);
}

Test(delayed, elf_has_names_but_no_lines)
{
	struct PmuData *d;
	int pd, n, i, hot = 0;

	n = sample_cpuburn(RESOLVE_DELAY_ELF, "200", &d, &pd);
	for (i = 0; i < n; i++)
		cr_assert_null(d[i].stack);
	cr_assert_eq(kp_data_chain_of(d, 0)->flags, 0);
	cr_assert_eq(ResolvePmuDataSymbol(d), SUCCESS, "%s", Perror());
	PmuClose(pd);
	for (i = 0; i < n; i++) {
		const struct Stack *s;

		cr_assert_not_null(d[i].stack);
		for (s = d[i].stack; s; s = s->next) {
			cr_assert_eq(s->symbol->lineNum, 0);
			cr_assert_eq(s->symbol->firstLine, 0);
			cr_assert_str_eq(s->symbol->fileName, "");
		}
		hot += !strcmp(d[i].stack->symbol->symbolName, "hot_loop");
	}
	cr_assert_gt(hot * 10, n * 7, "%d of %d on hot_loop", hot, n);
	PmuDataFree(d);
}

Test(delayed, append_keeps_the_callchains)
{
	struct PmuData *d, *acc = NULL;
	int pd, n, i;

	n = sample_cpuburn(RESOLVE_DELAY_DWARF, "100", &d, &pd);
	PmuClose(pd);
	cr_assert_eq(PmuAppendData(d, &acc), n, "%s", Perror());
	cr_assert_eq(PmuAppendData(d, &acc), 2 * n, "%s", Perror());
	for (i = 0; i < 2 * n; i++)
		cr_assert_null(acc[i].stack);
	PmuDataFree(d); /* the copy holds the process's symbols on its own */
	cr_assert_eq(ResolvePmuDataSymbol(acc), SUCCESS, "%s", Perror());
	for (i = 0; i < 2 * n; i++) {
		cr_assert_not_null(acc[i].stack, "record %d", i);
		cr_assert_str_eq(acc[i].stack->symbol->symbolName,
				 acc[i % n].stack->symbol->symbolName);
		cr_assert_eq(acc[i].stack->symbol->lineNum, acc[i % n].stack->symbol->lineNum);
	}
	PmuDataFree(acc);
}

Test(delayed, bad_arrays_have_libkperf_s_codes)
{
	struct PmuData own[2] = { 0 }, *d;
	int pd, n, i;

	cr_assert_eq(ResolvePmuDataSymbol(NULL), LIBPERF_ERR_INVALID_PMU_DATA);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_INVALID_PMU_DATA);
	cr_assert(strstr(Perror(), "pmuData is NULL"), "%s", Perror());
	cr_assert_eq(ResolvePmuDataSymbol(own), LIBPERF_ERR_PMU_DATA_NO_FOUND);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_PMU_DATA_NO_FOUND);
	cr_assert(strstr(Perror(), "was not returned by PmuRead"), "%s", Perror());
	/* freed */
	n = sample_cpuburn(RESOLVE_DELAY_ELF, "50", &d, &pd);
	PmuClose(pd);
	PmuDataFree(d);
	cr_assert_eq(ResolvePmuDataSymbol(d), LIBPERF_ERR_PMU_DATA_NO_FOUND);
	/* arrays of the other modes: nothing to do */
	n = sample_cpuburn(RESOLVE_ELF, "50", &d, &pd);
	PmuClose(pd);
	{
		struct Stack *first = d[0].stack;

		cr_assert_not_null(first);
		cr_assert_null(kp_data_chain_of(d, 0));
		cr_assert_eq(ResolvePmuDataSymbol(d), SUCCESS, "%s", Perror());
		cr_assert_eq(d[0].stack, first);
	}
	PmuDataFree(d);
	n = sample_cpuburn(NO_SYMBOL_RESOLVE, "50", &d, &pd);
	PmuClose(pd);
	cr_assert_eq(ResolvePmuDataSymbol(d), SUCCESS, "%s", Perror());
	for (i = 0; i < n; i++)
		cr_assert_null(d[i].stack);
	PmuDataFree(d);
}
