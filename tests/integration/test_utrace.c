/*
 * test_utrace.c - UTrace end to end: the utrace_wl workload calls each of its functions an
 * exact number of times per thread, and exactly that comes back, entry and return, per thread
 * and per process, at the addresses nm and objdump give, from an executable, a shared library
 * (by path, by name, and loaded after the open), C++ (mangled, demangled, without parameters)
 * and Go (with its g pointer); records pair up in time order; a full ring buffer is counted;
 * every bad input gets libkperf's code; nothing stays attached after UTraceClose and tracefs is
 * never written.
 */
#include <criterion/criterion.h>
#include <time.h>

#include "kperf/kperf.h"
#include "utrace_testutil.h"

TestSuite(utrace, .timeout = 120);

#define MAXF 16

struct fcount {
	const char *func;
	int ent, ret;
};

struct tally {
	struct fcount f[MAXF];
	int n;
};

static struct fcount *tally_get(struct tally *t, const char *func)
{
	int i;

	for (i = 0; i < t->n; i++)
		if (!strcmp(t->f[i].func, func))
			return &t->f[i];
	cr_assert_lt(t->n, MAXF);
	t->f[t->n] = (struct fcount){ func, 0, 0 };
	return &t->f[t->n++];
}

/* counts of the records of thread <tid> (0: all) */
static struct tally count(const struct UTraceData *d, int n, int tid)
{
	struct tally t = { 0 };
	int i;

	for (i = 0; i < n; i++) {
		struct fcount *c;

		if (tid && d[i].tid != tid)
			continue;
		c = tally_get(&t, d[i].func);
		if (d[i].isRet)
			c->ret++;
		else
			c->ent++;
	}
	return t;
}

static void expect(struct tally *t, const char *func, int ent, int ret)
{
	struct fcount *c = tally_get(t, func);

	cr_expect_eq(c->ent, ent, "%s: %d entries, expected %d", func, c->ent, ent);
	cr_expect_eq(c->ret, ret, "%s: %d returns, expected %d", func, c->ret, ret);
}

/* what every utrace_wl thread does, for the functions traced here */
static void expect_wl_thread(struct tally *t, bool with_tail)
{
	expect(t, "ut_f", 1004, 1004); /* 1000 calls and 4 jumps from ut_tail */
	expect(t, "ut_g", 10, 10);
	expect(t, "ut_rec", 3, 3);
	expect(t, "ut_multi", 6, 6);
	expect(t, "ut_bare", 5, 5);
	if (with_tail)
		expect(t, "ut_tail", 4, 0);
	expect(t, "ut_clone", 2, 2);
	expect(t, "wl_lib_work", 5, 5);
}

static int perf_fds(void)
{
	char path[64], link[256];
	int fd, n = 0;
	ssize_t len;

	for (fd = 0; fd < 4096; fd++) {
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		len = readlink(path, link, sizeof(link) - 1);
		if (len <= 0)
			continue;
		link[len] = '\0';
		n += strstr(link, "[perf_event]") != NULL;
	}
	return n;
}

static void assert_nothing_open(void)
{
	cr_assert_eq(tu_bpf_fds(), 0, "BPF objects left open");
	cr_assert_eq(perf_fds(), 0, "perf events (uprobes) left open");
}

/* the address where process <pid> runs file offset <off> of <path>, 0 when it does not */
static unsigned long rt_addr(pid_t pid, const char *path, unsigned long off)
{
	unsigned long start, end, pgoff, ino, addr = 0;
	char file[64], line[4608], perms[8], dev[16], p[4096];
	FILE *f;

	snprintf(file, sizeof(file), "/proc/%d/maps", (int)pid);
	f = fopen(file, "r");
	while (f && !addr && fgets(line, sizeof(line), f))
		if (sscanf(line, "%lx-%lx %7s %lx %15s %lu %4095s", &start, &end, perms, &pgoff,
			   dev, &ino, p) == 7 &&
		    strchr(perms, 'x') && !strcmp(p, path) && off >= pgoff &&
		    off - pgoff < end - start)
			addr = start + off - pgoff;
	if (f)
		fclose(f);
	return addr;
}

