/*
 * api.c - KperfActivity* (include/kperf/activity.h): a collection of markers and/or
 * syscalls of some processes, read in batches.
 *
 * There is no thread here: a read drains the ring buffers of the collection's sources into
 * one array, and waits (without the handle's lock, woken by an eventfd on close or disable)
 * when nothing is there. Memory is bounded by the ring buffers: what the reader does not
 * take in time is dropped in the kernel and counted.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "activity.h"
#include "core/core.h"
#include "core/pidns.h"
#include "kperf/kperf.h"

#define DEFAULT_BUFFER_KB 8192
#define MAX_BUFFER_KB (1U << 20) /* 1 GiB */

struct kp_act_sink {
	struct kp_act_rec *recs;
	size_t n, cap;
	int exclude_tid;
	atomic_uint_fast64_t next_corr;
	const struct kp_act_direct *direct; /* NULL: records are built into recs */
};

struct kp_activity {
	pthread_mutex_t lock;
	bool marker, kernel, hccl;
	struct kp_mstx_bpf *mstx;
	struct kp_act_sys *sys;
	struct kp_act_sink sink;
	int epoll_fd, wake_fd;
	bool enabled;
	bool exclude_reader;
	uint64_t delivered;
	unsigned probe_files;
	size_t ringbuf_bytes;
};

int kp_act_sink_add(struct kp_act_sink *s, const struct kp_act_rec *rec)
{
	if (s->exclude_tid && rec->r.tid == s->exclude_tid)
		return 0;
	if (kp_grow((void **)&s->recs, &s->cap, s->n + 1, sizeof(*s->recs)))
		return -ENOMEM;
	s->recs[s->n++] = *rec;
	return 0;
}

bool kp_act_sink_direct_sys(struct kp_act_sink *s, const struct kp_sys_event *e, int *err)
{
	if (!s->direct || !s->direct->on_sys)
		return false;
	*err = s->direct->on_sys(s->direct->ctx, e);
	return true;
}

uint64_t kp_act_sink_next_id(struct kp_act_sink *s)
{
	return (uint64_t)atomic_fetch_add(&s->next_corr, 1) + 1;
}

static int on_mstx(void *ctx, const struct kp_mstx_event *e)
{
	struct kp_act_sink *s = ctx;
	struct kp_act_rec rec;

	if (s->direct && s->direct->on_mstx)
		return s->direct->on_mstx(s->direct->ctx, e);
	memset(&rec, 0, sizeof(rec));
	rec.r.kind = KPERF_ACTIVITY_KIND_MARKER;
	rec.r.flag = e->kind == KP_MSTX_RANGE_START ? KPERF_ACTIVITY_FLAG_MARKER_START :
		     e->kind == KP_MSTX_RANGE_END   ? KPERF_ACTIVITY_FLAG_MARKER_END :
						      KPERF_ACTIVITY_FLAG_MARKER_INSTANTANEOUS;
	rec.r.start = rec.r.end = e->ts;
	rec.r.id = e->id;
	rec.r.pid = (int)e->tgid;
	rec.r.tid = (int)e->tid;
	rec.r.cpu = (int)e->cpu;
	rec.r.nr = -1;
	/* the kernel's copies are NUL-terminated within their size; say so again anyway */
	/* the kernel's copy is NUL-terminated within its size; a process the caller's PID
	 * namespace does not contain is pid -1 "[outside namespace]" */
	if (e->tgid == KP_PID_OUTSIDE)
		snprintf(rec.comm, sizeof(rec.comm), "%s", KP_PIDNS_OUTSIDE_COMM);
	else
		snprintf(rec.comm, sizeof(rec.comm), "%.*s", (int)sizeof(e->comm), e->comm);
	memcpy(rec.domain, e->domain, sizeof(e->domain));
	rec.domain[sizeof(rec.domain) - 1] = '\0';
	memcpy(rec.name, e->msg, sizeof(e->msg));
	rec.name[sizeof(rec.name) - 1] = '\0';
	return kp_act_sink_add(s, &rec);
}

