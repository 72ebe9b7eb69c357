/*
 * syscall_read.c - what a loaded syscall object (syscall_bpf.c) has counted: the exits ring
 * (processes gone, calls whose row the kernel could not allocate), the rows of exited
 * processes moved out of the kernel map (harvest), the summary and the summary by stack, the
 * stacks, the counters, and forgetting processes.
 */
#include <errno.h>
#include <pthread.h>
#include <stddef.h>
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
#include "stack_capture.h"
#include "unwind/unwind.h"
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
	b->late_errno[c->err < KP_LATE_ERRNOS ? c->err : KP_LATE_ERRNOS - 1]++;
}

/* the index key of a row of the summary by stack */
static void stack_key_text(const struct kp_sys_stack_key *k, char *buf, size_t size)
{
	snprintf(buf, size, "%u:%u:%llx:%llx", k->tgid, k->nr, (unsigned long long)k->kstack,
		 (unsigned long long)k->ustack);
}

/* <r> into the summary by stack's rows kept here (harvest_lock held): added to the row of its
 * key, or a row of its own; -1 when there is no room (bounded like the exited processes' rows)
 * or no memory */
static int stack_row_add(struct kp_sys_bpf *b, const struct kp_sys_stack_row *r)
{
	struct kp_map_slot *slot;
	bool created = false;
	char text[80], *key;
	uintptr_t at;

	stack_key_text(&r->key, text, sizeof(text));
	at = (uintptr_t)kp_map_get(&b->late_index, text);
	if (at) {
		kp_sys_stack_stat_add(&b->late_stacks[at - 1].stat, &r->stat);
		return 0;
	}
	key = b->nlate_stacks < MAX_EXITED_ROWS ? strdup(text) : NULL;
	if (!key ||
	    kp_grow((void **)&b->late_stacks, &b->late_stacks_cap, b->nlate_stacks + 1,
		    sizeof(*b->late_stacks)) ||
	    !(slot = kp_map_slot(&b->late_index, key, &created))) {
		free(key);
		return -1;
	}
	b->late_stacks[b->nlate_stacks++] = *r;
	slot->val = (void *)(uintptr_t)b->nlate_stacks;
	return 0;
}

/* a call whose row in the summary by stack the kernel could not allocate: into its row here
 * (harvest_lock held) */
static void late_stack_call(struct kp_sys_bpf *b, const struct kp_sys_late_stack_call *c)
{
	struct kp_sys_stack_row r = {
		.key = { .tgid = c->tgid, .nr = c->nr, .kstack = c->kstack, .ustack = c->ustack },
		.stat = { .calls = 1,
			  .errors = c->ret < 0,
			  .total_ns = c->dur_ns,
			  .min_ns = c->dur_ns,
			  .max_ns = c->dur_ns }
	};

	b->late_calls++;
	b->late_errno[c->err < KP_LATE_ERRNOS ? c->err : KP_LATE_ERRNOS - 1]++;
	memcpy(r.stat.comm, c->comm, sizeof(r.stat.comm));
	/* no room or no memory here: the only loss */
	if (stack_row_add(b, &r))
		b->late_lost++;
}

void kp_sys_bpf_free_late_stacks(struct kp_sys_bpf *b)
{
	size_t i;

	for (i = 0; i < b->late_index.cap; i++)
		free((void *)b->late_index.slots[i].key);
	kp_map_free(&b->late_index);
	free(b->late_stacks);
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
	if (n->kind == KP_SYS_NOTE_STACK_CALL) {
		if (size >= sizeof(struct kp_sys_late_stack_call))
			late_stack_call(b, data);
		return 0;
	}
	if (b->npending >= MAX_PENDING)
		return 0; /* its rows stay in the map, still counted */
	if (kp_grow((void **)&b->pending, &b->pcap, b->npending + 1, sizeof(*b->pending)))
		return 0;
	b->pending[b->npending++] = n->tgid;
	return 0;
}

/* the bytes of one CPU's value in a per-CPU map whose values have <size> bytes */
#define CPU_VSIZE(size) (((size) + 7) / 8 * 8)

typedef void add_fn(void *to, const void *from);

static void add_stat(void *to, const void *from)
{
	kp_sys_stat_add(to, from);
}

static void add_stack_stat(void *to, const void *from)
{
	kp_sys_stack_stat_add(to, from);
}

/* <vals>, the per-CPU values of <size> bytes of one key as a lookup gives them, summed into
 * <out> by <add> */
