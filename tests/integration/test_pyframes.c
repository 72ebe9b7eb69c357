/*
 * test_pyframes.c - CPython frames in sampled stacks (bpf/pyframes.bpf.h, user/runtime):
 * Debian's python3.11 (its interpreter in the executable) running
 * tests/workloads/python/pyframes_wl.py under `kperf-bpf record -g`: each function's inclusive
 * share of the samples is within 5 points of the thread CPU time the script measured itself;
 * a callee sits under its caller; the _json C encoder's frames under the Python function that
 * called json.dumps; the stacks still reach main; two threads each carry their own functions;
 * an interpreter whose version has no layout, and one without _PyRuntime, give native frames
 * only and say why once.
 */
#include <criterion/criterion.h>
#include <sys/utsname.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testutil.h"

/* Python frames are read on 6.12 and later (user/pmu/sample_unwind.c: older verifiers refuse
 * the reader, or are not proven): below, record says so once and gives native frames */
static void need_py_kernel(void)
{
	struct utsname u;
	int major = 0, minor = 0;

	if (uname(&u) == 0)
		sscanf(u.release, "%d.%d", &major, &minor);
	if (major < 6 || (major == 6 && minor < 12))
		cr_skip_test("Python frames are read on 6.12+, this is %s", u.release);
}

TestSuite(pyframes, .timeout = 180, .init = need_py_kernel);

#define PY "/usr/bin/python3.11"

struct folded {
	char *text; /* the file, lines "frame;frame;... count" */
	char *out; /* the command's stdout and stderr */
	int status;
};

static const char *script(const char *name)
{
	static char buf[4096];

	/* the source tree, as the other suites find their sources: the build the kernel matrix
	 * runs is a copy elsewhere (build/kernels/build-ARCH), with no tests/ beside it */
	snprintf(buf, sizeof(buf), "%s/tests/workloads/python/%s", KPERF_SRCDIR, name);
	return buf;
}

/* record <py> running the workload with <args>, the profile folded */
static struct folded record(const char *py, const char *extra, const char *args)
{
	char cmd[8192], path[] = "/tmp/kperf-pyframes-XXXXXX";
	struct folded f = { 0 };
	FILE *in;
	long len;
	int fd;

	fd = mkstemp(path);
	cr_assert_geq(fd, 0);
	close(fd);
	snprintf(cmd, sizeof(cmd),
		 "PYTHONHOME=/usr %s/bin/kperf-bpf record -g %s --format folded -o %s -- %s %s %s "
		 "2>&1",
		 tu_build(), extra, path, py, script("pyframes_wl.py"), args);
	f.out = tu_run(cmd, &f.status);
	in = fopen(path, "r");
	cr_assert(in, "no profile from: %s\n%s", cmd, f.out);
	fseek(in, 0, SEEK_END);
	len = ftell(in);
	rewind(in);
	f.text = calloc(1, (size_t)len + 1);
	cr_assert_eq(fread(f.text, 1, (size_t)len, in), (size_t)len);
	fclose(in);
	unlink(path);
	return f;
}

static void folded_free(struct folded *f)
{
	free(f->text);
	free(f->out);
}

/* the samples of lines of <comm> whose stack holds every one of <need> (NULL-ended; a frame
 * list "a;b" must appear as such), in <order> when set: need[0] before need[1] */
static unsigned long count(const struct folded *f, const char *comm, const char *const *need,
			   bool order)
{
	unsigned long total = 0;
	const char *line = f->text, *nl;
	char buf[32768];

	for (; *line; line = nl + 1) {
		const char *sp, *prev = buf;
		size_t len;
		unsigned i;
		bool ok = true;

		nl = strchr(line, '\n');
		if (!nl)
			nl = line + strlen(line);
		len = (size_t)(nl - line);
		if (len + 2 >= sizeof(buf))
			len = sizeof(buf) - 2;
		memcpy(buf, line, len);
		buf[len] = '\0';
		sp = strrchr(buf, ' ');
		if (sp && !strncmp(buf, comm, strlen(comm)) && buf[strlen(comm)] == ';') {
			buf[sp - buf] = ';'; /* every frame ends with ';' */
			for (i = 0; need && need[i] && ok; i++) {
				const char *at = strstr(order ? prev : buf, need[i]);

				ok = at != NULL;
				if (at)
					prev = at;
			}
			if (ok)
				total += strtoul(sp + 1, NULL, 10);
		}
		if (!*nl)
			break;
	}
	return total;
}

static double share_of(const char *out, const char *name)
{
	char key[64];
	const char *at;

	snprintf(key, sizeof(key), " %s=", name);
	at = strstr(out, key);
	cr_assert(at, "the workload did not print %s:\n%s", name, out);
	return strtod(at + strlen(key), NULL);
}

