/*
 * test_sampling.c - PmuOpen(SAMPLING) end to end: the hottest symbol of a CPU-bound
 * workload with its exact source line under DWARF, in the executable, in a shared library,
 * in a C++ method (demangled), in a stripped binary with a separate debug file; kernel
 * frames with kernel stacks; exclude flags; timeline records; period mode; the record
 * command's pprof read by `go tool pprof`; and the errors of bad sampling attributes.
 */
#include <criterion/criterion.h>
#include <libgen.h>
#include <sys/stat.h>

#include "export/export.h"
#include "kperf/kperf.h"
#include "testutil.h"

/* the source line that holds <marker> in tests/workloads/<file> */
static unsigned marker_line(const char *file, const char *marker)
{
	char path[4096], line[512];
	unsigned n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/tests/workloads/%s", KPERF_SRCDIR, file);
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
	cr_assert_fail("no %s in %s", marker, file);
	return 0;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t a = s ? strlen(s) : 0, b = strlen(suffix);

	return a >= b && !strcmp(s + a - b, suffix);
}

struct profile {
	struct PmuData *d;
	int n;
	struct kp_hot_list hot;
};

/* sample <argv> (a workload started with --wait) until it exits */
/* o: kperf-bpf options, NULL for libkperf's defaults (one record per sample) */
static struct profile sample(char *const argv[], struct PmuAttr *a, const struct KperfPmuOpts *o)
{
	char *evts[] = { "cpu-clock" };
	struct tu_proc w = tu_spawn_v(argv, 0);
	struct profile p = { 0 };
	int pids[1], pd;

	cr_assert_gt(w.pid, 0);
	pids[0] = w.pid;
	if (!a->evtList) {
		a->evtList = evts;
		a->numEvt = 1;
	}
	a->pidList = pids;
	a->numPid = 1;
	pd = KperfOpen(SAMPLING, a, o);
	cr_assert_gt(pd, 0, "PmuOpen: %d %s", Perrorno(), Perror());
	cr_assert_eq(PmuEnable(pd), 0, "%s", Perror());
	tu_go(&w);
	cr_assert_eq(tu_wait(&w), 0);
	PmuDisable(pd);
	/* read after the process is gone: its symbols must still resolve */
	p.n = PmuRead(pd, &p.d);
	cr_assert_geq(p.n, 0, "PmuRead: %s", Perror());
	PmuClose(pd);
	cr_assert_eq(tu_bpf_fds(), 0, "BPF objects left open");
	cr_assert_eq(kp_hot_functions(p.d, p.n, &p.hot), 0);
	a->pidList = NULL;
	a->evtList = NULL;
	return p;
}

static void done(struct profile *p)
{
	kp_hot_list_free(&p->hot);
	PmuDataFree(p->d);
}

Test(sampling, hot_loop_is_hottest_with_its_line)
{
	char *argv[] = { "cpuburn", "--ms", "400", "--wait", NULL };
	struct PmuAttr a = {
		.useFreq = 1, .freq = 999, .callStack = 1, .symbolMode = RESOLVE_ELF_DWARF
	};
	struct profile p = sample(argv, &a, NULL);
	const struct kp_hot_fn *top = &p.hot.fns[0];
	unsigned line = marker_line("cpuburn.c", "HOT_LINE");
	int i;

	cr_assert_gt(p.hot.samples, 50, "%lu samples", p.hot.samples);
	cr_assert_str_eq(top->name, "hot_loop");
	cr_assert(ends_with(top->module, "/workloads/cpuburn"), "%s", top->module);
	cr_assert(ends_with(top->file, "tests/workloads/cpuburn.c"), "%s", top->file);
	cr_assert_eq(top->line, line, "hottest line %u, the loop is on %u", top->line, line);
	cr_assert_gt(top->self * 10, p.hot.samples * 8, "hot_loop has %lu of %lu", top->self,
		     p.hot.samples);
	/* the callers are on the stacks: burn and main carry almost everything */
	for (i = 0; i < (int)p.hot.n; i++)
		if (!strcmp(p.hot.fns[i].name, "main"))
			cr_assert_gt(p.hot.fns[i].total * 10, p.hot.samples * 8);
	for (i = 0; i < p.n; i++) {
		cr_assert_str_eq(p.d[i].evt, "cpu-clock");
		cr_assert_str_eq(p.d[i].comm, "cpuburn");
		cr_assert_gt(p.d[i].count, 0);
		cr_assert_geq(p.d[i].period, p.d[i].count, "cpu-clock periods are ns");
		cr_assert_not_null(p.d[i].stack);
		cr_assert_not_null(p.d[i].cpuTopo);
		cr_assert_eq(p.d[i].cpuTopo->coreId, p.d[i].cpu);
	}
	done(&p);
}

