/*
 * data.c - the PmuData arrays handed to callers.
 *
 * Records are built into a growable array; everything a record points to (event name,
 * comm, topology, stack with its symbols) is copied into an arena owned by the array,
 * de-duplicated (a stack shared by 10 000 records is copied once). Raw tracepoint records
 * are tracefs's reference-counted records (kp_raw_data_*), which know their length, so
 * PmuGetField can check every offset; an array holds one reference per record.
 * The array is preceded by a hidden header that knows its length and its arena, so
 * PmuDataFree needs only the pointer, PmuAppendData can tell how long an array is, and a
 * pointer the library did not hand out is recognised (the registry) and ignored.
 *
 * A caller passes arrays back with a length of its own (PmuDumpData, PmuGetDevMetric): the
 * address ranges of live arrays tell how many records there really are from a pointer on,
 * and the blocks of the last arrays freed stay allocated for a while (the records only, not
 * what they point to), so that a freed array is recognised instead of being read after its
 * memory went to someone else. An array the caller built itself cannot be checked.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "kperf/pcerrc.h"
#include "pmu.h"
#include "sym/sym.h"
#include "tracefs/tracefs.h"

#define DATA_MAGIC 0x6b70657266444154ULL /* "kperfDAT" */
#define CHUNK_SIZE 65536

/* chunk data is 64-byte aligned: libkperf's struct Stack is __attribute__((aligned(64))) */
#define CHUNK_ALIGN 64

struct chunk {
	struct chunk *next;
	size_t used, size;
	_Alignas(CHUNK_ALIGN) unsigned char data[];
};

/* an inline frame copied into an arena: marked for KperfSymbolGetInfo until it is freed */
struct marked {
	struct marked *next;
	const struct Symbol *sym;
};

struct arena {
	struct chunk *head;
	struct marked *marked;
};

/* copies strings, symbols and stacks into an arena, each source object once */
struct copier {
	struct arena *arena;
	struct kp_map strs; /* interned strings */
	struct kp_map stacks; /* source Stack* -> copied Stack* */
	struct kp_map syms; /* source Symbol* -> copied Symbol* */
};

struct kp_data_builder {
	struct PmuData *recs;
	size_t n, cap;
	struct arena arena;
	struct copier copy;
	struct kp_data_chain *chains; /* per record, NULL until one has a chain */
	size_t chains_cap;
	bool failed;
};

struct data_hdr {
	uint64_t magic;
	size_t len;
	struct arena arena;
	struct kp_data_chain *chains; /* per record (in the arena), or NULL */
	int *pins; /* processes whose symbols the pending chains need (kp_pmu_sym_hold) */
	size_t npins;
	max_align_t recs[]; /* struct PmuData[len] */
};

/* <size> bytes aligned to <align> (a power of two, at most CHUNK_ALIGN) */
static void *arena_alloc_aligned(struct arena *a, size_t size, size_t align)
{
	struct chunk *c = a->head;
	void *p;

	size = (size + sizeof(max_align_t) - 1) / sizeof(max_align_t) * sizeof(max_align_t);
	if (c)
		c->used = (c->used + align - 1) & ~(align - 1);
	if (!c || c->used > c->size || c->size - c->used < size) {
		size_t csize = size > CHUNK_SIZE ? size : CHUNK_SIZE;

		c = aligned_alloc(CHUNK_ALIGN, (sizeof(*c) + csize + CHUNK_ALIGN - 1) &
						       ~(size_t)(CHUNK_ALIGN - 1));
		if (!c)
			return NULL;
		c->size = csize;
		c->used = 0;
		if (a->head && size > CHUNK_SIZE) {
			/* a big item gets its own chunk behind the current one */
			c->next = a->head->next;
			a->head->next = c;
		} else {
			c->next = a->head;
			a->head = c;
		}
	}
	p = (char *)c->data + c->used;
	c->used += size;
	return p;
}

static void *arena_alloc(struct arena *a, size_t size)
{
	return arena_alloc_aligned(a, size, sizeof(max_align_t));
}

static void arena_free(struct arena *a)
{
	struct chunk *c = a->head, *n;
	struct marked *m;

	for (m = a->marked; m; m = m->next)
		kp_sym_unmark(m->sym);
	a->marked = NULL;

	for (; c; c = n) {
		n = c->next;
		free(c);
	}
	a->head = NULL;
}