/* the runtime address of link-time address <vaddr> of <bin> in <pid> */
static unsigned long rt_vaddr(pid_t pid, const char *bin, unsigned long vaddr)
{
	return rt_addr(pid, bin, vaddr - ut_text_delta(bin));
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* trace <w> (started with --wait) with <src> until it exits; returns the records */
static int run(struct tu_proc *w, struct SymbolSource *src, unsigned nsrc, int *pids,
	       unsigned npids, unsigned fetch_g, struct tu_proc *more, struct UTraceData **d,
	       int *pd_out)
{
	struct UTraceAttr a = {
		.symSrc = src, .numSym = nsrc, .pidList = pids, .numPid = npids, .fetchG = fetch_g
	};
	int pd, n;

	pd = UTraceOpen(&a);
	cr_assert_gt(pd, 0, "UTraceOpen: %d %s", Perrorno(), Perror());
	cr_assert_eq(UTraceEnable(pd), 0, "%s", Perror());
	tu_go(w);
	if (more)
		tu_go(more);
	cr_assert_eq(tu_wait(w), 0);
	if (more)
		cr_assert_eq(tu_wait(more), 0);
	cr_assert_eq(UTraceDisable(pd), 0);
	n = UTraceRead(pd, d);
	cr_assert_geq(n, 0, "UTraceRead: %s", Perror());
	*pd_out = pd;
	return n;
}

static void finish(int pd, struct UTraceData *d)
{
	UTraceDataFree(d);
	UTraceClose(pd);
	assert_nothing_open();
}

static void exact_counts_addresses_and_fields(void)
{
	static const char *const fns[] = { "ut_f",    "ut_g",	 "ut_rec",  "ut_multi",
					   "ut_bare", "ut_tail", "ut_clone" };
	char bin[PATH_MAX], lib[PATH_MAX];
	struct SymbolSource src[8];
	unsigned long f_entry, multi_rets[4], bare, expected_probes = 0, rets[8];
	struct KperfUTraceStats st;
	struct UTraceData *d, *d2;
	int i, n, pd, pids[1], ncpu = (int)sysconf(_SC_NPROCESSORS_CONF), multi_hits[2] = { 0 };
	uint64_t t0, t1;
	struct tu_proc w;
	struct tally t;

	ut_artefact("workloads/utrace_wl", bin);
	ut_artefact("workloads/libwl.so", lib);
	for (i = 0; i < 7; i++) {
		src[i] = (struct SymbolSource){ bin, (char *)fns[i] };
		expected_probes +=
			1 + (unsigned long)ut_objdump_rets(
				    bin, i == 6 ? "ut_clone.constprop.0" : fns[i], rets, 8);
	}
	src[7] = (struct SymbolSource){ lib, "wl_lib_work" };
	expected_probes += 1 + (unsigned long)ut_objdump_rets(lib, "wl_lib_work", rets, 8);
	expected_probes -= 1; /* ut_bare's entry is its return */

	w = tu_spawn("utrace_wl", "--wait", NULL);
	pids[0] = w.pid;
	f_entry = rt_vaddr(w.pid, bin, ut_nm(bin, "ut_f"));
	bare = rt_vaddr(w.pid, bin, ut_nm(bin, "ut_bare"));
	cr_assert_eq(ut_objdump_rets(bin, "ut_multi", multi_rets, 4), 2);
	for (i = 0; i < 2; i++)
		multi_rets[i] = rt_vaddr(w.pid, bin, multi_rets[i]);
	cr_assert(f_entry && bare && multi_rets[0] && multi_rets[1]);

	t0 = mono_ns();
	n = run(&w, src, 8, pids, 1, 0, NULL, &d, &pd);
	t1 = mono_ns();
	cr_assert_eq(GetWarn(), SUCCESS, "%s", GetWarnMsg());
	t = count(d, n, 0);
	expect_wl_thread(&t, true);
	cr_assert_eq(t.n, 8, "only the functions asked for");
	cr_assert_eq(n, 2 * 1004 + 20 + 6 + 12 + 10 + 4 + 4 + 10);

	for (i = 0; i < n; i++) {
		bool in_lib = !strcmp(d[i].func, "wl_lib_work");

		cr_assert_str_eq(d[i].comm, "utrace_wl");
		cr_assert_eq(d[i].tid, pids[0]);
		cr_assert(d[i].cpu >= 0 && d[i].cpu < ncpu, "cpu %d", d[i].cpu);
		cr_assert_eq(d[i].gPtr, 0, "no fetchG, no g");
		cr_assert_str_eq(d[i].module, in_lib ? lib : bin);
		cr_assert((uint64_t)d[i].timestamp >= t0 && (uint64_t)d[i].timestamp <= t1,
			  "CLOCK_MONOTONIC ns between open and read");
		if (i)
			cr_assert_geq(d[i].timestamp, d[i - 1].timestamp, "time order");
		if (!strcmp(d[i].func, "ut_f") && !d[i].isRet)
			cr_assert_eq(d[i].addr, f_entry, "ut_f's entry at %#lx, not %#lx", f_entry,
				     d[i].addr);
		if (!strcmp(d[i].func, "ut_multi") && d[i].isRet) {
			cr_assert(d[i].addr == multi_rets[0] || d[i].addr == multi_rets[1],
				  "a return of ut_multi is one of its return instructions");
			multi_hits[d[i].addr == multi_rets[1]]++;
		}
		if (!strcmp(d[i].func, "ut_bare")) {
			cr_assert_eq(d[i].addr, bare);
			if (!d[i].isRet) { /* then its return, at the same address and time */
				cr_assert_lt(i + 1, n);
				cr_assert_str_eq(d[i + 1].func, "ut_bare");
				cr_assert(d[i + 1].isRet);
				cr_assert_eq(d[i + 1].timestamp, d[i].timestamp);
			}
		}
	}
	cr_assert_eq(multi_hits[0], 3, "even arguments return through one instruction");
	cr_assert_eq(multi_hits[1], 3, "odd ones through the other");

	cr_assert_eq(KperfUTraceGetStats(pd, &st), 0);
	cr_assert_eq(st.records, (uint64_t)n);
	cr_assert_eq(st.dropped, 0);
	cr_assert_eq(st.unattributed, 0);
	cr_assert_eq(st.probes, expected_probes, "%u uprobes, expected %lu", st.probes,
		     expected_probes);
	cr_assert_eq(st.ringBufferKb, 16384);
	/* everything was read */
	cr_assert_eq(UTraceRead(pd, &d2), 0);
	cr_assert_null(d2);
	finish(pd, d);
}

Test(utrace, exact_counts_addresses_and_fields)
{
	exact_counts_addresses_and_fields();
}

/* kernels before 5.15 have no attach cookies: the function is told from the address */
Test(utrace, exact_counts_without_attach_cookies)
{
	setenv("KPERF_BPF_NO_COOKIE", "1", 1);
	exact_counts_addresses_and_fields();
}

Test(utrace, threads_are_counted_per_tid)
{
	char bin[PATH_MAX], lib[PATH_MAX];
	struct SymbolSource src[3];
	int i, n, pd, pids[1], tids[8], ntids = 0, j;
	struct UTraceData *d;
	struct tu_proc w;

	ut_artefact("workloads/utrace_wl", bin);
	ut_artefact("workloads/libwl.so", lib);
	src[0] = (struct SymbolSource){ bin, "ut_f" };
	src[1] = (struct SymbolSource){ bin, "ut_rec" };
	src[2] = (struct SymbolSource){ lib, "wl_lib_work" };
	w = tu_spawn("utrace_wl", "--wait", "--threads", "3", NULL);
	pids[0] = w.pid;
	n = run(&w, src, 3, pids, 1, 0, NULL, &d, &pd);
	for (i = 0; i < n; i++) {
		for (j = 0; j < ntids && tids[j] != d[i].tid; j++)
			;
		if (j == ntids) {
			cr_assert_lt(ntids, 8);
			tids[ntids++] = d[i].tid;
		}
	}
	cr_assert_eq(ntids, 3, "three threads made the calls (%d tids)", ntids);
	for (j = 0; j < ntids; j++) {
		struct tally t = count(d, n, tids[j]);

		cr_assert_neq(tids[j], pids[0], "the main thread makes no call");
		expect(&t, "ut_f", 1004, 1004);
		expect(&t, "ut_rec", 3, 3);
		expect(&t, "wl_lib_work", 5, 5);
		cr_assert_eq(t.n, 3);
	}
	cr_assert_eq(n, 3 * (2 * 1004 + 6 + 10));
	finish(pd, d);
}

Test(utrace, only_the_pids_asked_for)
{
	struct SymbolSource src[1];
	char bin[PATH_MAX];
	int n, pd, pids[1], i;
	struct UTraceData *d;
	struct tu_proc a, b;
	struct tally t;

	ut_artefact("workloads/utrace_wl", bin);
	src[0] = (struct SymbolSource){ bin, "ut_f" };
	a = tu_spawn("utrace_wl", "--wait", NULL);
	b = tu_spawn("utrace_wl", "--wait", NULL);
	pids[0] = a.pid;
	n = run(&a, src, 1, pids, 1, 0, &b, &d, &pd);
	for (i = 0; i < n; i++)
		cr_assert_eq(d[i].tid, pids[0], "a record of tid %d, not of pid %d", d[i].tid,
			     pids[0]);
	t = count(d, n, 0);
	expect(&t, "ut_f", 1004, 1004);
	finish(pd, d);
}

Test(utrace, several_processes)
{
	struct SymbolSource src[1];
	char bin[PATH_MAX];
	int n, pd, pids[2], i;
	struct UTraceData *d;
	struct tu_proc a, b;

	ut_artefact("workloads/utrace_wl", bin);
	src[0] = (struct SymbolSource){ bin, "ut_g" };
	a = tu_spawn("utrace_wl", "--wait", NULL);
	b = tu_spawn("utrace_wl", "--wait", NULL);
	pids[0] = a.pid;
	pids[1] = b.pid;
	n = run(&a, src, 1, pids, 2, 0, &b, &d, &pd);
	cr_assert_eq(n, 40);
	for (i = 0; i < 2; i++) {
		struct tally t = count(d, n, pids[i]);

		expect(&t, "ut_g", 10, 10);
	}
	finish(pd, d);
}

Test(utrace, entries_and_returns_pair_up_in_time)
{
	static const char *const fns[] = { "ut_f",     "ut_g",	  "ut_rec",
					   "ut_multi", "ut_bare", "ut_clone" };
	char bin[PATH_MAX], lib[PATH_MAX];
	struct SymbolSource src[7];
	int i, n, pd, pids[1], j, checked = 0;
	struct UTraceData *d;
	struct tu_proc w;

	ut_artefact("workloads/utrace_wl", bin);
	ut_artefact("workloads/libwl.so", lib);
	for (i = 0; i < 6; i++)
		src[i] = (struct SymbolSource){ bin, (char *)fns[i] };
	src[6] = (struct SymbolSource){ lib, "wl_lib_work" };
	w = tu_spawn("utrace_wl", "--wait", "--threads", "2", NULL);
	pids[0] = w.pid;
	n = run(&w, src, 7, pids, 1, 0, NULL, &d, &pd);
	/* per thread, a return always closes the innermost open call, and none stays open */
	for (j = 0; j < n; j++) {
		const char *stack[8];
		int depth = 0, tid = d[j].tid;
		bool seen = false;

		for (i = 0; i < j && !seen; i++)
			seen = d[i].tid == tid;
		if (seen)
			continue;
		for (i = j; i < n; i++) {
			if (d[i].tid != tid)
				continue;
			if (!d[i].isRet) {
				cr_assert_lt(depth, 8, "calls nest at most 3 deep");
				stack[depth++] = d[i].func;
				continue;
			}
			cr_assert_gt(depth, 0, "record %d: a return of %s with no call open", i,
				     d[i].func);
			cr_assert_str_eq(stack[depth - 1], d[i].func, "record %d", i);
			depth--;
			checked++;
		}
		cr_assert_eq(depth, 0, "tid %d: %d calls never returned", tid, depth);
	}
	cr_assert_eq(checked, n / 2);
	cr_assert_eq(n, 2 * 2 * (1004 + 10 + 3 + 6 + 5 + 2 + 5));
	finish(pd, d);
}

Test(utrace, cxx_functions_by_each_name)
{
	struct SymbolSource src[4];
	char bin[PATH_MAX];
	int n, pd, pids[1], i;
	struct UTraceData *d;
	struct tu_proc w;
	struct tally t;

	ut_artefact("workloads/utrace_cxx", bin);
	src[0] = (struct SymbolSource){ bin, "ns::Counter::step(int)" };
	src[1] = (struct SymbolSource){ bin, "ns::Counter::step" };
	src[2] = (struct SymbolSource){ bin, "_ZN2ns7Counter4stepEi" };
	src[3] = (struct SymbolSource){ bin, "twice" };
	w = tu_spawn("utrace_cxx", "--wait", NULL);
	pids[0] = w.pid;
	n = run(&w, src, 4, pids, 1, 0, NULL, &d, &pd);
	t = count(d, n, 0);
	/* one probe, a record per name it was asked by, as libkperf's aliases give */
	expect(&t, "ns::Counter::step(int)", 7, 7);
	expect(&t, "ns::Counter::step", 7, 7);
	expect(&t, "_ZN2ns7Counter4stepEi", 7, 7);
	expect(&t, "twice", 3, 3);
	cr_assert_eq(n, 3 * 14 + 6);
	for (i = 0; i + 2 < n; i++) {
		if (strcmp(d[i].func, "ns::Counter::step(int)"))
			continue;
		cr_assert_str_eq(d[i + 1].func, "ns::Counter::step");
		cr_assert_str_eq(d[i + 2].func, "_ZN2ns7Counter4stepEi");
		cr_assert(d[i + 1].addr == d[i].addr && d[i + 2].addr == d[i].addr);
		cr_assert(d[i + 1].timestamp == d[i].timestamp &&
			  d[i + 2].timestamp == d[i].timestamp);
		cr_assert(d[i + 1].isRet == d[i].isRet && d[i + 2].isRet == d[i].isRet);
	}
	finish(pd, d);
}

Test(utrace, library_by_name)
{
	struct SymbolSource src[1] = { { "libwl.so", "wl_lib_work" } };
	char lib[PATH_MAX];
	int n, pd, pids[1], i;
	struct UTraceData *d;
	struct tu_proc w;
	struct tally t;

	ut_artefact("workloads/libwl.so", lib);
	w = tu_spawn("utrace_wl", "--wait", NULL);
	pids[0] = w.pid;
	n = run(&w, src, 1, pids, 1, 0, NULL, &d, &pd);
	t = count(d, n, 0);
	expect(&t, "wl_lib_work", 5, 5);
	for (i = 0; i < n; i++)
		cr_assert_str_eq(d[i].module, lib);
	finish(pd, d);
}

Test(utrace, library_loaded_after_the_open)
{
	struct SymbolSource src[1];
	struct KperfUTraceStats st;
	struct UTraceAttr a = { 0 };
	char lib[PATH_MAX];
	int n, pd, pids[1], i;
	struct UTraceData *d;
	struct tu_proc w;
	struct tally t;

	ut_artefact("workloads/libwl.so", lib);
	w = tu_spawn("utrace_dl", "--wait", NULL);
	pids[0] = w.pid;
	/* by name it is not found: no traced process maps it yet */
	src[0] = (struct SymbolSource){ "libwl.so", "wl_lib_work" };
	a = (struct UTraceAttr){ .symSrc = src, .numSym = 1, .pidList = pids, .numPid = 1 };
	cr_assert_eq(UTraceOpen(&a), -1);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_UTRACE_ELF_SCAN_FAILED);
	cr_assert_str_eq(Perror(), "none of the functions asked for can be traced: libwl.so: no "
				   "such file, and no process of pidList maps a file of that name");
	assert_nothing_open();
	/* by path the probes wait for it */
	src[0] = (struct SymbolSource){ lib, "wl_lib_work" };
	n = run(&w, src, 1, pids, 1, 0, NULL, &d, &pd);
	t = count(d, n, 0);
	expect(&t, "wl_lib_work", 5, 5);
	for (i = 0; i < n; i++)
		cr_assert_str_eq(d[i].module, lib);
	cr_assert_eq(KperfUTraceGetStats(pd, &st), 0);
	cr_assert_eq(st.unattributed, 0, "the attach cookie names the probe");
	finish(pd, d);
}

