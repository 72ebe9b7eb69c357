/*
 * write.c - a recording as msMemScope's dump: the events in time order, one row each, with
 * the columns of kp_ms_columns, into a CSV file or a SQLite database (sqlite.c).
 *
 * Blocks are matched here, in time order, per process: an allocation gets the next
 * allocation id; a free names the block it releases (its id and size; a block never seen
 * allocated has id 0); realloc is the free of the old block and the allocation of the new
 * one; munmap releases the parts of blocks it covers (a partial unmap leaves the rest of the
 * block alive under its id); a page fault, a syscall buffer or kperf_mem_access inside a live
 * block is an ACCESS of it (outside any block: not written). The last row is a SYSTEM row
 * with what was lost, zeros included, so that a file says whether it is complete.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <search.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "export/export.h"
#include "kperf/pcerrc.h"
#include "memscope.h"
#include "trace/trace.h"

const char *const kp_ms_columns[12] = {
	"ID",	     "Event",	  "Event Type", "Name", "Timestamp(ns)",      "Process Id",
	"Thread ID", "Device ID", "Ptr",	"Attr", "Call Stack(Python)", "Call Stack(C)",
};

struct blk {
	uint32_t tgid;
	uint64_t start, end; /* [start, end); end > start */
	uint64_t id;
	uint64_t size; /* bytes the block still holds */
};

/* live blocks never overlap in one process: overlap is equality, so a point finds its block */
static int blk_cmp(const void *pa, const void *pb)
{
	const struct blk *a = pa, *b = pb;

	if (a->tgid != b->tgid)
		return a->tgid < b->tgid ? -1 : 1;
	if (a->end <= b->start)
		return -1;
	if (a->start >= b->end)
		return 1;
	return 0;
}

static struct blk *find(void **root, uint32_t tgid, uint64_t start, uint64_t end)
{
	struct blk probe = { .tgid = tgid, .start = start, .end = end > start ? end : start + 1 };
	void *n = tfind(&probe, root, blk_cmp);

	return n ? *(struct blk **)n : NULL;
}

