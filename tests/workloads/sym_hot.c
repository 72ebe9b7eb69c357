/* uses_lib (linked with libwl.so)
 * sym_hot.c - a workload whose functions the symbol resolver tests look up: it prints the
 * run-time addresses of hot_loop(), leaf(), a return address inside hot_loop(), a function of
 * libwl.so, getppid() of libc and an anonymous mapping, one "name=0xaddr" per line, then
 * "ready", and waits for its stdin to close. The LINE: markers tell the tests which source
 * line each address must resolve to. `sym_hot --spin-ms N` burns N ms in hot_loop() instead.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "libwl.h"

volatile long sink;
void *volatile ret_in_hot_loop;

long leaf(long x)
{
	ret_in_hot_loop = __builtin_return_address(0);
	return x * 3 + 1;
}

long hot_loop(long n)
{ /* LINE:hot_loop (the entry's line is the brace's) */
	long i, acc = 0;

	for (i = 0; i < n; i++)
		acc += leaf(i) ^ (acc >> 1); /* LINE:call_leaf */
	return acc;
}

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int main(int argc, char **argv)
{
	void *anon;
	char c;

	if (argc == 3 && !strcmp(argv[1], "--spin-ms")) {
		long end = now_ms() + atol(argv[2]);

		while (now_ms() < end)
			sink += hot_loop(100000);
		return 0;
	}
	sink = hot_loop(1000) + wl_lib_work(1000);
	anon = mmap(NULL, 65536, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	printf("hot_loop=%p\n", (void *)hot_loop);
	printf("leaf=%p\n", (void *)leaf);
	printf("main=%p\n", (void *)main);
	printf("ret_in_hot_loop=%p\n", ret_in_hot_loop);
	printf("wl_lib_work=%p\n", (void *)wl_lib_work);
	printf("getppid=%p\n", (void *)getppid);
	printf("anon=%p\n", anon);
	printf("ready\n");
	fflush(stdout);
	while (read(0, &c, 1) > 0)
		;
	return 0;
}
