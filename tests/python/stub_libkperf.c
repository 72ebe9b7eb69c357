/*
 * stub_libkperf.c - a stand-in for libkperf-bpf.so that test_marshalling.py loads into a
 * separate Python process, to test the Python side of the API (what kperf passes to C and
 * how it reads what C returns) for the functions whose real implementation is not merged
 * yet. It returns fixed, known data and counts what is freed; it is not a test of the
 * library itself (those are the other tests, which run against the real one).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kperf/kperf.h"

#define EXPORT __attribute__((visibility("default")))

static __thread int err_code;
static __thread char err_msg[256];
static char last_attr[2048];
static int live, double_frees, last_size = -1;
static void *live_ptrs[64];

static int fail(int code, const char *msg)
{
	err_code = code;
	snprintf(err_msg, sizeof(err_msg), "%s", msg);
	return -1;
}

static void ok(void)
{
	err_code = 0;
	err_msg[0] = '\0';
}

static void *track(void *p)
{
	int i;

	for (i = 0; i < 64; i++)
		if (!live_ptrs[i]) {
			live_ptrs[i] = p;
			live++;
			return p;
		}
	abort();
}

/* frees <p> if it was handed out, counts a double free otherwise */
static void release(void *p)
{
	int i;

	if (!p)
		return;
	for (i = 0; i < 64; i++)
		if (live_ptrs[i] == p) {
			live_ptrs[i] = NULL;
			live--;
			free(p);
			return;
		}
	double_frees++;
}

EXPORT int Perrorno(void)
{
	return err_code;
}

EXPORT const char *Perror(void)
{
	return err_code ? err_msg : "success";
}

EXPORT int GetWarn(void)
{
	return 0;
}

EXPORT const char *GetWarnMsg(void)
{
	return "";
}

/* what the last PmuOpen / PmuDeviceOpen received, and the free counters */
EXPORT const char *StubLastAttr(void)
{
	return last_attr;
}

EXPORT const char *StubStats(void)
{
	static char buf[128];

	snprintf(buf, sizeof(buf), "live=%d double=%d last_size=%d", live, double_frees, last_size);
	return buf;
}

#define ADD(...) (n += snprintf(last_attr + n, sizeof(last_attr) - n, __VA_ARGS__))

EXPORT int PmuOpen(enum PmuTaskType type, struct PmuAttr *a)
{
	unsigned i;
	int n = 0;

	ADD("type=%d evt=", type);
	for (i = 0; i < a->numEvt; i++) {
		if (!strcmp(a->evtList[i], "bad"))
			return fail(LIBPERF_ERR_INVALID_EVENT, "unknown event 'bad'");
		ADD("%s,", a->evtList[i]);
	}
	ADD(" pid=");
	for (i = 0; i < a->numPid; i++)
		ADD("%d,", a->pidList[i]);
	ADD(" cpu=");
	for (i = 0; i < a->numCpu; i++)
		ADD("%d,", a->cpuList[i]);
	ADD(" group=");
	for (i = 0; a->evtAttr && i < a->numEvtAttr; i++)
		ADD("%d:%u:%u%u,", a->evtAttr[i].groupId, a->evtAttr[i].period,
		    a->evtAttr[i].excludeUser, a->evtAttr[i].excludeKernel);
	ADD(" cgroup=");
	for (i = 0; i < a->numCgroup; i++)
		ADD("%s,", a->cgroupNameList[i]);
	ADD(" period=%u freq=%u useFreq=%u excludeUser=%u excludeKernel=%u symbolMode=%d "
	    "callStack=%u blockedSample=%u dataFilter=%#lx evFilter=%d minLatency=%lu "
	    "includeNewFork=%u branch=%#lx excludeGuest=%u excludeHost=%u enableUserAccess=%u "
	    "enableBpf=%u enableHwMetric=%u enableOnExec=%u perThread=%u",
	    a->period, a->freq, a->useFreq, a->excludeUser, a->excludeKernel, a->symbolMode,
	    a->callStack, a->blockedSample, (unsigned long)a->dataFilter, a->evFilter,
	    a->minLatency, a->includeNewFork, a->branchSampleFilter, a->excludeGuest,
	    a->excludeHost, a->enableUserAccess, a->enableBpf, a->enableHwMetric, a->enableOnExec,
	    a->perThread);
	ok();
	return 3;
}

