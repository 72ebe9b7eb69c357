/*
 * pidwatch.c - tell when the processes given with -p have exited, even if their pids were
 * given to new processes since.
 *
 * A pidfd (pidfd_open, Linux 5.3) refers to the process itself, not to its number: it
 * becomes readable when that process exits, whatever runs under the pid later. Kernels
 * without it fall back to the pid plus its start time (/proc/PID/stat field 22), which a
 * new process under the same pid does not share.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core.h"

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434 /* the same number on every architecture */
#endif

struct kp_pidwatch {
	int n;
	pid_t *pids;
	int *fds; /* -1: exited already, or no pidfd (fallback) */
	uint64_t *start; /* start times, for the fallback */
	bool *gone;
	bool fallback;
};

static bool no_pidfd_for_tests;

void kp_pidwatch_test_no_pidfd(bool on)
{
	no_pidfd_for_tests = on;
}

/* field 22 of /proc/PID/stat, 0 when the process is gone */
static uint64_t start_time(pid_t pid)
{
	char path[64], *buf, *p;
	uint64_t v = 0;
	int field;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (kp_read_file(path, &buf, NULL))
		return 0;
	/* the comm may hold spaces and parentheses: count from the last ')' (field 2) */
	p = strrchr(buf, ')');
	for (field = 2; p && field < 22; field++)
		p = strchr(p + 1, ' ');
	if (p)
		v = strtoull(p + 1, NULL, 10);
	free(buf);
	return v;
}

int kp_pidwatch_open(const int *pids, int n, struct kp_pidwatch **out)
{
	struct kp_pidwatch *w = calloc(1, sizeof(*w));
	int i, fd;

	*out = NULL;
	if (!w)
		return -ENOMEM;
	w->n = n;
	w->pids = calloc((size_t)n + 1, sizeof(*w->pids));
	w->fds = calloc((size_t)n + 1, sizeof(*w->fds));
	w->start = calloc((size_t)n + 1, sizeof(*w->start));
	w->gone = calloc((size_t)n + 1, sizeof(*w->gone));
	if (!w->pids || !w->fds || !w->start || !w->gone) {
		kp_pidwatch_free(w);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++) {
		w->pids[i] = pids[i];
		w->fds[i] = -1;
		if (!w->fallback && !no_pidfd_for_tests) {
			fd = (int)syscall(SYS_pidfd_open, pids[i], 0);
			if (fd >= 0) {
				w->fds[i] = fd;
				continue;
			}
			if (errno == ESRCH) {
				w->gone[i] = true;
				continue;
			}
			if (errno != ENOSYS && errno != EPERM) {
				/* EINVAL: a thread id, not a process (callers give processes) */
				w->gone[i] = !kp_pid_alive(pids[i]);
				if (!w->gone[i])
					w->start[i] = start_time(pids[i]);
				continue;
			}
		}
		/* no pidfd_open (Linux < 5.3, or a seccomp filter refusing it) */
		w->fallback = true;
		w->start[i] = start_time(pids[i]);
		w->gone[i] = !w->start[i] || !kp_pid_alive(pids[i]);
	}
	*out = w;
	return 0;
}

bool kp_pidwatch_fallback(const struct kp_pidwatch *w)
{
	return w && w->fallback;
}

bool kp_pidwatch_any_alive(struct kp_pidwatch *w)
{
	struct pollfd pfd;
	bool any = false;
	int i;

	for (i = 0; w && i < w->n; i++) {
		if (w->gone[i])
			continue;
		if (w->fds[i] >= 0) {
			pfd.fd = w->fds[i];
			pfd.events = POLLIN;
			pfd.revents = 0;
			/* readable once the process has exited (a zombie counts as exited) */
			if (poll(&pfd, 1, 0) == 1 && pfd.revents) {
				w->gone[i] = true;
				close(w->fds[i]);
				w->fds[i] = -1;
				continue;
			}
		} else if (!kp_pid_alive(w->pids[i]) || start_time(w->pids[i]) != w->start[i]) {
			w->gone[i] = true;
			continue;
		}
		any = true;
	}
	return any;
}

void kp_pidwatch_free(struct kp_pidwatch *w)
{
	int i;

	if (!w)
		return;
	for (i = 0; w->fds && i < w->n; i++)
		if (w->fds[i] >= 0)
			close(w->fds[i]);
	free(w->pids);
	free(w->fds);
	free(w->start);
	free(w->gone);
	free(w);
}