int kp_act_targets(const int *pids, unsigned npids, int **out)
{
	int *t, n = 0, tgid;
	unsigned i;
	int k;

	*out = NULL;
	t = malloc((npids ? npids : 1) * sizeof(*t));
	if (!t)
		return kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
	if (!npids)
		t[n++] = getpid();
	for (i = 0; i < npids; i++) {
		tgid = kp_pid_tgid(pids[i]);
		if (tgid < 0) {
			free(t);
			return tgid;
		}
		for (k = 0; k < n && t[k] != tgid; k++)
			;
		if (k == n)
			t[n++] = tgid;
	}
	*out = t;
	return n;
}

static int check_kinds(const enum KperfActivityKind *kinds, unsigned n, struct kp_activity *a)
{
	unsigned i;

	if (!kinds || !n)
		return kp_fail(KPERF_ERR_INVALID_ARG, -EINVAL,
			       "no activity kind given: ask for KPERF_ACTIVITY_KIND_MARKER, "
			       "KPERF_ACTIVITY_KIND_KERNEL or KPERF_ACTIVITY_KIND_HCCL");
	for (i = 0; i < n; i++) {
		bool *slot = kinds[i] == KPERF_ACTIVITY_KIND_MARKER ? &a->marker :
			     kinds[i] == KPERF_ACTIVITY_KIND_KERNEL ? &a->kernel :
			     kinds[i] == KPERF_ACTIVITY_KIND_HCCL   ? &a->hccl :
								      NULL;

		if (!slot)
			return kp_fail(KPERF_ERR_INVALID_ARG, -EINVAL,
				       "activity kind %d does not exist (MARKER 1, KERNEL 2, "
				       "HCCL 4)",
				       (int)kinds[i]);
		if (*slot)
			return kp_fail(KPERF_ERR_INVALID_ARG, -EINVAL,
				       "activity kind %d is given twice", (int)kinds[i]);
		*slot = true;
	}
	return 0;
}

static size_t ring_bytes(unsigned kb)
{
	size_t b = 4096, want = (size_t)(kb ? kb : DEFAULT_BUFFER_KB) << 10;

	while (b < want)
		b <<= 1;
	return b;
}

/* Place the marker programs on every probe file. To follow children, with attach cookies,
 * once per file for every process (the filter in the kernel picks the processes, children
 * included); otherwise once per (process, file): without cookies libbpf finds a probe's
 * arguments by its absolute address, which only a process that maps the file has. Every
 * process (allPids): the files any process maps, for all of them (no filter in the kernel),
 * or without cookies for each process running now. */