EXPORT int KperfOpen(enum PmuTaskType type, struct PmuAttr *a, const struct KperfPmuOpts *o)
{
	int pd = PmuOpen(type, a), n = (int)strlen(last_attr);

	if (pd > 0 && o)
		ADD(" aggregate=%u ringBufferKb=%u inlineFrames=%u offCpuOnly=%u "
		    "blockedKernelStack=%u sz=%zu",
		    o->aggregate, o->ringBufferKb, o->inlineFrames, o->offCpuOnly,
		    o->blockedKernelStack, o->sz);
	return pd;
}

EXPORT int PmuEnable(int pd)
{
	if (pd != 3 && pd != 4)
		return fail(LIBPERF_ERR_INVALID_PD, "invalid task handle");
	ok();
	return 0;
}

EXPORT int PmuDisable(int pd)
{
	return PmuEnable(pd);
}

EXPORT void PmuClose(int pd)
{
	(void)pd;
	ok();
}

static struct Symbol syms[3] = {
	{ 0x1000, "/usr/bin/app", "leaf", "_Z4leafv", "app.c", 10, 4, 0x1100, 0x1000, 1 },
	{ 0x2000, "/usr/bin/app", "mid", "mid", "app.c", 20, 8, 0x2100, 0x2000, 1 },
	{ 0x3000, "[kernel.kallsyms]", "root", "root", "", 0, 0, 0, 0, 1 },
};
static struct Stack frames[3];
static struct CpuTopology topo = { 1, 0, 0 };
static struct BranchSampleRecord brs[2] = { { 1, 2, 3, 1, 0 }, { 4, 5, 6, 0, 1 } };
static struct PmuDataExt spe_ext, br_ext;
static char raw_rec[64];
static struct SampleRawData raw = { raw_rec };
static struct SampleRawField fields[2] = {
	{ "prev_pid", "pid_t prev_pid", 24, 4, 1 },
	{ "next_comm", "char next_comm[16]", 40, 16, 0 },
};

/* three records: a sample with a stack (leaf <-> mid <-> root), a tracepoint record, and
 * one with every pointer NULL */
EXPORT int PmuRead(int pd, struct PmuData **out)
{
	struct PmuData *d;
	int32_t pid = 4242;
	int i;

	if (pd != 3 && pd != 4)
		return fail(LIBPERF_ERR_INVALID_PD, "invalid task handle");
	for (i = 0; i < 3; i++) {
		frames[i].symbol = &syms[i];
		frames[i].next = i < 2 ? &frames[i + 1] : NULL;
		frames[i].prev = i > 0 ? &frames[i - 1] : NULL;
	}
	spe_ext.pa = 0x10;
	spe_ext.va = 0x20;
	spe_ext.event = 0x2;
	spe_ext.lat = 5;
	spe_ext.source = HIP_L3;
	br_ext.nr = 2;
	br_ext.branchRecords = brs;
	memcpy(raw_rec + 24, &pid, 4);
	memcpy(raw_rec + 40, "swapper/0\0\0\0\0\0\0\0", 16);
	d = track(calloc(3, sizeof(*d)));
	d[0] = (struct PmuData){ .stack = &frames[0],
				 .evt = "cpu-clock",
				 .ts = 123,
				 .pid = 10,
				 .tid = 11,
				 .cpu = 1,
				 .groupId = 2,
				 .cpuTopo = &topo,
				 .comm = "app",
				 .period = 1000,
				 .count = 5,
				 .countPercent = 0.5,
				 .ext = pd == 4 ? &br_ext : &spe_ext,
				 .cgroupName = "cg" };
	d[1] = (struct PmuData){ .evt = "sched:sched_switch",
				 .pid = 12,
				 .tid = 12,
				 .cpu = 0,
				 .comm = "sw",
				 .count = 1,
				 .countPercent = -1,
				 .rawData = &raw };
	d[2] = (struct PmuData){ .evt = "task-clock", .cpu = -1 };
	*out = d;
	ok();
	return 3;
}

EXPORT void PmuDataFree(struct PmuData *d)
{
	release(d);
}

EXPORT int PmuDumpData(struct PmuData *d, unsigned len, char *path, int dwf)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return fail(LIBPERF_ERR_PATH_INACCESSIBLE, "cannot open the file");
	fprintf(f, "len=%u dwf=%d evt0=%s\n", len, dwf, d ? d[0].evt : "-");
	fclose(f);
	ok();
	return 0;
}

static struct SampleRawField *find_field(const char *name)
{
	int i;

