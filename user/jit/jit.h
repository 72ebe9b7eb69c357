/*
 * jit.h - runtimes that generate code while they run, asked from outside to say where it is
 * (jvm_attach.c: a HotSpot JVM writes its perf map on request). The symbol resolver
 * (sym/sym_jit.c) reads what they write.
 */
#ifndef KPERF_JIT_H
#define KPERF_JIT_H

#include <stddef.h>
#include <sys/types.h>

/* Ask the HotSpot JVM <pid> (<nspid> in its own PID namespace) to write /tmp/perf-NSPID.map
 * in its root, through its attach mechanism (jcmd's "Compiler.perfmap"), waiting for its
 * answer. 0 when it did; -ESRCH when the process is gone; otherwise -errno with the reason in
 * <why> (attach disabled, SIGQUIT not caught, another user's JVM, no such command before
 * JDK 17, no answer in time). */
int kp_jvm_write_perfmap(pid_t pid, pid_t nspid, char *why, size_t size);

#endif