static int attach_markers(struct kp_activity *a, const int *tgids, int n,
			  const struct KperfActivityOpts *o)
{
	struct kp_probe_files f;
	bool cookies = kp_have(KP_FEAT_ATTACH_COOKIE);
	int *every = NULL, err, k, sites = 0;
	unsigned nevery = 0;
	size_t i;

	if (o->allPids)
		err = kp_probe_files_every(o->probeFiles, o->numProbeFiles, &f, &every, &nevery);
	else
		err = kp_probe_files_find(o->numPid ? tgids : NULL, o->numPid ? (unsigned)n : 0,
					  !o->numPid,
					  o->fromExec ? (o->command ? o->command : "") : NULL,
					  o->probeFiles, o->numProbeFiles, &f);
	if (err)
		return err;
	if (o->allPids && !cookies) {
		/* without cookies a probe is placed per process: the ones running now */
		tgids = every;
		n = (int)nevery;
	}
	for (i = 0; i < f.n; i++) {
		int here = 0;

		if (cookies && !o->noChildren) {
			/* every process mapping the file gets the probes (and its semaphores
			 * set): the only way to have the children's, which do not exist yet */
			err = kp_mstx_bpf_attach(a->mstx, f.paths[i], -1);
			if (err < 0)
				goto out;
			here = err;
		} else {
			for (k = 0; k < n; k++) {
				/* every process: only those that map it (a failed attachment
				 * costs libbpf a USDT spec of the few it has without cookies) */
				if (o->allPids && !kp_probe_file_mapped(&f, i, tgids[k]))
					continue;
				err = kp_mstx_bpf_attach(a->mstx, f.paths[i], tgids[k]);
				if (err == -ESRCH || err == -ENOENT) {
					kp_clear_error(); /* that process does not map it */
					continue;
				}
				if (err < 0)
					goto out;
				here += err;
			}
		}
		sites += here;
		a->probe_files += here > 0;
	}
	err = 0;
	if (!sites)
		kp_warn(KPERF_WARN_NO_PROBES,
			"no kperf USDT probes found for the collected processes: they do not map "
			"libkperf-bpf (yet)%s; name the file in probeFiles",
			cookies ? "" : ", or it was not loaded when the collection opened");
	else if (!cookies && o->allPids)
		kp_warn(KPERF_WARN_FALLBACK,
			"kernel %s has no %s (%s): markers are collected from the %u processes "
			"running when the collection opened, not from those started later",
			kp_kernel_release(), kp_feature_name(KP_FEAT_ATTACH_COOKIE),
			kp_feature_since(KP_FEAT_ATTACH_COOKIE), nevery);
	else if (!cookies && !o->noChildren)
		kp_warn(KPERF_WARN_FALLBACK,
			"kernel %s has no %s (%s): markers are collected from the given processes "
			"and the copies of libkperf-bpf they had loaded, not from their children",
			kp_kernel_release(), kp_feature_name(KP_FEAT_ATTACH_COOKIE),
			kp_feature_since(KP_FEAT_ATTACH_COOKIE));
out:
	kp_probe_files_free(&f);
	free(every);
	return err;
}

static int add_epoll(struct kp_activity *a, int fd)
{
	struct epoll_event ev = { .events = EPOLLIN };

	if (fd < 0 || epoll_ctl(a->epoll_fd, EPOLL_CTL_ADD, fd, &ev))
		return kp_fail(UNKNOWN_ERROR, fd < 0 ? -EBADF : -errno,
			       "cannot watch a ring buffer: %s", strerror(fd < 0 ? EBADF : errno));
	return 0;
}

