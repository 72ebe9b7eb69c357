/*
 * raw.c - raw tracepoint records handed to callers, and PmuGetField / PmuGetFieldExp.
 *
 * libkperf's SampleRawData is a bare char pointer: nothing says how long the record is, so
 * a corrupt __data_loc would make a decoder read past it. Here every record is allocated
 * behind a small header that keeps its length and a reference count, and the library keeps
 * the set of live records: a record is only read once the set says it is one. That also
 * turns a use after PmuDataFree into an error code (as long as the allocator has not given
 * the same address to a new record); only a struct that is not ours is read, for its data
 * pointer, to accept a caller's copy of a SampleRawData.
 *
 * PmuGetField copies the field's bytes exactly as the record holds them (host byte order,
 * no sign or zero extension: libkperf does the same, and a caller whose vSize overstates
 * its buffer is not written past the field); strings are copied up to their NUL and always
 * NUL-terminated.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "kperf/pcerrc.h"
#include "kperf/kperf.h"
#include "tracefs.h"

struct raw_rec {
	struct SampleRawData pub; /* first: a SampleRawData * is a struct raw_rec * */
	uint32_t len;
	atomic_uint refs;
	char bytes[]; /* pub.data points here */
};

/* ---- the set of live records: open addressing keyed by the record's address ---- */

#define TOMBSTONE ((struct raw_rec *)1)

static pthread_rwlock_t set_lock = PTHREAD_RWLOCK_INITIALIZER;
static struct raw_rec **slots;
static size_t nslots; /* a power of two */
static size_t used; /* live + tombstones */
static size_t live;

static size_t hash_ptr(uintptr_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	return (size_t)x;
}

/* the slot holding <r>, or NULL (lock held) */
static struct raw_rec **set_find(uintptr_t r)
{
	size_t i;

	if (!nslots || r <= (uintptr_t)TOMBSTONE)
		return NULL;
	for (i = hash_ptr(r) & (nslots - 1);; i = (i + 1) & (nslots - 1)) {
		if ((uintptr_t)slots[i] == r)
			return &slots[i];
		if (!slots[i])
			return NULL;
	}
}

static int set_resize(size_t n)
{
	struct raw_rec **old = slots, **s;
	size_t oldn = nslots, i, j;

	s = calloc(n, sizeof(*s));
	if (!s)
		return -ENOMEM;
	for (i = 0; i < oldn; i++) {
		if (!old[i] || old[i] == TOMBSTONE)
			continue;
		for (j = hash_ptr((uintptr_t)old[i]) & (n - 1); s[j]; j = (j + 1) & (n - 1))
			;
		s[j] = old[i];
	}
	free(old);
	slots = s;
	nslots = n;
	used = live;
	return 0;
}

static int set_add(struct raw_rec *r)
{
	size_t i;
	int err = 0;

	pthread_rwlock_wrlock(&set_lock);
	if ((used + 1) * 2 > nslots) {
		/* sized for the live records: tombstones of freed ones go away here */
		size_t n = 64;

		while (n < (live + 1) * 4)
			n *= 2;
		err = set_resize(n);
	}
	if (!err) {
		for (i = hash_ptr((uintptr_t)r) & (nslots - 1); slots[i] && slots[i] != TOMBSTONE;
		     i = (i + 1) & (nslots - 1))
			;
		if (!slots[i])
			used++;
		slots[i] = r;
		live++;
	}
	pthread_rwlock_unlock(&set_lock);
	return err;
}

/* Take a reference to the live record at <key>; NULL when there is none. The reference is
 * taken under the lock, so a concurrent last free cannot release it in between. */
static struct raw_rec *rec_get_at(uintptr_t key)
{
	struct raw_rec **s, *r = NULL;

	pthread_rwlock_rdlock(&set_lock);
	s = set_find(key);
	if (s) {
		r = *s;
		atomic_fetch_add(&r->refs, 1);
	}
	pthread_rwlock_unlock(&set_lock);
	return r;
}

/* Find a live record from what a caller passed: the struct we returned, or (for a caller
 * that copied the struct) its data pointer. Takes a reference; NULL when not ours. */
static struct raw_rec *rec_get(const struct SampleRawData *raw)
{
	struct raw_rec *r = rec_get_at((uintptr_t)raw);
	uintptr_t d;

	if (r)
		return r;
	/* not a struct we returned, so it is the caller's own: reading it is safe */
	d = (uintptr_t)raw->data;
	if (d <= offsetof(struct raw_rec, bytes))
		return NULL;
	return rec_get_at(d - offsetof(struct raw_rec, bytes));
}

