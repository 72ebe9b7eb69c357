/*
 * test_unwind_owners.c - the .eh_frame unwinder in the stacks that are not CPU samples
 * (issue 21 after sampling and syscalls; issue 10's launched command), on the workload built
 * without frame pointers (tests/workloads/nofp.c):
 *   - off-CPU: each of nofp --naps' 60 sleeps in libc's nanosleep is one block whose user
 *     stack goes nap_leaf -> nap_path -> main (frame pointers stop in libc);
 *   - memscope: each of nofp --allocs' 40 mallocs of 4321 bytes has alloc_path and main above
 *     its call site alloc_leaf (the process lives on 50 ms: memscope reads its mappings at
 *     its first record, a process gone by then has its frames [unknown]);
 *   - a launched command is held at its exec and at its entry point while its tables load:
 *     none of its samples is taken by frame pointers for want of them, and every sample in
 *     its leaves, the first ones included, reaches main;
 *   - the same when a wrapper (env, nice, taskset, sh -c) execs it: held at each exec; and
 *     when a shell forks it: held at its exec (its guard continues it if kperf-bpf is killed);
 *   - the same with --wall, where sampling's unwinder holds it and off-CPU's follows: its
 *     first samples and its naps reach main, its stops are no blocked time, and kperf-bpf's
 *     child before the exec is not in the profile;
 *   - unwind_churn: 30 s of the whole system under process churn, every sample in one stack.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "kperf/kperf.h"
#include "testutil.h"

TestSuite(unwind_owners, .timeout = 120);

static bool has(const struct Stack *s, const char *name)
{
	for (; s; s = s->next)
		if (s->symbol && s->symbol->symbolName && !strcmp(s->symbol->symbolName, name))
			return true;
	return false;
}

/* blocks of nofp --naps 60: those in nanosleep, and those of them whose stack is whole */
static void offcpu_naps(unsigned call_graph, unsigned long *in_sleep, unsigned long *whole)
{
	char *argv[] = { "nofp", "--naps", "60", NULL };
	struct KperfPmuOpts o = { .sz = sizeof(o), .callGraph = call_graph, .offCpuOnly = 1 };
	struct PmuAttr a = { .blockedSample = 1, .callStack = 1, .symbolMode = RESOLVE_ELF };
	struct PmuData *d = NULL;
	struct tu_proc w = tu_spawn_v(argv, 0);
	int pids[1], pd, n, i;

	cr_assert_gt(w.pid, 0);
	pids[0] = w.pid;
	a.pidList = pids;
	a.numPid = 1;
	pd = KperfOpen(SAMPLING, &a, &o);
	cr_assert_gt(pd, 0, "KperfOpen: %d %s", Perrorno(), Perror());
	cr_assert_eq(PmuEnable(pd), 0, "%s", Perror());
	tu_go(&w);
	cr_assert_eq(tu_wait(&w), 0);
	cr_assert_eq(PmuDisable(pd), 0, "%s", Perror());
	n = PmuRead(pd, &d);
	cr_assert_gt(n, 0, "PmuRead: %s", Perror());
	*in_sleep = *whole = 0;
	for (i = 0; i < n; i++) {
		if (d[i].pid != pids[0] || d[i].tid != pids[0] ||
		    !has(d[i].stack, "clock_nanosleep"))
			continue;
		*in_sleep += d[i].count;
		if (has(d[i].stack, "nap_leaf") && has(d[i].stack, "nap_path") &&
		    has(d[i].stack, "main"))
			*whole += d[i].count;
	}
	PmuDataFree(d);
	PmuClose(pd);
	cr_assert_eq(tu_bpf_fds(), 0, "BPF objects left open");
}

Test(unwind_owners, offcpu_stacks_reach_main_without_frame_pointers)
{
	unsigned long in_sleep, whole;

	/* a blocked thread's user registers are read with bpf_task_pt_regs (5.15), before it at
	 * the top of its kernel stack where the kernel's BTF says (user/unwind/task_regs.c);
	 * without either, off-CPU user stacks are frame pointers' (counted: KP_UW_CNT_NO_REGS) */
	if (libbpf_probe_bpf_helper(BPF_PROG_TYPE_KPROBE, BPF_FUNC_task_pt_regs, NULL) <= 0 &&
	    access("/sys/kernel/btf/vmlinux", R_OK))
		cr_skip_test("no bpf_task_pt_regs (5.15+) and no kernel BTF");
	offcpu_naps(KPERF_CALL_GRAPH_DWARF, &in_sleep, &whole);
	cr_assert_eq(in_sleep, 60, "%lu blocks in clock_nanosleep, 60 naps", in_sleep);
	cr_assert_eq(whole, 60, "%lu of 60 blocks reach nap_leaf, nap_path and main", whole);
	/* what they were: libc's nanosleep keeps no frame pointer, the walk stops there */
	offcpu_naps(KPERF_CALL_GRAPH_FP, &in_sleep, &whole);
	cr_assert_lt(whole, 6, "fp: %lu of %lu blocks in clock_nanosleep reach main", whole,
		     in_sleep);
}