int kp_act_open(const enum KperfActivityKind *kinds, unsigned nkinds,
		const struct KperfActivityOpts *o, struct kp_activity **out)
{
	struct kp_activity *a;
	int *tgids = NULL, n, err;

	*out = NULL;
	a = calloc(1, sizeof(*a));
	if (!a)
		return kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
	pthread_mutex_init(&a->lock, NULL);
	a->epoll_fd = a->wake_fd = -1;
	err = check_kinds(kinds, nkinds, a);
	if (err)
		goto fail;
	if (o->bufferKb > MAX_BUFFER_KB) {
		err = kp_fail(KPERF_ERR_INVALID_ARG, -EINVAL,
			      "bufferKb %u is more than the %u KiB a ring buffer may take",
			      o->bufferKb, MAX_BUFFER_KB);
		goto fail;
	}
	if (o->allPids && (o->numPid || o->fromExec || o->noChildren)) {
		err = kp_fail(LIBPERF_ERR_INVALID_PIDLIST, -EINVAL,
			      "allPids collects every process: it takes no %s",
			      o->numPid	  ? "pidList" :
			      o->fromExec ? "fromExec" :
					    "noChildren");
		goto fail;
	}
	if (o->numPid && !o->pidList) {
		err = kp_fail(LIBPERF_ERR_INVALID_PIDLIST, -EINVAL,
			      "numPid is %u but pidList is NULL", o->numPid);
		goto fail;
	}
	if (o->numProbeFiles && !o->probeFiles) {
		err = kp_fail(KPERF_ERR_INVALID_ARG, -EINVAL,
			      "numProbeFiles is %u but probeFiles is NULL", o->numProbeFiles);
		goto fail;
	}
	a->exclude_reader = o->excludeReader;
	a->ringbuf_bytes = ring_bytes(o->bufferKb);
	n = o->allPids ? 0 : kp_act_targets(o->pidList, o->numPid, &tgids);
	if (n < 0) {
		err = n;
		goto fail;
	}
	err = kp_check_bpf_load();
	if (err)
		goto fail;
	a->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	a->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (a->epoll_fd < 0 || a->wake_fd < 0) {
		err = kp_fail(UNKNOWN_ERROR, -errno, "cannot create an epoll set: %s",
			      strerror(errno));
		goto fail;
	}
	err = add_epoll(a, a->wake_fd);
	if (err)
		goto fail;
	if (a->marker) {
		struct kp_mstx_bpf_opts mo = {
			.tgids = tgids,
			.ntgids = (unsigned)n,
			.follow_fork = !o->noChildren,
			.ringbuf_bytes = a->ringbuf_bytes,
			.on_event = on_mstx,
			.ctx = &a->sink,
		};

		err = kp_mstx_bpf_open(&mo, &a->mstx);
		if (!err)
			err = attach_markers(a, tgids, n, o);
		if (!err)
			err = add_epoll(a, kp_mstx_bpf_epoll_fd(a->mstx));
		if (err)
			goto fail;
	}
	if (a->kernel || a->hccl) {
		err = kp_act_sys_open(tgids, (unsigned)n, !o->noChildren, o->fromExec, a->kernel,
				      a->hccl, a->ringbuf_bytes, &a->sink, &a->sys);
		if (!err)
			err = add_epoll(a, kp_act_sys_epoll_fd(a->sys));
		if (err)
			goto fail;
	}
	free(tgids);
	*out = a;
	return 0;
fail:
	free(tgids);
	kp_act_close(a);
	return err;
}

int kp_act_enable(struct kp_activity *a, bool on)
{
	int err = 0;

	pthread_mutex_lock(&a->lock);
	if (on != a->enabled) {
		if (a->sys)
			err = on ? kp_act_sys_attach(a->sys) : (kp_act_sys_detach(a->sys), 0);
		if (!err && a->mstx)
			kp_mstx_bpf_set_enabled(a->mstx, on);
		if (!err)
			a->enabled = on;
	}
	pthread_mutex_unlock(&a->lock);
	if (!on && a->wake_fd >= 0) {
		uint64_t one = 1;

		/* a reader waiting for records that will not come now */
		if (write(a->wake_fd, &one, sizeof(one)) < 0)
			(void)0;
	}
	return err;
}

/* the number of records consumed, or the first error of a consumer */
static int drain(struct kp_activity *a)
{
	int n = 0, k = 0;

	if (a->mstx)
		n = kp_mstx_bpf_consume(a->mstx);
	if (a->sys && n >= 0)
		k = kp_act_sys_consume(a->sys);
	return n < 0 ? n : k < 0 ? k : n + k;
}

void kp_act_set_direct(struct kp_activity *a, const struct kp_act_direct *d)
{
	pthread_mutex_lock(&a->lock);
	a->sink.direct = d;
	pthread_mutex_unlock(&a->lock);
}

int kp_act_consume(struct kp_activity *a)
{
	int n;

	pthread_mutex_lock(&a->lock);
	n = drain(a);
	if (n > 0)
		a->delivered += (uint64_t)n;
	pthread_mutex_unlock(&a->lock);
	return n;
}

