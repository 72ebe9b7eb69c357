/*
 * map.c - the hash map shared by the modules that de-duplicate (strings, stacks, symbols):
 * open addressing with linear probing, grown at half full.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"

void kp_map_init(struct kp_map *m, bool string_keys)
{
	memset(m, 0, sizeof(*m));
	m->strings = string_keys;
}

static size_t hash_key(const struct kp_map *m, const void *key)
{
	uint64_t h = 1469598103934665603ULL;

	if (m->strings) {
		const unsigned char *s = key;

		for (; *s; s++)
			h = (h ^ *s) * 1099511628211ULL;
	} else {
		h = (uint64_t)(uintptr_t)key * 0x9E3779B97F4A7C15ULL;
		h ^= h >> 29;
	}
	return (size_t)h;
}

static bool key_eq(const struct kp_map *m, const void *a, const void *b)
{
	return m->strings ? !strcmp(a, b) : a == b;
}

static struct kp_map_slot *find(const struct kp_map *m, const void *key)
{
	size_t i;

	for (i = hash_key(m, key) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
		if (!m->slots[i].key || key_eq(m, m->slots[i].key, key))
			return &m->slots[i];
	}
}

static int grow(struct kp_map *m)
{
	struct kp_map_slot *old = m->slots;
	size_t oldcap = m->cap, i;

	m->cap = m->cap ? m->cap * 2 : 64;
	m->slots = calloc(m->cap, sizeof(*m->slots));
	if (!m->slots) {
		m->slots = old;
		m->cap = oldcap;
		return -ENOMEM;
	}
	for (i = 0; i < oldcap; i++)
		if (old[i].key)
			*find(m, old[i].key) = old[i];
	free(old);
	return 0;
}

struct kp_map_slot *kp_map_slot(struct kp_map *m, const void *key, bool *created)
{
	struct kp_map_slot *s;

	if ((m->len + 1) * 2 > m->cap && grow(m))
		return NULL;
	s = find(m, key);
	if (created)
		*created = !s->key;
	if (!s->key) {
		s->key = key;
		s->val = NULL;
		m->len++;
	}
	return s;
}

void *kp_map_get(const struct kp_map *m, const void *key)
{
	struct kp_map_slot *s;

	if (!m->cap)
		return NULL;
	s = find(m, key);
	return s->key ? s->val : NULL;
}

void kp_map_free(struct kp_map *m)
{
	free(m->slots);
	memset(m, 0, sizeof(*m));
}

void kp_map_compact(struct kp_map *m)
{
	struct kp_map fresh;
	size_t i;

	kp_map_init(&fresh, m->strings);
	for (i = 0; i < m->cap; i++) {
		struct kp_map_slot *s, *o = &m->slots[i];

		if (!o->key || !o->val)
			continue;
		s = kp_map_slot(&fresh, o->key, NULL);
		if (!s) {
			kp_map_free(&fresh);
			return; /* out of memory: the old map stays */
		}
		s->val = o->val;
	}
	kp_map_free(m);
	*m = fresh;
}