Test(sampling, maps_drained_key_by_key_on_old_kernels)
{
	char *argv[] = { "cpuburn", "--ms", "300", "--threads", "2", "--wait", NULL };
	struct PmuAttr a = { .useFreq = 1, .freq = 999, .callStack = 1, .symbolMode = RESOLVE_ELF };
	struct profile p;

	setenv("KPERF_BPF_NO_BATCH", "1", 1);
	p = sample(argv, &a, &KPERF_OPTS(KperfPmuOpts, .aggregate = 1));
	cr_assert_gt(p.hot.samples, 100, "%lu samples", p.hot.samples);
	cr_assert_str_eq(p.hot.fns[0].name, "hot_loop");
	done(&p);
}

Test(sampling, elf_only_has_names_but_no_lines)
{
	char *argv[] = { "cpuburn", "--ms", "200", "--wait", NULL };
	struct PmuAttr a = { .useFreq = 1, .freq = 999, .symbolMode = RESOLVE_ELF };
	struct profile p = sample(argv, &a, NULL);
	int i;

	cr_assert_str_eq(p.hot.fns[0].name, "hot_loop");
	cr_assert_eq(p.hot.fns[0].line, 0);
	/* no callStack: only the top frame */
	for (i = 0; i < p.n; i++) {
		cr_assert_not_null(p.d[i].stack);
		cr_assert_null(p.d[i].stack->next, "one frame without callStack");
		cr_assert_eq(p.d[i].stack->symbol->lineNum, 0);
	}
	done(&p);
}

Test(sampling, no_symbol_resolve_has_no_stack)
{
	char *argv[] = { "cpuburn", "--ms", "100", "--wait", NULL };
	struct PmuAttr a = {
		.useFreq = 1, .freq = 999, .callStack = 1, .symbolMode = NO_SYMBOL_RESOLVE
	};
	struct profile p = sample(argv, &a, NULL);
	int i;

	cr_assert_gt(p.n, 0);
	for (i = 0; i < p.n; i++)
		cr_assert_null(p.d[i].stack);
	done(&p);
}

Test(sampling, function_in_a_shared_library)
{
	char *argv[] = { "cpuburn", "--lib", "--ms", "300", "--wait", NULL };
	struct PmuAttr a = {
		.useFreq = 1, .freq = 999, .callStack = 1, .symbolMode = RESOLVE_ELF_DWARF
	};
	struct profile p = sample(argv, &a, NULL);

	cr_assert_str_eq(p.hot.fns[0].name, "wl_lib_work");
	cr_assert(ends_with(p.hot.fns[0].module, "/workloads/libwl.so"), "%s", p.hot.fns[0].module);
	cr_assert(ends_with(p.hot.fns[0].file, "tests/workloads/libwl.c"), "%s", p.hot.fns[0].file);
	done(&p);
}

Test(sampling, cxx_method_is_demangled)
{
	char *argv[] = { "cxxburn", "--ms", "300", "--wait", NULL };
	struct PmuAttr a = { .useFreq = 1, .freq = 999, .symbolMode = RESOLVE_ELF };
	struct profile p;
	const struct Symbol *s;
	int i;

	p = sample(argv, &a, NULL);
	cr_assert_str_eq(p.hot.fns[0].name, "kperf_test::Burner::spin(long)");
	for (i = 0, s = NULL; i < p.n && !s; i++)
		if (p.d[i].stack && !strcmp(p.d[i].stack->symbol->symbolName, p.hot.fns[0].name))
			s = p.d[i].stack->symbol;
	cr_assert_not_null(s);
	cr_assert_str_eq(s->mangleName, "_ZN10kperf_test6Burner4spinEl", "the raw name is kept");
	done(&p);
}

