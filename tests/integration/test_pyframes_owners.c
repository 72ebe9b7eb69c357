/*
 * test_pyframes_owners.c - CPython frames in the stacks that are not CPU samples (issue 22:
 * "every consumer of stacks gets them"): Debian's python3.11 running
 * tests/workloads/python/pyframes_wl.py naps N, where napper() calls nap() N times, which
 * sleeps 2 ms in time.sleep (clock_nanosleep) and allocates a bytearray of 123457 bytes:
 *   - record --off-cpu: every nanosecond blocked in clock_nanosleep is under
 *     pyframes_wl.napper -> pyframes_wl.nap;
 *   - trace --stack -e clock_nanosleep: the time of every call is under them;
 *   - memscope -g: each of the N mallocs of 123458 bytes has pyframes_wl.nap and
 *     pyframes_wl.napper above its call site.
 * Each owner (off-CPU, syscalls, memory) registers the Python frame reader with its unwinder
 * (user/unwind/owner.c), as sampling does.
 */
#include "pyframes_testutil.h"

TestSuite(pyframes_owners, .timeout = 180, .init = pf_need_py_kernel);

#define PY "/usr/bin/python3.11"
#define NAPS 40

static void need_py(void)
{
	if (access(PY, X_OK))
		cr_skip_test("no %s (Debian 12's python3.11)", PY);
}

Test(pyframes_owners, offcpu_stacks_carry_python_frames)
{
	const char *const sleeping[] = { ";clock_nanosleep", NULL };
	const char *const under[] = { ";pyframes_wl.napper;pyframes_wl.nap;", ";clock_nanosleep",
				      NULL };
	unsigned long all, napped;
	struct pf_folded f;
	char what[1024];

	need_py();
	snprintf(what, sizeof(what), "--off-cpu -- %s %.900s naps %d", PY,
		 pf_script("pyframes_wl.py"), NAPS);
	f = pf_record_what(what);
	cr_assert_eq(f.status, 0, "%s", f.out);
	all = pf_count(&f, "python3.11", sleeping, false);
	napped = pf_count(&f, "python3.11", under, true);
	/* NAPS naps of 2 ms: at least NAPS * 2 ms blocked there */
	cr_assert_geq(all, NAPS * 2000000UL, "%lu ns in clock_nanosleep\n%s", all, f.text);
	cr_assert_eq(napped, all, "%lu of %lu ns in clock_nanosleep under napper -> nap\n%s",
		     napped, all, f.text);
	pf_free(&f);
}

Test(pyframes_owners, syscall_stacks_carry_python_frames)
{
	char cmd[8192], *out, *line, *save = NULL;
	unsigned long all = 0, napped = 0;
	int st;

	need_py();
	snprintf(cmd, sizeof(cmd),
		 "%s/bin/kperf-bpf trace --stack -e clock_nanosleep --format folded -- %s %s "
		 "naps %d 2>/dev/null",
		 tu_build(), PY, pf_script("pyframes_wl.py"), NAPS);
	out = tu_run(cmd, &st);
	cr_assert_eq(st, 0, "%s", out);
	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		const char *sp = strrchr(line, ' ');
		unsigned long c = sp ? strtoul(sp + 1, NULL, 10) : 0;

		/* the stacks that reach main (a few calls' user stacks end at libc's
		 * clock_nanosleep, Python or not: the same without Python frames) */
		if (!strstr(line, "clock_nanosleep") || !strstr(line, ";Py_BytesMain;"))
			continue;
		all += c;
		if (strstr(line, ";pyframes_wl.napper;pyframes_wl.nap;"))
			napped += c;
	}
	/* folded: the time in the calls (ns) */
	cr_assert_gt(all, 0, "no call of clock_nanosleep reaches main");
	cr_assert_eq(napped, all, "%lu of %lu ns in clock_nanosleep under napper -> nap", napped,
		     all);
	free(out);
}

Test(pyframes_owners, allocation_stacks_carry_python_frames)
{
	char cmd[8192], out[] = "/tmp/kp-pyms-XXXXXX.csv", *text, *csv, *line, *save = NULL;
	int fd = mkstemps(out, 4), st = -1;
	unsigned long all = 0, napped = 0;
	FILE *f;
	long len;

	need_py();
	cr_assert(fd >= 0);
	close(fd);
	snprintf(cmd, sizeof(cmd), "%s/bin/kperf-bpf memscope -g -o %s -- %s %s naps %d 2>&1",
		 tu_build(), out, PY, pf_script("pyframes_wl.py"), NAPS);
	text = tu_run(cmd, &st);
	cr_assert_eq(st, 0, "%s: %s", cmd, text);
	f = fopen(out, "r");
	cr_assert_not_null(f);
	fseek(f, 0, SEEK_END);
	len = ftell(f);
	rewind(f);
	csv = calloc(1, (size_t)len + 1);
	cr_assert_eq(fread(csv, 1, (size_t)len, f), (size_t)len);
	fclose(f);
	unlink(out);
	for (line = strtok_r(csv, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (!strstr(line, "MALLOC,HOST,malloc,") || !strstr(line, "{size:123458,"))
			continue;
		all++;
		/* leaf first: the function that allocated, then its caller */
		if (strstr(line, "pyframes_wl.nap (pyframes_wl.py);pyframes_wl.napper "
				 "(pyframes_wl.py)"))
			napped++;
	}
	cr_assert_eq(all, NAPS, "%lu mallocs of 123458 bytes\n%s", all, text);
	cr_assert_eq(napped, NAPS, "%lu of %d mallocs under nap <- napper", napped, NAPS);
	free(csv);
	free(text);
}
