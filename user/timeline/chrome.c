/*
 * chrome.c - a timeline as Chrome trace-event JSON (the JSON Object Format: traceEvents,
 * stackFrames, displayTimeUnit, otherData), as chrome://tracing, ui.perfetto.dev and
 * speedscope read it.
 *
 * Phases: M (process_name, thread_name), X (syscalls; slices off the cpu, "blocked" or
 * "preempted" in category "off-cpu" with the user stack they left with as "sf"; ranges that start and end on one
 * thread and nest there), b/e with a process-local id2 (ranges that cross threads or overlap
 * another range of their thread without nesting: complete events of one thread must nest),
 * i (marks, thread scope; allocations of at least the threshold, category "memory"), P
 * (samples, "sf" naming the leaf in stackFrames), C (the heap in use of a process). Events follow
 * in time order, an enclosing complete event before what it encloses; timestamps are µs
 * with three decimals, so no ns is lost. Text is escaped and invalid UTF-8 replaced, so the
 * file is valid JSON whatever a message holds.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/pidns.h"
#include "timeline.h"

enum ph { PH_X, PH_I, PH_P, PH_B, PH_E, PH_C };

struct item {
	const struct kp_tl_event *e;
	uint64_t ts;
	uint8_t ph;
};

void kp_json_string(FILE *f, const char *text)
{
	const unsigned char *p = (const unsigned char *)(text ? text : "");

	fputc('"', f);
	while (*p) {
		unsigned c = *p, need, i, cp;

		if (c == '"' || c == '\\') {
			fputc('\\', f);
			fputc((int)c, f);
			p++;
			continue;
		}
		if (c < 0x20) {
			fprintf(f, "\\u%04x", c);
			p++;
			continue;
		}
		if (c < 0x80) {
			fputc((int)c, f);
			p++;
			continue;
		}
		/* a UTF-8 sequence: its length from the lead byte, then continuation bytes,
		 * no overlong forms, no surrogates, nothing past U+10FFFF */
		need = c >= 0xf0 && c <= 0xf4 ? 3 : c >= 0xe0 ? 2 : c >= 0xc2 && c < 0xe0 ? 1 : 0;
		cp = need == 3 ? c & 0x07 : need == 2 ? c & 0x0f : c & 0x1f;
		for (i = 1; need && i <= need; i++) {
			if ((p[i] & 0xc0) != 0x80)
				break;
			cp = cp << 6 | (p[i] & 0x3f);
		}
		if (!need || i <= need || (need == 2 && cp < 0x800) ||
		    (need == 3 && (cp < 0x10000 || cp > 0x10ffff)) ||
		    (cp >= 0xd800 && cp <= 0xdfff)) {
			fputs("\\ufffd", f);
			p++;
			continue;
		}
		fwrite(p, 1, need + 1, f);
		p += need + 1;
	}
	fputc('"', f);
}

static void put_ts(FILE *f, const char *key, uint64_t ns)
{
	fprintf(f, ",\"%s\":%" PRIu64 ".%03u", key, ns / 1000, (unsigned)(ns % 1000));
}

static int cmp_items(const void *a, const void *b)
{
	const struct item *x = a, *y = b;
	uint64_t dx, dy;

	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	/* at one instant: what encloses before what is enclosed (longer X first), ends of
	 * async ranges before new beginnings */
	if (x->ph != y->ph)
		return x->ph == PH_E ? -1 :
		       y->ph == PH_E ? 1 :
		       x->ph == PH_X ? -1 :
		       y->ph == PH_X ? 1 :
				       (int)x->ph - (int)y->ph;
	if (x->ph == PH_X) {
		dx = x->e->dur;
		dy = y->e->dur;
		if (dx != dy)
			return dx > dy ? -1 : 1;
	}
	return x->e < y->e ? -1 : x->e > y->e;
}

static int cmp_ranges(const void *a, const void *b)
{
	const struct kp_tl_event *x = *(const struct kp_tl_event *const *)a;
	const struct kp_tl_event *y = *(const struct kp_tl_event *const *)b;

	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	if (x->dur != y->dur)
		return x->dur > y->dur ? -1 : 1;
	return x < y ? -1 : x > y;
}

