/*
 * trace.c - PmuTraceOpen/Enable/Disable/Read/Close and the summary extension.
 *
 * A trace task owns one loaded syscall BPF object. While it is enabled, a poller thread
 * drains the ring buffer into a record store, so a caller that reads once a second does
 * not lose records to a full ring buffer; PmuTraceRead drains once more and hands out
 * everything since the previous read. The store is bounded (maxStoredRecords): once full,
 * records wait in the ring buffer, and what the ring buffer cannot hold is dropped by the
 * BPF program and counted, so memory is the store plus the ring buffer, however fast
 * calls come and however slowly the caller reads. The same thread moves the summary rows of
 * processes that exited out of the kernel map (kp_sys_bpf_harvest), so that the map holds the
 * live processes only; the summary is read on demand.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "core/core.h"
#include "core/pidns.h"
#include "kperf/kperf.h"
#include "stack_capture.h"
#include "trace.h"

#define DEFAULT_RINGBUF_KB 16384
#define MAX_RINGBUF_KB (1U << 20) /* 1 GiB */
#define DEFAULT_SUMMARY_ENTRIES 16384
#define MAX_SUMMARY_ENTRIES (1U << 22)
#define DEFAULT_STACK_ENTRIES 8192
#define MAX_STACK_ENTRIES (1U << 20) /* 1 GiB of frames */
#define POLL_MS 100
/* records kept between two reads by default (56 bytes each: 448 MiB); beyond, they wait in
 * the ring buffer */
#define MAX_STORED_RECORDS (8U << 20)
#define NAME_SLOT 24 /* "syscall_1023", a comm or KP_PIDNS_OUTSIDE_COMM, NUL included */

_Static_assert(KP_HIST_SLOTS == KPERF_HIST_SLOTS, "histogram slots differ");

/* ring buffer callback, with rb_lock held */
static int store_record(void *ctx, const struct kp_sys_event *e)
{
	struct kp_trace *t = ctx;

	if (kp_grow((void **)&t->recs, &t->cap, t->nrecs + 1, sizeof(*t->recs)) ||
	    (t->stacks && kp_grow((void **)&t->stk, &t->stk_cap, t->nrecs + 1, sizeof(*t->stk)))) {
		t->store_dropped++;
		return 0;
	}
	if (t->stacks) {
		const struct kp_sys_event_stk *es = (const void *)e;

		t->stk[t->nrecs] = (struct kp_trace_stk){ es->kstack, es->ustack };
		kp_trace_note_process(t, e->tgid);
	}
	t->recs[t->nrecs++] = *e;
	/* libbpf has consumed this one already: stop after it */
	return t->nrecs >= t->max_stored ? -E2BIG : 0;
}

/* move what the ring buffer holds into the store, as far as the store has room; with
 * rb_lock held. Whether the store is full now. */
static bool consume(struct kp_trace *t)
{
	if (t->summary_only)
		return false;
	if (t->nrecs < t->max_stored)
		kp_sys_bpf_consume(t->bpf);
	return t->nrecs >= t->max_stored;
}

static void *poller_main(void *arg)
{
	struct kp_trace *t = arg;
	struct epoll_event ev[3];
	struct pollfd wake;
	bool full = false;

	while (!atomic_load(&t->stop)) {
		if (full) {
			/* the ring buffer stays readable: wait for the reader, not for it */
			wake = (struct pollfd){ .fd = t->wake_fd, .events = POLLIN };
			poll(&wake, 1, POLL_MS / 10);
		} else {
			/* woken early when a quarter of the ring buffer is full; otherwise the
			 * timeout bounds how stale a record can get */
			epoll_wait(t->epoll_fd, ev, 3, POLL_MS);
		}
		/* the mappings first: the records and processes seen next resolve with them */
		kp_trace_sideband_drain(t);
		pthread_mutex_lock(&t->rb_lock);
		full = consume(t);
		if (t->stacks)
			kp_trace_scan_processes(t);
		pthread_mutex_unlock(&t->rb_lock);
		kp_sys_bpf_harvest(t->bpf);
	}
	return NULL;
}

