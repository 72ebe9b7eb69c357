/*
 * testutil.h - helpers shared by the C tests: start a workload that waits for a go signal
 * (so a tracer can attach to its pid first), find build artefacts, and count the BPF
 * programs loaded on the machine (a test leaves none behind).
 */
#ifndef KPERF_TESTUTIL_H
#define KPERF_TESTUTIL_H

#include <errno.h>
#include <sched.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "core/core.h"

/* The variant of the syscall programs this kernel must get without being asked: the
 * raw_syscalls fallback where there is no BTF or no task storage for tracing programs
 * (before 5.11), the tp_btf programs everywhere else. */
static inline unsigned tu_expected_syscall_fallback(void)
{
	return !kp_have(KP_FEAT_BTF) || !kp_have(KP_FEAT_TASK_STORAGE);
}

/* the kernel function every syscall's stack passes through, per architecture */
#if defined(__x86_64__)
#define TU_SYSCALL_ENTRY "do_syscall_64"
#elif defined(__aarch64__)
#define TU_SYSCALL_ENTRY "el0_svc"
#else
#error "tests/testutil.h: no syscall entry symbol for this architecture"
#endif

/* The "signed:" of <field> in this kernel's format file of <system>:<event> (-1 if absent):
 * it differs between kernels (char is signed in the formats of 6.1 and older). */
static inline int tu_format_signed(const char *system, const char *event, const char *field)
{
	char path[512], *text, *p, want[128];
	int sign = -1;

	snprintf(path, sizeof(path), "%s/events/%s/%s/format",
		 kp_tracefs() ? kp_tracefs() : "/sys/kernel/tracing", system, event);
	if (kp_read_file(path, &text, NULL))
		return -1;
	snprintf(want, sizeof(want), " %s;", field);
	p = strstr(text, want);
	if (p && (p = strstr(p, "signed:")))
		sign = atoi(p + 7);
	free(text);
	return sign;
}

/* build/ of this tree ($KPERF_BUILD, set by the Makefile) */
static inline const char *tu_build(void)
{
	const char *b = getenv("KPERF_BUILD");

	return b && *b ? b : "build";
}

/* <build>/<rel> in a static buffer (one at a time) */
static inline const char *tu_path(const char *rel)
{
	static char buf[4096];

	snprintf(buf, sizeof(buf), "%s/%s", tu_build(), rel);
	return buf;
}

static inline void tu_sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* Wait (up to 5 s) until <pid> sits in read(0, ...): a workload started with --wait has
 * finished starting up (dynamic loader included) and waits for its go byte. */
static inline int tu_wait_blocked(pid_t pid)
{
	char path[64], buf[64], want[32];
	int i;

	/* "NR 0x0 ...": read's number is the architecture's (0 on x86_64, 63 on arm64) */
	snprintf(want, sizeof(want), "%d 0x0 ", SYS_read);
	snprintf(path, sizeof(path), "/proc/%d/syscall", (int)pid);
	for (i = 0; i < 500; i++) {
		FILE *f = fopen(path, "r");
		int ok = 0;

		if (f) {
			ok = fgets(buf, sizeof(buf), f) && !strncmp(buf, want, strlen(want));
			fclose(f);
		}
		if (ok)
			return 0;
		tu_sleep_ms(10);
	}
	return -1;
}

struct tu_proc {
	pid_t pid;
	int go_fd; /* write a byte to release a workload started with --wait */
	int out_fd; /* its stdout, when captured */
};

/* Start <argv> (argv[0] relative to the build dir when it has no '/') with stdin a pipe. */
static inline struct tu_proc tu_spawn_v(char *const argv[], int capture_stdout)
{
	struct tu_proc p = { -1, -1, -1 };
	int in[2], out[2] = { -1, -1 }, n;
	char path[4096];

	if (pipe(in))
		return p;
	if (capture_stdout && pipe(out))
		return p;
	if (strchr(argv[0], '/'))
		snprintf(path, sizeof(path), "%s", argv[0]);
	else
		snprintf(path, sizeof(path), "%s/workloads/%s", tu_build(), argv[0]);
	p.pid = fork();
	if (p.pid == 0) {
		dup2(in[0], 0);
		close(in[0]);
		close(in[1]);
		if (capture_stdout) {
			dup2(out[1], 1);
			close(out[0]);
			close(out[1]);
		} else {
			int devnull = open("/dev/null", O_WRONLY);

			if (devnull >= 0)
				dup2(devnull, 1);
		}
		execv(path, argv);
		_exit(127);
	}
	close(in[0]);
	p.go_fd = in[1];
	if (capture_stdout) {
		close(out[1]);
		p.out_fd = out[0];
	}
	for (n = 1; argv[n]; n++)
		if (!strcmp(argv[n], "--wait"))
			tu_wait_blocked(p.pid);
	return p;
}

