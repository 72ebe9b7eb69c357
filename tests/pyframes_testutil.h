/*
 * pyframes_testutil.h - helpers of the Python-frame tests (test_pyframes.c: Debian 12's
 * python3.11; test_pyframes313.c: Debian 13's python3.13 in a trixie root; test_pyframes314.c:
 * forky's python3.14 and python3.15 in a forky root): record a CPython running
 * tests/workloads/python/pyframes_wl.py with `kperf-bpf record -g --format folded`, count the
 * samples whose stacks hold given frames, read the shares the workload measured; the roots'
 * tests: the workload copied into the root, run there by chroot, profiled on the host.
 */
#ifndef KPERF_PYFRAMES_TESTUTIL_H
#define KPERF_PYFRAMES_TESTUTIL_H

#include <criterion/criterion.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "testutil.h"

/* Python frames are read on 6.18 and later (user/pmu/sample_unwind.c: older verifiers refuse
 * the reader, or are not proven): below, record says so once and gives native frames */
static inline void pf_need_py_kernel(void)
{
	struct utsname u;
	int major = 0, minor = 0;

	if (uname(&u) == 0)
		sscanf(u.release, "%d.%d", &major, &minor);
	if (major < 6 || (major == 6 && minor < 12))
		cr_skip_test("Python frames are read on 6.12+, this is %s", u.release);
}

struct pf_folded {
	char *text; /* the file, lines "frame;frame;... count" */
	char *out; /* the command's stdout and stderr */
	int status;
};

/* tests/workloads/python/<name> of the source tree, as the other suites find their sources:
 * the build the kernel matrix runs is a copy elsewhere (build/kernels/build-ARCH), with no
 * tests/ beside it */
static inline const char *pf_script(const char *name)
{
	static char buf[4096];

	snprintf(buf, sizeof(buf), "%s/tests/workloads/python/%s", KPERF_SRCDIR, name);
	return buf;
}

/* `kperf-bpf record -g --format folded <what>`, the profile folded */
static inline struct pf_folded pf_record_what(const char *what)
{
	char cmd[8192], path[] = "/tmp/kperf-pyframes-XXXXXX";
	struct pf_folded f = { 0 };
	FILE *in;
	long len;
	int fd;

	fd = mkstemp(path);
	cr_assert_geq(fd, 0);
	close(fd);
	snprintf(cmd, sizeof(cmd),
		 "PYTHONHOME=/usr %s/bin/kperf-bpf record -g --format folded -o %s %s 2>&1",
		 tu_build(), path, what);
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

/* record `<runner> <script> <args>` launched (runner: the interpreter, or a chroot and it) */
static inline struct pf_folded pf_record(const char *runner, const char *script, const char *extra,
					 const char *args)
{
	char what[16384];

	snprintf(what, sizeof(what), "%s -- %s %s %s", extra, runner, script, args);
	return pf_record_what(what);
}

static inline void pf_free(struct pf_folded *f)
{
	free(f->text);
	free(f->out);
}

/* the samples of lines of <comm> whose stack holds every one of <need> (NULL-ended; a frame
 * list "a;b" must appear as such), in <order> when set: need[0] before need[1] */
static inline unsigned long pf_count(const struct pf_folded *f, const char *comm,
				     const char *const *need, bool order)
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

/* the share of CPU time in function <name> that the workload printed */
static inline double pf_share_of(const char *out, const char *name)
{
	char key[64];
	const char *at;

	snprintf(key, sizeof(key), " %s=", name);
	at = strstr(out, key);
	cr_assert(at, "the workload did not print %s:\n%s", name, out);
	return strtod(at + strlen(key), NULL);
}

/* each of <fns>' inclusive share of <comm>'s <total> samples within 5 points of what the
 * workload measured */
static inline void pf_expect_shares(const struct pf_folded *f, const char *comm,
				    unsigned long total, const char *const *fns)
{
	unsigned i;

	for (i = 0; fns[i]; i++) {
		char frame[64];
		const char *const need[] = { frame, NULL };
		double want = pf_share_of(f->out, fns[i]), got;

		snprintf(frame, sizeof(frame), ";pyframes_wl.%s;", fns[i]);
		got = 100.0 * (double)pf_count(f, comm, need, false) / (double)total;
		cr_expect(got > want - 5 && got < want + 5,
			  "%s: %.1f%% of the samples, the script measured %.1f%%", fns[i], got,
			  want);
	}
}

/* a directory under <root>'s /tmp holding the workload: <in> its path inside the root */
struct pf_root {
	const char *root;
	char host[256], in[128];
};

static inline void pf_root_make(struct pf_root *d, const char *root)
{
	char cmd[8192], *out;
	int st;

	d->root = root;
	snprintf(d->host, sizeof(d->host), "%s/tmp/kperf-pyframes-XXXXXX", root);
	cr_assert(mkdtemp(d->host), "mkdtemp under %s/tmp", root);
	chmod(d->host, 0755);
	snprintf(d->in, sizeof(d->in), "%s", d->host + strlen(root));
	snprintf(cmd, sizeof(cmd), "cp %s %s/ 2>&1", pf_script("pyframes_wl.py"), d->host);
	out = tu_run(cmd, &st);
	cr_assert_eq(st, 0, "%s", out);
	free(out);
}

static inline void pf_root_free(struct pf_root *d)
{
	char cmd[512], *out;
	int st;

	snprintf(cmd, sizeof(cmd), "rm -rf %s", d->host);
	out = tu_run(cmd, &st);
	free(out);
}

/* record `chroot ROOT <py> pyframes_wl.py <args>` launched */
static inline struct pf_folded pf_root_record(const struct pf_root *d, const char *py,
					      const char *args)
{
	char runner[1024], script[256];

	snprintf(runner, sizeof(runner), "chroot %s %s", d->root, py);
	snprintf(script, sizeof(script), "%s/pyframes_wl.py", d->in);
	return pf_record(runner, script, "", args);
}

/* `chroot ROOT <py> pyframes_wl.py threads 60` attached with -p once both threads are named and
 * running: launched, the threads would start before the tables of the interpreter load (the
 * launched command is chroot: it is held at its own exec, not at the interpreter it execs;
 * their first samples are frame pointers', garbage in an interpreter built without them), and
 * the ctypes they name themselves with is new code */
static inline struct pf_folded pf_root_threads(const char *root, const char *py)
{
	char script[256], what[64], text[256] = "";
	char *argv[] = {
		"/usr/sbin/chroot", (char *)root, (char *)py, script, "threads", "60", NULL
	};
	struct pf_folded f;
	struct tu_proc p;
	struct pf_root d;
	size_t n = 0;

	pf_root_make(&d, root);
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
		pf_root_free(&d);
		cr_assert_fail("the workload did not get ready: %s", text);
	}
	snprintf(what, sizeof(what), "-d 3 -p %d", (int)p.pid);
	f = pf_record_what(what);
	tu_kill(&p);
	close(p.out_fd);
	pf_root_free(&d);
	return f;
}

