/*
 * test_unwind.c - user stacks unwound in BPF from .eh_frame tables (KperfPmuOpts callGraph,
 * `record --call-graph`): the -O2 -fomit-frame-pointer workload (tests/workloads/nofp.c)
 * sampled with the default (dwarf) reaches main on at least 90% of its samples, its callers
 * carry their share, and the qsort callback has qsort's caller and main above it; frame
 * pointers alone (callGraph FP) do not reach main; a bad callGraph is refused with its
 * message; the CLI's --call-graph values.
 */
#include <criterion/criterion.h>

#include "export/export.h"
#include "kperf/kperf.h"
#include "testutil.h"

TestSuite(unwind, .timeout = 120);

struct shares {
	unsigned long samples, main, leaf_cmp, cmp_full, path[3], dl_leaf, dl_full, vdso, vdso_full,
		vdso_clock;
	struct KperfUnwindStats uw; /* how the stacks were unwound (said when a count fails) */
};

/* read <fd> until <word> (a line of its own) came; false at its end before */
static bool read_until_line(int fd, const char *word)
{
	char buf[4096], want[64];
	size_t got = 0;
	ssize_t n;

	snprintf(want, sizeof(want), "\n%s\n", word);
	buf[0] = '\n';
	got = 1;
	while (got < sizeof(buf) - 1 && (n = read(fd, buf + got, sizeof(buf) - 1 - got)) > 0) {
		got += (size_t)n;
		buf[got] = '\0';
		if (strstr(buf, want))
			return true;
	}
	return false;
}

static bool in_vdso(const struct Stack *s)
{
	for (; s; s = s->next)
		if (s->symbol && s->symbol->module && !strcmp(s->symbol->module, "[vdso]"))
			return true;
	return false;
}

static bool has(const struct Stack *s, const char *name)
{
	for (; s; s = s->next)
		if (s->symbol && s->symbol->symbolName && !strcmp(s->symbol->symbolName, name))
			return true;
	return false;
}

/* sample nofp (-O2, no frame pointers) for <ms> of its CPU time; <opt>: one more option */
static struct shares profile(unsigned call_graph, int ms, char *opt)
{
	char msbuf[16], *evts[] = { "cpu-clock" };
	char *argv[] = { "nofp", "--ms", msbuf, opt, NULL };
	struct KperfPmuOpts o = { .sz = sizeof(o), .callGraph = call_graph };
	struct PmuAttr a = { .useFreq = 1, .freq = 999, .callStack = 1, .symbolMode = RESOLVE_ELF };
	struct shares sh = { 0 };
	struct PmuData *d;
	struct tu_proc w;
	int pids[1], pd, n, i;

	snprintf(msbuf, sizeof(msbuf), "%d", ms);
	w = tu_spawn_v(argv, 1);
	cr_assert_gt(w.pid, 0);
	pids[0] = w.pid;
	a.evtList = evts;
	a.numEvt = 1;
	a.pidList = pids;
	a.numPid = 1;
	pd = KperfOpen(SAMPLING, &a, &o);
	cr_assert_gt(pd, 0, "KperfOpen: %d %s", Perrorno(), Perror());
	cr_assert_eq(PmuEnable(pd), 0, "%s", Perror());
	if (opt && !strcmp(opt, "--dl")) {
		/* the library opened, the workload waits until its table is in the kernel (the
		 * tables placed grow by one: the mmap side band's reload), then burns in it */
		struct KperfUnwindStats u0, u;

		cr_assert_eq(KperfPmuGetUnwindStats(pd, &u0), 0);
		cr_assert_eq(write(w.go_fd, "g\n", 2), 2);
		cr_assert(read_until_line(w.out_fd, "opened"),
			  "nofp --dl did not open its library");
		u = u0;
		for (i = 0; i < 6000 && u.tables == u0.tables; i++) {
			tu_sleep_ms(10);
			cr_assert_eq(KperfPmuGetUnwindStats(pd, &u), 0);
		}
		cr_assert_gt(u.tables, u0.tables, "libnofpdl.so's table was never loaded");
	}
	tu_go(&w);
	cr_assert_eq(tu_wait(&w), 0);
	close(w.out_fd);
	PmuDisable(pd);
	n = PmuRead(pd, &d);
	cr_assert_geq(n, 0, "PmuRead: %s", Perror());
	cr_assert_eq(KperfPmuGetUnwindStats(pd, &sh.uw), 0);
	for (i = 0; i < n; i++) {
		const struct Stack *s = d[i].stack;
		unsigned long c = d[i].count ? d[i].count : 1;

		if (!s || !s->symbol || strcmp(d[i].comm, "nofp"))
			continue;
		sh.samples += c;
		if (has(s, "main"))
			sh.main += c;
		if (has(s, "path_a"))
			sh.path[0] += c;
		if (has(s, "path_b") && has(s, "mid_b"))
			sh.path[1] += c;
		if (has(s, "path_sort"))
			sh.path[2] += c;
		if (s->symbol->symbolName && !strcmp(s->symbol->symbolName, "leaf_cmp")) {
			sh.leaf_cmp += c;
			if (has(s, "sort_cmp") && has(s, "path_sort") && has(s, "run_all") &&
			    has(s, "main"))
				sh.cmp_full += c;
		}
		if (s->symbol->symbolName && !strcmp(s->symbol->symbolName, "dl_leaf")) {
			sh.dl_leaf += c;
			if (has(s, "dl_mid") && has(s, "dl_run") && has(s, "run_dl") &&
			    has(s, "main"))
				sh.dl_full += c;
		}
		if (in_vdso(s)) {
			sh.vdso += c;
			sh.vdso_full += has(s, "main") ? c : 0;
			sh.vdso_clock += has(s, "run_clock") && has(s, "main") ? c : 0;
		}
	}
	PmuDataFree(d);
	PmuClose(pd);
	cr_assert_eq(tu_bpf_fds(), 0, "BPF objects left open");
	return sh;
}

