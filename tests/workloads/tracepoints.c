/*
 * tracepoints - a workload whose tracepoint records are known in advance, for the tests of
 * PmuGetField on real records.
 *
 *   tracepoints [--wait] [--sleeps N] [--open PATH]
 *
 * After --wait (one byte on stdin) it opens PATH (default /dev/null) once with
 * openat(AT_FDCWD, PATH, O_WRONLY | O_APPEND | O_CLOEXEC | O_NOCTTY, 0), prints
 * "filename=0x... flags=N" (the pointer it passed and the flags) on stdout, closes it,
 * then sleeps N times (default 20) for 1 ms: N voluntary context switches in state S.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define OPEN_FLAGS (O_WRONLY | O_APPEND | O_CLOEXEC | O_NOCTTY)

int main(int argc, char **argv)
{
	const char *path = "/dev/null";
	struct timespec ms = { 0, 1000000 };
	int i, sleeps = 20, wait = 0, fd;
	char c;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--wait"))
			wait = 1;
		else if (!strcmp(argv[i], "--sleeps") && i + 1 < argc)
			sleeps = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--open") && i + 1 < argc)
			path = argv[++i];
		else {
			fprintf(stderr, "usage: tracepoints [--wait] [--sleeps N] [--open PATH]\n");
			return 2;
		}
	}
	if (wait && read(0, &c, 1) != 1)
		return 3;
	/* the raw syscall: the same pointer and flags reach the tracepoint; longs, so that the
	 * whole registers are defined (an int in a variadic call leaves the upper half open) */
	fd = (int)syscall(SYS_openat, (long)AT_FDCWD, path, (long)OPEN_FLAGS, 0L);
	if (fd < 0) {
		perror(path);
		return 1;
	}
	printf("filename=%p flags=%d\n", (const void *)path, OPEN_FLAGS);
	fflush(stdout);
	close(fd);
	for (i = 0; i < sleeps; i++)
		nanosleep(&ms, NULL);
	return 0;
}
