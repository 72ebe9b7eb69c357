/*
 * collect.c - KperfTimeline* (include/kperf/timeline.h): the sources of one timeline and the
 * thread that drains them into the store.
 *
 * Markers and syscalls come from the activity module (one collection, both kinds); CPU
 * samples from a sampling task of pmu.h (cpu-clock, per-sample records with timestamps and
 * stacks), through its public interface, so that the stacks are whatever the sampling path
 * unwinds; slices off the cpu from the off-CPU module in slices mode (one record per slice,
 * filtered in the kernel to the processes and by their minimum length), their user stacks
 * resolved here while the process lives. The thread reads both every 50 ms (at once again after a large read) while the
 * timeline is enabled; a write drains them first. What that thread does itself (its reads,
 * its sleeps, its samples) is left out: it is on the timeline of its own process when a
 * program follows itself (kperf.profiler, kperf.timeline).
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/pidns.h"
#include "export/export.h"
#include "pidns_cfg.h" /* bpf/: KP_PID_OUTSIDE */
#include "sym/sym.h"
#include "syscall.h" /* bpf/: struct kp_sys_event */
#include "timeline.h"

#define TICK_MS 50
#define DEFAULT_MIN_SLICE_NS 50000 /* slices off the cpu: 50 µs */
#define SLICE_FRAMES 127
#define DEFAULT_BIG_BYTES (1ULL << 20) /* allocations shown as instant events: 1 MiB */
#define DEFAULT_FREQ 999
#define DEFAULT_MAX_EVENTS (2U << 20)

struct kp_timeline {
	pthread_mutex_t lock; /* the store and the sources */
	struct kp_tl_store store;
	struct kp_activity *act; /* markers and syscalls, NULL when neither */
	struct kp_act_direct direct; /* its records' way into the store */
	int pmu_pd; /* CPU samples, -1 when none */
	struct kp_offcpu *off; /* slices off the cpu, NULL when not asked for */
	struct kp_tl_mem *mem; /* heap in use and large allocations, NULL when not asked for */
	char *command;
	pthread_t thread;
	bool thread_on;
	atomic_bool stop;
	/* the drain thread: a timeline of its own process leaves its reading out */
	atomic_int drain_tid;
	bool enabled;
	size_t busy_records; /* a read this large means the sources are busy: read again */
	int err; /* the first failure of the thread (-ENOMEM), reported by the next call */
};

/* the activity module's direct consumers (called by kp_act_consume with t->lock held):
 * records straight into the store, the drain thread's own left out */
static int on_sys(void *ctx, const struct kp_sys_event *e)
{
	struct kp_timeline *t = ctx;
	int err, self = atomic_load(&t->drain_tid);
	char comm[sizeof(e->comm) + 1];
	struct kp_tl_syscall c = {
		.start = e->start_ns,
		.dur = e->dur_ns,
		.ret = e->ret,
		.pid = (int)e->tgid,
		.tid = (int)e->tid,
		.nr = (int)e->nr,
		.cpu = (int)e->cpu,
		.comm = comm,
	};

	if (t->err || (self && (int)e->tid == self))
		return 0;
	/* a process the caller's PID namespace does not contain: pid -1 "[outside namespace]" */
	if (e->tgid == KP_PID_OUTSIDE) {
		c.comm = KP_PIDNS_OUTSIDE_COMM;
	} else { /* the kernel's copy is NUL-terminated within its size: said again */
		memcpy(comm, e->comm, sizeof(e->comm));
		comm[sizeof(e->comm)] = '\0';
	}
	err = kp_tl_add_syscall(&t->store, &c);
	if (err && !t->err)
		t->err = err;
	return 0;
}

