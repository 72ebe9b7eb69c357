/*
 * pmu.h - the collection API of libkperf-bpf.
 *
 * Names, structs and field names are those of libkperf (see shared/seeds/001 for the Python
 * view of the same API), so a program written for libkperf compiles against this header.
 * What kperf-bpf adds is marked "kperf-bpf extension" and always sits at the end of a struct
 * or after the libkperf declarations.
 *
 * Conventions of the whole API:
 *  - a task handle (pd) is a small int > 0; -1 means failure and Perrorno()/Perror()
 *    (pcerrc.h) say why;
 *  - every array a *Read / *List call returns belongs to the caller and is released with the
 *    matching *Free; it never points into memory a later call reuses. Freeing the same array
 *    twice, or a pointer the library did not return, is detected and ignored;
 *  - timestamps (ts, startTs) are CLOCK_MONOTONIC nanoseconds, elapsedTime is milliseconds.
 */
#ifndef KPERF_PMU_H
#define KPERF_PMU_H

#include <stdint.h>
#include <sys/types.h>
#include <unistd.h>
#include "pcerrc.h"
#include "symbol.h"

#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(default)

enum PmuTaskType {
	COUNTING = 0, /* counters read as deltas */
	SAMPLING = 1, /* periodic samples with call stacks, or tracepoint records */
	SPE_SAMPLING = 2, /* Arm SPE: refused on machines without it */
	MAX_TASK_TYPE
};

enum PmuEventType { CORE_EVENT, UNCORE_EVENT, TRACE_EVENT, ALL_EVENT };

enum SpeFilter {
	SPE_FILTER_NONE = 0,
	TS_ENABLE = 1UL << 0,
	PA_ENABLE = 1UL << 1,
	PCT_ENABLE = 1UL << 2,
	JITTER = 1UL << 16,
	BRANCH_FILTER = 1UL << 32,
	LOAD_FILTER = 1UL << 33,
	STORE_FILTER = 1UL << 34,
	SPE_DATA_ALL = TS_ENABLE | PA_ENABLE | PCT_ENABLE | JITTER | BRANCH_FILTER | LOAD_FILTER |
		       STORE_FILTER
};

enum SpeEventFilter {
	SPE_EVENT_NONE = 0,
	SPE_EVENT_RETIRED = 0x2,
	SPE_EVENT_L1DMISS = 0x8,
	SPE_EVENT_TLB_WALK = 0x20,
	SPE_EVENT_MISPREDICTED = 0x80,
};

enum SymbolMode {
	NO_SYMBOL_RESOLVE = 0, /* PmuData.stack is NULL */
	RESOLVE_ELF = 1, /* function names; no file and line */
	RESOLVE_ELF_DWARF = 2 /* function names, file and line */
};

enum BranchSampleFilter {
	KPERF_NO_BRANCH_SAMPLE = 0,
	KPERF_SAMPLE_BRANCH_USER = 1U << 0,
	KPERF_SAMPLE_BRANCH_KERNEL = 1U << 1,
	KPERF_SAMPLE_BRANCH_HV = 1U << 2,
	KPERF_SAMPLE_BRANCH_ANY = 1U << 3,
	KPERF_SAMPLE_BRANCH_ANY_CALL = 1U << 4,
	KPERF_SAMPLE_BRANCH_ANY_RETURN = 1U << 5,
	KPERF_SAMPLE_BRANCH_IND_CALL = 1U << 6,
	KPERF_SAMPLE_BRANCH_ABORT_TX = 1U << 7,
	KPERF_SAMPLE_BRANCH_IN_TX = 1U << 8,
	KPERF_SAMPLE_BRANCH_NO_TX = 1U << 9,
	KPERF_SAMPLE_BRANCH_COND = 1U << 10,
	KPERF_SAMPLE_BRANCH_CALL_STACK = 1U << 11,
	KPERF_SAMPLE_BRANCH_IND_JUMP = 1U << 12,
	KPERF_SAMPLE_BRANCH_CALL = 1U << 13,
	KPERF_SAMPLE_BRANCH_NO_FLAGES = 1U << 14,
	KPERF_SAMPLE_BRANCH_NO_CYCLES = 1U << 15,
	KPERF_SAMPLE_BRANCH_TYPE_SAVE = 1U << 16,
};

