/*
 * test_jit.c - JIT code in profiles (issue 22): `kperf-bpf record` of Node with
 * --perf-basic-prof and of a JVM with -XX:+DumpPerfMapAtExit, launched as commands (their
 * perf maps are read after they exited), of a running JVM with -p that nobody asked for a map
 * (kperf-bpf asks it through its attach socket), and of a JVM that refuses (its JIT code is
 * one "[JIT] java" row, the refusal said once).
 *
 * The workloads spend their time in hotLoop() (tests/workloads/jit/). Counted from the JSON
 * profile: the samples whose leaf is JIT code (a symbol of /tmp/perf-PID.map, or the
 * "[JIT] comm" of code no map names); >= 90% of them, and of all samples, must name hotLoop.
 * The tests skip, saying why, where node or a JDK is missing.
 */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <cjson/cJSON.h>
#include <glob.h>
#include <poll.h>
#include <pwd.h>
#include <sys/stat.h>

#include "testutil.h"

TestSuite(jit, .timeout = 120);

#define JS KPERF_SRCDIR "/tests/workloads/jit/jit_hot.js"

/* <prog> in $PATH into <buf>, false when absent */
static bool in_path(const char *prog, char *buf, size_t size)
{
	const char *path = getenv("PATH"), *p, *end;

	for (p = path ? path : "/usr/bin:/bin"; *p; p = *end ? end + 1 : end) {
		end = strchrnul(p, ':');
		snprintf(buf, size, "%.*s/%s", (int)(end - p), p, prog);
		if (access(buf, X_OK) == 0)
			return true;
	}
	return false;
}

static void need_node(char *node, size_t size)
{
	if (!in_path("node", node, size))
		cr_skip_test("node is not installed (make deps: nodejs)");
}

static void need_java(char *java, size_t size)
{
	struct stat st;

	if (!in_path("java", java, size))
		cr_skip_test("java is not installed (make deps: openjdk-17-jdk-headless)");
	if (stat(tu_path("workloads/JitHot.class"), &st))
		cr_skip_test("%s was not built (javac was missing at make time)",
			     tu_path("workloads/JitHot.class"));
}

struct counts {
	long all, hot, jit, named_jit; /* samples; named_jit: leaf in a perf map */
	long labels; /* leaves named "[JIT] <label>" */
	pid_t pid; /* of the first sample */
};

static bool is_label(const char *sym, const char *label)
{
	return !strncmp(sym, "[JIT] ", 6) && (!label || !strcmp(sym + 6, label));
}

/* count the samples of the JSON profile <path> */
static struct counts count(const char *path, const char *label)
{
	struct counts c = { 0 };
	char *text = NULL;
	cJSON *doc, *samples, *s;

	cr_assert_eq(kp_read_file(path, &text, NULL), 0, "no profile %s", path);
	doc = cJSON_Parse(text);
	free(text);
	cr_assert_not_null(doc, "%s is not JSON", path);
	samples = cJSON_GetObjectItem(doc, "samples");
	cJSON_ArrayForEach(s, samples)
	{
		cJSON *stack = cJSON_GetObjectItem(s, "stack"),
		      *leaf = cJSON_GetArrayItem(stack, 0);
		long n = (long)cJSON_GetNumberValue(cJSON_GetObjectItem(s, "count"));
		const char *sym, *mod;

		if (!c.pid)
			c.pid = (pid_t)cJSON_GetNumberValue(cJSON_GetObjectItem(s, "pid"));
		c.all += n;
		if (!leaf)
			continue;
		sym = cJSON_GetStringValue(cJSON_GetObjectItem(leaf, "symbol"));
		mod = cJSON_GetStringValue(cJSON_GetObjectItem(leaf, "module"));
		if (!sym || !mod)
			continue;
		if (strstr(sym, "hotLoop"))
			c.hot += n;
		if (!strncmp(mod, "/tmp/perf-", 10)) {
			c.jit += n;
			c.named_jit += n;
		} else if (is_label(sym, NULL)) {
			c.jit += n;
			c.labels += is_label(sym, label) ? n : 0;
		}
	}
	cJSON_Delete(doc);
	cr_log_info("%s: %ld samples, %ld in JIT code (%ld named by a perf map), %ld in hotLoop "
		    "(%.1f%% of all, %.1f%% of JIT code)",
		    path, c.all, c.jit, c.named_jit, c.hot, c.all ? 100.0 * c.hot / c.all : 0,
		    c.jit ? 100.0 * c.hot / c.jit : 0);
	return c;
}

