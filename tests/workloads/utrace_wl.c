/* uses_lib (linked with libwl.so)
 * utrace_wl.c - a workload whose functions the UTrace tests probe, each called an exact number
 * of times per thread: ut_f 1000 times, ut_g 10 times, ut_rec once with recursion depth 3,
 * ut_multi 6 times (3 by each of its returns), ut_bare 5 times (its only instruction is its
 * return), ut_tail 4 times (it jumps to ut_f, so it never returns by itself), ut_clone 2 times
 * (named as a compiler clone, "ut_clone.constprop.0"; "ut_piece.cold" is a split-off piece,
 * never called) and wl_lib_work (libwl.so) 5 times.
 *
 *   utrace_wl [--wait] [--threads N] [--flood N]
 *
 * --wait: wait for a byte on stdin first (the tracer attaches meanwhile); --threads N: N
 * threads each make the calls (the main thread makes none); --flood N: ut_f N more times per
 * thread. Prints "tid=<tid>" for each thread that made the calls, then exits.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "libwl.h"

volatile long sink;
static long flood;

__attribute__((noinline)) long ut_f(long x)
{
	sink += x;
	return sink;
}

__attribute__((noinline)) long ut_g(long x)
{
	sink ^= x;
	return sink;
}

/* not a tail call: the addition comes after the call returns */
__attribute__((noinline)) long ut_rec(long depth)
{
	long r;

	if (depth <= 1)
		return 1;
	r = ut_rec(depth - 1);
	sink += r;
	return r + 1;
}

/* two return paths, each with its own return instruction */
__attribute__((noinline)) long ut_multi(long x)
{
	if (x & 1) {
		sink += x;
		__asm__ volatile("" ::: "memory");
		return sink * 3;
	}
	sink -= x;
	return sink;
}

/* a function that is nothing but its return: entry and return at one address */
__attribute__((naked, noinline)) void ut_bare(void)
{
	__asm__ volatile("ret");
}

/* a function that leaves by a jump: its entry is probed, it has no return of its own */
#if defined(__x86_64__)
__attribute__((naked, noinline)) long ut_tail(long x)
{
	__asm__ volatile("jmp ut_f");
}
#elif defined(__aarch64__)
__attribute__((naked, noinline)) long ut_tail(long x)
{
	__asm__ volatile("b ut_f");
}
#endif

/* the names GCC gives a constant-propagated copy and a cold piece of a function */
long ut_clone(long x) __asm__("ut_clone.constprop.0");
long ut_piece(long x) __asm__("ut_piece.cold");

__attribute__((noinline, used)) long ut_clone(long x)
{
	sink += x * 2;
	return sink;
}

__attribute__((noinline, used)) long ut_piece(long x)
{
	sink -= x;
	return sink;
}

static void *calls(void *arg)
{
	long i;

	(void)arg;
	printf("tid=%ld\n", (long)syscall(SYS_gettid));
	fflush(stdout);
	for (i = 0; i < 1000; i++)
		ut_f(i);
	for (i = 0; i < 10; i++)
		ut_g(i);
	ut_rec(3);
	for (i = 0; i < 6; i++)
		ut_multi(i);
	for (i = 0; i < 5; i++)
		ut_bare();
	for (i = 0; i < 4; i++)
		ut_tail(i);
	for (i = 0; i < 2; i++)
		ut_clone(i);
	for (i = 0; i < 5; i++)
		wl_lib_work(10);
	for (i = 0; i < flood; i++)
		ut_f(i);
	return NULL;
}

int main(int argc, char **argv)
{
	int i, nthreads = 0;
	pthread_t th[64];
	char c;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--wait")) {
			if (read(0, &c, 1) != 1)
				return 1;
		} else if (!strcmp(argv[i], "--threads") && i + 1 < argc) {
			nthreads = atoi(argv[++i]);
			if (nthreads < 0 || nthreads > 64)
				return 2;
		} else if (!strcmp(argv[i], "--flood") && i + 1 < argc) {
			flood = atol(argv[++i]);
		}
	}
	if (!nthreads) {
		calls(NULL);
		return 0;
	}
	for (i = 0; i < nthreads; i++)
		pthread_create(&th[i], NULL, calls, NULL);
	for (i = 0; i < nthreads; i++)
		pthread_join(th[i], NULL);
	return 0;
}
