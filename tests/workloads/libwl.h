/* libwl.h - what libwl.so (libwl.c) offers to the workloads */
#ifndef KPERF_LIBWL_H
#define KPERF_LIBWL_H

long wl_lib_work(long n);

#endif
