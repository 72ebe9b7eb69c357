/*
 * test_qa_cli.c - acceptance tests of `kperf-bpf trace` as a user runs it (issue 2): every
 * option with exact counts (the tracepoints workload makes exactly N 1 ms sleeps, the
 * syscalls workload exactly 50 000 getppid), --events with --min-duration, --hist, -o, the
 * CSV and JSON forms of periodic (-i) and final summaries, -C, a SIGINT to the tracer while
 * a launched command runs, and every bad argument with its message and exit status.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <signal.h>
#include <sys/syscall.h>
#include <cjson/cJSON.h>

#include "core/core.h"
#include "testutil.h"

#define KB tu_path("bin/kperf-bpf")

/* run `kperf-bpf trace ARGS` through the shell; stdout (and stderr when <err>) captured */
static char *trace(const char *args, bool with_stderr, int *status)
{
	char cmd[16384], *out;

	snprintf(cmd, sizeof(cmd), "%s trace %s %s", KB, args,
		 with_stderr ? "2>&1" : "2>/dev/null");
	out = tu_run(cmd, status);
	cr_assert_not_null(out);
	return out;
}

/* <field> of the syscall <name>, summed over the processes of a JSON report */
static double json_field(cJSON *doc, const char *name, const char *field)
{
	cJSON *proc, *sc;
	double sum = 0;

	cJSON_ArrayForEach(proc, cJSON_GetObjectItem(doc, "processes"))
	{
		cJSON_ArrayForEach(sc, cJSON_GetObjectItem(proc, "syscalls"))
		{
			if (!strcmp(cJSON_GetObjectItem(sc, "name")->valuestring, name))
				sum += cJSON_GetObjectItem(sc, field)->valuedouble;
		}
	}
	return sum;
}

Test(qa_trace_cli, bad_arguments_have_their_message_and_status_1)
{
	static const struct {
		const char *args, *msg;
	} cases[] = {
		{ "-p abc", "-p wants pids like 1234,5678, not 'abc'" },
		{ "-p 0", "pid 0 is not valid: pids are positive" },
		{ "-p 999999999", "no process or thread with pid 999999999 exists" },
		{ "-C x", "-C wants cpus like 0-3,6, not 'x'" },
		{ "-C 4096", "cpu 4096 is out of range: this machine has cpus 0-" },
		{ "-e getpidd", "did you mean getpid" },
		{ "-e ''", "-e wants syscall names like read,write" },
		{ "-d 0", "-d wants seconds > 0, not '0'" },
		{ "-i -2", "-i wants seconds > 0, not '-2'" },
		{ "--min-duration 5", "--min-duration only applies with --events" },
		{ "--events --min-duration -1", "--min-duration wants ms from 0 to" },
		{ "--events --min-duration inf", "--min-duration wants ms from 0 to" },
		{ "--events -i 1", "-i (a periodic summary) does not combine with --events" },
		{ "--ringbuf-kb -1", "--ringbuf-kb wants a size in KiB, not '-1'" },
		{ "--ringbuf-kb 4294967297", "--ringbuf-kb wants a size in KiB, not '4294967297'" },
		{ "--events --ringbuf-kb 2000000", "ringBufferKb 2000000 is too large" },
		{ "--format xml", "--format is table, json, csv, folded or svg, not 'xml'" },
		{ "--cgroup ''", "--cgroup wants a cgroup v2 directory" },
		{ "--cgroup /tmp", "/tmp is not a cgroup v2 directory" },
		{ "--cgroup /no/such/cgroup", "cannot open cgroup /no/such/cgroup" },
		{ "-o /no/such/dir/out",
		  "cannot write /no/such/dir/out: No such file or directory" },
		{ "-p 1 -- true", "give either -p or a command, not both" },
		{ "-- /no/such/command", "cannot run /no/such/command: No such file or directory" },
	};
	unsigned i;

	for (i = 0; i < KP_ARRAY_SIZE(cases); i++) {
		char args[256];
		int st = -1;
		char *out;

		/* -d 3: a case that is wrongly accepted ends instead of tracing forever */
		snprintf(args, sizeof(args), "-d 3 %s", cases[i].args);
		out = trace(args, true, &st);
		cr_expect_eq(st, strstr(args, "/no/such/command") ? 127 : 1, "%s: status %d", args,
			     st);
		cr_expect(strstr(out, cases[i].msg), "%s: %s", args, out);
		free(out);
	}
}

