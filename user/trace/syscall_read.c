/*
 * syscall_read.c - what a loaded syscall object (syscall_bpf.c) has counted: the exits ring
 * (processes gone, calls whose row the kernel could not allocate), the rows of exited
 * processes moved out of the kernel map (harvest), the summary and the summary by stack, the
 * stacks, the counters, and forgetting processes.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "core/core.h"
#include "core/pidns.h"
#include "kperf/pcerrc.h"
#include "kperf/pmu.h"
#include "stack/stack.h"
#include "syscall_bpf.h"

/* a call whose row the kernel could not allocate: into its row here (harvest_lock held) */
static void late_call(struct kp_sys_bpf *b, const struct kp_sys_late_call *c)
{
	struct kp_sys_key key = { .tgid = c->tgid, .nr = c->nr };
	struct kp_sys_stat s = { .calls = 1, .errors = c->ret < 0, .total_ns = c->dur_ns };
	unsigned slot = 0;
	uint64_t d = c->dur_ns;

	s.min_ns = s.max_ns = c->dur_ns;
	while (d >>= 1)
		slot++; /* the kernel's log2 slot */
	s.hist[slot] = 1;
	memcpy(s.comm, c->comm, sizeof(s.comm));
	/* out of memory here too: the only loss, and the reason is the same */
	if (kp_sys_table_add(&b->exited, &key, &s))
		b->late_lost++;
	b->late_calls++;
}

/* the exits ring's callback, with harvest_lock held: an exit, or a call with no row */
int kp_sys_bpf_on_exit_note(void *ctx, void *data, size_t size)
{
	struct kp_sys_bpf *b = ctx;
	const struct kp_sys_exit_note *n = data;

	if (size < sizeof(*n))
		return 0;
	if (n->kind == KP_SYS_NOTE_CALL) {
		if (size >= sizeof(struct kp_sys_late_call))
			late_call(b, data);
		return 0;
	}
	if (b->npending >= MAX_PENDING)
		return 0; /* its rows stay in the map, still counted */
	if (kp_grow((void **)&b->pending, &b->pcap, b->npending + 1, sizeof(*b->pending)))
		return 0;
	b->pending[b->npending++] = n->tgid;
	return 0;
}

/* the per-CPU values of <key> in map <fd>, summed into <out>; -1 when it has none */
static int sum_cpus(struct kp_sys_bpf *b, int fd, const void *key, char *vals,
		    struct kp_sys_stat *out)
{
	size_t vsize = (sizeof(struct kp_sys_stat) + 7) / 8 * 8;
	int c;

	memset(out, 0, sizeof(*out));
	if (bpf_map_lookup_elem(fd, key, vals))
		return -1;
	for (c = 0; c < b->ncpus; c++)
		kp_sys_stat_add(out, (const void *)(vals + vsize * (size_t)c));
	return 0;
}

static char *cpu_values(struct kp_sys_bpf *b)
{
	/* zeroed: valgrind does not model per-CPU lookups */
	return calloc((size_t)b->ncpus, (sizeof(struct kp_sys_stat) + 7) / 8 * 8);
}

/* without CO-RE, the exit of a process's leader stands for the process's: it is gone when
 * /proc no longer has it, or has only its zombie leader */
static bool process_gone(__u32 tgid)
{
	char path[64], *text, *p;
	int threads = 0, i;
	bool gone;

	snprintf(path, sizeof(path), "/proc/%u/stat", tgid);
	if (kp_read_file(path, &text, NULL))
		return true;
	p = strrchr(text, ')');
	gone = false;
	if (p && (p[2] == 'Z' || p[2] == 'X')) {
		/* num_threads is field 20; p + 2 is field 3 */
		for (i = 3; p && i < 20; i++) {
			p = strchr(p + 1, ' ');
		}
		if (p)
			threads = atoi(p + 1);
		gone = threads <= 1;
	}
	free(text);
	return gone;
}

