/*
 * task.c - PmuOpen and the calls on its handle: validate the attributes (events, pids,
 * cpus, rates) with an error a user can act on, then hand the task to counting.c or
 * sampling.c. Also PmuCollect/PmuStop, PmuDataFree and PmuAppendData.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/types.h>

#include "core/core.h"
#include "kperf/pcerrc.h"
#include "pmu.h"
#include "unwind/unwind.h"
#include "count.h"

static void task_destroy(void *obj)
{
	struct kp_pmu *p = obj;
	int i;

	if (p->type == COUNTING)
		kp_counting_close(p);
	else
		kp_sampling_close(p);
	kp_pmu_cgroups_close(p);
	for (i = 0; i < p->nevents; i++)
		kp_event_free(&p->events[i]);
	free(p->events);
	free(p->group_ids);
	free(p->evt_attrs);
	free(p->pids);
	free(p->cpus);
	pthread_mutex_destroy(&p->lock);
	free(p);
}

static const struct kp_handle_ops task_ops = { .destroy = task_destroy };

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

static int online_cpus(int **cpus)
{
	int possible = kp_cpu_possible(), n = 0, c;
	int *v = calloc((size_t)possible, sizeof(*v));

	if (!v)
		return kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
	for (c = 0; c < possible; c++)
		if (kp_cpu_online(c))
			v[n++] = c;
	*cpus = v;
	return n;
}

static bool spe_event_filter_valid(enum SpeEventFilter f)
{
	return f == SPE_EVENT_NONE || f == SPE_EVENT_RETIRED || f == SPE_EVENT_L1DMISS ||
	       f == SPE_EVENT_TLB_WALK || f == SPE_EVENT_MISPREDICTED;
}

static bool spe_data_filter_valid(enum SpeFilter f)
{
	const unsigned long bits = TS_ENABLE | PA_ENABLE | PCT_ENABLE | JITTER | BRANCH_FILTER |
				   LOAD_FILTER | STORE_FILTER;

	return ((unsigned long)f & ~bits) == 0;
}

static int check_branch_filter(enum PmuTaskType type, unsigned long f)
{
	const unsigned long priv = KPERF_SAMPLE_BRANCH_USER | KPERF_SAMPLE_BRANCH_KERNEL |
				   KPERF_SAMPLE_BRANCH_HV;

	if (f == KPERF_NO_BRANCH_SAMPLE)
		return 0;
	if (type != SAMPLING)
		return kp_fail(LIBPERF_ERR_BRANCH_JUST_SUPPORT_SAMPLING, -EINVAL,
			       "branchSampleFilter is for SAMPLING only: branch records come with "
			       "samples");
	if (f & ~((unsigned long)KPERF_SAMPLE_BRANCH_TYPE_SAVE * 2 - 1))
		return kp_fail(LIBPERF_ERR_INVALID_BRANCH_SAMPLE_FILTER, -EINVAL,
			       "branchSampleFilter %#lx has bits that are no KPERF_SAMPLE_BRANCH_* "
			       "value",
			       f);
	if (f <= priv)
		return kp_fail(LIBPERF_ERR_INVALID_BRANCH_SAMPLE_FILTER, -EINVAL,
			       "branchSampleFilter %#lx only says whose branches (USER, KERNEL, "
			       "HV): add at least one branch type, e.g. KPERF_SAMPLE_BRANCH_ANY",
			       f);
	return 0;
}

/* libkperf's conditions for blockedSample: a SAMPLING task of processes, whose events it
 * chooses itself */
static int check_blocked(enum PmuTaskType type, const struct PmuAttr *a)
{
	if (type != SAMPLING)
		return kp_fail(LIBPERF_ERR_INVALID_BLOCKED_SAMPLE, -EINVAL,
			       "blockedSample is for SAMPLING only");
	if (a->evtList)
		return kp_fail(LIBPERF_ERR_NOT_SUPPORT_CONFIG_EVENT, -EINVAL,
			       "blockedSample chooses its events (on-CPU samples and "
			       "context-switches): leave evtList NULL");
	if (a->evtAttr)
		return kp_fail(LIBPERF_ERR_NOT_SUPPORT_GROUP_EVENT, -EINVAL,
			       "blockedSample does not take evtAttr (no event groups)");
	if (!a->pidList)
		return kp_fail(LIBPERF_ERR_NOT_SUPPORT_SYSTEM_SAMPLE, -EINVAL,
			       "blockedSample follows processes: give a pidList (it does not "
			       "sample the whole system)");
	return 0;
}

