/*
 * trace_read.c - what a trace task hands out: its per-call records (PmuTraceRead, with their
 * stacks and the extension KperfTraceGetExt), its summary (PmuTraceReadSummary,
 * KperfTraceForget), its counters (PmuTraceGetStats) and the warnings they call for. The task
 * itself, its poller and its life cycle are trace.c's.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "core/pidns.h"
#include "kperf/kperf.h"
#include "stack_capture.h"
#include "trace.h"

#define NAME_SLOT 24 /* "syscall_1023", a comm or KP_PIDNS_OUTSIDE_COMM, NUL included */

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
			"%llu calls are counted in the summary by stack without their process and "
			"stack (pid 0, " KPERF_TRACE_STACK_NOMEM "): the kernel could not allocate "
			"their rows at that moment (-ENOMEM, the map was not full) and the ring that "
			"brings such calls to their rows was full",
			(unsigned long long)c[KP_CNT_STACK_SUMMARY_NOMEM]);
	if (c[KP_CNT_STATE_FULL])
		kp_warn(KPERF_WARN_SUMMARY_FULL,
			"%llu calls were not counted: their start times could not be stored",
			(unsigned long long)c[KP_CNT_STATE_FULL]);
	if (c[KP_CNT_STACK_SUMMARY_FULL])
		kp_warn(KPERF_WARN_SUMMARY_FULL,
			"%llu calls are counted in the summary by stack without their process and "
			"stack (pid 0, " KPERF_TRACE_STACK_FULL "): its map was full (raise "
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
	kp_trace_consume(t);
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

/* output row <i> of a summary from row <i> of the rows read: <comm> and <name> are NAME_SLOTs
 * for its labels */
typedef void summary_fill_fn(void *out, const void *rows, int i, char *comm, char *name);

/* one summary, whatever its key (process, or cgroup and command) */
struct summary_kind {
	size_t out_size; /* of an output row */
	int (*read)(struct kp_sys_bpf *b, void **rows); /* malloc'd; their count or -errno */
	summary_fill_fn *fill;
	int (*cmp)(const void *, const void *);
};

/* the counts of a row, its syscall <nr> and its labels */
static struct PmuTraceSummary stat_row(int nr, const char *comm, const struct kp_sys_stat *st,
				       char *name)
{
	struct PmuTraceSummary s = {
		.funcs = syscall_label(nr, name),
		.nr = nr,
		.comm = comm,
		.calls = st->calls,
		.errors = st->errors,
		.totalNs = st->total_ns,
		.minNs = st->min_ns,
		.maxNs = st->max_ns,
	};

	memcpy(s.hist, st->hist, sizeof(s.hist));
	return s;
}

/* The summary of trace <pd> as <k> has it, into *out (one registered block: the rows, then
 * two NAME_SLOTs each; NULL when none or on failure); the number of rows, or -1. */
static int read_summary(int pd, bool has_out, void **out, const struct summary_kind *k)
{
	char *s = NULL, *pool;
	void *rows = NULL;
	struct kp_trace *t;
	int n, i;

	kp_clear();
	*out = NULL;
	if (!has_out)
		return kp_fail(LIBPERF_ERR_NULL_POINTER, -EINVAL, "the output pointer is NULL"), -1;
	t = kp_handle_get(pd, KP_HANDLE_TRACE);
	if (!t)
		return -1;
	pthread_mutex_lock(&t->lock);
	n = k->read(t->bpf, &rows);
	if (n > 0) {
		s = malloc((size_t)n * (k->out_size + 2 * NAME_SLOT));
		if (!s)
			n = kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
	}
	for (i = 0; i < n; i++) {
		pool = s + (size_t)n * k->out_size + (size_t)i * 2 * NAME_SLOT;
		k->fill(s + (size_t)i * k->out_size, rows, i, pool, pool + NAME_SLOT);
	}
	if (n > 0) {
		qsort(s, (size_t)n, k->out_size, k->cmp);
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

static int read_by_process(struct kp_sys_bpf *b, void **rows)
{
	struct kp_sys_row *r = NULL;
	int n = kp_sys_bpf_summary(b, &r);

	*rows = r;
	return n;
}

static void fill_by_process(void *out, const void *rows, int i, char *comm, char *name)
{
	const struct kp_sys_row *r = (const struct kp_sys_row *)rows + i;
	struct PmuTraceSummary *s = out;
	bool overflow = r->key.tgid == KP_SYS_OVERFLOW_TGID || r->key.tgid == KP_SYS_NOMEM_TGID;

	comm_label(comm, r->key.tgid, r->stat.comm);
	*s = stat_row((int)r->key.nr, comm, &r->stat, name);
	s->pid = overflow ? 0 : (pid_t)r->key.tgid;
}

KP_EXPORT int PmuTraceReadSummary(int pd, struct PmuTraceSummary **out)
{
	static const struct summary_kind k = { sizeof(**out), read_by_process, fill_by_process,
					       cmp_summary };
	void *rows;
	int n = read_summary(pd, out != NULL, &rows, &k);

	if (out)
		*out = rows;
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

static int read_by_cgroup(struct kp_sys_bpf *b, void **rows)
{
	struct kp_sys_cg_row *r = NULL;
	int n = kp_sys_bpf_cg_summary(b, &r);

	*rows = r;
	return n;
}

static void fill_by_cgroup(void *out, const void *rows, int i, char *comm, char *name)
{
	const struct kp_sys_cg_row *r = (const struct kp_sys_cg_row *)rows + i;
	struct KperfTraceCgroupSummary *s = out;

	comm_label(comm,
		   r->kind				     ? r->kind :
		   r->key.cgid == KPERF_TRACE_CGROUP_OUTSIDE ? KP_PID_OUTSIDE :
							       0,
		   r->key.comm);
	s->cgroupId = r->key.cgid;
	s->s = stat_row((int)r->key.nr, comm, &r->stat, name);
}

KP_EXPORT int KperfTraceReadCgroupSummary(int pd, struct KperfTraceCgroupSummary **out)
{
	static const struct summary_kind k = { sizeof(**out), read_by_cgroup, fill_by_cgroup,
					       cmp_cg_summary };
	void *rows;
	int n = read_summary(pd, out != NULL, &rows, &k);

	if (out)
		*out = rows;
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
