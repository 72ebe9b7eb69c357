/*
 * test_sysstack_cli.c - `kperf-bpf trace --stack` (issue 10): the sysstack workload (getppid
 * 300 times from ppid_from_a, 200 from ppid_from_b) traced by pid; the summary by stack in
 * the table, JSON (with per-call records and their stacks), folded and SVG outputs has the
 * exact counts per stack and the leaf user functions with their lines (--dwarf). Bad input.
 */
#include <dirent.h>
#include <cjson/cJSON.h>
#include <bpf/bpf.h>
#include <criterion/criterion.h>
#include <errno.h>
#include <sys/wait.h>

#include "core/core.h"
#include "sysstack_testutil.h"

/* BPF links process <pid> holds: its programs are attached once it holds them (tests of a
 * suite run side by side: the machine's count would mix theirs) */
/* the links of <pid> whose program is kp_sys_enter or kp_sys_exit: the syscall tracer itself
 * (its process followers, the side band and the unwinder's attach first or after, in any
 * order: a count of all its links would say "attached" too early) */
static int links(pid_t pid)
{
	char path[320], line[256];
	struct dirent *e;
	int n = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/fdinfo", pid);
	d = opendir(path);
	if (!d)
		return 0;
	while ((e = readdir(d))) {
		unsigned prog_id = 0;
		int is_link = 0;
		FILE *f;

		snprintf(path, sizeof(path), "/proc/%d/fdinfo/%s", pid, e->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		while (fgets(line, sizeof(line), f)) {
			is_link |= !strncmp(line, "link_id:", 8);
			sscanf(line, "prog_id: %u", &prog_id);
		}
		fclose(f);
		if (is_link && prog_id) {
			struct bpf_prog_info info = { 0 };
			__u32 len = sizeof(info);
			int fd = bpf_prog_get_fd_by_id(prog_id);

			if (fd >= 0 && !bpf_obj_get_info_by_fd(fd, &info, &len))
				n += !strcmp(info.name, "kp_sys_enter") ||
				     !strcmp(info.name, "kp_sys_exit");
			if (fd >= 0)
				close(fd);
		}
	}
	closedir(d);
	return n;
}

/* where process <pid>'s threads are, from /proc (a static buffer): their states, the kernel
 * functions they wait in and their kernel stacks */
static const char *where(pid_t pid)
{
	static char buf[8192];
	char path[320], *text;
	size_t len = 0;
	struct dirent *e;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	d = opendir(path);
	buf[0] = '\0';
	while (d && (e = readdir(d)) && len < sizeof(buf) - 512) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%s/stat", pid, e->d_name);
		if (!kp_read_file(path, &text, NULL)) {
			len += (size_t)snprintf(buf + len, sizeof(buf) - len, "\n%.200s", text);
			free(text);
		}
		snprintf(path, sizeof(path), "/proc/%d/task/%s/stack", pid, e->d_name);
		if (!kp_read_file(path, &text, NULL)) {
			len += (size_t)snprintf(buf + len, sizeof(buf) - len, "\n%.1000s", text);
			free(text);
		}
	}
	if (d)
		closedir(d);
	return buf;
}

/* `kperf-bpf trace --stack -e getppid -p PID <args>` on a sysstack workload, from attach
 * to the workload's end; its stdout (malloc'd) */
static char *run(const char *args)
{
	char *argv[32] = { 0 }, bin[4096], pid_s[16], *copy = strdup(args), *tok, *save = NULL;
	char *wl_argv[] = { "sysstack", "--wait", "--hold", "300", "200", NULL };
	size_t cap = 1 << 20, got = 0;
	char buf[8] = { 0 }, *out = malloc(cap);
	struct tu_proc w = tu_spawn_v(wl_argv, 1);
	struct tu_child c;
	int argc = 0, i, st;
	ssize_t r;

	cr_assert_gt(w.pid, 0);
	snprintf(bin, sizeof(bin), "%s/bin/kperf-bpf", tu_build());
	snprintf(pid_s, sizeof(pid_s), "%d", w.pid);
	argv[argc++] = bin;
	argv[argc++] = "trace";
	argv[argc++] = "--stack";
	argv[argc++] = "-e";
	argv[argc++] = "getppid";
	argv[argc++] = "-p";
	argv[argc++] = pid_s;
	for (tok = strtok_r(copy, " ", &save); tok && argc < 30; tok = strtok_r(NULL, " ", &save))
		argv[argc++] = tok;
	c = tu_exec_later(argv, -1);
	cr_assert_gt(c.pid, 0);
	cr_assert_eq(write(c.go, "g", 1), 1);
	close(c.go);
	/* sys_enter and sys_exit: attached (or the trace ended: said with its output) */
	for (i = 0; i < 6000 && links(c.pid) < 2; i++) {
		if (waitpid(c.pid, &st, WNOHANG) == c.pid) {
			r = read(c.out, out, cap - 1);
			out[r > 0 ? r : 0] = '\0';
			cr_assert_fail("kperf-bpf trace ended before it attached (status %#x): %s",
				       st, out);
		}
		tu_sleep_ms(10);
	}
	if (links(c.pid) < 2)
		cr_assert_fail("the trace never attached: %s", where(c.pid));
	tu_go(&w);
	cr_assert_eq(read(w.out_fd, buf, 5), 5, "the workload did not finish its calls");
	tu_kill(&w); /* the trace of a pid ends with it */
	while ((r = read(c.out, out + got, cap - 1 - got)) > 0)
		got += (size_t)r;
	out[got] = '\0';
	close(c.out);
	cr_assert_eq(waitpid(c.pid, &st, 0), c.pid);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "kperf-bpf trace failed: %s", out);
	free(copy);
	return out;
}