/* Drop a reference to the record at <key> (if it is one); frees it with the last. */
static void rec_put_at(uintptr_t key)
{
	struct raw_rec **s, *r = NULL;

	pthread_rwlock_wrlock(&set_lock);
	s = set_find(key);
	if (s && atomic_fetch_sub(&(*s)->refs, 1) == 1) {
		r = *s;
		*s = TOMBSTONE;
		live--;
	}
	pthread_rwlock_unlock(&set_lock);
	free(r);
}

static void rec_put(struct raw_rec *r)
{
	rec_put_at((uintptr_t)r);
}

struct SampleRawData *kp_raw_data_new(const void *rec, size_t len)
{
	struct raw_rec *r;

	if (!rec || len < 2 || len > KP_TP_MAX_RECORD) {
		kp_fail(LIBPERF_ERR_INVALID_PMU_DATA, -EINVAL,
			"a raw tracepoint record of %zu bytes (2 to %d expected)", len,
			KP_TP_MAX_RECORD);
		return NULL;
	}
	r = malloc(sizeof(*r) + len);
	if (!r) {
		kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
		return NULL;
	}
	memcpy(r->bytes, rec, len);
	r->pub.data = r->bytes;
	r->len = (uint32_t)len;
	atomic_init(&r->refs, 1);
	if (set_add(r)) {
		free(r);
		kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
		return NULL;
	}
	return &r->pub;
}

struct SampleRawData *kp_raw_data_ref(struct SampleRawData *raw)
{
	struct raw_rec **s;
	struct SampleRawData *ret = NULL;

	if (!raw)
		return NULL;
	pthread_rwlock_rdlock(&set_lock);
	s = set_find((uintptr_t)raw);
	if (s) {
		atomic_fetch_add(&(*s)->refs, 1);
		ret = raw;
	}
	pthread_rwlock_unlock(&set_lock);
	return ret;
}

void kp_raw_data_free(struct SampleRawData *raw)
{
	if (raw)
		rec_put_at((uintptr_t)raw);
}

long kp_raw_data_len(const struct SampleRawData *raw)
{
	struct raw_rec **s;
	long len = -1;

	if (!raw)
		return -1;
	pthread_rwlock_rdlock(&set_lock);
	s = set_find((uintptr_t)raw);
	if (s)
		len = (*s)->len;
	pthread_rwlock_unlock(&set_lock);
	return len;
}

int kp_raw_data_event_id(const struct SampleRawData *raw)
{
	struct raw_rec **s;
	int id = -1;

	if (!raw)
		return -1;
	pthread_rwlock_rdlock(&set_lock);
	s = set_find((uintptr_t)raw);
	if (s) {
		uint16_t t;

		memcpy(&t, (*s)->bytes, sizeof(t));
		id = t;
	}
	pthread_rwlock_unlock(&set_lock);
	return id;
}

/* ---- decoding ---- */

/* the record and the format of its event; a reference to the record is held on success */
static int lookup(const struct SampleRawData *raw, const char *field, struct raw_rec **rp,
		  const struct kp_tp_format **fmtp)
{
	struct raw_rec *r;
	uint16_t id;
	int err;

	if (!raw)
		return kp_fail(LIBPERF_ERR_INVALID_FIELD_ARGS, -EINVAL,
			       "rawData is NULL: only samples of tracepoint events carry a raw "
			       "record");
	if (!field || !*field)
		return kp_fail(LIBPERF_ERR_INVALID_FIELD_ARGS, -EINVAL,
			       "the field name is NULL or empty");
	r = rec_get(raw);
	if (!r)
		return kp_fail(LIBPERF_ERR_INVALID_FIELD_ARGS, -EINVAL,
			       "rawData is not a live record of this library (not from PmuRead, "
			       "or its PmuData was already freed)");
	memcpy(&id, r->bytes, sizeof(id));
	err = kp_tp_format_by_id(id, fmtp);
	if (err) {
		rec_put(r);
		/* libkperf's code when the record's event has no parsed format */
		return err == -ENOMEM ? err : kp_fail_recode(LIBPERF_ERR_FIND_FIELD_LOSS, err);
	}
	*rp = r;
	return 0;
}