/* the lines of <text> that hold all of <a>, <b>, <c> and <e> */
static int lines_with(const char *text, const char *a, const char *b, const char *c, const char *e)
{
	const char *line = text, *end;
	int n = 0;

	for (; *line; line = *end ? end + 1 : end) {
		char buf[8192];
		size_t len;

		end = strchrnul(line, '\n');
		len = (size_t)(end - line) < sizeof(buf) - 1 ? (size_t)(end - line) :
							       sizeof(buf) - 1;
		memcpy(buf, line, len);
		buf[len] = '\0';
		n += strstr(buf, a) && strstr(buf, b) && strstr(buf, c) && strstr(buf, e);
	}
	return n;
}

Test(unwind_owners, memscope_allocation_stacks_reach_the_caller)
{
	char cmd[9000], kb[4096], out[] = "/tmp/kp-uwo-XXXXXX.csv", *text, *csv;
	int fd = mkstemps(out, 4), status = -1;
	FILE *f;
	long len;

	cr_assert(fd >= 0);
	close(fd);
	snprintf(kb, sizeof(kb), "%s", tu_path("bin/kperf-bpf"));
	snprintf(cmd, sizeof(cmd), "%s memscope -g -o %s -- %s --nowait --allocs 40 --naps 25 2>&1",
		 kb, out, tu_path("workloads/nofp"));
	text = tu_run(cmd, &status);
	cr_assert_not_null(text);
	cr_assert_eq(status, 0, "%s: %s", cmd, text);
	f = fopen(out, "r");
	cr_assert_not_null(f);
	fseek(f, 0, SEEK_END);
	len = ftell(f);
	rewind(f);
	csv = calloc(1, (size_t)len + 1);
	cr_assert_eq(fread(csv, 1, (size_t)len, f), (size_t)len);
	fclose(f);
	unlink(out);
	cr_assert_eq(lines_with(csv, "MALLOC,HOST,malloc,", "{size:4321,", "", ""), 40, "%s", csv);
	cr_assert_eq(lines_with(csv, "MALLOC,HOST,malloc,", "{size:4321,",
				"alloc_leaf (nofp);alloc_path (nofp)", ";main (nofp)"),
		     40, "%s", csv);
	free(csv);
	free(text);
}

/* record -g of nofp launched through <wrapper> (programs that exec it in turn, "" for none):
 * its first samples too are unwound from its tables */
static void held_run(const char *wrapper)
{
	char cmd[4096], *out, *line, *save = NULL;
	unsigned long leaf = 0, whole = 0, launcher = 0;
	int st;

	snprintf(cmd, sizeof(cmd),
		 "%s/bin/kperf-bpf record -g -F 999 --format folded -- %s %s/workloads/nofp "
		 "--nowait --ms 60 2>&1",
		 tu_build(), wrapper, tu_build());
	out = tu_run(cmd, &st);
	cr_assert_eq(st, 0, "%s", out);
	/* none by frame pointers for want of tables (a sample in ld.so before the entry point
	 * may stop at a library it is mapping: counted apart, its frames so far kept) */
	cr_assert(!strstr(out, "taken before their process's unwind tables were loaded") ||
			  strstr(out, "(0: a process not loaded yet"),
		  "%s", out);
	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		const char *sp = strrchr(line, ' ');
		unsigned long c = sp ? strtoul(sp + 1, NULL, 10) : 0;

		launcher += !strncmp(line, "kperf-bpf;", 10);
		if (strncmp(line, "nofp;", 5) ||
		    !(strstr(line, "leaf_a") || strstr(line, "leaf_b") || strstr(line, "leaf_cmp")))
			continue;
		leaf += c;
		if (strstr(line, ";main;run_all;"))
			whole += c;
	}
	cr_assert_gt(leaf, 10, "%s: %lu samples in the leaves", wrapper, leaf);
	cr_assert_eq(whole, leaf, "%s: %lu of %lu samples in the leaves reach main", wrapper, whole,
		     leaf);
	cr_assert_eq(launcher, 0, "%s: %lu stacks of the launcher before its exec", wrapper,
		     launcher);
	free(out);
}

Test(unwind_owners, launched_command_is_held_until_its_tables_load)
{
	held_run("");
}

/* a wrapper execs the program: held at each exec of the launched process, the wrapper's and
 * the program's (#21: held at the first only, the program's first samples were frame
 * pointers') */