Test(unwind, dwarf_reaches_main_without_frame_pointers)
{
	struct shares sh = profile(KPERF_CALL_GRAPH_DWARF, 800, NULL);
	unsigned k;

	cr_assert_gt(sh.samples, 200, "%lu samples", sh.samples);
	cr_assert_geq(sh.main * 100, sh.samples * 90, "%lu of %lu samples reach main", sh.main,
		      sh.samples);
	/* each path of run_all holds a real share of the time */
	for (k = 0; k < 3; k++)
		cr_assert_geq(sh.path[k] * 100, sh.samples * 5, "path %u: %lu of %lu", k,
			      sh.path[k], sh.samples);
	/* through libc's qsort: the callback's samples have the sort's caller and main above */
	cr_assert_gt(sh.leaf_cmp, 10, "%lu samples in leaf_cmp", sh.leaf_cmp);
	cr_assert_geq(sh.cmp_full * 100, sh.leaf_cmp * 90, "%lu of %lu callback samples whole",
		      sh.cmp_full, sh.leaf_cmp);
}

/* code mapped after the process started: nofp --dl opens a library without frame pointers
 * once sampled, waits (without CPU) until the library's table is in the kernel, then burns in
 * it. The mapping's table is loaded when it appears (the mmap side band), so no sample stops
 * at it: every sample in the library's leaf has the library's callers, the program's caller
 * and main above it. */
Test(unwind, dlopened_code_without_frame_pointers)
{
	struct shares sh = profile(KPERF_CALL_GRAPH_DWARF, 500, "--dl");

	cr_assert_gt(sh.dl_leaf, 200, "%lu samples in dl_leaf", sh.dl_leaf);
	cr_assert_eq(sh.dl_full, sh.dl_leaf,
		     "%lu of %lu samples in dl_leaf whole (stacks: %llu not loaded, %llu at an "
		     "unknown mapping, %llu without registers, %llu truncated)",
		     sh.dl_full, sh.dl_leaf, sh.uw.stacksNotLoaded, sh.uw.stacksUnknownMap,
		     sh.uw.stacksNoRegs, sh.uw.stacksTruncated);
}

/* the vdso unwinds from its own table (its image read from the process): every sample in
 * the vdso reaches main, the first instructions of its functions (before a frame pointer is
 * set) and its frameless helpers included; run_clock's calls are seen through it (main's
 * own calls, the CPU-time clock of its loop, go through the vdso into the kernel) */
Test(unwind, vdso_frames)
{
	struct shares sh = profile(KPERF_CALL_GRAPH_DWARF, 500, "--clock");

	cr_assert_gt(sh.vdso, 100, "%lu samples in the vdso", sh.vdso);
	cr_assert_eq(sh.vdso_full, sh.vdso, "%lu of %lu samples in the vdso reach main",
		     sh.vdso_full, sh.vdso);
	cr_assert_gt(sh.vdso_clock, 100, "%lu samples in the vdso under run_clock", sh.vdso_clock);
}

Test(unwind, frame_pointers_alone_do_not)
{
	struct shares sh = profile(KPERF_CALL_GRAPH_FP, 400, NULL);

	cr_assert_gt(sh.samples, 100, "%lu samples", sh.samples);
	cr_assert_lt(sh.main * 100, sh.samples * 50, "%lu of %lu samples reach main by fp", sh.main,
		     sh.samples);
}

Test(unwind, bad_call_graph)
{
	char *evts[] = { "cpu-clock" };
	struct KperfPmuOpts o = { .sz = sizeof(o), .callGraph = 7 };
	struct PmuAttr a = {
		.useFreq = 1, .freq = 99, .callStack = 1, .evtList = evts, .numEvt = 1
	};
	int pids[1] = { getpid() };

	a.pidList = pids;
	a.numPid = 1;
	cr_assert_lt(KperfOpen(SAMPLING, &a, &o), 0);
	cr_assert(strstr(Perror(), "callGraph is KPERF_CALL_GRAPH_DWARF (0) or KPERF_CALL_GRAPH_FP "
				   "(1), not 7"),
		  "%s", Perror());
	cr_assert_eq(tu_bpf_fds(), 0);
}