/* the unfinished ranges, each ending at the last event of its process */
struct open_list {
	const struct kp_tl_store *s;
	struct kp_tl_event *ev;
	size_t n, cap;
	int err;
};

static void collect_open(void *ctx, const struct kp_tl_event *e)
{
	struct open_list *l = ctx;
	const char *name;
	uint64_t last = 0;

	if (l->err || kp_grow((void **)&l->ev, &l->cap, l->n + 1, sizeof(*l->ev))) {
		l->err = -ENOMEM;
		return;
	}
	l->ev[l->n] = *e;
	kp_tl_process(l->s, e->pid, &name, &last);
	l->ev[l->n].dur = last > e->ts ? last - e->ts : 0;
	l->ev[l->n].unfinished = 1;
	l->n++;
}

/*
 * Which ranges can be complete events: those that start and end on one thread and, among
 * the ranges of that thread, nest (a range that starts inside another must end inside it).
 * The others become b/e pairs. Syscalls need no check: a thread makes its calls between its
 * marker calls, never across one.
 */
static int plan_ranges(const struct kp_tl_event **r, size_t n, bool *async)
{
	uint64_t *ends;
	size_t i, depth = 0;
	int tid = 0;

	ends = malloc((n ? n : 1) * sizeof(*ends));
	if (!ends)
		return -ENOMEM;
	qsort(r, n, sizeof(*r), cmp_ranges);
	for (i = 0; i < n; i++) {
		uint64_t end = r[i]->ts + r[i]->dur;

		async[i] = r[i]->tid != r[i]->end_tid;
		if (async[i])
			continue;
		if (!i || r[i]->tid != tid) {
			tid = r[i]->tid;
			depth = 0;
		}
		while (depth && ends[depth - 1] <= r[i]->ts)
			depth--;
		if (depth && end > ends[depth - 1]) {
			async[i] = true;
			continue;
		}
		ends[depth++] = end;
	}
	free(ends);
	return 0;
}

struct names_ctx {
	FILE *f;
	const struct kp_tl_store *s;
	int *pids;
	size_t npids, cap;
	bool first;
	int err;
};

/* The pid or tid written: the format's are not negative, so a process outside the caller's
 * PID namespace (-1 everywhere else) is KP_TL_OUTSIDE_PID here, a pid no process has */
static int jpid(int pid)
{
	return pid < 0 ? KP_TL_OUTSIDE_PID : pid;
}

static void put_meta(struct names_ctx *c, const char *what, int pid, int tid, const char *name)
{
	fprintf(c->f, "%s\n{\"name\":\"%s\",\"ph\":\"M\",\"pid\":%d,\"tid\":%d,\"args\":{\"name\":",
		c->first ? "" : ",", what, jpid(pid), jpid(tid));
	kp_json_string(c->f, name);
	fputs("}}", c->f);
	c->first = false;
}

static void thread_meta(void *ctx, int tid, int pid)
{
	struct names_ctx *c = ctx;
	const char *name;
	size_t i;
	int p;

	if (kp_tl_thread(c->s, tid, &p, &name) && name)
		put_meta(c, "thread_name", pid, tid, name);
	for (i = 0; i < c->npids && c->pids[i] != pid; i++)
		;
	if (i == c->npids) {
		if (kp_grow((void **)&c->pids, &c->cap, c->npids + 1, sizeof(*c->pids)))
			c->err = -ENOMEM;
		else
			c->pids[c->npids++] = pid;
	}
}

static void process_meta(struct names_ctx *c, int pid)
{
	char buf[64], path[64];
	const char *name = NULL;
	uint64_t last;

	kp_tl_process(c->s, pid, &name, &last);
	if (!name && pid < 0)
		name = KP_PIDNS_OUTSIDE_COMM;
	if (!name) {
		/* its main thread never showed up: ask the system while it lives */
		snprintf(path, sizeof(path), "/proc/%d/comm", pid);
		FILE *f = fopen(path, "re");

		if (f && fgets(buf, sizeof(buf), f)) {
			buf[strcspn(buf, "\n")] = '\0';
			name = buf;
		}
		if (f)
			fclose(f);
	}
	if (!name) {
		snprintf(buf, sizeof(buf), "pid %d", pid);
		name = buf;
	}
	put_meta(c, "process_name", pid, pid, name);
}

