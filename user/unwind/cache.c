/*
 * cache.c - unwind tables by file: one compile per build-id (the same library in two container
 * layers, or under two paths, is one table), else per (device, inode, size, mtime) for files
 * without a build-id; an image in memory (the vdso, read from a process) by its build-id only.
 *
 * A process start maps the same few files as the last thousand (the program, ld.so, libc):
 * kp_uw_get answers those from a stat() alone, no open and no ELF read, through the identities
 * it has seen (device, inode, size, mtime and ctime in ns -> table). An identity is trusted only
 * once its file was last changed well before it was checked (file times are coarse: a library
 * rewritten in place twice within a clock tick keeps its times), else the build-id is read again.
 * A rebuilt library (a new inode, or new times) is read and compiled anew.
 *
 * Tables are reference counted: each loader holds one per table it placed in a BPF object. The
 * tables no one holds are kept for the next process, least recently used first out, at most
 * IDLE_MAX of them and IDLE_BYTES of rows. Thread-safe (one mutex).
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <gelf.h>

#include "core/core.h"
#include "sym/sym.h"
#include "unwind.h"

#define IDLE_MAX 256 /* tables no loader holds, kept for the processes to come */
#define IDLE_BYTES (32ull << 20) /* and their rows */
#define IDENTS_MAX 1024 /* (device, inode, ...) -> table */
#define TRUST_NS 2000000000LL /* a file unchanged this long before its check is as checked */

/* a file as stat() saw it, and the table its content compiles to */
struct ident {
	uint64_t dev, ino, size;
	int64_t mtime_ns, ctime_ns;
	int64_t checked_ns; /* when its build-id (or identity) was last read */
	struct kp_uw_table *t;
	struct ident *prev, *next;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
/* most recently used first: a system has hundreds of libraries, not millions */
static struct kp_uw_table *tables;
static struct ident *idents;
static unsigned nidents;
static uint64_t ncompiled, nhits, nstat_hits, nevicted;
static uint64_t idle_max = IDLE_MAX, idle_bytes = IDLE_BYTES;

static int64_t ns_of(const struct timespec *ts)
{
	return (int64_t)ts->tv_sec * 1000000000LL + ts->tv_nsec;
}

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ns_of(&ts);
}

/* ---- the tables' list (most recently used first) ---- */

static void table_unlink(struct kp_uw_table *t)
{
	if (t->lru_prev)
		t->lru_prev->next = t->next;
	else
		tables = t->next;
	if (t->next)
		t->next->lru_prev = t->lru_prev;
	t->next = t->lru_prev = NULL;
}

static void table_front(struct kp_uw_table *t)
{
	if (tables == t)
		return;
	if (t->lru_prev || t->next) /* in the list (not first: see above) */
		table_unlink(t);
	t->next = tables;
	t->lru_prev = NULL;
	if (tables)
		tables->lru_prev = t;
	tables = t;
}

/* ---- identities ---- */

static void ident_unlink(struct ident *i)
{
	if (i->prev)
		i->prev->next = i->next;
	else
		idents = i->next;
	if (i->next)
		i->next->prev = i->prev;
	i->prev = i->next = NULL;
}

static void ident_front(struct ident *i)
{
	if (idents == i)
		return;
	if (i->prev || i->next) /* in the list (not first: see above) */
		ident_unlink(i);
	i->next = idents;
	if (idents)
		idents->prev = i;
	idents = i;
}

static void ident_free(struct ident *i)
{
	ident_unlink(i);
	nidents--;
	free(i);
}

static struct ident *ident_find(const struct stat *st)
{
	struct ident *i;

	for (i = idents; i; i = i->next)
		if (i->dev == (uint64_t)st->st_dev && i->ino == (uint64_t)st->st_ino)
			return i;
	return NULL;
}

static bool ident_same(const struct ident *i, const struct stat *st)
{
	return i->size == (uint64_t)st->st_size && i->mtime_ns == ns_of(&st->st_mtim) &&
	       i->ctime_ns == ns_of(&st->st_ctim);
}

/* <st> compiles to <t>, as read just now (the identity of that inode replaced) */
static void ident_note(const struct stat *st, struct kp_uw_table *t)
{
	struct ident *i = ident_find(st);

	if (!i) {
		if (nidents >= IDENTS_MAX) {
			for (i = idents; i->next; i = i->next)
				;
			ident_free(i); /* the least recently used */
		}
		i = calloc(1, sizeof(*i));
		if (!i)
			return;
		nidents++;
		i->dev = (uint64_t)st->st_dev;
		i->ino = (uint64_t)st->st_ino;
	}
	i->size = (uint64_t)st->st_size;
	i->mtime_ns = ns_of(&st->st_mtim);
	i->ctime_ns = ns_of(&st->st_ctim);
	i->checked_ns = now_ns();
	i->t = t;
	ident_front(i);
}

