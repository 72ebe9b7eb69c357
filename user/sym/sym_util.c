/*
 * sym_util.c - the small containers of the symbol resolver: a chunked allocator (a process's
 * symbols and stacks are freed together), a hash map with 128-bit keys (addresses with flags,
 * devices with inodes, build-ids), interned strings (module and source file names shared by
 * thousands of symbols), and C++ demangling through libstdc++.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/core.h"
#include "kperf/pcerrc.h"
#include "sym.h"

/* ---- arena ---- */

struct sym_chunk {
	struct sym_chunk *next;
	size_t size;
	_Alignas(64) unsigned char data[]; /* libkperf's struct Stack is 64-byte aligned */
};

#define CHUNK_MIN (64 * 1024)

void *sym_arena_alloc_aligned(struct sym_arena *a, size_t size, size_t align)
{
	struct sym_chunk *c;
	void *p;

	size = (size + 15) & ~(size_t)15;
	if (a->head)
		a->used = (a->used + align - 1) & ~(align - 1);
	if (!a->head || a->used > a->cap || a->used + size > a->cap) {
		size_t n = size > CHUNK_MIN ? size : CHUNK_MIN;

		c = aligned_alloc(64, (sizeof(*c) + n + 63) & ~(size_t)63);
		if (!c)
			return NULL;
		c->size = n;
		c->next = a->head;
		a->head = c;
		a->used = 0;
		a->cap = n;
	}
	p = a->head->data + a->used;
	a->used += size;
	memset(p, 0, size);
	return p;
}

void *sym_arena_alloc(struct sym_arena *a, size_t size)
{
	return sym_arena_alloc_aligned(a, size, 16);
}

void sym_arena_free(struct sym_arena *a)
{
	struct sym_chunk *c = a->head, *n;

	for (; c; c = n) {
		n = c->next;
		free(c);
	}
	a->head = NULL;
	a->used = a->cap = 0;
}

/* ---- hash map ---- */

struct sym_hslot {
	uint64_t a, b;
	void *val; /* NULL: empty */
};

uint64_t sym_hash64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

static size_t slot_of(uint64_t a, uint64_t b, size_t cap)
{
	return (size_t)sym_hash64(a ^ sym_hash64(b + 0x9e3779b97f4a7c15ULL)) & (cap - 1);
}

void *sym_hmap_get(const struct sym_hmap *m, uint64_t a, uint64_t b)
{
	size_t i;

	if (!m->cap)
		return NULL;
	for (i = slot_of(a, b, m->cap);; i = (i + 1) & (m->cap - 1)) {
		const struct sym_hslot *s = &m->slots[i];

		if (!s->val)
			return NULL;
		if (s->a == a && s->b == b)
			return s->val;
	}
}

static void raw_put(struct sym_hslot *slots, size_t cap, uint64_t a, uint64_t b, void *val,
		    size_t *n)
{
	size_t i;

	for (i = slot_of(a, b, cap);; i = (i + 1) & (cap - 1)) {
		if (!slots[i].val) {
			slots[i].a = a;
			slots[i].b = b;
			slots[i].val = val;
			(*n)++;
			return;
		}
		if (slots[i].a == a && slots[i].b == b) {
			slots[i].val = val;
			return;
		}
	}
}

static int rehash(struct sym_hmap *m, size_t cap)
{
	struct sym_hslot *ns = calloc(cap, sizeof(*ns));
	size_t i, n = 0;

	if (!ns)
		return -ENOMEM;
	for (i = 0; i < m->cap; i++)
		if (m->slots[i].val)
			raw_put(ns, cap, m->slots[i].a, m->slots[i].b, m->slots[i].val, &n);
	free(m->slots);
	m->slots = ns;
	m->cap = cap;
	m->n = n;
	return 0;
}

int sym_hmap_put(struct sym_hmap *m, uint64_t a, uint64_t b, void *val)
{
	if ((m->n + 1) * 2 > m->cap) {
		int err = rehash(m, m->cap ? m->cap * 2 : 64);

		if (err)
			return err;
	}
	raw_put(m->slots, m->cap, a, b, val, &m->n);
	return 0;
}

bool sym_hmap_del(struct sym_hmap *m, uint64_t a, uint64_t b)
{
	size_t i, j, k, mask = m->cap - 1;

	if (!m->cap)
		return false;
	for (i = slot_of(a, b, m->cap);; i = (i + 1) & mask) {
		if (!m->slots[i].val)
			return false;
		if (m->slots[i].a == a && m->slots[i].b == b)
			break;
	}
	m->slots[i].val = NULL;
	m->n--;
	/* linear probing without tombstones: pull back the entries of the run after the hole
	 * that could not be found from their home slot otherwise */
	for (j = (i + 1) & mask; m->slots[j].val; j = (j + 1) & mask) {
		k = slot_of(m->slots[j].a, m->slots[j].b, m->cap);
		if (i <= j ? (i < k && k <= j) : (i < k || k <= j))
			continue;
		m->slots[i] = m->slots[j];
		m->slots[j].val = NULL;
		i = j;
	}
	return true;
}

