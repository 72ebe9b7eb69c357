/*
 * trace.c - PmuTraceOpen/Enable/Disable/Close, the trace task and its poller (what it hands
 * out, records, summary and counters, is trace_read.c's).
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

bool kp_trace_consume(struct kp_trace *t)
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
		full = kp_trace_consume(t);
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
		kp_trace_consume(t);
		pthread_mutex_unlock(&t->rb_lock);
		t->enabled = false;
	}
	pthread_mutex_unlock(&t->lock);
	kp_handle_put(t);
	return 0;
}

KP_EXPORT void PmuTraceClose(int pd)
{
	kp_clear();
	kp_handle_close(pd, KP_HANDLE_TRACE);
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
