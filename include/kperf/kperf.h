/*
 * kperf.h - what kperf-bpf adds to libkperf's API.
 *
 * libkperf's headers (pmu.h, symbol.h, pcerrc.h, proc_data_types.h) keep libkperf's layouts
 * byte for byte, and libkperf keeps appending fields to its structs: so kperf-bpf never adds
 * a field to them. Its options live here, in structs that start with their own size (as
 * libbpf's opts do): a program built against an older kperf.h passes a smaller sz and the
 * fields it does not know read as 0; a newer program's extra fields must be 0 when passed to
 * an older library, or the call fails with KPERF_ERR_INVALID_ATTR. Zero-initialise them, or
 * use KPERF_OPTS:
 *
 *	struct KperfTraceOpts o = KPERF_OPTS(KperfTraceOpts, .summaryOnly = 1);
 *	int pd = KperfTraceOpen(TRACE_SYS_CALL, &attr, &o);
 *
 * Markers, activity records and timelines have their own headers, included here:
 * activity.h, timeline.h (and mstx.h, the markers themselves, included on its own).
 *
 * The functions follow the API's conventions (pmu.h): -1 or NULL on failure with
 * Perrorno()/Perror() set, arrays owned by the caller until their *Free.
 */
#ifndef KPERF_KPERF_H
#define KPERF_KPERF_H

#include <stddef.h>
#include <stdint.h>
#include "activity.h"
#include "pcerrc.h"
#include "pmu.h"
#include "symbol.h"
#include "timeline.h"

#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(default)

#define KPERF_OPTS(TYPE, ...) ((struct TYPE){ .sz = sizeof(struct TYPE), __VA_ARGS__ })

/* ---- PmuOpen with options ---- */

struct KperfPmuOpts {
	size_t sz; /* sizeof(struct KperfPmuOpts) */
	/* SAMPLING: 1 = one PmuData per distinct (pid, tid, cpu, stack), counted in the kernel,
	 * with the number of samples in count and ts 0 (the cost of a read is the number of
	 * distinct stacks, not of samples); 0 = one PmuData per sample with its ts, as libkperf */
	unsigned aggregate;
	/* SAMPLING: ring buffer for per-sample and tracepoint records, KiB (0: 16 MiB) */
	unsigned ringBufferKb;
	/* SAMPLING with symbolMode RESOLVE_ELF_DWARF or RESOLVE_DELAY_DWARF: 1 = each inlined
	 * call becomes a frame of its own in the stacks (KperfSymOpts.inlineFrames says how;
	 * KperfSymbolGetInfo tells them apart); 0 = libkperf's stacks, one frame per address */
	unsigned inlineFrames;
	/* SAMPLING with blockedSample: 1 = the time blocked only ("context-switches" records of
	 * the waits threads went into, not of their preemptions), no on-CPU samples: an
	 * off-CPU profile (kperf-bpf record --off-cpu) */
	unsigned offCpuOnly;
	/* SAMPLING with blockedSample and callStack: 1 = the "context-switches" records keep
	 * their kernel frames (the way into the wait) above the user frames, which is all
	 * libkperf keeps */
	unsigned blockedKernelStack;
	/* SAMPLING with callStack: how user stacks are unwound. KPERF_CALL_GRAPH_DWARF (0, the
	 * default): from the call-frame information (.eh_frame) of each mapped file, in the
	 * kernel, frame pointers only where a file has none (JIT code): complete stacks on code
	 * built without frame pointers, as distributions build. KPERF_CALL_GRAPH_FP: frame
	 * pointers only (the kernel's bpf_get_stack), as libkperf */
	unsigned callGraph;
	/* SAMPLING with callStack and KPERF_CALL_GRAPH_DWARF: the frames of CPython processes
	 * (3.11). KPERF_PY_FRAMES_ON (0, the default): each native _PyEval_EvalFrameDefault frame
	 * is replaced by the Python functions it was running ("module.qualname", the .py file as
	 * module and fileName, the function's first line); KPERF_PY_FRAMES_KEEP_INTERP: the
	 * same, the interpreter's frames kept under them; KPERF_PY_FRAMES_OFF: native frames */
	unsigned pythonFrames;
	/* SAMPLING: the distinct stacks the kernel keeps of each kind (kernel, user) until the
	 * task is read while disabled, and with aggregate the distinct (thread, cpu, stacks)
	 * counted between two drains (about a second); their maps are preallocated kernel
	 * memory (a stack is about 1 KiB). 0: 16384 stacks of each kind, 32768 counted; at
	 * most KPERF_MAX_STACK_ENTRIES. A full map is a counted loss, warned about at the read. */
	unsigned stackEntries;
};

