/*
 * launch.c - start a command to trace. The child is forked first and waits on a pipe, so
 * the tracer can load and attach before the command runs; its execvp happens only after
 * that. An execvp failure comes back through a close-on-exec pipe as an errno.
 *
 * The command dies with kperf-bpf: it is SIGKILLed when the tracer exits, whatever the way
 * (PR_SET_PDEATHSIG, asked before its exec; the kernel clears it for a set-user-ID program).
 * A command left running untraced would be a surprise, and one started stopped would wait
 * forever.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"

int kp_launch_prepare(char **argv, struct kp_launch *l)
{
	int go[2], err[2];
	pid_t tracer = getpid();
	char c;

	if (pipe2(go, O_CLOEXEC))
		return -errno;
	if (pipe2(err, O_CLOEXEC)) {
		close(go[0]);
		close(go[1]);
		return -errno;
	}
	l->pid = fork();
	if (l->pid < 0) {
		int e = -errno;

		close(go[0]);
		close(go[1]);
		close(err[0]);
		close(err[1]);
		return e;
	}
	if (l->pid == 0) {
		int e;

		/* the death signal is only armed from here on: if the tracer died before,
		 * this child was reparented already and must not go on */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() != tracer)
			_exit(127);
		close(go[1]);
		close(err[0]);
		if (read(go[0], &c, 1) != 1)
			_exit(127); /* the tracer gave up */
		close(go[0]);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		execvp(argv[0], argv);
		e = errno;
		if (write(err[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	close(go[0]);
	close(err[1]);
	l->go_fd = go[1];
	l->err_fd = err[0];
	return 0;
}

int kp_launch_go(struct kp_launch *l)
{
	int e = 0;
	ssize_t r;

	if (write(l->go_fd, "g", 1) != 1)
		return -errno;
	close(l->go_fd);
	l->go_fd = -1;
	do
		r = read(l->err_fd, &e, sizeof(e));
	while (r < 0 && errno == EINTR);
	close(l->err_fd);
	l->err_fd = -1;
	if (r == (ssize_t)sizeof(e)) {
		waitpid(l->pid, NULL, 0);
		return -e;
	}
	return 0;
}

void kp_launch_abort(struct kp_launch *l)
{
	if (l->go_fd >= 0)
		close(l->go_fd);
	if (l->err_fd >= 0)
		close(l->err_fd);
	if (l->pid > 0)
		waitpid(l->pid, NULL, 0); /* it exits on EOF */
	l->go_fd = l->err_fd = -1;
	l->pid = -1;
}

int kp_launch_stop(struct kp_launch *l, int *status)
{
	/* like perf: the command ends with the collection. A Ctrl-C on a terminal reached it
	 * already; a SIGINT or SIGTERM sent to the tracer alone did not. The signal handlers
	 * do not restart waitpid: a second Ctrl-C stops the waiting. */
	kill(l->pid, SIGTERM);
	return waitpid(l->pid, status, 0) == l->pid ? 0 : -1;
}