static void copier_init(struct copier *c, struct arena *a)
{
	c->arena = a;
	kp_map_init(&c->strs, true);
	kp_map_init(&c->stacks, false);
	kp_map_init(&c->syms, false);
}

static void copier_free(struct copier *c)
{
	kp_map_free(&c->strs);
	kp_map_free(&c->stacks);
	kp_map_free(&c->syms);
}

struct kp_data_builder *kp_data_builder_new(void)
{
	struct kp_data_builder *b = calloc(1, sizeof(*b));

	if (b)
		copier_init(&b->copy, &b->arena);
	return b;
}

static void release_raw(struct PmuData *recs, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		kp_raw_data_free(recs[i].rawData);
}

void kp_data_builder_free(struct kp_data_builder *b)
{
	if (!b)
		return;
	release_raw(b->recs, b->n);
	free(b->recs);
	free(b->chains);
	copier_free(&b->copy);
	arena_free(&b->arena);
	free(b);
}

size_t kp_data_builder_len(const struct kp_data_builder *b)
{
	return b->n;
}

static char *intern(struct copier *b, const char *s)
{
	struct kp_map_slot *slot;
	size_t len;
	char *copy;

	if (!s)
		return NULL;
	slot = kp_map_slot(&b->strs, s, NULL);
	if (!slot)
		return NULL;
	if (slot->val)
		return slot->val;
	len = strlen(s) + 1;
	copy = arena_alloc(b->arena, len);
	if (!copy)
		return NULL;
	memcpy(copy, s, len);
	slot->key = copy; /* the key must outlive the caller's string */
	slot->val = copy;
	return copy;
}

static struct Symbol *copy_symbol(struct copier *b, const struct Symbol *src)
{
	struct kp_map_slot *slot;
	struct Symbol *s;

	if (!src)
		return NULL;
	slot = kp_map_slot(&b->syms, src, NULL);
	if (!slot)
		return NULL;
	if (slot->val)
		return slot->val;
	s = arena_alloc(b->arena, sizeof(*s));
	if (!s)
		return NULL;
	*s = *src;
	s->module = intern(b, src->module);
	s->symbolName = intern(b, src->symbolName);
	s->mangleName = intern(b, src->mangleName);
	s->fileName = intern(b, src->fileName);
	s->mntPoint = intern(b, src->mntPoint);
	if (kp_sym_is_inline(src)) {
		struct marked *m = arena_alloc(b->arena, sizeof(*m));

		if (!m || kp_sym_mark_copy(src, s) < 0)
			return NULL;
		m->sym = s;
		m->next = b->arena->marked;
		b->arena->marked = m;
	}
	slot->val = s;
	return s;
}

/* copy the list starting at <src> (leaf first, following next) */
static struct Stack *copy_stack(struct copier *b, const struct Stack *src)
{
	struct Stack *head = NULL, *prev = NULL, *node;
	struct kp_map_slot *slot;
	int depth = 0;

	if (!src)
		return NULL;
	slot = kp_map_slot(&b->stacks, src, NULL);
	if (!slot)
		return NULL;
	if (slot->val)
		return slot->val;
	for (; src && depth < 4096; src = src->next, depth++) {
		node = arena_alloc_aligned(b->arena, sizeof(*node), _Alignof(struct Stack));
		if (!node)
			return NULL;
		node->symbol = copy_symbol(b, src->symbol);
		node->prev = prev;
		node->next = NULL;
		if (prev)
			prev->next = node;
		else
			head = node;
		prev = node;
	}
	slot->val = head; /* only copy_stack inserts into b->stacks: the slot is still valid */
	return head;
}

