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

Test(pyframes, py313_shares_nesting_extension_main, .init = need_root)
{
	pf_expect_version_shares(ROOT, "/usr/bin/python3.13", COMM, "313");
}

/* attached with -p once both threads are named and running (pf_root_threads says why) */
Test(pyframes, py313_threads_carry_their_own, .init = need_root)
{
	struct pf_folded f = pf_root_threads(ROOT, "/usr/bin/python3.13");

	pf_expect_threads(&f);
	pf_free(&f);
}

/* a copy of the root's python3.13 patched by pyframes_patch.py <mode> [version]: native
 * frames only, and <why> said exactly once */
static void refused(const char *mode, const char *version, const char *why)
{
	char py[512], cmd[16384], *out;
	struct pf_root d;
	int st;

	pf_root_make(&d, ROOT);
	snprintf(cmd, sizeof(cmd),
		 "/usr/bin/python3 %s %s " ROOT "/usr/bin/python3.13 %s/%s %s 2>&1",
		 pf_script("pyframes_patch.py"), mode, d.host, COMM, version);
	out = tu_run(cmd, &st);
	cr_assert_eq(st, 0, "%s", out);
	free(out);
	snprintf(py, sizeof(py), "%s/%s", d.in, COMM);
	pf_expect_refused(&d, py, COMM, why);
	pf_root_free(&d);
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
