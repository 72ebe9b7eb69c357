/*
 * data.c - the PmuData arrays handed to callers.
 *
 * Records are built into a growable array; everything a record points to (event name,
 * comm, topology, stack with its symbols, raw tracepoint record) is copied into an arena
 * owned by the array, de-duplicated (a stack shared by 10 000 records is copied once).
 * The array is preceded by a hidden header that knows its length and its arena, so
 * PmuDataFree needs only the pointer, PmuAppendData can tell how long an array is, and a
 * pointer the library did not hand out is recognised (the registry) and ignored.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "kperf/pcerrc.h"
#include "pmu.h"

#define DATA_MAGIC 0x6b70657266444154ULL /* "kperfDAT" */
#define CHUNK_SIZE 65536

struct chunk {
	struct chunk *next;
	size_t used, size;
	max_align_t data[];
};

struct arena {
	struct chunk *head;
};

struct kp_data_builder {
	struct PmuData *recs;
	size_t *raw_lens;
	size_t n, cap, raw_cap;
	struct arena arena;
	struct kp_map strs; /* interned strings */
	struct kp_map stacks; /* source Stack* -> copied Stack* */
	struct kp_map syms; /* source Symbol* -> copied Symbol* */
	bool failed;
};

struct data_hdr {
	uint64_t magic;
	size_t len;
	size_t *raw_lens; /* in the arena */
	struct arena arena;
	max_align_t recs[]; /* struct PmuData[len] */
};

static void *arena_alloc(struct arena *a, size_t size)
{
	struct chunk *c = a->head;
	void *p;

	size = (size + sizeof(max_align_t) - 1) / sizeof(max_align_t) * sizeof(max_align_t);
	if (!c || c->size - c->used < size) {
		size_t csize = size > CHUNK_SIZE ? size : CHUNK_SIZE;

		c = malloc(sizeof(*c) + csize);
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

static void arena_free(struct arena *a)
{
	struct chunk *c = a->head, *n;

	for (; c; c = n) {
		n = c->next;
		free(c);
	}
	a->head = NULL;
}

struct kp_data_builder *kp_data_builder_new(void)
{
	struct kp_data_builder *b = calloc(1, sizeof(*b));

	if (b) {
		kp_map_init(&b->strs, true);
		kp_map_init(&b->stacks, false);
		kp_map_init(&b->syms, false);
	}
	return b;
}

void kp_data_builder_free(struct kp_data_builder *b)
{
	if (!b)
		return;
	free(b->recs);
	free(b->raw_lens);
	kp_map_free(&b->strs);
	kp_map_free(&b->stacks);
	kp_map_free(&b->syms);
	arena_free(&b->arena);
	free(b);
}

size_t kp_data_builder_len(const struct kp_data_builder *b)
{
	return b->n;
}

static char *intern(struct kp_data_builder *b, const char *s)
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
	copy = arena_alloc(&b->arena, len);
	if (!copy)
		return NULL;
	memcpy(copy, s, len);
	slot->key = copy; /* the key must outlive the caller's string */
	slot->val = copy;
	return copy;
}

static struct Symbol *copy_symbol(struct kp_data_builder *b, const struct Symbol *src)
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
	s = arena_alloc(&b->arena, sizeof(*s));
	if (!s)
		return NULL;
	*s = *src;
	s->module = intern(b, src->module);
	s->symbolName = intern(b, src->symbolName);
	s->mangleName = intern(b, src->mangleName);
	s->fileName = intern(b, src->fileName);
	slot->val = s;
	return s;
}

/* copy the list starting at <src> (leaf first, following next) */
static struct Stack *copy_stack(struct kp_data_builder *b, const struct Stack *src)
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
		node = arena_alloc(&b->arena, sizeof(*node));
		if (!node)
			return NULL;
		node->symbol = copy_symbol(b, src->symbol);
		node->count = src->count;
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
	if (kp_grow((void **)&b->recs, &b->cap, b->n + 1, sizeof(*b->recs)) ||
	    kp_grow((void **)&b->raw_lens, &b->raw_cap, b->n + 1, sizeof(*b->raw_lens)))
		goto nomem;
	d = &b->recs[b->n];
	*d = *rec;
	d->evt = intern(b, rec->evt);
	d->comm = intern(b, rec->comm ? rec->comm : "");
	d->cgroupName = intern(b, rec->cgroupName);
	if ((rec->evt && !d->evt) || !d->comm)
		goto nomem;
	if (rec->cpuTopo) {
		d->cpuTopo = arena_alloc(&b->arena, sizeof(*d->cpuTopo));
		if (!d->cpuTopo)
			goto nomem;
		*d->cpuTopo = *rec->cpuTopo;
	}
	if (rec->stack) {
		d->stack = copy_stack(b, rec->stack);
		if (!d->stack)
			goto nomem;
	}
	if (rec->ext) {
		d->ext = arena_alloc(&b->arena, sizeof(*d->ext));
		if (!d->ext)
			goto nomem;
		*d->ext = *rec->ext;
	}
	b->raw_lens[b->n] = 0;
	if (rec->rawData && rec->rawData->data && raw_len) {
		struct SampleRawData *raw = arena_alloc(&b->arena, sizeof(*raw));
		char *bytes = arena_alloc(&b->arena, raw_len);

		if (!raw || !bytes)
			goto nomem;
		memcpy(bytes, rec->rawData->data, raw_len);
		raw->data = bytes;
		d->rawData = raw;
		b->raw_lens[b->n] = raw_len;
	} else {
		d->rawData = NULL;
	}
	b->n++;
	return 0;
nomem:
	b->failed = true;
	return kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory for %zu records", b->n + 1);
}

static void release_data(void *p)
{
	struct data_hdr *h = (struct data_hdr *)((char *)p - offsetof(struct data_hdr, recs));

	h->magic = 0;
	arena_free(&h->arena);
	free(h);
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
	h->raw_lens = arena_alloc(&b->arena, n * sizeof(size_t));
	if (!h->raw_lens) {
		free(h);
		goto nomem;
	}
	memcpy(h->raw_lens, b->raw_lens, n * sizeof(size_t));
	memcpy(h->recs, b->recs, n * sizeof(struct PmuData));
	h->arena = b->arena;
	b->arena.head = NULL; /* now the array's */
	kp_data_builder_free(b);
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

size_t kp_data_raw_len(const struct PmuData *data, size_t i)
{
	struct data_hdr *h = header_of(data);

	return h && i < h->len ? h->raw_lens[i] : 0;
}
