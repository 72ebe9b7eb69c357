/*
 * handle.c - the table of task handles (pd) shared by PmuOpen, PmuTraceOpen and UTraceOpen.
 *
 * A handle is a small int > 0, reused like a file descriptor once closed. The table is
 * locked, and an object stays alive while any thread borrows it: PmuClose from one thread
 * while another is inside PmuRead on the same pd is safe; the object is destroyed when
 * the last borrower returns it.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include "core.h"
#include "kperf/pcerrc.h"

struct kp_entry {
	enum kp_handle_kind kind;
	void *obj;
	const struct kp_handle_ops *ops;
	int refs; /* the table's own reference plus one per borrower */
	bool closed; /* removed from the table, waiting for its borrowers */
};

static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static struct kp_entry **table; /* table[pd - 1] */
static size_t table_cap;
static struct kp_entry **closing; /* closed entries still borrowed */
static size_t closing_len, closing_cap;

int kp_handle_add(enum kp_handle_kind kind, void *obj, const struct kp_handle_ops *ops)
{
	struct kp_entry *e = calloc(1, sizeof(*e));
	size_t i;
	int err;

	if (!e)
		return kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory for a task handle");
	e->kind = kind;
	e->obj = obj;
	e->ops = ops;
	e->refs = 1;

	pthread_mutex_lock(&table_lock);
	for (i = 0; i < table_cap && table[i]; i++)
		;
	if (i == table_cap) {
		err = kp_grow((void **)&table, &table_cap, table_cap + 1, sizeof(*table));
		if (err) {
			pthread_mutex_unlock(&table_lock);
			free(e);
			return kp_fail(COMMON_ERR_NOMEM, err, "out of memory for a task handle");
		}
	}
	table[i] = e;
	pthread_mutex_unlock(&table_lock);
	return (int)i + 1;
}

static struct kp_entry *lookup_locked(int pd, enum kp_handle_kind kind)
{
	struct kp_entry *e;

	if (pd <= 0 || (size_t)pd > table_cap)
		return NULL;
	e = table[pd - 1];
	if (!e || e->kind != kind)
		return NULL;
	return e;
}

static int invalid_pd(int pd)
{
	return kp_fail(
		LIBPERF_ERR_INVALID_PD, -EBADF,
		"invalid task handle %d: it was never returned by an open call of this kind, "
		"or it was closed",
		pd);
}

void *kp_handle_get(int pd, enum kp_handle_kind kind)
{
	struct kp_entry *e;
	void *obj = NULL;

	pthread_mutex_lock(&table_lock);
	e = lookup_locked(pd, kind);
	if (e) {
		e->refs++;
		obj = e->obj;
	}
	pthread_mutex_unlock(&table_lock);
	if (!obj)
		invalid_pd(pd);
	return obj;
}

/* drop one reference of <e> (table lock held); returns true when it must be destroyed */
static bool unref_locked(struct kp_entry *e)
{
	size_t i;

	if (--e->refs > 0)
		return false;
	for (i = 0; i < closing_len; i++) {
		if (closing[i] == e) {
			closing[i] = closing[--closing_len];
			break;
		}
	}
	return true;
}

static void destroy(struct kp_entry *e)
{
	if (e->ops && e->ops->destroy)
		e->ops->destroy(e->obj);
	free(e);
}

void kp_handle_put(void *obj)
{
	struct kp_entry *e = NULL;
	bool dead = false;
	size_t i;

	if (!obj)
		return;
	pthread_mutex_lock(&table_lock);
	for (i = 0; i < table_cap && !e; i++)
		if (table[i] && table[i]->obj == obj)
			e = table[i];
	for (i = 0; i < closing_len && !e; i++)
		if (closing[i]->obj == obj)
			e = closing[i];
	if (e)
		dead = unref_locked(e);
	pthread_mutex_unlock(&table_lock);
	if (dead)
		destroy(e);
}

int kp_handle_close(int pd, enum kp_handle_kind kind)
{
	struct kp_entry *e;
	bool dead;

	pthread_mutex_lock(&table_lock);
	e = lookup_locked(pd, kind);
	if (!e) {
		pthread_mutex_unlock(&table_lock);
		return invalid_pd(pd);
	}
	table[pd - 1] = NULL;
	e->closed = true;
	if (e->refs > 1 &&
	    kp_grow((void **)&closing, &closing_cap, closing_len + 1, sizeof(*closing)) == 0)
		closing[closing_len++] = e;
	dead = unref_locked(e);
	pthread_mutex_unlock(&table_lock);
	if (dead)
		destroy(e);
	return 0;
}