struct EvtAttr {
	int groupId; /* events with the same id form a group; -1: not grouped */
};

struct PmuAttr {
	/* Event names: "cpu-clock", "cycles", "r11", "pmu/event/", "sched:sched_switch". */
	char **evtList;
	unsigned numEvt;
	/* Processes (all of their threads). NULL: every process. */
	int *pidList;
	unsigned numPid;
	/* CPUs. NULL: every online CPU. */
	int *cpuList;
	unsigned numCpu;
	/* One entry per event of evtList, or NULL. */
	struct EvtAttr *evtAttr;
	union {
		unsigned period; /* sample every <period> events (useFreq == 0) */
		unsigned freq; /* sample <freq> times a second (useFreq == 1) */
	};
	unsigned useFreq : 1;
	unsigned excludeUser : 1;
	unsigned excludeKernel : 1;
	enum SymbolMode symbolMode;
	/* 1: whole kernel and user call stacks; 0: the top frame only */
	unsigned callStack : 1;
	unsigned blockedSample : 1;
	enum SpeFilter dataFilter;
	enum SpeEventFilter evFilter;
	unsigned long minLatency;
	/* COUNTING: also count threads and child processes created after PmuOpen */
	unsigned includeNewFork : 1;
	unsigned long branchSampleFilter;
	char **cgroupNameList;
	unsigned numCgroup;

	/* kperf-bpf extensions */
	/* SAMPLING: 1 = one PmuData per sample, with its timestamp (through a ring buffer);
	 * 0 = one PmuData per distinct (pid, tid, cpu, stack) with the number of samples in
	 * count, aggregated in the kernel */
	unsigned timeline;
	/* SAMPLING: ring buffer size for timeline and tracepoint records, 0 = default */
	unsigned ringBufferKb;
	/* COUNTING with pidList: counters start at the processes' next execve instead of at
	 * PmuEnable (used to launch a command: the launcher itself is not counted) */
	unsigned enableOnExec;
};

enum PmuTraceType {
	TRACE_SYS_CALL,
};

struct PmuTraceAttr {
	/* Syscall names ("read", "openat"); NULL: every syscall. */
	const char **funcs;
	unsigned numFuncs;
	/* Processes (all threads, including those created later). NULL: every process but the
	 * caller's own (its reads of the records would feed the trace; name its pid to trace
	 * it). */
	int *pidList;
	unsigned numPid;
	/* CPUs. NULL: every CPU. */
	int *cpuList;
	unsigned numCpu;

	/* kperf-bpf extensions */
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
};

struct CpuTopology {
	int coreId;
	int numaId;
	int socketId;
};

enum SPE_EVENTS {
	SPE_EV_EXCEPT = 1 << 0,
	SPE_EV_RETIRED = 1 << 1,
	SPE_EV_L1D_ACCESS = 1 << 2,
	SPE_EV_L1D_REFILL = 1 << 3,
	SPE_EV_TLB_ACCESS = 1 << 4,
	SPE_EV_TLB_WALK = 1 << 5,
	SPE_EV_NOT_TAKEN = 1 << 6,
	SPE_EV_MISPRED = 1 << 7,
	SPE_EV_LLC_ACCESS = 1 << 8,
	SPE_EV_LLC_MISS = 1 << 9,
	SPE_EV_REMOTE_ACCESS = 1 << 10,
	SPE_EV_ALIGNMENT = 1 << 11,
	SPE_EV_PARTIAL_PRED = 1 << 17,
	SPE_EV_EMPTY_PRED = 1 << 18,
};

struct BranchSampleRecord {
	unsigned long fromAddr;
	unsigned long toAddr;
	unsigned long cycles;
	uint8_t misPred;
	uint8_t predicted;
};

struct PmuDataExt {
	union {
		struct {
			unsigned long pa;
			unsigned long va;
			unsigned long event;
			unsigned short lat;
		};
		struct {
			unsigned long nr;
			struct BranchSampleRecord *branchRecords;
		};
	};
};