static int ev_cmp(const void *pa, const void *pb)
{
	const struct kp_ms_ev *a = *(const struct kp_ms_ev *const *)pa;
	const struct kp_ms_ev *b = *(const struct kp_ms_ev *const *)pb;

	if (a->ts != b->ts)
		return a->ts < b->ts ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* ---- rows ---- */

struct row {
	const char *event, *type, *name;
	uint64_t ts;
	uint32_t pid, tid;
	uint64_t ptr;
	bool has_ptr;
	char attr[512];
	const char *stack;
};

struct writer {
	struct kp_ms *m;
	struct kp_ms_sink *sink;
	uint64_t id; /* next row id */
	uint64_t next_alloc;
	void *blocks;
	const char *owner;
	uint64_t sample_bytes;
	struct kp_ms_stats *st;
	uint64_t last_ts;
};

static int emit(struct writer *w, struct row *r)
{
	char id[24], ts[24], pid[16], tid[16], ptr[24];
	const char *cols[12];

	snprintf(id, sizeof(id), "%" PRIu64, w->id++);
	snprintf(ts, sizeof(ts), "%" PRIu64, r->ts);
	snprintf(pid, sizeof(pid), "%u", r->pid);
	snprintf(tid, sizeof(tid), "%u", r->tid);
	if (r->has_ptr)
		snprintf(ptr, sizeof(ptr), "0x%" PRIx64, r->ptr);
	else
		ptr[0] = '\0';
	cols[0] = id;
	cols[1] = r->event;
	cols[2] = r->type;
	cols[3] = r->name;
	cols[4] = ts;
	cols[5] = pid;
	cols[6] = tid;
	cols[7] = "host";
	cols[8] = ptr;
	cols[9] = r->attr;
	cols[10] = "";
	cols[11] = r->stack ? r->stack : "";
	if (r->ts > w->last_ts)
		w->last_ts = r->ts;
	return kp_ms_sink_row(w->sink, cols);
}

static void row_init(struct row *r, const struct kp_ms_ev *e, const char *event, const char *type,
		     const char *name)
{
	memset(r, 0, sizeof(*r));
	r->event = event;
	r->type = type;
	r->name = name;
	r->ts = e->ts;
	r->pid = e->tgid;
	r->tid = e->tid;
}

static const char *heap_type(int func)
{
	return func == KP_MS_MMAP || func == KP_MS_MUNMAP ? "MMAP" : "HOST";
}

/* the bytes a sampled block of <size> stands for: size / P(sampled) */
static double weight(uint64_t size, uint64_t mean)
{
	double p;

	if (!mean)
		return (double)size;
	p = -expm1(-(double)size / (double)mean);
	return p > 0 ? (double)size / p : 0;
}

static int do_alloc(struct writer *w, const struct kp_ms_ev *e, uint64_t ptr, uint64_t size)
{
	struct blk *b, *old;
	struct row r;

	/* a live block in the way was freed unseen (before min_size, or a lost record) */
	while ((old = find(&w->blocks, e->tgid, ptr, ptr + size))) {
		tdelete(old, &w->blocks, blk_cmp);
		free(old);
	}
	b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	b->tgid = e->tgid;
	b->start = ptr;
	b->end = ptr + (size ? size : 1);
	b->size = size;
	b->id = ++w->next_alloc;
	if (!tsearch(b, &w->blocks, blk_cmp)) {
		free(b);
		return -ENOMEM;
	}
	row_init(&r, e, "MALLOC", heap_type(e->func), kp_ms_func_name(e->func));
	r.ptr = ptr;
	r.has_ptr = true;
	if (w->sample_bytes)
		snprintf(r.attr, sizeof(r.attr),
			 "{size:%" PRIu64 ",allocation_id:%" PRIu64 ",owner:%s,weight:%.0f}", size,
			 b->id, w->owner, weight(size, w->sample_bytes));
	else
		snprintf(r.attr, sizeof(r.attr),
			 "{size:%" PRIu64 ",allocation_id:%" PRIu64 ",owner:%s}", size, b->id,
			 w->owner);
	r.stack = kp_ms_str(w->m, e->stack);
	w->st->allocs++;
	return emit(w, &r);
}

static int do_free(struct writer *w, const struct kp_ms_ev *e, uint64_t ptr)
{
	struct blk *b = find(&w->blocks, e->tgid, ptr, ptr + 1);
	struct row r;
	int err;

	if (b && b->start != ptr)
		b = NULL; /* a pointer into a block is not its start: not this block */
	if (!b && (w->sample_bytes || kp_ms_options(w->m)->min_size))
		return 0; /* a block left out on purpose */
	row_init(&r, e, "FREE", heap_type(e->func), kp_ms_func_name(e->func));
	r.ptr = ptr;
	r.has_ptr = true;
	if (b)
		snprintf(r.attr, sizeof(r.attr), "{size:%" PRIu64 ",allocation_id:%" PRIu64 "}",
			 b->size, b->id);
	else
		snprintf(r.attr, sizeof(r.attr), "{allocation_id:0}");
	w->st->frees++;
	err = emit(w, &r);
	if (b) {
		tdelete(b, &w->blocks, blk_cmp);
		free(b);
	}
	return err;
}

/* munmap [addr, addr + len): every piece of a block it covers */
static int do_unmap(struct writer *w, const struct kp_ms_ev *e)
{
	uint64_t a = e->ptr, z = e->ptr + e->size;
	struct blk *b, *rest;
	struct row r;
	int err = 0;

	while (!err && e->size && (b = find(&w->blocks, e->tgid, a, z))) {
		uint64_t lo = b->start > a ? b->start : a, hi = b->end < z ? b->end : z;
		uint64_t piece = hi - lo;

		if (piece > b->size)
			piece = b->size;
		row_init(&r, e, "FREE", "MMAP", "munmap");
		r.ptr = lo;
		r.has_ptr = true;
		snprintf(r.attr, sizeof(r.attr), "{size:%" PRIu64 ",allocation_id:%" PRIu64 "}",
			 piece, b->id);
		w->st->frees++;
		err = emit(w, &r);
		tdelete(b, &w->blocks, blk_cmp);
		/* what is left on either side stays alive under the same id */
		if (!err && b->start < lo) {
			rest = malloc(sizeof(*rest));
			if (!rest)
				return -ENOMEM;
			*rest = *b;
			rest->end = lo;
			rest->size = lo - b->start;
			if (!tsearch(rest, &w->blocks, blk_cmp))
				err = -ENOMEM;
		}
		if (!err && b->end > hi) {
			rest = malloc(sizeof(*rest));
			if (!rest)
				return -ENOMEM;
			*rest = *b;
			rest->start = hi;
			rest->size = b->end - hi;
			if (!tsearch(rest, &w->blocks, blk_cmp))
				err = -ENOMEM;
		}
		free(b);
	}
	return err;
}

static int do_access(struct writer *w, const struct kp_ms_ev *e)
{
	struct blk *b = find(&w->blocks, e->tgid, e->ptr, e->ptr + 1);
	const char *type = "UNKNOWN", *name = "kperf_mem_access";
	struct row r;

	if (!b)
		return 0;
	if (e->kind == KP_MS_EV_FAULT) {
		name = "page_fault";
		type = e->nr & 2 ? "WRITE" : "READ"; /* the fault's error code: a write */
	} else if (e->kind == KP_MS_EV_SYSBUF) {
		name = kp_syscall_name((int)e->nr);
		if (!name)
			name = "syscall";
		/* read fills the buffer (a write to memory); write reads it */
		type = !strncmp(name, "read", 4) || !strncmp(name, "pread", 5) ||
				       !strncmp(name, "recv", 4) ?
			       "WRITE" :
			       "READ";
	}
	row_init(&r, e, "ACCESS", type, name);
	r.ptr = e->ptr;
	r.has_ptr = true;
	snprintf(r.attr, sizeof(r.attr),
		 "{allocation_id:%" PRIu64 ",offset:%" PRIu64 ",size:%" PRIu64 "}", b->id,
		 e->ptr - b->start, e->kind == KP_MS_EV_FAULT ? 0 : e->size);
	w->st->accesses++;
	return emit(w, &r);
}

static int do_mstx(struct writer *w, const struct kp_ms_ev *e)
{
	static const char *const types[] = { "Mark", "Mark", "Range_start", "Range_end" };
	struct row r;

	row_init(&r, e, "MSTX", types[e->nr <= 3 ? e->nr : 1], kp_ms_str(w->m, e->name));
	snprintf(r.attr, sizeof(r.attr), "{domain:%s,id:%" PRIu64 "}", kp_ms_str(w->m, e->domain),
		 e->ptr);
	w->st->marks++;
	return emit(w, &r);
}

static int do_event(struct writer *w, const struct kp_ms_ev *e)
{
	struct row r;
	int err = 0;

	switch (e->kind) {
	case KP_MS_EV_ALLOC:
		return do_alloc(w, e, e->ptr, e->size);
	case KP_MS_EV_FREE:
		return e->func == KP_MS_MUNMAP ? do_unmap(w, e) : do_free(w, e, e->ptr);
	case KP_MS_EV_REALLOC:
		if (e->old)
			err = do_free(w, e, e->old);
		if (!err && e->ptr)
			err = do_alloc(w, e, e->ptr, e->size);
		return err;
	case KP_MS_EV_FAULT:
	case KP_MS_EV_SYSBUF:
	case KP_MS_EV_MARK:
		return do_access(w, e);
	case KP_MS_EV_BRK:
		row_init(&r, e, "SYSTEM", "BRK", "brk");
		snprintf(r.attr, sizeof(r.attr), "{addr:0x%" PRIx64 "}", e->size);
		w->st->system++;
		return emit(w, &r);
	case KP_MS_EV_MSTX:
		return do_mstx(w, e);
	}
	return 0;
}

static void free_blk(void *p)
{
	free(p);
}

int kp_ms_write_file(struct kp_ms *m, const char *path, struct kp_ms_stats *st)
{
	struct writer w = { .m = m, .owner = kp_ms_owner(m), .st = st };
	const struct kp_ms_ev *ev = kp_ms_events(m, &(size_t){ 0 });
	const struct kp_ms_ev **order = NULL;
	struct kp_ms_ev lost = { 0 };
	struct row r;
	size_t n, i;
	int err;

	ev = kp_ms_events(m, &n);
	w.sample_bytes = kp_ms_options(m)->sample_bytes;
	err = kp_ms_sink_open(path, &w.sink);
	if (err)
		return err;
	order = malloc((n ? n : 1) * sizeof(*order));
	if (!order) {
		kp_ms_sink_abort(w.sink);
		return kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
	}
	for (i = 0; i < n; i++)
		order[i] = &ev[i];
	qsort(order, n, sizeof(*order), ev_cmp);
	for (i = 0; i < n && !err; i++)
		err = do_event(&w, order[i]);
	free(order);
	tdestroy(w.blocks, free_blk);
	if (!err) {
		/* children that ran before their probes: their first calls are missing */
		char unstopped[48] = "";

		if (st->not_stopped)
			snprintf(unstopped, sizeof(unstopped), ",children_unprobed:%" PRIu64,
				 st->not_stopped);
		lost.ts = w.last_ts;
		row_init(&r, &lost, "SYSTEM", "LOST", "lost_events");
		snprintf(r.attr, sizeof(r.attr),
			 "{ringbuf:%" PRIu64 ",inflight:%" PRIu64 ",sampled:%" PRIu64
			 ",stacks:%" PRIu64 ",marks:%" PRIu64 ",not_kept:%" PRIu64 "%s%s}",
			 st->lost_ringbuf, st->lost_inflight, st->lost_sampled, st->lost_stacks,
			 st->lost_marks, st->not_kept,
			 st->marks_unavailable ? ",marks_unavailable:1" : "", unstopped);
		err = emit(&w, &r);
	}
	if (err) {
		kp_ms_sink_abort(w.sink);
		return err == -ENOMEM ? kp_fail(COMMON_ERR_NOMEM, err, "out of memory") : err;
	}
	return kp_ms_sink_close(w.sink);
}
