/*
 * cache.c - tracepoint formats parsed once and kept for the library's lifetime.
 *
 * A raw record names its event only by id (its first two bytes, common_type), so the cache
 * is a table indexed by id. The id -> (system, event) map comes from tracefs
 * (events/<system>/<event>/id, about 2000 small files): it is read the first time an id is
 * unknown, not at start, because most programs only decode events they opened by name and
 * those are entered by kp_tp_format_get(). Formats are never freed or changed once entered,
 * so the pointers handed out (SampleRawField of PmuGetFieldExp) stay valid without a lock.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "kperf/pcerrc.h"
#include "tracefs.h"

struct tp_entry {
	char *system; /* from the id scan; NULL for registered formats */
	char *event;
	struct kp_tp_format *fmt; /* NULL until the format is loaded */
	bool rescanned; /* a scan did not find this id: do not scan again for it */
};

static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static struct tp_entry **by_id; /* indexed by id, grown as needed */
static size_t nby_id;
/* formats whose id was taken over by another event: still pointed at, never found */
static struct kp_tp_format **retired;
static size_t nretired, cap_retired;

/* the entry of <id>, created when absent; NULL on ENOMEM */
static struct tp_entry *entry_of(unsigned id)
{
	if (id >= nby_id && kp_grow((void **)&by_id, &nby_id, (size_t)id + 1, sizeof(*by_id)))
		return NULL;
	if (!by_id[id])
		by_id[id] = calloc(1, sizeof(**by_id));
	return by_id[id];
}

static int set_names(struct tp_entry *e, const char *system, const char *event)
{
	char *s = strdup(system), *ev = strdup(event);

	if (!s || !ev) {
		free(s);
		free(ev);
		return -ENOMEM;
	}
	free(e->system);
	free(e->event);
	e->system = s;
	e->event = ev;
	return 0;
}

static int read_id(const char *path, unsigned *id)
{
	long v;
	int err = kp_read_long(path, &v);

	if (err)
		return err;
	if (v <= 0 || v > 65535)
		return -EINVAL;
	*id = (unsigned)v;
	return 0;
}

/* events/<system>/<event>/id for every event: fill the names of the table (lock held) */
static int scan_ids(void)
{
	char dir[PATH_MAX], path[PATH_MAX + 2 * NAME_MAX + 8];
	const char *tfs = kp_tracefs();
	struct dirent *sd, *ed;
	DIR *sdir, *edir;
	unsigned id;

	if (!tfs)
		return kp_tracefs_fail(LIBPERF_ERR_INVALID_EVENT,
				       "naming tracepoints by their ids");
	snprintf(dir, sizeof(dir), "%s/events", tfs);
	sdir = opendir(dir);
	if (!sdir)
		return kp_fail(LIBPERF_ERR_PATH_INACCESSIBLE, -errno, "cannot list %s: %s", dir,
			       strerror(errno));
	while ((sd = readdir(sdir))) {
		if (sd->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, sd->d_name);
		edir = opendir(path);
		if (!edir)
			continue; /* a file (enable, header_page, ...) */
		while ((ed = readdir(edir))) {
			struct tp_entry *e;

			if (ed->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "%s/%s/%s/id", dir, sd->d_name, ed->d_name);
			if (read_id(path, &id))
				continue;
			e = entry_of(id);
			if (!e || set_names(e, sd->d_name, ed->d_name)) {
				closedir(edir);
				closedir(sdir);
				return kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
			}
		}
		closedir(edir);
	}
	closedir(sdir);
	return 0;
}

/* load the format of a named entry (lock held); the format must carry the expected id */
static int load_entry(struct tp_entry *e, unsigned id)
{
	struct kp_tp_format *fmt;
	int err = kp_tp_format_load(e->system, e->event, &fmt);

	if (err)
		return err;
	if (fmt->id != id) {
		/* the event was removed and created again with another id since the scan */
		kp_tp_format_free(fmt);
		return -ESTALE;
	}
	e->fmt = fmt;
	return 0;
}