static int cmp_u32(const void *a, const void *b)
{
	__u32 x = *(const __u32 *)a, y = *(const __u32 *)b;

	return (x > y) - (x < y);
}

void kp_sys_bpf_harvest(struct kp_sys_bpf *b)
{
	struct kp_sys_key key, next, *prev = NULL, *keys = NULL;
	size_t nkeys = 0, kcap = 0, i, ngone = 0, nkeep = 0;
	struct kp_sys_stat sum;
	__u32 *gone = NULL;
	char *vals;

	if (!b->exits_rb)
		return;
	pthread_mutex_lock(&b->harvest_lock);
	ring_buffer__consume(b->exits_rb);
	if (!b->npending)
		goto out;
	/* the processes gone for sure; the others wait for the next round */
	gone = malloc(b->npending * sizeof(*gone));
	if (!gone)
		goto out;
	for (i = 0; i < b->npending; i++) {
		if (!b->compat || process_gone(b->pending[i]))
			gone[ngone++] = b->pending[i];
		else
			b->pending[nkeep++] = b->pending[i];
	}
	b->npending = nkeep;
	if (!ngone)
		goto out;
	qsort(gone, ngone, sizeof(*gone), cmp_u32);
	while (bpf_map_get_next_key(b->summary_fd, prev, &next) == 0) {
		key = next;
		prev = &key;
		if (!bsearch(&key.tgid, gone, ngone, sizeof(*gone), cmp_u32))
			continue;
		if (kp_grow((void **)&keys, &kcap, nkeys + 1, sizeof(*keys)))
			break;
		keys[nkeys++] = key;
	}
	vals = cpu_values(b);
	for (i = 0; vals && i < nkeys; i++) {
		/* the process made its last call: nothing adds to the row any more */
		if (sum_cpus(b, b->summary_fd, &keys[i], vals, &sum))
			continue;
		if (kp_sys_table_add(&b->exited, &keys[i], &sum))
			break; /* out of memory: the rows stay in the map */
		bpf_map_delete_elem(b->summary_fd, &keys[i]);
	}
	free(vals);
	free(keys);
out:
	free(gone);
	pthread_mutex_unlock(&b->harvest_lock);
}

int kp_sys_bpf_exits_epoll_fd(struct kp_sys_bpf *b)
{
	return b->exits_rb ? ring_buffer__epoll_fd(b->exits_rb) : -1;
}

int kp_sys_bpf_summary(struct kp_sys_bpf *b, struct kp_sys_row **rows)
{
	struct kp_sys_key key, next, *prev = NULL;
	struct kp_sys_table all = { 0 };
	struct kp_sys_stat sum;
	char *vals;
	__u32 nr;
	int err = 0;

	*rows = NULL;
	vals = cpu_values(b);
	if (!vals)
		return kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
	kp_sys_bpf_harvest(b);
	pthread_mutex_lock(&b->harvest_lock);
	err = kp_sys_table_copy(&all, &b->exited);
	while (!err && bpf_map_get_next_key(b->summary_fd, prev, &next) == 0) {
		key = next;
		prev = &key;
		if (sum_cpus(b, b->summary_fd, &key, vals, &sum))
			continue; /* deleted meanwhile */
		err = kp_sys_table_add(&all, &key, &sum);
	}
	/* by syscall number: the one process's rows, else the calls the map had no room for,
	 * then those it could not allocate a row for when the exits ring was full */
	for (nr = 0; !err && nr < (b->single ? 1 : 2) * b->by_nr_entries; nr++) {
		key = (struct kp_sys_key){ .tgid = b->single		 ? b->single_tgid :
						   nr < b->by_nr_entries ? KP_SYS_OVERFLOW_TGID :
									   KP_SYS_NOMEM_TGID,
					   .nr = nr % b->by_nr_entries };
		if (!sum_cpus(b, b->by_nr_fd, &nr, vals, &sum))
			err = kp_sys_table_add(&all, &key, &sum);
	}
	pthread_mutex_unlock(&b->harvest_lock);
	free(vals);
	free(all.index);
	if (err) {
		free(all.rows);
		return kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
	}
	*rows = all.rows;
	return (int)all.n;
}