static int start_poller(struct kp_trace *t)
{
	struct epoll_event ev = { .events = EPOLLIN };
	int err, fd;

	/* records to drain, exits to move rows out of the map for, or (with stacks) the
	 * processes that show up, for their symbols */
	if (t->poller_on ||
	    (t->summary_only && !t->stacks && kp_sys_bpf_exits_epoll_fd(t->bpf) < 0))
		return 0;
	if (t->epoll_fd < 0) {
		t->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		t->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
		if (t->wake_fd < 0 || t->epoll_fd < 0)
			return kp_fail(UNKNOWN_ERROR, -errno, "cannot create the poller: %s",
				       strerror(errno));
		ev.data.fd = t->wake_fd;
		epoll_ctl(t->epoll_fd, EPOLL_CTL_ADD, t->wake_fd, &ev);
		fd = kp_sys_bpf_epoll_fd(t->bpf);
		ev.data.fd = fd;
		if (fd >= 0 && epoll_ctl(t->epoll_fd, EPOLL_CTL_ADD, fd, &ev))
			return kp_fail(UNKNOWN_ERROR, -errno, "cannot poll the ring buffer: %s",
				       strerror(errno));
		fd = kp_sys_bpf_exits_epoll_fd(t->bpf);
		ev.data.fd = fd;
		if (fd >= 0 && epoll_ctl(t->epoll_fd, EPOLL_CTL_ADD, fd, &ev))
			return kp_fail(UNKNOWN_ERROR, -errno, "cannot poll the exits ring: %s",
				       strerror(errno));
	}
	atomic_store(&t->stop, false);
	err = pthread_create(&t->poller, NULL, poller_main, t);
	if (err)
		return kp_fail(UNKNOWN_ERROR, -err, "cannot start the poller thread: %s",
			       strerror(err));
	t->poller_on = true;
	return 0;
}

static void stop_poller(struct kp_trace *t)
{
	uint64_t one = 1;

	if (!t->poller_on)
		return;
	atomic_store(&t->stop, true);
	if (write(t->wake_fd, &one, sizeof(one)) < 0) {
		/* the poller still stops at its next timeout */
	}
	pthread_join(t->poller, NULL);
	t->poller_on = false;
	if (read(t->wake_fd, &one, sizeof(one)) < 0) {
		/* nothing was written: fine */
	}
}

static void trace_destroy(void *obj)
{
	struct kp_trace *t = obj;

	stop_poller(t);
	if (t->bpf) {
		kp_sys_bpf_detach(t->bpf);
		kp_sys_bpf_close(t->bpf);
	}
	if (t->cgroup_fd >= 0)
		close(t->cgroup_fd);
	if (t->wake_fd >= 0)
		close(t->wake_fd);
	if (t->epoll_fd >= 0)
		close(t->epoll_fd);
	free(t->recs);
	free(t->stk);
	kp_trace_sideband_close(t);
	kp_trace_release_processes(t);
	pthread_mutex_destroy(&t->lock);
	pthread_mutex_destroy(&t->rb_lock);
	pthread_mutex_destroy(&t->sb_lock);
	free(t);
}

static const struct kp_handle_ops trace_ops = { .destroy = trace_destroy };

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

static unsigned dedup(int *v, unsigned n)
{
	unsigned i, j = 0;

	qsort(v, n, sizeof(*v), cmp_int);
	for (i = 0; i < n; i++)
		if (!j || v[j - 1] != v[i])
			v[j++] = v[i];
	return j;
}

static size_t ringbuf_bytes(unsigned kb)
{
	size_t bytes = (size_t)(kb ? kb : DEFAULT_RINGBUF_KB) << 10, p = (size_t)getpagesize();

	while (p < bytes)
		p <<= 1;
	return p;
}

/* validate <a> and <x> into <o>; the arrays it allocates are freed by the caller */
static int check_attr(const struct PmuTraceAttr *a, const struct KperfTraceOpts *x,
		      struct kp_sys_bpf_opts *o, int **nrs, int **tgids, int *cgroup_fd)
{
	bool any_cpu;
	unsigned i;
	int v;

