/*
 * symtest.h - helpers of the symbol resolver tests: start a workload that prints its function
 * addresses ("name=0xaddr" lines, then "ready"), read those addresses, find the source line
 * of a LINE: marker, the link-time address of a symbol (nm), and scratch directories.
 */
#ifndef KPERF_SYMTEST_H
#define KPERF_SYMTEST_H

#include <dlfcn.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kperf/symbol.h"
#include "testutil.h"

struct sym_wl {
	struct tu_proc p;
	char text[8192]; /* what it printed up to "ready" */
};

/* Start <prog> (a workload name or an absolute path) with argv <args...>, wait for "ready".
 * Returns 0, or -1 when it did not get ready within 10 s. */
static inline int swl_start_argv(struct sym_wl *w, char *const argv[])
{
	size_t n = 0;

	memset(w, 0, sizeof(*w));
	w->p = tu_spawn_v(argv, 1);
	if (w->p.pid <= 0)
		return -1;
	/* workloads started later must not inherit this one's stdin, or it never sees EOF */
	fcntl(w->p.go_fd, F_SETFD, FD_CLOEXEC);
	fcntl(w->p.out_fd, F_SETFD, FD_CLOEXEC);
	while (!strstr(w->text, "ready\n") && n + 1 < sizeof(w->text)) {
		struct pollfd pfd = { w->p.out_fd, POLLIN, 0 };
		ssize_t r;

		if (poll(&pfd, 1, 10000) <= 0)
			return -1;
		r = read(w->p.out_fd, w->text + n, sizeof(w->text) - n - 1);
		if (r <= 0)
			return -1;
		n += (size_t)r;
		w->text[n] = '\0';
	}
	return strstr(w->text, "ready\n") ? 0 : -1;
}

static inline int swl_start(struct sym_wl *w, const char *prog)
{
	char *argv[] = { (char *)prog, NULL };

	return swl_start_argv(w, argv);
}

/* the address printed as "<name>=0x..." */
static inline unsigned long swl_addr(const struct sym_wl *w, const char *name)
{
	char key[128];
	const char *p = w->text;
	size_t kl;

	snprintf(key, sizeof(key), "%s=", name);
	kl = strlen(key);
	while ((p = strstr(p, key))) {
		if (p == w->text || p[-1] == '\n')
			return strtoul(p + kl, NULL, 16);
		p += kl;
	}
	return 0;
}

/* close its stdin (it exits) and reap it */
static inline int swl_stop(struct sym_wl *w)
{
	if (w->p.out_fd >= 0) {
		close(w->p.out_fd);
		w->p.out_fd = -1;
	}
	return tu_wait(&w->p);
}

/* line number (1-based) of the first line of <file> that contains <marker>, or -1 */
static inline int src_line(const char *file, const char *marker)
{
	char line[1024];
	int n = 0;
	FILE *f = fopen(file, "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		n++;
		if (strstr(line, marker)) {
			fclose(f);
			return n;
		}
	}
	fclose(f);
	return -1;
}

/* the link-time address of <sym> in <bin>, from nm (0 when absent) */
static inline unsigned long nm_addr(const char *bin, const char *sym)
{
	char cmd[PATH_MAX + 64], *out, *p;
	unsigned long v = 0;
	size_t sl = strlen(sym);

	snprintf(cmd, sizeof(cmd), "nm '%s' 2>/dev/null", bin);
	out = tu_run(cmd, NULL);
	if (!out)
		return 0;
	for (p = out; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
		char *end = strchr(p, '\n');
		size_t len = end ? (size_t)(end - p) : strlen(p);

		if (len > sl + 1 && p[len - sl - 1] == ' ' && !strncmp(p + len - sl, sym, sl)) {
			v = strtoul(p, NULL, 16);
			break;
		}
	}
	free(out);
	return v;
}

/* the path of the libc this process runs with (its file, as dladdr names it) */
static inline const char *own_libc_path(void)
{
	static char path[PATH_MAX];
	void *h = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
	Dl_info info;

	if (!path[0] && h && dladdr(dlsym(h, "fork"), &info) && info.dli_fname)
		snprintf(path, sizeof(path), "%s", info.dli_fname);
	if (h)
		dlclose(h);
	return path;
}

/* Is <module>'s separate debug file installed under /usr/lib/debug (by build-id)? */
static inline bool has_debug_file(const char *module)
{
	char *id = NULL, path[PATH_MAX];
	bool found;

	if (SymGetBuildId(module, &id) || !id || strlen(id) < 3) {
		free(id);
		return false;
	}
	snprintf(path, sizeof(path), "/usr/lib/debug/.build-id/%.2s/%s.debug", id, id + 2);
	free(id);
	found = access(path, R_OK) == 0;
	return found;
}

/* absolute path of a build artefact or source file */
static inline char *abs_of(const char *rel, char *buf)
{
	if (!realpath(rel, buf))
		buf[0] = '\0';
	return buf;
}

/* the address of the text symbol <name> in /proc/kallsyms and of the symbol after it (0 when
 * absent); read in one pass (kallsyms is slow to seek in) */
static inline unsigned long kallsyms_addr(const char *name, unsigned long *next)
{
	char line[512], want[256];
	unsigned long a, found = 0;
	FILE *f = fopen("/proc/kallsyms", "r");

	snprintf(want, sizeof(want), " T %s\n", name);
	if (next)
		*next = 0;
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (!found && strstr(line, want)) {
			found = strtoul(line, NULL, 16);
			continue;
		}
		if (found && next && !*next) {
			a = strtoul(line, NULL, 16);
			if (a > found)
				*next = a; /* kallsyms is sorted within the core kernel */
		}
		if (found && (!next || *next))
			break;
	}
	fclose(f);
	return found;
}

/* a pid that no process has */
static inline pid_t unused_pid(void)
{
	pid_t pid;

	for (pid = 4000000; pid > 1000; pid -= 7919)
		if (kill(pid, 0) && errno == ESRCH)
			return pid;
	return 999999;
}

/* a fresh scratch directory (removed by rm_tree) */
static inline void scratch_dir(char *buf, size_t size)
{
	snprintf(buf, size, "/tmp/kperf-symtest-XXXXXX");
	if (!mkdtemp(buf))
		buf[0] = '\0';
}

static inline int sh(const char *fmt, ...)
{
	char cmd[8192];
	va_list ap;
	int st;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	st = system(cmd);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static inline void rm_tree(const char *dir)
{
	if (dir[0] && !strncmp(dir, "/tmp/kperf-symtest-", 19))
		sh("rm -rf '%s'", dir);
}

#endif