/* row <key> with its per-CPU values <vals> summed, appended to *out (kp_grow); -1 no memory */
static int cg_append(struct kp_sys_bpf *b, struct kp_sys_cg_row **out, size_t *n, size_t *cap,
		     const struct kp_sys_cg_key *key, const char *vals, __u32 kind)
{
	size_t vsize = (sizeof(struct kp_sys_stat) + 7) / 8 * 8;
	struct kp_sys_cg_row *r;
	int c;

	if (kp_grow((void **)out, cap, *n + 1, sizeof(**out)))
		return -1;
	r = &(*out)[(*n)++];
	memset(r, 0, sizeof(*r));
	r->key = *key;
	r->kind = kind;
	for (c = 0; c < b->ncpus; c++)
		kp_sys_stat_add(&r->stat, (const void *)(vals + vsize * (size_t)c));
	return 0;
}

/* the whole map in a few bpf() calls (hash batch operations, Linux 5.6): 1 when the kernel
 * cannot, so the caller walks key by key */
static int cg_read_batch(struct kp_sys_bpf *b, struct kp_sys_cg_row **out, size_t *n, size_t *cap)
{
	LIBBPF_OPTS(bpf_map_batch_opts, opts);
	size_t vsize = (sizeof(struct kp_sys_stat) + 7) / 8 * 8, i;
	/* about 256 KiB of values at a time */
	__u32 chunk = (__u32)(256 * 1024 / (vsize * (size_t)b->ncpus)), count;
	struct kp_sys_cg_key tok_in, tok_out, *keys = NULL;
	char *vals = NULL;
	bool first = true;
	int err;

	if (chunk < 16)
		chunk = 16;
	for (;;) {
		if (!keys) {
			/* not zeroed: the kernel writes what is read */
			keys = malloc(chunk * sizeof(*keys));
			vals = malloc(chunk * vsize * (size_t)b->ncpus);
			if (!keys || !vals) {
				err = -ENOMEM;
				break;
			}
		}
		count = chunk;
		err = bpf_map_lookup_batch(b->cg_summary_fd, first ? NULL : &tok_in, &tok_out, keys,
					   vals, &count, &opts);
		err = err ? -errno : 0;
		if (err == -ENOSPC && count == 0) {
			/* a bucket holds more rows than a chunk: again with room for it */
			free(keys);
			free(vals);
			keys = NULL;
			vals = NULL;
			chunk *= 2;
			continue;
		}
		if (err && err != -ENOENT) {
			if (first)
				err = 1; /* no batch operations here */
			break;
		}
		for (i = 0; i < count; i++)
			if (cg_append(b, out, n, cap, &keys[i], vals + i * vsize * (size_t)b->ncpus,
				      0)) {
				err = -ENOMEM;
				goto done;
			}
		if (err == -ENOENT) {
			err = 0;
			break; /* the end of the map */
		}
		tok_in = tok_out;
		first = false;
	}
done:
	free(keys);
	free(vals);
	return err;
}