/* libkperf's conditions for BPF mode */
static int check_bpf_mode(enum PmuTaskType type, const struct PmuAttr *a)
{
	unsigned i, j;

	if (!a->enableBpf)
		return 0;
	if (type != COUNTING)
		return kp_fail(LIBPERF_ERR_INVALID_BPF_PARAM, -EINVAL,
			       "enableBpf is for COUNTING only");
	if ((!a->numPid || !a->pidList) && (!a->numCgroup || !a->cgroupNameList))
		return kp_fail(LIBPERF_ERR_INVALID_BPF_PARAM, -EINVAL,
			       "enableBpf counts processes or cgroups: give a pidList or a "
			       "cgroupNameList");
	if (a->evtAttr)
		return kp_fail(LIBPERF_ERR_INVALID_BPF_PARAM, -EINVAL,
			       "enableBpf does not take evtAttr (no event groups)");
	if (a->numEvt > KP_COUNT_MAX_EVENTS)
		return kp_fail(LIBPERF_ERR_INVALID_BPF_PARAM, -E2BIG,
			       "%u events: BPF mode counts at most %d at once", a->numEvt,
			       KP_COUNT_MAX_EVENTS);
	for (i = 0; a->evtList && i < a->numEvt; i++)
		for (j = 0; j < i; j++)
			if (a->evtList[i] && a->evtList[j] && !strcmp(a->evtList[i], a->evtList[j]))
				return kp_fail(LIBPERF_ERR_INVALID_BPF_PARAM, -EINVAL,
					       "enableBpf: event '%s' is listed twice",
					       a->evtList[i]);
	return 0;
}

/* libkperf's conditions for perThread: the existing threads of pidList, without inherit */
static int check_per_thread(enum PmuTaskType type, const struct PmuAttr *a)
{
	if (!a->perThread)
		return 0;
	if (type != SAMPLING)
		return kp_fail(LIBPERF_ERR_NOT_SUPPORT_PER_THREAD, -EINVAL,
			       "perThread is for SAMPLING only");
	if (!a->numPid)
		return kp_fail(LIBPERF_ERR_NOT_SUPPORT_PER_THREAD, -EINVAL,
			       "perThread samples the threads of pidList: give a pidList");
	if (a->numCpu)
		return kp_fail(LIBPERF_ERR_NOT_SUPPORT_PER_THREAD, -EINVAL,
			       "perThread follows threads on any CPU: leave cpuList empty");
	/* libkperf's header says so; a thread that execs is not followed by an event that
	 * has no inherit, so enabling on the exec would miss it */
	if (a->enableOnExec)
		return kp_fail(LIBPERF_ERR_NOT_SUPPORT_PER_THREAD, -EINVAL,
			       "perThread cannot be combined with enableOnExec");
	return 0;
}

/* The checks of libkperf's PmuOpen after the cpu and pid lists, in its order, so a call
 * with several faults gets the code libkperf gives it. */