void sym_hmap_filter(struct sym_hmap *m, bool (*drop)(void *val, void *ctx), void *ctx)
{
	size_t i, n = 0;
	bool any = false;

	for (i = 0; i < m->cap; i++) {
		if (m->slots[i].val && drop(m->slots[i].val, ctx)) {
			m->slots[i].val = NULL;
			any = true;
		}
	}
	if (!any)
		return;
	/* open addressing without tombstones: re-place what is left in a fresh table */
	{
		struct sym_hslot *old = m->slots;
		struct sym_hslot *ns = calloc(m->cap, sizeof(*ns));

		if (!ns) {
			/* no memory: forget everything, it is a cache and fills up again */
			memset(old, 0, m->cap * sizeof(*old));
			m->n = 0;
			return;
		}
		for (i = 0; i < m->cap; i++)
			if (old[i].val)
				raw_put(ns, m->cap, old[i].a, old[i].b, old[i].val, &n);
		free(old);
		m->slots = ns;
		m->n = n;
	}
}

void sym_hmap_free(struct sym_hmap *m)
{
	free(m->slots);
	m->slots = NULL;
	m->cap = m->n = 0;
}

/* ---- interned strings ---- */

static struct sym_hmap intern_map;
static struct sym_arena intern_arena;

static uint64_t hash_str(const char *s, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ULL; /* FNV-1a */
	size_t i;

	for (i = 0; i < n; i++) {
		h ^= (unsigned char)s[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

const char *sym_intern_n(const char *s, size_t n)
{
	uint64_t h = hash_str(s, n), k;
	char *copy;

	/* probe (h, 0), (h, 1), ... so that two strings with the same hash both fit */
	for (k = 0;; k++) {
		const char *cur = sym_hmap_get(&intern_map, h, k);

		if (!cur)
			break;
		if (strncmp(cur, s, n) == 0 && cur[n] == '\0')
			return cur;
	}
	copy = sym_arena_alloc(&intern_arena, n + 1);
	if (!copy)
		return NULL;
	memcpy(copy, s, n);
	copy[n] = '\0';
	if (sym_hmap_put(&intern_map, h, k, copy))
		return NULL;
	return copy;
}

const char *sym_intern(const char *s)
{
	return sym_intern_n(s, strlen(s));
}

void sym_intern_free(void)
{
	sym_hmap_free(&intern_map);
	sym_arena_free(&intern_arena);
}

/* ---- demangling ---- */

/* libstdc++'s demangler (the library is linked with -lstdc++) */
extern char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

char *sym_demangle(const char *name)
{
	int status = 0;
	char *d;

	if (name[0] != '_' || name[1] != 'Z')
		return NULL;
	d = __cxa_demangle(name, NULL, NULL, &status);
	if (status != 0) {
		free(d);
		return NULL;
	}
	return d;
}

/* ---- files other users may have written ---- */

bool sym_owner_trusted(const char *path, uid_t uid, pid_t pid)
{
	char proc[32], who[32] = "this process";
	struct stat st;
	uid_t owner = geteuid();

	/* the owner of /proc/PID is the process's effective user */
	snprintf(proc, sizeof(proc), "/proc/%d", (int)pid);
	if (pid > 0 && stat(proc, &st) == 0) {
		owner = st.st_uid;
		snprintf(who, sizeof(who), "process %d", (int)pid);
	}
	if (uid == 0 || uid == owner)
		return true;
	kp_warn(KPERF_WARN_SYM_INCOMPLETE,
		"%s is owned by uid %u, neither root nor the owner of %s (uid %u): anyone may "
		"have written it, it is ignored",
		path, (unsigned)uid, who, (unsigned)owner);
	return false;
}

uint64_t sym_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* ---- errors we recover from ---- */

void sym_drop_error(void)
{
	char msg[1024];
	int code = GetWarn();

	if (!kp_failed())
		return;
	snprintf(msg, sizeof(msg), "%s", GetWarnMsg());
	kp_clear();
	if (code)
		kp_warn(code, "%s", msg);
}

void sym_demote_error(void)
{
	char msg[1024];

	if (!kp_failed())
		return;
	snprintf(msg, sizeof(msg), "%s", Perror());
	kp_clear();
	kp_warn(KPERF_WARN_SYM_INCOMPLETE, "%s", msg);
}
