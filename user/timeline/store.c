/*
 * store.c - the events of a timeline until they are written.
 *
 * Strings (syscall names, messages, domains, frame names) are interned, so an event is a
 * few words. A range is one event, made when its end arrives (start and end records are
 * paired by process and mstx id, which is unique in its process); a start without an end
 * waits in `open`. Stacks become paths in one tree of frames (root to leaf), so a sample
 * is its leaf node, and the writer emits each frame once (Chrome's stackFrames).
 * Beyond max events, events are counted and left out: memory stays bounded.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export/export.h"
#include "timeline.h"
#include "trace/trace.h"

struct proc_info {
	uint64_t last; /* time of its last event */
	uint32_t name; /* interned + 1: its main thread's comm, 0: not seen */
};

struct thread_info {
	int pid;
	uint32_t name; /* interned comm + 1, 0: none yet */
	struct proc_info *proc; /* its process's (allocated once: the pointer stays) */
	char comm[16]; /* the comm <name> was interned from, to skip the lookup while it stays */
	uint64_t name_ts; /* the time of the record <name> came from */
};

void kp_tl_store_init(struct kp_tl_store *s, size_t max_events)
{
	memset(s, 0, sizeof(*s));
	s->max = max_events;
	kp_map_init(&s->str_idx, true);
	kp_map_init(&s->frame_idx, false);
	kp_map_init(&s->open, true);
	kp_map_init(&s->threads, false);
	kp_map_init(&s->procs, false);
}

static void free_vals(struct kp_map *m, bool keys)
{
	size_t i;

	for (i = 0; i < m->cap; i++) {
		if (!m->slots[i].key)
			continue;
		free(m->slots[i].val);
		if (keys)
			free((void *)m->slots[i].key);
	}
	kp_map_free(m);
}

void kp_tl_store_free(struct kp_tl_store *s)
{
	size_t i;

	for (i = 0; i < s->nstr; i++)
		free(s->str[i]);
	free(s->str);
	free(s->ev);
	free(s->frames);
	kp_map_free(&s->str_idx);
	kp_map_free(&s->frame_idx);
	free_vals(&s->open, true);
	free_vals(&s->threads, false);
	free_vals(&s->procs, false);
	memset(s, 0, sizeof(*s));
}

const char *kp_tl_str(const struct kp_tl_store *s, uint32_t i)
{
	return i < s->nstr ? s->str[i] : "";
}

/* index of <text>, interned; -ENOMEM */
static int64_t intern(struct kp_tl_store *s, const char *text)
{
	struct kp_map_slot *slot;
	void *v;
	char *copy;

	if (!text)
		text = "";
	v = kp_map_get(&s->str_idx, text);
	if (v)
		return (int64_t)(uintptr_t)v - 1;
	copy = strdup(text);
	if (!copy || kp_grow((void **)&s->str, &s->strcap, s->nstr + 1, sizeof(*s->str))) {
		free(copy);
		return -ENOMEM;
	}
	/* the map keeps the interned copy as its key */
	slot = kp_map_slot(&s->str_idx, copy, NULL);
	if (!slot) {
		free(copy);
		return -ENOMEM;
	}
	slot->val = (void *)(uintptr_t)(s->nstr + 1);
	s->str[s->nstr] = copy;
	return (int64_t)s->nstr++;
}

/* ids (pids, tids) as map keys: never 0 */
#define ID_KEY(id) ((void *)(uintptr_t)((uint64_t)(unsigned)(id) + 1))

static void *info(struct kp_map *m, int id, size_t size)
{
	struct kp_map_slot *slot;
	bool created;

	slot = kp_map_slot(m, ID_KEY(id), &created);
	if (!slot)
		return NULL;
	if (created)
		slot->val = calloc(1, size);
	return slot->val;
}

static const void *find_info(const struct kp_map *m, int id)
{
	return kp_map_get(m, ID_KEY(id));
}

/* remember who <tid> is, and that <pid> did something at <ts>. The thread of the previous
 * record is remembered (records come in runs of one thread), and its comm is interned again
 * only when it changed. Its name is the comm of its latest record by time: the sources'
 * records come in their own order (a marker after a rename may be read before a syscall made
 * before it). */