/* The raw record of a tracepoint hit; decode it with PmuGetField / PmuGetFieldExp. */
struct SampleRawData {
	char *data;
};

struct SampleRawField {
	char *fieldName; /* "prev_pid" */
	char *fieldStr; /* the declaration: "pid_t prev_pid" */
	unsigned offset; /* byte offset in the raw record */
	unsigned size; /* bytes */
	unsigned isSigned;
};

struct PmuData {
	struct Stack *stack; /* call stack, leaf first; NULL under NO_SYMBOL_RESOLVE */
	const char *evt; /* event name */
	int64_t ts; /* ns */
	pid_t pid;
	int tid;
	int cpu; /* -1 when counted over all CPUs */
	int groupId;
	struct CpuTopology *cpuTopo; /* the cpu's core/numa/socket; NULL when cpu is -1 */
	const char *comm;
	uint64_t period; /* sample period */
	uint64_t count; /* COUNTING: delta since the last read (scaled);
	                              * SAMPLING: samples aggregated in this record */
	double countPercent; /* time_running / time_enabled, -1 when never enabled */
	struct PmuDataExt *ext;
	struct SampleRawData *rawData; /* tracepoint record, else NULL */
	const char *cgroupName;
};

struct PmuTraceData {
	const char *funcs; /* syscall name */
	int64_t startTs; /* ns, CLOCK_MONOTONIC */
	double elapsedTime; /* ms */
	pid_t pid;
	int tid;
	int cpu;
	const char *comm;

	/* kperf-bpf extensions */
	int64_t ret; /* return value (negative errno on failure) */
	int nr; /* syscall number */
};

struct PmuCpuFreqDetail {
	int cpuId;
	uint64_t minFreq;
	uint64_t maxFreq;
	uint64_t avgFreq;
};

int PmuOpen(enum PmuTaskType collectType, struct PmuAttr *attr);
/* The events this machine can open (probed once), as names PmuOpen accepts. The array is
 * kept by the library (one per type; repeated calls return the same one) and must not be
 * freed by the caller; PmuEventListFree() releases them all. */
const char **PmuEventList(enum PmuEventType eventType, unsigned *numEvt);
void PmuEventListFree(void);
int PmuEnable(int pd);
int PmuDisable(int pd);
int PmuCollect(int pd, int milliseconds, unsigned interval);
void PmuStop(int pd);
int PmuRead(int pd, struct PmuData **pmuData);
int PmuAppendData(struct PmuData *fromData, struct PmuData **toData);
/* Append <len> records to <filepath> (created if missing) as text: a tab-separated line per
 * record (comm pid tid cpu period evt count), then a line per stack frame that starts with a
 * tab (0xaddr symbol+0xoffset module, and file:line when dumpDwf); text is escaped (\\ \t
 * \n \xHH). All or nothing: a failed dump leaves the file as it was. Returns 0 or -1. */
int PmuDumpData(struct PmuData *pmuData, unsigned len, char *filepath, int dumpDwf);
void PmuClose(int pd);
void PmuDataFree(struct PmuData *pmuData);
/* Copy field <fieldName> of a tracepoint record into <value> (at most vSize bytes): integers
 * and pointers as the field's bytes (no sign or zero extension into a bigger buffer), char
 * arrays and __data_loc strings NUL-terminated, other arrays as bytes. Returns 0 or -1
 * (LIBPERF_ERR_INVALID_FIELD, LIBPERF_ERR_BUFFER_TOO_SMALL, LIBPERF_ERR_INVALID_PMU_DATA). */
int PmuGetField(struct SampleRawData *rawData, const char *fieldName, void *value, uint32_t vSize);
/* The description of a field; it belongs to the library and stays valid until it unloads. */
struct SampleRawField *PmuGetFieldExp(struct SampleRawData *rawData, const char *fieldName);

