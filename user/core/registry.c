/*
 * registry.c - the arrays handed to callers (PmuRead, PmuTraceRead, lists), so that the
 * matching *Free can tell a live array from one already freed or never returned.
 *
 * libkperf's free functions take only the pointer; a Python wrapper, a finalizer or a
 * careless caller may free twice. Freeing something unknown is ignored instead of
 * corrupting the heap. An open-addressing hash set keyed by pointer, under one lock.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include "core.h"

struct slot {
	void *ptr; /* NULL: empty; TOMBSTONE: deleted */
	void (*release)(void *ptr);
};

#define TOMBSTONE ((void *)1)

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static struct slot *slots;
static size_t nslots; /* a power of two */
static size_t used; /* live + tombstones */

static size_t hash_ptr(const void *p)
{
	uint64_t x = (uintptr_t)p;

	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	return (size_t)x;
}

static struct slot *find(const void *ptr)
{
	size_t i;

	if (!nslots)
		return NULL;
	for (i = hash_ptr(ptr) & (nslots - 1);; i = (i + 1) & (nslots - 1)) {
		if (slots[i].ptr == ptr)
			return &slots[i];
		if (!slots[i].ptr)
			return NULL;
	}
}

static int rehash(size_t n)
{
	struct slot *old = slots;
	size_t oldn = nslots, i, j;

	slots = calloc(n, sizeof(*slots));
	if (!slots) {
		slots = old;
		return -ENOMEM;
	}
	nslots = n;
	used = 0;
	for (i = 0; i < oldn; i++) {
		if (!old[i].ptr || old[i].ptr == TOMBSTONE)
			continue;
		for (j = hash_ptr(old[i].ptr) & (n - 1); slots[j].ptr; j = (j + 1) & (n - 1))
			;
		slots[j] = old[i];
		used++;
	}
	free(old);
	return 0;
}

int kp_registry_add(void *ptr, void (*release)(void *ptr))
{
	size_t i;
	int err = 0;

	pthread_mutex_lock(&reg_lock);
	if ((used + 1) * 2 > nslots) {
		/* size for the live entries only: tombstones of freed arrays go away here,
		 * so a long run of read/free cycles does not grow the table */
		size_t live = 0, n = 64, i2;

		for (i2 = 0; i2 < nslots; i2++)
			live += slots[i2].ptr && slots[i2].ptr != TOMBSTONE;
		while (n < (live + 1) * 4)
			n *= 2;
		err = rehash(n);
	}
	if (!err) {
		for (i = hash_ptr(ptr) & (nslots - 1);; i = (i + 1) & (nslots - 1)) {
			if (!slots[i].ptr || slots[i].ptr == TOMBSTONE)
				break;
		}
		if (!slots[i].ptr)
			used++;
		slots[i].ptr = ptr;
		slots[i].release = release;
	}
	pthread_mutex_unlock(&reg_lock);
	return err;
}

bool kp_registry_release(void *ptr)
{
	void (*release)(void *) = NULL;
	struct slot *s;

	if (!ptr || ptr == TOMBSTONE)
		return false;
	pthread_mutex_lock(&reg_lock);
	s = find(ptr);
	if (s) {
		release = s->release;
		s->ptr = TOMBSTONE;
		s->release = NULL;
	}
	pthread_mutex_unlock(&reg_lock);
	if (!release)
		return false;
	release(ptr);
	return true;
}

bool kp_registry_has(const void *ptr)
{
	bool found;

	if (!ptr || ptr == TOMBSTONE)
		return false;
	pthread_mutex_lock(&reg_lock);
	found = find(ptr) != NULL;
	pthread_mutex_unlock(&reg_lock);
	return found;
}

bool kp_registry_is(const void *ptr, void (*release)(void *ptr))
{
	struct slot *s;
	bool found;

	if (!ptr || ptr == TOMBSTONE)
		return false;
	pthread_mutex_lock(&reg_lock);
	s = find(ptr);
	found = s && s->release == release;
	pthread_mutex_unlock(&reg_lock);
	return found;
}