/* without cookies a hit is told from the process's mappings, read again when an address is
 * unknown; a process that exits before that leaves hits that are counted, never misnamed */
/* without cookies (kernels before 5.15) each site has its own copy of the program: the hits
 * in a library loaded after the open are attributed exactly, as with cookies */
Test(utrace, library_loaded_after_the_open_without_cookies)
{
	struct SymbolSource src[1];
	struct KperfUTraceStats st;
	char lib[PATH_MAX];
	int n, pd, pids[1], i, warn;
	struct UTraceData *d;
	struct tu_proc w;
	struct tally t;

	setenv("KPERF_BPF_NO_COOKIE", "1", 1);
	ut_artefact("workloads/libwl.so", lib);
	w = tu_spawn("utrace_dl", "--wait", NULL);
	pids[0] = w.pid;
	src[0] = (struct SymbolSource){ lib, "wl_lib_work" };
	n = run(&w, src, 1, pids, 1, 0, NULL, &d, &pd);
	warn = GetWarn();
	t = count(d, n, 0);
	expect(&t, "wl_lib_work", 5, 5);
	for (i = 0; i < n; i++)
		cr_assert_str_eq(d[i].module, lib);
	cr_assert_eq(KperfUTraceGetStats(pd, &st), 0);
	cr_assert_eq(st.dropped, 0);
	cr_assert_eq(st.unattributed, 0, "the program's copy names the probe");
	cr_assert_eq(st.records, 10);
	cr_assert_eq(warn, SUCCESS);
	finish(pd, d);
}