/* each thread of pf_root_threads' profile carries its own function, never the other's */
/* `record` of pyframes_wl.py "shares 1.5 bz2" run by <python> in the root <root> (its comm
 * <comm>, its _bz2 module "_bz2.cpython-<tag>"): the functions' shares, inner under outer and
 * _bz2 under squeeze in >= 95% of their samples, >= 90% of all samples reaching main */
static inline void pf_expect_version_shares(const char *root, const char *python, const char *comm,
					    const char *tag)
{
	static const char *const fns[] = { "heavy", "outer", "inner", "encode", "squeeze", NULL };
	const char *const in_main[] = { ";Py_BytesMain;", NULL };
	const char *const nested[] = { ";pyframes_wl.outer;pyframes_wl.inner;", NULL };
	const char *const inner[] = { ";pyframes_wl.inner;", NULL };
	char bz2[32];
	const char *const bz2_any[] = { bz2, NULL };
	const char *const bz2_under[] = { ";pyframes_wl.squeeze;", bz2, NULL };
	unsigned long total, n, m;
	struct pf_folded f;
	struct pf_root d;

	snprintf(bz2, sizeof(bz2), ";_bz2.cpython-%s", tag);
	pf_root_make(&d, root);
	f = pf_root_record(&d, python, "shares 1.5 bz2");
	pf_root_free(&d);
	cr_assert_eq(f.status, 0, "%s", f.out);
	total = pf_count(&f, comm, NULL, false);
	cr_assert_gt(total, 600, "%lu samples of %s\n%s", total, comm, f.out);
	pf_expect_shares(&f, comm, total, fns);
	n = pf_count(&f, comm, inner, false);
	m = pf_count(&f, comm, nested, false);
	cr_expect_gt(n, 50, "%lu samples in inner", n);
	cr_expect_geq(m * 100, n * 95, "inner under outer in %lu of its %lu samples", m, n);
	n = pf_count(&f, comm, bz2_any, false);
	m = pf_count(&f, comm, bz2_under, true);
	cr_expect_gt(n, 20, "%lu samples in _bz2", n);
	cr_expect_geq(m * 100, n * 95, "_bz2 under squeeze in %lu of its %lu samples", m, n);
	n = pf_count(&f, comm, in_main, false);
	cr_expect_geq(n * 100, total * 90, "%lu of %lu samples reach main", n, total);
	pf_free(&f);
}

static inline void pf_expect_threads(const struct pf_folded *f)
{
	const char *const alpha[] = { ";pyframes_wl.alpha;", NULL };
	const char *const beta[] = { ";pyframes_wl.beta;", NULL };
	unsigned long na, nb;

	cr_assert_eq(f->status, 0, "%s", f->out);
	na = pf_count(f, "pyalpha", NULL, false);
	nb = pf_count(f, "pybeta", NULL, false);
	cr_assert_gt(na, 100, "%lu samples of pyalpha\n%s", na, f->text);
	cr_assert_gt(nb, 100, "%lu samples of pybeta", nb);
	cr_expect_geq(pf_count(f, "pyalpha", alpha, false) * 100, na * 95);
	cr_expect_eq(pf_count(f, "pyalpha", beta, false), 0);
	cr_expect_geq(pf_count(f, "pybeta", beta, false) * 100, nb * 95);
	cr_expect_eq(pf_count(f, "pybeta", alpha, false), 0);
}

/* `chroot ROOT <py> pyframes_wl.py shares 0.5` (comm <comm>): no Python frame, native frames
 * down to Py_BytesMain, and <why> said exactly once */
static inline void pf_expect_refused(const struct pf_root *d, const char *py, const char *comm,
				     const char *why)
{
	const char *const any_py[] = { ";pyframes_wl.", NULL };
	const char *const native[] = { ";Py_BytesMain;", NULL };
	struct pf_folded f = pf_root_record(d, py, "shares 0.5");
	const char *at;

	cr_assert_eq(f.status, 0, "%s", f.out);
	cr_expect_eq(pf_count(&f, comm, any_py, false), 0, "Python frames:\n%s", f.text);
	cr_expect_gt(pf_count(&f, comm, native, false), 100, "%s", f.text);
	at = strstr(f.out, why);
	cr_assert(at, "no \"%s\" in:\n%s", why, f.out);
	cr_expect_null(strstr(at + 1, why), "said twice:\n%s", f.out);
	pf_free(&f);
}

#endif