static const char *first_user_symbol(cJSON *frames, int *line)
{
	cJSON *f;

	cJSON_ArrayForEach(f, frames)
	{
		if (cJSON_IsFalse(cJSON_GetObjectItem(f, "kernel"))) {
			*line = cJSON_GetObjectItem(f, "line")->valueint;
			return cJSON_GetObjectItem(f, "symbol")->valuestring;
		}
	}
	return "";
}

Test(sysstack_cli, json_with_events_and_stacks)
{
	char *out = run("--dwarf --events --format json");
	cJSON *doc = cJSON_Parse(out), *e, *s;
	int na = 0, nb = 0, line, seen = 0;

	cr_assert_not_null(doc, "not JSON: %.500s", out);
	cJSON_ArrayForEach(e, cJSON_GetObjectItem(doc, "events"))
	{
		const char *leaf = first_user_symbol(cJSON_GetObjectItem(e, "stack"), &line);

		if (!strcmp(leaf, "ppid_from_a")) {
			na++;
			cr_assert_eq(line, ss_marker_line("SYSSTACK_LINE_A"));
		} else {
			cr_assert_str_eq(leaf, "ppid_from_b");
			cr_assert_eq(line, ss_marker_line("SYSSTACK_LINE_B"));
			nb++;
		}
	}
	cr_assert_eq(na, SS_A);
	cr_assert_eq(nb, SS_B);
	cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItem(doc, "stacks")), 2);
	cJSON_ArrayForEach(s, cJSON_GetObjectItem(doc, "stacks"))
	{
		const char *leaf = first_user_symbol(cJSON_GetObjectItem(s, "frames"), &line);
		int calls = cJSON_GetObjectItem(s, "calls")->valueint;

		cr_assert_str_eq(cJSON_GetObjectItem(s, "syscall")->valuestring, "getppid");
		cr_assert_eq(calls, !strcmp(leaf, "ppid_from_a") ? SS_A : SS_B, "%s: %d", leaf,
			     calls);
		seen++;
	}
	cr_assert_eq(seen, 2);
	cJSON_Delete(doc);
	free(out);
}

Test(sysstack_cli, table_shows_the_top_stacks_with_lines)
{
	char *out = run("--dwarf"), want[128];

	cr_assert(strstr(out, "Stacks by total latency"), "%s", out);
	cr_assert(strstr(out, "getppid: 500 calls in 2 stacks"), "%s", out);
	snprintf(want, sizeof(want), "ppid_from_a  sysstack.c:%u\n",
		 ss_marker_line("SYSSTACK_LINE_A"));
	cr_assert(strstr(out, want), "no '%s' in %s", want, out);
	snprintf(want, sizeof(want), "ppid_from_b  sysstack.c:%u\n",
		 ss_marker_line("SYSSTACK_LINE_B"));
	cr_assert(strstr(out, want), "no '%s' in %s", want, out);
	cr_assert(strstr(out, "  300 calls  total"), "%s", out);
	cr_assert(strstr(out, "  200 calls  total"), "%s", out);
	free(out);

	/* --stack-top 1: the longest stack only */
	out = run("--stack-top 1");
	cr_assert(strstr(out, "  #1  "), "%s", out);
	cr_assert_null(strstr(out, "  #2  "), "%s", out);
	free(out);
}

Test(sysstack_cli, folded_and_svg)
{
	char *out = run("--format folded"), *line, *save = NULL;
	int lines = 0, a = 0, b = 0;

	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		/* comm;root;...;caller;leaf;syscall_[k] total_ns */
		cr_assert(!strncmp(line, "sysstack;", 9), "%s", line);
		a += strstr(line, ";main;ppid_from_a;getppid_[k] ") != NULL;
		b += strstr(line, ";main;ppid_from_b;getppid_[k] ") != NULL;
		lines++;
	}
	cr_assert_eq(lines, 2);
	cr_assert_eq(a, 1);
	cr_assert_eq(b, 1);
	free(out);

	out = run("--format svg");
	cr_assert(!strncmp(out, "<?xml", 5), "%.200s", out);
	cr_assert(strstr(out, "Syscall latency by stack"));
	cr_assert(strstr(out, "ppid_from_a"));
	cr_assert(strstr(out, "ppid_from_b"));
	cr_assert(strstr(out, "</svg>"));
	free(out);
}

