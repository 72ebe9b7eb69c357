/*
 * sysstack - getppid from two functions with known counts, for the syscall stack tests.
 *
 *   sysstack [--wait] [--hold] [--deep K] A B
 *
 * ppid_from_a makes A getppid calls, then ppid_from_b makes B. With --deep K, the A calls are
 * made by ppid_at_depth at recursion depths 0 to K-1 in turn instead: K distinct user stacks
 * (for the tests of a summary by stack with fewer rows than stacks). Each makes the syscall itself
 * (an inline syscall instruction, not libc's wrapper: the wrapper has no frame of its own, so
 * a frame-pointer unwinder would skip the function that called it). The source lines of the
 * two calls carry the markers SYSSTACK_LINE_A and SYSSTACK_LINE_B, for the tests to find.
 * --wait reads one byte from stdin before the calls (a tracer attaches to the pid first);
 * --hold prints "done" after the calls and waits to be killed (its stacks still resolve), at
 * the latest when its parent dies.
 */
#include <signal.h>
#include <sys/prctl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#if defined(__x86_64__)
#define RAW_GETPPID(r) \
	__asm__ volatile("syscall" : "=a"(r) : "0"((long)SYS_getppid) : "rcx", "r11", "memory")
#elif defined(__aarch64__)
#define RAW_GETPPID(r)                                                      \
	do {                                                                \
		register long x8 __asm__("x8") = SYS_getppid;               \
		register long x0 __asm__("x0");                             \
		__asm__ volatile("svc #0" : "=r"(x0) : "r"(x8) : "memory"); \
		(r) = x0;                                                   \
	} while (0)
#else
#define RAW_GETPPID(r) ((r) = syscall(SYS_getppid))
#endif

static volatile long sink, calls_done;

/* makes its callers non-leaf functions: they keep a frame of their own, so that the frame
 * pointer chain from a syscall in them goes through main */
__attribute__((noinline)) static void note(long n)
{
	calls_done += n;
}

__attribute__((noinline)) static void ppid_from_a(long n)
{
	long i, r;

	for (i = 0; i < n; i++) {
		RAW_GETPPID(r);
		sink = r; /* SYSSTACK_LINE_A */
	}
	note(n);
}

__attribute__((noinline)) static void ppid_from_b(long n)
{
	long i, r;

	for (i = 0; i < n; i++) {
		RAW_GETPPID(r);
		sink = r; /* SYSSTACK_LINE_B */
	}
	note(n);
}

/* one getppid <d> calls below: its stack is one frame longer per depth */
__attribute__((noinline)) static void ppid_at_depth(long d)
{
	long r;

	if (d > 0) {
		ppid_at_depth(d - 1);
		note(0); /* not a tail call: the frame stays */
		return;
	}
	RAW_GETPPID(r);
	sink = r;
}

int main(int argc, char **argv)
{
	long deep = 0, k;
	int i = 1, wait = 0, hold = 0;
	char c;

	for (; i < argc && argv[i][0] == '-'; i++) {
		if (!strcmp(argv[i], "--wait"))
			wait = 1;
		else if (!strcmp(argv[i], "--hold"))
			hold = 1;
		else if (!strcmp(argv[i], "--deep") && i + 1 < argc)
			deep = atol(argv[++i]);
	}
	if (hold)
		prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (argc - i != 2) {
		fprintf(stderr, "usage: sysstack [--wait] [--hold] [--deep K] A B\n");
		return 2;
	}
	if (wait && read(0, &c, 1) < 0)
		return 1;
	if (deep > 0) {
		for (k = 0; k < atol(argv[i]); k++)
			ppid_at_depth(k % deep);
		note(atol(argv[i]));
	} else {
		ppid_from_a(atol(argv[i]));
	}
	ppid_from_b(atol(argv[i + 1]));
	if (hold) {
		printf("done\n");
		fflush(stdout);
		for (;;)
			pause();
	}
	return 0;
}
