/*
 * arena.c - the one allocation strategy of ProcDataRead: a chain of blocks that everything
 * returned is cut from, released as a whole by ProcDataFree.
 *
 * The structs of proc_data_types.h nest arrays of entries holding strings and arrays of
 * their own; freeing them piece by piece would need a free routine per source that also
 * copes with a half-built entry. With an arena a parser simply stops on failure, and a mark
 * taken before a source lets the reader drop that source's leftovers.
 */
#include <errno.h>
#include <stdalign.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proc.h"

#define BLOCK_BYTES (64 * 1024)
#define ALIGN 16

struct kp_proc_block {
	struct kp_proc_block *prev;
	size_t size, used;
	alignas(ALIGN) unsigned char mem[];
};

static __thread long alloc_budget = -1;

void kp_proc_fail_after(long n)
{
	alloc_budget = n;
}

static void *alloc_aligned(struct kp_proc_arena *a, size_t size, size_t align)
{
	struct kp_proc_block *b = a->top;
	size_t start, bytes;
	void *p;

	if (alloc_budget == 0)
		return NULL;
	if (alloc_budget > 0)
		alloc_budget--;
	if (size > SIZE_MAX / 2)
		return NULL;
	start = b ? (b->used + align - 1) & ~(align - 1) : 0;
	if (!b || start > b->size || b->size - start < size) {
		bytes = size > BLOCK_BYTES ? size : BLOCK_BYTES;
		b = malloc(sizeof(*b) + bytes);
		if (!b)
			return NULL;
		b->prev = a->top;
		b->size = bytes;
		b->used = 0;
		a->top = b;
		start = 0;
	}
	p = b->mem + start;
	b->used = start + size;
	memset(p, 0, size);
	return p;
}

void *kp_proc_alloc(struct kp_proc_arena *a, size_t size)
{
	return alloc_aligned(a, size ? size : 1, ALIGN);
}

char *kp_proc_strndup(struct kp_proc_arena *a, const char *s, size_t n)
{
	char *p;

	if (!s)
		n = 0;
	p = alloc_aligned(a, n + 1, 1);
	if (p && n)
		memcpy(p, s, n);
	return p;
}

char *kp_proc_strdup(struct kp_proc_arena *a, const char *s)
{
	return kp_proc_strndup(a, s, s ? strlen(s) : 0);
}

void *kp_proc_push(struct kp_proc_arena *a, struct kp_proc_vec *v, size_t size)
{
	if (v->n == v->cap) {
		unsigned cap = v->cap ? v->cap * 2 : 8;
		void *items;

		if (cap < v->cap || (size_t)cap > SIZE_MAX / size)
			return NULL;
		items = kp_proc_alloc(a, (size_t)cap * size);
		if (!items)
			return NULL;
		if (v->n)
			memcpy(items, v->items, (size_t)v->n * size);
		v->items = items;
		v->cap = cap;
	}
	return (char *)v->items + (size_t)v->n++ * size;
}

int kp_proc_push_field(struct kp_proc_arena *a, struct kp_proc_vec *v, const char *key,
		       const char *value)
{
	char *k = kp_proc_strdup(a, key), *val = kp_proc_strdup(a, value);
	struct ProcField *f;

	if (!k || !val)
		return -ENOMEM;
	f = kp_proc_push(a, v, sizeof(*f));
	if (!f)
		return -ENOMEM;
	f->key = k;
	f->value = val;
	return 0;
}

void kp_proc_mark(const struct kp_proc_arena *a, struct kp_proc_mark *m)
{
	m->top = a->top;
	m->used = a->top ? a->top->used : 0;
}

void kp_proc_rollback(struct kp_proc_arena *a, const struct kp_proc_mark *m)
{
	while (a->top && a->top != m->top) {
		struct kp_proc_block *prev = a->top->prev;

		free(a->top);
		a->top = prev;
	}
	if (a->top)
		a->top->used = m->used;
}

void kp_proc_arena_free(struct kp_proc_arena *a)
{
	struct kp_proc_mark empty = { 0 };

	kp_proc_rollback(a, &empty);
}