/* the field called <name>, with "did you mean" and the list of fields when it is absent */
static int find_field(const struct kp_tp_format *fmt, const char *name,
		      const struct kp_tp_field **out)
{
	const char *best = NULL;
	char list[512];
	size_t i, n = 0;
	int d, bestd = 4;

	*out = kp_tp_format_field(fmt, name);
	if (*out)
		return 0;
	list[0] = '\0';
	for (i = 0; i < fmt->nfields; i++) {
		const char *fname = fmt->fields[i].name;

		d = kp_edit_distance(name, fname);
		if (d < bestd) {
			bestd = d;
			best = fname;
		}
		if (fmt->fields[i].is_common || n >= sizeof(list) - 1)
			continue;
		n += (size_t)snprintf(list + n, sizeof(list) - n, "%s%s", n ? ", " : "", fname);
		if (n >= sizeof(list))
			n = sizeof(list) - 1;
	}
	return kp_fail(LIBPERF_ERR_INVALID_FIELD_ARGS, -ENOENT,
		       "tracepoint %s:%s has no field '%s'%s%s%s (its fields: %s)",
		       fmt->system ? fmt->system : "?", fmt->event ? fmt->event : "?", name,
		       best ? " (did you mean " : "", best ? best : "", best ? "?)" : "", list);
}

static int too_small(const struct kp_tp_field *f, size_t need, uint32_t vSize)
{
	return kp_fail(LIBPERF_ERR_INVALID_FIELD_ARGS, -ENOSPC,
		       "field '%s' (%s, %u bytes in the format) needs a buffer of %zu bytes; "
		       "the buffer has %u",
		       f->name, f->decl, f->size, need, vSize);
}

static int out_of_record(const struct kp_tp_field *f, size_t start, size_t end, size_t len)
{
	return kp_fail(LIBPERF_ERR_INVALID_PMU_DATA, -ERANGE,
		       "field '%s' points at bytes %zu-%zu of a record of %zu bytes: the record "
		       "is truncated or corrupt",
		       f->name, start, end, len);
}

/* copy <n> bytes at <p> as a string (up to its NUL) or as bytes */
static int copy_out(const struct kp_tp_field *f, const char *p, size_t n, void *value,
		    uint32_t vSize)
{
	if (f->is_string) {
		size_t slen = strnlen(p, n);

		if (slen + 1 > vSize)
			return too_small(f, slen + 1, vSize);
		memcpy(value, p, slen);
		((char *)value)[slen] = '\0';
		return 0;
	}
	if (n > vSize)
		return too_small(f, n, vSize);
	memcpy(value, p, n);
	return 0;
}

int kp_tp_field_decode(const struct kp_tp_field *f, const void *rec, size_t len, void *value,
		       uint32_t vSize)
{
	const char *bytes = rec;
	size_t start = f->offset, end = (size_t)f->offset + f->size;
	uint32_t loc;

	if (end > len)
		return out_of_record(f, start, end, len);
	if (f->data_loc || f->rel_loc) {
		memcpy(&loc, bytes + f->offset, sizeof(loc));
		start = (loc & 0xffff) + (f->rel_loc ? end : 0);
		end = start + (loc >> 16);
		if (end > len)
			return out_of_record(f, start, end, len);
	} else if (!f->size) {
		end = len; /* flexible array: the rest of the record */
	}
	return copy_out(f, bytes + start, end - start, value, vSize);
}

KP_EXPORT int PmuGetField(struct SampleRawData *rawData, const char *fieldName, void *value,
			  uint32_t vSize)
{
	const struct kp_tp_format *fmt;
	const struct kp_tp_field *f;
	struct raw_rec *r;
	int err;

	kp_clear();
	/* libkperf returns the code itself, not -1 */
	if (!value) {
		kp_fail(LIBPERF_ERR_INVALID_FIELD_ARGS, -EINVAL,
			"value is NULL: pass a buffer for the field");
		return Perrorno();
	}
	err = lookup(rawData, fieldName, &r, &fmt);
	if (err) {
		kp_public_fail(err);
		return Perrorno();
	}
	err = find_field(fmt, fieldName, &f);
	if (!err)
		err = kp_tp_field_decode(f, r->bytes, r->len, value, vSize);
	rec_put(r);
	if (err)
		kp_public_fail(err);
	return Perrorno();
}

KP_EXPORT struct SampleRawField *PmuGetFieldExp(struct SampleRawData *rawData,
						const char *fieldName)
{
	const struct kp_tp_format *fmt;
	const struct kp_tp_field *f;
	struct raw_rec *r;
	int err;

	kp_clear();
	err = lookup(rawData, fieldName, &r, &fmt);
	if (err) {
		kp_public_fail(err);
		return NULL;
	}
	err = find_field(fmt, fieldName, &f);
	rec_put(r);
	if (err) {
		kp_public_fail(err);
		return NULL;
	}
	/* cached formats are never freed: the description outlives every record */
	return (struct SampleRawField *)&f->pub;
}
