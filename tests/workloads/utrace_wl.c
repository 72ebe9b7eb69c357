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

/* Three functions whose instructions the tests count are written in assembly, because the
 * compiler would not keep them exact: ut_multi has two return paths, each with its own return
 * instruction (aarch64 GCC merges them into one epilogue); ut_bare is nothing but its return
 * (entry and return at one address); ut_tail leaves by a jump to ut_f, so it is entered but
 * never returns by itself. (GCC ignores __attribute__((naked)) on aarch64: there, a "naked" C
 * function got a frame record pushed and never popped, and the workload crashed on its own.)
 *   long ut_multi(long x): odd x: sink += x, returns sink * 3; even x: sink -= x, returns sink
 */
long ut_multi(long x);
void ut_bare(void);
long ut_tail(long x);

#if defined(__x86_64__)
__asm__(".text\n"
	".globl ut_multi\n"
	".type ut_multi, @function\n"
	"ut_multi:\n"
	"	mov sink(%rip), %rax\n"
	"	test $1, %dil\n"
	"	jnz 1f\n"
	"	sub %rdi, %rax\n"
	"	mov %rax, sink(%rip)\n"
	"	ret\n"
	"1:	add %rdi, %rax\n"
	"	mov %rax, sink(%rip)\n"
	"	lea (%rax,%rax,2), %rax\n"
	"	ret\n"
	".size ut_multi, .-ut_multi\n"
	".globl ut_bare\n"
	".type ut_bare, @function\n"
	"ut_bare:\n"
	"	ret\n"
	".size ut_bare, .-ut_bare\n"
	".globl ut_tail\n"
	".type ut_tail, @function\n"
	"ut_tail:\n"
	"	jmp ut_f\n"
	".size ut_tail, .-ut_tail\n");
#elif defined(__aarch64__)
__asm__(".text\n"
	".p2align 2\n"
	".globl ut_multi\n"
	".type ut_multi, %function\n"
	"ut_multi:\n"
	"	adrp x1, sink\n"
	"	ldr x2, [x1, :lo12:sink]\n"
	"	tbnz w0, #0, 1f\n"
	"	sub x2, x2, x0\n"
	"	str x2, [x1, :lo12:sink]\n"
	"	mov x0, x2\n"
	"	ret\n"
	"1:	add x2, x2, x0\n"
	"	str x2, [x1, :lo12:sink]\n"
	"	add x0, x2, x2, lsl #1\n"
	"	ret\n"
	".size ut_multi, .-ut_multi\n"
	".p2align 2\n"
	".globl ut_bare\n"
	".type ut_bare, %function\n"
	"ut_bare:\n"
	"	ret\n"
	".size ut_bare, .-ut_bare\n"
	".p2align 2\n"
	".globl ut_tail\n"
	".type ut_tail, %function\n"
	"ut_tail:\n"
	"	b ut_f\n"
	".size ut_tail, .-ut_tail\n");
#else
#error "utrace_wl: ut_multi, ut_bare and ut_tail are written for x86_64 and aarch64 only"
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