Test(unwind_owners, wrapped_command_is_held_at_each_exec)
{
	held_run("env");
	held_run("nice -n 0 taskset -c 0 env"); /* three wrappers, four execs */
	held_run("/bin/sh -c 'exec \"$0\" \"$@\"'");
}

/* a command that forks its program instead of exec'ing it (a shell's script, make, time): the
 * child is held at its exec as the command is (#21: it was not, its first samples were frame
 * pointers' and stopped at the leaf) */
Test(unwind_owners, forked_command_is_held_at_its_exec)
{
	char *out;

	held_run("/bin/sh -c '\"$0\" \"$@\"; true'");
	held_run("env /bin/sh -c '\"$0\" \"$@\"; true'"); /* exec'ed, then forked */
	/* nothing is left stopped: no nofp process at all once its shell is done */
	out = tu_run("pgrep -x nofp | wc -l", NULL);
	cr_assert_str_eq(out, "0\n");
	free(out);
}

/* kperf-bpf killed (kill -9) while a child of its command is held at its exec: its guard
 * continues the child once kperf-bpf is gone, which then runs to its end (the command itself
 * dies with kperf-bpf: PR_SET_PDEATHSIG; its child does not); nothing is left stopped and the
 * guard is gone. kperf-bpf is stopped first (SIGSTOP) so that the child is
 * sure to be held at the kill: the BPF program stops it, nobody continues it. */
Test(unwind_owners, held_child_goes_on_when_kperf_bpf_is_killed)
{
	char cmd[8192], *out;
	int st;

	/* each wait ends at a deadline (a bound, not a measure: a missing fact fails below) */
	snprintf(
		cmd, sizeof(cmd),
		"d=$(mktemp -d) && mkfifo \"$d/go\" || exit 2\n"
		"%s/bin/kperf-bpf record -g -o \"$d/prof\" -- /bin/sh -c "
		"'echo $$ > \"$0/pid.tmp\"; mv \"$0/pid.tmp\" \"$0/pid\"; read x < \"$0/go\"; "
		"\"$1\" --nowait --ms 10 > \"$0/out\"' "
		"\"$d\" %s/workloads/nofp > \"$d/log\" 2>&1 & k=$!\n"
		"state() { s=$(sed 's/.*) //' /proc/${1:-0}/stat 2>/dev/null | cut -c1); "
		"case $s in ''|Z|X) echo gone ;; *) echo $s ;; esac; }\n"
		"until_() { end=$(($(date +%%s) + $1)); shift; "
		"until eval \"$@\"; do [ $(date +%%s) -ge $end ] && return 1; sleep 0.05; done; }\n"
		"until_ 60 '[ -s \"$d/pid\" ]'\n"
		"sh=$(cat \"$d/pid\"); g=$(pgrep -P $k | grep -vx \"$sh\")\n"
		"kill -STOP $k; echo go > \"$d/go\"\n"
		"until_ 20 'c=$(pgrep -P $sh); [ -n \"$c\" ] && [ \"$(state $c)\" = T ]'\n"
		"echo \"guards=$(echo $g | wc -w) held=$(state $c)\"\n"
		"kill -KILL $k; wait $k\n"
		"until_ 20 'grep -qx done \"$d/out\" && [ \"$(state $g)\" = gone ]'\n"
		"echo \"out=$(tr '\\n' ' ' < \"$d/out\") child=$(state $c) guard=$(state $g)\"\n"
		"kill -KILL $c $sh 2>/dev/null; rm -rf \"$d\"\n",
		tu_build(), tu_build());
	out = tu_run(cmd, &st);
	cr_assert_not_null(out);
	cr_assert(strstr(out, "guards=1 held=T\n"), "%s", out);
	cr_assert(strstr(out, " ready done  child=gone guard=gone\n"), "%s", out);
	free(out);
}

/* --wall: on-CPU samples and blocked time, two BPF objects that unwind (sampling's and
 * off-CPU's). Sampling's unwinder holds the launched command, off-CPU's shares its hold map and
 * gets its tables at each stop: the first samples in its leaves reach main, its naps too, and
 * the time it was stopped is nobody's blocked time (a stopped task leaves the cpu in
 * do_signal_stop: no block has it) */