Test(qa_trace_cli, events_with_min_duration_and_the_exact_summary)
{
	char args[8192], path[64], *out;
	int st;

	/* 20 sleeps of 1 ms: at least 0.5 ms each, never a second */
	snprintf(args, sizeof(args),
		 "--events --min-duration 0.5 -e clock_nanosleep -- %s --sleeps 20",
		 tu_path("workloads/tracepoints"));
	out = trace(args, false, &st);
	cr_assert_eq(st, 0, "%s", out);
	{
		int events = 0;
		char *p;

		/* "      1.175      tracepoints/8791    clock_nanosleep() = 0     1155.641 us" */
		for (p = strstr(out, "clock_nanosleep() = 0 "); p;
		     p = strstr(p + 1, "clock_nanosleep() = 0 "))
			events++;
		cr_assert_eq(events, 20, "%d event lines: %s", events, out);
	}
	{
		char row[128];

		/* the table row: name, calls, errors */
		snprintf(row, sizeof(row), "   %-20s %10d %8d ", "clock_nanosleep", 20, 0);
		cr_assert(strstr(out, row), "no '%s' in %s", row, out);
	}
	free(out);

	/* into a file: the workload prints on stdout too */
	snprintf(path, sizeof(path), "/tmp/kperf-qa-ev-%d.json", getpid());
	snprintf(args, sizeof(args),
		 "--events --min-duration 1000 --format json -o %s -e clock_nanosleep -- %s "
		 "--sleeps 20",
		 path, tu_path("workloads/tracepoints"));
	free(trace(args, false, &st));
	cr_assert_eq(st, 0);
	cr_assert_eq(kp_read_file(path, &out, NULL), 0);
	unlink(path);
	{
		cJSON *doc = cJSON_Parse(out);

		cr_assert_not_null(doc, "not JSON: %s", out);
		cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItem(doc, "events")), 0,
			     "no call lasted a second");
		cr_assert_eq(json_field(doc, "clock_nanosleep", "calls"), 20,
			     "the summary counts every call");
		cr_assert_eq(json_field(doc, "clock_nanosleep", "errors"), 0);
		cJSON_Delete(doc);
	}
	free(out);
}

Test(qa_trace_cli, hist_buckets_hold_every_call)
{
	char args[8192], *out, *p;
	uint64_t sum = 0;

	snprintf(args, sizeof(args), "--hist -e getppid -- %s --writes 0 --fails 0",
		 tu_path("workloads/syscalls"));
	out = trace(args, false, NULL);
	cr_assert(strstr(out, "   getppid: latency of 50000 calls\n"), "%s", out);
	/* "     [  64ns,  128ns)      49040 |@@@...|" */
	for (p = strstr(out, "latency of"); (p = strstr(p, "\n     [")); p++) {
		char *close = strchr(p, ')');

		cr_assert_not_null(close);
		sum += strtoull(close + 1, NULL, 10);
	}
	cr_assert_eq(sum, 50000, "%s", out);
	free(out);
}

Test(qa_trace_cli, output_file_and_json)
{
	char args[8192], path[64], *out, *text;
	cJSON *doc;
	int st;

	snprintf(path, sizeof(path), "/tmp/kperf-qa-trace-%d.json", getpid());
	snprintf(args, sizeof(args), "--format json -o %s -e getppid,openat -- %s", path,
		 tu_path("workloads/syscalls"));
	out = trace(args, false, &st);
	cr_assert_eq(st, 0);
	cr_assert_str_eq(out, "", "-o leaves stdout empty");
	free(out);
	cr_assert_eq(kp_read_file(path, &text, NULL), 0);
	doc = cJSON_Parse(text);
	cr_assert_not_null(doc, "%s", text);
	cr_assert_eq(json_field(doc, "getppid", "calls"), 50000);
	cr_assert_geq(json_field(doc, "openat", "errors"), 300);
	cr_assert_eq(cJSON_GetObjectItem(doc, "dropped")->valuedouble, 0);
	cr_assert_eq(cJSON_IsTrue(cJSON_GetObjectItem(doc, "fallback")),
		     (int)tu_expected_syscall_fallback());
	cJSON_Delete(doc);
	free(text);
	unlink(path);
}

