/*
 * pidns_testutil.h - what the PID namespace tests share (test_pidns.c starts namespaces from
 * the host, pidns_inner.c runs inside them): exact syscall counts of the `syscalls` workload,
 * a command's output read line by line, and the hottest leaf of a profile.
 */
#ifndef KPERF_PIDNS_TESTUTIL_H
#define KPERF_PIDNS_TESTUTIL_H

#include <poll.h>
#include <criterion/criterion.h>

#include "kperf/kperf.h"
#include "testutil.h"

/* what one worker of `syscalls` makes: 50 000 getppid, 2 000 write, 300 failing openat */
struct ns_counts {
	uint64_t getppid, write, openat, openat_err, all;
};

static inline void ns_add(struct ns_counts *c, const char *name, uint64_t calls, uint64_t errors)
{
	if (!strcmp(name, "getppid"))
		c->getppid += calls;
	else if (!strcmp(name, "write"))
		c->write += calls;
	else if (!strcmp(name, "openat")) {
		c->openat += calls;
		c->openat_err += errors;
	}
	c->all += calls;
}

static inline void ns_assert_workload(const struct ns_counts *c, uint64_t workers)
{
	cr_assert_eq(c->getppid, 50000 * workers, "getppid %lu", c->getppid);
	cr_assert_eq(c->write, 2000 * workers, "write %lu", c->write);
	cr_assert_eq(c->openat, 300 * workers, "openat %lu", c->openat);
	cr_assert_eq(c->openat_err, 300 * workers, "openat errors %lu", c->openat_err);
}

/* the summary of trace <pd> for process <pid> (0: all) */
static inline struct ns_counts ns_summary(int pd, int pid)
{
	struct PmuTraceSummary *s = NULL;
	struct ns_counts c = { 0 };
	int n = PmuTraceReadSummary(pd, &s), i;

	cr_assert_geq(n, 0, "PmuTraceReadSummary: %s", Perror());
	for (i = 0; i < n; i++)
		if (!pid || s[i].pid == pid)
			ns_add(&c, s[i].funcs, s[i].calls, s[i].errors);
	PmuTraceSummaryFree(s);
	return c;
}

/* Read a line of <fd> into <buf> (without its newline); false at the end (60 s at most) */
static inline bool ns_read_line(int fd, char *buf, size_t size)
{
	size_t n = 0;
	char ch;

	for (;;) {
		struct pollfd p = { fd, POLLIN, 0 };

		if (poll(&p, 1, 60000) <= 0 || read(fd, &ch, 1) != 1) {
			buf[n] = '\0';
			return n > 0;
		}
		if (ch == '\n')
			break;
		if (n + 1 < size)
			buf[n++] = ch;
	}
	buf[n] = '\0';
	return true;
}

/*
 * `kperf-bpf <args> -p PID` on workload <w> (started with --wait, not released): the command
 * reports periodically (its -i or -I), so its first line means it is attached; then the
 * workload is released, and both are waited for. The command's lines are returned, joined
 * by newlines (malloc'd); *status is its exit status.
 */
static inline char *ns_cli_by_pid(struct tu_proc *w, const char *args, int *status)
{
	char cmd[1024], line[65536], *all = NULL;
	char *argv[] = { "/bin/sh", "-c", cmd, NULL };
	size_t len = 0;
	struct tu_proc t;

	snprintf(cmd, sizeof(cmd), "exec %s/bin/kperf-bpf %s -p %d", tu_build(), args, w->pid);
	t = tu_spawn_v(argv, 1);
	cr_assert_gt(t.pid, 0);
	while (ns_read_line(t.out_fd, line, sizeof(line))) {
		size_t l = strlen(line);
		char *grown = realloc(all, len + l + 2);

		cr_assert_not_null(grown);
		all = grown;
		memcpy(all + len, line, l);
		len += l;
		all[len++] = '\n';
		all[len] = '\0';
		if (w->go_fd >= 0) {
			/* the first report: attached */
			tu_go(w);
			cr_assert_eq(tu_wait(w), 0);
		}
	}
	close(t.out_fd);
	*status = tu_wait(&t);
	if (w->pid > 0)
		tu_kill(w);
	cr_assert_not_null(all, "no output from kperf-bpf %s", args);
	return all;
}

/* the samples of <d> and those whose leaf (first frame) is <fn> */
static inline void ns_leaf_share(const struct PmuData *d, int n, const char *fn, uint64_t *all,
				 uint64_t *in_fn)
{
	int i;

	*all = *in_fn = 0;
	for (i = 0; i < n; i++) {
		uint64_t c = d[i].count ? d[i].count : 1;

		*all += c;
		if (d[i].stack && d[i].stack->symbol && d[i].stack->symbol->symbolName &&
		    !strcmp(d[i].stack->symbol->symbolName, fn))
			*in_fn += c;
	}
}

/* the same over folded stacks ("comm;...;leaf count" per line) */
static inline void ns_folded_leaf_share(char *text, const char *fn, uint64_t *all, uint64_t *in_fn)
{
	char *line, *save = NULL, *sp, *leaf;

	*all = *in_fn = 0;
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		sp = strrchr(line, ' ');
		if (!sp || !strchr(line, ';'))
			continue;
		*sp = '\0';
		leaf = strrchr(line, ';') + 1;
		*all += strtoull(sp + 1, NULL, 10);
		if (!strcmp(leaf, fn))
			*in_fn += strtoull(sp + 1, NULL, 10);
	}
}

#endif