int kp_act_read(struct kp_activity *a, int timeout_ms, struct kp_act_rec **recs)
{
	struct epoll_event ev[4];
	uint64_t v;
	int n;

	*recs = NULL;
	pthread_mutex_lock(&a->lock);
	a->sink.exclude_tid = a->exclude_reader ? gettid() : 0;
	drain(a);
	if (!a->sink.n && timeout_ms != 0) {
		pthread_mutex_unlock(&a->lock);
		epoll_wait(a->epoll_fd, ev, 4, timeout_ms);
		if (read(a->wake_fd, &v, sizeof(v)) < 0)
			(void)0; /* not woken through it */
		pthread_mutex_lock(&a->lock);
		a->sink.exclude_tid = a->exclude_reader ? gettid() : 0;
		drain(a);
	}
	n = (int)a->sink.n;
	*recs = a->sink.recs;
	a->delivered += a->sink.n;
	a->sink.recs = NULL;
	a->sink.n = a->sink.cap = 0;
	pthread_mutex_unlock(&a->lock);
	return n;
}

void kp_act_stats(struct kp_activity *a, struct KperfActivityStats *st)
{
	uint64_t dropped = 0, filtered = 0;

	memset(st, 0, sizeof(*st));
	pthread_mutex_lock(&a->lock);
	if (a->mstx) {
		kp_mstx_bpf_counters(a->mstx, &dropped, &filtered);
		st->probes = kp_mstx_bpf_nprobes(a->mstx);
	}
	if (a->sys) {
		dropped += kp_act_sys_dropped(a->sys);
		st->fallback = kp_act_sys_fallback(a->sys);
	}
	st->records = a->delivered;
	st->dropped = dropped;
	st->filtered = filtered;
	st->probeFiles = a->probe_files;
	st->bufferKb = (unsigned)(a->ringbuf_bytes >> 10);
	pthread_mutex_unlock(&a->lock);
}

static int set_domain(struct kp_activity *a, const char *name, bool disabled)
{
	int err;

	if (!a->mstx)
		return kp_fail(KPERF_ERR_INVALID_ARG, -EINVAL,
			       "this activity collection has no MARKER kind: domains apply to "
			       "markers");
	if (!name || !*name)
		return kp_fail(KPERF_ERR_INVALID_ARG, -EINVAL, "a domain name cannot be %s",
			       name ? "empty" : "NULL");
	pthread_mutex_lock(&a->lock);
	err = kp_mstx_bpf_set_domain(a->mstx, name, disabled);
	pthread_mutex_unlock(&a->lock);
	return err;
}

void kp_act_close(struct kp_activity *a)
{
	if (!a)
		return;
	kp_mstx_bpf_close(a->mstx);
	kp_act_sys_close(a->sys);
	if (a->epoll_fd >= 0)
		close(a->epoll_fd);
	if (a->wake_fd >= 0)
		close(a->wake_fd);
	free(a->sink.recs);
	pthread_mutex_destroy(&a->lock);
	free(a);
}

/* ---- the public API ---- */

static void destroy(void *obj)
{
	kp_act_close(obj);
}

static const struct kp_handle_ops activity_ops = { .destroy = destroy };

int KperfActivityOpen(const enum KperfActivityKind *kinds, unsigned numKinds,
		      const struct KperfActivityOpts *opts)
{
	struct KperfActivityOpts o;
	struct kp_activity *a;
	int err, ad;

	kp_clear();
	err = kp_opts_copy(&o, sizeof(o), opts, opts ? opts->sz : 0, "KperfActivityOpts");
	if (!err)
		err = kp_act_open(kinds, numKinds, &o, &a);
	if (err)
		return kp_public_fail(err);
	ad = kp_handle_add(KP_HANDLE_ACTIVITY, a, &activity_ops);
	if (ad < 0) {
		kp_act_close(a);
		return kp_public_fail(ad);
	}
	return ad;
}

static int enable(int ad, bool on)
{
	struct kp_activity *a;
	int err;

	kp_clear();
	a = kp_handle_get(ad, KP_HANDLE_ACTIVITY);
	if (!a)
		return -1;
	err = kp_act_enable(a, on);
	kp_handle_put(a);
	return err ? kp_public_fail(err) : SUCCESS;
}

int KperfActivityEnable(int ad)
{
	return enable(ad, true);
}

int KperfActivityDisable(int ad)
{
	return enable(ad, false);
}