	if ((unsigned)a->symbolMode > RESOLVE_DELAY_DWARF)
		return kp_fail(
			KPERF_ERR_INVALID_ATTR, -EINVAL,
			"symbolMode %d does not exist: NO_SYMBOL_RESOLVE (0), RESOLVE_ELF (1), "
			"RESOLVE_ELF_DWARF (2), RESOLVE_DELAY_ELF (3) or RESOLVE_DELAY_DWARF (4)",
			(int)a->symbolMode);
	if (x->stackEntries > MAX_STACK_ENTRIES)
		return kp_fail(KPERF_ERR_INVALID_ATTR, -EINVAL,
			       "stackEntries %u is too large (at most %u)", x->stackEntries,
			       MAX_STACK_ENTRIES);
	if (x->stackEntries && !a->callStack)
		return kp_fail(KPERF_ERR_INVALID_ATTR, -EINVAL,
			       "stackEntries is for callStack, which is 0");
	if (x->callGraph > KPERF_CALL_GRAPH_FP)
		return kp_fail(
			KPERF_ERR_INVALID_ATTR, -EINVAL,
			"callGraph is KPERF_CALL_GRAPH_DWARF (0) or KPERF_CALL_GRAPH_FP (1), "
			"not %u",
			x->callGraph);
	if (a->numFuncs && !a->funcs)
		return kp_fail(LIBPERF_ERR_INVALID_SYSCALL_FUN, -EINVAL,
			       "funcs is NULL but numFuncs is %u", a->numFuncs);
	if (a->numPid && !a->pidList)
		return kp_fail(LIBPERF_ERR_INVALID_PIDLIST, -EINVAL,
			       "pidList is NULL but numPid is %u", a->numPid);
	if (x->ringBufferKb > MAX_RINGBUF_KB)
		return kp_fail(KPERF_ERR_INVALID_ATTR, -EINVAL,
			       "ringBufferKb %u is too large (at most %u, 1 GiB)", x->ringBufferKb,
			       MAX_RINGBUF_KB);
	if (x->summaryEntries > MAX_SUMMARY_ENTRIES)
		return kp_fail(KPERF_ERR_INVALID_ATTR, -EINVAL,
			       "summaryEntries %u is too large (at most %u)", x->summaryEntries,
			       MAX_SUMMARY_ENTRIES);
	if (x->fromExec && !a->numPid)
		return kp_fail(KPERF_ERR_INVALID_ATTR, -EINVAL,
			       "fromExec needs the pids that are going to exec (pidList)");
	/* libkperf checks the syscall names, then the cpus and the pids (as PmuOpen does) */
	if (a->numFuncs) {
		*nrs = calloc(a->numFuncs, sizeof(**nrs));
		if (!*nrs)
			return kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
		for (i = 0; i < a->numFuncs; i++) {
			v = kp_syscall_lookup(a->funcs[i]);
			if (v < 0)
				return v;
			(*nrs)[i] = v;
		}
		o->nrs = *nrs;
		o->nnrs = dedup(*nrs, a->numFuncs);
	}
	v = kp_check_cpus(a->cpuList, a->numCpu);
	if (v < 0)
		return v;
	any_cpu = v > 0; /* -1 in the list: no restriction */
	if (a->numPid) {
		*tgids = calloc(a->numPid, sizeof(**tgids));
		if (!*tgids)
			return kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
		for (i = 0; i < a->numPid; i++) {
			/* 0 is the calling process, as for PmuOpen */
			v = a->pidList[i] ? kp_pid_tgid(a->pidList[i]) : (int)getpid();
			if (v < 0)
				return v;
			(*tgids)[i] = v;
		}
		o->tgids = *tgids;
		o->ntgids = dedup(*tgids, a->numPid);
	}
	o->cpus = a->numCpu && !any_cpu ? a->cpuList : NULL;
	o->ncpus = any_cpu ? 0 : a->numCpu;
	if (x->cgroupPath && *x->cgroupPath) {
		*cgroup_fd = kp_cgroup_open(x->cgroupPath);
		if (*cgroup_fd < 0)
			return *cgroup_fd;
	}
	o->cgroup_fd = *cgroup_fd;
	o->record_events = !x->summaryOnly;
	o->follow_fork = x->includeNewFork;
	o->from_exec = x->fromExec;
	o->exclude_self = x->excludeSelf;
	o->by_cgroup = x->summaryByCgroup;
	o->min_duration_ns = x->minDurationNs;
	o->ringbuf_bytes = ringbuf_bytes(x->ringBufferKb);
	o->summary_entries = x->summaryEntries ? x->summaryEntries : DEFAULT_SUMMARY_ENTRIES;
	/* libkperf's callStack: the whole chain, kernel and user, of the sys_enter sample */
	o->kernel_stack = o->user_stack = a->callStack;
	o->stack_entries = x->stackEntries ? x->stackEntries : DEFAULT_STACK_ENTRIES;
	o->unwind = a->callStack && x->callGraph == KPERF_CALL_GRAPH_DWARF;
	return 0;
}

KP_EXPORT int PmuTraceOpen(enum PmuTraceType traceType, struct PmuTraceAttr *traceAttr)
{
	return KperfTraceOpen(traceType, traceAttr, NULL);
}