static void put_event(FILE *f, const struct kp_tl_store *s, const struct item *it)
{
	const struct kp_tl_event *e = it->e;
	static const char *const phs[] = { "X", "i", "P", "b", "e", "C" };

	fputs(",\n{\"name\":", f);
	kp_json_string(f, kp_tl_str(s, e->name));
	fputs(",\"cat\":", f);
	kp_json_string(f, kp_tl_str(s, e->cat));
	fprintf(f, ",\"ph\":\"%s\"", phs[it->ph]);
	put_ts(f, "ts", it->ts);
	fprintf(f, ",\"pid\":%d,\"tid\":%d", jpid(e->pid),
		jpid(it->ph == PH_E ? e->end_tid : e->tid));
	switch (it->ph) {
	case PH_X:
		put_ts(f, "dur", e->dur);
		if (e->kind == KP_TL_SYSCALL) {
			fprintf(f, ",\"args\":{\"ret\":%" PRId64 "}", e->ret);
		} else if (e->kind == KP_TL_OFFCPU) {
			if (e->id)
				fprintf(f, ",\"sf\":%" PRIu64, e->id);
			fprintf(f, ",\"args\":{\"reason\":\"%s\"%s}", kp_tl_str(s, e->name),
				e->unfinished ? ",\"unfinished\":true" : "");
		} else if (e->unfinished) {
			/* no id: speedscope names a frame by its name and args, and the ranges
			 * of one name should stay one frame there */
			fputs(",\"args\":{\"unfinished\":true}", f);
		}
		break;
	case PH_I:
		if (e->kind == KP_TL_ALLOC)
			fprintf(f,
				",\"s\":\"t\",\"args\":{\"size\":%" PRIu64 ",\"ptr\":\"0x%" PRIx64
				"\"}",
				e->id, (uint64_t)e->ret);
		else
			fprintf(f, ",\"s\":\"t\",\"args\":{\"id\":%" PRIu64 "}", e->id);
		break;
	case PH_C:
		fprintf(f, ",\"args\":{\"bytes\":%" PRIu64 "}", e->id);
		break;
	case PH_P:
		if (e->id)
			fprintf(f, ",\"sf\":%" PRIu64, e->id);
		if (e->cpu_valid)
			fprintf(f, ",\"args\":{\"cpu\":%u}", e->cpu);
		break;
	case PH_B:
	case PH_E:
		fprintf(f, ",\"id2\":{\"local\":\"0x%" PRIx64 "\"}", e->id);
		if (it->ph == PH_B) {
			fprintf(f, ",\"args\":{\"id\":%" PRIu64 ",\"end_tid\":%d", e->id,
				e->end_tid);
			if (e->unfinished)
				fputs(",\"unfinished\":true", f);
			fputs("}", f);
		}
		break;
	}
	fputc('}', f);
}

static uint8_t phase_of(const struct kp_tl_event *e)
{
	switch (e->kind) {
	case KP_TL_SYSCALL:
	case KP_TL_OFFCPU:
		return PH_X;
	case KP_TL_MARK:
	case KP_TL_ALLOC:
		return PH_I;
	case KP_TL_COUNTER:
		return PH_C;
	default:
		return PH_P;
	}
}

static void put_frames(FILE *f, const struct kp_tl_store *s)
{
	size_t i;

	fputs("\"stackFrames\":{", f);
	for (i = 1; i < s->nframes; i++) {
		fprintf(f, "%s\n\"%zu\":{\"name\":", i > 1 ? "," : "", i);
		kp_json_string(f, kp_tl_str(s, s->frames[i].name));
		fputs(",\"category\":", f);
		kp_json_string(f, kp_tl_str(s, s->frames[i].cat));
		if (s->frames[i].parent)
			fprintf(f, ",\"parent\":%u", s->frames[i].parent);
		fputc('}', f);
	}
	fputs("}", f);
}