Test(sampling, stripped_binary_with_a_debug_file)
{
	char dir[] = "/tmp/kperf-strip-XXXXXX", cmd[8192], bin[4200];
	char *argv[] = { bin, "--ms", "300", "--wait", NULL };
	struct PmuAttr a = { .useFreq = 1, .freq = 999, .symbolMode = RESOLVE_ELF_DWARF };
	struct profile p;
	int status;

	cr_assert_not_null(mkdtemp(dir));
	snprintf(bin, sizeof(bin), "%s/cpuburn", dir);
	snprintf(cmd, sizeof(cmd),
		 "cp %s/workloads/cpuburn %s && cp %s/workloads/libwl.so %s/ && cd %s && "
		 "objcopy --only-keep-debug cpuburn cpuburn.debug && "
		 "objcopy --strip-all --add-gnu-debuglink=cpuburn.debug cpuburn && "
		 "! nm cpuburn 2>/dev/null | grep -q hot_loop",
		 tu_build(), bin, tu_build(), dir, dir);
	free(tu_run(cmd, &status));
	cr_assert_eq(status, 0, "could not build the stripped copy");
	p = sample(argv, &a, NULL);
	cr_assert_str_eq(p.hot.fns[0].name, "hot_loop", "resolved through .gnu_debuglink");
	cr_assert_eq(p.hot.fns[0].line, marker_line("cpuburn.c", "HOT_LINE"));
	done(&p);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	free(tu_run(cmd, NULL));
}

static bool has_frame(const struct PmuData *d, int n, const char *name, bool *kernel)
{
	const struct Stack *st;
	int i;

	for (i = 0; i < n; i++) {
		for (st = d[i].stack; st; st = st->next) {
			if (st->symbol && !strcmp(st->symbol->symbolName, name)) {
				*kernel = !strcmp(st->symbol->module, "[kernel.kallsyms]");
				return true;
			}
		}
	}
	return false;
}

Test(sampling, kernel_frames_of_a_syscall_heavy_workload)
{
	char *argv[] = { "syscalls", "--getppid", "400000", "--writes", "0",
			 "--fails",  "0",	  "--wait", NULL };
	struct PmuAttr a = { .useFreq = 1, .freq = 999, .callStack = 1, .symbolMode = RESOLVE_ELF };
	struct profile p = sample(argv, &a, NULL);
	bool kernel = false, mixed = false;
	int i;

	cr_assert(has_frame(p.d, p.n, TU_SYSCALL_ENTRY, &kernel), "no %s frame", TU_SYSCALL_ENTRY);
	cr_assert(kernel, "%s is a kernel symbol", TU_SYSCALL_ENTRY);
	/* one stack goes from the kernel (leaf side) through the syscall up to main(); the
	 * frame of worker() itself is skipped by frame-pointer unwinding, because glibc's
	 * syscall() keeps no frame pointer (perf without --call-graph=dwarf does the same) */
	for (i = 0; i < p.n && !mixed; i++) {
		const struct Stack *st;
		bool in_kernel = true, saw_syscall = false;

		for (st = p.d[i].stack; st; st = st->next) {
			bool k = !strcmp(st->symbol->module, "[kernel.kallsyms]");

			if (k && !in_kernel)
				break; /* a kernel frame after user frames: wrong order */
			in_kernel = k;
			saw_syscall |= k && !strcmp(st->symbol->symbolName, TU_SYSCALL_ENTRY);
			if (!k && saw_syscall && !strcmp(st->symbol->symbolName, "main"))
				mixed = true;
		}
	}
	cr_assert(mixed, "no stack with %s called (indirectly) from main", TU_SYSCALL_ENTRY);
	done(&p);
}

Test(sampling, exclude_kernel_and_exclude_user)
{
	char *argv[] = { "syscalls", "--getppid", "200000", "--writes", "0",
			 "--fails",  "0",	  "--wait", NULL };
	struct PmuAttr a = { .useFreq = 1,
			     .freq = 999,
			     .callStack = 1,
			     .symbolMode = RESOLVE_ELF,
			     .excludeKernel = 1 };
	struct profile p = sample(argv, &a, NULL);
	const struct Stack *st;
	int i;

	for (i = 0; i < p.n; i++)
		for (st = p.d[i].stack; st; st = st->next)
			cr_assert_lt(st->symbol->addr, 0xffff800000000000UL, "a kernel frame");
	done(&p);
	a = (struct PmuAttr){ .useFreq = 1,
			      .freq = 999,
			      .callStack = 1,
			      .symbolMode = RESOLVE_ELF,
			      .excludeUser = 1 };
	p = sample(argv, &a, NULL);
	cr_assert_gt(p.n, 0);
	for (i = 0; i < p.n; i++)
		for (st = p.d[i].stack; st; st = st->next)
			cr_assert_geq(st->symbol->addr, 0xffff800000000000UL, "a user frame");
	done(&p);
}