KP_EXPORT int KperfTraceOpen(enum PmuTraceType traceType, struct PmuTraceAttr *traceAttr,
			     const struct KperfTraceOpts *opts)
{
	struct KperfTraceOpts x;
	struct kp_sys_bpf_opts o = { .cgroup_fd = -1 };
	int *nrs = NULL, *tgids = NULL, cgroup_fd = -1, err, pd;
	struct kp_trace *t = NULL;
	unsigned i;

	kp_clear();
	if (!traceAttr)
		return kp_fail(LIBPERF_ERR_NULL_POINTER, -EINVAL,
			       "traceAttr is NULL: pass a PmuTraceAttr (all zero traces every "
			       "syscall of every process)"),
		       -1;
	if (traceType != TRACE_SYS_CALL)
		return kp_fail(LIBPERF_ERR_INVALID_TRACE_TYPE, -EINVAL,
			       "unknown trace type %d: only TRACE_SYS_CALL (0) exists",
			       (int)traceType),
		       -1;
	err = kp_opts_copy(&x, sizeof(x), opts, opts ? opts->sz : 0, "KperfTraceOpts");
	if (!err)
		err = check_attr(traceAttr, &x, &o, &nrs, &tgids, &cgroup_fd);
	if (err)
		goto out;
	err = kp_check_bpf_load();
	if (err)
		goto out;
	t = calloc(1, sizeof(*t));
	if (!t) {
		err = kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
		goto out;
	}
	pthread_mutex_init(&t->lock, NULL);
	pthread_mutex_init(&t->rb_lock, NULL);
	pthread_mutex_init(&t->sb_lock, NULL);
	t->wake_fd = t->epoll_fd = -1;
	t->cgroup_fd = cgroup_fd;
	cgroup_fd = -1;
	t->summary_only = x.summaryOnly;
	t->stacks = traceAttr->callStack;
	t->symbol_mode = traceAttr->symbolMode;
	kp_map_init(&t->held, false);
	t->max_stored = x.maxStoredRecords ? x.maxStoredRecords : MAX_STORED_RECORDS;
	o.on_event = store_record;
	o.ctx = t;
	err = kp_sys_bpf_open(&o, &t->bpf);
	if (!err)
		err = kp_trace_sideband_open(t, o.tgids, o.ntgids);
	if (err)
		goto out;
	/* the processes named are alive now: their symbols are recorded before they can exit
	 * (those that exec first, and the others, are recorded when the poller sees them) */
	for (i = 0; !x.fromExec && i < o.ntgids; i++)
		kp_trace_note_process(t, (uint32_t)o.tgids[i]);
	pd = kp_handle_add(KP_HANDLE_TRACE, t, &trace_ops);
	if (pd < 0) {
		err = pd;
		goto out;
	}
	free(nrs);
	free(tgids);
	return pd;
out:
	if (t)
		trace_destroy(t);
	if (cgroup_fd >= 0)
		close(cgroup_fd);
	free(nrs);
	free(tgids);
	return kp_public_fail(err);
}

KP_EXPORT int PmuTraceEnable(int pd)
{
	struct kp_trace *t;
	int err = 0;

	kp_clear();
	t = kp_handle_get(pd, KP_HANDLE_TRACE);
	if (!t)
		return -1;
	pthread_mutex_lock(&t->lock);
	if (!t->enabled) {
		/* mmaps followed before the first call can be traced */
		err = kp_trace_sideband_enable(t, true);
		if (!err)
			err = start_poller(t);
		if (!err)
			err = kp_sys_bpf_attach(t->bpf);
		if (err) {
			stop_poller(t);
			kp_trace_sideband_enable(t, false);
		} else {
			t->enabled = true;
		}
	}
	pthread_mutex_unlock(&t->lock);
	kp_handle_put(t);
	return err ? kp_public_fail(err) : 0;
}

KP_EXPORT int PmuTraceDisable(int pd)
{
	struct kp_trace *t;

	kp_clear();
	t = kp_handle_get(pd, KP_HANDLE_TRACE);
	if (!t)
		return -1;
	pthread_mutex_lock(&t->lock);
	if (t->enabled) {
		kp_sys_bpf_detach(t->bpf);
		stop_poller(t);
		/* nothing more can come: every mapping recorded is applied */
		kp_trace_sideband_enable(t, false);
		kp_trace_sideband_drain(t);
		pthread_mutex_lock(&t->rb_lock);
		consume(t);
		pthread_mutex_unlock(&t->rb_lock);
		t->enabled = false;
	}
	pthread_mutex_unlock(&t->lock);
	kp_handle_put(t);
	return 0;
}