enum PmuDeviceMetric {
	PMU_DDR_READ_BW, /* per channel, bytes */
	PMU_DDR_WRITE_BW, /* per channel, bytes */
	PMU_L3_TRAFFIC, /* per core, bytes */
	PMU_L3_MISS, /* per core, count */
	PMU_L3_REF, /* per core, count */
	PMU_L3_LAT, /* per cluster / numa node, cycles */
	PMU_PCIE_RX_MRD_BW, /* per bdf, bytes/ns */
	PMU_PCIE_RX_MWR_BW,
	PMU_PCIE_TX_MRD_BW,
	PMU_PCIE_TX_MWR_BW,
	PMU_PCIE_RX_MRD_LAT, /* per bdf, ns */
	PMU_PCIE_RX_MWR_LAT,
	PMU_PCIE_TX_MRD_LAT,
	PMU_SMMU_TRAN, /* per bdf, count */
	PMU_HHA_CROSS_NUMA,
	PMU_HHA_CROSS_SOCKET
};

struct PmuDeviceAttr {
	enum PmuDeviceMetric metric;
	char *bdf; /* PCIe and SMMU metrics: "7a:01.0" */
	char *port; /* PCIe latency metrics */
};

enum PmuBdfType { PMU_BDF_TYPE_PCIE, PMU_BDF_TYPE_SMMU };

enum PmuMetricMode {
	PMU_METRIC_INVALID,
	PMU_METRIC_CORE,
	PMU_METRIC_NUMA,
	PMU_METRIC_CLUSTER,
	PMU_METRIC_BDF,
	PMU_METRIC_CHANNEL
};

struct PmuDeviceData {
	enum PmuDeviceMetric metric;
	double count;
	enum PmuMetricMode mode;
	union {
		unsigned coreId;
		unsigned numaId;
		unsigned clusterId;
		char *bdf;
		char *port;
		struct {
			unsigned channelId;
			unsigned ddrNumaId;
			unsigned socketId;
		};
	};
};

/* The bdf lists stay valid until PmuDeviceBdfListFree(), which frees all of them. */
const char **PmuDeviceBdfList(enum PmuBdfType bdfType, unsigned *numBdf);
void PmuDeviceBdfListFree(void);
int PmuDeviceOpen(struct PmuDeviceAttr *attr, unsigned len);
int PmuGetDevMetric(struct PmuData *pmuData, unsigned len, struct PmuDeviceAttr *attr,
		    unsigned attrLen, struct PmuDeviceData **data);
void DevDataFree(struct PmuDeviceData *data);
/* The core lists are malloc'd: release them with free(), as with libkperf. */
int PmuGetClusterCore(unsigned clusterId, unsigned **coreList);
int PmuGetNumaCore(unsigned nodeId, unsigned **coreList);
int64_t PmuGetCpuFreq(unsigned core);

int PmuTraceOpen(enum PmuTraceType traceType, struct PmuTraceAttr *traceAttr);
int PmuTraceEnable(int pd);
int PmuTraceDisable(int pd);
int PmuTraceRead(int pd, struct PmuTraceData **pmuTraceData);
void PmuTraceClose(int pd);
void PmuTraceDataFree(struct PmuTraceData *pmuTraceData);
/* The syscalls this kernel implements. The array belongs to the library (the same one is
 * returned until PmuSysCallFuncListFree releases it). */
const char **PmuSysCallFuncList(unsigned *numFunc);
void PmuSysCallFuncListFree(void);

/* kperf-bpf extension: the in-kernel syscall summary */

#define KPERF_HIST_SLOTS 40

/* One (process, syscall) pair, cumulative since PmuTraceOpen. */
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
	uint64_t summaryDropped; /* calls not counted: the summary map was full */
	unsigned fallback; /* 1: the raw_syscalls / hash-map fallback is in use */
	unsigned ringBufferKb; /* the ring buffer size in use */
};

/* Summaries sorted by (pid, total time descending); returns their number or -1. */
int PmuTraceReadSummary(int pd, struct PmuTraceSummary **summary);
void PmuTraceSummaryFree(struct PmuTraceSummary *summary);
int PmuTraceGetStats(int pd, struct PmuTraceStats *stats);
/* the number of a syscall name, or -1 (Perrorno: LIBPERF_ERR_INVALID_SYSCALL) */
int PmuSysCallNumber(const char *name);

#pragma GCC visibility pop
#ifdef __cplusplus
}
#endif
#endif