Test(utrace, go_function_with_its_g)
{
	char bin[PATH_MAX], out[128] = "", *argv[] = { "utrace_go", "--wait", NULL };
	struct SymbolSource src[1];
	unsigned long g = 0;
	int n, pd, pids[1], i;
	struct UTraceData *d;
	struct tu_proc w;
	struct tally t;
	ssize_t got;

	ut_artefact("workloads/utrace_go", bin);
	if (!bin[0] || access(bin, X_OK))
		cr_skip_test("no Go workload (go is not installed: apt-get install golang-go)");
	/* Go's asynchronous preemption (SIGURG from its sysmon, for a goroutine running over
	 * 10 ms: under an emulator, 50 probed calls do) off: a signal that arrives while the
	 * kernel single-steps a probed instruction out of line, when that step also faulted,
	 * makes the kernel abort the step and run the instruction again at its address
	 * (uprobe_deny_signal, arch_uprobe_abort_xol), so the probe fires twice for one call:
	 * arm64 guests under load counted 51 entries of 50 */
	setenv("GODEBUG", "asyncpreemptoff=1", 1);
	w = tu_spawn_v(argv, 1);
	unsetenv("GODEBUG");
	got = read(w.out_fd, out, sizeof(out) - 1);
	cr_assert_gt(got, 0);
	out[got] = '\0';
	cr_assert_eq(sscanf(out, "g=%lx", &g), 1, "the workload prints its g: %s", out);
	cr_assert_eq(tu_wait_blocked(w.pid), 0);
	pids[0] = w.pid;
	src[0] = (struct SymbolSource){ bin, "main.work" };
	n = run(&w, src, 1, pids, 1, 1, NULL, &d, &pd);
	close(w.out_fd);
	t = count(d, n, 0);
	expect(&t, "main.work", 50, 50);
	for (i = 0; i < n; i++)
		cr_assert_eq(d[i].gPtr, g, "record %d: g %#lx, the goroutine's is %#lx", i,
			     (unsigned long)d[i].gPtr, g);
	finish(pd, d);
}

