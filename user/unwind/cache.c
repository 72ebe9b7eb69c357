/*
 * cache.c - unwind tables by file: one compile per build-id (the same library in two container
 * layers, or under two paths, is one table), else per (device, inode, size, mtime) for files
 * without a build-id; an image in memory (the vdso, read from a process) by its build-id only.
 * Tables are reference counted: the BPF side holds one per loaded table;
 * kp_uw_cache_trim forgets those no one holds. Thread-safe (one mutex).
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <gelf.h>

#include "core/core.h"
#include "sym/sym.h"
#include "unwind.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct kp_uw_table *tables; /* a list: a system has hundreds of libraries, not millions */
static uint64_t ncompiled, nhits;

static struct kp_uw_table *find(const uint8_t *id, size_t idlen, const struct stat *st)
{
	struct kp_uw_table *t;

	for (t = tables; t; t = t->next) {
		if (idlen) {
			if (t->build_id_len == idlen && !memcmp(t->build_id, id, idlen))
				return t;
		} else if (!t->build_id_len && t->key_dev == (uint64_t)st->st_dev &&
			   t->key_ino == (uint64_t)st->st_ino &&
			   t->key_size == (uint64_t)st->st_size &&
			   t->key_mtime == (uint64_t)st->st_mtime) {
			return t;
		}
	}
	return NULL;
}

struct kp_uw_table *kp_uw_get(const char *path, int *errp, char *why, size_t whylen)
{
	uint8_t id[64];
	size_t idlen;
	struct kp_uw_table *t;
	struct stat st;
	Elf *elf;
	int err = 0;

	if (why && whylen)
		why[0] = 0;
	elf_version(EV_CURRENT);
	elf = sym_elf_open(path, &st, &err);
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
	t = find(id, idlen, &st);
	if (t) {
		t->refs++;
		nhits++;
		pthread_mutex_unlock(&lock);
		elf_end(elf);
		return t;
	}
	/* compiled under the lock: two threads asking for the same library compile it once */
	err = kp_uw_compile(elf, &t, why, whylen);
	if (!err) {
		t->key_dev = (uint64_t)st.st_dev;
		t->key_ino = (uint64_t)st.st_ino;
		t->key_size = (uint64_t)st.st_size;
		t->key_mtime = (uint64_t)st.st_mtime;
		t->refs = 2; /* the caller's and the cache's */
		t->next = tables;
		tables = t;
		ncompiled++;
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
		t->refs++;
		nhits++;
		pthread_mutex_unlock(&lock);
		elf_end(elf);
		*errp = 0;
		return t;
	}
	err = kp_uw_compile(elf, &t, why, whylen);
	if (!err) {
		t->refs = 2;
		t->next = tables;
		tables = t;
		ncompiled++;
	}
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
	pthread_mutex_unlock(&lock);
}

void kp_uw_cache_stats(struct kp_uw_cache_stats *s)
{
	struct kp_uw_table *t;

	memset(s, 0, sizeof(*s));
	pthread_mutex_lock(&lock);
	s->compiled = ncompiled;
	s->hits = nhits;
	for (t = tables; t; t = t->next) {
		s->tables++;
		s->rows += t->nrows;
		s->bytes += (uint64_t)t->nrows * sizeof(*t->rows);
	}
	pthread_mutex_unlock(&lock);
}

void kp_uw_cache_trim(void)
{
	struct kp_uw_table **p, *t;

	pthread_mutex_lock(&lock);
	for (p = &tables; (t = *p);) {
		if (t->refs <= 1) {
			*p = t->next;
			kp_uw_table_free(t);
		} else {
			p = &t->next;
		}
	}
	pthread_mutex_unlock(&lock);
}