Test(sampling, default_is_one_record_per_sample_in_time_order)
{
	char *argv[] = { "cpuburn", "--ms", "300", "--wait", NULL };
	struct PmuAttr a = { .useFreq = 1, .freq = 999, .symbolMode = RESOLVE_ELF };
	struct profile p = sample(argv, &a, NULL);
	int i;

	cr_assert_gt(p.n, 50);
	for (i = 0; i < p.n; i++) {
		cr_assert_eq(p.d[i].count, 1);
		cr_assert_gt(p.d[i].ts, 0);
		if (i && p.d[i].cpu == p.d[i - 1].cpu)
			cr_assert_geq(p.d[i].ts, p.d[i - 1].ts);
	}
	cr_assert_str_eq(p.hot.fns[0].name, "hot_loop");
	done(&p);
}

Test(sampling, aggregate_option_counts_samples_per_stack_in_the_kernel)
{
	char *argv[] = { "cpuburn", "--ms", "300", "--wait", NULL };
	struct PmuAttr a = { .useFreq = 1, .freq = 999, .callStack = 1, .symbolMode = RESOLVE_ELF };
	struct profile p = sample(argv, &a, &KPERF_OPTS(KperfPmuOpts, .aggregate = 1));
	uint64_t total = 0;
	int i;

	/* far fewer records than samples: one per distinct (thread, cpu, stack) */
	for (i = 0; i < p.n; i++) {
		total += p.d[i].count;
		cr_assert_eq(p.d[i].ts, p.d[0].ts, "aggregated records carry the time of the read");
	}
	cr_assert_eq(total, p.hot.samples);
	cr_assert_gt(p.hot.samples, 100, "%lu samples", p.hot.samples);
	cr_assert_lt((uint64_t)p.n * 4, total, "%d records for %lu samples", p.n, total);
	cr_assert_str_eq(p.hot.fns[0].name, "hot_loop");
	done(&p);
}

Test(sampling, period_mode_samples_every_n_events)
{
	char *argv[] = { "cpuburn", "--ms", "300", "--wait", NULL };
	struct PmuAttr a = { .period = 1000000, .symbolMode = NO_SYMBOL_RESOLVE };
	struct profile p = sample(argv, &a, NULL);
	uint64_t samples = p.hot.samples, period = 0;
	int i;

	for (i = 0; i < p.n; i++)
		period += p.d[i].period;
	/* a sample every 1 ms of cpu-clock: 300 ms of CPU gives about 300, fewer under an
	 * emulator (make test-kernels), whose timers fire late: a late tick is one sample */
	cr_assert(samples > 150 && samples < 330, "%lu samples", samples);
	cr_assert_eq(period, samples * 1000000);
	done(&p);
}

Test(sampling, threads_and_children_are_sampled)
{
	char *argv[] = { "cpuburn", "--threads", "3", "--ms", "200", "--wait", NULL };
	struct PmuAttr a = { .useFreq = 1, .freq = 999, .symbolMode = RESOLVE_ELF };
	struct profile p = sample(argv, &a, NULL);
	int tids[8], ntid = 0, i, j;

	for (i = 0; i < p.n; i++) {
		for (j = 0; j < ntid && tids[j] != p.d[i].tid; j++)
			;
		if (j == ntid && ntid < 8)
			tids[ntid++] = p.d[i].tid;
		cr_assert_eq(p.d[i].pid, p.d[0].pid);
	}
	cr_assert_eq(ntid, 3, "the 3 threads, two of them created after the open");
	done(&p);
}

/* ---- errors ---- */

static int open_sampling(struct PmuAttr *a, const char *evt)
{
	char *evts[] = { (char *)evt };

	a->evtList = evts;
	a->numEvt = 1;
	return PmuOpen(SAMPLING, a);
}