int kp_data_builder_add(struct kp_data_builder *b, const struct PmuData *rec, size_t raw_len)
{
	struct PmuData *d;

	if (b->failed)
		return -ENOMEM;
	if (kp_grow((void **)&b->recs, &b->cap, b->n + 1, sizeof(*b->recs)))
		goto nomem;
	d = &b->recs[b->n];
	*d = *rec;
	d->rawData = NULL; /* until it holds its own reference */
	d->evt = intern(&b->copy, rec->evt);
	d->comm = intern(&b->copy, rec->comm ? rec->comm : "");
	d->cgroupName = intern(&b->copy, rec->cgroupName);
	if ((rec->evt && !d->evt) || !d->comm)
		goto nomem;
	if (rec->cpuTopo) {
		d->cpuTopo = arena_alloc(&b->arena, sizeof(*d->cpuTopo));
		if (!d->cpuTopo)
			goto nomem;
		*d->cpuTopo = *rec->cpuTopo;
	}
	if (rec->stack) {
		d->stack = copy_stack(&b->copy, rec->stack);
		if (!d->stack)
			goto nomem;
	}
	if (rec->ext) {
		d->ext = arena_alloc(&b->arena, sizeof(*d->ext));
		if (!d->ext)
			goto nomem;
		*d->ext = *rec->ext;
	}
	if (rec->rawData) {
		/* a record of another array is shared; bytes from the kernel are copied */
		d->rawData = kp_raw_data_ref(rec->rawData);
		if (!d->rawData && rec->rawData->data && raw_len) {
			d->rawData = kp_raw_data_new(rec->rawData->data, raw_len);
			if (!d->rawData)
				goto fail;
		}
	}
	b->n++;
	return 0;
nomem:
	kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory for %zu records", b->n + 1);
fail:
	b->failed = true;
	return -ENOMEM;
}

/* ---- the arrays alive, and the last ones freed ---- */

#define QUARANTINE_N 64
#define QUARANTINE_BYTES (16u << 20)

struct span {
	const char *start, *end; /* the records of one array */
};

static pthread_mutex_t spans_lock = PTHREAD_MUTEX_INITIALIZER;
static struct span *live; /* sorted by start */
static size_t nlive, live_cap;
static struct freed {
	struct data_hdr *h; /* still allocated: its address cannot be handed out again */
	struct span s;
} freed[QUARANTINE_N];
static size_t freed_next, freed_bytes;

static struct span span_of(const struct data_hdr *h)
{
	const char *start = (const char *)h->recs;

	return (struct span){ start, start + h->len * sizeof(struct PmuData) };
}

static size_t hdr_bytes(const struct data_hdr *h)
{
	return sizeof(*h) + h->len * sizeof(struct PmuData);
}

