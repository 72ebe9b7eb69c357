/*
 * test_pyframes314.c - CPython 3.14 frames in sampled stacks: Debian forky's python3.14, run in
 * a forky root (chroot; `make forky-root` makes /var/cache/kperf-forky), its layout read from
 * the _Py_DebugOffsets of the process itself (3.14's shape, user/runtime/python_debug.c), its
 * frames' code a tagged _PyStackRef (bpf/pyframes.bpf.h masks it). Under `kperf-bpf record -g`
 * on the host, the facts of test_pyframes313.c: each function's inclusive share within 5
 * points of what the script measured, inner() under outer(), the _bz2 extension's frames under
 * squeeze(), stacks reaching Py_BytesMain, two threads each with their own functions; a
 * spoiled cookie, forky's python3.15 (a version kperf-bpf does not read) and a free-threaded
 * python3.14t give native frames only and say why once. A package the archive lacks skips its
 * test with what forky_root.sh wrote of it (ROOT/kperf-missing), never silently.
 */
#include "pyframes_testutil.h"

#define ROOT "/var/cache/kperf-forky"
#define COMM "python3.14"

/* skip unless ROOT holds /usr/bin/<py>: the reason is the root's note of <pkg> when the archive
 * lacked it, else that there is no root */
static void need(const char *py, const char *pkg)
{
	char path[256], line[512], key[64];
	FILE *in;

	pf_need_py_kernel();
	snprintf(path, sizeof(path), ROOT "/usr/bin/%s", py);
	if (!access(path, X_OK))
		return;
	snprintf(key, sizeof(key), "%s: ", pkg);
	in = fopen(ROOT "/kperf-missing", "r");
	while (in && fgets(line, sizeof(line), in))
		if (!strncmp(line, key, strlen(key))) {
			fclose(in);
			line[strcspn(line, "\n")] = '\0';
			cr_skip_test("no %s: %s", path, line);
		}
	if (in)
		fclose(in);
	cr_skip_test("no Debian forky root with %s at " ROOT
		     " (make forky-root makes it, 2-6 minutes)",
		     py);
}

static void need_314(void)
{
	need("python3.14", "python3.14");
}

Test(pyframes, py314_shares_nesting_extension_main, .init = need_314)
{
	pf_expect_version_shares(ROOT, "/usr/bin/python3.14", COMM, "314");
}

Test(pyframes, py314_threads_carry_their_own, .init = need_314)
{
	struct pf_folded f = pf_root_threads(ROOT, "/usr/bin/python3.14");

	pf_expect_threads(&f);
	pf_free(&f);
}

Test(pyframes, py314_spoiled_debug_offsets_native_only, .init = need_314)
{
	char py[512], cmd[16384], *out;
	struct pf_root d;
	int st;

	pf_root_make(&d, ROOT);
	snprintf(cmd, sizeof(cmd),
		 "/usr/bin/python3 %s cookie " ROOT "/usr/bin/python3.14 %s/%s 2>&1",
		 pf_script("pyframes_patch.py"), d.host, COMM);
	out = tu_run(cmd, &st);
	cr_assert_eq(st, 0, "%s", out);
	free(out);
	snprintf(py, sizeof(py), "%s/%s", d.in, COMM);
	pf_expect_refused(&d, py, COMM,
			  "its _PyRuntime does not start with _Py_DebugOffsets (no \"xdebugpy\" "
			  "cookie): native frames only");
	pf_root_free(&d);
}

static void need_315(void)
{
	need("python3.15", "python3.15");
}

/* a real interpreter of a version whose layout kperf-bpf does not have */
Test(pyframes, py315_unknown_version_native_only, .init = need_315)
{
	struct pf_root d;

	pf_root_make(&d, ROOT);
	pf_expect_refused(&d, "/usr/bin/python3.15", "python3.15",
			  "runs Python 3.15 (" ROOT
			  "/usr/bin/python3.15): its frame layout is not known "
			  "to kperf-bpf (it reads 3.11, 3.13 and 3.14): native frames only");
	pf_root_free(&d);
}

static void need_314t(void)
{
	need("python3.14t", "python3.14-nogil");
}

/* a free-threaded build: its str objects keep their kind in other bits, no reader verified */
Test(pyframes, py314t_free_threaded_native_only, .init = need_314t)
{
	struct pf_root d;

	pf_root_make(&d, ROOT);
	pf_expect_refused(&d, "/usr/bin/python3.14t", "python3.14t",
			  "it is a free-threaded build (not read: its objects differ, and no "
			  "Debian suite has one to verify a reader on): native frames only");
	pf_root_free(&d);
}