/* >= 90% of all samples and of those in JIT code name hotLoop (the rest is the runtime's
 * start-up: the workloads burn 5 s of CPU, the start-ups 0.2 to 0.4 s on a loaded machine) */
static void expect_hot(const struct counts *c)
{
	cr_assert_gt(c->jit, 0, "no sample in JIT code");
	cr_expect_geq(c->hot * 10, c->jit * 9, "%ld of %ld samples in JIT code name hotLoop",
		      c->hot, c->jit);
	cr_expect_geq(c->hot * 10, c->all * 9, "hotLoop has %ld of %ld samples", c->hot, c->all);
}

/* what the runtimes leave in /tmp: the perf map, a killed JVM's socket and perf data; and in
 * the working directory: Node's V8 log (--perf-basic-prof writes isolate-ADDR-PID-v8.log) */
static void forget_files(pid_t pid)
{
	struct passwd *me = getpwuid(geteuid());
	char path[300];
	glob_t g;
	size_t i;

	snprintf(path, sizeof(path), "isolate-0x*-%d-v8.log", (int)pid);
	if (glob(path, 0, NULL, &g) == 0) {
		for (i = 0; i < g.gl_pathc; i++)
			unlink(g.gl_pathv[i]);
		globfree(&g);
	}

	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)pid);
	unlink(path);
	snprintf(path, sizeof(path), "/tmp/.java_pid%d", (int)pid);
	unlink(path);
	if (me) {
		snprintf(path, sizeof(path), "/tmp/hsperfdata_%s/%d", me->pw_name, (int)pid);
		unlink(path);
	}
}

/* `record --format json` of <what> into <json>; its output (stdout and stderr) */
static char *record(const char *what, const char *json)
{
	char cmd[2048];
	char *out;
	int status = -1;

	snprintf(cmd, sizeof(cmd), "%s/bin/kperf-bpf record --format json -o %s %s 2>&1",
		 tu_build(), json, what);
	out = tu_run(cmd, &status);
	cr_assert_not_null(out);
	cr_assert_eq(status, 0, "%s:\n%s", cmd, out);
	return out;
}

Test(jit, node_launched_its_map_read_after_it_exited)
{
	char node[1024], what[4096], json[64];
	struct counts c;

	need_node(node, sizeof(node));
	snprintf(json, sizeof(json), "/tmp/kperf-jit-node-%d.json", (int)getpid());
	snprintf(what, sizeof(what), "-- %s --perf-basic-prof %s 5", node, JS);
	free(record(what, json));
	c = count(json, NULL);
	unlink(json);
	forget_files(c.pid);
	expect_hot(&c);
	cr_expect_eq(c.named_jit, c.jit, "JIT code left unnamed: %ld samples", c.jit - c.named_jit);
}

Test(jit, java_launched_its_map_dumped_at_exit)
{
	char java[1024], what[4096], json[64];
	struct counts c;

	need_java(java, sizeof(java));
	snprintf(json, sizeof(json), "/tmp/kperf-jit-java-%d.json", (int)getpid());
	snprintf(what, sizeof(what),
		 "-- %s -XX:+UnlockDiagnosticVMOptions -XX:+DumpPerfMapAtExit -cp %s/workloads "
		 "JitHot 1000",
		 java, tu_build());
	free(record(what, json));
	c = count(json, NULL);
	unlink(json);
	forget_files(c.pid);
	expect_hot(&c);
}