/* <i> answers without reading the file: the same times, and a check made well after them */
static bool ident_trusted(const struct ident *i, const struct stat *st)
{
	int64_t changed = i->mtime_ns > i->ctime_ns ? i->mtime_ns : i->ctime_ns;

	return ident_same(i, st) && i->checked_ns - changed > TRUST_NS;
}

/* ---- tables ---- */

static struct kp_uw_table *find(const uint8_t *id, size_t idlen, const struct stat *st)
{
	struct kp_uw_table *t;

	for (t = tables; t; t = t->next) {
		if (idlen) {
			if (t->build_id_len == idlen && !memcmp(t->build_id, id, idlen))
				return t;
		} else if (!t->build_id_len && st && t->key_dev == (uint64_t)st->st_dev &&
			   t->key_ino == (uint64_t)st->st_ino &&
			   t->key_size == (uint64_t)st->st_size &&
			   t->key_mtime_ns == ns_of(&st->st_mtim)) {
			return t;
		}
	}
	return NULL;
}

static void table_drop(struct kp_uw_table *t)
{
	struct ident *i, *next;

	for (i = idents; i; i = next) {
		next = i->next;
		if (i->t == t)
			ident_free(i);
	}
	table_unlink(t);
	kp_uw_table_free(t);
}

/* the least recently used tables no one holds go beyond IDLE_MAX or IDLE_BYTES */
static void evict(void)
{
	struct kp_uw_table *t, *last = NULL, *prev;
	uint64_t idle = 0, bytes = 0;

	for (t = tables; t; t = t->next) {
		if (t->refs <= 1) {
			idle++;
			bytes += (uint64_t)t->nrows * sizeof(*t->rows);
		}
		last = t;
	}
	for (t = last; t && (idle > idle_max || bytes > idle_bytes); t = prev) {
		prev = t->lru_prev;
		if (t->refs > 1)
			continue;
		idle--;
		bytes -= (uint64_t)t->nrows * sizeof(*t->rows);
		table_drop(t);
		nevicted++;
	}
}

static void hit(struct kp_uw_table *t)
{
	t->refs++;
	nhits++;
	table_front(t);
}

/* a new table (refs 1) into the cache: the caller's reference and the cache's */
static void insert(struct kp_uw_table *t)
{
	t->refs = 2;
	t->next = t->lru_prev = NULL;
	table_front(t);
	ncompiled++;
	evict();
}

struct kp_uw_table *kp_uw_get(const char *path, int *errp, char *why, size_t whylen)
{
	uint8_t id[64];
	size_t idlen;
	struct kp_uw_table *t;
	struct ident *i;
	struct stat st, st2;
	Elf *elf;
	int err = 0;

	if (why && whylen)
		why[0] = 0;
	*errp = 0;
	/* a file seen before, unchanged: a stat, no open */
	if (kp_stat_path(path, &st) == 0) {
		pthread_mutex_lock(&lock);
		i = ident_find(&st);
		if (i && ident_trusted(i, &st)) {
			t = i->t;
			hit(t);
			nstat_hits++;
			ident_front(i);
			pthread_mutex_unlock(&lock);
			return t;
		}
		pthread_mutex_unlock(&lock);
	}
	elf_version(EV_CURRENT);
	elf = sym_elf_open(path, &st2, &err);
	if (!elf) {
		if (why && whylen)
			snprintf(why, whylen, "%s",
				 err == -ENOEXEC ? "not an ELF file" :
				 err == -EISDIR	 ? "not a regular file" :
						   strerror(-err));
		*errp = err;
		return NULL;
	}
	idlen = sym_elf_build_id(elf, id, sizeof(id));
	pthread_mutex_lock(&lock);
	t = find(id, idlen, &st2);
	if (t) {
		hit(t);
		ident_note(&st2, t);
		pthread_mutex_unlock(&lock);
		elf_end(elf);
		return t;
	}
	/* compiled under the lock: two threads asking for the same library compile it once */
	err = kp_uw_compile(elf, &t, why, whylen);
	if (!err) {
		t->key_dev = (uint64_t)st2.st_dev;
		t->key_ino = (uint64_t)st2.st_ino;
		t->key_size = (uint64_t)st2.st_size;
		t->key_mtime_ns = ns_of(&st2.st_mtim);
		insert(t);
		ident_note(&st2, t);
	}
	pthread_mutex_unlock(&lock);
	elf_end(elf);
	*errp = err;
	return err ? NULL : t;
}

