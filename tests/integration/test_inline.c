/*
 * test_inline.c - inline frames where stacks are shown: PmuRead's stacks with
 * KperfPmuOpts.inlineFrames (immediate and delayed resolution), `kperf-bpf record --dwarf` in
 * folded stacks, in its summary and in pprof as `go tool pprof -lines` reads it, --no-inline,
 * and the refusals of inlineFrames without DWARF.
 *
 * The workload inline_cxx --ms N burns CPU in leaf(), inlined into mid(), into top(), into
 * chain() (tests/workloads/inline_cxx.cpp, built -O2; its INL_* comments mark the lines).
 */
#include <criterion/criterion.h>

#include "kperf/kperf.h"
#include "testutil.h"

#define SRC KPERF_SRCDIR "/tests/workloads/inline_cxx.cpp"

static unsigned line_of(const char *marker)
{
	char line[512];
	unsigned n = 0;
	FILE *f = fopen(SRC, "r");

	cr_assert_not_null(f);
	while (fgets(line, sizeof(line), f)) {
		n++;
		if (strstr(line, marker)) {
			fclose(f);
			return n;
		}
	}
	fclose(f);
	cr_assert_fail("no %s in %s", marker, SRC);
	return 0;
}

static bool inlined(const struct Symbol *s)
{
	struct KperfSymbolInfo info = { sizeof(info) };

	cr_assert_eq(KperfSymbolGetInfo(s, &info), 0, "%s", Perror());
	return info.inlined;
}

/* sample the workload (released after the enable) until it exits; PmuRead's records */
static int sample(enum SymbolMode mode, unsigned inline_frames, struct PmuData **d)
{
	char *argv[] = { "inline_cxx", "--ms", "400", "--wait", NULL };
	char *evts[] = { "cpu-clock" };
	struct tu_proc w = tu_spawn_v(argv, 0);
	struct PmuAttr a = { .evtList = evts,
			     .numEvt = 1,
			     .useFreq = 1,
			     .freq = 999,
			     .callStack = 1,
			     .symbolMode = mode };
	int pids[1] = { w.pid }, pd, n;

	cr_assert_gt(w.pid, 0);
	a.pidList = pids;
	a.numPid = 1;
	pd = KperfOpen(SAMPLING, &a, &KPERF_OPTS(KperfPmuOpts, .inlineFrames = inline_frames));
	cr_assert_gt(pd, 0, "%s", Perror());
	cr_assert_eq(PmuEnable(pd), 0, "%s", Perror());
	tu_go(&w);
	cr_assert_eq(tu_wait(&w), 0);
	PmuDisable(pd);
	n = PmuRead(pd, d);
	cr_assert_gt(n, 0, "%s", Perror());
	PmuClose(pd);
	cr_assert_eq(tu_bpf_fds(), 0, "BPF objects left open");
	return n;
}

/* records whose stack has leaf, mid, top inlined, then chain, with their lines */
static int count_chains(const struct PmuData *d, int n)
{
	const char *names[] = { "leaf", "mid", "top", "chain(unsigned int)" };
	unsigned lines[] = { line_of("INL_LEAF"), line_of("INL_MID_CALL"), line_of("INL_TOP_CALL"),
			     line_of("INL_CHAIN_CALL") };
	int i, k, found = 0;

	for (i = 0; i < n; i++) {
		const struct Stack *st = d[i].stack;

		if (!st || strcmp(st->symbol->symbolName, "leaf"))
			continue;
		for (k = 0; k < 4; k++, st = st->next) {
			cr_assert_not_null(st);
			cr_assert_str_eq(st->symbol->symbolName, names[k]);
			cr_assert_eq(st->symbol->lineNum, lines[k], "%s", names[k]);
			cr_assert_eq(inlined(st->symbol), k < 3, "%s", names[k]);
			cr_assert_eq(st->symbol->addr, d[i].stack->symbol->addr,
				     "an address's frames share it");
		}
		found++;
	}
	return found;
}

Test(inline_frames, in_pmu_read_stacks)
{
	struct PmuData *d = NULL;
	int n = sample(RESOLVE_ELF_DWARF, 1, &d), i;

	cr_assert_gt(count_chains(d, n), 0, "no sample in leaf() with its inline chain");
	PmuDataFree(d);
	/* without the option: libkperf's stacks */
	n = sample(RESOLVE_ELF_DWARF, 0, &d);
	for (i = 0; i < n; i++) {
		const struct Stack *st;

		for (st = d[i].stack; st; st = st->next) {
			cr_assert_not(inlined(st->symbol));
			cr_assert_str_neq(st->symbol->symbolName, "leaf");
		}
	}
	PmuDataFree(d);
}

/* perf.data from records with inline frames: each address once in a callchain (the inline
 * frames share their function's address; perf finds inlined calls itself) */
