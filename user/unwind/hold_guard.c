/*
 * hold_guard.c - the guard of a hold (owner.c, bpf/unwind.bpf.h kp_uw_hold): a child process
 * that continues the held processes when the process that holds them dies without doing it
 * (kill -9, a crash), so that no process of a launched command's tree is left stopped.
 *
 * A held process is stopped by a BPF program (SIGSTOP from the exec tracepoint or the entry
 * point's uprobe) and continued by the owner's thread. If the owner's process dies in between,
 * nobody would send the SIGCONT. The guard is forked when an owner starts holding, with one end
 * of a socket pair whose other end only the owner's process has (close-on-exec) and with the
 * hold map's fd; every other descriptor is closed, so the BPF programs live and die with
 * the owner's process alone. It waits on the socket:
 *   - a byte: the owner stopped the hold itself (kp_uw_owner_stop continued what was stopped);
 *     the guard exits and is reaped there;
 *   - end of file: the owner's process is exiting (its descriptors are closed as it exits).
 *     The guard waits until it is reparented (its parent's exit is past the release of its
 *     descriptors, so the BPF links are gone and nothing stops anything any more), then
 *     continues every process of the map that is stopped or marked stopped, twice (a program
 *     that ran as the links went away), and exits.
 * After fork, the guard calls only async-signal-safe functions and system calls.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "unwind.h"

#define REPARENT_WAIT_MS 10000 /* for the owner's process to finish exiting */

enum { EXEC_STOPPED = 2, ENTRY_STOPPED = 4 }; /* as bpf/unwind.bpf.h numbers them */

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* is process <pid> stopped ('T' or 't' after its comm in /proc/PID/stat)? */
static int stopped(__u32 pid)
{
	char path[32] = "/proc/", digits[12], buf[512];
	int i = 0, n = 0, fd;
	ssize_t len;

	do
		digits[i++] = (char)('0' + pid % 10);
	while ((pid /= 10) && i < (int)sizeof(digits));
	n = 6;
	while (i > 0)
		path[n++] = digits[--i];
	memcpy(path + n, "/stat", 6);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	len = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (len <= 0)
		return 0;
	for (i = (int)len - 1; i > 0 && buf[i] != ')'; i--)
		;
	return i + 2 < len && (buf[i + 2] == 'T' || buf[i + 2] == 't');
}

/* every process of the hold map that is stopped, or marked stopped (its SIGSTOP perhaps not
 * taken yet: a SIGCONT drops it), is continued */
static void continue_held(int hold_fd)
{
	__u32 key, next, state, *prev = NULL;

	while (!bpf_map_get_next_key(hold_fd, prev, &next)) {
		key = next;
		prev = &key;
		if (!key || bpf_map_lookup_elem(hold_fd, &key, &state))
			continue;
		if (state == EXEC_STOPPED || state == ENTRY_STOPPED || stopped(key))
			kill((pid_t)key, SIGCONT);
	}
}

static void close_others(int keep_a, int keep_b)
{
	int lo = keep_a < keep_b ? keep_a : keep_b, hi = keep_a < keep_b ? keep_b : keep_a;
	struct rlimit rl;
	int fd, max = 65536;

#ifdef SYS_close_range
	if (!syscall(SYS_close_range, 3, lo - 1, 0) &&
	    !syscall(SYS_close_range, lo + 1, hi - 1, 0) &&
	    !syscall(SYS_close_range, hi + 1, ~0U, 0))
		return;
#endif
	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < (rlim_t)max)
		max = (int)rl.rlim_cur;
	for (fd = 3; fd < max; fd++)
		if (fd != keep_a && fd != keep_b)
			close(fd);
}

static void guard_main(int rfd, int hold_fd, pid_t parent)
{
	static const int ignored[] = { SIGINT, SIGHUP, SIGTERM, SIGQUIT, SIGPIPE, SIGUSR1, SIGUSR2 };
	struct sigaction sa;
	sigset_t none;
	unsigned i;
	char c;
	ssize_t n;

	close_others(rfd, hold_fd);
	/* a Ctrl-C or a hangup that kills kperf-bpf must leave the guard to do its work */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_IGN;
	for (i = 0; i < sizeof(ignored) / sizeof(ignored[0]); i++)
		sigaction(ignored[i], &sa, NULL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	prctl(PR_SET_NAME, "kperf-bpf-guard", 0, 0, 0);
	do
		n = read(rfd, &c, 1);
	while (n < 0 && errno == EINTR);
	if (n == 1)
		_exit(0); /* the owner continued its processes itself */
	for (i = 0; i < REPARENT_WAIT_MS && getppid() == parent; i++)
		sleep_ms(1);
	continue_held(hold_fd);
	sleep_ms(20);
	continue_held(hold_fd);
	_exit(0);
}

int kp_uw_guard_start(int hold_fd, struct kp_uw_guard *g)
{
	pid_t parent = getpid(), pid;
	int p[2];

	g->pid = -1;
	g->fd = -1;
	/* a socket, not a pipe: the owner's byte is sent without a SIGPIPE if the guard is gone */
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, p))
		return -errno;
	pid = fork();
	if (pid < 0) {
		int err = -errno;

		close(p[0]);
		close(p[1]);
		return err;
	}
	if (pid == 0)
		guard_main(p[0], hold_fd, parent);
	close(p[0]);
	g->pid = pid;
	g->fd = p[1];
	return 0;
}

void kp_uw_guard_stop(struct kp_uw_guard *g)
{
	char done = 1;

	if (g->pid <= 0)
		return;
	/* a guard that is gone already is reaped all the same */
	(void)!send(g->fd, &done, 1, MSG_NOSIGNAL);
	close(g->fd);
	while (waitpid(g->pid, NULL, 0) < 0 && errno == EINTR)
		;
	g->pid = -1;
	g->fd = -1;
}