Test(qa_trace_cli, csv_intervals_then_the_summary)
{
	char args[8192], want[96], *out, *line, *save = NULL;
	int header = 0, interval = 0, summary = 0, row = 0;
	double last = -1;

	/* 0.6 s of sleeping, reported every 0.2 s */
	snprintf(args, sizeof(args), "-i 0.2 --format csv -e clock_nanosleep -- %s --sleeps 600",
		 tu_path("workloads/tracepoints"));
	out = trace(args, false, NULL);
	/* the syscall's number is the architecture's (230 on x86_64, 115 on arm64) */
	snprintf(want, sizeof(want), ",\"tracepoints\",,clock_nanosleep,%d,", SYS_clock_nanosleep);
	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *hist = strrchr(line, ','), *elapsed, *pair;
		uint64_t in_hist = 0;

		if (!strncmp(line, "filename=", 9))
			continue; /* the workload's own stdout */
		row++;
		if (!strncmp(line, "kind,", 5)) {
			cr_assert_eq(row, 1, "the header is the first line");
			cr_assert(strstr(line, ",p99_ns,elapsed_s,hist"), "%s", line);
			header++;
			continue;
		}
		cr_assert(!strncmp(line, "interval,", 9) || !strncmp(line, "summary,", 8), "%s",
			  line);
		cr_assert(strstr(line, want), "%s", line);
		/* ...,elapsed_s,hist: elapsed_s grows from one interval to the next */
		cr_assert_not_null(hist);
		*hist++ = '\0';
		elapsed = strrchr(line, ',');
		cr_assert_not_null(elapsed);
		cr_assert_geq(atof(elapsed + 1), last, "%s", line);
		last = atof(elapsed + 1);
		/* FROM_NS:COUNT;...: sleeps of at least 1 ms, in the slots from 2^19 ns up */
		for (pair = hist; pair && *pair;
		     pair = strchr(pair, ';') ? strchr(pair, ';') + 1 : NULL) {
			cr_assert_geq(strtoull(pair, NULL, 10), 1ULL << 19, "%s", hist);
			in_hist += strtoull(strchr(pair, ':') + 1, NULL, 10);
		}
		if (line[0] == 'i') {
			interval++;
		} else {
			summary++;
			cr_assert(strstr(line, ",600,0,"), "600 calls, 0 errors: %s", line);
			cr_assert_eq(in_hist, 600, "histogram %s", hist);
		}
	}
	cr_assert_eq(header, 1);
	cr_assert_eq(summary, 1);
	cr_assert_geq(interval, 1);
	free(out);
}

Test(qa_trace_cli, cpu_option)
{
	char args[8192], *out;

	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		cr_skip_test("needs 2 cpus");
	snprintf(args, sizeof(args), "-C 1 -e getppid --format json -- taskset -c 0 %s",
		 tu_path("workloads/syscalls"));
	out = trace(args, false, NULL);
	{
		cJSON *doc = cJSON_Parse(out);

		cr_assert_not_null(doc, "%s", out);
		cr_assert_eq(json_field(doc, "getppid", "calls"), 0, "it ran on cpu 0");
		cJSON_Delete(doc);
	}
	free(out);
	snprintf(args, sizeof(args), "-C 0 -e getppid --format json -- taskset -c 0 %s",
		 tu_path("workloads/syscalls"));
	out = trace(args, false, NULL);
	{
		cJSON *doc = cJSON_Parse(out);

		cr_assert_not_null(doc, "%s", out);
		cr_assert_eq(json_field(doc, "getppid", "calls"), 50000);
		cJSON_Delete(doc);
	}
	free(out);
}

/* Wait (up to 10 s) until the child of <tracer> blocks in syscall <nr>: the command was
 * released (so the tracer is attached, its signal handlers in place) and got that far. */
static bool command_in_syscall(pid_t tracer, int nr)
{
	char path[128];
	int i;

	for (i = 0; i < 1000; i++, tu_sleep_ms(10)) {
		FILE *f;
		int child = 0, cur = -1;

		snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)tracer, (int)tracer);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fscanf(f, "%d", &child) != 1)
			child = 0;
		fclose(f);
		if (child <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/syscall", child);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fscanf(f, "%d", &cur) != 1)
			cur = -1;
		fclose(f);
		if (cur == nr)
			return true;
	}
	return false;
}