static int on_mstx(void *ctx, const struct kp_mstx_event *e)
{
	struct kp_timeline *t = ctx;
	struct KperfActivityRecord r = { 0 };
	char comm[sizeof(e->comm) + 1], domain[sizeof(e->domain) + 1], msg[sizeof(e->msg) + 1];
	int err, self = atomic_load(&t->drain_tid);

	if (t->err || (self && (int)e->tid == self))
		return 0;
	r.kind = KPERF_ACTIVITY_KIND_MARKER;
	r.flag = e->kind == KP_MSTX_RANGE_START ? KPERF_ACTIVITY_FLAG_MARKER_START :
		 e->kind == KP_MSTX_RANGE_END	? KPERF_ACTIVITY_FLAG_MARKER_END :
						  KPERF_ACTIVITY_FLAG_MARKER_INSTANTANEOUS;
	r.start = r.end = e->ts;
	r.id = e->id;
	r.pid = (int)e->tgid;
	r.tid = (int)e->tid;
	r.cpu = (int)e->cpu;
	r.nr = -1;
	/* the kernel's copies are NUL-terminated within their size; said again here */
	snprintf(comm, sizeof(comm), "%.*s", (int)sizeof(e->comm), e->comm);
	snprintf(domain, sizeof(domain), "%.*s", (int)sizeof(e->domain), e->domain);
	snprintf(msg, sizeof(msg), "%.*s", (int)sizeof(e->msg), e->msg);
	r.comm = e->tgid == KP_PID_OUTSIDE ? KP_PIDNS_OUTSIDE_COMM : comm;
	r.domain = domain;
	r.name = msg;
	err = kp_tl_add_activity(&t->store, &r);
	if (err && !t->err)
		t->err = err;
	return 0;
}

/* with t->lock held: move what the sources have into the store; the number of records
 * taken */
static int drain_locked(struct kp_timeline *t)
{
	struct PmuData *d = NULL;
	int n = 0, i, k, err = 0, self = atomic_load(&t->drain_tid);

	if (t->act) {
		n = kp_act_consume(t->act); /* to on_sys and on_mstx */
		if (n < 0)
			n = 0;
		err = t->err;
	}
	if (t->off && !err) {
		k = kp_offcpu_read_slices(t->off); /* to add_slice */
		if (k < 0) {
			kp_clear_error();
			k = 0;
		}
		n += k;
		err = t->err;
	}
	if (t->mem && !err) {
		k = kp_tl_mem_drain(t->mem);
		if (k < 0)
			err = k;
		else
			n += k;
	}
	if (t->pmu_pd >= 0 && !err) {
		k = PmuRead(t->pmu_pd, &d);
		for (i = 0; i < k && !err; i++)
			if (!self || d[i].tid != self)
				err = kp_tl_add_sample(&t->store, &d[i]);
		PmuDataFree(d);
	}
	if (err && !t->err)
		t->err = err;
	return n < 0 ? 0 : n;
}

/* kp_offcpu_slice_fn (called with t->lock held, by a drain or the disable): into the store,
 * with its user stack resolved */
static int add_slice(void *ctx, const struct kp_offcpu_slice *sl)
{
	struct kp_timeline *t = ctx;
	uint64_t ips[SLICE_FRAMES];
	struct Stack *stack = NULL;
	unsigned n;
	int err, self = atomic_load(&t->drain_tid);

	if (t->err || (self && (int)sl->tid == self))
		return 0;
	n = sl->ustack ? kp_offcpu_stack(t->off, sl->ustack, false, ips, SLICE_FRAMES) : 0;
	if (n && kp_sym_resolve_stack((pid_t)sl->tgid, ips, n, 0, &stack)) {
		kp_clear_error(); /* gone: the slice goes without its stack */
		stack = NULL;
	}
	err = kp_tl_add_offcpu(&t->store, sl, stack);
	if (err && !t->err)
		t->err = err;
	return 0;
}

static void *drain_main(void *arg)
{
	struct kp_timeline *t = arg;
	int n;

	atomic_store(&t->drain_tid, (int)gettid());
	while (!atomic_load(&t->stop)) {
		pthread_mutex_lock(&t->lock);
		n = drain_locked(t);
		pthread_mutex_unlock(&t->lock);
		/* A ring buffer is readable as soon as it holds one record, so waiting for it
		 * would wake this thread for every few records and have it compete for the CPU
		 * with what it traces. It sleeps a tick instead, unless the last read was large
		 * (a quarter of a ring buffer or more): then it keeps up. */
		if ((size_t)n >= t->busy_records)
			continue;
		if (t->mem) /* woken at once for a child that waits for its probes */
			kp_tl_mem_wait(t->mem, TICK_MS);
		else
			usleep(TICK_MS * 1000);
	}
	return NULL;
}

