/*
 * sample_table.c - tables keyed by a sample's key (struct kp_sample_key), for sampling.c:
 * the aggregates drained from the kernel until they are read, and, during one read, the
 * resolved stack of each distinct (process, kernel stack, user stack).
 *
 * Entries are kept dense, in the order they were added (a read reports them in that
 * order), with an open-addressing index of entry number + 1 over them.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "pmu.h"

static size_t key_hash(const struct kp_sample_key *k)
{
	const unsigned char *b = (const unsigned char *)k;
	uint64_t h = 1469598103934665603ULL;
	size_t i;

	for (i = 0; i < sizeof(*k); i++)
		h = (h ^ b[i]) * 1099511628211ULL;
	return (size_t)h;
}

/* the index slot for <k>: holds its entry number + 1, or 0 where it would go */
static size_t *slot_of(struct kp_sample_table *t, const struct kp_sample_key *k)
{
	size_t i;

	for (i = key_hash(k) & (t->slots - 1);; i = (i + 1) & (t->slots - 1)) {
		size_t *slot = &t->index[i];

		if (!*slot || !memcmp(&t->e[*slot - 1].key, k, sizeof(*k)))
			return slot;
	}
}

static int reindex(struct kp_sample_table *t, size_t slots)
{
	size_t i;

	free(t->index);
	t->index = calloc(slots, sizeof(*t->index));
	if (!t->index) {
		t->slots = 0;
		return -ENOMEM;
	}
	t->slots = slots;
	for (i = 0; i < t->n; i++)
		*slot_of(t, &t->e[i].key) = i + 1;
	return 0;
}

struct kp_sample_ent *kp_sample_table_get(struct kp_sample_table *t,
					  const struct kp_sample_key *key, bool *created)
{
	struct kp_sample_ent *e;
	size_t *slot;

	*created = false;
	if ((t->n + 1) * 2 > t->slots && reindex(t, t->slots ? t->slots * 2 : 1024))
		return NULL;
	slot = slot_of(t, key);
	if (*slot)
		return &t->e[*slot - 1];
	if (kp_grow((void **)&t->e, &t->cap, t->n + 1, sizeof(*t->e)))
		return NULL;
	e = &t->e[t->n];
	memset(e, 0, sizeof(*e));
	e->key = *key;
	*slot = ++t->n;
	*created = true;
	return e;
}

void kp_sample_table_clear(struct kp_sample_table *t)
{
	if (t->n && t->slots)
		memset(t->index, 0, t->slots * sizeof(*t->index));
	t->n = 0;
}

void kp_sample_table_free(struct kp_sample_table *t)
{
	free(t->e);
	free(t->index);
	memset(t, 0, sizeof(*t));
}
