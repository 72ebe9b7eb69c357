/*
 * list.c - PmuEventList: the events this machine can open, by kind.
 *
 *   CORE_EVENT    software events, generic hardware and cache events, and the sysfs events
 *                 of the core PMU (cpu, cpu_core, cpu_atom, an arm64 PMU with a `cpus` file)
 *                 as "pmu/event/"; each is opened once (perf_event_open, then closed) and
 *                 listed only if the kernel accepts it, so a VM without a PMU lists no
 *                 "cycles".
 *   UNCORE_EVENT  events of PMUs that have a cpumask (per socket/die: hisi_sccl1_ddrc0,
 *                 uncore_imc_0, power, ...) as "pmu/event/", probed the same way.
 *   TRACE_EVENT   tracefs available_events, as "system:event".
 *   ALL_EVENT     the three, in that order.
 * Lists are sorted within each source (sysfs directory order means nothing).
 *
 * Probing is skipped for events read from a sysfs tree other than /sys (KPERF_BPF_SYSFS
 * pointing at a fixture or a copy of another machine): their PMU type numbers describe that
 * machine, not the running kernel. The generic software/hardware/cache events are always
 * probed against the running kernel.
 *
 * A list is built once per kind and kept, as libkperf does: callers never free it, and
 * repeated calls return the same array. PmuEventListFree() releases all of them (arrays
 * returned before are then invalid); the next PmuEventList builds them again.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/core.h"
#include "kperf/pcerrc.h"
#include "kperf/kperf.h"
#include "events.h"

#define NKINDS 4

struct strvec {
	char **v;
	size_t n, cap;
};

struct cached {
	const char **names; /* one block: the NULL-terminated pointer array, then the text */
	unsigned n;
	char *key; /* the sysfs root / tracefs path the list was built from */
};

static pthread_mutex_t list_lock = PTHREAD_MUTEX_INITIALIZER;
static struct cached cache[NKINDS];
/* lists replaced because their sysfs root changed: callers may still hold them */
static const char ***retired;
static size_t nretired, cap_retired;

static void sv_free(struct strvec *sv)
{
	size_t i;

	for (i = 0; i < sv->n; i++)
		free(sv->v[i]);
	free(sv->v);
	memset(sv, 0, sizeof(*sv));
}

static int sv_add(struct strvec *sv, const char *fmt, ...) KP_PRINTF(2, 3);

