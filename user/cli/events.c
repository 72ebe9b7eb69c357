/*
 * events.c - the per-call records of `trace --events`: read from the library in bounded
 * batches and printed in the order the calls started, through a window of fixed size.
 *
 * Records come out of the kernel as calls end, and from each CPU in turn: a long read()
 * arrives after a thousand short calls that started later. They are held in a min-heap by
 * start time and printed once a call WINDOW_NS newer has been seen, or when the window is
 * full (then the oldest goes first). A record that arrives older than one already printed
 * is printed at once: out of order, but not held without bound, and counted (`late`) so the
 * user is told how many lines are out of order (kp_evwin_late). Memory is therefore the
 * library's store (TRACE_STORE records) and this window, whatever the rate of calls; what
 * the ring buffer cannot hold meanwhile is dropped in the kernel and reported as dropped.
 * Records with a stack (trace --stack) point into the array they came in: an array is freed
 * once its last record with a stack is printed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "export/export.h"
#include "kperf/kperf.h"
#include "trace/trace.h"

#define WINDOW_RECORDS KP_EVWIN_RECORDS
#define WINDOW_NS 250000000LL /* a quarter of a second of calls */
#define BATCHES_PER_TICK 16 /* then the caller looks at the clock and at Ctrl-C */

struct ev {
	int64_t start;
	double elapsed_ms;
	int64_t ret;
	int pid, tid, cpu, nr; /* the name is looked up when printed */
	char comm[16];
	const struct Stack *stack; /* in batch <batch>'s array, or NULL */
	int batch;
};

/* a PmuTraceRead array kept for the stacks of its records still in the window */
struct batch {
	struct PmuTraceData *d; /* NULL: a free slot */
	size_t refs;
};

struct kp_evwin {
	FILE *out;
	int format;
	struct ev *heap; /* min-heap by start */
	size_t n;
	int64_t newest; /* the latest start seen */
	int64_t t0; /* the first printed start: times are printed from it */
	int64_t last; /* the latest start printed */
	long late; /* records printed after one that started later */
	bool first;
	struct batch *batches;
	size_t nbatches, batches_cap;
};

struct kp_evwin *kp_evwin_new(FILE *out, int format)
{
	struct kp_evwin *w = calloc(1, sizeof(*w));

	if (!w)
		return NULL;
	w->heap = malloc(WINDOW_RECORDS * sizeof(*w->heap));
	if (!w->heap) {
		free(w);
		return NULL;
	}
	w->out = out;
	w->format = format;
	w->first = true;
	return w;
}

void kp_evwin_free(struct kp_evwin *w)
{
	size_t i;

	if (!w)
		return;
	for (i = 0; i < w->nbatches; i++)
		PmuTraceDataFree(w->batches[i].d);
	free(w->batches);
	free(w->heap);
	free(w);
}

static void print(struct kp_evwin *w, const struct ev *e)
{
	const char *known = kp_syscall_name(e->nr);
	char name[24];
	struct PmuTraceData d = {
		.funcs = (char *)known,
		.startTs = e->start,
		.elapsedTime = e->elapsed_ms,
		.pid = e->pid,
		.tid = e->tid,
		.cpu = e->cpu,
		.comm = (char *)e->comm,
		.stack = (struct Stack *)e->stack,
	};
	struct KperfTraceDataExt x = { .ret = e->ret, .nr = e->nr };

	if (!known) {
		snprintf(name, sizeof(name), "syscall_%d", e->nr);
		d.funcs = name;
	}
	if (w->first)
		w->t0 = w->last = e->start;
	if (e->start < w->last)
		w->late++;
	else
		w->last = e->start;
	kp_report_event(w->out, w->format, &d, &x, w->t0, w->first);
	w->first = false;
	if (e->stack && --w->batches[e->batch].refs == 0) {
		PmuTraceDataFree(w->batches[e->batch].d);
		w->batches[e->batch].d = NULL;
	}
}

/* a slot for array <d>, whose <refs> records have a stack; -1 when out of memory (they are
 * printed without) */
static int keep_batch(struct kp_evwin *w, struct PmuTraceData *d, size_t refs)
{
	size_t i;

	for (i = 0; i < w->nbatches && w->batches[i].d; i++)
		;
	if (i == w->nbatches) {
		if (kp_grow((void **)&w->batches, &w->batches_cap, i + 1, sizeof(*w->batches)))
			return -1;
		w->nbatches++;
	}
	w->batches[i] = (struct batch){ d, refs };
	return (int)i;
}

static void sift_down(struct ev *h, size_t n, size_t i)
{
	struct ev tmp;

	for (;;) {
		size_t l = 2 * i + 1, m = i;

		if (l < n && h[l].start < h[m].start)
			m = l;
		if (l + 1 < n && h[l + 1].start < h[m].start)
			m = l + 1;
		if (m == i)
			return;
		tmp = h[i];
		h[i] = h[m];
		h[m] = tmp;
		i = m;
	}
}

static void pop_print(struct kp_evwin *w)
{
	print(w, &w->heap[0]);
	w->heap[0] = w->heap[--w->n];
	sift_down(w->heap, w->n, 0);
}

static void push(struct kp_evwin *w, const struct ev *e)
{
	struct ev tmp;
	size_t i;

	if (!w->first && e->start < w->last) {
		print(w, e); /* later than its turn: at once */
		return;
	}
	if (w->n == WINDOW_RECORDS)
		pop_print(w);
	i = w->n++;
	w->heap[i] = *e;
	while (i && w->heap[(i - 1) / 2].start > w->heap[i].start) {
		tmp = w->heap[i];
		w->heap[i] = w->heap[(i - 1) / 2];
		w->heap[(i - 1) / 2] = tmp;
		i = (i - 1) / 2;
	}
	if (e->start > w->newest)
		w->newest = e->start;
}

int kp_evwin_read(struct kp_evwin *w, int pd, bool until_empty)
{
	int batches = 0, total = 0, n, i;

	do {
		struct PmuTraceData *d = NULL;
		size_t stacks = 0;
		int batch = -1;

		n = PmuTraceRead(pd, &d);
		for (i = 0; i < n; i++)
			stacks += d[i].stack != NULL;
		if (stacks)
			batch = keep_batch(w, d, stacks);
		for (i = 0; i < n; i++) {
			const struct KperfTraceDataExt *x = KperfTraceGetExt(d, i);
			struct ev e = {
				.start = d[i].startTs,
				.elapsed_ms = d[i].elapsedTime,
				.ret = x ? x->ret : 0,
				.pid = d[i].pid,
				.tid = d[i].tid,
				.cpu = d[i].cpu,
				.nr = x ? x->nr : -1,
				.stack = batch >= 0 ? d[i].stack : NULL,
				.batch = batch,
			};

			snprintf(e.comm, sizeof(e.comm), "%s", d[i].comm ? d[i].comm : "");
			push(w, &e);
		}
		if (batch < 0)
			PmuTraceDataFree(d);
		/* what is a window older than the newest call cannot come before anything now */
		while (w->n && w->heap[0].start < w->newest - WINDOW_NS)
			pop_print(w);
		if (n > 0)
			total += n;
		/* a full batch: more is waiting in the ring buffer */
	} while (n >= TRACE_STORE && (until_empty || ++batches < BATCHES_PER_TICK));
	return n < 0 ? n : total;
}

void kp_evwin_flush(struct kp_evwin *w)
{
	while (w->n)
		pop_print(w);
}

long kp_evwin_late(const struct kp_evwin *w)
{
	return w->late;
}