void kp_trace_warn_drops(struct kp_trace *t)
{
	uint64_t c[KP_CNT_MAX], dropped;

	kp_sys_bpf_counters(t->bpf, c);
	dropped = c[KP_CNT_DROPPED] + t->store_dropped;
	if (c[KP_CNT_SUMMARY_FULL])
		kp_warn(KPERF_WARN_SUMMARY_FULL,
			"%llu calls are counted without their process (pid 0, " KPERF_TRACE_OVERFLOW_COMM
			"): the summary map was full (raise summaryEntries)",
			(unsigned long long)c[KP_CNT_SUMMARY_FULL]);
	if (c[KP_CNT_NOMEM_FOLDED])
		kp_warn(KPERF_WARN_SUMMARY_FULL,
			"%llu calls are counted without their process (pid 0, " KPERF_TRACE_NOMEM_COMM
			"): the kernel could not allocate their rows at that moment (-ENOMEM, the map "
			"was not full) and the ring that brings such calls to their rows was full",
			(unsigned long long)c[KP_CNT_NOMEM_FOLDED]);
	if (c[KP_CNT_STACK_SUMMARY_NOMEM])
		kp_warn(KPERF_WARN_SUMMARY_FULL,
			"%llu calls are missing from the summary by stack: the kernel could not "
			"allocate their rows at that moment (-ENOMEM, the map was not full)",
			(unsigned long long)c[KP_CNT_STACK_SUMMARY_NOMEM]);
	if (c[KP_CNT_STATE_FULL])
		kp_warn(KPERF_WARN_SUMMARY_FULL,
			"%llu calls were not counted: their start times could not be stored",
			(unsigned long long)c[KP_CNT_STATE_FULL]);
	if (c[KP_CNT_STACK_SUMMARY_FULL])
		kp_warn(KPERF_WARN_SUMMARY_FULL,
			"%llu calls are missing from the summary by stack: its map is full (raise "
			"summaryEntries)",
			(unsigned long long)c[KP_CNT_STACK_SUMMARY_FULL]);
	if (c[KP_CNT_CAP + KP_CAP_FAIL_FULL] + c[KP_CNT_CAP + KP_CAP_FAIL_CLASH])
		kp_warn(KPERF_WARN_RECORDS_DROPPED,
			"%llu call stacks were not kept (%llu: stack map full, raise stackEntries; "
			"%llu: clashing ids): those calls are counted without a stack",
			(unsigned long long)(c[KP_CNT_CAP + KP_CAP_FAIL_FULL] +
					     c[KP_CNT_CAP + KP_CAP_FAIL_CLASH]),
			(unsigned long long)c[KP_CNT_CAP + KP_CAP_FAIL_FULL],
			(unsigned long long)c[KP_CNT_CAP + KP_CAP_FAIL_CLASH]);
	if (dropped > t->dropped_warned) {
		kp_warn(KPERF_WARN_RECORDS_DROPPED,
			"%llu per-call records were dropped (%llu so far): the %zu KiB ring buffer "
			"was full; the summary is still exact. Raise ringBufferKb, read more often, "
			"or set minDurationNs",
			(unsigned long long)(dropped - t->dropped_warned),
			(unsigned long long)dropped, kp_sys_bpf_ringbuf_bytes(t->bpf) >> 10);
		t->dropped_warned = dropped;
	}
}

static void release_block(void *p)
{
	free(p);
}

/*
 * A PmuTraceRead array is one block: a header, the records, their extensions (kperf.h), then
 * the strings. The registry knows the records' address; the header is just before it.
 */
struct rec_block {
	size_t n;
	struct KperfTraceDataExt *ext;
	struct PmuData *keep; /* owns the records' stacks (callStack), or NULL */
	/* keeps the records that follow aligned as malloc's own memory */
	max_align_t align[];
};

static void release_records(void *p)
{
	struct rec_block *blk = (struct rec_block *)((char *)p - sizeof(struct rec_block));

	PmuDataFree(blk->keep);
	free(blk);
}

/* The stacks of the <n> records (callStack, resolving): an array of n, NULL when none; their
 * memory is *keep's. A failure leaves the records without stacks, with a warning. */
static struct Stack **record_stacks(struct kp_trace *t, const struct kp_sys_event *recs,
				    const struct kp_trace_stk *stk, size_t n, struct PmuData **keep)
{
	struct Stack **stacks;
	uint32_t *pids;
	size_t i;

	*keep = NULL;
	if (!stk || t->symbol_mode == NO_SYMBOL_RESOLVE)
		return NULL;
	stacks = calloc(n, sizeof(*stacks));
	pids = calloc(n, sizeof(*pids));
	for (i = 0; pids && i < n; i++)
		pids[i] = recs[i].tgid;
	if (!stacks || !pids || kp_trace_resolve(t, n, pids, stk, stacks, NULL, keep)) {
		kp_warn(KPERF_WARN_SYM_INCOMPLETE,
			"the stacks of %zu records were not resolved: %s", n,
			stacks && pids ? Perror() : "out of memory");
		kp_clear_error();
		free(stacks);
		stacks = NULL;
	}
	free(pids);
	return stacks;
}

/* the name of syscall <nr>, or "syscall_<nr>" written into <slot> */
static const char *syscall_label(int nr, char *slot)
{
	const char *name = kp_syscall_name(nr);

	if (name)
		return name;
	snprintf(slot, NAME_SLOT, "syscall_%d", nr);
	return slot;
}

/* the comm of a record into a NAME_SLOT: its own, or the label of processes the caller's PID
 * namespace does not contain (pid -1: all of them share one summary row per syscall) */
static void comm_label(char *slot, uint32_t tgid, const char *comm)
{
	_Static_assert(sizeof(KP_PIDNS_OUTSIDE_COMM) <= NAME_SLOT, "label too long");
	if (tgid == KP_SYS_OVERFLOW_TGID) {
		memcpy(slot, KPERF_TRACE_OVERFLOW_COMM, sizeof(KPERF_TRACE_OVERFLOW_COMM));
		return;
	}
	if (tgid == KP_SYS_NOMEM_TGID) {
		memcpy(slot, KPERF_TRACE_NOMEM_COMM, sizeof(KPERF_TRACE_NOMEM_COMM));
		return;
	}
	if (tgid == KP_PID_OUTSIDE) {
		memcpy(slot, KP_PIDNS_OUTSIDE_COMM, sizeof(KP_PIDNS_OUTSIDE_COMM));
		return;
	}
	memcpy(slot, comm, KP_COMM_LEN);
	slot[KP_COMM_LEN] = '\0';
}