static int seen(struct kp_tl_store *s, int pid, int tid, const char *comm, uint64_t ts)
{
	struct thread_info *t = s->last_thread;
	struct proc_info *p;
	int64_t name;

	if (!t || s->last_tid != tid) {
		t = info(&s->threads, tid, sizeof(*t));
		if (!t)
			return -ENOMEM;
		s->last_thread = t;
		s->last_tid = tid;
	}
	if (!t->proc || t->pid != pid) {
		t->proc = info(&s->procs, pid, sizeof(*p));
		if (!t->proc)
			return -ENOMEM;
		t->pid = pid;
	}
	p = t->proc;
	if (comm && *comm &&
	    (!t->name || (ts >= t->name_ts && strncmp(t->comm, comm, sizeof(t->comm))))) {
		name = intern(s, comm);
		if (name < 0)
			return (int)name;
		t->name = (uint32_t)name + 1;
		snprintf(t->comm, sizeof(t->comm), "%s", comm);
		if (tid == pid)
			p->name = (uint32_t)name + 1;
	}
	if (comm && *comm && ts > t->name_ts && !strncmp(t->comm, comm, sizeof(t->comm)))
		t->name_ts = ts;
	if (ts > p->last)
		p->last = ts;
	return 0;
}

static struct kp_tl_event *new_event(struct kp_tl_store *s)
{
	struct kp_tl_event *e;

	if (s->nev >= s->max) {
		s->not_kept++;
		return NULL;
	}
	if (kp_grow((void **)&s->ev, &s->cap, s->nev + 1, sizeof(*s->ev)))
		return NULL;
	e = &s->ev[s->nev++];
	memset(e, 0, sizeof(*e));
	return e;
}

static int add_range_start(struct kp_tl_store *s, const struct KperfActivityRecord *r)
{
	struct kp_tl_event *e = calloc(1, sizeof(*e));
	struct kp_map_slot *slot;
	int64_t name, cat;
	bool created;
	char key[48], *k;

	if (!e)
		return -ENOMEM;
	name = intern(s, r->name);
	cat = intern(s, r->domain);
	snprintf(key, sizeof(key), "%d:%llu", r->pid, (unsigned long long)r->id);
	k = strdup(key);
	slot = k && name >= 0 && cat >= 0 ? kp_map_slot(&s->open, k, &created) : NULL;
	if (!slot) {
		free(k);
		free(e);
		return -ENOMEM;
	}
	if (!created)
		free(k);
	free(slot->val); /* an id reused: a new process with the same pid */
	e->kind = KP_TL_RANGE;
	e->ts = r->start;
	e->id = r->id;
	e->pid = r->pid;
	e->tid = e->end_tid = r->tid;
	e->name = (uint32_t)name;
	e->cat = (uint32_t)cat;
	slot->val = e;
	return 0;
}

static int add_range_end(struct kp_tl_store *s, const struct KperfActivityRecord *r)
{
	struct kp_tl_event *start, *e;
	struct kp_map_slot *slot;
	char key[48];

	snprintf(key, sizeof(key), "%d:%llu", r->pid, (unsigned long long)r->id);
	if (!kp_map_get(&s->open, key)) {
		s->unmatched_ends++; /* started before the collection */
		return 0;
	}
	slot = kp_map_slot(&s->open, key, NULL); /* there already: nothing inserted */
	start = slot->val;
	slot->val = NULL;
	e = new_event(s);
	if (e) {
		*e = *start;
		e->dur = r->end > start->ts ? r->end - start->ts : 0;
		e->end_tid = r->tid;
		s->n_ranges++;
	}
	free(start);
	return e || s->nev >= s->max ? 0 : -ENOMEM;
}

int kp_tl_add_activity(struct kp_tl_store *s, const struct KperfActivityRecord *r)
{
	struct kp_tl_event *e;
	int64_t name, cat;
	int err;

	err = seen(s, r->pid, r->tid, r->comm, r->end);
	if (err)
		return err;
	if (r->kind == KPERF_ACTIVITY_KIND_MARKER && r->flag == KPERF_ACTIVITY_FLAG_MARKER_START)
		return add_range_start(s, r);
	if (r->kind == KPERF_ACTIVITY_KIND_MARKER && r->flag == KPERF_ACTIVITY_FLAG_MARKER_END)
		return add_range_end(s, r);
	if (r->kind == KPERF_ACTIVITY_KIND_HCCL)
		return 0; /* the same calls are there as syscalls */
	name = intern(s, r->name);
	cat = intern(s, r->kind == KPERF_ACTIVITY_KIND_MARKER ? r->domain : "syscall");
	if (name < 0 || cat < 0)
		return -ENOMEM;
	e = new_event(s);
	if (!e)
		return s->nev >= s->max ? 0 : -ENOMEM;
	e->ts = r->start;
	e->pid = r->pid;
	e->tid = e->end_tid = r->tid;
	e->name = (uint32_t)name;
	e->cat = (uint32_t)cat;
	if (r->kind == KPERF_ACTIVITY_KIND_MARKER) {
		e->kind = KP_TL_MARK;
		e->id = r->id;
		s->n_marks++;
	} else {
		e->kind = KP_TL_SYSCALL;
		e->dur = r->end - r->start;
		e->ret = r->ret;
		s->n_sys++;
	}
	e->cpu = (uint16_t)r->cpu;
	e->cpu_valid = r->cpu >= 0 && r->cpu < 65536;
	return 0;
}