Test(inline_frames, perf_data_callchains_have_each_address_once)
{
	char *evts[] = { "cpu-clock" };
	struct PmuAttr a = { .evtList = evts,
			     .numEvt = 1,
			     .useFreq = 1,
			     .freq = 999,
			     .callStack = 1,
			     .symbolMode = RESOLVE_ELF_DWARF };
	char path[64], cmd[256], *out, *line, prev[64] = "";
	struct PmuData *d = NULL;
	int n = sample(RESOLVE_ELF_DWARF, 1, &d), status, in_chain = 0;
	PmuFile f;

	cr_assert_gt(count_chains(d, n), 0);
	snprintf(path, sizeof(path), "/tmp/kperf-inline-%d.data", getpid());
	f = PmuBeginWrite(path, &a, 0);
	cr_assert_not_null(f, "%s", Perror());
	cr_assert_eq(PmuWriteData(f, d, n), SUCCESS, "%s", Perror());
	PmuEndWrite(f);
	PmuDataFree(d);
	snprintf(cmd, sizeof(cmd), "perf script -i %s -F ip,sym 2>/dev/null", path);
	out = tu_run(cmd, &status);
	unlink(path);
	cr_assert_eq(status, 0);
	for (line = out; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
		char ip[64] = "", sym[256] = "";

		if (sscanf(line, " %63s %255s", ip, sym) < 1 || *line == '\n') {
			prev[0] = '\0'; /* a blank line ends a sample's callchain */
			continue;
		}
		cr_assert_str_neq(ip, prev, "an address twice in a row: %s", line);
		snprintf(prev, sizeof(prev), "%s", ip);
		in_chain += !strcmp(sym, "chain");
	}
	cr_assert_gt(in_chain, 0, "no frame of chain() in perf script's callchains");
	free(out);
}

Test(inline_frames, in_delayed_resolution)
{
	struct PmuData *d = NULL;
	int n = sample(RESOLVE_DELAY_DWARF, 1, &d), i;

	for (i = 0; i < n; i++)
		cr_assert_null(d[i].stack);
	cr_assert_eq(ResolvePmuDataSymbol(d), SUCCESS, "%s", Perror());
	cr_assert_gt(count_chains(d, n), 0);
	PmuDataFree(d);
}

Test(inline_frames, need_dwarf)
{
	char *evts[] = { "cpu-clock" };
	struct PmuAttr a = {
		.evtList = evts, .numEvt = 1, .useFreq = 1, .freq = 99, .symbolMode = RESOLVE_ELF
	};

	cr_assert_eq(KperfOpen(SAMPLING, &a, &KPERF_OPTS(KperfPmuOpts, .inlineFrames = 1)), -1);
	cr_assert_eq(Perrorno(), KPERF_ERR_INVALID_ATTR);
	cr_assert_str_eq(Perror(), "inlineFrames needs symbolMode RESOLVE_ELF_DWARF or "
				   "RESOLVE_DELAY_DWARF: inline frames come from DWARF");
	a.symbolMode = RESOLVE_ELF_DWARF;
	cr_assert_eq(KperfOpen(SAMPLING, &a, &KPERF_OPTS(KperfPmuOpts, .inlineFrames = 2)), -1);
	cr_assert_eq(Perrorno(), KPERF_ERR_INVALID_ATTR);
	cr_assert_str_eq(Perror(), "inlineFrames is 0 or 1, not 2");
	cr_assert_eq(tu_bpf_fds(), 0);
}

/* ---- the command ---- */

static char *record(const char *args, int *status)
{
	char cmd[2048];

	snprintf(cmd, sizeof(cmd),
		 "%s/bin/kperf-bpf record -g %s -- %s/workloads/inline_cxx --ms 400", tu_build(),
		 args, tu_build());
	return tu_run(cmd, status);
}

Test(inline_frames, record_folded_and_summary)
{
	char want[256], *out;
	int status;

	out = record("--dwarf --format folded 2>/dev/null", &status);
	cr_assert_eq(status, 0, "%s", out);
	cr_assert(strstr(out, ";chain(unsigned_int);top_[i];mid_[i];leaf_[i] "), "%s", out);
	free(out);
	out = record("--dwarf 2>/dev/null", &status);
	cr_assert_eq(status, 0, "%s", out);
	snprintf(want, sizeof(want), "leaf (inlined)");
	cr_assert(strstr(out, want), "%s", out);
	snprintf(want, sizeof(want), "tests/workloads/inline_cxx.cpp:%u", line_of("INL_LEAF"));
	cr_assert(strstr(out, want), "%s", out);
	free(out);
	out = record("--dwarf --no-inline --format folded 2>/dev/null", &status);
	cr_assert_eq(status, 0, "%s", out);
	cr_assert_null(strstr(out, "_[i]"), "%s", out);
	cr_assert(strstr(out, ";chain(unsigned_int) "), "%s", out);
	free(out);
	out = record("--no-inline 2>&1", &status);
	cr_assert_eq(status, 1);
	cr_assert(strstr(out, "kperf-bpf record: --no-inline goes with --dwarf (inlined calls are "
			      "known from DWARF only)"),
		  "%s", out);
	free(out);
}

Test(inline_frames, pprof_lines_show_the_inlined_function)
{
	char cmd[2048], file[64], want[256], *out;
	int status;

	if (system("command -v go >/dev/null 2>&1"))
		cr_skip_test("go is not installed (apt-get install golang-go)");
	snprintf(file, sizeof(file), "/tmp/kperf-inline-%d.pb.gz", getpid());
	snprintf(cmd, sizeof(cmd), "--dwarf -o %s >/dev/null 2>&1", file);
	out = record(cmd, &status);
	cr_assert_eq(status, 0);
	free(out);
	snprintf(cmd, sizeof(cmd),
		 "HOME=/tmp GOCACHE=/tmp/kperf-gocache go tool pprof -lines -top %s 2>&1", file);
	out = tu_run(cmd, &status);
	unlink(file);
	cr_assert_eq(status, 0, "%s", out);
	/* "  45.05ms 25.14% ... leaf /.../inline_cxx.cpp:35 (inline)" */
	snprintf(want, sizeof(want), " leaf %s:%u (inline)\n", SRC, line_of("INL_LEAF"));
	cr_assert(strstr(out, want), "no '%s' in:\n%s", want, out);
	snprintf(want, sizeof(want), " mid %s:%u (inline)\n", SRC, line_of("INL_MID_CALL"));
	cr_assert(strstr(out, want), "no '%s' in:\n%s", want, out);
	free(out);
}
