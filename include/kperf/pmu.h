/*
 * pmu.h - the collection API of libkperf-bpf.
 *
 * Names, enums, structs and functions are libkperf's as at its current head, byte for byte
 * (field names, types, order, bit-fields; a layout test holds every offset), so a program
 * built for libkperf runs on libkperf-bpf unchanged. Nothing of kperf-bpf's own lives in this
 * header: its options (in structs with a leading size, so they can grow) and functions are
 * in kperf.h.
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
#include "proc_data_types.h"
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
	RESOLVE_ELF_DWARF = 2, /* function names, file and line */
	/* PmuData.stack is NULL until ResolvePmuDataSymbol (names, and lines for DWARF) */
	RESOLVE_DELAY_ELF = 3,
	RESOLVE_DELAY_DWARF = 4
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
	unsigned period; /* SAMPLING: this event's period, 0: PmuAttr's period or freq */
	unsigned excludeUser : 1; /* this event only: do not count user mode */
	unsigned excludeKernel : 1; /* this event only: do not count kernel mode */
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
	/* Per-event attributes for the first numEvtAttr events of evtList (may be fewer). */
	struct EvtAttr *evtAttr;
	unsigned numEvtAttr;
	union {
		unsigned period; /* sample every <period> events (useFreq == 0) */
		unsigned freq; /* sample <freq> times a second (useFreq == 1) */
	};
	unsigned useFreq : 1;
	unsigned excludeUser : 1;
	unsigned excludeKernel : 1;
	unsigned excludeGuest : 1;
	unsigned excludeHost : 1;
	enum SymbolMode symbolMode;
	/* 1: whole kernel and user call stacks; 0: the top frame only */
	unsigned callStack : 1;
	/* SAMPLING: time off CPU is sampled too, in the same unit as time on CPU */
	unsigned blockedSample : 1;
	/* Arm SPE only */
	enum SpeFilter dataFilter;
	enum SpeEventFilter evFilter;
	unsigned long minLatency;
	/* COUNTING: also count threads and child processes created after PmuOpen */
	unsigned includeNewFork : 1;
	/* SAMPLING: branch records (KPERF_SAMPLE_BRANCH_*), hardware that has them only */
	unsigned long branchSampleFilter;
	/* cgroup v2 names (relative to the cgroup2 mount): every event is opened per cgroup */
	char **cgroupNameList;
	unsigned numCgroup;
	/* COUNTING: the caller's own counters read from user space (rdpmc / PMU user access) */
	unsigned enableUserAccess : 1;
	/* COUNTING: counts aggregated per process by BPF */
	unsigned enableBpf : 1;
	/* set by PmuOpenWithHWMetric */
	unsigned enableHwMetric : 1;
	/* with pidList: counters start at the processes' next execve instead of at PmuEnable */
	unsigned enableOnExec : 1;
	/* COUNTING with pidList: one counter per existing thread, no inheritance */
	unsigned perThread : 1;
};

enum PmuTraceType {
	TRACE_SYS_CALL,
};

struct PmuTraceAttr {
	/* Syscall names ("read", "openat"); NULL: every syscall. */
	const char **funcs;
	unsigned numFuncs;
	/* Processes (all threads, including those created later). NULL: every process. */
	int *pidList;
	unsigned numPid;
	/* CPUs. NULL: every CPU. */
	int *cpuList;
	unsigned numCpu;
	/* 1: each PmuTraceData carries the call stack taken at syscall entry */
	unsigned callStack : 1;
	/* how that stack is resolved */
	enum SymbolMode symbolMode;
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
	SPE_FORWARD_HAZARD = 1 << 24,
	SPE_STRUCTURE_HAZARD = 1 << 25,
};

/* HiSilicon data sources of an SPE load (PmuDataExt.source) */
enum HIP_DATA_SOURCE {
	HIP_PEER_CPU = 0,
	HIP_PEER_CPU_HITM = 1,
	HIP_L3 = 2,
	HIP_L3_HITM = 3,
	HIP_PEER_CLUSTER = 4,
	HIP_PEER_CLUSTER_HITM = 5,
	HIP_REMOTE_SOCKET = 6,
	HIP_REMOTE_SOCKET_HITM = 7,
	HIP_LOCAL_MEM = 8,
	HIP_REMOTE_MEM = 9,
	HIP_NC_DEV = 13,
	HIP_L2 = 16,
	HIP_L2_HITM = 17,
	HIP_L1 = 18,
};

