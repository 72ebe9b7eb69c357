/*
 * timeline.h - one timeline of what processes do, written as a Chrome trace-event JSON file
 * (opens in ui.perfetto.dev, chrome://tracing and speedscope): per process and thread, the
 * syscalls as complete events with their return value, CPU samples with their stacks, mstx
 * marks and ranges (activity.h) with their domain as category, the slices threads spent off
 * the cpu (offCpu), and the process and thread names. Everything is on one clock (CLOCK_MONOTONIC), written in µs with ns precision.
 * `kperf-bpf timeline` is this API on the command line; kperf.timeline in Python.
 *
 *	struct KperfTimelineOpts o = KPERF_OPTS(KperfTimelineOpts, .pidList = &pid, .numPid = 1);
 *	int td = KperfTimelineOpen(&o);
 *	KperfTimelineEnable(td);
 *	...
 *	KperfTimelineDisable(td);
 *	KperfTimelineWrite(td, "trace.json");
 *	KperfTimelineClose(td);
 *
 * The calls follow pmu.h's conventions (-1 on failure with Perrorno()/Perror() set).
 */
#ifndef KPERF_TIMELINE_H
#define KPERF_TIMELINE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(default)

struct KperfTimelineOpts {
	size_t sz; /* sizeof(struct KperfTimelineOpts) */
	/* the processes (a thread id means its process), with the children they fork later;
	 * at least one, unless allPids */
	const int *pidList;
	unsigned numPid;
	/* 1: the pids are processes started stopped (a launcher): collected from their next
	 * exec on */
	unsigned fromExec;
	/* with fromExec: the program about to be started (where to look for its markers) */
	const char *command;
	/* CPU samples per second and thread (cpu-clock), 0: 999 */
	unsigned freq;
	unsigned noSyscalls; /* 1: no syscall events */
	unsigned noSamples; /* 1: no CPU samples */
	unsigned noMarkers; /* 1: no mstx marks and ranges */
	/* 1: off-CPU slices: each time a thread of the processes leaves the cpu until it comes
	 * back, a complete event "blocked" (it waits for something) or "preempted" (runnable,
	 * waiting for a cpu), category "off-cpu", with the user stack it left the cpu with */
	unsigned offCpu;
	/* ring buffer of each source in KiB (a power of two is used), 0: 8192 */
	unsigned bufferKb;
	/* events kept in memory until written, 0: 2 Mi (about 100 MiB); the next ones are
	 * counted (KperfTimelineStats.notKept) and left out */
	unsigned maxEvents;
	/* files holding kperf's USDT probes beyond those found (activity.h) */
	const char *const *probeFiles;
	unsigned numProbeFiles;
	/* with offCpu: slices shorter than this many µs are counted in the kernel
	 * (KperfTimelineStats.offCpuShort) and left out, 0: 50 */
	unsigned offCpuMinUs;
	/* 1: memory: the heap in use of each process (the live blocks of its malloc family
	 * allocated since the collection began) as a counter track "heap in use" (C events,
	 * category "memory", args.bytes) and its large allocations as instant events named after
	 * the function (args size, ptr); through memscope's probes on the allocator (exact) */
	unsigned memory;
	/* with memory: allocations of at least this many bytes are instant events, 0: 1 MiB */
	uint64_t memBigBytes;
	/* 1: every process (perf's -a), those started later included, instead of a pidList
	 * (not with fromExec or memory); the collector's own syscalls are left out. In a PID
	 * namespace, processes the caller cannot see are pid -1 "[outside namespace]". */
	unsigned allPids;
};

struct KperfTimelineStats {
	uint64_t syscalls; /* syscall events kept */
	uint64_t samples; /* CPU samples kept */
	uint64_t marks; /* mstx marks kept */
	uint64_t ranges; /* mstx ranges kept (complete ones) */
	uint64_t openRanges; /* ranges not ended when written (written up to the last event of
			      * their process, with "unfinished": true) */
	uint64_t dropped; /* records the kernel lost (ring buffers full), all sources */
	uint64_t notKept; /* events beyond maxEvents */
	uint64_t offCpuSlices; /* off-CPU slices kept */
	uint64_t offCpuShort; /* off-CPU slices shorter than offCpuMinUs, left out */
	uint64_t offCpuLost; /* off-CPU slices the kernel lost (its ring buffer or its thread map
			      * full; counted in dropped too) */
	uint64_t heapChanges; /* "heap in use" values (C events) kept */
	uint64_t largeAllocs; /* large allocations (instant events) kept */
	uint64_t memLost; /* allocator records the kernel lost (counted in dropped too) */
};

int KperfTimelineOpen(const struct KperfTimelineOpts *opts);
/* Whether this machine's kernel has what the sources <opts> asks for need, checked without
 * loading anything: SUCCESS, or -1 with Perrorno() LIBPERF_ERR_KERNEL_NOT_SUPPORT and a
 * Perror() that names the source and what the kernel lacks (the first one). Whether the
 * caller may load BPF is not checked here: the open says. */
int KperfTimelineCheck(const struct KperfTimelineOpts *opts);
int KperfTimelineEnable(int td);
int KperfTimelineDisable(int td);
/* Write everything collected so far to <path> (NULL: standard output), atomically (a
 * temporary file renamed into place). The collection goes on if enabled. */
int KperfTimelineWrite(int td, const char *path);
int KperfTimelineGetStats(int td, struct KperfTimelineStats *stats);
void KperfTimelineClose(int td);

#pragma GCC visibility pop
#ifdef __cplusplus
}
#endif
#endif