Test(utrace, a_full_ring_buffer_is_counted)
{
	struct KperfUTraceOpts x = KPERF_OPTS(KperfUTraceOpts, .ringBufferKb = 4);
	struct SymbolSource src[1];
	struct KperfUTraceStats st;
	struct UTraceAttr a = { 0 };
	char bin[PATH_MAX], want[128], msg[512] = "";
	struct UTraceData *d;
	struct tu_proc w;
	int n, pd, pids[1], warn;
	const uint64_t hits = 2 * (1004 + 20000);

	ut_artefact("workloads/utrace_wl", bin);
	src[0] = (struct SymbolSource){ bin, "ut_f" };
	w = tu_spawn("utrace_wl", "--wait", "--flood", "20000", NULL);
	pids[0] = w.pid;
	a = (struct UTraceAttr){ .symSrc = src, .numSym = 1, .pidList = pids, .numPid = 1 };
	pd = KperfUTraceOpen(&a, &x);
	cr_assert_gt(pd, 0, "%s", Perror());
	cr_assert_eq(UTraceEnable(pd), 0);
	tu_go(&w);
	cr_assert_eq(tu_wait(&w), 0);
	cr_assert_eq(UTraceDisable(pd), 0);
	n = UTraceRead(pd, &d);
	cr_assert_geq(n, 0);
	warn = GetWarn();
	strncpy(msg, GetWarnMsg(), sizeof(msg) - 1);
	cr_assert_eq(KperfUTraceGetStats(pd, &st), 0);
	cr_assert_eq(st.ringBufferKb, (unsigned)getpagesize() / 1024, "the smallest ring buffer");
	cr_assert_eq(st.records, (uint64_t)n);
	cr_log_info("4 KiB ring buffer: %lu records, %lu dropped", (unsigned long)st.records,
		    (unsigned long)st.dropped);
	/* every hit is either a record or counted as dropped */
	cr_assert_eq(st.records + st.dropped, hits, "%lu records + %lu dropped != %lu hits",
		     (unsigned long)st.records, (unsigned long)st.dropped, (unsigned long)hits);
	cr_assert_eq(warn, st.dropped ? KPERF_WARN_RECORDS_DROPPED : SUCCESS);
	if (st.dropped) {
		snprintf(want, sizeof(want),
			 "%lu probe hits were lost since the last read (%lu dropped and 0 "
			 "unattributed so far)",
			 (unsigned long)st.dropped, (unsigned long)st.dropped);
		cr_assert(!strncmp(msg, want, strlen(want)), "%s", msg);
	}
	finish(pd, d);
}