/* tu_spawn("syscalls", "--wait", NULL) */
static inline struct tu_proc tu_spawn(const char *prog, ...)
{
	char *argv[64];
	va_list ap;
	int n = 0;

	argv[n++] = (char *)prog;
	va_start(ap, prog);
	while (n < 63 && (argv[n] = va_arg(ap, char *)))
		n++;
	va_end(ap);
	argv[n] = NULL;
	return tu_spawn_v(argv, 0);
}

static inline void tu_go(struct tu_proc *p)
{
	if (p->go_fd >= 0) {
		if (write(p->go_fd, "g", 1) != 1) {
			/* the workload is gone: the test's counts will say so */
		}
		close(p->go_fd);
		p->go_fd = -1;
	}
}

/* wait for exit; returns the exit status or -1 */
static inline int tu_wait(struct tu_proc *p)
{
	int st = 0;

	if (p->go_fd >= 0)
		close(p->go_fd);
	p->go_fd = -1;
	if (p->pid <= 0 || waitpid(p->pid, &st, 0) != p->pid)
		return -1;
	p->pid = -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static inline void tu_kill(struct tu_proc *p)
{
	if (p->pid > 0) {
		kill(p->pid, SIGKILL);
		tu_wait(p);
	}
}

/* number of BPF programs loaded on the machine */
static inline int tu_bpf_prog_count(void)
{
	__u32 id = 0;
	int n = 0;

	while (bpf_prog_get_next_id(id, &id) == 0)
		n++;
	return n;
}

/* Wait (up to 5 s: the kernel frees programs asynchronously) until the machine has at most
 * <before> programs again; returns the final count. */
static inline int tu_bpf_prog_count_settle(int before)
{
	int i, n = tu_bpf_prog_count();

	for (i = 0; i < 100 && n > before; i++) {
		tu_sleep_ms(50);
		n = tu_bpf_prog_count();
	}
	return n;
}

/* this process's file descriptors whose link names <a> (or <b>, when not NULL) */
static inline int tu_fds_named(const char *a, const char *b)
{
	char path[64], link[256];
	int fd, n = 0;
	ssize_t len;

	for (fd = 0; fd < 4096; fd++) {
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		len = readlink(path, link, sizeof(link) - 1);
		if (len <= 0)
			continue;
		link[len] = '\0';
		n += strstr(link, a) || (b && strstr(link, b));
	}
	return n;
}

/* BPF objects (programs, maps, links) this process still holds through file descriptors */
static inline int tu_bpf_fds(void)
{
	return tu_fds_named("bpf", NULL);
}

/* The open fds of BPF objects and of perf events: what attached programs hold (before 5.15 a
 * program on a tracepoint is attached through a perf event, whose fd is its link). */
static inline int tu_attach_fds(void)
{
	return tu_fds_named("bpf", "[perf_event]");
}

/* A child that waits for a byte and only then execs <argv> (so that the exec itself can be
 * observed), optionally pinned to <pin_cpu> (-1: not pinned), its stdout in a pipe. */
struct tu_child {
	pid_t pid;
	int go, out;
};

static inline struct tu_child tu_exec_later(char *const argv[], int pin_cpu)
{
	struct tu_child c = { -1, -1, -1 };
	int go[2], out[2];
	char b;

	if (pipe(go) || pipe(out))
		return c;
	c.pid = fork();
	if (c.pid == 0) {
		if (pin_cpu >= 0) {
			cpu_set_t set;

			CPU_ZERO(&set);
			CPU_SET(pin_cpu, &set);
			sched_setaffinity(0, sizeof(set), &set);
		}
		dup2(out[1], 1);
		close(go[1]);
		close(out[0]);
		if (read(go[0], &b, 1) != 1)
			_exit(126);
		execv(argv[0], argv);
		_exit(127);
	}
	close(go[0]);
	close(out[1]);
	c.go = go[1];
	c.out = out[0];
	return c;
}

/* release the child, collect its stdout into <out>, reap it; returns its exit status */
static inline int tu_exec_finish(struct tu_child *c, char *out, size_t size)
{
	ssize_t n, got = 0;
	int st;

	if (write(c->go, "g", 1) != 1)
		return -1;
	close(c->go);
	while ((n = read(c->out, out + got, size - 1 - (size_t)got)) > 0)
		got += n;
	out[got] = '\0';
	close(c->out);
	if (waitpid(c->pid, &st, 0) != c->pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* run a shell command, capture its stdout (malloc'd) and exit status */
static inline char *tu_run(const char *cmd, int *status)
{
	FILE *f = popen(cmd, "r");
	size_t cap = 65536, n = 0, r;
	char *buf = malloc(cap);

	if (!f || !buf) {
		free(buf);
		if (f)
			pclose(f);
		return NULL;
	}
	while ((r = fread(buf + n, 1, cap - n - 1, f)) > 0) {
		n += r;
		if (n + 1 >= cap) {
			char *nb = realloc(buf, cap * 2);

			if (!nb)
				break;
			buf = nb;
			cap *= 2;
		}
	}
	buf[n] = '\0';
	r = (size_t)pclose(f);
	if (status)
		*status = WIFEXITED((int)r) ? WEXITSTATUS((int)r) : -1;
	return buf;
}

#endif