/* the interned name of syscall <nr>, looked up once per number */
static int64_t syscall_name(struct kp_tl_store *s, int nr)
{
	const char *name;
	char buf[24];
	int64_t i;

	if (nr >= 0 && nr < KP_TL_SYS_NAMES && s->sys_name[nr])
		return (int64_t)s->sys_name[nr] - 1;
	name = kp_syscall_name(nr);
	if (!name) {
		snprintf(buf, sizeof(buf), "syscall_%u", (unsigned)nr);
		name = buf;
	}
	i = intern(s, name);
	if (i >= 0 && nr >= 0 && nr < KP_TL_SYS_NAMES)
		s->sys_name[nr] = (uint32_t)i + 1;
	return i;
}

int kp_tl_add_syscall(struct kp_tl_store *s, const struct kp_tl_syscall *c)
{
	struct kp_tl_event *e;
	int64_t name, cat;
	int err;

	err = seen(s, c->pid, c->tid, c->comm, c->start + c->dur);
	if (err)
		return err;
	name = syscall_name(s, c->nr);
	cat = s->sys_cat ? (int64_t)s->sys_cat - 1 : intern(s, "syscall");
	if (name < 0 || cat < 0)
		return -ENOMEM;
	s->sys_cat = (uint32_t)cat + 1;
	e = new_event(s);
	if (!e)
		return s->nev >= s->max ? 0 : -ENOMEM;
	e->kind = KP_TL_SYSCALL;
	e->ts = c->start;
	e->dur = c->dur;
	e->ret = c->ret;
	e->pid = c->pid;
	e->tid = e->end_tid = c->tid;
	e->name = (uint32_t)name;
	e->cat = (uint32_t)cat;
	e->cpu = (uint16_t)c->cpu;
	e->cpu_valid = c->cpu >= 0 && c->cpu < 65536;
	s->n_sys++;
	return 0;
}

/* the node of frame <sym> under <parent>, made when new; 0 on ENOMEM */
static uint32_t frame_node(struct kp_tl_store *s, uint32_t parent, const struct Symbol *sym)
{
	char label[512];
	const char *mod, *base;
	struct kp_map_slot *slot;
	int64_t name, cat;
	bool created;
	uint64_t key;

	kp_frame_label(sym, label, sizeof(label));
	name = intern(s, label);
	mod = sym->module && *sym->module ? sym->module : "[unknown]";
	base = strrchr(mod, '/');
	cat = intern(s, base ? base + 1 : mod);
	if (name < 0 || cat < 0)
		return 0;
	key = (uint64_t)parent << 32 | (uint32_t)name;
	/* the key is never 0: name 0 under no parent is key 0, hence the + 1 */
	slot = kp_map_slot(&s->frame_idx, (void *)(uintptr_t)(key + 1), &created);
	if (!slot)
		return 0;
	if (!created)
		return (uint32_t)(uintptr_t)slot->val;
	if (kp_grow((void **)&s->frames, &s->framecap, s->nframes + 2, sizeof(*s->frames))) {
		slot->val = NULL;
		return 0;
	}
	if (!s->nframes)
		s->nframes = 1; /* node 0: no caller */
	s->frames[s->nframes] = (struct kp_tl_frame){ parent, (uint32_t)name, (uint32_t)cat };
	slot->val = (void *)(uintptr_t)s->nframes;
	return (uint32_t)s->nframes++;
}

/* the node of the leaf of <stack> (leaf first), 0 for none; -ENOMEM */
static int64_t stack_node(struct kp_tl_store *s, const struct Stack *stack)
{
	const struct Stack *st, *path[256];
	uint32_t node = 0;
	int n = 0;

	/* leaf first in the record; the tree is walked from the root */
	for (st = stack; st && n < (int)KP_ARRAY_SIZE(path); st = st->next)
		if (st->symbol)
			path[n++] = st;
	while (n-- > 0) {
		node = frame_node(s, node, path[n]->symbol);
		if (!node)
			return -ENOMEM;
	}
	return node;
}

int kp_tl_add_offcpu(struct kp_tl_store *s, const struct kp_offcpu_slice *sl,
		     const struct Stack *stack)
{
	struct kp_tl_event *e;
	int64_t name, cat, node;
	int err;

	err = seen(s, (int)sl->tgid, (int)sl->tid, sl->comm, sl->end_ns);
	if (err)
		return err;
	node = stack_node(s, stack);
	name = intern(s, sl->preempted ? "preempted" : "blocked");
	cat = intern(s, "off-cpu");
	if (node < 0 || name < 0 || cat < 0)
		return -ENOMEM;
	e = new_event(s);
	if (!e)
		return s->nev >= s->max ? 0 : -ENOMEM;
	e->kind = KP_TL_OFFCPU;
	e->ts = sl->start_ns;
	e->dur = sl->end_ns > sl->start_ns ? sl->end_ns - sl->start_ns : 0;
	e->pid = (int)sl->tgid;
	e->tid = e->end_tid = (int)sl->tid;
	e->id = (uint64_t)node;
	e->name = (uint32_t)name;
	e->cat = (uint32_t)cat;
	e->unfinished = sl->unfinished;
	s->n_offcpu++;
	return 0;
}