#define KPERF_MAX_STACK_ENTRIES (1U << 20)

#define KPERF_CALL_GRAPH_DWARF 0
#define KPERF_CALL_GRAPH_FP 1

#define KPERF_PY_FRAMES_ON 0
#define KPERF_PY_FRAMES_KEEP_INTERP 1
#define KPERF_PY_FRAMES_OFF 2

/* PmuOpen with kperf-bpf's options; opts may be NULL (PmuOpen(t, a) is KperfOpen(t, a, NULL)). */
int KperfOpen(enum PmuTaskType collectType, struct PmuAttr *attr, const struct KperfPmuOpts *opts);

/* How a SAMPLING task's user stacks (its samples, and with blockedSample its blocked time)
 * were unwound since its open, every stack taken counted (not only the distinct ones); all 0
 * with KPERF_CALL_GRAPH_FP. Frames: by a row of the file's .eh_frame, of its .debug_frame, a
 * PLT stub's, or by frame pointers (a mapping without a table, JIT code, or a row that says
 * there is no call-frame information); framesSignal counts the rows that went through a
 * signal frame among them. */
struct KperfUnwindStats {
	unsigned long long stacks; /* user stacks unwound from tables */
	unsigned long long framesEhFrame, framesDebugFrame, framesPlt, framesFp, framesSignal;
	unsigned long long stacksNotLoaded; /* by frame pointers: the tables not loaded yet */
	unsigned long long stacksUnknownMap; /* cut at code mapped since the tables were loaded */
	unsigned long long stacksNoRegs; /* by frame pointers: no user registers (before 5.15) */
	unsigned long long stacksTruncated; /* cut at the frame limit */
	unsigned long long tables, rows, rowBytes; /* unwind tables in the kernel, their rows */
	unsigned long long processes; /* process entries written (mappings to tables) */
};

/* 0, or -1 (Perror) for a pd that is not a PmuOpen/KperfOpen task */
int KperfPmuGetUnwindStats(int pd, struct KperfUnwindStats *stats);

/* ---- syscall tracing with options ---- */

struct KperfTraceOpts {
	size_t sz; /* sizeof(struct KperfTraceOpts) */
	/* 1: keep only the in-kernel summary (PmuTraceReadSummary); PmuTraceRead returns 0 */
	unsigned summaryOnly;
	/* per-call records only for calls that took at least this long */
	uint64_t minDurationNs;
	/* per-call ring buffer size in KiB (a power of two is used), 0: 16384 */
	unsigned ringBufferKb;
	/* a cgroup v2 directory: only its tasks and those of its descendants */
	const char *cgroupPath;
	/* 1: processes forked by a traced process are traced too */
	unsigned includeNewFork;
	/* 1: the pids in pidList are traced from their next execve on (used to launch a
	 * command: the launcher's own syscalls before the exec are not reported) */
	unsigned fromExec;
	/* (process, syscall) entries of the in-kernel summary, 0: 16384 */
	unsigned summaryEntries;
	/* 1: tracing every process leaves out the caller's own (whose reading of the records
	 * would otherwise feed the trace); libkperf's default, 0, includes it */
	unsigned excludeSelf;
	/* per-call records kept between two PmuTraceRead calls (0: 8 Mi, 448 MiB); when that
	 * many wait, the next ones stay in the ring buffer, and those it cannot hold are
	 * dropped and counted. PmuTraceRead hands out at most this many: read until it
	 * returns 0 to have them all. */
	unsigned maxStoredRecords;
	/* with callStack: distinct stacks kept for the whole trace (0: 8192); a call whose
	 * stack finds no room is counted without it (PmuTraceStats.stacksLost) */
	unsigned stackEntries;
	/* with callStack: how user stacks are unwound, as KperfPmuOpts.callGraph:
	 * KPERF_CALL_GRAPH_DWARF (0, the default), from the .eh_frame tables of the mapped files
	 * (frame pointers where a file has none; the raw_syscalls fallback has frame pointers
	 * only), so that a call through libc reaches the code that made it;
	 * KPERF_CALL_GRAPH_FP: frame pointers only */
	unsigned callGraph;
	/* 1: the in-kernel summary is kept per (cgroup, command name, syscall) instead of per
	 * process, read with KperfTraceReadCgroupSummary: each call is counted under the cgroup
	 * its task was in when it returned, so a process that lived a millisecond is attributed
	 * to its workload like any other, and nothing is moved when processes exit.
	 * summaryEntries sizes that map; PmuTraceReadSummary has its overflow rows only. */
	unsigned summaryByCgroup;
};

