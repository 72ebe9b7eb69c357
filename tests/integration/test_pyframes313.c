/*
 * test_pyframes313.c - CPython 3.13 frames in sampled stacks: Debian 13's python3.13, run in a
 * trixie root (chroot; `make trixie-root` makes /var/cache/kperf-trixie, these tests skip
 * without it), its layout read from the _Py_DebugOffsets of the process itself
 * (user/runtime/python_debug.c). Under `kperf-bpf record -g` on the host: each function's
 * inclusive share within 5 points of what the script measured, inner() under outer(), the _bz2
 * extension's frames under the Python function that called bz2.compress (3.13's _json is built
 * into the interpreter), stacks reaching Py_BytesMain, two threads each with their own
 * functions; an interpreter whose debug offsets are spoiled, and one that says it is 3.12 (no
 * layout verified), give native frames only and say why once.
 */
#include "pyframes_testutil.h"

#include <poll.h>
#include <sys/stat.h>

#define ROOT "/var/cache/kperf-trixie"
#define COMM "python3.13"

/* suite pyframes (test_pyframes.c): 180 s, 6.18+ */
static void need_root(void)
{
	pf_need_py_kernel();
	if (access(ROOT "/usr/bin/python3.13", X_OK))
		cr_skip_test("no Debian 13 root with python3.13 at " ROOT
			     " (make trixie-root makes it, 1-5 minutes)");
}

/* a directory under the root's /tmp holding the workload: <in> its path inside the root */
struct droot {
	char host[256], in[128];
};

static void droot_make(struct droot *d)
{
	char cmd[8192], *out;
	int st;

	snprintf(d->host, sizeof(d->host), ROOT "/tmp/kperf-pyframes-XXXXXX");
	cr_assert(mkdtemp(d->host), "mkdtemp under " ROOT "/tmp");
	chmod(d->host, 0755);
	snprintf(d->in, sizeof(d->in), "%s", d->host + strlen(ROOT));
	snprintf(cmd, sizeof(cmd), "cp %s %s/ 2>&1", pf_script("pyframes_wl.py"), d->host);
	out = tu_run(cmd, &st);
	cr_assert_eq(st, 0, "%s", out);
	free(out);
}

static void droot_free(struct droot *d)
{
	char cmd[512], *out;
	int st;

	snprintf(cmd, sizeof(cmd), "rm -rf %s", d->host);
	out = tu_run(cmd, &st);
	free(out);
}

/* record `chroot ROOT <py> pyframes_wl.py <args>` */
static struct pf_folded record(const struct droot *d, const char *py, const char *args)
{
	char runner[1024], script[256];

	snprintf(runner, sizeof(runner), "chroot " ROOT " %s", py);
	snprintf(script, sizeof(script), "%s/pyframes_wl.py", d->in);
	return pf_record(runner, script, "", args);
}

Test(pyframes, py313_shares_nesting_extension_main, .init = need_root)
{
	static const char *const fns[] = { "heavy", "outer", "inner", "encode", "squeeze", NULL };
	const char *const in_main[] = { ";Py_BytesMain;", NULL };
	const char *const nested[] = { ";pyframes_wl.outer;pyframes_wl.inner;", NULL };
	const char *const inner[] = { ";pyframes_wl.inner;", NULL };
	const char *const bz2_any[] = { ";_bz2.cpython-313", NULL };
	const char *const bz2_under[] = { ";pyframes_wl.squeeze;", ";_bz2.cpython-313", NULL };
	unsigned long total, n, m;
	struct pf_folded f;
	struct droot d;

	droot_make(&d);
	f = record(&d, "/usr/bin/python3.13", "shares 1.5 bz2");
	droot_free(&d);
	cr_assert_eq(f.status, 0, "%s", f.out);
	total = pf_count(&f, COMM, NULL, false);
	cr_assert_gt(total, 600, "%lu samples of " COMM "\n%s", total, f.out);
	pf_expect_shares(&f, COMM, total, fns);
	n = pf_count(&f, COMM, inner, false);
	m = pf_count(&f, COMM, nested, false);
	cr_expect_gt(n, 50, "%lu samples in inner", n);
	cr_expect_geq(m * 100, n * 95, "inner under outer in %lu of its %lu samples", m, n);
	n = pf_count(&f, COMM, bz2_any, false);
	m = pf_count(&f, COMM, bz2_under, true);
	cr_expect_gt(n, 20, "%lu samples in _bz2", n);
	cr_expect_geq(m * 100, n * 95, "_bz2 under squeeze in %lu of its %lu samples", m, n);
	n = pf_count(&f, COMM, in_main, false);
	cr_expect_geq(n * 100, total * 90, "%lu of %lu samples reach main", n, total);
	pf_free(&f);
}

