/*
 * libwl.c - a shared library for the workloads (built as libwl.so; a workload that says
 * "uses_lib" in its first 200 bytes is linked with it), so that tests can resolve code
 * that lives in a library rather than in the executable.
 */
#include "libwl.h"

volatile long wl_sink;

long wl_lib_work(long n)
{
	long i, acc = 0;

	for (i = 0; i < n; i++)
		acc += i ^ (acc >> 3);
	wl_sink = acc;
	return acc;
}