int kp_tl_write_chrome(FILE *f, const struct kp_tl_store *s, const struct kp_tl_meta *m)
{
	struct open_list open = { .s = s };
	struct names_ctx names = { .f = f, .s = s, .first = true };
	const struct kp_tl_event **ranges = NULL;
	struct item *items = NULL;
	size_t nranges = 0, nitems = 0, i, k, total;
	bool *async = NULL;
	int err = -ENOMEM;

	kp_tl_open_ranges(s, collect_open, &open);
	if (open.err)
		goto out;
	total = s->nev + open.n;
	ranges = malloc((total ? total : 1) * sizeof(*ranges));
	async = calloc(total ? total : 1, sizeof(*async));
	items = malloc((2 * total + 1) * sizeof(*items));
	if (!ranges || !async || !items)
		goto out;
	for (i = 0; i < total; i++) {
		const struct kp_tl_event *e = i < s->nev ? &s->ev[i] : &open.ev[i - s->nev];

		if (e->kind == KP_TL_RANGE)
			ranges[nranges++] = e;
		else
			items[nitems++] = (struct item){ e, e->ts, phase_of(e) };
	}
	if (plan_ranges(ranges, nranges, async))
		goto out;
	for (k = 0; k < nranges; k++) {
		if (!async[k]) {
			items[nitems++] = (struct item){ ranges[k], ranges[k]->ts, PH_X };
			continue;
		}
		items[nitems++] = (struct item){ ranges[k], ranges[k]->ts, PH_B };
		items[nitems++] = (struct item){ ranges[k], ranges[k]->ts + ranges[k]->dur, PH_E };
	}
	qsort(items, nitems, sizeof(*items), cmp_items);

	fputs("{\"traceEvents\":[", f);
	kp_tl_threads(s, thread_meta, &names);
	if (names.err)
		goto out;
	for (i = 0; i < names.npids; i++)
		process_meta(&names, names.pids[i]);
	for (i = 0; i < nitems; i++) {
		if (names.first) {
			/* no name before the first event: keep the array's commas right */
			fputs("\n{\"name\":\"trace\",\"ph\":\"M\",\"pid\":0,\"tid\":0,"
			      "\"args\":{\"name\":\"kperf-bpf\"}}",
			      f);
			names.first = false;
		}
		put_event(f, s, &items[i]);
	}
	fputs("\n],\n", f);
	put_frames(f, s);
	fputs(",\n\"displayTimeUnit\":\"ns\",\n\"otherData\":{\"producer\":\"kperf-bpf\","
	      "\"clock\":\"CLOCK_MONOTONIC\"",
	      f);
	fprintf(f,
		",\"syscalls\":%" PRIu64 ",\"samples\":%" PRIu64 ",\"marks\":%" PRIu64
		",\"ranges\":%" PRIu64 ",\"openRanges\":%zu,\"dropped\":%" PRIu64
		",\"notKept\":%" PRIu64,
		s->n_sys, s->n_samples, s->n_marks, s->n_ranges, open.n, m ? m->dropped : 0,
		s->not_kept);
	if (m && m->memory)
		fprintf(f,
			",\"heapChanges\":%" PRIu64 ",\"largeAllocs\":%" PRIu64
			",\"memLost\":%" PRIu64,
			s->n_counters, s->n_allocs, m->mem_lost);
	if (m && m->off_cpu)
		fprintf(f,
			",\"offCpuSlices\":%" PRIu64 ",\"offCpuShort\":%" PRIu64
			",\"offCpuLost\":%" PRIu64,
			s->n_offcpu, m->off_short, m->off_lost);
	if (m && m->command) {
		fputs(",\"command\":", f);
		kp_json_string(f, m->command);
	}
	fputs("}}\n", f);
	err = ferror(f) ? -EIO : 0;
out:
	free(names.pids);
	free(open.ev);
	free(ranges);
	free(async);
	free(items);
	return err;
}
