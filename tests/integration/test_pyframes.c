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
#include "pyframes_testutil.h"

TestSuite(pyframes, .timeout = 180, .init = pf_need_py_kernel);

#define PY "/usr/bin/python3.11"

static struct pf_folded record(const char *py, const char *args)
{
	return pf_record(py, pf_script("pyframes_wl.py"), "", args);
}

Test(pyframes, shares_nesting_extension_main)
{
	static const char *const fns[] = { "heavy", "outer", "inner", "encode", NULL };
	const char *const in_main[] = { ";Py_BytesMain;", NULL };
	const char *const nested[] = { ";pyframes_wl.outer;pyframes_wl.inner;", NULL };
	const char *const inner[] = { ";pyframes_wl.inner;", NULL };
	const char *const json_any[] = { ";_json.cpython", NULL };
	const char *const json_under[] = { ";pyframes_wl.encode;", ";_json.cpython", NULL };
	unsigned long total, n, m;
	struct pf_folded f;

	if (access(PY, X_OK))
		cr_skip_test("no %s (Debian 12's python3.11)", PY);
	f = record(PY, "shares 1.5");
	cr_assert_eq(f.status, 0, "%s", f.out);
	total = pf_count(&f, "python3.11", NULL, false);
	cr_assert_gt(total, 600, "%lu samples of python3.11\n%s", total, f.out);
	pf_expect_shares(&f, "python3.11", total, fns);
	n = pf_count(&f, "python3.11", inner, false);
	m = pf_count(&f, "python3.11", nested, false);
	cr_expect_geq(m * 100, n * 95, "inner under outer in %lu of its %lu samples", m, n);
	n = pf_count(&f, "python3.11", json_any, false);
	m = pf_count(&f, "python3.11", json_under, true);
	cr_expect_gt(n, 20, "%lu samples in _json", n);
	cr_expect_geq(m * 100, n * 95, "_json under encode in %lu of its %lu samples", m, n);
	n = pf_count(&f, "python3.11", in_main, false);
	cr_expect_geq(n * 100, total * 90, "%lu of %lu samples reach main", n, total);
	pf_free(&f);
}

Test(pyframes, threads_carry_their_own)
{
	const char *const alpha[] = { ";pyframes_wl.alpha;", NULL };
	const char *const beta[] = { ";pyframes_wl.beta;", NULL };
	unsigned long na, nb;
	struct pf_folded f;

	if (access(PY, X_OK))
		cr_skip_test("no %s", PY);
	f = record(PY, "threads 1");
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

/* a copy of python3.11 patched by pyframes_patch.py <mode>: native frames only, and <why> said
 * exactly once */
static void refused(const char *mode, const char *why)
{
	char dir[] = "/tmp/kperf-pyframes-XXXXXX", py[256], cmd[16384], *out, *at;
	const char *const any_py[] = { ";pyframes_wl.", NULL };
	const char *const native[] = { ";Py_BytesMain;", NULL };
	struct pf_folded f;
	int st;

	if (access(PY, X_OK))
		cr_skip_test("no %s", PY);
	cr_assert(mkdtemp(dir));
	snprintf(py, sizeof(py), "%s/python3.11", dir);
	snprintf(cmd, sizeof(cmd), "%s %s %s %s %s 2>&1", PY, pf_script("pyframes_patch.py"), mode,
		 PY, py);
	out = tu_run(cmd, &st);
	cr_assert_eq(st, 0, "%s", out);
	free(out);
	f = record(py, "shares 0.5");
	unlink(py);
	rmdir(dir);
	cr_assert_eq(f.status, 0, "%s", f.out);
	cr_expect_eq(pf_count(&f, "python3.11", any_py, false), 0, "Python frames:\n%s", f.text);
	cr_expect_gt(pf_count(&f, "python3.11", native, false), 100, "%s", f.text);
	at = strstr(f.out, why);
	cr_assert(at, "no \"%s\" in:\n%s", why, f.out);
	cr_expect_null(strstr(at + 1, why), "said twice:\n%s", f.out);
	pf_free(&f);
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
