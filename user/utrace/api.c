/*
 * api.c - UTraceOpen/Enable/Disable/Read/DataFree/Close (libkperf's user function tracing) and
 * kperf-bpf's KperfUTraceOpen/KperfUTraceGetStats.
 *
 * UTraceOpen sorts the caller's symbol sources the way libkperf does (kernel functions, Java
 * methods, native functions), resolves the native ones to probe addresses, loads the BPF
 * program and places every uprobe at once, so that a probe the kernel refuses fails the open,
 * as a refused tracefs probe does in libkperf. The program records nothing until UTraceEnable.
 * While enabled, a poller thread drains the ring buffer into a store and tells each hit's
 * function from its address (a process's mappings are best read while it is alive);
 * UTraceRead hands out everything since the previous read in time order.
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

#include "core/core.h"
#include "kperf/kperf.h"
#include "utrace.h"

#define DEFAULT_RINGBUF_KB 16384
#define MAX_RINGBUF_KB (1U << 20) /* 1 GiB */
#define POLL_MS 100
/* hits kept between two reads before new ones count as dropped (about 600 MiB) */
#define MAX_STORED (8U << 20)
#define COMM_SLOT (KP_UT_COMM_LEN + 1)

/* one hit, with the site the address belongs to */
struct hit {
	struct kp_ut_event e;
	const struct kp_ut_site *site;
	const char *path; /* the module as the process maps it (the resolver's string) */
	uint64_t seq; /* arrival order, to keep the sort stable */
};

struct kp_utrace {
	pthread_mutex_t lock; /* serialises API calls on this task */
	pthread_mutex_t rb_lock; /* the ring buffer, the resolver and the store */
	struct kp_ut_plan *plan;
	struct kp_ut_resolver *res;
	struct kp_ut_bpf *bpf;
	bool enabled;

	struct hit *hits; /* the store */
	size_t nhits, cap;
	uint64_t seq;
	uint64_t store_dropped; /* hits lost because the store was full */
	uint64_t unattributed;
	uint64_t delivered;
	uint64_t lost_warned; /* dropped + unattributed already reported */

	pthread_t poller;
	bool poller_on;
	int wake_fd; /* eventfd that stops the poller */
	int epoll_fd; /* the ring buffer and wake_fd */
	atomic_bool stop;
};

/* ---- the store and its poller ---- */

/* ring buffer callback, with rb_lock held */
static void store_hit(void *ctx, const struct kp_ut_event *e)
{
	struct kp_utrace *t = ctx;
	const struct kp_ut_site *site;
	const char *path;

	if (e->site) {
		/* the cookie names the site; the path as the process maps it when known */
		if (e->site > t->plan->nsites) {
			t->unattributed++;
			return;
		}
		site = &t->plan->sites[e->site - 1];
		if (kp_ut_resolve(t->res, e->tgid, e->ip, false, &path) != site)
			path = t->plan->modules[site->module].path;
	} else {
		site = kp_ut_resolve(t->res, e->tgid, e->ip, true, &path);
		if (!site) {
			t->unattributed++;
			return;
		}
	}
	if (t->nhits >= MAX_STORED ||
	    kp_grow((void **)&t->hits, &t->cap, t->nhits + 1, sizeof(*t->hits))) {
		t->store_dropped++;
		return;
	}
	t->hits[t->nhits++] = (struct hit){ *e, site, path, t->seq++ };
}

static void drain(struct kp_utrace *t)
{
	pthread_mutex_lock(&t->rb_lock);
	kp_ut_bpf_consume(t->bpf);
	pthread_mutex_unlock(&t->rb_lock);
}

static void *poller_main(void *arg)
{
	struct kp_utrace *t = arg;
	struct epoll_event ev[2];

	while (!atomic_load(&t->stop)) {
		/* woken early when a quarter of the ring buffer is full */
		epoll_wait(t->epoll_fd, ev, 2, POLL_MS);
		drain(t);
	}
	return NULL;
}