int KperfTraceOpen(enum PmuTraceType traceType, struct PmuTraceAttr *traceAttr,
		   const struct KperfTraceOpts *opts);

/* What kperf-bpf knows of a PmuTraceData record beyond libkperf's fields. */
struct KperfTraceDataExt {
	int64_t ret; /* return value (negative errno on failure) */
	int nr; /* syscall number */
};

/* The extension of record <index> of an array PmuTraceRead returned; it lives as long as the
 * array. NULL (LIBPERF_ERR_INVALID_PMU_DATA) when <data> is not such an array or index is out
 * of range. */
const struct KperfTraceDataExt *KperfTraceGetExt(const struct PmuTraceData *data, int index);

#define KPERF_HIST_SLOTS 40

/* The comm of the rows of pid 0: calls the in-kernel summary had no room for (summaryEntries),
 * counted per syscall without their process. */
#define KPERF_TRACE_OVERFLOW_COMM "[map full]"
/* The comm of the other rows of pid 0: calls whose row the kernel could not allocate at that
 * moment (-ENOMEM, the map not full) when the ring that brings such calls to their process's
 * row was full too (PmuTraceStats.summaryNoMemory). */
#define KPERF_TRACE_NOMEM_COMM "[no memory]"

/* One (process, syscall) pair, cumulative since the trace was opened; pid 0
 * (KPERF_TRACE_OVERFLOW_COMM): the calls of a syscall the summary map had no room for. */
struct PmuTraceSummary {
	const char *funcs; /* syscall name */
	int nr; /* syscall number */
	pid_t pid; /* process (thread group) */
	const char *comm; /* the process's command name when it first made this call */
	uint64_t calls;
	uint64_t errors; /* calls that returned a negative value */
	uint64_t totalNs;
	uint64_t minNs;
	uint64_t maxNs;
	/* hist[i]: calls whose latency in ns had its highest set bit at i (i.e. in
	 * [2^i, 2^(i+1)), with 0 ns in hist[0]); the last slot also holds everything longer */
	uint64_t hist[KPERF_HIST_SLOTS];
};

struct PmuTraceStats {
	uint64_t records; /* per-call records delivered by PmuTraceRead so far */
	uint64_t dropped; /* per-call records lost: the ring buffer was full */
	/* calls not in their process's row: counted in the pid 0 rows (the summary map was full:
	 * KPERF_TRACE_OVERFLOW_COMM; no memory: KPERF_TRACE_NOMEM_COMM), or not counted at all
	 * (their start time could not be stored) */
	uint64_t summaryDropped;
	unsigned fallback; /* 1: the raw_syscalls / hash-map fallback is in use */
	unsigned ringBufferKb; /* the ring buffer size in use */
	/* with callStack: calls counted without their stack (stack map full, or the stack
	 * could not be taken), and calls counted in the summary by stack without their process
	 * and stack (its map full: the pid 0 KPERF_TRACE_STACK_FULL rows) */
	uint64_t stacksLost;
	uint64_t stackSummaryDropped;
	/* calls whose row in the in-kernel summary the kernel could not allocate at that moment
	 * (-ENOMEM: its allocator had no memory ready; the map was not full, that is
	 * summaryDropped's [map full]): counted in their process's row all the same, through
	 * userspace, except those also in the pid 0 KPERF_TRACE_NOMEM_COMM rows (that ring full
	 * too). With callStack, the calls of the summary by stack's pid 0 KPERF_TRACE_STACK_NOMEM
	 * rows, there for that reason. */
	uint64_t summaryNoMemory;
	uint64_t stackSummaryNoMemory;
};