struct kp_uw_table *kp_uw_get_image(const void *image, size_t len, int *errp, char *why,
				    size_t whylen)
{
	uint8_t id[64];
	size_t idlen;
	struct kp_uw_table *t;
	Elf *elf;
	int err;

	if (why && whylen)
		why[0] = 0;
	elf_version(EV_CURRENT);
	elf = elf_memory((char *)image, len);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		if (why && whylen)
			snprintf(why, whylen, "not an ELF image");
		if (elf)
			elf_end(elf);
		*errp = -ENOEXEC;
		return NULL;
	}
	idlen = sym_elf_build_id(elf, id, sizeof(id));
	if (!idlen) {
		if (why && whylen)
			snprintf(why, whylen, "an image in memory without a build-id");
		elf_end(elf);
		*errp = -ENOENT;
		return NULL;
	}
	pthread_mutex_lock(&lock);
	t = find(id, idlen, NULL);
	if (t) {
		hit(t);
		pthread_mutex_unlock(&lock);
		elf_end(elf);
		*errp = 0;
		return t;
	}
	err = kp_uw_compile(elf, &t, why, whylen);
	if (!err)
		insert(t);
	pthread_mutex_unlock(&lock);
	elf_end(elf);
	*errp = err;
	return err ? NULL : t;
}

void kp_uw_put(struct kp_uw_table *t)
{
	if (!t)
		return;
	pthread_mutex_lock(&lock);
	if (t->refs)
		t->refs--;
	if (t->refs <= 1)
		evict();
	pthread_mutex_unlock(&lock);
}

void kp_uw_key_of_table(const struct kp_uw_table *t, struct kp_uw_key *k)
{
	memset(k, 0, sizeof(*k));
	k->idlen = t->build_id_len;
	memcpy(k->id, t->build_id, t->build_id_len);
	if (!k->idlen) {
		k->dev = t->key_dev;
		k->ino = t->key_ino;
		k->size = t->key_size;
		k->mtime_ns = t->key_mtime_ns;
	}
}

bool kp_uw_key_eq(const struct kp_uw_key *a, const struct kp_uw_key *b)
{
	if (a->idlen || b->idlen)
		return a->idlen == b->idlen && !memcmp(a->id, b->id, a->idlen);
	return a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
	       a->mtime_ns == b->mtime_ns;
}

int kp_uw_key_of(const char *path, struct kp_uw_key *k)
{
	struct ident *i;
	struct stat st;
	Elf *elf;
	int err = 0;

	if (kp_stat_path(path, &st) == 0) {
		pthread_mutex_lock(&lock);
		i = ident_find(&st);
		if (i && ident_trusted(i, &st)) {
			kp_uw_key_of_table(i->t, k);
			pthread_mutex_unlock(&lock);
			return 0;
		}
		pthread_mutex_unlock(&lock);
	}
	elf_version(EV_CURRENT);
	elf = sym_elf_open(path, &st, &err);
	if (!elf)
		return err;
	memset(k, 0, sizeof(*k));
	k->idlen = sym_elf_build_id(elf, k->id, sizeof(k->id));
	if (!k->idlen) { /* as kp_uw_get keys a table without a build-id */
		k->dev = (uint64_t)st.st_dev;
		k->ino = (uint64_t)st.st_ino;
		k->size = (uint64_t)st.st_size;
		k->mtime_ns = ns_of(&st.st_mtim);
	}
	elf_end(elf);
	return 0;
}

void kp_uw_cache_stats(struct kp_uw_cache_stats *s)
{
	struct kp_uw_table *t;

	memset(s, 0, sizeof(*s));
	pthread_mutex_lock(&lock);
	s->compiled = ncompiled;
	s->hits = nhits;
	s->stat_hits = nstat_hits;
	s->evicted = nevicted;
	s->idents = nidents;
	for (t = tables; t; t = t->next) {
		s->tables++;
		s->idle += t->refs <= 1;
		s->rows += t->nrows;
		s->bytes += (uint64_t)t->nrows * sizeof(*t->rows);
	}
	pthread_mutex_unlock(&lock);
}

void kp_uw_cache_bounds(unsigned tables_max, uint64_t bytes_max)
{
	pthread_mutex_lock(&lock);
	idle_max = tables_max ? tables_max : IDLE_MAX;
	idle_bytes = bytes_max ? bytes_max : IDLE_BYTES;
	evict();
	pthread_mutex_unlock(&lock);
}

void kp_uw_cache_trim(void)
{
	struct kp_uw_table *t, *next;

	pthread_mutex_lock(&lock);
	for (t = tables; t; t = next) {
		next = t->next;
		if (t->refs <= 1)
			table_drop(t);
	}
	pthread_mutex_unlock(&lock);
}