/* Attached with -p once both threads are named and running: launched, the threads would start
 * before the tables of python3.13 load (the launched command is chroot: it is held at its own
 * exec, not at the python3.13 it execs; their first samples are frame pointers', garbage in an
 * interpreter built without them), and the ctypes they name themselves with is new code. */
Test(pyframes, py313_threads_carry_their_own, .init = need_root)
{
	const char *const alpha[] = { ";pyframes_wl.alpha;", NULL };
	const char *const beta[] = { ";pyframes_wl.beta;", NULL };
	char script[256], what[64], text[256] = "";
	char *argv[] = {
		"/usr/sbin/chroot", ROOT, "/usr/bin/python3.13", script, "threads", "60", NULL
	};
	unsigned long na, nb;
	struct pf_folded f;
	struct tu_proc p;
	struct droot d;
	size_t n = 0;

	droot_make(&d);
	snprintf(script, sizeof(script), "%s/pyframes_wl.py", d.in);
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
		droot_free(&d);
		cr_assert_fail("the workload did not get ready: %s", text);
	}
	snprintf(what, sizeof(what), "-d 3 -p %d", (int)p.pid);
	f = pf_record_what(what);
	tu_kill(&p);
	close(p.out_fd);
	droot_free(&d);
	cr_assert_eq(f.status, 0, "%s", f.out);
	na = pf_count(&f, "pyalpha", NULL, false);
	nb = pf_count(&f, "pybeta", NULL, false);
	cr_assert_gt(na, 100, "%lu samples of pyalpha\n%s", na, f.text);
	cr_assert_gt(nb, 100, "%lu samples of pybeta", nb);
	cr_expect_geq(pf_count(&f, "pyalpha", alpha, false) * 100, na * 95);
	cr_expect_eq(pf_count(&f, "pyalpha", beta, false), 0);
	cr_expect_geq(pf_count(&f, "pybeta", beta, false) * 100, nb * 95);
	cr_expect_eq(pf_count(&f, "pybeta", alpha, false), 0);
	pf_free(&f);
}

/* a copy of the root's python3.13 patched by pyframes_patch.py <mode> [version]: native
 * frames only, and <why> said exactly once */
static void refused(const char *mode, const char *version, const char *why)
{
	char py[512], cmd[16384], *out, *at;
	const char *const any_py[] = { ";pyframes_wl.", NULL };
	const char *const native[] = { ";Py_BytesMain;", NULL };
	struct pf_folded f;
	struct droot d;
	int st;

	droot_make(&d);
	snprintf(cmd, sizeof(cmd),
		 "/usr/bin/python3 %s %s " ROOT "/usr/bin/python3.13 %s/%s %s 2>&1",
		 pf_script("pyframes_patch.py"), mode, d.host, COMM, version);
	out = tu_run(cmd, &st);
	cr_assert_eq(st, 0, "%s", out);
	free(out);
	snprintf(py, sizeof(py), "%s/%s", d.in, COMM);
	f = record(&d, py, "shares 0.5");
	droot_free(&d);
	cr_assert_eq(f.status, 0, "%s", f.out);
	cr_expect_eq(pf_count(&f, COMM, any_py, false), 0, "Python frames:\n%s", f.text);
	cr_expect_gt(pf_count(&f, COMM, native, false), 100, "%s", f.text);
	at = strstr(f.out, why);
	cr_assert(at, "no \"%s\" in:\n%s", why, f.out);
	cr_expect_null(strstr(at + 1, why), "said twice:\n%s", f.out);
	pf_free(&f);
}

Test(pyframes, py313_spoiled_debug_offsets_native_only, .init = need_root)
{
	refused("cookie", "",
		"its _PyRuntime does not start with _Py_DebugOffsets (no \"xdebugpy\" cookie): "
		"native frames only");
}

/* 3.12 has no _Py_DebugOffsets and no layout verified on a real 3.12 (no Debian package) */
Test(pyframes, py312_refused_native_only, .init = need_root)
{
	refused("version", "3.12", "runs Python 3.12 (");
}