static int check_attr(struct kp_pmu *p, enum PmuTaskType type, const struct PmuAttr *a)
{
	long max_rate = 100000;
	int err;

	if (a->numEvt && !a->evtList)
		return kp_fail(LIBPERF_ERR_INVALID_EVTLIST, -EINVAL,
			       "evtList is NULL but numEvt is %u", a->numEvt);
	if (a->numEvtAttr && !a->evtAttr)
		return kp_fail(LIBPERF_ERR_INVALID_EVTATTR, -EINVAL,
			       "evtAttr is NULL but numEvtAttr is %u", a->numEvtAttr);
	if (type != COUNTING && type != SAMPLING && type != SPE_SAMPLING)
		return kp_fail(LIBPERF_ERR_INVALID_TASK_TYPE, -EINVAL,
			       "unknown task type %d: use COUNTING (0) or SAMPLING (1)", (int)type);
	if (type != SPE_SAMPLING && (!a->evtList || !a->numEvt) &&
	    !(a->blockedSample && type == SAMPLING))
		return kp_fail(LIBPERF_ERR_INVALID_EVTLIST, -EINVAL,
			       "evtList is empty: name at least one event (e.g. \"cpu-clock\")");
	if (a->blockedSample) {
		err = check_blocked(type, a);
		if (err)
			return err;
	}
	if (a->cgroupNameList && a->pidList)
		return kp_fail(LIBPERF_ERR_INVALID_CGROUP_LIST, -EINVAL,
			       "give either pidList or cgroupNameList, not both");
	if (type == SPE_SAMPLING) {
		if (a->evtAttr)
			return kp_fail(
				LIBPERF_ERR_INVALID_GROUP_SPE, -EINVAL,
				"SPE_SAMPLING takes no evtAttr: SPE records are not grouped");
		if (a->numCgroup > 1)
			return kp_fail(LIBPERF_ERR_INVALID_CGROUP_LIST, -EINVAL,
				       "SPE_SAMPLING follows at most one cgroup (numCgroup is %u)",
				       a->numCgroup);
		if (a->minLatency > 4095)
			return kp_fail(
				LIBPERF_ERR_INVALID_MIN_LATENCY, -EINVAL,
				"minLatency %lu is out of range: SPE counts 0 to 4095 cycles",
				a->minLatency);
		if (!spe_event_filter_valid(a->evFilter))
			return kp_fail(LIBPERF_ERR_INVALID_EVT_FILTER, -EINVAL,
				       "evFilter %#x is not a SpeEventFilter value",
				       (unsigned)a->evFilter);
		if (!spe_data_filter_valid(a->dataFilter))
			return kp_fail(LIBPERF_ERR_INVALID_DATA_FILTER, -EINVAL,
				       "dataFilter %#x has bits that are no SpeFilter value",
				       (unsigned)a->dataFilter);
	}
	kp_read_long("/proc/sys/kernel/perf_event_max_sample_rate", &max_rate);
	if (type == SAMPLING && a->useFreq && a->freq > (unsigned long)max_rate)
		return kp_fail(LIBPERF_ERR_INVALID_SAMPLE_RATE, -EINVAL,
			       "sample frequency %u Hz is above the kernel's limit of %ld Hz "
			       "(kernel.perf_event_max_sample_rate)",
			       a->freq, max_rate);
	err = check_branch_filter(type, a->branchSampleFilter);
	if (err)
		return err;
	if (a->numCgroup && !a->cgroupNameList)
		return kp_fail(LIBPERF_ERR_INVALID_CGROUP_LIST, -EINVAL,
			       "cgroupNameList is NULL but numCgroup is %u", a->numCgroup);
	err = kp_pmu_cgroups_open(p, a);
	if (err)
		return err;
	err = check_bpf_mode(type, a);
	if (!err)
		err = kp_hwmetric_check(type, a);
	if (err)
		return err;
	if (a->enableOnExec && !a->numPid)
		return kp_fail(LIBPERF_ERR_NOT_SUPPORT_EXEC_ON, -EINVAL,
			       "enableOnExec counts from the exec of the processes of pidList: "
			       "give them (pidList)");
	return check_per_thread(type, a);
}

/* Branch records need a PMU that records them (Intel LBR, Arm BRBE): ask the kernel for each
 * event. The kernel's refusal is libkperf's, EOPNOTSUPP as LIBPERF_ERR_INVALID_EVENT; where
 * the hardware has them, kperf-bpf does not collect them yet. */