static int sv_add(struct strvec *sv, const char *fmt, ...)
{
	va_list ap;
	char *s;
	int n;

	if (kp_grow((void **)&sv->v, &sv->cap, sv->n + 1, sizeof(*sv->v)))
		return -ENOMEM;
	va_start(ap, fmt);
	n = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (n < 0)
		return -ENOMEM;
	sv->v[sv->n++] = s;
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* one block that a single free() releases: (n + 1) pointers, then the strings */
static const char **sv_pack(const struct strvec *sv)
{
	size_t i, bytes = (sv->n + 1) * sizeof(char *), off;
	const char **block;

	for (i = 0; i < sv->n; i++)
		bytes += strlen(sv->v[i]) + 1;
	block = malloc(bytes);
	if (!block)
		return NULL;
	off = (sv->n + 1) * sizeof(char *);
	for (i = 0; i < sv->n; i++) {
		size_t len = strlen(sv->v[i]) + 1;

		memcpy((char *)block + off, sv->v[i], len);
		block[i] = (char *)block + off;
		off += len;
	}
	block[sv->n] = NULL;
	return block;
}

/* Is the sysfs root this machine's? ("/sys/", or a symlink to it, count as /sys) */
static bool sysfs_is_live(void)
{
	char real[PATH_MAX];

	return realpath(kp_sysfs(), real) && !strcmp(real, "/sys");
}

/* Does the kernel accept <name>? Privilege refusals count as "exists": they are checked,
 * with a proper message, when the event is really opened. */
static bool openable(const char *name)
{
	struct kp_event ev;
	int err;

	if (kp_event_parse(name, false, &ev))
		return false;
	err = kp_event_probe_attr(&ev.attr);
	kp_event_free(&ev);
	return !err || err == -EACCES || err == -EPERM;
}

static int add_probed(struct strvec *sv, int (*names_fn)(const char ***))
{
	const char **names;
	int n, i, err = 0;

	n = names_fn(&names);
	if (n < 0)
		return n;
	for (i = 0; i < n && !err; i++)
		if (openable(names[i]))
			err = sv_add(sv, "%s", names[i]);
	free(names);
	return err;
}

static bool file_exists(const char *dir, const char *name)
{
	char path[2 * PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return access(path, F_OK) == 0;
}

enum pmu_kind { PMU_OTHER, PMU_CORE, PMU_UNCORE };

static enum pmu_kind pmu_kind(const char *dir, const char *name)
{
	char path[2 * PATH_MAX];
	long type;

	if (file_exists(dir, "cpumask"))
		return PMU_UNCORE;
	if (!strcmp(name, "cpu") || !strcmp(name, "cpu_core") || !strcmp(name, "cpu_atom") ||
	    file_exists(dir, "cpus"))
		return PMU_CORE;
	snprintf(path, sizeof(path), "%s/type", dir);
	if (!kp_read_long(path, &type) && type == PERF_TYPE_RAW)
		return PMU_CORE;
	return PMU_OTHER;
}

/* perf's companions of an event file, not events themselves */
static bool is_aux_file(const char *name)
{
	static const char *const suffixes[] = { ".scale", ".unit", ".per-pkg", ".snapshot" };
	size_t i, n = strlen(name), l;

	for (i = 0; i < KP_ARRAY_SIZE(suffixes); i++) {
		l = strlen(suffixes[i]);
		if (n > l && !strcmp(name + n - l, suffixes[i]))
			return true;
	}
	return false;
}

/* "pmu/event/" for every event of every PMU of <want>, sorted */
static int add_pmu_events(struct strvec *sv, enum pmu_kind want)
{
	char devdir[PATH_MAX], dir[PATH_MAX + 256], evdir[PATH_MAX + 300], path[PATH_MAX + 600];
	struct dirent *pd, *ed;
	struct strvec found = { 0 };
	bool probe = sysfs_is_live();
	DIR *pdir, *edir;
	struct stat st;
	size_t i;
	int err = 0;

	snprintf(devdir, sizeof(devdir), "%s/bus/event_source/devices", kp_sysfs());
	pdir = opendir(devdir);
	if (!pdir)
		return 0; /* no PMU at all (a container without sysfs): nothing to list */
	while (!err && (pd = readdir(pdir))) {
		if (pd->d_name[0] == '.')
			continue;
		snprintf(dir, sizeof(dir), "%s/%s", devdir, pd->d_name);
		if (pmu_kind(dir, pd->d_name) != want)
			continue;
		snprintf(evdir, sizeof(evdir), "%s/events", dir);
		edir = opendir(evdir);
		if (!edir)
			continue;
		while (!err && (ed = readdir(edir))) {
			if (ed->d_name[0] == '.' || is_aux_file(ed->d_name))
				continue;
			snprintf(path, sizeof(path), "%s/%s", evdir, ed->d_name);
			if (stat(path, &st) || !S_ISREG(st.st_mode))
				continue;
			err = sv_add(&found, "%s/%s/", pd->d_name, ed->d_name);
		}
		closedir(edir);
	}
	closedir(pdir);
	if (found.n)
		qsort(found.v, found.n, sizeof(*found.v), cmp_str);
	for (i = 0; i < found.n && !err; i++) {
		struct kp_event ev;

		if (probe) {
			/* parse (format terms, cpumask) and open it once */
			if (kp_event_parse(found.v[i], true, &ev))
				continue;
			kp_event_free(&ev);
		}
		err = sv_add(sv, "%s", found.v[i]);
	}
	sv_free(&found);
	return err;
}

static int build_core(struct strvec *sv)
{
	int err = add_probed(sv, kp_event_software_names);

	if (!err)
		err = add_probed(sv, kp_event_hardware_names);
	if (!err)
		err = add_probed(sv, kp_event_cache_names);
	if (!err)
		err = add_pmu_events(sv, PMU_CORE);
	return err;
}

static int build_trace(struct strvec *sv)
{
	const char *tfs = kp_tracefs();
	char path[PATH_MAX], *text, *line, *save = NULL;
	size_t start;
	int err;

	if (!tfs)
		return kp_tracefs_fail(LIBPERF_ERR_INVALID_EVENT, "listing tracepoints");
	snprintf(path, sizeof(path), "%s/available_events", tfs);
	err = kp_read_file(path, &text, NULL);
	if (err)
		return kp_fail(LIBPERF_ERR_QUERY_EVENT_LIST_FAILED, err, "cannot read %s: %s", path,
			       strerror(-err));
	start = sv->n;
	for (line = strtok_r(text, "\n", &save); line && !err; line = strtok_r(NULL, "\n", &save))
		if (strchr(line, ':'))
			err = sv_add(sv, "%s", line);
	free(text);
	if (sv->n > start)
		qsort(sv->v + start, sv->n - start, sizeof(*sv->v), cmp_str);
	return err;
}

/* what a list of <kind> depends on: it is rebuilt when that changes */
static char *key_of(enum PmuEventType kind)
{
	const char *tfs = kind == CORE_EVENT || kind == UNCORE_EVENT ? "" : kp_tracefs();
	char *key;

	if (asprintf(&key, "%s|%s", kind == TRACE_EVENT ? "" : kp_sysfs(), tfs ? tfs : "") < 0)
		return NULL;
	return key;
}

static void release_list(void *ptr)
{
	size_t i;

	pthread_mutex_lock(&list_lock);
	for (i = 0; i < NKINDS; i++) {
		if (cache[i].names == ptr) {
			cache[i].names = NULL;
			cache[i].n = 0;
			free(cache[i].key);
			cache[i].key = NULL;
		}
	}
	for (i = 0; i < nretired; i++) {
		if (retired[i] == ptr) {
			retired[i] = retired[--nretired];
			break;
		}
	}
	pthread_mutex_unlock(&list_lock);
	free(ptr);
}

static int build(enum PmuEventType kind, struct strvec *sv);

/* the cached list of <kind>, built when missing or stale (list_lock held) */
static int get_list(enum PmuEventType kind, struct cached **out)
{
	struct cached *c = &cache[kind];
	struct strvec sv = { 0 };
	const char **block;
	char *key = key_of(kind);
	int err;

	if (!key)
		return kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
	/* a list that a caller released through another *Free is no longer registered */
	if (c->names && !strcmp(c->key, key) && kp_registry_has(c->names)) {
		free(key);
		*out = c;
		return 0;
	}
	err = build(kind, &sv);
	if (err)
		goto out;
	block = sv_pack(&sv);
	if (!block) {
		err = kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
		goto out;
	}
	if (c->names && kp_registry_has(c->names)) {
		/* built from another root: whoever holds the old list keeps it until
		 * PmuEventListFree */
		if (kp_grow((void **)&retired, &cap_retired, nretired + 1, sizeof(*retired))) {
			free(block);
			err = kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
			goto out;
		}
		retired[nretired++] = c->names;
	}
	free(c->key);
	c->names = block;
	c->n = (unsigned)sv.n;
	c->key = key;
	key = NULL;
	if (kp_registry_add(block, release_list)) {
		c->names = NULL;
		free(block);
		err = kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
		goto out;
	}
	*out = c;
out:
	free(key);
	sv_free(&sv);
	return err;
}

static int build(enum PmuEventType kind, struct strvec *sv)
{
	static const enum PmuEventType parts[] = { CORE_EVENT, UNCORE_EVENT, TRACE_EVENT };
	struct cached *c;
	size_t i;
	unsigned j;
	int err = 0;

	switch (kind) {
	case CORE_EVENT:
		return build_core(sv);
	case UNCORE_EVENT:
		return add_pmu_events(sv, PMU_UNCORE);
	case TRACE_EVENT:
		return build_trace(sv);
	case ALL_EVENT:
		for (i = 0; i < KP_ARRAY_SIZE(parts) && !err; i++) {
			err = get_list(parts[i], &c);
			for (j = 0; !err && j < c->n; j++)
				err = sv_add(sv, "%s", c->names[j]);
		}
		return err;
	}
	return -EINVAL;
}

KP_EXPORT const char **PmuEventList(enum PmuEventType eventType, unsigned *numEvt)
{
	struct cached *c;
	const char **names = NULL;
	unsigned n = 0;
	int err;

	kp_clear();
	if (numEvt)
		*numEvt = 0;
	if ((unsigned)eventType >= NKINDS) {
		kp_fail(LIBPERF_ERR_QUERY_EVENT_TYPE_INVALID, -EINVAL,
			"event type %d is not one of CORE_EVENT (0), UNCORE_EVENT (1), "
			"TRACE_EVENT (2), ALL_EVENT (3)",
			(int)eventType);
		return NULL;
	}
	pthread_mutex_lock(&list_lock);
	err = get_list(eventType, &c);
	if (!err) {
		names = c->names;
		n = c->n;
	}
	pthread_mutex_unlock(&list_lock);
	if (err) {
		if (err == -ENOMEM && !kp_failed())
			kp_fail(COMMON_ERR_NOMEM, err, "out of memory");
		kp_public_fail(err);
		return NULL;
	}
	/* probing left the errors of refused events behind: the call itself succeeded */
	kp_clear();
	if (numEvt)
		*numEvt = n;
	return names;
}

KP_EXPORT void PmuEventListFree(void)
{
	const char **blocks[NKINDS];
	const char ***old;
	size_t i, nblocks = 0, nold;

	kp_clear();
	pthread_mutex_lock(&list_lock);
	for (i = 0; i < NKINDS; i++)
		if (cache[i].names)
			blocks[nblocks++] = cache[i].names;
	old = retired;
	nold = nretired;
	retired = NULL;
	nretired = cap_retired = 0;
	pthread_mutex_unlock(&list_lock);
	/* release_list takes the lock again and clears the cache slots */
	for (i = 0; i < nblocks; i++)
		kp_registry_release(blocks[i]);
	for (i = 0; i < nold; i++)
		kp_registry_release(old[i]);
	free(old);
}