/* an event of the memory source (category "memory") named <name> */
static struct kp_tl_event *memory_event(struct kp_tl_store *s, int pid, int tid, uint64_t ts,
					const char *name, int *err)
{
	struct kp_tl_event *e;
	int64_t n, cat;

	*err = seen(s, pid, tid, NULL, ts);
	if (*err)
		return NULL;
	n = intern(s, name);
	cat = intern(s, "memory");
	if (n < 0 || cat < 0) {
		*err = -ENOMEM;
		return NULL;
	}
	e = new_event(s);
	if (!e) {
		*err = s->nev >= s->max ? 0 : -ENOMEM;
		return NULL;
	}
	e->ts = ts;
	e->pid = pid;
	e->tid = e->end_tid = tid;
	e->name = (uint32_t)n;
	e->cat = (uint32_t)cat;
	return e;
}

int kp_tl_add_counter(struct kp_tl_store *s, int pid, uint64_t ts, const char *name, uint64_t value)
{
	int err;
	struct kp_tl_event *e = memory_event(s, pid, pid, ts, name, &err);

	if (e) {
		e->kind = KP_TL_COUNTER;
		e->id = value;
		s->n_counters++;
	}
	return err;
}

int kp_tl_add_alloc(struct kp_tl_store *s, int pid, int tid, uint64_t ts, const char *func,
		    uint64_t ptr, uint64_t size)
{
	int err;
	struct kp_tl_event *e = memory_event(s, pid, tid, ts, func, &err);

	if (e) {
		e->kind = KP_TL_ALLOC;
		e->id = size;
		e->ret = (int64_t)ptr;
		s->n_allocs++;
	}
	return err;
}

int kp_tl_add_sample(struct kp_tl_store *s, const struct PmuData *d)
{
	struct kp_tl_event *e;
	int64_t name, cat, node;
	int err;

	err = seen(s, d->pid, d->tid, d->comm, (uint64_t)d->ts);
	if (err)
		return err;
	node = stack_node(s, d->stack);
	if (node < 0)
		return (int)node;
	name = intern(s, d->evt ? d->evt : "cpu-clock");
	cat = intern(s, "sample");
	if (name < 0 || cat < 0)
		return -ENOMEM;
	e = new_event(s);
	if (!e)
		return s->nev >= s->max ? 0 : -ENOMEM;
	e->kind = KP_TL_SAMPLE;
	e->ts = (uint64_t)d->ts;
	e->pid = d->pid;
	e->tid = e->end_tid = d->tid;
	e->id = node;
	e->name = (uint32_t)name;
	e->cat = (uint32_t)cat;
	e->cpu = (uint16_t)d->cpu;
	e->cpu_valid = d->cpu >= 0 && d->cpu < 65536;
	s->n_samples++;
	return 0;
}

bool kp_tl_thread(const struct kp_tl_store *s, int tid, int *pid, const char **name)
{
	const struct thread_info *t = find_info(&s->threads, tid);

	if (!t)
		return false;
	*pid = t->pid;
	*name = t->name ? kp_tl_str(s, t->name - 1) : NULL;
	return true;
}

bool kp_tl_process(const struct kp_tl_store *s, int pid, const char **name, uint64_t *last)
{
	const struct proc_info *p = find_info(&s->procs, pid);

	if (!p)
		return false;
	*name = p->name ? kp_tl_str(s, p->name - 1) : NULL;
	*last = p->last;
	return true;
}

void kp_tl_open_ranges(const struct kp_tl_store *s,
		       void (*fn)(void *ctx, const struct kp_tl_event *e), void *ctx)
{
	size_t i;

	for (i = 0; i < s->open.cap; i++)
		if (s->open.slots[i].key && s->open.slots[i].val)
			fn(ctx, s->open.slots[i].val);
}

void kp_tl_threads(const struct kp_tl_store *s, void (*fn)(void *ctx, int tid, int pid), void *ctx)
{
	size_t i;

	for (i = 0; i < s->threads.cap; i++) {
		const struct thread_info *t = s->threads.slots[i].val;

		if (s->threads.slots[i].key && t)
			fn(ctx, (int)((uintptr_t)s->threads.slots[i].key - 1), t->pid);
	}
}