int kp_sys_bpf_cg_summary(struct kp_sys_bpf *b, struct kp_sys_cg_row **rows)
{
	struct kp_sys_cg_key key, next, *prev = NULL;
	struct kp_sys_cg_row *out = NULL;
	uint64_t cnt[KP_CNT_MAX];
	size_t cap = 0, n = 0;
	char *vals = cpu_values(b);
	__u32 nr;
	int err;

	*rows = NULL;
	if (!vals)
		return kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
	err = cg_read_batch(b, &out, &n, &cap);
	if (err < 0)
		goto nomem;
	while (err > 0 && bpf_map_get_next_key(b->cg_summary_fd, prev, &next) == 0) {
		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(b->cg_summary_fd, &key, vals))
			continue; /* deleted meanwhile */
		if (cg_append(b, &out, &n, &cap, &key, vals, 0))
			goto nomem;
	}
	/* the calls the map had no room for, then those it could not allocate a row for: read
	 * only when the counters say there are some (a fold would otherwise read every syscall
	 * number's per-CPU values twice) */
	kp_sys_bpf_counters(b, cnt);
	for (nr = 0; nr < 2 * b->by_nr_entries; nr++) {
		bool nomem = nr >= b->by_nr_entries;

		if (!cnt[nomem ? KP_CNT_NOMEM_FOLDED : KP_CNT_SUMMARY_FULL] ||
		    bpf_map_lookup_elem(b->by_nr_fd, &nr, vals))
			continue;
		memset(&key, 0, sizeof(key));
		key.cgid = ~0ULL;
		key.nr = nr % b->by_nr_entries;
		if (cg_append(b, &out, &n, &cap, &key, vals,
			      nomem ? KP_SYS_NOMEM_TGID : KP_SYS_OVERFLOW_TGID))
			goto nomem;
		if (!out[n - 1].stat.calls)
			n--;
	}
	free(vals);
	*rows = out;
	return (int)n;
nomem:
	free(vals);
	free(out);
	return kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
}

int kp_sys_bpf_cg_forget(struct kp_sys_bpf *b, const uint64_t *ids, unsigned n)
{
	struct kp_sys_cg_key key, next, *prev = NULL, *del = NULL;
	size_t cap = 0, ndel = 0, i;
	int removed = 0;

	/* keys first, deletions after: a hash map's walk restarts when its current key goes */
	while (bpf_map_get_next_key(b->cg_summary_fd, prev, &next) == 0) {
		key = next;
		prev = &key;
		for (i = 0; i < n; i++)
			if (ids[i] == key.cgid)
				break;
		if (i == n)
			continue;
		if (kp_grow((void **)&del, &cap, ndel + 1, sizeof(*del))) {
			free(del);
			return kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
		}
		del[ndel++] = key;
	}
	for (i = 0; i < ndel; i++)
		removed += bpf_map_delete_elem(b->cg_summary_fd, &del[i]) == 0;
	free(del);
	return removed;
}

int kp_sys_bpf_stack_summary(struct kp_sys_bpf *b, struct kp_sys_stack_row **rows)
{
	size_t vsize = (sizeof(struct kp_sys_stack_stat) + 7) / 8 * 8, cap = 0, n = 0;
	struct kp_sys_stack_key key, next, *prev = NULL;
	struct kp_sys_stack_row *out = NULL;
	char *vals;
	int c;

	*rows = NULL;
	vals = calloc((size_t)b->ncpus, vsize);
	if (!vals)
		return kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
	while (bpf_map_get_next_key(b->stack_summary_fd, prev, &next) == 0) {
		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(b->stack_summary_fd, &key, vals))
			continue; /* deleted meanwhile */
		if (kp_grow((void **)&out, &cap, n + 1, sizeof(*out))) {
			free(out);
			free(vals);
			return kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
		}
		memset(&out[n], 0, sizeof(out[n]));
		out[n].key = key;
		for (c = 0; c < b->ncpus; c++) {
			const struct kp_sys_stack_stat *s =
				(const void *)(vals + vsize * (size_t)c);
			struct kp_sys_stack_stat *t = &out[n].stat;

			if (!s->calls)
				continue;
			if (!t->calls || s->min_ns < t->min_ns)
				t->min_ns = s->min_ns;
			if (s->max_ns > t->max_ns)
				t->max_ns = s->max_ns;
			if (!t->comm[0])
				memcpy(t->comm, s->comm, sizeof(t->comm));
			t->calls += s->calls;
			t->errors += s->errors;
			t->total_ns += s->total_ns;
		}
		if (out[n].stat.calls)
			n++;
	}
	free(vals);
	*rows = out;
	return (int)n;
}