Test(sampling_errors, each_bad_attribute_has_its_code)
{
	struct PmuAttr a = { 0 };
	char *many[65];
	int i;

	i = open_sampling(&a, "cycles"); /* a machine with a PMU (qemu's arm64 -cpu max) has it */
	if (i == -1)
		cr_assert_eq(Perrorno(), LIBPERF_ERR_OPEN_INVALID_FILE);
	else
		PmuClose(i);
	/* branch records: the filter is checked as libkperf does, then the kernel is asked;
	 * a software event has none (EOPNOTSUPP, libkperf's LIBPERF_ERR_INVALID_EVENT) */
	a = (struct PmuAttr){ .branchSampleFilter = KPERF_SAMPLE_BRANCH_ANY };
	cr_assert_eq(open_sampling(&a, "cpu-clock"), -1);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_INVALID_EVENT);
	cr_assert(strstr(Perror(), "event 'cpu-clock' cannot record branches"), "%s", Perror());
	a = (struct PmuAttr){ .branchSampleFilter = KPERF_SAMPLE_BRANCH_USER };
	cr_assert_eq(open_sampling(&a, "cpu-clock"), -1);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_INVALID_BRANCH_SAMPLE_FILTER);
	cr_assert(strstr(Perror(), "add at least one branch type"), "%s", Perror());
	a = (struct PmuAttr){ .branchSampleFilter = 1UL << 20 };
	cr_assert_eq(open_sampling(&a, "cpu-clock"), -1);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_INVALID_BRANCH_SAMPLE_FILTER);
	/* cgroups: checked as for counting (test_sample_cgroup.c samples them) */
	a = (struct PmuAttr){ .cgroupNameList = (char *[]){ "kperf-no-such-cgroup" },
			      .numCgroup = 1 };
	cr_assert_eq(open_sampling(&a, "cpu-clock"), -1);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_OPEN_INVALID_FILE);
	/* blocked sampling chooses its events: an evtList is libkperf's error */
	a = (struct PmuAttr){ .blockedSample = 1 };
	cr_assert_eq(open_sampling(&a, "cpu-clock"), -1);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_NOT_SUPPORT_CONFIG_EVENT);
	a = (struct PmuAttr){ .evtList = many, .numEvt = 1 };
	many[0] = "cpu-clock";
	cr_assert_eq(KperfOpen(SAMPLING, &a, &KPERF_OPTS(KperfPmuOpts, .ringBufferKb = 1u << 30)),
		     -1);
	cr_assert_eq(Perrorno(), KPERF_ERR_INVALID_ATTR);
	cr_assert_eq(
		KperfOpen(SAMPLING, &a,
			  &KPERF_OPTS(KperfPmuOpts, .stackEntries = KPERF_MAX_STACK_ENTRIES + 1)),
		-1);
	cr_assert_eq(Perrorno(), KPERF_ERR_INVALID_ATTR);
	cr_assert_str_eq(Perror(), "stackEntries 1048577 is too large (at most 1048576)");
	a = (struct PmuAttr){ 0 };
	cr_assert_eq(open_sampling(&a, "msr/tsc/"), -1, "uncore-style PMUs cannot sample");
	for (i = 0; i < 65; i++)
		many[i] = "cpu-clock";
	a = (struct PmuAttr){ .evtList = many, .numEvt = 65 };
	cr_assert_eq(PmuOpen(SAMPLING, &a), -1);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_INVALID_EVTLIST);
	cr_assert_eq(tu_bpf_fds(), 0);
}

/* ---- the command ---- */

Test(record_cli, pprof_read_by_go_tool_pprof)
{
	char cmd[1024], *out;
	int status;

	if (system("command -v go >/dev/null 2>&1"))
		cr_skip_test("go is not installed (apt-get install golang-go)");
	snprintf(cmd, sizeof(cmd),
		 "%s/bin/kperf-bpf record -g -o /tmp/kperf-rec-%d.pb.gz -- %s/workloads/cpuburn "
		 "--ms 300 >/dev/null 2>&1 && HOME=/tmp GOCACHE=/tmp/kperf-gocache go tool pprof "
		 "-top -nodecount=3 /tmp/kperf-rec-%d.pb.gz 2>&1",
		 tu_build(), getpid(), tu_build(), getpid());
	out = tu_run(cmd, &status);
	cr_assert_eq(status, 0, "%s", out);
	/* the first function line of -top is the hottest */
	{
		char *l = strstr(out, "flat%");

		cr_assert_not_null(l, "%s", out);
		l = strchr(l, '\n');
		cr_assert(l && strstr(l, "hot_loop") && strstr(l, "hot_loop") < strchr(l + 1, '\n'),
			  "%s", out);
	}
	free(out);
	snprintf(cmd, sizeof(cmd), "/tmp/kperf-rec-%d.pb.gz", getpid());
	unlink(cmd);
}