	for (i = 0; i < 2; i++)
		if (!strcmp(fields[i].fieldName, name))
			return &fields[i];
	return NULL;
}

EXPORT int PmuGetField(struct SampleRawData *r, const char *name, void *value, uint32_t size)
{
	struct SampleRawField *f;

	/* as libkperf: the code itself on failure */
	last_size = (int)size;
	if (!r)
		return fail(LIBPERF_ERR_INVALID_FIELD_ARGS, "not a tracepoint record"), err_code;
	f = find_field(name);
	if (!f)
		return fail(LIBPERF_ERR_INVALID_FIELD_ARGS, "no such field"), err_code;
	if (size < f->size)
		return fail(LIBPERF_ERR_INVALID_FIELD_ARGS, "buffer too small"), err_code;
	memcpy(value, r->data + f->offset, f->size);
	ok();
	return 0;
}

EXPORT struct SampleRawField *PmuGetFieldExp(struct SampleRawData *r, const char *name)
{
	struct SampleRawField *f = r ? find_field(name) : NULL;

	if (!f) {
		fail(LIBPERF_ERR_INVALID_FIELD_ARGS, "no such field");
		return NULL;
	}
	ok();
	return f;
}

static const char **names(const char *a, const char *b, unsigned *n)
{
	const char **v = track(calloc(2, sizeof(*v)));

	v[0] = a;
	v[1] = b;
	*n = 2;
	ok();
	return v;
}

EXPORT const char **PmuEventList(enum PmuEventType type, unsigned *n)
{
	if (type == TRACE_EVENT)
		return names("sched:sched_switch", "syscalls:sys_enter_openat", n);
	return names("cpu-clock", "task-clock", n);
}

EXPORT const char **PmuDeviceBdfList(enum PmuBdfType type, unsigned *n)
{
	(void)type;
	return names("7a:01.0", "7b:02.0", n);
}

/* every *Free of the real library releases any array it returned */
EXPORT void PmuTraceDataFree(struct PmuTraceData *d)
{
	release(d);
}

EXPORT int PmuDeviceOpen(struct PmuDeviceAttr *a, unsigned len)
{
	unsigned i;
	int n = 0;

	for (i = 0; i < len; i++)
		ADD("%d:%s:%s,", a[i].metric, a[i].bdf ? a[i].bdf : "-",
		    a[i].port ? a[i].port : "-");
	ok();
	return 4;
}

EXPORT int PmuGetDevMetric(struct PmuData *d, unsigned len, struct PmuDeviceAttr *a, unsigned alen,
			   struct PmuDeviceData **out)
{
	struct PmuDeviceData *v;

	if (!d || len != 3 || alen != 1)
		return fail(LIBPERF_ERR_INVALID_PMU_DATA, "unexpected arguments");
	v = track(calloc(3, sizeof(*v)));
	v[0] = (struct PmuDeviceData){
		.metric = a[0].metric, .count = 1.5, .mode = PMU_METRIC_CORE, .coreId = 1
	};
	v[1] = (struct PmuDeviceData){
		.metric = PMU_PCIE_RX_MRD_BW, .count = 2.5, .mode = PMU_METRIC_BDF, .bdf = "7a:01.0"
	};
	v[2] = (struct PmuDeviceData){ .metric = PMU_DDR_READ_BW,
				       .count = 3.5,
				       .mode = PMU_METRIC_CHANNEL,
				       .channelId = 2,
				       .ddrNumaId = 0,
				       .socketId = 1 };
	*out = v;
	ok();
	return 3;
}

EXPORT void DevDataFree(struct PmuDeviceData *d)
{
	release(d);
}

EXPORT int PmuGetNumaCore(unsigned node, unsigned **list)
{
	unsigned *v;

	if (node != 0)
		return fail(LIBPERF_ERR_KERNEL_NOT_SUPPORT, "no such numa node");
	v = track(calloc(2, sizeof(*v)));
	v[0] = 0;
	v[1] = 1;
	*list = v;
	ok();
	return 2;
}

EXPORT int PmuGetClusterCore(unsigned id, unsigned **list)
{
	(void)id;
	*list = NULL;
	return fail(LIBPERF_ERR_CLUSTER_ID_OVERSIZE, "no clusters on this machine");
}

EXPORT int64_t PmuGetCpuFreq(unsigned core)
{
	if (core != 0)
		return fail(LIBPERF_ERR_CPUFREQ_NOT_CONFIG, "no such core");
	ok();
	return 2500000000LL;
}