static char *wall_run(const char *args, unsigned long *leaf, unsigned long *whole,
		      const char *leaf_a, const char *leaf_b, const char *path)
{
	char cmd[4096], *out, *text, *line, *save = NULL;
	int st;

	snprintf(cmd, sizeof(cmd),
		 "%s/bin/kperf-bpf record --wall -g -F 999 --format folded -- %s/workloads/nofp "
		 "--nowait %s 2>&1",
		 tu_build(), tu_build(), args);
	out = tu_run(cmd, &st);
	cr_assert_eq(st, 0, "%s", out);
	text = strdup(out);
	/* the command's samples start at its exec: none of kperf-bpf's child before it (its
	 * per-cpu events see every task; #21: its wait and its execve were in the profile) */
	cr_assert(strncmp(out, "kperf-bpf;", 10) && !strstr(out, "\nkperf-bpf;"),
		  "the launcher before the exec:\n%s", out);
	*leaf = *whole = 0;
	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		const char *sp = strrchr(line, ' ');
		unsigned long c = sp ? strtoul(sp + 1, NULL, 10) : 0;

		if (strncmp(line, "nofp;", 5) || !(strstr(line, leaf_a) || strstr(line, leaf_b)))
			continue;
		*leaf += c;
		if (strstr(line, path))
			*whole += c;
	}
	free(out);
	return text;
}

/* blocked time (a line that ends in [off-cpu]) in do_signal_stop: a hold's stop counted as the
 * program's. On-CPU samples in that path (the task coming back from the stop, in the kernel)
 * are its time on the cpu, not a stop. */
static int blocked_stops(const char *text)
{
	const char *line = text, *end;
	int n = 0;

	for (; *line; line = *end ? end + 1 : end) {
		const char *stop = strstr(line, "do_signal_stop");

		end = strchrnul(line, '\n');
		n += stop && stop < end && memmem(line, (size_t)(end - line), "[off-cpu] ", 10);
	}
	return n;
}

Test(unwind_owners, wall_launched_command_is_held_until_its_tables_load)
{
	unsigned long leaf, whole;
	char *text;

	text = wall_run("--ms 60", &leaf, &whole, ";leaf_", ";leaf_cmp", ";main;run_all;");
	cr_assert_gt(leaf, 10, "%lu samples in the leaves\n%s", leaf, text);
	cr_assert_eq(whole, leaf, "%lu of %lu samples in the leaves reach main\n%s", whole, leaf,
		     text);
	cr_assert_eq(blocked_stops(text), 0, "a stop counted as blocked:\n%s", text);
	free(text);
	/* its blocks: every nap in nanosleep under nap_leaf, nap_path and main */
	text = wall_run("--naps 20", &leaf, &whole, ";clock_nanosleep", ";nanosleep",
			";main;nap_path;nap_leaf;");
	cr_assert_gt(leaf, 0, "no block in nanosleep\n%s", text);
	cr_assert_eq(whole, leaf, "%lu of %lu ns in nanosleep reach main\n%s", whole, leaf, text);
	cr_assert_eq(blocked_stops(text), 0, "a stop counted as blocked:\n%s", text);
	free(text);
}

/* issue 21's churn test: 30 s of the whole system while short processes start and exit (their
 * tables loaded as they come, their entries dropped as they go): no stack lost, and every
 * sample in exactly one stack (the folded lines add up to the summary's count). In
 * tests/kernels/skip.list: 30 s of churn is too long for the matrix's emulated guests. */
Test(unwind_churn, thirty_seconds_system_wide_every_sample_in_one_stack, .timeout = 300)
{
	char cmd[8192], out_path[] = "/tmp/kp-uwchurn-XXXXXX", *out, *folded, *p;
	unsigned long long summary = 0, sum = 0;
	int fd = mkstemp(out_path), st;
	FILE *f;

	cr_assert(fd >= 0);
	close(fd);
	snprintf(cmd, sizeof(cmd),
		 "(while :; do /bin/true; done) & c=$!; "
		 "%s/bin/kperf-bpf record -a -g -d 30 --format folded -o %s 2>&1; s=$?; "
		 "kill $c 2>/dev/null; wait $c 2>/dev/null; exit $s",
		 tu_build(), out_path);
	out = tu_run(cmd, &st);
	cr_assert_eq(st, 0, "%s", out);
	cr_assert_null(strstr(out, "not kept"), "%s", out);
	cr_assert_null(strstr(out, "could not be captured"), "%s", out);
	p = strstr(out, " samples\n");
	cr_assert_not_null(p, "%s", out);
	while (p > out && p[-1] >= '0' && p[-1] <= '9')
		p--;
	summary = strtoull(p, NULL, 10);
	f = fopen(out_path, "r");
	cr_assert_not_null(f);
	folded = calloc(1, 1 << 16);
	while (fgets(folded, 1 << 16, f)) {
		char *sp = strrchr(folded, ' ');

		if (sp)
			sum += strtoull(sp + 1, NULL, 10);
	}
	fclose(f);
	unlink(out_path);
	cr_assert_gt(summary, 0, "%s", out);
	cr_assert_eq(sum, summary, "folded lines add up to %llu, the summary says %llu", sum,
		     summary);
	free(folded);
	free(out);
}