Test(record_cli, folded_and_dump_outputs)
{
	char cmd[1024], *out;
	int status;

	snprintf(cmd, sizeof(cmd),
		 "%s/bin/kperf-bpf record -g --format folded -- %s/workloads/cpuburn --ms 200 "
		 "2>/dev/null | grep -c ';main;burn;hot_loop '",
		 tu_build(), tu_build());
	out = tu_run(cmd, &status);
	cr_assert_gt(atoi(out), 0, "no folded stack main;burn;hot_loop: %s", out);
	free(out);
	snprintf(cmd, sizeof(cmd),
		 "%s/bin/kperf-bpf record --dwarf --format dump -o /tmp/kperf-dump-%d.txt -- "
		 "%s/workloads/cpuburn --ms 200 >/dev/null 2>&1 && grep -c 'hot_loop+0x' "
		 "/tmp/kperf-dump-%d.txt",
		 tu_build(), getpid(), tu_build(), getpid());
	out = tu_run(cmd, &status);
	cr_assert_eq(status, 0, "%s", out);
	cr_assert_gt(atoi(out), 0);
	free(out);
	snprintf(cmd, sizeof(cmd), "/tmp/kperf-dump-%d.txt", getpid());
	unlink(cmd);
	snprintf(cmd, sizeof(cmd), "%s/bin/kperf-bpf record --format pprof -- true 2>&1",
		 tu_build());
	out = tu_run(cmd, &status);
	cr_assert_eq(status, 1);
	cr_assert(strstr(out, "give -o FILE"), "%s", out);
	free(out);
}

/* cpuhop execs on CPU 1 and maps libwl.so on CPU 0: the side band of the two CPUs is applied
 * in time order, so the exec does not drop the library mapped after it (CPU by CPU, CPU 0's
 * mmap came first and wl_lib_work was [unknown] in most runs). Exact: samples in wl_lib_work,
 * and no sample of the exec'ed program (comm "exe": it execs /proc/self/exe) whose leaf is
 * in no known mapping. (Not a share of all samples: the two starts, ld.so and the dlopen
 * take a fifth of the CPU time under an emulator.) */
Test(record_cli, exec_and_mmap_on_two_cpus_apply_in_time_order)
{
	char cmd[1024], *out;
	long in_lib = -1, other = -1, unknown = -1;
	int status;

	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		cr_skip_test("needs CPUs 0 and 1");
	snprintf(cmd, sizeof(cmd),
		 "%s/bin/kperf-bpf record -g --format folded -- %s/workloads/cpuhop --ms 300 "
		 "2>/dev/null | awk '{n[$1 ~ /;wl_lib_work$/] += $2} "
		 "/^exe;/ && $1 ~ /;\\[unknown\\][^;]*$/ {u += $2} "
		 "END {print n[1]+0, n[0]+0, u+0}'",
		 tu_build(), tu_build());
	out = tu_run(cmd, &status);
	cr_assert_eq(sscanf(out, "%ld %ld %ld", &in_lib, &other, &unknown), 3, "%s", out);
	cr_assert_gt(in_lib, 0, "no sample in wl_lib_work: %s", out);
	cr_assert_eq(unknown, 0, "samples of exe at an unknown address (in_lib other unknown): %s",
		     out);
	free(out);
}

Test(record_cli, all_cpus_while_a_command_runs)
{
	char cmd[1024], *out, *line;
	int status, burn = 0, other = 0;

	snprintf(cmd, sizeof(cmd),
		 "%s/bin/kperf-bpf record -a --format folded -- %s/workloads/cpuburn --ms 300 "
		 "2>/dev/null",
		 tu_build(), tu_build());
	out = tu_run(cmd, &status);
	cr_assert_eq(status, 0);
	for (line = strtok(out, "\n"); line; line = strtok(NULL, "\n")) {
		if (!strncmp(line, "cpuburn;", 8))
			burn += strstr(line, ";hot_loop ") != NULL;
		else if (strchr(line, ';') || strchr(line, ' '))
			other++;
	}
	cr_assert_gt(burn, 0, "the command's hot_loop");
	cr_assert_gt(other, 0, "system wide: other tasks (at least the idle loop) too");
	free(out);
}