static int check_branch_hardware(const struct kp_pmu *p)
{
	int i, fd;

	for (i = 0; i < p->nevents; i++) {
		struct perf_event_attr attr = p->events[i].attr;

		if (p->events[i].kind == KP_EV_TRACEPOINT)
			continue;
		attr.disabled = 1;
		attr.sample_period = 4000;
		attr.sample_type |= PERF_SAMPLE_BRANCH_STACK;
		attr.branch_sample_type = p->attr.branchSampleFilter;
		fd = kp_perf_event_open(&attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
		if (fd < 0) {
			int err = -errno;

			return kp_fail(
				kp_perf_errno_code(err), err,
				"event '%s' cannot record branches (branchSampleFilter %#lx): "
				"%s. Branch records need a PMU that has them (Intel LBR, Arm "
				"BRBE); software events and VMs have none",
				p->events[i].name, p->attr.branchSampleFilter, strerror(-err));
		}
		close(fd);
	}
	return kp_fail(KPERF_ERR_NOT_SUPPORTED, -EOPNOTSUPP,
		       "this PMU records branches, but kperf-bpf does not collect branch records "
		       "(branchSampleFilter) yet");
}

static int parse_events(struct kp_pmu *p, const struct PmuAttr *a)
{
	unsigned i;
	int err;

	if (a->numEvtAttr > a->numEvt)
		return kp_fail(LIBPERF_ERR_INVALID_EVTATTR, -EINVAL,
			       "numEvtAttr (%u) is larger than numEvt (%u)", a->numEvtAttr,
			       a->numEvt);
	p->events = calloc(a->numEvt, sizeof(*p->events));
	p->group_ids = calloc(a->numEvt, sizeof(*p->group_ids));
	p->evt_attrs = calloc(a->numEvt, sizeof(*p->evt_attrs));
	if (!p->events || !p->group_ids || !p->evt_attrs)
		return kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
	for (i = 0; i < a->numEvt; i++) {
		if (!a->evtList[i])
			return kp_fail(LIBPERF_ERR_INVALID_EVTLIST, -EINVAL, "evtList[%u] is NULL",
				       i);
		err = kp_event_parse(a->evtList[i], true, &p->events[i]);
		if (err)
			return err;
		p->nevents++;
		if (i < a->numEvtAttr)
			p->evt_attrs[i] = a->evtAttr[i];
		else
			p->evt_attrs[i].groupId = -1;
		p->group_ids[i] = p->evt_attrs[i].groupId;
		if (p->group_ids[i] < -1)
			return kp_fail(LIBPERF_ERR_INVALID_EVTATTR, -EINVAL,
				       "evtAttr[%u].groupId is %d: use -1 (no group) or an id >= 0",
				       i, p->group_ids[i]);
	}
	return 0;
}

/* blockedSample: the on-CPU event whose unit the blocked time shares (blocked.c says why
 * cpu-clock), none for an off-CPU profile */
static int blocked_events(struct kp_pmu *p)
{
	struct PmuAttr a = { .evtList = (char *[]){ "cpu-clock" }, .numEvt = 1 };

	return p->opts.offCpuOnly ? 0 : parse_events(p, &a);
}

static int check_targets(struct kp_pmu *p, const struct PmuAttr *a)
{
	unsigned i, j;
	int v;

	/* libkperf checks the cpus first, then the pids */
	v = kp_check_cpus(a->cpuList, a->numCpu);
	if (v < 0)
		return v;
	if (v == 0 && a->numCpu) {
		p->cpus = malloc(sizeof(int) * a->numCpu);
		if (!p->cpus)
			return kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
		memcpy(p->cpus, a->cpuList, sizeof(int) * a->numCpu);
		p->ncpus = (int)a->numCpu;
	} else {
		/* no cpuList, or one with -1 (any cpu): no restriction */
		p->attr.numCpu = 0;
		p->ncpus = online_cpus(&p->cpus);
		if (p->ncpus < 0)
			return p->ncpus;
	}
	if (a->numPid && !a->pidList)
		return kp_fail(LIBPERF_ERR_INVALID_PIDLIST, -EINVAL,
			       "pidList is NULL but numPid is %u", a->numPid);
	if (a->numPid) {
		p->pids = calloc(a->numPid, sizeof(*p->pids));
		if (!p->pids)
			return kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
		for (i = 0; i < a->numPid; i++) {
			/* 0 is the calling process, as for perf_event_open and libkperf */
			v = a->pidList[i] ? kp_pid_tgid(a->pidList[i]) : (int)getpid();
			if (v < 0)
				return v;
			p->pids[i] = v;
		}
		qsort(p->pids, a->numPid, sizeof(int), cmp_int);
		for (i = 0, j = 0; i < a->numPid; i++)
			if (!j || p->pids[j - 1] != p->pids[i])
				p->pids[j++] = p->pids[i];
		p->npids = (int)j;
	}
	p->system_wide = !p->npids;
	return 0;
}

KP_EXPORT int PmuOpen(enum PmuTaskType type, struct PmuAttr *attr)
{
	return KperfOpen(type, attr, NULL);
}

KP_EXPORT int KperfOpen(enum PmuTaskType type, struct PmuAttr *attr,
			const struct KperfPmuOpts *opts)
{
	struct kp_pmu *p = NULL;
	int err, pd;

	kp_clear();
	if (!attr)
		return kp_fail(LIBPERF_ERR_NULL_POINTER, -EINVAL, "attr is NULL"), -1;
	p = calloc(1, sizeof(*p));
	if (!p)
		return kp_public_fail(-ENOMEM);
	pthread_mutex_init(&p->lock, NULL);
	p->type = type;
	p->attr = *attr;
	err = kp_opts_copy(&p->opts, sizeof(p->opts), opts, opts ? opts->sz : 0, "KperfPmuOpts");
	/* libkperf checks user access before anything else */
	if (!err)
		err = kp_uaccess_check(type, attr);
	if (!err && (p->opts.offCpuOnly || p->opts.blockedKernelStack) && !attr->blockedSample)
		err = kp_fail(KPERF_ERR_INVALID_ATTR, -EINVAL,
			      "KperfPmuOpts.%s is an option of blocked sampling: set "
			      "PmuAttr.blockedSample too",
			      p->opts.offCpuOnly ? "offCpuOnly" : "blockedKernelStack");
	if (!err)
		err = check_targets(p, attr);
	if (!err)
		err = check_attr(p, type, attr);
	if (!err && type == SPE_SAMPLING)
		err = kp_fail(LIBPERF_ERR_SPE_UNAVAIL, -EOPNOTSUPP,
			      "SPE sampling needs the Arm Statistical Profiling Extension "
			      "(arm_spe PMU); this machine has none");
	if (!err)
		err = attr->blockedSample ? blocked_events(p) : parse_events(p, attr);
	if (!err && attr->branchSampleFilter)
		err = check_branch_hardware(p);
	if (!err)
		err = kp_check_perf_privileges(p->system_wide);
	if (!err)
		err = type == COUNTING ? kp_counting_open(p) : kp_sampling_open(p);
	if (err)
		goto fail;
	/* the copy must not keep pointers into the caller's arrays */
	p->attr.evtList = NULL;
	p->attr.pidList = NULL;
	p->attr.cpuList = NULL;
	p->attr.evtAttr = NULL;
	p->attr.cgroupNameList = NULL;
	pd = kp_handle_add(KP_HANDLE_PMU, p, &task_ops);
	if (pd < 0) {
		err = pd;
		goto fail;
	}
	return pd;
fail:
	task_destroy(p);
	return kp_public_fail(err);
}

static struct kp_pmu *get(int pd)
{
	struct kp_pmu *p = kp_handle_get(pd, KP_HANDLE_PMU);

	if (p)
		pthread_mutex_lock(&p->lock);
	return p;
}

static void put(struct kp_pmu *p)
{
	pthread_mutex_unlock(&p->lock);
	kp_handle_put(p);
}

static int enable_locked(struct kp_pmu *p)
{
	int err = 0;

	if (p->enabled)
		return 0;
	err = p->type == COUNTING ? kp_counting_enable(p) : kp_sampling_enable(p);
	if (!err)
		p->enabled = true;
	return err;
}

static int disable_locked(struct kp_pmu *p)
{
	int err = 0;

	if (!p->enabled)
		return 0;
	err = p->type == COUNTING ? kp_counting_disable(p) : kp_sampling_disable(p);
	p->enabled = false;
	return err;
}

KP_EXPORT int PmuEnable(int pd)
{
	struct kp_pmu *p;
	int err;

	kp_clear();
	p = get(pd);
	if (!p)
		return -1;
	err = enable_locked(p);
	put(p);
	return err ? kp_public_fail(err) : 0;
}

KP_EXPORT int PmuDisable(int pd)
{
	struct kp_pmu *p;
	int err;

	kp_clear();
	p = get(pd);
	if (!p)
		return -1;
	err = disable_locked(p);
	put(p);
	return err ? kp_public_fail(err) : 0;
}

KP_EXPORT int KperfPmuGetUnwindStats(int pd, struct KperfUnwindStats *stats)
{
	struct kp_uw_load_stats u = { 0 };
	const uint64_t *c = u.counters;
	struct kp_pmu *p;

	kp_clear();
	if (!stats)
		return kp_public_fail(kp_fail(LIBPERF_ERR_NULL_POINTER, -EINVAL, "stats is NULL"));
	p = get(pd);
	if (!p)
		return -1;
	if (p->type != COUNTING) {
		kp_sample_unwind_stats(p, &u);
		kp_blocked_unwind_stats(p, &u);
	}
	put(p);
	memset(stats, 0, sizeof(*stats));
	stats->stacks = c[KP_UW_CNT_STACKS];
	stats->framesPlt = c[KP_UW_CNT_PLT_FRAMES];
	stats->framesDebugFrame = c[KP_UW_CNT_DEBUG_FRAMES];
	stats->framesEhFrame = c[KP_UW_CNT_FRAMES] - stats->framesPlt - stats->framesDebugFrame;
	stats->framesFp = c[KP_UW_CNT_FP_FRAMES];
	stats->framesSignal = c[KP_UW_CNT_SIGNAL_FRAMES];
	stats->stacksNotLoaded = c[KP_UW_CNT_NO_PROC];
	stats->stacksUnknownMap = c[KP_UW_CNT_UNKNOWN_MAP];
	stats->stacksNoRegs = c[KP_UW_CNT_NO_REGS];
	stats->stacksTruncated = c[KP_UW_CNT_TRUNCATED];
	stats->tables = u.tables;
	stats->rows = u.rows;
	stats->rowBytes = u.rows * sizeof(struct kp_uw_row);
	stats->processes = u.pids;
	return 0;
}

static bool any_alive(const struct kp_pmu *p)
{
	int i;

	for (i = 0; i < p->npids; i++)
		if (kp_pid_alive(p->pids[i]))
			return true;
	return false;
}

KP_EXPORT int PmuCollect(int pd, int milliseconds, unsigned interval)
{
	uint64_t start, end = 0, now;
	struct kp_pmu *p;
	int err;

	kp_clear();
	/* libkperf's order: the handle, then the times */
	p = get(pd);
	if (!p)
		return -1;
	if (milliseconds < -1) {
		put(p);
		return kp_fail(LIBPERF_ERR_INVALID_TIME, -EINVAL,
			       "milliseconds is %d: give a time, or -1 to collect until PmuStop or "
			       "until the processes of pidList exit",
			       milliseconds),
		       -1;
	}
	if (interval < 100) {
		put(p);
		return kp_fail(LIBPERF_ERR_INVALID_TIME, -EINVAL,
			       "interval is %u ms: it must be at least 100", interval),
		       -1;
	}
	atomic_store(&p->stop, false);
	err = enable_locked(p);
	start = kp_now_ns();
	if (milliseconds >= 0)
		end = start + (uint64_t)milliseconds * 1000000ULL;
	/* sleep without the lock held, so PmuStop and PmuRead from other threads proceed */
	while (!err) {
		uint64_t step = (uint64_t)interval * 1000000ULL;
		struct timespec ts;

		now = kp_now_ns();
		if (milliseconds >= 0 && now >= end)
			break;
		if (milliseconds >= 0 && end - now < step)
			step = end - now;
		if (step > 100000000ULL)
			step = 100000000ULL; /* check PmuStop and the processes every 100 ms */
		pthread_mutex_unlock(&p->lock);
		ts.tv_sec = (time_t)(step / 1000000000ULL);
		ts.tv_nsec = (long)(step % 1000000000ULL);
		nanosleep(&ts, NULL);
		pthread_mutex_lock(&p->lock);
		if (atomic_load(&p->stop))
			break;
		if (p->type == SAMPLING)
			err = kp_sampling_drain(p);
		if (milliseconds == -1 && p->npids && !any_alive(p))
			break;
	}
	if (!err)
		err = disable_locked(p);
	else
		disable_locked(p);
	put(p);
	return err ? kp_public_fail(err) : 0;
}

KP_EXPORT void PmuStop(int pd)
{
	struct kp_pmu *p;

	kp_clear();
	p = kp_handle_get(pd, KP_HANDLE_PMU);
	if (!p)
		return;
	atomic_store(&p->stop, true);
	kp_handle_put(p);
}

KP_EXPORT int PmuRead(int pd, struct PmuData **out)
{
	struct kp_pmu *p;
	int n;

	kp_clear();
	if (!out)
		return kp_fail(LIBPERF_ERR_NULL_POINTER, -EINVAL, "the output pointer is NULL"), -1;
	*out = NULL;
	p = get(pd);
	if (!p)
		return -1;
	n = p->type == COUNTING ? kp_counting_read(p, out) : kp_sampling_read(p, out);
	put(p);
	return n < 0 ? kp_public_fail(n) : n;
}

KP_EXPORT void PmuClose(int pd)
{
	kp_clear();
	kp_handle_close(pd, KP_HANDLE_PMU);
}

KP_EXPORT void PmuDataFree(struct PmuData *data)
{
	kp_registry_release(data);
}

KP_EXPORT int PmuAppendData(struct PmuData *from, struct PmuData **to)
{
	struct PmuData *merged = NULL;
	struct kp_data_builder *b;
	long nfrom, nto = 0, i;
	int n, err = 0;

	kp_clear();
	if (!to)
		return kp_fail(LIBPERF_ERR_NULL_POINTER, -EINVAL, "toData is NULL"), -1;
	nfrom = from ? kp_data_len(from) : 0;
	if (nfrom < 0)
		return kp_fail(LIBPERF_ERR_INVALID_PMU_DATA, -EINVAL,
			       "fromData was not returned by PmuRead (or was freed)"),
		       -1;
	if (*to) {
		nto = kp_data_len(*to);
		if (nto < 0)
			return kp_fail(LIBPERF_ERR_INVALID_PMU_DATA, -EINVAL,
				       "*toData was not returned by PmuRead (or was freed)"),
			       -1;
	}
	b = kp_data_builder_new();
	if (!b)
		return kp_public_fail(-ENOMEM);
	for (i = 0; i < nto && !err; i++)
		err = kp_data_builder_add_from(b, *to, (size_t)i);
	for (i = 0; i < nfrom && !err; i++)
		err = kp_data_builder_add_from(b, from, (size_t)i);
	if (err) {
		kp_data_builder_free(b);
		return kp_public_fail(err);
	}
	n = kp_data_builder_finish(b, &merged);
	if (n < 0)
		return kp_public_fail(n); /* *to is left as it was */
	if (*to)
		PmuDataFree(*to);
	*to = merged;
	return n;
}

/* ---- for collect.c ---- */

struct kp_pmu *kp_pmu_get(int pd)
{
	return get(pd);
}

void kp_pmu_put(struct kp_pmu *p)
{
	put(p);
}

int kp_pmu_enable_locked(struct kp_pmu *p)
{
	return enable_locked(p);
}

int kp_pmu_disable_locked(struct kp_pmu *p)
{
	return disable_locked(p);
}

bool kp_pmu_any_alive(const struct kp_pmu *p)
{
	return any_alive(p);
}