/* ---- bad inputs: libkperf's codes, a sentence that says what is wrong, nothing left ---- */

static void open_fails(struct UTraceAttr *a, int code, const char *msg)
{
	cr_assert_eq(UTraceOpen(a), -1);
	cr_assert_eq(Perrorno(), code, "code %d (%s), expected %d", Perrorno(), Perror(), code);
	if (msg)
		cr_assert_str_eq(Perror(), msg);
	assert_nothing_open();
}

Test(utrace, null_attr_and_empty_lists)
{
	struct SymbolSource src[3] = { { NULL, "f" }, { "", "" }, { "/bin/true", "UNKNOWN" } };
	int pids[1] = { getpid() };
	struct UTraceAttr a = { .symSrc = src, .numSym = 3, .numPid = 1 };

	cr_assert_eq(UTraceOpen(NULL), -1);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_NULL_POINTER);
	cr_assert_str_eq(Perror(), "UTraceAttr is NULL");
	open_fails(&a, LIBPERF_ERR_NULL_POINTER,
		   "UTraceAttr.pidList is empty: name the processes to trace (pidList, numPid)");
	a.pidList = pids;
	a.numPid = 0;
	open_fails(&a, LIBPERF_ERR_NULL_POINTER, NULL);
	a.numPid = 1;
	open_fails(&a, LIBPERF_ERR_INVALID_TRACE_CONF,
		   "no symbol to trace: no entry of symSrc has both a moduleName and a "
		   "symbolName");
	a.numSym = 0;
	open_fails(&a, LIBPERF_ERR_INVALID_TRACE_CONF,
		   "no symbol to trace: symSrc is NULL or numSym is 0");
	a.numSym = 1;
	a.symSrc = NULL;
	open_fails(&a, LIBPERF_ERR_INVALID_TRACE_CONF, NULL);
}

Test(utrace, unknown_module_symbol_or_file)
{
	char bin[PATH_MAX], msg[1024];
	struct SymbolSource src[2];
	int pids[1] = { getpid() }, pd;
	struct UTraceAttr a = { .symSrc = src, .numSym = 1, .pidList = pids, .numPid = 1 };

	ut_artefact("workloads/utrace_wl", bin);
	src[0] = (struct SymbolSource){ "/nonexistent/path/to/binary", "f" };
	open_fails(&a, LIBPERF_ERR_UTRACE_ELF_SCAN_FAILED,
		   "none of the functions asked for can be traced: /nonexistent/path/to/binary: "
		   "cannot open it: No such file or directory");
	cr_assert_eq(GetWarn(), LIBPERF_WARN_UTRACE_ELF_SCAN_FAILED);
	cr_assert_str_eq(GetWarnMsg(), "not traced: /nonexistent/path/to/binary: cannot open it: "
				       "No such file or directory");
	src[0] = (struct SymbolSource){ "libnope.so", "f" };
	open_fails(&a, LIBPERF_ERR_UTRACE_ELF_SCAN_FAILED,
		   "none of the functions asked for can be traced: libnope.so: no such file, and "
		   "no process of pidList maps a file of that name");
	src[0] = (struct SymbolSource){ bin, "non_existent_function" };
	snprintf(msg, sizeof(msg),
		 "none of the functions asked for can be traced: %s: no function named "
		 "\"non_existent_function\"",
		 bin);
	open_fails(&a, LIBPERF_ERR_UTRACE_ELF_SCAN_FAILED, msg);
	cr_assert_eq(GetWarn(), LIBPERF_WARN_UTRACE_ELF_SCAN_FAILED);
	src[0] = (struct SymbolSource){ "/etc/passwd", "root" };
	open_fails(&a, LIBPERF_ERR_UTRACE_ELF_SCAN_FAILED,
		   "none of the functions asked for can be traced: /etc/passwd: not an ELF file");

	/* one good symbol is enough; the rest is a warning */
	src[0] = (struct SymbolSource){ bin, "ut_f" };
	src[1] = (struct SymbolSource){ "/nonexistent/path/to/binary", "f" };
	a.numSym = 2;
	pd = UTraceOpen(&a);
	cr_assert_gt(pd, 0, "%s", Perror());
	cr_assert_eq(GetWarn(), LIBPERF_WARN_UTRACE_ELF_SCAN_FAILED);
	cr_assert_str_eq(GetWarnMsg(), "not traced: /nonexistent/path/to/binary: cannot open it: "
				       "No such file or directory");
	UTraceClose(pd);
	assert_nothing_open();
}