KP_EXPORT int PmuTraceRead(int pd, struct PmuTraceData **out)
{
	struct kp_sys_event *recs;
	struct kp_trace_stk *stk;
	struct PmuData *keep = NULL;
	struct PmuTraceData *d = NULL;
	struct kp_trace *t;
	size_t n, i;
	char *pool;

	kp_clear();
	if (!out)
		return kp_fail(LIBPERF_ERR_NULL_POINTER, -EINVAL, "the output pointer is NULL"), -1;
	*out = NULL;
	t = kp_handle_get(pd, KP_HANDLE_TRACE);
	if (!t)
		return -1;
	pthread_mutex_lock(&t->lock);
	pthread_mutex_lock(&t->rb_lock);
	consume(t);
	recs = t->recs;
	stk = t->stk;
	n = t->nrecs;
	t->recs = NULL;
	t->stk = NULL;
	t->nrecs = t->cap = t->stk_cap = 0;
	pthread_mutex_unlock(&t->rb_lock);

	if (n) {
		struct Stack **stacks = record_stacks(t, recs, stk, n, &keep);
		struct rec_block *blk =
			malloc(sizeof(*blk) + n * (sizeof(*d) + sizeof(*blk->ext) + 2 * NAME_SLOT));

		free(stk);
		stk = NULL;
		d = blk ? (struct PmuTraceData *)(blk + 1) : NULL;
		if (!d) {
			/* keep nothing half-done: these records are lost, and said so */
			t->store_dropped += n;
			free(stacks);
			PmuDataFree(keep);
			free(recs);
			pthread_mutex_unlock(&t->lock);
			kp_handle_put(t);
			kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory for %zu records", n);
			return -1;
		}
		blk->n = n;
		blk->keep = keep;
		blk->ext = (struct KperfTraceDataExt *)(d + n);
		pool = (char *)(blk->ext + n);
		for (i = 0; i < n; i++) {
			const struct kp_sys_event *e = &recs[i];
			char *comm = pool + i * 2 * NAME_SLOT, *name = comm + NAME_SLOT;

			comm_label(comm, e->tgid, e->comm);
			d[i] = (struct PmuTraceData){
				.funcs = syscall_label((int)e->nr, name),
				.startTs = (int64_t)e->start_ns,
				.elapsedTime = (double)e->dur_ns / 1e6,
				.pid = (pid_t)e->tgid,
				.tid = (int)e->tid,
				.cpu = (int)e->cpu,
				.comm = comm,
				.stack = stacks ? stacks[i] : NULL,
			};
			blk->ext[i] = (struct KperfTraceDataExt){ .ret = e->ret, .nr = (int)e->nr };
		}
		free(stacks);
		if (kp_registry_add(d, release_records)) {
			t->store_dropped += n;
			release_records(d);
			free(recs);
			pthread_mutex_unlock(&t->lock);
			kp_handle_put(t);
			kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
			return -1;
		}
		t->delivered += n;
	}
	free(recs);
	free(stk);
	kp_trace_warn_drops(t);
	pthread_mutex_unlock(&t->lock);
	kp_handle_put(t);
	*out = d;
	return (int)n;
}

KP_EXPORT void PmuTraceDataFree(struct PmuTraceData *data)
{
	kp_registry_release(data);
}

KP_EXPORT const struct KperfTraceDataExt *KperfTraceGetExt(const struct PmuTraceData *data,
							   int index)
{
	const struct rec_block *blk;

	kp_clear();
	if (!kp_registry_is(data, release_records))
		return kp_fail(LIBPERF_ERR_INVALID_PMU_DATA, -EINVAL,
			       "not an array returned by PmuTraceRead (or already freed)"),
		       NULL;
	blk = (const struct rec_block *)data - 1;
	if (index < 0 || (size_t)index >= blk->n)
		return kp_fail(LIBPERF_ERR_INVALID_PMU_DATA, -EINVAL,
			       "record %d is out of range: the array has %zu", index, blk->n),
		       NULL;
	return &blk->ext[index];
}

KP_EXPORT void PmuTraceClose(int pd)
{
	kp_clear();
	kp_handle_close(pd, KP_HANDLE_TRACE);
}

static int cmp_summary(const void *a, const void *b)
{
	const struct PmuTraceSummary *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (!x->pid && strcmp(x->comm, y->comm)) /* [map full] and [no memory]: apart */
		return strcmp(x->comm, y->comm);
	if (x->totalNs != y->totalNs)
		return x->totalNs > y->totalNs ? -1 : 1;
	return x->nr - y->nr;
}

