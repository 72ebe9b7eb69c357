/*
 * incgroup - run a command born in a cgroup: clone3(CLONE_INTO_CGROUP) (Linux 5.7), so that
 * every one of its syscalls, from its first, is made in that cgroup (a process that moves
 * itself there first would be seen outside it for a moment).
 *
 *   incgroup CGROUP_DIR COMMAND [ARGS...]   exits with the command's status
 */
#include <fcntl.h>
#include <linux/sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct clone_args args;
	int fd, status;
	long pid;

	if (argc < 3) {
		fprintf(stderr, "usage: incgroup CGROUP_DIR COMMAND [ARGS...]\n");
		return 2;
	}
	fd = open(argv[1], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		perror(argv[1]);
		return 2;
	}
	memset(&args, 0, sizeof(args));
	args.flags = CLONE_INTO_CGROUP;
	args.exit_signal = SIGCHLD;
	args.cgroup = (uint64_t)fd;
	pid = syscall(SYS_clone3, &args, sizeof(args));
	if (pid < 0) {
		perror("clone3");
		return 2;
	}
	if (pid == 0) {
		execvp(argv[2], argv + 2);
		perror(argv[2]);
		_exit(127);
	}
	close(fd);
	if (waitpid((pid_t)pid, &status, 0) < 0)
		return 2;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