static void sum_values(struct kp_sys_bpf *b, const char *vals, size_t size, add_fn *add, void *out)
{
	int c;

	memset(out, 0, size);
	for (c = 0; c < b->ncpus; c++)
		add(out, vals + CPU_VSIZE(size) * (size_t)c);
}

/* the per-CPU values of <key> in map <fd> (of <size> bytes) summed into <out> by <add>; -1
 * when it has none */
static int sum_cpus(struct kp_sys_bpf *b, int fd, const void *key, char *vals, size_t size,
		    add_fn *add, void *out)
{
	if (bpf_map_lookup_elem(fd, key, vals)) {
		memset(out, 0, size);
		return -1;
	}
	sum_values(b, vals, size, add, out);
	return 0;
}

/* room for a lookup of every CPU's value (the largest value of the maps read here) */
static char *cpu_values(struct kp_sys_bpf *b)
{
	_Static_assert(sizeof(struct kp_sys_stat) >= sizeof(struct kp_sys_stack_stat),
		       "values of the summary by stack are smaller");
	/* zeroed: valgrind does not model per-CPU lookups */
	return calloc((size_t)b->ncpus, CPU_VSIZE(sizeof(struct kp_sys_stat)));
}

/* The keys of <ksize> bytes of map <fd> that <want> picks (with <ctx>), into *keys (malloc'd,
 * NULL when none): their number, or -ENOMEM. All keys first, the caller deletes after: a hash
 * map's walk restarts when its current key goes. */
static long pick_keys(int fd, size_t ksize, bool (*want)(const void *key, const void *ctx),
		      const void *ctx, char **keys)
{
	char key[64], next[64], *prev = NULL;
	size_t cap = 0, n = 0;

	*keys = NULL;
	if (ksize > sizeof(key))
		return -EINVAL;
	while (bpf_map_get_next_key(fd, prev, next) == 0) {
		memcpy(key, next, ksize);
		prev = key;
		if (!want(key, ctx))
			continue;
		if (kp_grow((void **)keys, &cap, (n + 1) * ksize, 1)) {
			free(*keys);
			*keys = NULL;
			return -ENOMEM;
		}
		memcpy(*keys + n * ksize, key, ksize);
		n++;
	}
	return (long)n;
}