/* One (process, syscall, stack at entry) of the summary by stack, which a trace keeps in the
 * kernel when opened with callStack (whatever summaryOnly says): cumulative since the open.
 * pid 0: the calls of a syscall the summary by stack had no row for, counted without their
 * process and stack. Their comm is KPERF_TRACE_OVERFLOW_COMM when its map was full
 * (summaryEntries sizes it too), their stack one frame named KPERF_TRACE_STACK_FULL; or
 * KPERF_TRACE_NOMEM_COMM and KPERF_TRACE_STACK_NOMEM when the kernel could not allocate the
 * row at that moment (-ENOMEM, the map not full). */
#define KPERF_TRACE_STACK_FULL "[stack table full]"
#define KPERF_TRACE_STACK_NOMEM "[no memory for a stack row]"

struct KperfTraceStackSummary {
	const char *funcs; /* syscall name */
	int nr; /* syscall number */
	pid_t pid; /* process (thread group) */
	const char *comm; /* the process's command name when it first made this call */
	uint64_t calls;
	uint64_t errors; /* calls that returned a negative value */
	uint64_t totalNs;
	uint64_t minNs;
	uint64_t maxNs;
	/* the stack at entry: kernel frames first (kernelFrames of them), then user frames,
	 * each part leaf first; resolved with lines under a DWARF symbolMode. NULL when no
	 * stack could be taken or kept (the calls are still counted here) */
	struct Stack *stack;
	unsigned kernelFrames;
};

/* The summary by stack of trace <pd> (opened with callStack), sorted by total time
 * descending; returns the number of entries or -1 (KPERF_ERR_INVALID_ATTR without
 * callStack). */
int KperfTraceReadStackSummary(int pd, struct KperfTraceStackSummary **summary);
void KperfTraceStackSummaryFree(struct KperfTraceStackSummary *summary);

/* Summaries sorted by (pid, total time descending); returns their number or -1. */
int PmuTraceReadSummary(int pd, struct PmuTraceSummary **summary);

/* The summary by cgroup (KperfTraceOpts.summaryByCgroup): one row per (cgroup, command name,
 * syscall); s.pid is 0, s.comm the command name when the calls returned. */
struct KperfTraceCgroupSummary {
	/* the cgroup v2 id (the inode number of its directory in the cgroup2 file system);
	 * KPERF_TRACE_CGROUP_OUTSIDE: processes outside the caller's PID namespace (one row per
	 * syscall, comm "[outside namespace]"); KPERF_TRACE_CGROUP_NONE: calls counted
	 * without their cgroup, comm KPERF_TRACE_OVERFLOW_COMM or KPERF_TRACE_NOMEM_COMM */
	uint64_t cgroupId;
	struct PmuTraceSummary s;
};

#define KPERF_TRACE_CGROUP_OUTSIDE 0
#define KPERF_TRACE_CGROUP_NONE UINT64_MAX

/* The rows (sorted by cgroup, comm, syscall) into *rows; their number or -1. */
int KperfTraceReadCgroupSummary(int pd, struct KperfTraceCgroupSummary **rows);
void KperfTraceCgroupSummaryFree(struct KperfTraceCgroupSummary *rows);
/* Delete the rows of these cgroups (emptied ones, whose last rows the caller has read); a
 * call made there since starts a new row from 0. The number of rows deleted, or -1. */
int KperfTraceForgetCgroups(int pd, const uint64_t *cgroupIds, unsigned num);
void PmuTraceSummaryFree(struct PmuTraceSummary *summary);
int PmuTraceGetStats(int pd, struct PmuTraceStats *stats);
/* Drop the summary rows of these processes (ones that have exited: a long-running collector
 * reads their last values, then frees their room in the kernel's map, which would otherwise
 * fill up with the dead); a process that still runs starts again from 0. Returns the number of
 * rows dropped, or -1. */
int KperfTraceForget(int pd, const int *pidList, unsigned numPid);
/* the number of a syscall name, or -1 (Perrorno: LIBPERF_ERR_INVALID_SYSCALL_FUN) */
int PmuSysCallNumber(const char *name);

/* ---- user function tracing (UTrace*) with options ---- */

struct KperfUTraceOpts {
	size_t sz; /* sizeof(struct KperfUTraceOpts) */
	/* ring buffer for probe hits in KiB (a power of two is used), 0: 16384 */
	unsigned ringBufferKb;
};

/* UTraceOpen with kperf-bpf's options; opts may be NULL (UTraceOpen(a) is KperfUTraceOpen(a,
 * NULL)). */
int KperfUTraceOpen(struct UTraceAttr *attr, const struct KperfUTraceOpts *opts);

