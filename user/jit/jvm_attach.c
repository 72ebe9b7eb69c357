/*
 * jvm_attach.c - ask a running HotSpot JVM to write its perf map (/tmp/perf-PID.map) through
 * its own attach mechanism, the one jcmd uses: nothing on its command line, no restart.
 *
 * Once its attach listener runs, the JVM listens on the UNIX socket /tmp/.java_pid<PID> (PID
 * as its own namespace numbers it, /tmp as its root sees it). It starts the listener on
 * SIGQUIT when a file .attach_pid<PID> owned by its user or root is in /tmp or in its working
 * directory. A request is "1\0jcmd\0Compiler.perfmap\0\0\0" (protocol 1, the operation, three
 * arguments); the answer is a status line ("0": done), then what the command printed.
 * Compiler.perfmap exists since JDK 17; an older JVM answers that it does not know it.
 *
 * SIGQUIT kills a process that does not catch it: it is sent only to a process whose
 * /proc/PID/status says it catches SIGQUIT (not one started with -Xrs), and not to a JVM
 * started with -XX:+DisableAttachMechanism (on its command line or in JAVA_TOOL_OPTIONS,
 * JDK_JAVA_OPTIONS or _JAVA_OPTIONS), which would print a thread dump instead. The socket
 * must be a socket (not a link) owned by the JVM's user or root, and the process listening on
 * it the JVM itself (SO_PEERCRED).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "core/core.h"
#include "jit.h"

#define SOCKET_WAIT_MS 5000 /* for the listener to start after SIGQUIT (jcmd waits 10 s) */
#define ANSWER_WAIT_MS 10000 /* for the map to be written: a big code cache takes a while */
#define ANSWER_MAX (64u << 10)

static const char request[] = "1\0jcmd\0Compiler.perfmap\0\0"; /* and its terminating NUL */

static int say(char *why, size_t size, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, size, fmt, ap);
	va_end(ap);
	return err;
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static bool alive(pid_t pid)
{
	return kill(pid, 0) == 0 || errno != ESRCH;
}

/* does /proc/PID/status say it catches SIGQUIT? */
static bool catches_sigquit(pid_t pid)
{
	char path[64], *buf, *p;
	unsigned long long caught = 0;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if (kp_read_file(path, &buf, NULL))
		return false;
	p = strstr(buf, "\nSigCgt:");
	if (p)
		caught = strtoull(p + 8, NULL, 16);
	free(buf);
	return caught & (1ULL << (SIGQUIT - 1));
}

/* -XX:+DisableAttachMechanism in /proc/PID/<file> (NUL-separated strings) */
static bool mentions_disable(pid_t pid, const char *file)
{
	static const char opt[] = "-XX:+DisableAttachMechanism";
	char path[64], *buf;
	size_t len = 0;
	bool found;

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, file);
	if (kp_read_file(path, &buf, &len))
		return false;
	found = memmem(buf, len, opt, sizeof(opt) - 1) != NULL;
	free(buf);
	return found;
}

/* <name> in <dir> is a socket (not a link) of <uid> or root: 0, -ENOENT, -EPERM */
static int socket_there(int dir, const char *name, uid_t uid)
{
	struct stat st;

	if (fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW))
		return -errno;
	if (!S_ISSOCK(st.st_mode) || (st.st_uid != uid && st.st_uid != 0))
		return -EPERM;
	return 0;
}

/* connect to <name> in <dir>; the listener must be <pid> */
static int connect_to(int dir, const char *name, pid_t pid, char *why, size_t size)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct ucred cred;
	socklen_t len = sizeof(cred);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0), err;

	if (fd < 0)
		return say(why, size, -errno, "socket: %s", strerror(errno));
	snprintf(sa.sun_path, sizeof(sa.sun_path), "/proc/self/fd/%d/%s", dir, name);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		err = -errno;
		close(fd);
		return say(why, size, err, "cannot connect to /tmp/%s: %s", name, strerror(-err));
	}
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) || cred.pid != pid) {
		close(fd);
		return say(why, size, -EPERM, "/tmp/%s is not the JVM's (it is process %d's)", name,
			   (int)cred.pid);
	}
	return fd;
}

/* make the JVM start its attach listener: .attach_pid<nspid> in its /tmp (else its working
 * directory), SIGQUIT, wait for the socket */