void kp_sys_bpf_for_each_tgid(struct kp_sys_bpf *b, void (*fn)(void *ctx, uint32_t tgid), void *ctx)
{
	struct kp_sys_key key, next, *prev = NULL;

	if (b->single)
		fn(ctx, b->single_tgid); /* its rows are by syscall number, not in the map */
	while (bpf_map_get_next_key(b->summary_fd, prev, &next) == 0) {
		key = next;
		prev = &key;
		fn(ctx, key.tgid);
	}
}

unsigned kp_sys_bpf_stack(struct kp_sys_bpf *b, uint64_t id, bool kernel, uint64_t *ips,
			  unsigned max)
{
	return kp_stack_read(b->stacks_fd, id, kernel, ips, max);
}

/* the summary by stack forgets the same processes (nothing to do without stacks) */
static void forget_stack_rows(struct kp_sys_bpf *b, const int *tgids, unsigned n)
{
	struct kp_sys_stack_key key, next, *prev = NULL, *del = NULL;
	size_t cap = 0, ndel = 0, i;

	while (bpf_map_get_next_key(b->stack_summary_fd, prev, &next) == 0) {
		key = next;
		prev = &key;
		for (i = 0; i < n; i++)
			if ((__u32)tgids[i] == key.tgid)
				break;
		if (i < n && !kp_grow((void **)&del, &cap, ndel + 1, sizeof(*del)))
			del[ndel++] = key;
	}
	for (i = 0; i < ndel; i++)
		bpf_map_delete_elem(b->stack_summary_fd, &del[i]);
	free(del);
}

int kp_sys_bpf_forget(struct kp_sys_bpf *b, const int *tgids, unsigned n)
{
	struct kp_sys_key key, next, *prev = NULL, *del = NULL;
	size_t cap = 0, ndel = 0, i;
	int removed = 0;

	if (!n)
		return 0;
	/* keys first, deletions after: a hash map's walk restarts when its current key goes */
	while (bpf_map_get_next_key(b->summary_fd, prev, &next) == 0) {
		key = next;
		prev = &key;
		for (i = 0; i < n; i++)
			if ((__u32)tgids[i] == key.tgid)
				break;
		if (i == n)
			continue;
		if (kp_grow((void **)&del, &cap, ndel + 1, sizeof(*del))) {
			free(del);
			return kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
		}
		del[ndel++] = key;
	}
	for (i = 0; i < ndel; i++)
		removed += bpf_map_delete_elem(b->summary_fd, &del[i]) == 0;
	free(del);
	/* and those already moved out of the map at the process's exit */
	pthread_mutex_lock(&b->harvest_lock);
	removed += (int)kp_sys_table_drop(&b->exited, tgids, n);
	pthread_mutex_unlock(&b->harvest_lock);
	forget_stack_rows(b, tgids, n);
	return removed;
}

void kp_sys_bpf_counters(struct kp_sys_bpf *b, uint64_t out[KP_CNT_MAX])
{
	__u64 *vals = calloc((size_t)b->ncpus, sizeof(*vals));
	__u32 k;
	int c;

	memset(out, 0, KP_CNT_MAX * sizeof(*out));
	if (!vals)
		return;
	for (k = 0; k < KP_CNT_MAX; k++) {
		if (bpf_map_lookup_elem(b->counters_fd, &k, vals))
			continue;
		for (c = 0; c < b->ncpus; c++)
			out[k] += vals[c];
	}
	free(vals);
	/* calls without a kernel row that found no memory here either: not counted */
	pthread_mutex_lock(&b->harvest_lock);
	out[KP_CNT_STATE_FULL] += b->late_lost;
	pthread_mutex_unlock(&b->harvest_lock);
}