static void destroy(void *obj)
{
	struct kp_timeline *t = obj;

	if (t->thread_on) {
		atomic_store(&t->stop, true);
		pthread_join(t->thread, NULL);
	}
	kp_act_close(t->act);
	kp_offcpu_close(t->off);
	kp_tl_mem_close(t->mem);
	if (t->pmu_pd >= 0)
		PmuClose(t->pmu_pd);
	kp_tl_store_free(&t->store);
	free(t->command);
	pthread_mutex_destroy(&t->lock);
	free(t);
}

static const struct kp_handle_ops timeline_ops = { .destroy = destroy };

static int check_opts(const struct KperfTimelineOpts *o)
{
	if (o->allPids && (o->numPid || o->fromExec || o->memory))
		return kp_fail(o->memory ? KPERF_ERR_INVALID_ARG : LIBPERF_ERR_INVALID_PIDLIST,
			       -EINVAL, "allPids takes every process: %s",
			       o->numPid   ? "it takes no pidList" :
			       o->fromExec ? "it takes no fromExec" :
					     "memory follows given processes only (the allocator "
					     "probes of every process would stop them all)");
	if (!o->allPids && (!o->numPid || !o->pidList))
		return kp_fail(LIBPERF_ERR_INVALID_PIDLIST, -EINVAL,
			       "a timeline needs the processes to follow (or allPids): pidList is "
			       "%s and numPid %u",
			       o->pidList ? "set" : "NULL", o->numPid);
	if (o->noSyscalls && o->noSamples && o->noMarkers && !o->offCpu && !o->memory)
		return kp_fail(KPERF_ERR_INVALID_ARG, -EINVAL,
			       "noSyscalls, noSamples and noMarkers leave nothing to put on the "
			       "timeline");
	if (o->memBigBytes && !o->memory)
		return kp_fail(KPERF_ERR_INVALID_ARG, -EINVAL,
			       "memBigBytes %llu without memory: there are no allocations to show",
			       (unsigned long long)o->memBigBytes);
	if (o->offCpuMinUs && !o->offCpu)
		return kp_fail(KPERF_ERR_INVALID_ARG, -EINVAL,
			       "offCpuMinUs %u without offCpu: there are no off-CPU slices to "
			       "filter",
			       o->offCpuMinUs);
	if (o->freq > 100000)
		return kp_fail(KPERF_ERR_INVALID_ARG, -EINVAL,
			       "freq %u is more than 100000 samples a second", o->freq);
	return 0;
}

static int open_samples(struct kp_timeline *t, const int *tgids, int n,
			const struct KperfTimelineOpts *o)
{
	char *evts[] = { "cpu-clock" };
	struct PmuAttr attr = { 0 };

	attr.evtList = evts;
	attr.numEvt = 1;
	attr.useFreq = 1;
	attr.freq = o->freq ? o->freq : DEFAULT_FREQ;
	attr.callStack = 1;
	attr.symbolMode = RESOLVE_ELF;
	attr.pidList = (int *)tgids;
	attr.numPid = (unsigned)n;
	attr.enableOnExec = o->fromExec;
	t->pmu_pd =
		KperfOpen(SAMPLING, &attr, &KPERF_OPTS(KperfPmuOpts, .ringBufferKb = o->bufferKb));
	return t->pmu_pd < 0 ? -EINVAL : 0;
}