KP_EXPORT int PmuTraceReadSummary(int pd, struct PmuTraceSummary **out)
{
	struct PmuTraceSummary *s = NULL;
	struct kp_sys_row *rows = NULL;
	struct kp_trace *t;
	int n, i;
	char *pool;

	kp_clear();
	if (!out)
		return kp_fail(LIBPERF_ERR_NULL_POINTER, -EINVAL, "the output pointer is NULL"), -1;
	*out = NULL;
	t = kp_handle_get(pd, KP_HANDLE_TRACE);
	if (!t)
		return -1;
	pthread_mutex_lock(&t->lock);
	n = kp_sys_bpf_summary(t->bpf, &rows);
	if (n > 0) {
		s = malloc((size_t)n * (sizeof(*s) + 2 * NAME_SLOT));
		if (!s)
			n = kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
	}
	for (i = 0; i < n; i++) {
		const struct kp_sys_row *r = &rows[i];
		char *comm, *name;

		pool = (char *)(s + n) + (size_t)i * 2 * NAME_SLOT;
		comm = pool;
		name = pool + NAME_SLOT;
		comm_label(comm, r->key.tgid, r->stat.comm);
		s[i] = (struct PmuTraceSummary){
			.funcs = syscall_label((int)r->key.nr, name),
			.nr = (int)r->key.nr,
			.pid = r->key.tgid == KP_SYS_OVERFLOW_TGID ||
					       r->key.tgid == KP_SYS_NOMEM_TGID ?
				       0 :
				       (pid_t)r->key.tgid,
			.comm = comm,
			.calls = r->stat.calls,
			.errors = r->stat.errors,
			.totalNs = r->stat.total_ns,
			.minNs = r->stat.min_ns,
			.maxNs = r->stat.max_ns,
		};
		memcpy(s[i].hist, r->stat.hist, sizeof(s[i].hist));
	}
	if (n > 0) {
		qsort(s, (size_t)n, sizeof(*s), cmp_summary);
		if (kp_registry_add(s, release_block)) {
			free(s);
			s = NULL;
			n = kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
		}
	}
	if (n >= 0)
		kp_trace_warn_drops(t);
	pthread_mutex_unlock(&t->lock);
	kp_handle_put(t);
	free(rows);
	if (n < 0)
		return kp_public_fail(n);
	*out = s;
	return n;
}

KP_EXPORT int KperfTraceForget(int pd, const int *pidList, unsigned numPid)
{
	struct kp_trace *t;
	int n;

	kp_clear();
	if (numPid && !pidList)
		return kp_fail(LIBPERF_ERR_NULL_POINTER, -EINVAL, "pidList is NULL"), -1;
	t = kp_handle_get(pd, KP_HANDLE_TRACE);
	if (!t)
		return -1;
	pthread_mutex_lock(&t->lock);
	n = kp_sys_bpf_forget(t->bpf, pidList, numPid);
	pthread_mutex_unlock(&t->lock);
	kp_handle_put(t);
	return n < 0 ? kp_public_fail(n) : n;
}

static int cmp_cg_summary(const void *a, const void *b)
{
	const struct KperfTraceCgroupSummary *x = a, *y = b;
	int c;

	if (x->cgroupId != y->cgroupId)
		return x->cgroupId < y->cgroupId ? -1 : 1;
	c = strcmp(x->s.comm, y->s.comm);
	return c ? c : x->s.nr - y->s.nr;
}

KP_EXPORT int KperfTraceReadCgroupSummary(int pd, struct KperfTraceCgroupSummary **out)
{
	struct KperfTraceCgroupSummary *s = NULL;
	struct kp_sys_cg_row *rows = NULL;
	struct kp_trace *t;
	int n, i;

	kp_clear();
	if (!out)
		return kp_fail(LIBPERF_ERR_NULL_POINTER, -EINVAL, "the output pointer is NULL"), -1;
	*out = NULL;
	t = kp_handle_get(pd, KP_HANDLE_TRACE);
	if (!t)
		return -1;
	pthread_mutex_lock(&t->lock);
	n = kp_sys_bpf_cg_summary(t->bpf, &rows);
	if (n > 0) {
		s = malloc((size_t)n * (sizeof(*s) + 2 * NAME_SLOT));
		if (!s)
			n = kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
	}
	for (i = 0; i < n; i++) {
		const struct kp_sys_cg_row *r = &rows[i];
		char *comm = (char *)(s + n) + (size_t)i * 2 * NAME_SLOT, *name = comm + NAME_SLOT;

		comm_label(comm,
			   r->kind				     ? r->kind :
			   r->key.cgid == KPERF_TRACE_CGROUP_OUTSIDE ? KP_PID_OUTSIDE :
								       0,
			   r->key.comm);
		s[i].cgroupId = r->key.cgid;
		s[i].s = (struct PmuTraceSummary){
			.funcs = syscall_label((int)r->key.nr, name),
			.nr = (int)r->key.nr,
			.comm = comm,
			.calls = r->stat.calls,
			.errors = r->stat.errors,
			.totalNs = r->stat.total_ns,
			.minNs = r->stat.min_ns,
			.maxNs = r->stat.max_ns,
		};
		memcpy(s[i].s.hist, r->stat.hist, sizeof(s[i].s.hist));
	}
	if (n > 0) {
		qsort(s, (size_t)n, sizeof(*s), cmp_cg_summary);
		if (kp_registry_add(s, release_block)) {
			free(s);
			s = NULL;
			n = kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
		}
	}
	if (n >= 0)
		kp_trace_warn_drops(t);
	pthread_mutex_unlock(&t->lock);
	kp_handle_put(t);
	free(rows);
	if (n < 0)
		return kp_public_fail(n);
	*out = s;
	return n;
}