static int domain(int ad, const char *name, bool disabled)
{
	struct kp_activity *a;
	int err;

	kp_clear();
	a = kp_handle_get(ad, KP_HANDLE_ACTIVITY);
	if (!a)
		return -1;
	err = set_domain(a, name, disabled);
	kp_handle_put(a);
	return err ? kp_public_fail(err) : SUCCESS;
}

int KperfActivityEnableDomain(int ad, const char *name)
{
	return domain(ad, name, false);
}

int KperfActivityDisableDomain(int ad, const char *name)
{
	return domain(ad, name, true);
}

static void release(void *ptr)
{
	free(ptr);
}

/* One block: the records, then their strings. */
static int build(const struct kp_act_rec *recs, int n, struct KperfActivityRecord **out)
{
	struct KperfActivityRecord *arr;
	size_t strings = 0, off;
	char *p;
	int i;

	for (i = 0; i < n; i++)
		strings += strlen(recs[i].comm) + strlen(recs[i].domain) + strlen(recs[i].name) +
			   strlen(recs[i].channel) + 4;
	off = (size_t)n * sizeof(*arr);
	arr = malloc(off + strings);
	if (!arr)
		return kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
	p = (char *)arr + off;
	for (i = 0; i < n; i++) {
		arr[i] = recs[i].r;
		arr[i].comm = p;
		p = stpcpy(p, recs[i].comm) + 1;
		arr[i].domain = p;
		p = stpcpy(p, recs[i].domain) + 1;
		arr[i].name = p;
		p = stpcpy(p, recs[i].name) + 1;
		arr[i].channel = p;
		p = stpcpy(p, recs[i].channel) + 1;
	}
	if (kp_registry_add(arr, release)) {
		free(arr);
		return kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
	}
	*out = arr;
	return 0;
}

int KperfActivityRead(int ad, int timeoutMs, struct KperfActivityRecord **records)
{
	struct kp_act_rec *recs = NULL;
	struct kp_activity *a;
	int n, err = 0;

	kp_clear();
	if (!records)
		return kp_public_fail(kp_fail(LIBPERF_ERR_NULL_POINTER, -EINVAL,
					      "KperfActivityRead: records is NULL"));
	*records = NULL;
	if (timeoutMs < -1)
		return kp_public_fail(kp_fail(KPERF_ERR_INVALID_ARG, -EINVAL,
					      "KperfActivityRead: timeoutMs %d is below -1",
					      timeoutMs));
	a = kp_handle_get(ad, KP_HANDLE_ACTIVITY);
	if (!a)
		return -1;
	n = kp_act_read(a, timeoutMs, &recs);
	if (n > 0)
		err = build(recs, n, records);
	free(recs);
	kp_handle_put(a);
	if (n < 0 || err)
		return kp_public_fail(n < 0 ? n : err);
	return n;
}

void KperfActivityFree(struct KperfActivityRecord *records)
{
	if (records)
		kp_registry_release(records);
}

int KperfActivityGetStats(int ad, struct KperfActivityStats *stats)
{
	struct kp_activity *a;

	kp_clear();
	if (!stats)
		return kp_public_fail(kp_fail(LIBPERF_ERR_NULL_POINTER, -EINVAL,
					      "KperfActivityGetStats: stats is NULL"));
	a = kp_handle_get(ad, KP_HANDLE_ACTIVITY);
	if (!a)
		return -1;
	kp_act_stats(a, stats);
	kp_handle_put(a);
	return SUCCESS;
}

void KperfActivityClose(int ad)
{
	struct kp_activity *a;
	uint64_t one = 1;

	kp_clear();
	a = kp_handle_get(ad, KP_HANDLE_ACTIVITY);
	if (!a)
		return;
	/* a reader waiting in KperfActivityRead holds the object: wake it so it lets go */
	if (write(a->wake_fd, &one, sizeof(one)) < 0)
		(void)0;
	kp_handle_put(a);
	kp_handle_close(ad, KP_HANDLE_ACTIVITY);
}