/* SPE operation types (PmuDataExt.op) */
enum SpeLdStOpType {
	SPE_OP_LD = 1 << 20,
	SPE_OP_ST = 1 << 21,
	SPE_OP_ATOMIC = 1 << 22,
	SPE_OP_EXCL = 1 << 23,
	SPE_OP_AR = 1 << 24,
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
			unsigned long event; /* SPE_EVENTS bits */
			unsigned short lat; /* cycles from issue to completion */
			unsigned short source; /* HIP_DATA_SOURCE of a load */
			uint32_t op; /* SpeLdStOpType */
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
	uint64_t count; /* COUNTING: delta since the last read (scaled); SAMPLING aggregated
	                 * by kperf-bpf (KperfOpen): samples in this record */
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
	struct Stack *stack; /* stack at syscall entry (callStack), else NULL */
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
 * freed by the caller. */
const char **PmuEventList(enum PmuEventType eventType, unsigned *numEvt);
int PmuEnable(int pd);
int PmuDisable(int pd);
/* Enable, collect for <milliseconds> (-1: until every target process has exited or PmuStop),
 * draining the kernel's buffers every <interval> ms, then disable. */
int PmuCollect(int pd, int milliseconds, unsigned interval);
/* PmuCollect on several tasks over one window: all are enabled, collected (drained every
 * 100 ms) and disabled together. Ends early when every task was stopped (PmuStop), or with -1
 * when no process of any task's pidList is left. Returns SUCCESS or the error code (not -1,
 * as libkperf); len 0 collects nothing. */
int PmuCollectV(int *pd, unsigned len, int milliseconds);
/* End a PmuCollect running in another thread. */
void PmuStop(int pd);
/* End the analysis of <pd>: what the task keeps for resolving symbols is released, a PmuRead
 * resolving in another thread stops resolving, and later reads return records without stacks. */
void PmuExit(int pd);
/* SAMPLING: the samples since the last PmuEnable or PmuRead, one PmuData per sample;
 * COUNTING: the counts since the last read. Returns the number of records (*pmuData NULL when
 * 0) or -1. */
int PmuRead(int pd, struct PmuData **pmuData);
/* Under RESOLVE_DELAY_ELF / RESOLVE_DELAY_DWARF: give every record of an array PmuRead (or
 * PmuAppendData) returned its stack, in place (names, and file:line for DWARF); also after the
 * processes exited and after PmuClose. Returns SUCCESS or an error code. */
int ResolvePmuDataSymbol(struct PmuData *pmuData);
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
 * arrays and __data_loc strings NUL-terminated, other arrays as bytes. Returns SUCCESS or the
 * error code itself, as libkperf: LIBPERF_ERR_INVALID_FIELD_ARGS (a NULL or unknown argument,
 * no such field, buffer too small), LIBPERF_ERR_FIND_FIELD_LOSS (no format for the record's
 * event), LIBPERF_ERR_INVALID_PMU_DATA (a truncated record). */
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

/* The bdf lists belong to the library. */
const char **PmuDeviceBdfList(enum PmuBdfType bdfType, unsigned *numBdf);
int PmuDeviceOpen(struct PmuDeviceAttr *attr, unsigned len);
int PmuGetDevMetric(struct PmuData *pmuData, unsigned len, struct PmuDeviceAttr *attr,
		    unsigned attrLen, struct PmuDeviceData **data);
void DevDataFree(struct PmuDeviceData *data);
/* The core lists are malloc'd: release them with free(), as with libkperf. */
int PmuGetClusterCore(unsigned clusterId, unsigned **coreList);
int PmuGetNumaCore(unsigned nodeId, unsigned **coreList);

int PmuTraceOpen(enum PmuTraceType traceType, struct PmuTraceAttr *traceAttr);
int PmuTraceEnable(int pd);
int PmuTraceDisable(int pd);
int PmuTraceRead(int pd, struct PmuTraceData **pmuTraceData);
void PmuTraceClose(int pd);
void PmuTraceDataFree(struct PmuTraceData *pmuTraceData);
/* The syscalls this kernel implements. The array belongs to the library. */
const char **PmuSysCallFuncList(unsigned *numFunc);

/* Frequency of <core> in Hz, or -1. */
int64_t PmuGetCpuFreq(unsigned core);
/* Start sampling every core's frequency (cpufreq) every <period> ms, 1..10000, in a
 * background thread; 0 if it runs already. -1: LIBPERF_ERR_INVALID_CPU_FREQ_PERIOD, or
 * LIBPERF_ERR_CPUFREQ_NOT_CONFIG on a machine without cpufreq. */
int PmuOpenCpuFreqSampling(unsigned period);
/* Min, max and average frequency (Hz) of every core since the open or the previous read
 * (without a sample since, or without a sampler: the current frequency, 0 if unknown); the
 * array belongs to the library and stays valid until the next call. */
struct PmuCpuFreqDetail *PmuReadCpuFreqDetail(unsigned *cpuNum);
void PmuCloseCpuFreqSampling(void);

/* perf.data writer: samples as perf record writes them, for perf report / perf script. */
typedef void *PmuFile;
/* Start the file at <path> (created or emptied) for records of a SAMPLING task opened with
 * <pattr>; addIdHdr: the side-band records (comm, mmap) carry the sample id fields
 * (sample_id_all). NULL on failure (Perrorno). */
PmuFile PmuBeginWrite(const char *path, const struct PmuAttr *pattr, const int addIdHdr);
/* Append the first <len> records of an array PmuRead returned, with the comm and mmap records
 * perf needs to resolve their stacks. All or nothing. Returns SUCCESS or the error code. */
int PmuWriteData(PmuFile file, struct PmuData *data, int len);
/* Finish the file (feature sections, then the header) and release the handle; on failure
 * Perrorno() says why and the file is removed. */
void PmuEndWrite(PmuFile file);

/* Hardware metrics, a bit each */
enum PmuHwMetric {
	PMU_HWM_CPI = 1 << 0,
	PMU_HWM_CACHE_MISS = 1 << 1,
	PMU_HWM_L3_CACHE_MISS = 1 << 2,
	PMU_HWM_L2D_CACHE_MISS = 1 << 3,
	PMU_HWM_L1_DCACHE_MISS = 1 << 4,
	PMU_HWM_L1_ICACHE_LOAD_MISS = 1 << 5,
	PMU_HWM_DTLB_LOAD_MISS = 1 << 6,
	PMU_HWM_ITLD_LOAD_MISS = 1 << 7,
	PMU_HWM_BRACH_LOADS_MISS = 1 << 8,
};

struct PmuHwMetricAttr {
	unsigned long metric; /* PmuHwMetric bits */
	unsigned *basePeriodList; /* one sample period per metric bit set */
	double *thresholdList; /* one threshold per metric bit set */
	unsigned pid;
};

int PmuOpenWithHWMetric(struct PmuHwMetricAttr *hwMetricAttr);

/* User function tracing (uprobes): entry and return of named functions. */
struct SymbolSource {
	char *moduleName; /* a path, or a library name found in the processes' mappings */
	char *symbolName;
};

struct UTraceAttr {
	struct SymbolSource *symSrc;
	unsigned numSym;
	int *pidList; /* NULL: every process that maps the module */
	unsigned numPid;
	unsigned fetchG; /* Go programs: record the runtime's g pointer at each probe */
};

struct UTraceData {
	unsigned long addr; /* the probed address */
	const char *comm;
	int tid;
	int cpu;
	int64_t timestamp; /* ns, CLOCK_MONOTONIC */
	uint64_t gPtr; /* with fetchG */
	const char *module;
	const char *func;
	unsigned isRet; /* 1: function return, 0: entry */
};

int UTraceOpen(struct UTraceAttr *attr);
int UTraceEnable(int pd);
int UTraceDisable(int pd);
int UTraceRead(int pd, struct UTraceData **traceData);
void UTraceDataFree(struct UTraceData *traceData);
void UTraceClose(int pd);

/* /proc files parsed into structs (proc_data_types.h); free with ProcDataFree. */
int ProcDataRead(int pid, struct ProcData **data, unsigned *numData);
void ProcDataFree(struct ProcData *data, unsigned numData);

#pragma GCC visibility pop
#ifdef __cplusplus
}
#endif
#endif