/* a JVM running JitHot 0 (with <opt> unless NULL), compiled and ready */
static struct tu_proc start_jvm(const char *java, const char *opt)
{
	char cp[4096], text[256] = "";
	char *argv[] = { (char *)java, "-cp", cp, "JitHot", "0", NULL, NULL };
	struct tu_proc p;
	size_t n = 0;

	if (opt) { /* before the class name */
		memmove(argv + 2, argv + 1, 4 * sizeof(*argv));
		argv[1] = (char *)opt;
	}
	snprintf(cp, sizeof(cp), "%s/workloads", tu_build());
	p = tu_spawn_v(argv, 1);
	cr_assert_gt(p.pid, 0);
	while (!strstr(text, "ready\n") && n + 1 < sizeof(text)) {
		struct pollfd pfd = { p.out_fd, POLLIN, 0 };
		ssize_t r;

		if (poll(&pfd, 1, 60000) <= 0 || (r = read(p.out_fd, text + n, 1)) <= 0)
			break;
		n += (size_t)r;
		text[n] = '\0';
	}
	if (!strstr(text, "ready\n")) {
		tu_kill(&p);
		cr_assert_fail("the JVM did not get ready: %s", text);
	}
	return p;
}

Test(jit, running_jvm_asked_for_its_map)
{
	char java[4096], what[64], json[64], map[64];
	struct tu_proc jvm;
	struct counts c;
	struct stat st;
	pid_t pid;

	need_java(java, sizeof(java));
	jvm = start_jvm(java, NULL);
	pid = jvm.pid;
	snprintf(map, sizeof(map), "/tmp/perf-%d.map", (int)jvm.pid);
	cr_assert_neq(stat(map, &st), 0, "%s exists before anyone asked for it", map);
	snprintf(json, sizeof(json), "/tmp/kperf-jit-jvm-%d.json", (int)getpid());
	snprintf(what, sizeof(what), "-p %d -d 2", (int)jvm.pid);
	free(record(what, json));
	cr_expect_eq(stat(map, &st), 0, "kperf-bpf did not have %s written", map);
	cr_expect_eq(kill(jvm.pid, 0), 0, "the JVM did not survive being asked");
	tu_kill(&jvm);
	forget_files(pid);
	c = count(json, NULL);
	unlink(json);
	expect_hot(&c);
	cr_expect_eq(c.named_jit, c.jit, "JIT code left unnamed: %ld samples", c.jit - c.named_jit);
}

Test(jit, a_jvm_that_refuses_is_said_once_its_code_one_row)
{
	char java[4096], what[64], json[64], want[256];
	struct tu_proc jvm;
	struct counts c;
	char *out, *p;
	int said = 0;
	pid_t pid;

	need_java(java, sizeof(java));
	jvm = start_jvm(java, "-XX:+DisableAttachMechanism");
	pid = jvm.pid;
	snprintf(json, sizeof(json), "/tmp/kperf-jit-refuse-%d.json", (int)getpid());
	snprintf(what, sizeof(what), "-p %d -d 1", (int)jvm.pid);
	out = record(what, json);
	tu_kill(&jvm);
	forget_files(pid);
	snprintf(want, sizeof(want),
		 "JVM %d did not write its perf map (Compiler.perfmap): its attach mechanism is "
		 "disabled (-XX:+DisableAttachMechanism); its JIT code is shown as [JIT] java",
		 (int)pid);
	for (p = out; (p = strstr(p, want)); p++)
		said++;
	cr_expect_eq(said, 1, "said %d times:\n%s", said, out);
	free(out);
	c = count(json, "java");
	unlink(json);
	/* no map: all of its JIT code is one name, none is one row per address */
	cr_expect_eq(c.named_jit, 0);
	cr_assert_gt(c.jit, 0, "no sample in JIT code");
	cr_expect_eq(c.labels, c.jit, "JIT code under another name than [JIT] java");
	cr_expect_geq(c.labels * 10, c.all * 9, "[JIT] java has %ld of %ld samples", c.labels,
		      c.all);
}