Test(utrace, pids_that_do_not_exist)
{
	struct SymbolSource src[1];
	char bin[PATH_MAX];
	int pids[2] = { 999999, 0 };
	struct UTraceAttr a = { .symSrc = src, .numSym = 1, .pidList = pids, .numPid = 1 };

	ut_artefact("workloads/utrace_wl", bin);
	src[0] = (struct SymbolSource){ bin, "ut_f" };
	cr_assert(kill(999999, 0) && errno == ESRCH);
	/* libkperf's words: its own test compares them */
	open_fails(&a, LIBPERF_ERR_INVALID_PID, "failed to find process by pid");
	pids[0] = getpid();
	pids[1] = 999999;
	a.numPid = 2;
	open_fails(&a, LIBPERF_ERR_INVALID_PID, "failed to find process by pid");
	pids[0] = -1;
	a.numPid = 1;
	open_fails(&a, LIBPERF_ERR_INVALID_PIDLIST, "pidList[0] is -1: pids are positive");
}

Test(utrace, kernel_and_java_symbols)
{
	struct SymbolSource src[2];
	char bin[PATH_MAX], msg[256];
	int pids[1] = { getpid() }, pd;
	struct UTraceAttr a = { .symSrc = src, .numSym = 1, .pidList = pids, .numPid = 1 };

	ut_artefact("workloads/utrace_wl", bin);
	src[0] = (struct SymbolSource){ "[kernel]", "do_sys_openat2" };
	open_fails(&a, LIBPERF_ERR_KERNEL_TRACE_FAILED,
		   "kernel functions (do_sys_openat2) cannot be traced: kperf-bpf traces user "
		   "functions (uprobes) only");
	src[0] = (struct SymbolSource){ "Lcom/example/Foo;", "bar" };
	snprintf(msg, sizeof(msg), "1 Java method(s) were asked for, but pid %d is not a JVM",
		 getpid());
	open_fails(&a, LIBPERF_ERR_UTRACE_JAVA_PROCESS_FAILED, msg);
	src[0] = (struct SymbolSource){ "java", "Lcom/example/Foo;::bar" };
	open_fails(&a, LIBPERF_ERR_UTRACE_JAVA_PROCESS_FAILED, msg);
	/* kernel functions next to user ones: a warning, as when libkperf's kernel backend fails */
	src[0] = (struct SymbolSource){ bin, "ut_f" };
	src[1] = (struct SymbolSource){ "vmlinux", "do_sys_openat2" };
	a.numSym = 2;
	pd = UTraceOpen(&a);
	cr_assert_gt(pd, 0, "%s", Perror());
	cr_assert_eq(GetWarn(), LIBPERF_WARN_UTRACE_KERNEL_FAILED);
	cr_assert_str_eq(GetWarnMsg(), "kernel functions (do_sys_openat2) are not traced: "
				       "kperf-bpf traces user functions (uprobes) only");
	UTraceClose(pd);
	assert_nothing_open();
}

Test(utrace, bad_handles_pointers_and_options)
{
	struct KperfUTraceOpts x = KPERF_OPTS(KperfUTraceOpts, .ringBufferKb = 2000000);
	struct SymbolSource src[1];
	struct KperfUTraceStats st;
	char bin[PATH_MAX];
	int pids[1] = { getpid() }, pd;
	struct UTraceAttr a = { .symSrc = src, .numSym = 1, .pidList = pids, .numPid = 1 };
	struct UTraceData *d = (void *)1;

	ut_artefact("workloads/utrace_wl", bin);
	src[0] = (struct SymbolSource){ bin, "ut_f" };
	cr_assert_eq(KperfUTraceOpen(&a, &x), -1);
	cr_assert_eq(Perrorno(), KPERF_ERR_INVALID_ATTR);
	cr_assert_str_eq(Perror(), "ringBufferKb 2000000 is too large (at most 1048576, 1 GiB)");
	assert_nothing_open();

	cr_assert_eq(UTraceEnable(9999), -1);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_INVALID_PD);
	cr_assert_eq(UTraceDisable(9999), -1);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_INVALID_PD);
	cr_assert_eq(UTraceRead(9999, &d), -1);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_INVALID_PD);
	cr_assert_null(d);
	UTraceClose(9999);
	UTraceDataFree(NULL);
	UTraceDataFree((struct UTraceData *)&st); /* not an array it returned: ignored */

	pd = UTraceOpen(&a);
	cr_assert_gt(pd, 0, "%s", Perror());
	cr_assert_eq(UTraceRead(pd, NULL), -1);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_NULL_POINTER);
	cr_assert_str_eq(Perror(), "traceData is NULL");
	cr_assert_eq(KperfUTraceGetStats(pd, NULL), -1);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_NULL_POINTER);
	/* a UTrace handle is no syscall-trace or PMU handle, and the other way round */
	cr_assert_eq(PmuTraceEnable(pd), -1);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_INVALID_PD);
	cr_assert_eq(PmuEnable(pd), -1);
	cr_assert_eq(UTraceEnable(pd), 0);
	cr_assert_eq(UTraceEnable(pd), 0, "enabling twice is harmless");
	cr_assert_eq(UTraceDisable(pd), 0);
	cr_assert_eq(UTraceDisable(pd), 0);
	cr_assert_eq(UTraceRead(pd, &d), 0, "nothing ran");
	cr_assert_null(d);
	UTraceClose(pd);
	UTraceClose(pd);
	cr_assert_eq(UTraceEnable(pd), -1, "closed");
	assert_nothing_open();
}