struct KperfUTraceStats {
	uint64_t records; /* UTraceData records handed out by UTraceRead so far */
	uint64_t dropped; /* probe hits lost: the ring buffer (or the store between reads) was
			   * full */
	uint64_t unattributed; /* hits whose function could not be told: the process exited
				* before the mappings of a library it loaded late were read */
	unsigned probes; /* uprobes placed: (entry or return instruction) x traced process */
	unsigned ringBufferKb; /* the ring buffer size in use */
};

int KperfUTraceGetStats(int pd, struct KperfUTraceStats *stats);

/* ---- lists the library keeps (libkperf has no way to release them) ---- */

/* Release the arrays of PmuEventList (all types); the next call builds them again. */
void PmuEventListFree(void);
/* Release the arrays of PmuDeviceBdfList. */
void PmuDeviceBdfListFree(void);
/* Release the array of PmuSysCallFuncList. */
void PmuSysCallFuncListFree(void);

/* ---- symbol resolver: single files ---- */

/* Load the symbols (or symbols and lines) of an ELF file that no recorded process maps. */
int SymResolverRecordElf(const char *fileName);
int SymResolverRecordDwarf(const char *fileName);

/* ---- symbol resolver: inlined frames, aliases ---- */

struct KperfSymOpts {
	size_t sz; /* sizeof(struct KperfSymOpts) */
	/* 1: file and line from DWARF (0: as the pid was recorded, SymResolverRecordModule) */
	unsigned dwarf;
	/* 1: each inlined call at an address becomes a frame of its own, innermost first,
	 * before the function it was inlined into, whose line is then the line of the call (as
	 * perf report --inline and llvm-symbolizer --inlining show them); implies dwarf. The
	 * inline frames are Symbols of their own, told apart by KperfSymbolGetInfo. 0: one frame
	 * per address, as libkperf (its line is the innermost one) */
	unsigned inlineFrames;
};

/* StackToHash with options; opts NULL is StackToHash. The list belongs to the resolver. */
struct Stack *KperfStackToHash(int pid, unsigned long *stack, int nr,
			       const struct KperfSymOpts *opts);

/* SymResolverMapCodeAddr as a list: the file address <addr> of <moduleName> (as nm and
 * objdump print them), with inlineFrames its inlined calls first then its function, else the
 * one Symbol of SymResolverMapCodeAddr. Lines always (opts->dwarf is implied). Belongs to the
 * resolver. NULL with the codes of SymResolverMapCodeAddr. */
struct Stack *KperfMapCodeFrames(const char *moduleName, unsigned long addr,
				 const struct KperfSymOpts *opts);

struct KperfSymbolInfo {
	size_t sz; /* set it to sizeof(struct KperfSymbolInfo) */
	/* 1: the frame of an inlined call (KperfSymOpts.inlineFrames, KperfPmuOpts.inlineFrames):
	 * its code is part of the next frame towards the caller that is not inlined, at the same
	 * address */
	unsigned inlined;
	/* the length of symbolName without the suffixes of compiler clones (".isra.0",
	 * ".constprop.1", ".part.2", ".cold", " [clone .isra.0]"): the name reports group it
	 * under; strlen(symbolName) when it has none */
	unsigned baseNameLen;
};

/* What kperf-bpf knows of a Symbol the library returned (any Symbol: one it did not make reads
 * as not inlined). 0, or -1 (LIBPERF_ERR_NULL_POINTER for a NULL argument,
 * KPERF_ERR_INVALID_ATTR for a wrong info->sz). */
int KperfSymbolGetInfo(const struct Symbol *sym, struct KperfSymbolInfo *info);

/* The other names of <sym>'s function: the symbols at its start address in its file's symbol
 * table, as written there (mangled, "name@@VERSION"), ranked as the shown name was chosen (the
 * name exported under its default version, then fewest leading underscores once a __GI_-style
 * prefix is dropped, then global over weak), the shown name and repeats left out. *aliases is
 * one malloc'd block, a NULL-terminated array of strings (free() it); a kernel, JIT, unknown
 * or inline frame has none. Returns their number, or -1 (LIBPERF_ERR_NULL_POINTER; the codes
 * of SymResolverMapCodeAddr when the file cannot be read). */
int KperfSymbolAliases(const struct Symbol *sym, char ***aliases);

#pragma GCC visibility pop
#ifdef __cplusplus
}
#endif
#endif