static int start_poller(struct kp_utrace *t)
{
	struct epoll_event ev = { .events = EPOLLIN };
	int err;

	if (t->poller_on)
		return 0;
	if (t->epoll_fd < 0) {
		t->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		t->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
		if (t->wake_fd < 0 || t->epoll_fd < 0)
			return kp_fail(UNKNOWN_ERROR, -errno, "cannot create the poller: %s",
				       strerror(errno));
		ev.data.fd = t->wake_fd;
		epoll_ctl(t->epoll_fd, EPOLL_CTL_ADD, t->wake_fd, &ev);
		ev.data.fd = kp_ut_bpf_epoll_fd(t->bpf);
		if (epoll_ctl(t->epoll_fd, EPOLL_CTL_ADD, ev.data.fd, &ev))
			return kp_fail(UNKNOWN_ERROR, -errno, "cannot poll the ring buffer: %s",
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

static void stop_poller(struct kp_utrace *t)
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

static void utrace_destroy(void *obj)
{
	struct kp_utrace *t = obj;

	stop_poller(t);
	kp_ut_bpf_close(t->bpf); /* detaches every probe */
	kp_ut_resolver_free(t->res);
	kp_ut_plan_free(t->plan);
	if (t->wake_fd >= 0)
		close(t->wake_fd);
	if (t->epoll_fd >= 0)
		close(t->epoll_fd);
	free(t->hits);
	pthread_mutex_destroy(&t->lock);
	pthread_mutex_destroy(&t->rb_lock);
	free(t);
}

static const struct kp_handle_ops utrace_ops = { .destroy = utrace_destroy };

/* ---- sorting the symbol sources ---- */

struct sources {
	const struct SymbolSource **native;
	unsigned nnative;
	const char *kernel[4]; /* a few kernel function names, for the message */
	unsigned nkernel;
	unsigned njava;
};

static bool is_kernel_module(const char *m)
{
	return !strcmp(m, "[kernel]") || !strcmp(m, "kernel") || !strcmp(m, "vmlinux");
}

/* libkperf's Java forms: "L<class>;::<method>" anywhere in the symbol, or a module that
 * starts with 'L' (a class descriptor such as "Lcom/example/Foo;") */
static bool is_java(const char *module, const char *symbol)
{
	const char *s, *semi;

	for (s = strchr(symbol, 'L'); s; s = strchr(s + 1, 'L')) {
		semi = strchr(s + 1, ';');
		if (semi && semi > s + 1 && semi[1] == ':' && semi[2] == ':' && semi[3] &&
		    !strchr("() \t\n\v\f\r", semi[3]))
			return true;
	}
	return module[0] == 'L' && strcmp(module, "L;");
}

static int sort_sources(const struct UTraceAttr *a, struct sources *s)
{
	unsigned i;

	memset(s, 0, sizeof(*s));
	if (!a->symSrc || !a->numSym)
		return 0;
	s->native = calloc(a->numSym, sizeof(*s->native));
	if (!s->native)
		return kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
	for (i = 0; i < a->numSym; i++) {
		const struct SymbolSource *src = &a->symSrc[i];
		const char *m = src->moduleName, *n = src->symbolName;

		/* libkperf skips entries it cannot name, silently */
		if (!m || !*m || !n || !*n || !strcmp(n, "UNKNOWN") || !strcmp(m, "UNKNOWN"))
			continue;
		if (is_kernel_module(m)) {
			if (s->nkernel < KP_ARRAY_SIZE(s->kernel))
				s->kernel[s->nkernel] = n;
			s->nkernel++;
		} else if (is_java(m, n)) {
			s->njava++;
		} else {
			s->native[s->nnative++] = src;
		}
	}
	return 0;
}

/* libkperf's test: "java" or "jdk" in the command line, or libjvm.so mapped */
static bool is_jvm(int pid)
{
	char path[64], *buf = NULL;
	size_t len = 0, i;
	bool jvm = false;

	snprintf(path, sizeof(path), "/proc/%d/cmdline", pid);
	if (!kp_read_file(path, &buf, &len)) {
		for (i = 0; i < len; i++)
			if (!buf[i])
				buf[i] = ' ';
		jvm = strstr(buf, "java") || strstr(buf, "jdk");
		free(buf);
	}
	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	if (!jvm && !kp_read_file(path, &buf, NULL)) {
		jvm = strstr(buf, "libjvm.so") != NULL;
		free(buf);
	}
	return jvm;
}

static void kernel_list(const struct sources *s, char *buf, size_t size)
{
	size_t used = 0;
	unsigned i;

	buf[0] = '\0';
	for (i = 0; i < s->nkernel && i < KP_ARRAY_SIZE(s->kernel); i++)
		used += (size_t)snprintf(buf + used, used < size ? size - used : 0, "%s%s",
					 i ? ", " : "", s->kernel[i]);
	if (s->nkernel > KP_ARRAY_SIZE(s->kernel) && used < size)
		snprintf(buf + used, size - used, ", ... (%u in all)", s->nkernel);
}

/* ---- open ---- */

static size_t ringbuf_bytes(unsigned kb)
{
	size_t bytes = (size_t)(kb ? kb : DEFAULT_RINGBUF_KB) << 10, p = (size_t)getpagesize();

	while (p < bytes)
		p <<= 1;
	return p;
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

/* the thread groups of the caller's pids, sorted and distinct; pids that do not exist are
 * left out (<strict> false) or fail with libkperf's codes */
static int pid_tgids(const struct UTraceAttr *a, bool strict, int **out, unsigned *n)
{
	unsigned i, j = 0;
	int *v, tg;

	*out = NULL;
	*n = 0;
	v = calloc(a->numPid, sizeof(*v));
	if (!v)
		return kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
	for (i = 0; i < a->numPid; i++) {
		if (a->pidList[i] < 0 && strict) {
			free(v);
			return kp_fail(LIBPERF_ERR_INVALID_PIDLIST, -EINVAL,
				       "pidList[%u] is %d: pids are positive", i, a->pidList[i]);
		}
		tg = a->pidList[i] > 0 ? kp_pid_tgid(a->pidList[i]) : -ESRCH;
		if (tg < 0) {
			kp_clear_error();
			if (!strict)
				continue;
			free(v);
			/* libkperf's own words: its test compares them */
			return kp_fail(LIBPERF_ERR_INVALID_PID, -ESRCH,
				       "failed to find process by pid");
		}
		v[j++] = tg;
	}
	qsort(v, j, sizeof(*v), cmp_int);
	for (i = 0, *n = 0; i < j; i++)
		if (!*n || v[*n - 1] != v[i])
			v[(*n)++] = v[i];
	*out = v;
	return 0;
}

static void on_hit(void *ctx, const struct kp_ut_event *e)
{
	store_hit(ctx, e);
}

/* every site in every process its module is probed in */
static int attach_all(struct kp_utrace *t)
{
	const struct kp_ut_plan *p = t->plan;
	size_t s;
	unsigned i;
	int err;

	for (s = 0; s < p->nsites; s++) {
		const struct kp_ut_site *site = &p->sites[s];
		const struct kp_ut_module *m = &p->modules[site->module];
		const int *tg = m->all_targets ? p->tgids : m->tgids;
		unsigned n = m->all_targets ? p->ntgids : m->ntgids;

		for (i = 0; i < n; i++) {
			err = kp_ut_bpf_attach(t->bpf, m->open_path, site->off, tg[i],
					       (uint32_t)(s + 1));
			if (!err)
				continue;
			if (kp_failed())
				return err;
			if (err == -ESRCH)
				return kp_fail(LIBPERF_ERR_INVALID_PID, err,
					       "pid %d exited while its probes were placed", tg[i]);
			return kp_fail(LIBPERF_ERR_UTRACE_PROBE_REGISTER_FAILED, err,
				       "the kernel refused a uprobe at %s+0x%llx (%s of %s) in pid "
				       "%d: %s",
				       m->path, (unsigned long long)site->off,
				       site->roles[0].is_ret ? "a return" : "the entry",
				       site->roles[0].func, tg[i], strerror(-err));
		}
	}
	return 0;
}

static int check_attr(const struct UTraceAttr *a, const struct KperfUTraceOpts *x)
{
	if (!a)
		return kp_fail(LIBPERF_ERR_NULL_POINTER, -EINVAL, "UTraceAttr is NULL");
	if (!a->pidList || !a->numPid)
		return kp_fail(LIBPERF_ERR_NULL_POINTER, -EINVAL,
			       "UTraceAttr.pidList is empty: name the processes to trace "
			       "(pidList, numPid)");
	if (x->ringBufferKb > MAX_RINGBUF_KB)
		return kp_fail(KPERF_ERR_INVALID_ATTR, -EINVAL,
			       "ringBufferKb %u is too large (at most %u, 1 GiB)", x->ringBufferKb,
			       MAX_RINGBUF_KB);
	return 0;
}

/* the kinds of symbols kperf-bpf does not trace, refused or warned about as libkperf does
 * when its backend for them fails */
static int check_kinds(const struct UTraceAttr *a, const struct sources *s)
{
	char list[256];

	if (s->njava) {
		if (!is_jvm(a->pidList[0]))
			return kp_fail(LIBPERF_ERR_UTRACE_JAVA_PROCESS_FAILED, -EINVAL,
				       "%u Java method(s) were asked for, but pid %d is not a JVM",
				       s->njava, a->pidList[0]);
		return kp_fail(KPERF_ERR_NOT_SUPPORTED, -EOPNOTSUPP,
			       "tracing Java methods (%u asked for) is not implemented by "
			       "kperf-bpf",
			       s->njava);
	}
	if (!s->nnative && !s->nkernel)
		return kp_fail(
			LIBPERF_ERR_INVALID_TRACE_CONF, -EINVAL,
			a->numSym && a->symSrc ?
				"no symbol to trace: no entry of symSrc has both a moduleName "
				"and a symbolName" :
				"no symbol to trace: symSrc is NULL or numSym is 0");
	kernel_list(s, list, sizeof(list));
	if (!s->nnative)
		return kp_fail(LIBPERF_ERR_KERNEL_TRACE_FAILED, -EOPNOTSUPP,
			       "kernel functions (%s) cannot be traced: kperf-bpf traces user "
			       "functions (uprobes) only",
			       list);
	return 0;
}

KP_EXPORT int UTraceOpen(struct UTraceAttr *attr)
{
	return KperfUTraceOpen(attr, NULL);
}

KP_EXPORT int KperfUTraceOpen(struct UTraceAttr *attr, const struct KperfUTraceOpts *opts)
{
	struct kp_ut_bpf_opts bo = { 0 };
	struct KperfUTraceOpts x;
	struct kp_ut_plan *plan = NULL;
	struct kp_utrace *t = NULL;
	struct sources src = { 0 };
	int *tgids = NULL, err, pd;
	unsigned ntgids;
	char list[256];

	kp_clear();
	err = kp_opts_copy(&x, sizeof(x), opts, opts ? opts->sz : 0, "KperfUTraceOpts");
	if (!err)
		err = check_attr(attr, &x);
	if (!err)
		err = sort_sources(attr, &src);
	if (!err)
		err = check_kinds(attr, &src);
	/* libkperf resolves the ELF files before it looks at the pids: same order here, with
	 * the processes that exist (library names are looked up in their mappings) */
	if (!err)
		err = pid_tgids(attr, false, &tgids, &ntgids);
	if (!err)
		err = kp_ut_plan_build(src.native, src.nnative, tgids, ntgids, &plan);
	free(tgids);
	tgids = NULL;
	if (!err)
		err = pid_tgids(attr, true, &tgids, &ntgids);
	if (!err && src.nkernel) {
		kernel_list(&src, list, sizeof(list));
		kp_warn(LIBPERF_WARN_UTRACE_KERNEL_FAILED,
			"kernel functions (%s) are not traced: kperf-bpf traces user functions "
			"(uprobes) only",
			list);
	}
	if (!err)
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
	t->wake_fd = t->epoll_fd = -1;
	t->plan = plan;
	plan = NULL;
	err = kp_ut_resolver_new(t->plan, &t->res);
	if (err)
		goto out;
	bo.tgids = tgids;
	bo.ntgids = ntgids;
	bo.fetch_g = attr->fetchG != 0;
	bo.ringbuf_bytes = ringbuf_bytes(x.ringBufferKb);
	bo.on_event = on_hit;
	bo.ctx = t;
	err = kp_ut_bpf_open(&bo, &t->bpf);
	if (!err)
		err = attach_all(t);
	if (err)
		goto out;
	pd = kp_handle_add(KP_HANDLE_UTRACE, t, &utrace_ops);
	if (pd < 0) {
		err = pd;
		goto out;
	}
	free(tgids);
	free(src.native);
	return pd;
out:
	if (t)
		utrace_destroy(t);
	kp_ut_plan_free(plan);
	free(tgids);
	free(src.native);
	return kp_public_fail(err);
}

/* ---- enable, disable ---- */

KP_EXPORT int UTraceEnable(int pd)
{
	struct kp_utrace *t;
	int err = 0;

	kp_clear();
	t = kp_handle_get(pd, KP_HANDLE_UTRACE);
	if (!t)
		return -1;
	pthread_mutex_lock(&t->lock);
	if (!t->enabled) {
		err = start_poller(t);
		if (!err) {
			kp_ut_bpf_set_enabled(t->bpf, true);
			t->enabled = true;
		}
	}
	pthread_mutex_unlock(&t->lock);
	kp_handle_put(t);
	return err ? kp_public_fail(err) : 0;
}

KP_EXPORT int UTraceDisable(int pd)
{
	struct kp_utrace *t;

	kp_clear();
	t = kp_handle_get(pd, KP_HANDLE_UTRACE);
	if (!t)
		return -1;
	pthread_mutex_lock(&t->lock);
	if (t->enabled) {
		kp_ut_bpf_set_enabled(t->bpf, false);
		stop_poller(t);
		drain(t);
		t->enabled = false;
	}
	pthread_mutex_unlock(&t->lock);
	kp_handle_put(t);
	return 0;
}

/* ---- read ---- */

static void warn_lost(struct kp_utrace *t)
{
	uint64_t dropped = kp_ut_bpf_dropped(t->bpf) + t->store_dropped, lost;

	lost = dropped + t->unattributed;
	if (lost <= t->lost_warned)
		return;
	kp_warn(KPERF_WARN_RECORDS_DROPPED,
		"%llu probe hits were lost since the last read (%llu dropped and %llu "
		"unattributed so far): %s",
		(unsigned long long)(lost - t->lost_warned), (unsigned long long)dropped,
		(unsigned long long)t->unattributed,
		dropped ? "the ring buffer was full; read more often or give KperfUTraceOpen a "
			  "larger ringBufferKb" :
			  "a process exited before the mappings of a library it loaded after "
			  "UTraceOpen were read");
	t->lost_warned = lost;
}

static int cmp_hit(const void *a, const void *b)
{
	const struct hit *x = a, *y = b;

	if (x->e.ts_ns != y->e.ts_ns)
		return x->e.ts_ns < y->e.ts_ns ? -1 : 1;
	return (x->seq > y->seq) - (x->seq < y->seq);
}

/*
 * A UTraceRead array is one block: a header, the records, a comm per hit, then each distinct
 * module path and function name once. The registry knows the records' address.
 */
struct rec_block {
	size_t n;
	/* keeps the records that follow aligned as malloc's own memory */
	max_align_t align[];
};

static void release_records(void *p)
{
	free((char *)p - sizeof(struct rec_block));
}

/* where each distinct string goes in the block: <strs> maps the resolver's or the plan's
 * pointer to its offset + 1 in the pool */
static size_t pool_reserve(struct kp_map *strs, const char *s, size_t *pool_len)
{
	struct kp_map_slot *slot;
	bool created;

	slot = kp_map_slot(strs, s, &created);
	if (!slot)
		return 0;
	if (created) {
		slot->val = (void *)(uintptr_t)(*pool_len + 1);
		*pool_len += strlen(s) + 1;
	}
	return (size_t)(uintptr_t)slot->val;
}

static struct UTraceData *build_records(const struct hit *hits, size_t nhits, size_t *nout)
{
	struct kp_map strs;
	size_t n = 0, pool_len = 0, i, k, j = 0;
	struct rec_block *blk = NULL;
	struct UTraceData *d;
	char *comms, *pool;
	bool oom = false;

	kp_map_init(&strs, false);
	for (i = 0; i < nhits && !oom; i++) {
		n += hits[i].site->nroles;
		oom = !pool_reserve(&strs, hits[i].path, &pool_len);
		for (k = 0; k < hits[i].site->nroles && !oom; k++)
			oom = !pool_reserve(&strs, hits[i].site->roles[k].func, &pool_len);
	}
	if (!oom)
		blk = malloc(sizeof(*blk) + n * sizeof(*d) + nhits * COMM_SLOT + pool_len);
	if (!blk) {
		kp_map_free(&strs);
		return NULL;
	}
	blk->n = n;
	d = (struct UTraceData *)(blk + 1);
	comms = (char *)(d + n);
	pool = comms + nhits * COMM_SLOT;
	for (i = 0; i < strs.cap; i++)
		if (strs.slots[i].key)
			strcpy(pool + (uintptr_t)strs.slots[i].val - 1, strs.slots[i].key);
	for (i = 0; i < nhits; i++) {
		const struct hit *h = &hits[i];
		char *comm = comms + i * COMM_SLOT;

		memcpy(comm, h->e.comm, KP_UT_COMM_LEN);
		comm[KP_UT_COMM_LEN] = '\0';
		for (k = 0; k < h->site->nroles; k++)
			d[j++] = (struct UTraceData){
				.addr = (unsigned long)h->e.ip,
				.comm = comm,
				.tid = (int)h->e.tid,
				.cpu = (int)h->e.cpu,
				.timestamp = (int64_t)h->e.ts_ns,
				.gPtr = h->e.g,
				.module = pool + (uintptr_t)kp_map_get(&strs, h->path) - 1,
				.func = pool +
					(uintptr_t)kp_map_get(&strs, h->site->roles[k].func) - 1,
				.isRet = h->site->roles[k].is_ret,
			};
	}
	kp_map_free(&strs);
	*nout = n;
	return d;
}

KP_EXPORT int UTraceRead(int pd, struct UTraceData **traceData)
{
	struct UTraceData *d = NULL;
	struct kp_utrace *t;
	struct hit *hits;
	size_t nhits, n = 0;

	kp_clear();
	if (!traceData)
		return kp_fail(LIBPERF_ERR_NULL_POINTER, -EINVAL, "traceData is NULL"), -1;
	*traceData = NULL;
	t = kp_handle_get(pd, KP_HANDLE_UTRACE);
	if (!t)
		return -1;
	pthread_mutex_lock(&t->lock);
	pthread_mutex_lock(&t->rb_lock);
	kp_ut_bpf_consume(t->bpf);
	hits = t->hits;
	nhits = t->nhits;
	t->hits = NULL;
	t->nhits = t->cap = 0;
	pthread_mutex_unlock(&t->rb_lock);

	if (nhits) {
		qsort(hits, nhits, sizeof(*hits), cmp_hit);
		d = build_records(hits, nhits, &n);
		if (!d || kp_registry_add(d, release_records)) {
			/* keep nothing half-done: these hits are lost, and said so */
			if (d)
				release_records(d);
			t->store_dropped += nhits;
			free(hits);
			pthread_mutex_unlock(&t->lock);
			kp_handle_put(t);
			kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory for %zu records", nhits);
			return -1;
		}
		t->delivered += n;
	}
	free(hits);
	warn_lost(t);
	pthread_mutex_unlock(&t->lock);
	kp_handle_put(t);
	*traceData = d;
	return (int)n;
}

KP_EXPORT void UTraceDataFree(struct UTraceData *traceData)
{
	kp_registry_release(traceData);
}

KP_EXPORT void UTraceClose(int pd)
{
	kp_clear();
	kp_handle_close(pd, KP_HANDLE_UTRACE);
}

KP_EXPORT int KperfUTraceGetStats(int pd, struct KperfUTraceStats *stats)
{
	struct kp_utrace *t;

	kp_clear();
	if (!stats)
		return kp_fail(LIBPERF_ERR_NULL_POINTER, -EINVAL, "stats is NULL"), -1;
	t = kp_handle_get(pd, KP_HANDLE_UTRACE);
	if (!t)
		return -1;
	pthread_mutex_lock(&t->lock);
	pthread_mutex_lock(&t->rb_lock);
	memset(stats, 0, sizeof(*stats));
	stats->records = t->delivered;
	stats->dropped = kp_ut_bpf_dropped(t->bpf) + t->store_dropped;
	stats->unattributed = t->unattributed;
	pthread_mutex_unlock(&t->rb_lock);
	stats->probes = kp_ut_bpf_nprobes(t->bpf);
	stats->ringBufferKb = (unsigned)(kp_ut_bpf_ringbuf_bytes(t->bpf) >> 10);
	pthread_mutex_unlock(&t->lock);
	kp_handle_put(t);
	return 0;
}