Test(unwind, cli_call_graph_values)
{
	char cmd[4096], *out;
	int st;

	snprintf(cmd, sizeof(cmd), "%s/bin/kperf-bpf record --call-graph lbr -- true 2>&1",
		 tu_build());
	out = tu_run(cmd, &st);
	cr_assert_neq(st, 0);
	cr_assert(strstr(out, "--call-graph is dwarf or fp, not 'lbr'"), "%s", out);
	free(out);
	snprintf(cmd, sizeof(cmd),
		 "%s/bin/kperf-bpf record --call-graph dwarf --format folded -- "
		 "%s/workloads/nofp --ms 300 --nowait 2>/dev/null",
		 tu_build(), tu_build());
	out = tu_run(cmd, &st);
	cr_assert_eq(st, 0, "%s", out);
	cr_assert(strstr(out, "main;run_all;path_sort;"), "no stack through path_sort:\n%s", out);
	free(out);
}

/* the count of a folded line of <comm>, and whether its stack reaches the program's entry
 * (main, or _start and __libc_start_main where main tail-calls, as python3's does) */
static unsigned long folded_line(const char *line, size_t len, const char *comm, bool *whole)
{
	char buf[16384];
	const char *sp;

	if (len >= sizeof(buf))
		len = sizeof(buf) - 1;
	memcpy(buf, line, len);
	buf[len] = '\0';
	sp = strrchr(buf, ' ');
	if (!sp || strncmp(buf, comm, strlen(comm)) || buf[strlen(comm)] != ';')
		return 0;
	*whole = strstr(buf, ";main;") || strstr(buf, ";_start;__libc_start_main;");
	return strtoul(sp + 1, NULL, 10);
}

/* the acceptance test: Debian's own python3 (built without frame pointers, its
 * interpreter in the executable) running a busy script: at least 90% of its samples reach
 * the program's entry; frame pointers alone reach it on almost none */
Test(unwind, python3_reaches_main)
{
	static const char script[] = "def fib(n): return n if n < 2 else fib(n - 1) + fib(n - 2)\n"
				     "import time\n"
				     "end = time.process_time() + 1.5\n"
				     "d = {}\n"
				     "while time.process_time() < end:\n"
				     "    fib(15); d[len(d) % 997] = str(len(d)) * 3; sorted(d)\n";
	const char *py = "/usr/bin/python3";
	char cmd[4096], path[] = "/tmp/kperf-unwind-py-XXXXXX";
	unsigned long total = 0, whole = 0;
	char *out, *line, *nl;
	int st, fd;
	FILE *f;

	if (access(py, X_OK))
		cr_skip_test("no %s", py);
	fd = mkstemp(path);
	cr_assert_geq(fd, 0);
	f = fdopen(fd, "w");
	fputs(script, f);
	fclose(f);
	snprintf(cmd, sizeof(cmd),
		 "%s/bin/kperf-bpf record -g --format folded -- %s %s 2>/dev/null", tu_build(), py,
		 path);
	out = tu_run(cmd, &st);
	unlink(path);
	cr_assert_eq(st, 0, "%s", out);
	for (line = out; *line; line = nl + 1) {
		bool w = false;
		unsigned long c;

		nl = strchr(line, '\n');
		if (!nl)
			nl = line + strlen(line);
		c = folded_line(line, (size_t)(nl - line), "python3", &w);
		total += c;
		whole += w ? c : 0;
		if (!*nl)
			break;
	}
	free(out);
	cr_assert_gt(total, 500, "%lu samples of python3", total);
	cr_assert_geq(whole * 100, total * 90, "%lu of %lu python3 samples reach main", whole,
		      total);
}

/* kernel and user stacks are kept by their frames, not in stack-map buckets: a system-wide
 * profile while short processes start and exit loses none (a stack-trace map lost 3.3% of
 * them in 4 s here), and says so when one is lost */
Test(unwind, system_wide_no_stack_lost)
{
	char cmd[4096], *out;
	int st;

	snprintf(cmd, sizeof(cmd),
		 "(i=0; while [ $i -lt 4000 ]; do /bin/true; i=$((i + 1)); done) & c=$!; "
		 "%s/bin/kperf-bpf record -a -g -d 2 --format folded -o /dev/null 2>&1; s=$?; "
		 "kill $c 2>/dev/null; wait $c; exit $s",
		 tu_build());
	out = tu_run(cmd, &st);
	cr_assert_eq(st, 0, "%s", out);
	cr_assert(strstr(out, " samples"), "%s", out);
	cr_assert_null(strstr(out, "not kept"), "%s", out);
	cr_assert_null(strstr(out, "could not be captured"), "%s", out);
	free(out);
}