static int start_listener(pid_t pid, pid_t nspid, int tmp, const char *sock, uid_t uid, char *why,
			  size_t size)
{
	char trigger[32], path[64];
	int dirs[2] = { tmp, -1 }, made = -1, fd = -1, i, err = -ETIMEDOUT;
	uint64_t until;

	snprintf(trigger, sizeof(trigger), ".attach_pid%d", (int)nspid);
	snprintf(path, sizeof(path), "/proc/%d/cwd", (int)pid);
	dirs[1] = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	for (i = 0; i < 2 && made < 0; i++) {
		if (dirs[i] < 0)
			continue;
		/* never through a link someone put there */
		fd = openat(dirs[i], trigger, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
			    0600);
		if (fd >= 0) {
			close(fd);
			made = i;
		} else if (errno == EEXIST) {
			break; /* someone's request is under way: it triggers the listener too */
		}
	}
	if (made < 0 && i == 2) {
		err = say(why, size, -EACCES, "cannot create %s in its /tmp or working directory",
			  trigger);
		goto out;
	}
	if (kill(pid, SIGQUIT)) {
		err = say(why, size, -errno, "SIGQUIT: %s", strerror(errno));
		goto out;
	}
	for (until = now_ms() + SOCKET_WAIT_MS; now_ms() < until;) {
		struct timespec tick = { 0, 20 * 1000000L };

		err = socket_there(tmp, sock, uid);
		if (err != -ENOENT)
			break;
		if (!alive(pid)) {
			err = -ESRCH;
			break;
		}
		nanosleep(&tick, NULL);
	}
	if (err == -ENOENT || err == -ETIMEDOUT)
		err = say(why, size, -ETIMEDOUT, "no /tmp/%s %d s after SIGQUIT", sock,
			  SOCKET_WAIT_MS / 1000);
	else if (err == -EPERM)
		say(why, size, err, "/tmp/%s is not a socket of the JVM's user", sock);
out:
	if (made >= 0)
		unlinkat(dirs[made], trigger, 0);
	if (dirs[1] >= 0)
		close(dirs[1]);
	return err;
}

/* send the request, read the answer until the JVM closes: 0 when its status is 0 */
static int exchange(int fd, char *why, size_t size)
{
	char *buf = malloc(ANSWER_MAX + 1), *nl;
	size_t n = 0;
	uint64_t until = now_ms() + ANSWER_WAIT_MS;
	int err = 0, status;

	if (!buf)
		return -ENOMEM;
	if (send(fd, request, sizeof(request), MSG_NOSIGNAL) != (ssize_t)sizeof(request)) {
		err = say(why, size, -EIO, "the request was not taken: %s", strerror(errno));
		goto out;
	}
	for (;;) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		uint64_t now = now_ms();
		ssize_t r;

		if (now >= until || poll(&pfd, 1, (int)(until - now)) == 0) {
			err = say(why, size, -ETIMEDOUT, "no answer in %d s",
				  ANSWER_WAIT_MS / 1000);
			goto out;
		}
		r = recv(fd, buf + n, ANSWER_MAX - n, 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0 || (n += (size_t)r) == ANSWER_MAX)
			break;
	}
	buf[n] = '\0';
	if (!n) {
		err = say(why, size, -EPROTO, "it closed the connection without an answer");
		goto out;
	}
	status = atoi(buf);
	if (status != 0) {
		/* what it printed: "java.lang.IllegalArgumentException: Unknown diagnostic ..." */
		nl = strchr(buf, '\n');
		nl = nl ? nl + 1 : buf;
		nl[strcspn(nl, "\n")] = '\0';
		err = say(why, size, -EPROTO, "it answered %d: %s", status, *nl ? nl : "(nothing)");
	}
out:
	free(buf);
	return err;
}

int kp_jvm_write_perfmap(pid_t pid, pid_t nspid, char *why, size_t size)
{
	char path[64], sock[32];
	struct stat st;
	int tmp, fd, err;

	snprintf(path, sizeof(path), "/proc/%d", (int)pid);
	if (stat(path, &st))
		return -ESRCH;
	if (mentions_disable(pid, "cmdline") || mentions_disable(pid, "environ"))
		return say(why, size, -EPERM,
			   "its attach mechanism is disabled (-XX:+DisableAttachMechanism)");
	snprintf(path, sizeof(path), "/proc/%d/root/tmp", (int)pid);
	tmp = kp_open_path(path, O_PATH | O_DIRECTORY);
	if (tmp < 0)
		return alive(pid) ?
			       say(why, size, tmp, "cannot open its /tmp: %s", strerror(-tmp)) :
			       -ESRCH;
	snprintf(sock, sizeof(sock), ".java_pid%d", (int)nspid);
	err = socket_there(tmp, sock, st.st_uid);
	if (err == -EPERM) {
		err = say(why, size, err, "/tmp/%s is not a socket of the JVM's user", sock);
	} else if (err) {
		if (!catches_sigquit(pid))
			err = say(why, size, -EPERM,
				  "it does not catch SIGQUIT (started with -Xrs?): it is not sent");
		else
			err = start_listener(pid, nspid, tmp, sock, st.st_uid, why, size);
	}
	if (!err) {
		fd = connect_to(tmp, sock, pid, why, size);
		err = fd < 0 ? fd : exchange(fd, why, size);
		if (fd >= 0)
			close(fd);
	}
	close(tmp);
	if (err && err != -ENOMEM && !alive(pid))
		return -ESRCH;
	return err;
}