/* a SIGINT to the tracer alone (not to its terminal's process group) ends the command too */
Test(qa_trace_cli, sigint_ends_the_launched_command_and_reports)
{
	char out_path[64], *text;
	struct tu_proc t;
	cJSON *doc;
	int st;

	snprintf(out_path, sizeof(out_path), "/tmp/kperf-qa-int-%d.json", getpid());
	{
		char *argv[] = {
			(char *)KB, "trace", "--format",	"json", "-o",
			out_path,   "-e",    "clock_nanosleep", "--",	(char *)"/bin/sleep",
			"30",	    NULL
		};
		char kb[4096];

		snprintf(kb, sizeof(kb), "%s", KB);
		argv[0] = kb;
		t = tu_spawn_v(argv, 0);
	}
	cr_assert_gt(t.pid, 0);
	cr_assert(command_in_syscall(t.pid, SYS_clock_nanosleep), "the command never slept");
	cr_assert_eq(kill(t.pid, SIGINT), 0);
	st = tu_wait(&t);
	cr_assert_eq(st, 128 + SIGTERM, "the command's status (SIGTERM): %d", st);
	cr_assert_eq(kp_read_file(out_path, &text, NULL), 0);
	doc = cJSON_Parse(text);
	cr_assert_not_null(doc, "the final report is complete JSON: %s", text);
	/* the sleep killed in its clock_nanosleep: the call returned (to die) and is counted,
	 * as an error (-ERESTART_RESTARTBLOCK) */
	cr_assert_eq(json_field(doc, "clock_nanosleep", "calls"), 1);
	cr_assert_eq(json_field(doc, "clock_nanosleep", "errors"), 1);
	cJSON_Delete(doc);
	free(text);
	unlink(out_path);
	/* no sleep 30 left behind */
	text = tu_run("pgrep -xf '/bin/sleep 30' | wc -l", NULL);
	cr_assert_eq(atoi(text), 0, "the command was left running");
	free(text);
}

/* -p with a thread id traces that thread's process, and as long as the process lives: the
 * workers hold (their tids stay valid) until the tracer of one of them has attached (its
 * first periodic summary, -i, comes after the attach: in every variant of the programs),
 * then end; the main thread's sleep after them is traced and waited for */
Test(qa_trace_cli, a_thread_id_stands_for_its_process)
{
	char *argv[] = { "syscalls", "--wait", "--threads", "2", "--getppid",	   "0",
			 "--writes", "0",      "--fails",   "0", "--hold-workers", "--sleep-ms",
			 "1000",     NULL };
	struct tu_proc w = tu_spawn_v(argv, 0), t;
	char path[64], tid_s[16], kb[4096], out[65536], *last;
	char *targv[] = { kb,	      "trace", "-p", tid_s, "-e", "clock_nanosleep", "-i", "0.1",
			  "--format", "json",  "-d", "60",  NULL };
	struct dirent *e;
	int tid = 0, pid, i, st;
	ssize_t n, got = 0;
	DIR *d;
	cJSON *doc;

	cr_assert_gt(w.pid, 0);
	cr_assert_eq(write(w.go_fd, "g", 1), 1);
	/* a worker thread: it waits for its byte, then ends; the process sleeps on */
	snprintf(path, sizeof(path), "/proc/%d/task", (int)w.pid);
	for (i = 0; i < 500 && !tid; i++, tu_sleep_ms(10)) {
		d = opendir(path);
		cr_assert_not_null(d);
		while ((e = readdir(d)))
			if (atoi(e->d_name) > 0 && atoi(e->d_name) != w.pid)
				tid = atoi(e->d_name);
		closedir(d);
	}
	cr_assert_gt(tid, 0, "no worker thread");
	snprintf(kb, sizeof(kb), "%s", KB);
	snprintf(tid_s, sizeof(tid_s), "%d", tid);
	t = tu_spawn_v(targv, 1);
	cr_assert_gt(t.pid, 0);
	/* its first summary (a line): attached */
	while (!memchr(out, '\n', (size_t)got) &&
	       (n = read(t.out_fd, out + got, sizeof(out) - 1 - (size_t)got)) > 0)
		got += n;
	cr_assert(memchr(out, '\n', (size_t)got), "the trace never reported");
	/* both workers end, then the process sleeps 1 s and exits */
	cr_assert_eq(write(w.go_fd, "gg", 2), 2);
	pid = w.pid;
	cr_assert_eq(tu_wait(&w), 0);
	/* the trace of a pid ends with its process */
	while ((n = read(t.out_fd, out + got, sizeof(out) - 1 - (size_t)got)) > 0)
		got += n;
	out[got] = '\0';
	close(t.out_fd);
	st = tu_wait(&t);
	cr_assert_eq(st, 0, "kperf-bpf trace failed: %s", out);
	/* the final summary: the last line */
	cr_assert(got > 0 && out[got - 1] == '\n', "%s", out);
	out[got - 1] = '\0';
	last = strrchr(out, '\n');
	last = last ? last + 1 : out;
	doc = cJSON_Parse(last);
	cr_assert_not_null(doc, "%s", out);
	cr_assert_eq(json_field(doc, "clock_nanosleep", "calls"), 1, "%s", out);
	cr_assert_geq(json_field(doc, "clock_nanosleep", "total_ns"), 1e9);
	cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItem(doc, "processes")), 1);
	cr_assert_eq(cJSON_GetObjectItem(
			     cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "processes"), 0), "pid")
			     ->valueint,
		     pid);
	cJSON_Delete(doc);
}