/* programs named kp_utrace_hit loaded on the machine (only this test loads it: the lock) */
static int utrace_progs(void)
{
	struct bpf_prog_info info;
	__u32 id = 0, len;
	int n = 0, fd;

	while (bpf_prog_get_next_id(id, &id) == 0) {
		fd = bpf_prog_get_fd_by_id(id);
		if (fd < 0)
			continue;
		memset(&info, 0, sizeof(info));
		len = sizeof(info);
		if (!bpf_obj_get_info_by_fd(fd, &info, &len) && !strcmp(info.name, "kp_utrace_hit"))
			n++;
		close(fd);
	}
	return n;
}

/* the kernel frees a program after an RCU grace period, which a busy machine stretches (and
 * an earlier test's program may still be on its way out): wait up to 10 s for <want> */
static int utrace_progs_settle(int want)
{
	int i, n = utrace_progs();

	for (i = 0; i < 200 && n > want; i++) {
		tu_sleep_ms(50);
		n = utrace_progs();
	}
	return n;
}

static char *uprobe_events(void)
{
	char *buf = NULL;
	FILE *f = fopen("/sys/kernel/tracing/uprobe_events", "r");
	size_t cap = 0;
	ssize_t n;

	if (!f)
		return strdup("(no tracefs)");
	n = getdelim(&buf, &cap, '\0', f);
	fclose(f);
	if (n < 0) {
		free(buf);
		return strdup("");
	}
	return buf;
}

Test(utrace, nothing_left_after_close_and_no_tracefs)
{
	char bin[PATH_MAX], *events_before, *events_open;
	struct SymbolSource src[2];
	struct KperfUTraceStats st;
	int pids[1], pd, progs, n;
	struct UTraceData *d;
	struct tu_proc w;

	ut_artefact("workloads/utrace_wl", bin);
	src[0] = (struct SymbolSource){ bin, "ut_f" };
	src[1] = (struct SymbolSource){ bin, "ut_multi" };
	w = tu_spawn("utrace_wl", "--wait", NULL);
	pids[0] = w.pid;
	progs = utrace_progs_settle(0);
	cr_assert_eq(progs, 0, "no UTrace program before");
	events_before = uprobe_events();
	pd = UTraceOpen(
		&(struct UTraceAttr){ .symSrc = src, .numSym = 2, .pidList = pids, .numPid = 1 });
	cr_assert_gt(pd, 0, "%s", Perror());
	cr_assert_eq(KperfUTraceGetStats(pd, &st), 0);
	cr_assert_eq(st.probes, 5, "ut_f: entry + 1 return, ut_multi: entry + 2 returns");
	cr_assert_eq(perf_fds(), 5, "one uprobe perf event per probe");
	/* one program; without attach cookies (before 5.15) one copy per site */
	cr_assert_eq(utrace_progs(), kp_have(KP_FEAT_ATTACH_COOKIE) ? 1 : 5, "%d programs",
		     utrace_progs());
	events_open = uprobe_events();
	cr_assert_str_eq(events_open, events_before, "tracefs uprobe_events is not written");
	UTraceClose(pd);
	assert_nothing_open();
	cr_assert_eq(utrace_progs_settle(0), 0, "the program is unloaded");
	/* the probes are gone: the workload runs to its end untouched */
	tu_go(&w);
	cr_assert_eq(tu_wait(&w), 0);
	/* and a task that ran, closed while enabled and unread, leaves nothing either */
	w = tu_spawn("utrace_wl", "--wait", NULL);
	pids[0] = w.pid;
	n = run(&w, src, 2, pids, 1, 0, NULL, &d, &pd);
	cr_assert_eq(n, 2 * 1004 + 12);
	cr_assert_eq(UTraceEnable(pd), 0);
	UTraceClose(pd);
	UTraceDataFree(d);
	UTraceDataFree(d);
	assert_nothing_open();
	cr_assert_eq(utrace_progs_settle(0), 0);
	free(events_before);
	free(events_open);
}