static char *run_bad(const char *args, int *status)
{
	char cmd[1024];

	snprintf(cmd, sizeof(cmd), "%s/bin/kperf-bpf trace %s 2>&1", tu_build(), args);
	return tu_run(cmd, status);
}

Test(sysstack_cli, bad_input)
{
	static const struct {
		const char *args, *msg;
	} cases[] = {
		{ "--format svg -d 1",
		  "kperf-bpf trace: --format svg shows the latency by stack: add --stack\n" },
		{ "--format folded -d 1",
		  "kperf-bpf trace: --format folded shows the latency by stack: add --stack\n" },
		{ "--stack --format svg --events -d 1",
		  "kperf-bpf trace: --format svg is the summary by stack at the end: not with "
		  "--events (use table, json or csv)\n" },
		{ "--stack --format folded -i 1 -d 1",
		  "kperf-bpf trace: --format folded is the summary by stack at the end: not with "
		  "-i (use table, json or csv)\n" },
		{ "--dwarf -d 1", "kperf-bpf trace: --dwarf only applies with --stack\n" },
		{ "--stack-top 3 -d 1",
		  "kperf-bpf trace: --stack-top only applies with --stack\n" },
		{ "--stack-entries 64 -d 1",
		  "kperf-bpf trace: --stack-entries only applies with --stack\n" },
		{ "--stack --stack-top 0",
		  "kperf-bpf trace: --stack-top wants a number of stacks (1 or more), not '0'\n" },
		{ "--stack --stack-top -2",
		  "kperf-bpf trace: --stack-top wants a number of stacks (1 or more), not '-2'\n" },
		{ "--stack --stack-entries many",
		  "kperf-bpf trace: --stack-entries wants a number of stacks, not 'many'\n" },
		{ "--stack --stack-entries 2000000 -d 1",
		  "kperf-bpf trace: stackEntries 2000000 is too large (at most 1048576)\n" },
		{ "--call-graph fp -d 1",
		  "kperf-bpf trace: --call-graph only applies with --stack\n" },
		{ "--stack --call-graph lbr",
		  "kperf-bpf trace: --call-graph is dwarf or fp, not 'lbr'\n" },
		{ "--format flame",
		  "kperf-bpf trace: --format is table, json, csv, folded or svg, not 'flame'\n" },
	};
	size_t i;
	int status;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *out = run_bad(cases[i].args, &status);

		cr_assert_not_null(out);
		cr_assert_neq(status, 0, "%s: exit 0", cases[i].args);
		cr_assert_str_eq(out, cases[i].msg, "%s", cases[i].args);
		free(out);
	}
}

/* a command that execs, makes its calls and exits within a poll of the trace: the mappings of
 * its new image come from the side band of mmaps, not from /proc (gone by then) */
Test(sysstack_cli, a_short_command_has_symbolized_stacks)
{
	char cmd[4096], *out;
	cJSON *doc, *s;
	int st = -1, line, seen = 0;

	snprintf(cmd, sizeof(cmd),
		 "%s/bin/kperf-bpf trace --stack --dwarf -e getppid --format json -- "
		 "%s/workloads/sysstack 7 5 2>/dev/null",
		 tu_build(), tu_build());
	out = tu_run(cmd, &st);
	cr_assert_not_null(out);
	cr_assert_eq(st, 0, "%.2000s", out);
	doc = cJSON_Parse(out);
	cr_assert_not_null(doc, "not JSON: %.500s", out);
	cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItem(doc, "stacks")), 2, "%.3000s", out);
	cJSON_ArrayForEach(s, cJSON_GetObjectItem(doc, "stacks"))
	{
		const char *leaf = first_user_symbol(cJSON_GetObjectItem(s, "frames"), &line);
		int calls = cJSON_GetObjectItem(s, "calls")->valueint;
		bool a = !strcmp(leaf, "ppid_from_a");

		cr_assert(a || !strcmp(leaf, "ppid_from_b"), "leaf '%s' in %.3000s", leaf, out);
		cr_assert_eq(calls, a ? 7 : 5, "%s: %d", leaf, calls);
		cr_assert_eq(line, ss_marker_line(a ? "SYSSTACK_LINE_A" : "SYSSTACK_LINE_B"));
		seen++;
	}
	cr_assert_eq(seen, 2);
	cJSON_Delete(doc);
	free(out);
}