Test(pyframes, shares_nesting_extension_main)
{
	static const char *const fns[] = { "heavy", "outer", "inner", "encode" };
	const char *const in_main[] = { ";Py_BytesMain;", NULL };
	const char *const nested[] = { ";pyframes_wl.outer;pyframes_wl.inner;", NULL };
	const char *const inner[] = { ";pyframes_wl.inner;", NULL };
	const char *const json_any[] = { ";_json.cpython", NULL };
	const char *const json_under[] = { ";pyframes_wl.encode;", ";_json.cpython", NULL };
	unsigned long total, n, m;
	struct folded f;
	unsigned i;

	if (access(PY, X_OK))
		cr_skip_test("no %s (Debian 12's python3.11)", PY);
	f = record(PY, "", "shares 1.5");
	cr_assert_eq(f.status, 0, "%s", f.out);
	total = count(&f, "python3.11", NULL, false);
	cr_assert_gt(total, 600, "%lu samples of python3.11\n%s", total, f.out);
	for (i = 0; i < 4; i++) {
		char frame[64];
		const char *const need[] = { frame, NULL };
		double want = share_of(f.out, fns[i]), got;

		snprintf(frame, sizeof(frame), ";pyframes_wl.%s;", fns[i]);
		got = 100.0 * (double)count(&f, "python3.11", need, false) / (double)total;
		cr_expect(got > want - 5 && got < want + 5,
			  "%s: %.1f%% of the samples, the script measured %.1f%%", fns[i], got,
			  want);
	}
	n = count(&f, "python3.11", inner, false);
	m = count(&f, "python3.11", nested, false);
	cr_expect_geq(m * 100, n * 95, "inner under outer in %lu of its %lu samples", m, n);
	n = count(&f, "python3.11", json_any, false);
	m = count(&f, "python3.11", json_under, true);
	cr_expect_gt(n, 20, "%lu samples in _json", n);
	cr_expect_geq(m * 100, n * 95, "_json under encode in %lu of its %lu samples", m, n);
	n = count(&f, "python3.11", in_main, false);
	cr_expect_geq(n * 100, total * 90, "%lu of %lu samples reach main", n, total);
	folded_free(&f);
}

Test(pyframes, threads_carry_their_own)
{
	const char *const alpha[] = { ";pyframes_wl.alpha;", NULL };
	const char *const beta[] = { ";pyframes_wl.beta;", NULL };
	unsigned long na, nb;
	struct folded f;

	if (access(PY, X_OK))
		cr_skip_test("no %s", PY);
	f = record(PY, "", "threads 1");
	cr_assert_eq(f.status, 0, "%s", f.out);
	na = count(&f, "pyalpha", NULL, false);
	nb = count(&f, "pybeta", NULL, false);
	cr_assert_gt(na, 100, "%lu samples of pyalpha\n%s", na, f.text);
	cr_assert_gt(nb, 100, "%lu samples of pybeta", nb);
	cr_expect_geq(count(&f, "pyalpha", alpha, false) * 100, na * 95);
	cr_expect_eq(count(&f, "pyalpha", beta, false), 0);
	cr_expect_geq(count(&f, "pybeta", beta, false) * 100, nb * 95);
	cr_expect_eq(count(&f, "pybeta", alpha, false), 0);
	folded_free(&f);
}

/* a copy of python3.11 patched by pyframes_patch.py <mode>: native frames only, and <why> said
 * exactly once */
static void refused(const char *mode, const char *why)
{
	char dir[] = "/tmp/kperf-pyframes-XXXXXX", py[256], cmd[16384], *out, *at;
	const char *const any_py[] = { ";pyframes_wl.", NULL };
	const char *const native[] = { ";Py_BytesMain;", NULL };
	struct folded f;
	int st;

	if (access(PY, X_OK))
		cr_skip_test("no %s", PY);
	cr_assert(mkdtemp(dir));
	snprintf(py, sizeof(py), "%s/python3.11", dir);
	snprintf(cmd, sizeof(cmd), "%s %s %s %s %s 2>&1", PY, script("pyframes_patch.py"), mode, PY,
		 py);
	out = tu_run(cmd, &st);
	cr_assert_eq(st, 0, "%s", out);
	free(out);
	f = record(py, "", "shares 0.5");
	unlink(py);
	rmdir(dir);
	cr_assert_eq(f.status, 0, "%s", f.out);
	cr_expect_eq(count(&f, "python3.11", any_py, false), 0, "Python frames:\n%s", f.text);
	cr_expect_gt(count(&f, "python3.11", native, false), 100, "%s", f.text);
	at = strstr(f.out, why);
	cr_assert(at, "no \"%s\" in:\n%s", why, f.out);
	cr_expect_null(strstr(at + 1, why), "said twice:\n%s", f.out);
	folded_free(&f);
}

Test(pyframes, unknown_version_native_only)
{
	refused("version", "runs Python 3.99 (");
}

Test(pyframes, stripped_native_only)
{
	refused("strip", "which has no _PyRuntime or _PyEval_EvalFrameDefault symbol (stripped): "
			 "native frames only");
}
