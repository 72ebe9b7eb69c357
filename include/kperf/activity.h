/*
 * activity.h - what processes do, as activity records in the manner of msPTI: their mstx
 * markers (mstx.h), their syscalls (the work the OS kernel does for them) and their
 * communication (socket and pipe I/O), collected with BPF and handed out in batches.
 * kperf.mspti (Python) builds msPTI's monitors on it; `kperf-bpf timeline` and
 * KperfTimeline* (timeline.h) put the same records on a Chrome trace.
 *
 *	enum KperfActivityKind kinds[] = { KPERF_ACTIVITY_KIND_MARKER };
 *	int ad = KperfActivityOpen(kinds, 1, NULL);      // this process and its children
 *	KperfActivityEnable(ad);
 *	...                                              // mstxMarkA("x", NULL), ...
 *	struct KperfActivityRecord *r;
 *	int n = KperfActivityRead(ad, 0, &r);            // what has come so far
 *	KperfActivityFree(r);
 *	KperfActivityClose(ad);
 *
 * Times are CLOCK_MONOTONIC in ns, the clock of every other kperf-bpf record. The calls
 * follow pmu.h's conventions: -1 on failure with Perrorno()/Perror() set, arrays owned by
 * the caller until KperfActivityFree.
 */
#ifndef KPERF_ACTIVITY_H
#define KPERF_ACTIVITY_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(default)

/* msPTI's msptiActivityKind numbers */
enum KperfActivityKind {
	KPERF_ACTIVITY_KIND_MARKER = 1, /* mstx marks and range starts/ends */
	KPERF_ACTIVITY_KIND_KERNEL = 2, /* syscalls */
	KPERF_ACTIVITY_KIND_HCCL = 4, /* socket and pipe I/O syscalls */
};

/* msPTI's msptiActivityFlag values a marker record carries */
enum KperfActivityFlag {
	KPERF_ACTIVITY_FLAG_NONE = 0,
	KPERF_ACTIVITY_FLAG_MARKER_INSTANTANEOUS = 1,
	KPERF_ACTIVITY_FLAG_MARKER_START = 2,
	KPERF_ACTIVITY_FLAG_MARKER_END = 4,
};

struct KperfActivityOpts {
	size_t sz; /* sizeof(struct KperfActivityOpts) */
	/* processes to collect (a thread id means its process); none: the caller's own */
	const int *pidList;
	unsigned numPid;
	/* 1: not the processes they fork later (by default children are collected too) */
	unsigned noChildren;
	/* 1: the pids are processes started stopped (a launcher): collected from their next
	 * exec on */
	unsigned fromExec;
	/* kernel ring buffer of each source, KiB (a power of two is used); 0: 8192 */
	unsigned bufferKb;
	/* MARKER: files holding kperf's USDT probes beyond those found (kperf-bpf looks in the
	 * files the processes map whose name starts with libkperf-bpf, in their executables,
	 * and, with fromExec, where the dynamic loader would find libkperf-bpf.so.0) */
	const char *const *probeFiles;
	unsigned numProbeFiles;
	/* 1: KperfActivityRead leaves out the records of the thread that calls it (a reader in
	 * the traced process would otherwise read its own reading) */
	unsigned excludeReader;
	/* with fromExec: the program about to be started, to look for probes in (optional) */
	const char *command;
	/* 1: every process (perf's -a), those started later included, instead of a pidList
	 * (none may be given, nor fromExec/noChildren). MARKER: the probes of every file
	 * with kperf probes that a process maps when the collection opens, and of the
	 * libkperf-bpf.so.0 the dynamic loader finds; KERNEL/HCCL: every process's calls but
	 * the collector's own. In a PID namespace, processes the caller cannot see are pid -1
	 * "[outside namespace]". */
	unsigned allPids;
};

struct KperfActivityRecord {
	enum KperfActivityKind kind;
	unsigned flag; /* MARKER: enum KperfActivityFlag; 0 otherwise */
	uint64_t start; /* ns: the marker's time, or the call's start */
	uint64_t end; /* ns: the call's end; a marker's time again */
	/* MARKER: the id of the mstx call, unique in its process (a range's start and end
	 * share it); KERNEL and HCCL: a correlation id unique in the handle */
	uint64_t id;
	int pid;
	int tid;
	int cpu;
	int nr; /* KERNEL, HCCL: syscall number; -1 otherwise */
	int64_t ret; /* KERNEL, HCCL: return value (negative errno on failure) */
	int64_t bytes; /* HCCL: bytes moved (the return value of a transfer that moved some),
			* 0 for a failed call and for sendmmsg/recvmmsg (which count messages) */
	const char *name; /* the marker's message ("" for a range end), or the syscall */
	const char *domain; /* MARKER: its domain ("default" outside one); "" otherwise */
	const char *comm; /* the thread's command name */
	const char *channel; /* HCCL: "socket:[INODE]" or "pipe:[INODE]" ("socket" when the
			      * inode is not known); "" otherwise */
};

struct KperfActivityStats {
	uint64_t records; /* records handed out by KperfActivityRead so far */
	uint64_t dropped; /* records lost: a ring buffer was full */
	uint64_t filtered; /* MARKER: calls of disabled domains, dropped in the kernel */
	unsigned probes; /* MARKER: probe sites attached (each probe of each file, and of each
			  * process on kernels without attach cookies) */
	unsigned probeFiles; /* MARKER: files whose probes are attached */
	unsigned bufferKb; /* ring buffer size of each source */
	unsigned fallback; /* 1: the syscall source uses the raw_syscalls fallback */
};

/* Open a collection of <kinds> (each at most once); not enabled yet. */
int KperfActivityOpen(const enum KperfActivityKind *kinds, unsigned numKinds,
		      const struct KperfActivityOpts *opts);
int KperfActivityEnable(int ad);
/* Pause: calls made meanwhile are not recorded (the kernel side stops, nothing is filtered
 * afterwards). Records already made stay readable. */
int KperfActivityDisable(int ad);
/* MARKER: record (enable) or drop in the kernel (disable) the calls of domain <name>; every
 * domain is enabled at first. Works before and after KperfActivityEnable. */
int KperfActivityEnableDomain(int ad, const char *name);
int KperfActivityDisableDomain(int ad, const char *name);
/* Everything recorded since the last read, waiting up to <timeoutMs> (0: not at all, -1:
 * until something comes) when nothing is there yet. Returns the count (0: none; *records
 * NULL) or -1. Records of one source come in the order they were made. */
int KperfActivityRead(int ad, int timeoutMs, struct KperfActivityRecord **records);
void KperfActivityFree(struct KperfActivityRecord *records);
int KperfActivityGetStats(int ad, struct KperfActivityStats *stats);
void KperfActivityClose(int ad);

#pragma GCC visibility pop
#ifdef __cplusplus
}
#endif
#endif
