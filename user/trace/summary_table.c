/*
 * summary_table.c - the rows of the syscall summary kept in userspace: those of processes
 * that exited, moved out of the kernel map (syscall_bpf.c) so that the map holds the live
 * processes only, and the sum of per-CPU values and of both halves when the summary is read.
 *
 * Rows are (process, syscall) pairs with an open-addressing index. The table is bounded:
 * past KP_SYS_TABLE_MAX rows, the calls of a new pair are added to its syscall's overflow row
 * (KP_SYS_OVERFLOW_TGID), so a trace of any length keeps counting every call.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "trace.h"

/* t += s for the fields both kinds of per-CPU value have (struct kp_sys_stat and struct
 * kp_sys_stack_stat): calls, errors, total, min, max, and the first comm */
#define ADD_SHARED(t, s)                                                 \
	do {                                                             \
		if (!(t)->calls || (s)->min_ns < (t)->min_ns)            \
			(t)->min_ns = (s)->min_ns;                       \
		if ((s)->max_ns > (t)->max_ns)                           \
			(t)->max_ns = (s)->max_ns;                       \
		if (!(t)->comm[0])                                       \
			memcpy((t)->comm, (s)->comm, sizeof((t)->comm)); \
		(t)->calls += (s)->calls;                                \
		(t)->errors += (s)->errors;                              \
		(t)->total_ns += (s)->total_ns;                          \
	} while (0)

/* the histogram of a kernel value folded into the KP_HIST_SLOTS reported (idempotent: the
 * slots past the last reported one are 0 afterwards) */
static void add_stat(struct kp_sys_stat *t, const struct kp_sys_stat *s)
{
	int i;

	if (!s->calls)
		return;
	ADD_SHARED(t, s);
	for (i = 0; i < KP_HIST_BPF_SLOTS; i++)
		t->hist[i < KP_HIST_SLOTS ? i : KP_HIST_SLOTS - 1] += s->hist[i];
}

void kp_sys_stat_add(struct kp_sys_stat *to, const struct kp_sys_stat *from)
{
	add_stat(to, from);
}

void kp_sys_stack_stat_add(struct kp_sys_stack_stat *to, const struct kp_sys_stack_stat *from)
{
	if (from->calls)
		ADD_SHARED(to, from);
}

static size_t hash_key(const struct kp_sys_key *k)
{
	uint64_t h = ((uint64_t)k->tgid << 32 | k->nr) * 0x9E3779B97F4A7C15ULL;

	return (size_t)(h >> 17);
}

/* the slot of <k> in the index: its row + 1, or 0 where it would go */
static size_t *slot_of(struct kp_sys_table *t, const struct kp_sys_key *k)
{
	size_t i = hash_key(k) & (t->isize - 1);

	for (;; i = (i + 1) & (t->isize - 1)) {
		size_t r = t->index[i];

		if (!r || (t->rows[r - 1].key.tgid == k->tgid && t->rows[r - 1].key.nr == k->nr))
			return &t->index[i];
	}
}

static int grow_index(struct kp_sys_table *t)
{
	size_t size = t->isize ? t->isize * 2 : 1024, i;
	size_t *old = t->index, oldsize = t->isize;

	t->index = calloc(size, sizeof(*t->index));
	if (!t->index) {
		t->index = old;
		return -ENOMEM;
	}
	t->isize = size;
	for (i = 0; i < oldsize; i++)
		if (old[i])
			*slot_of(t, &t->rows[old[i] - 1].key) = old[i];
	free(old);
	return 0;
}

int kp_sys_table_add(struct kp_sys_table *t, const struct kp_sys_key *key,
		     const struct kp_sys_stat *s)
{
	struct kp_sys_key k = *key;
	size_t *slot;

	if (!s->calls)
		return 0;
	if ((t->n + 1) * 2 > t->isize && grow_index(t))
		return -ENOMEM;
	slot = slot_of(t, &k);
	if (!*slot && t->max_rows && t->n >= t->max_rows && k.tgid != KP_SYS_OVERFLOW_TGID) {
		/* full: the overflow row of this syscall (one of at most 1024) takes the calls */
		k.tgid = KP_SYS_OVERFLOW_TGID;
		t->folded += s->calls;
		slot = slot_of(t, &k);
	}
	if (!*slot) {
		if (t->n == t->cap) {
			size_t cap = t->cap ? t->cap * 2 : 256;
			struct kp_sys_row *rows = realloc(t->rows, cap * sizeof(*rows));

			if (!rows)
				return -ENOMEM;
			t->rows = rows;
			t->cap = cap;
		}
		memset(&t->rows[t->n], 0, sizeof(t->rows[t->n]));
		t->rows[t->n].key = k;
		*slot = ++t->n;
	}
	add_stat(&t->rows[*slot - 1].stat, s);
	return 0;
}

int kp_sys_table_copy(struct kp_sys_table *to, const struct kp_sys_table *from)
{
	size_t i;
	int err;

	for (i = 0; i < from->n; i++) {
		err = kp_sys_table_add(to, &from->rows[i].key, &from->rows[i].stat);
		if (err)
			return err;
	}
	return 0;
}

size_t kp_sys_table_drop(struct kp_sys_table *t, const int *tgids, unsigned n)
{
	size_t i, j, kept = 0;

	for (i = 0; i < t->n; i++) {
		for (j = 0; j < n; j++)
			if ((uint32_t)tgids[j] == t->rows[i].key.tgid)
				break;
		if (j == n)
			t->rows[kept++] = t->rows[i];
	}
	if (kept == t->n)
		return 0;
	j = t->n - kept;
	t->n = kept;
	/* the index again, from the rows kept */
	memset(t->index, 0, t->isize * sizeof(*t->index));
	for (i = 0; i < t->n; i++)
		*slot_of(t, &t->rows[i].key) = i + 1;
	return j;
}

void kp_sys_table_free(struct kp_sys_table *t)
{
	free(t->rows);
	free(t->index);
	memset(t, 0, sizeof(*t));
}