KP_EXPORT void KperfTraceCgroupSummaryFree(struct KperfTraceCgroupSummary *rows)
{
	kp_registry_release(rows);
}

KP_EXPORT int KperfTraceForgetCgroups(int pd, const uint64_t *cgroupIds, unsigned num)
{
	struct kp_trace *t;
	int n;

	kp_clear();
	if (num && !cgroupIds)
		return kp_fail(LIBPERF_ERR_NULL_POINTER, -EINVAL, "cgroupIds is NULL"), -1;
	t = kp_handle_get(pd, KP_HANDLE_TRACE);
	if (!t)
		return -1;
	pthread_mutex_lock(&t->lock);
	n = num ? kp_sys_bpf_cg_forget(t->bpf, cgroupIds, num) : 0;
	pthread_mutex_unlock(&t->lock);
	kp_handle_put(t);
	return n < 0 ? kp_public_fail(n) : n;
}

KP_EXPORT void PmuTraceSummaryFree(struct PmuTraceSummary *summary)
{
	kp_registry_release(summary);
}

KP_EXPORT int PmuTraceGetStats(int pd, struct PmuTraceStats *stats)
{
	uint64_t c[KP_CNT_MAX];
	struct kp_trace *t;

	kp_clear();
	if (!stats)
		return kp_fail(LIBPERF_ERR_NULL_POINTER, -EINVAL, "stats is NULL"), -1;
	t = kp_handle_get(pd, KP_HANDLE_TRACE);
	if (!t)
		return -1;
	pthread_mutex_lock(&t->lock);
	kp_sys_bpf_counters(t->bpf, c);
	pthread_mutex_lock(&t->rb_lock);
	stats->records = t->delivered;
	stats->dropped = c[KP_CNT_DROPPED] + t->store_dropped;
	pthread_mutex_unlock(&t->rb_lock);
	stats->summaryDropped =
		c[KP_CNT_SUMMARY_FULL] + c[KP_CNT_STATE_FULL] + c[KP_CNT_NOMEM_FOLDED];
	stats->summaryNoMemory = c[KP_CNT_SUMMARY_NOMEM];
	stats->stackSummaryNoMemory = c[KP_CNT_STACK_SUMMARY_NOMEM];
	stats->stacksLost = c[KP_CNT_CAP + KP_CAP_FAIL_FULL] + c[KP_CNT_CAP + KP_CAP_FAIL_CLASH] +
			    c[KP_CNT_CAP + KP_CAP_FAIL_READ];
	stats->stackSummaryDropped = c[KP_CNT_STACK_SUMMARY_FULL];
	stats->fallback = kp_sys_bpf_is_compat(t->bpf);
	stats->ringBufferKb = t->summary_only ? 0 :
						(unsigned)(kp_sys_bpf_ringbuf_bytes(t->bpf) >> 10);
	pthread_mutex_unlock(&t->lock);
	kp_handle_put(t);
	return 0;
}

/*
 * The list belongs to the library, as in libkperf: every call returns the same array until
 * PmuSysCallFuncListFree() releases it (the next call builds it again).
 */
static pthread_mutex_t list_lock = PTHREAD_MUTEX_INITIALIZER;
static const char **syscall_list;
static int syscall_list_len;

KP_EXPORT const char **PmuSysCallFuncList(unsigned *numFunc)
{
	const char **names;
	int n = 0;

	kp_clear();
	if (numFunc)
		*numFunc = 0;
	pthread_mutex_lock(&list_lock);
	if (!syscall_list) {
		n = kp_syscall_list(&syscall_list);
		if (n >= 0)
			syscall_list_len = n;
		else
			syscall_list = NULL;
	}
	names = syscall_list;
	if (names && numFunc)
		*numFunc = (unsigned)syscall_list_len;
	pthread_mutex_unlock(&list_lock);
	return names;
}

KP_EXPORT void PmuSysCallFuncListFree(void)
{
	kp_clear();
	pthread_mutex_lock(&list_lock);
	free(syscall_list);
	syscall_list = NULL;
	syscall_list_len = 0;
	pthread_mutex_unlock(&list_lock);
}

KP_EXPORT int PmuSysCallNumber(const char *name)
{
	int nr;

	kp_clear();
	nr = kp_syscall_lookup(name);
	return nr < 0 ? -1 : nr;
}