static int timeline_open(const struct KperfTimelineOpts *o, struct kp_timeline **out)
{
	struct kp_timeline *t;
	enum KperfActivityKind kinds[2];
	unsigned nkinds = 0;
	int *tgids = NULL, n, err;

	*out = NULL;
	err = check_opts(o);
	if (err)
		return err;
	t = calloc(1, sizeof(*t));
	if (!t)
		return kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
	pthread_mutex_init(&t->lock, NULL);
	t->pmu_pd = -1;
	kp_tl_store_init(&t->store, o->maxEvents ? o->maxEvents : DEFAULT_MAX_EVENTS);
	if (o->command && !(t->command = strdup(o->command))) {
		err = kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
		goto fail;
	}
	n = o->allPids ? 0 : kp_act_targets(o->pidList, o->numPid, &tgids);
	if (n < 0) {
		err = n;
		goto fail;
	}
	if (!o->noMarkers)
		kinds[nkinds++] = KPERF_ACTIVITY_KIND_MARKER;
	if (!o->noSyscalls)
		kinds[nkinds++] = KPERF_ACTIVITY_KIND_KERNEL;
	/* a quarter of a ring buffer of the smallest records (syscalls) */
	t->busy_records = ((size_t)(o->bufferKb ? o->bufferKb : 8192) << 10) / 4 / 72;
	if (nkinds) {
		struct KperfActivityOpts ao = {
			.sz = sizeof(ao),
			.pidList = tgids,
			.numPid = (unsigned)n,
			.fromExec = o->fromExec,
			.command = o->command,
			.bufferKb = o->bufferKb,
			.probeFiles = o->probeFiles,
			.numProbeFiles = o->numProbeFiles,
			.allPids = o->allPids,
		};

		err = kp_act_open(kinds, nkinds, &ao, &t->act);
		if (err)
			goto fail;
		t->direct =
			(struct kp_act_direct){ .on_sys = on_sys, .on_mstx = on_mstx, .ctx = t };
		kp_act_set_direct(t->act, &t->direct);
	}
	if (o->offCpu) {
		struct kp_offcpu_opts oo = {
			.pids = tgids,
			.npids = n,
			.from_exec = o->fromExec,
			.user_stack = true,
			.on_slice = add_slice,
			.slice_ctx = t,
			.min_slice_ns = o->offCpuMinUs ? (uint64_t)o->offCpuMinUs * 1000 :
							 DEFAULT_MIN_SLICE_NS,
			.ring_kb = o->bufferKb,
		};

		err = kp_offcpu_open(&oo, &t->off);
		if (err)
			goto fail;
	}
	if (o->memory) {
		struct kp_tl_mem_opts mo = {
			.pids = tgids,
			.npids = n,
			.from_exec = o->fromExec,
			.command = o->command,
			.big = o->memBigBytes ? o->memBigBytes : DEFAULT_BIG_BYTES,
			.ring_kb = o->bufferKb,
			.store = &t->store,
		};

		err = kp_tl_mem_open(&mo, &t->mem);
		if (err)
			goto fail;
	}
	if (!o->noSamples) {
		err = open_samples(t, tgids, n, o);
		if (err)
			goto fail; /* PmuOpen said why */
	}
	free(tgids);
	*out = t;
	return 0;
fail:
	free(tgids);
	destroy(t);
	return err;
}

int KperfTimelineOpen(const struct KperfTimelineOpts *opts)
{
	struct KperfTimelineOpts o;
	struct kp_timeline *t;
	int err, td, warn = 0;
	char warn_msg[512] = "";

	kp_clear();
	err = kp_opts_copy(&o, sizeof(o), opts, opts ? opts->sz : 0, "KperfTimelineOpts");
	if (!err)
		err = timeline_open(&o, &t);
	if (err)
		return kp_public_fail(err);
	/* PmuOpen (called after the markers) clears warnings: keep the markers' */
	if (GetWarn()) {
		warn = GetWarn();
		snprintf(warn_msg, sizeof(warn_msg), "%s", GetWarnMsg());
	}
	td = kp_handle_add(KP_HANDLE_TIMELINE, t, &timeline_ops);
	if (td < 0) {
		destroy(t);
		return kp_public_fail(td);
	}
	if (warn)
		kp_warn(warn, "%s", warn_msg);
	return td;
}

static int set_enabled(struct kp_timeline *t, bool on)
{
	int err = 0;

	pthread_mutex_lock(&t->lock);
	if (on == t->enabled)
		goto out;
	if (on && t->pmu_pd >= 0 && PmuEnable(t->pmu_pd)) {
		err = -EINVAL; /* PmuEnable said why */
		goto out;
	}
	if (t->act)
		err = kp_act_enable(t->act, on);
	if (!err && t->off)
		err = on ? kp_offcpu_enable(t->off) : kp_offcpu_disable(t->off, NULL, NULL);
	if (!err && t->mem) {
		err = kp_tl_mem_enable(t->mem, on);
		if (err && on && t->off) /* the memory source's probes could not be placed */
			kp_offcpu_disable(t->off, NULL, NULL);
	}
	if (err) {
		if (on && t->pmu_pd >= 0)
			PmuDisable(t->pmu_pd);
		if (on && t->act)
			kp_act_enable(t->act, false);
		goto out;
	}
	if (!on && t->pmu_pd >= 0)
		PmuDisable(t->pmu_pd);
	t->enabled = on;
	if (on && !t->thread_on) {
		if (pthread_create(&t->thread, NULL, drain_main, t)) {
			err = kp_fail(UNKNOWN_ERROR, -EAGAIN, "cannot start the timeline's thread");
			goto out;
		}
		t->thread_on = true;
	}
out:
	pthread_mutex_unlock(&t->lock);
	return err;
}