/* the first live span that starts after <p> (callers hold spans_lock) */
static size_t live_after(const char *p)
{
	size_t lo = 0, hi = nlive;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (live[mid].start <= p)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int live_add(const struct data_hdr *h)
{
	struct span s = span_of(h);
	size_t at;
	int err = 0;

	pthread_mutex_lock(&spans_lock);
	if (kp_grow((void **)&live, &live_cap, nlive + 1, sizeof(*live))) {
		err = -ENOMEM;
	} else {
		at = live_after(s.start);
		memmove(&live[at + 1], &live[at], (nlive - at) * sizeof(*live));
		live[at] = s;
		nlive++;
	}
	pthread_mutex_unlock(&spans_lock);
	return err;
}

/* forget <h> as live; keep its block (not what it points to) among the last freed */
static void live_remove_and_keep(struct data_hdr *h)
{
	struct span s = span_of(h);
	struct data_hdr *evict[QUARANTINE_N + 1];
	size_t at, nevict = 0, i;

	pthread_mutex_lock(&spans_lock);
	at = live_after(s.start);
	if (at && live[at - 1].start == s.start) {
		memmove(&live[at - 1], &live[at], (nlive - at) * sizeof(*live));
		nlive--;
	}
	if (hdr_bytes(h) > QUARANTINE_BYTES) {
		evict[nevict++] = h; /* too big to keep */
	} else {
		/* the oldest go: the slot to fill, then as many as the byte budget needs */
		for (i = 0; i < QUARANTINE_N; i++) {
			struct freed *old = &freed[(freed_next + i) % QUARANTINE_N];

			if (i && freed_bytes + hdr_bytes(h) <= QUARANTINE_BYTES)
				break;
			if (old->h) {
				freed_bytes -= hdr_bytes(old->h);
				evict[nevict++] = old->h;
				old->h = NULL;
			}
		}
		freed[freed_next] = (struct freed){ h, s };
		freed_bytes += hdr_bytes(h);
		freed_next = (freed_next + 1) % QUARANTINE_N;
	}
	pthread_mutex_unlock(&spans_lock);
	for (i = 0; i < nevict; i++)
		free(evict[i]);
}

int kp_data_builder_add_chain(struct kp_data_builder *b, const struct PmuData *rec, size_t raw_len,
			      const uint64_t *ips, unsigned n, unsigned flags)
{
	struct kp_data_chain *c;
	int err = kp_data_builder_add(b, rec, raw_len);

	if (err || !n)
		return err;
	if (kp_grow((void **)&b->chains, &b->chains_cap, b->n, sizeof(*b->chains)))
		goto nomem;
	c = &b->chains[b->n - 1];
	c->ips = arena_alloc(&b->arena, n * sizeof(*ips));
	if (!c->ips)
		goto nomem;
	memcpy(c->ips, ips, n * sizeof(*ips));
	c->n = n;
	c->flags = flags;
	c->pending = !rec->stack;
	return 0;
nomem:
	b->failed = true;
	return kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory for %zu callchains", b->n);
}

static struct data_hdr *header_of(const struct PmuData *data);

int kp_data_builder_add_from(struct kp_data_builder *b, const struct PmuData *data, size_t i)
{
	const struct kp_data_chain *c = kp_data_chain_of(data, i);

	if (c)
		return kp_data_builder_add_chain(b, &data[i], 0, c->ips, c->n, c->flags);
	return kp_data_builder_add(b, &data[i], 0);
}

static void release_data(void *p)
{
	struct data_hdr *h = (struct data_hdr *)((char *)p - offsetof(struct data_hdr, recs));
	size_t i;

	h->magic = 0;
	release_raw((struct PmuData *)h->recs, h->len);
	for (i = 0; i < h->npins; i++)
		kp_pmu_sym_release(h->pins[i]);
	free(h->pins);
	arena_free(&h->arena);
	live_remove_and_keep(h);
}

int kp_data_check(const struct PmuData *data, unsigned len, const char *fn)
{
	const char *p = (const char *)data;
	size_t at, i, left = 0, off = 0;
	enum { UNKNOWN, LIVE, MISALIGNED, FREED } what = UNKNOWN;

	if (!data || !len)
		return 0;
	pthread_mutex_lock(&spans_lock);
	at = live_after(p);
	if (at && p < live[at - 1].end) {
		off = (size_t)(p - live[at - 1].start);
		left = (size_t)(live[at - 1].end - p) / sizeof(struct PmuData);
		what = off % sizeof(struct PmuData) ? MISALIGNED : LIVE;
	} else {
		for (i = 0; i < QUARANTINE_N; i++)
			if (freed[i].h && p >= freed[i].s.start && p < freed[i].s.end)
				what = FREED;
	}
	pthread_mutex_unlock(&spans_lock);
	switch (what) {
	case LIVE:
		if (len <= left)
			return 0;
		if (!off)
			return kp_fail(LIBPERF_ERR_INVALID_PMU_DATA, -EINVAL,
				       "%s: len %u is more than the %zu records of pmuData", fn,
				       len, left);
		return kp_fail(LIBPERF_ERR_INVALID_PMU_DATA, -EINVAL,
			       "%s: len %u goes past the end of the array pmuData points into (%zu "
			       "records from there)",
			       fn, len, left);
	case MISALIGNED:
		return kp_fail(LIBPERF_ERR_INVALID_PMU_DATA, -EINVAL,
			       "%s: pmuData points into the middle of a record", fn);
	case FREED:
		return kp_fail(LIBPERF_ERR_INVALID_PMU_DATA, -EINVAL,
			       "%s: pmuData was freed already (PmuDataFree)", fn);
	case UNKNOWN:
		break;
	}
	return 0; /* an array of the caller's own */
}

/* the callchains of the records: into the array's arena; the processes whose symbols the
 * pending ones need are held until the array is freed, even when their task is closed */
static int keep_chains(struct kp_data_builder *b, struct data_hdr *h)
{
	size_t n = b->n, have = b->chains_cap < n ? b->chains_cap : n, i, k, cap = 0;
	const struct PmuData *recs = (const struct PmuData *)h->recs;

	if (!b->chains)
		return 0;
	h->chains = arena_alloc(&h->arena, n * sizeof(*h->chains));
	if (!h->chains)
		return -ENOMEM;
	memset(h->chains, 0, n * sizeof(*h->chains));
	memcpy(h->chains, b->chains, have * sizeof(*h->chains));
	for (i = 0; i < n; i++) {
		if (!h->chains[i].pending || recs[i].pid <= 0)
			continue;
		for (k = 0; k < h->npins && h->pins[k] != recs[i].pid; k++)
			;
		if (k < h->npins)
			continue;
		if (kp_grow((void **)&h->pins, &cap, h->npins + 1, sizeof(*h->pins)))
			return -ENOMEM;
		h->pins[h->npins++] = recs[i].pid;
		kp_pmu_sym_hold(recs[i].pid);
	}
	return 0;
}

int kp_data_builder_finish(struct kp_data_builder *b, struct PmuData **out)
{
	struct data_hdr *h;
	size_t n = b->n;
	int err;

	*out = NULL;
	if (b->failed) {
		kp_data_builder_free(b);
		return -ENOMEM;
	}
	if (!n) {
		kp_data_builder_free(b);
		return 0;
	}
	h = malloc(sizeof(*h) + n * sizeof(struct PmuData));
	if (!h)
		goto nomem;
	h->magic = DATA_MAGIC;
	h->len = n;
	h->chains = NULL;
	h->pins = NULL;
	h->npins = 0;
	memcpy(h->recs, b->recs, n * sizeof(struct PmuData));
	h->arena = b->arena;
	b->arena.head = NULL; /* now the array's, with the raw references and the marks */
	b->arena.marked = NULL;
	err = keep_chains(b, h);
	b->n = 0;
	kp_data_builder_free(b);
	if (!err)
		err = live_add(h);
	if (err) {
		release_data(h->recs);
		return kp_fail(COMMON_ERR_NOMEM, err, "out of memory");
	}
	err = kp_registry_add(h->recs, release_data);
	if (err) {
		release_data(h->recs);
		return kp_fail(COMMON_ERR_NOMEM, err, "out of memory");
	}
	*out = (struct PmuData *)h->recs;
	return (int)n;
nomem:
	kp_data_builder_free(b);
	return kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory for %zu records", n);
}

static struct data_hdr *header_of(const struct PmuData *data)
{
	struct data_hdr *h;

	if (!data || !kp_registry_has(data))
		return NULL;
	h = (struct data_hdr *)((char *)data - offsetof(struct data_hdr, recs));
	return h->magic == DATA_MAGIC ? h : NULL;
}

long kp_data_len(const struct PmuData *data)
{
	struct data_hdr *h = header_of(data);

	return h ? (long)h->len : -1;
}

const struct kp_data_chain *kp_data_chain_of(const struct PmuData *data, size_t i)
{
	struct data_hdr *h = header_of(data);

	if (!h || !h->chains || i >= h->len || !h->chains[i].n)
		return NULL;
	return &h->chains[i];
}

int kp_data_resolve(struct PmuData *data)
{
	struct data_hdr *h = header_of(data);
	struct copier c;
	size_t i, failed = 0;
	int err = 0;

	if (!h)
		return -ENOENT;
	if (!h->chains)
		return 0;
	copier_init(&c, &h->arena);
	for (i = 0; i < h->len && !err; i++) {
		struct kp_data_chain *ch = &h->chains[i];
		struct Stack *st;

		if (!ch->pending || data[i].stack)
			continue;
		/* sampled stacks: a JVM whose JIT code is sampled is asked for its perf map */
		err = kp_sym_resolve_stack(data[i].pid, ch->ips, ch->n, ch->flags | KP_SYM_ASK_JIT,
					   &st);
		if (err == -ENOMEM)
			break;
		if (err) {
			/* this record stays without a stack; the others are resolved */
			if (!failed++)
				kp_warn(KPERF_WARN_SYM_INCOMPLETE,
					"a stack of pid %d was not resolved: %s", (int)data[i].pid,
					Perror());
			kp_clear_error();
			err = 0;
			continue;
		}
		data[i].stack = copy_stack(&c, st);
		if (!data[i].stack)
			err = -ENOMEM;
		ch->pending = false;
	}
	copier_free(&c);
	if (err)
		return kp_fail(COMMON_ERR_NOMEM, err, "out of memory while resolving %zu records",
			       h->len);
	return 0;
}