int kp_tp_format_by_id(unsigned id, const struct kp_tp_format **out)
{
	struct tp_entry *e;
	int err = 0;

	*out = NULL;
	if (id == 0 || id > 65535)
		return kp_fail(LIBPERF_ERR_INVALID_EVENT, -EINVAL, "%u is not a tracepoint id", id);
	pthread_mutex_lock(&cache_lock);
	e = id < nby_id ? by_id[id] : NULL;
	if (e && e->fmt)
		goto done;
	if (!e || !e->system) {
		if (e && e->rescanned) {
			err = -ENOENT;
			goto done;
		}
		err = scan_ids();
		if (err)
			goto done;
		e = entry_of(id);
		if (!e) {
			err = kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
			goto done;
		}
		e->rescanned = true;
		if (!e->system) {
			err = -ENOENT;
			goto done;
		}
	}
	err = load_entry(e, id);
	if (err == -ESTALE && !kp_failed()) {
		/* names moved: scan once more and retry */
		err = scan_ids();
		if (!err)
			err = load_entry(e, id);
		if (err == -ESTALE)
			err = -ENOENT;
	}
done:
	if (!err)
		*out = e->fmt;
	pthread_mutex_unlock(&cache_lock);
	if (err == -ENOENT && !kp_failed())
		err = kp_fail(LIBPERF_ERR_INVALID_EVENT, err,
			      "no tracepoint has id %u on this machine (the record is not a "
			      "tracepoint record, or its event was removed)",
			      id);
	return err;
}

int kp_tp_format_get(const char *system, const char *event, const struct kp_tp_format **out)
{
	struct kp_tp_format *fmt;
	struct tp_entry *e;
	int err;

	*out = NULL;
	/* the id of a named event costs one small read; the format is parsed once */
	err = kp_tp_format_load(system, event, &fmt);
	if (err)
		return err;
	pthread_mutex_lock(&cache_lock);
	e = entry_of(fmt->id);
	if (!e) {
		err = kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
	} else if (e->fmt && e->fmt->system && !strcmp(e->fmt->system, system) &&
		   !strcmp(e->fmt->event, event)) {
		*out = e->fmt; /* already known: keep the first, handed out pointers stay valid */
	} else if (e->fmt) {
		/* the id now belongs to another event: the old format stays allocated (pointers
		 * into it may be held) but is no longer found */
		err = kp_grow((void **)&retired, &cap_retired, nretired + 1, sizeof(*retired));
		if (!err) {
			retired[nretired++] = e->fmt;
			e->fmt = NULL;
			err = set_names(e, system, event);
		}
		if (err)
			err = kp_fail(COMMON_ERR_NOMEM, err, "out of memory");
	} else {
		err = set_names(e, system, event);
		if (err)
			err = kp_fail(COMMON_ERR_NOMEM, err, "out of memory");
	}
	if (!err && !*out) {
		e->fmt = fmt;
		fmt = NULL;
		*out = e->fmt;
	}
	pthread_mutex_unlock(&cache_lock);
	kp_tp_format_free(fmt);
	return err;
}

int kp_tp_format_register(struct kp_tp_format *fmt)
{
	struct tp_entry *e;
	int err = 0;

	if (!fmt || !fmt->id || fmt->id > 65535)
		return kp_fail(KPERF_ERR_INVALID_FORMAT, -EINVAL,
			       "a tracepoint format needs an id between 1 and 65535");
	pthread_mutex_lock(&cache_lock);
	e = entry_of(fmt->id);
	if (!e)
		err = kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
	else if (e->fmt)
		err = kp_fail(KPERF_ERR_INVALID_FORMAT, -EEXIST,
			      "a tracepoint format with id %u is already known", fmt->id);
	else
		e->fmt = fmt;
	pthread_mutex_unlock(&cache_lock);
	return err;
}