static int enable(int td, bool on)
{
	struct kp_timeline *t;
	int err;

	kp_clear();
	t = kp_handle_get(td, KP_HANDLE_TIMELINE);
	if (!t)
		return -1;
	err = set_enabled(t, on);
	kp_handle_put(t);
	return err ? kp_public_fail(err) : SUCCESS;
}

int KperfTimelineEnable(int td)
{
	return enable(td, true);
}

int KperfTimelineDisable(int td)
{
	return enable(td, false);
}

static void fill_stats(struct kp_timeline *t, struct KperfTimelineStats *st)
{
	struct KperfActivityStats as = { 0 };
	size_t i;

	memset(st, 0, sizeof(*st));
	if (t->act)
		kp_act_stats(t->act, &as);
	st->syscalls = t->store.n_sys;
	st->samples = t->store.n_samples;
	st->marks = t->store.n_marks;
	st->ranges = t->store.n_ranges;
	for (i = 0; i < t->store.open.cap; i++)
		st->openRanges += t->store.open.slots[i].key && t->store.open.slots[i].val;
	st->dropped = as.dropped;
	st->notKept = t->store.not_kept;
	st->offCpuSlices = t->store.n_offcpu;
	if (t->off) {
		struct kp_offcpu_stats os;

		kp_offcpu_get_stats(t->off, &os);
		st->offCpuShort = os.slices_short;
		st->offCpuLost = os.slices_lost + os.threads_full;
		st->dropped += st->offCpuLost;
	}
	st->heapChanges = t->store.n_counters;
	st->largeAllocs = t->store.n_allocs;
	if (t->mem) {
		st->memLost = kp_tl_mem_lost(t->mem);
		st->dropped += st->memLost;
	}
}

int KperfTimelineWrite(int td, const char *path)
{
	struct KperfTimelineStats st;
	struct kp_timeline *t;
	struct kp_out *out = NULL;
	struct kp_tl_meta m = { 0 };
	int err;

	kp_clear();
	t = kp_handle_get(td, KP_HANDLE_TIMELINE);
	if (!t)
		return -1;
	err = kp_out_open(path, &out);
	if (err)
		goto done;
	pthread_mutex_lock(&t->lock);
	drain_locked(t);
	err = t->err;
	if (err) {
		err = kp_fail(COMMON_ERR_NOMEM, err, "the timeline ran out of memory");
	} else {
		fill_stats(t, &st);
		m.dropped = st.dropped;
		m.command = t->command;
		m.off_cpu = t->off != NULL;
		m.off_short = st.offCpuShort;
		m.off_lost = st.offCpuLost;
		m.memory = t->mem != NULL;
		m.mem_lost = st.memLost;
		err = kp_tl_write_chrome(kp_out_file(out), &t->store, &m);
		if (err == -ENOMEM)
			err = kp_fail(COMMON_ERR_NOMEM, err, "out of memory");
	}
	pthread_mutex_unlock(&t->lock);
	if (err) {
		kp_out_discard(out);
		goto done;
	}
	err = kp_out_commit(out); /* a failed write is found here, with its errno */
done:
	kp_handle_put(t);
	return err ? kp_public_fail(err) : SUCCESS;
}

int KperfTimelineGetStats(int td, struct KperfTimelineStats *stats)
{
	struct kp_timeline *t;

	kp_clear();
	if (!stats)
		return kp_public_fail(kp_fail(LIBPERF_ERR_NULL_POINTER, -EINVAL,
					      "KperfTimelineGetStats: stats is NULL"));
	t = kp_handle_get(td, KP_HANDLE_TIMELINE);
	if (!t)
		return -1;
	pthread_mutex_lock(&t->lock);
	drain_locked(t); /* the counts of what the kernel has recorded so far */
	fill_stats(t, stats);
	pthread_mutex_unlock(&t->lock);
	kp_handle_put(t);
	return SUCCESS;
}

void KperfTimelineClose(int td)
{
	kp_clear();
	kp_handle_close(td, KP_HANDLE_TIMELINE);
}