/* delete the <n> keys of <ksize> bytes at <keys> from map <fd>: the number deleted */
static int delete_keys(int fd, const char *keys, long n, size_t ksize)
{
	int removed = 0;
	long i;

	for (i = 0; i < n; i++)
		removed += bpf_map_delete_elem(fd, keys + (size_t)i * ksize) == 0;
	return removed;
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

/* processes: <sorted> for want_gone, <tgids> for want_listed */
struct pid_set {
	const __u32 *sorted;
	const int *tgids;
	size_t n;
};

static bool want_gone(const void *key, const void *ctx)
{
	const struct pid_set *g = ctx;

	return bsearch(&((const struct kp_sys_key *)key)->tgid, g->sorted, g->n, sizeof(*g->sorted),
		       cmp_u32);
}

/* the rows of the summary by stack of the processes <gone> (sorted) out of the kernel map into
 * the rows kept here, as their summary rows are: the map holds the live processes' rows only,
 * so processes coming and going do not push later calls into its overflow row. <vals>: room
 * for a per-CPU lookup. harvest_lock held. */
static void move_stack_rows(struct kp_sys_bpf *b, const __u32 *gone, size_t ngone, char *vals)
{
	size_t ksize = sizeof(struct kp_sys_stack_key);
	struct kp_sys_stack_row r;
	char *keys = NULL;
	long nkeys, k;

	nkeys = pick_keys(b->stack_summary_fd, ksize, want_gone,
			  &(struct pid_set){ .sorted = gone, .n = ngone }, &keys);
	for (k = 0; k < nkeys; k++) {
		memcpy(&r.key, keys + (size_t)k * ksize, ksize);
		/* the process made its last call: nothing adds to the row any more */
		if (sum_cpus(b, b->stack_summary_fd, &r.key, vals, sizeof(r.stat), add_stack_stat,
			     &r.stat))
			continue;
		if (stack_row_add(b, &r))
			break; /* no room or no memory here: the rows stay in the map */
		bpf_map_delete_elem(b->stack_summary_fd, &r.key);
	}
	free(keys);
}

void kp_sys_bpf_harvest(struct kp_sys_bpf *b)
{
	struct kp_sys_stat sum;
	size_t i, ngone = 0, nkeep = 0;
	__u32 *gone = NULL;
	char *vals, *keys = NULL;
	long nkeys, k;

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
	nkeys = pick_keys(b->summary_fd, sizeof(struct kp_sys_key), want_gone,
			  &(struct pid_set){ .sorted = gone, .n = ngone }, &keys);
	vals = cpu_values(b);
	for (k = 0; vals && k < nkeys; k++) {
		const struct kp_sys_key *key = (const void *)(keys + (size_t)k * sizeof(*key));

		/* the process made its last call: nothing adds to the row any more */
		if (sum_cpus(b, b->summary_fd, key, vals, sizeof(sum), add_stat, &sum))
			continue;
		if (kp_sys_table_add(&b->exited, key, &sum))
			break; /* out of memory: the rows stay in the map */
		bpf_map_delete_elem(b->summary_fd, key);
	}
	free(keys);
	if (vals && b->stacks)
		move_stack_rows(b, gone, ngone, vals);
	free(vals);
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
		if (sum_cpus(b, b->summary_fd, &key, vals, sizeof(sum), add_stat, &sum))
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
		if (!sum_cpus(b, b->by_nr_fd, &nr, vals, sizeof(sum), add_stat, &sum))
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
	struct kp_sys_cg_row *r;

	if (kp_grow((void **)out, cap, *n + 1, sizeof(**out)))
		return -1;
	r = &(*out)[(*n)++];
	memset(r, 0, sizeof(*r));
	r->key = *key;
	r->kind = kind;
	sum_values(b, vals, sizeof(r->stat), add_stat, &r->stat);
	return 0;
}

/* the whole map in a few bpf() calls (hash batch operations, Linux 5.6): 1 when the kernel
 * cannot, so the caller walks key by key */
static int cg_read_batch(struct kp_sys_bpf *b, struct kp_sys_cg_row **out, size_t *n, size_t *cap)
{
	LIBBPF_OPTS(bpf_map_batch_opts, opts);
	size_t vsize = CPU_VSIZE(sizeof(struct kp_sys_stat)), i;
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

struct id_set {
	const uint64_t *ids;
	unsigned n;
};

static bool want_cgroup(const void *key, const void *ctx)
{
	const struct id_set *c = ctx;
	unsigned i;

	for (i = 0; i < c->n; i++)
		if (c->ids[i] == ((const struct kp_sys_cg_key *)key)->cgid)
			return true;
	return false;
}

int kp_sys_bpf_cg_forget(struct kp_sys_bpf *b, const uint64_t *ids, unsigned n)
{
	size_t ksize = sizeof(struct kp_sys_cg_key);
	char *keys;
	long nkeys = pick_keys(b->cg_summary_fd, ksize, want_cgroup,
			       &(struct id_set){ .ids = ids, .n = n }, &keys);
	int removed;

	if (nkeys < 0)
		return kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
	removed = delete_keys(b->cg_summary_fd, keys, nkeys, ksize);
	free(keys);
	return removed;
}

/* the rows of the summary by stack kept here (of exited processes, and made by calls that
 * found no memory for a row in the kernel) added to the <n> rows read from the kernel: to the
 * row of the same key, or as rows of their own; -ENOMEM */
static int merge_late_stacks(struct kp_sys_bpf *b, struct kp_sys_stack_row **out, size_t *cap,
			     size_t *n)
{
	size_t i, kernel_rows = *n;
	char text[80], *used;
	uintptr_t at;
	int err = 0;

	kp_sys_bpf_harvest(b); /* the calls still in the exits ring */
	pthread_mutex_lock(&b->harvest_lock);
	used = calloc(b->nlate_stacks + 1, 1);
	if (!used)
		err = -ENOMEM;
	for (i = 0; !err && b->nlate_stacks && i < kernel_rows; i++) {
		stack_key_text(&(*out)[i].key, text, sizeof(text));
		at = (uintptr_t)kp_map_get(&b->late_index, text);
		if (at) {
			kp_sys_stack_stat_add(&(*out)[i].stat, &b->late_stacks[at - 1].stat);
			used[at - 1] = 1;
		}
	}
	for (i = 0; !err && i < b->nlate_stacks; i++) {
		if (used[i] || !b->late_stacks[i].stat.calls)
			continue;
		if (kp_grow((void **)out, cap, *n + 1, sizeof(**out)))
			err = -ENOMEM;
		else
			(*out)[(*n)++] = b->late_stacks[i];
	}
	pthread_mutex_unlock(&b->harvest_lock);
	free(used);
	return err;
}

int kp_sys_bpf_stack_summary(struct kp_sys_bpf *b, struct kp_sys_stack_row **rows)
{
	struct kp_sys_stack_key key, next, *prev = NULL;
	struct kp_sys_stack_row *out = NULL;
	uint64_t cnt[KP_CNT_MAX];
	size_t cap = 0, n = 0;
	char *vals;
	__u32 nr;

	*rows = NULL;
	kp_uw_owner_py_drain(b->uw); /* every code object of the stacks read here */
	vals = cpu_values(b);
	if (!vals)
		return kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
	while (bpf_map_get_next_key(b->stack_summary_fd, prev, &next) == 0) {
		key = next;
		prev = &key;
		if (kp_grow((void **)&out, &cap, n + 1, sizeof(*out))) {
			free(out);
			free(vals);
			return kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
		}
		out[n].key = key;
		if (sum_cpus(b, b->stack_summary_fd, &key, vals, sizeof(out[n].stat),
			     add_stack_stat, &out[n].stat))
			continue; /* deleted meanwhile */
		if (out[n].stat.calls)
			n++;
	}
	if (merge_late_stacks(b, &out, &cap, &n)) {
		free(out);
		free(vals);
		return kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
	}
	/* the calls it had no row for, by syscall: read only when the counters say there are
	 * some (else every syscall number's per-CPU values, twice) */
	kp_sys_bpf_counters(b, cnt);
	for (nr = 0; nr < 2 * b->by_nr_entries; nr++) {
		bool nomem = nr >= b->by_nr_entries;

		if (!cnt[nomem ? KP_CNT_STACK_SUMMARY_NOMEM : KP_CNT_STACK_SUMMARY_FULL])
			continue;
		if (kp_grow((void **)&out, &cap, n + 1, sizeof(*out))) {
			free(out);
			free(vals);
			return kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
		}
		out[n].key = (struct kp_sys_stack_key){
			.tgid = nomem ? KP_SYS_NOMEM_TGID : KP_SYS_OVERFLOW_TGID,
			.nr = nr % b->by_nr_entries,
			.kstack = KP_CAP_NONE,
			.ustack = KP_CAP_NONE,
		};
		if (!sum_cpus(b, b->stack_by_nr_fd, &nr, vals, sizeof(out[n].stat), add_stack_stat,
			      &out[n].stat) &&
		    out[n].stat.calls)
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

static bool want_listed(const void *key, const void *ctx)
{
	const struct pid_set *p = ctx;
	__u32 tgid;
	size_t i;

	/* the process first in both keys: struct kp_sys_key, struct kp_sys_stack_key */
	_Static_assert(offsetof(struct kp_sys_key, tgid) == 0 &&
			       offsetof(struct kp_sys_stack_key, tgid) == 0,
		       "keys start with their process");
	memcpy(&tgid, key, sizeof(tgid));
	for (i = 0; i < p->n; i++)
		if ((__u32)p->tgids[i] == tgid)
			return true;
	return false;
}

int kp_sys_bpf_forget(struct kp_sys_bpf *b, const int *tgids, unsigned n)
{
	const struct pid_set listed = { .tgids = tgids, .n = n };
	size_t ksize = sizeof(struct kp_sys_key);
	char *keys;
	long nkeys;
	int removed;

	if (!n)
		return 0;
	nkeys = pick_keys(b->summary_fd, ksize, want_listed, &listed, &keys);
	if (nkeys < 0)
		return kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
	removed = delete_keys(b->summary_fd, keys, nkeys, ksize);
	free(keys);
	/* and those already moved out of the map at the process's exit */
	pthread_mutex_lock(&b->harvest_lock);
	removed += (int)kp_sys_table_drop(&b->exited, tgids, n);
	pthread_mutex_unlock(&b->harvest_lock);
	/* the summary by stack forgets them too (nothing to do without stacks) */
	ksize = sizeof(struct kp_sys_stack_key);
	nkeys = pick_keys(b->stack_summary_fd, ksize, want_listed, &listed, &keys);
	delete_keys(b->stack_summary_fd, keys, nkeys, ksize);
	free(keys);
	/* and its rows made here: emptied (a later call of the same key starts it again) */
	pthread_mutex_lock(&b->harvest_lock);
	for (size_t i = 0; i < b->nlate_stacks; i++)
		for (unsigned j = 0; j < n; j++)
			if (b->late_stacks[i].key.tgid == (__u32)tgids[j])
				memset(&b->late_stacks[i].stat, 0, sizeof(b->late_stacks[i].stat));
	pthread_mutex_unlock(&b->harvest_lock);
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
