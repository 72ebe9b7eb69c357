/*
 * sys_mem.c - parsers of the memory files: /proc/meminfo, vmstat, slabinfo, zoneinfo and
 * buddyinfo.
 *
 * zoneinfo and buddyinfo differ from libkperf where its reading loses values on every
 * kernel: see parse_zone_line and kp_proc_parse_buddyinfo.
 */
#include <errno.h>
#include <string.h>

#include "proc.h"

int kp_proc_parse_meminfo(struct kp_proc_arena *a, char *text, size_t len, struct ProcData *out)
{
	struct kp_proc_vec v = { 0 };
	char *cur = text, *line, *key, *rest;

	(void)len;
	while ((line = kp_proc_line(&cur))) {
		struct ProcMeminfoEntry *e;
		char *w[2] = { 0 };

		if (!kp_proc_colon(line, &key, &rest))
			continue;
		kp_proc_words(&rest, w, 2);
		e = kp_proc_push(a, &v, sizeof(*e));
		if (!e || !(e->key = kp_proc_strdup(a, key)) ||
		    !(e->unit = kp_proc_strdup(a, w[1])))
			return -ENOMEM;
		e->value = kp_proc_ull(w[0]);
	}
	if (!v.n)
		return -ENODATA;
	out->meminfo = v.items;
	out->numEntries = v.n;
	return 0;
}

int kp_proc_parse_vmstat(struct kp_proc_arena *a, char *text, size_t len, struct ProcData *out)
{
	struct kp_proc_vec v = { 0 };
	char *cur = text, *line;

	(void)len;
	while ((line = kp_proc_line(&cur))) {
		struct ProcVmstatEntry *e;
		char *w[2];

		if (kp_proc_words(&line, w, 2) < 2)
			continue;
		e = kp_proc_push(a, &v, sizeof(*e));
		if (!e || !(e->key = kp_proc_strdup(a, w[0])))
			return -ENOMEM;
		e->value = kp_proc_ull(w[1]);
	}
	if (!v.n)
		return -ENODATA;
	out->vmstat = v.items;
	out->numEntries = v.n;
	return 0;
}

/*
 * slabinfo 2.1: "name active num objsize perslab pages : tunables limit batch shared :
 * slabdata active num avail" after a version line and a '#' header; the ':', "tunables" and
 * "slabdata" words are separators, not values.
 */
int kp_proc_parse_slabinfo(struct kp_proc_arena *a, char *text, size_t len, struct ProcData *out)
{
	struct kp_proc_vec v = { 0 };
	char *cur = text, *line;
	bool version_seen = false;

	(void)len;
	while ((line = kp_proc_line(&cur))) {
		struct ProcSlabinfoEntry *e;
		char *val[12] = { 0 }, *w;
		unsigned n = 0;

		line = kp_proc_trim(line);
		if (!*line || *line == '#')
			continue;
		if (!version_seen && kp_proc_prefix(line, "slabinfo")) {
			version_seen = true;
			continue;
		}
		while ((w = kp_proc_word(&line))) {
			if (!strcmp(w, ":") || !strcmp(w, "tunables") || !strcmp(w, "slabdata"))
				continue;
			if (n < 12)
				val[n] = w;
			n++;
		}
		if (n < 3)
			continue;
		e = kp_proc_push(a, &v, sizeof(*e));
		if (!e || !(e->name = kp_proc_strdup(a, val[0])))
			return -ENOMEM;
		e->activeObjs = kp_proc_ull(val[1]);
		e->numObjs = kp_proc_ull(val[2]);
		e->objsize = kp_proc_ull(val[3]);
		e->objperslab = kp_proc_ull(val[4]);
		e->pagesperslab = kp_proc_ull(val[5]);
		e->limit = kp_proc_ull(val[6]);
		e->batchcount = kp_proc_ull(val[7]);
		e->sharedfactor = kp_proc_ull(val[8]);
		e->activeSlabs = kp_proc_ull(val[9]);
		e->numSlabs = kp_proc_ull(val[10]);
		e->sharedavail = kp_proc_ull(val[11]);
	}
	if (!v.n)
		return -ENODATA;
	out->slabinfo = v.items;
	out->numEntries = v.n;
	return 0;
}

/* ---- zoneinfo ---- */

enum zone_part { PART_NONE, PART_NODE_STATS, PART_ZONE, PART_PAGESETS };

struct zone_state {
	struct ProcZoneinfoEntry *zone; /* the zone being read, NULL before the first */
	enum zone_part part;
	struct kp_proc_vec node_stats, stats, pagesets;
};

/* Give the zone being read its lists, and "" for the strings its block did not have. */
static int finish_zone(struct kp_proc_arena *a, struct zone_state *st)
{
	struct ProcZoneinfoEntry *z = st->zone;

	if (!z)
		return 0;
	z->nodeStats = st->node_stats.items;
	z->numNodeStats = st->node_stats.n;
	z->stats = st->stats.items;
	z->numStats = st->stats.n;
	z->pagesets = st->pagesets.items;
	z->numPagesets = st->pagesets.n;
	st->node_stats = st->stats = st->pagesets = (struct kp_proc_vec){ 0 };
	if ((!z->protection && !(z->protection = kp_proc_strdup(a, ""))) ||
	    (!z->nodeUnreclaimable && !(z->nodeUnreclaimable = kp_proc_strdup(a, ""))) ||
	    (!z->startPfn && !(z->startPfn = kp_proc_strdup(a, ""))))
		return -ENOMEM;
	return 0;
}

static int zone_field(struct kp_proc_arena *a, struct zone_state *st, const char *key,
		      const char *value)
{
	struct ProcZoneinfoEntry *z = st->zone;
	static const struct {
		const char *key;
		size_t off;
	} pages[] = {
		{ "min", offsetof(struct ProcZoneinfoEntry, pagesMin) },
		{ "low", offsetof(struct ProcZoneinfoEntry, pagesLow) },
		{ "high", offsetof(struct ProcZoneinfoEntry, pagesHigh) },
		{ "spanned", offsetof(struct ProcZoneinfoEntry, pagesSpanned) },
		{ "present", offsetof(struct ProcZoneinfoEntry, pagesPresent) },
		{ "managed", offsetof(struct ProcZoneinfoEntry, pagesManaged) },
		{ "cma", offsetof(struct ProcZoneinfoEntry, pagesCma) },
	};
	size_t i;

	for (i = 0; i < sizeof(pages) / sizeof(pages[0]); i++) {
		if (!strcmp(key, pages[i].key)) {
			*(unsigned long long *)((char *)z + pages[i].off) = kp_proc_ull(value);
			return 0;
		}
	}
	if (!strcmp(key, "protection"))
		return (z->protection = kp_proc_strdup(a, value)) ? 0 : -ENOMEM;
	return kp_proc_push_field(a, &st->stats, key, value);
}

static int pageset_field(struct kp_proc_arena *a, struct zone_state *st, const char *key,
			 const char *value)
{
	struct ProcZoneinfoPageset *p;

	if (!strcmp(key, "cpu")) {
		p = kp_proc_push(a, &st->pagesets, sizeof(*p));
		if (!p)
			return -ENOMEM;
		p->cpuId = kp_proc_int(value);
		return 0;
	}
	if (!st->pagesets.n)
		return 0;
	p = (struct ProcZoneinfoPageset *)st->pagesets.items + st->pagesets.n - 1;
	if (!strcmp(key, "count"))
		p->count = kp_proc_ull(value);
	else if (!strcmp(key, "high"))
		p->high = kp_proc_ull(value);
	else if (!strcmp(key, "batch"))
		p->batch = kp_proc_ull(value);
	else if (!strcmp(key, "vm stats threshold"))
		p->vmStatsThreshold = kp_proc_ull(value);
	return 0;
}

/*
 * One trimmed line inside a zone block. The kernel writes "key value" (min, low, ...,
 * nr_free_pages) and "key: value" (protection, cpu, count, node_unreclaimable, ...).
 * libkperf only splits at ':', so on a real kernel its pagesMin..pagesCma stay 0, stats
 * stays empty, and node_unreclaimable/start_pfn (which follow the pagesets) are never
 * seen; here both forms are read, and those two are taken wherever they appear.
 */
static int parse_zone_line(struct kp_proc_arena *a, struct zone_state *st, char *line)
{
	char *key, *value;

	if (!strcmp(line, "per-node stats")) {
		st->part = PART_NODE_STATS;
		return 0;
	}
	if (!strcmp(line, "pagesets")) {
		st->part = PART_PAGESETS;
		return 0;
	}
	if (kp_proc_prefix(line, "pages free")) {
		const char *last = NULL, *w;

		line += strlen("pages free");
		while ((w = kp_proc_word(&line)))
			last = w;
		st->zone->pagesFree = kp_proc_ull(last);
		st->part = PART_ZONE;
		return 0;
	}
	if (!kp_proc_colon(line, &key, &value)) {
		key = kp_proc_word(&line);
		value = kp_proc_trim(line);
	}
	if (!strcmp(key, "node_unreclaimable"))
		return (st->zone->nodeUnreclaimable = kp_proc_strdup(a, value)) ? 0 : -ENOMEM;
	if (!strcmp(key, "start_pfn"))
		return (st->zone->startPfn = kp_proc_strdup(a, value)) ? 0 : -ENOMEM;
	switch (st->part) {
	case PART_NODE_STATS:
		return kp_proc_push_field(a, &st->node_stats, key, value);
	case PART_ZONE:
		return zone_field(a, st, key, value);
	case PART_PAGESETS:
		return pageset_field(a, st, key, value);
	default:
		return 0;
	}
}

int kp_proc_parse_zoneinfo(struct kp_proc_arena *a, char *text, size_t len, struct ProcData *out)
{
	struct kp_proc_vec v = { 0 };
	struct zone_state st = { 0 };
	char *cur = text, *line;

	(void)len;
	while ((line = kp_proc_line(&cur))) {
		char *zone;

		line = kp_proc_trim(line);
		if (!*line)
			continue;
		/* "Node 0, zone   Normal" opens a zone */
		if (kp_proc_prefix(line, "Node") && (zone = strstr(line, "zone"))) {
			if (finish_zone(a, &st))
				return -ENOMEM;
			st.zone = kp_proc_push(a, &v, sizeof(*st.zone));
			if (!st.zone)
				return -ENOMEM;
			st.zone->node = kp_proc_int(line + 4);
			st.zone->zone = kp_proc_strdup(a, kp_proc_trim(zone + 4));
			if (!st.zone->zone)
				return -ENOMEM;
			st.part = PART_NONE;
			continue;
		}
		if (st.zone && parse_zone_line(a, &st, line))
			return -ENOMEM;
	}
	if (finish_zone(a, &st))
		return -ENOMEM;
	if (!v.n)
		return -ENODATA;
	out->zoneinfo = v.items;
	out->numEntries = v.n;
	return 0;
}

/*
 * "Node 0, zone   Normal   n0 n1 ... n10": zone is the word after "Node" ("0,") and
 * zoneName the zone's name, as in libkperf; node is the node's number (libkperf reads it
 * from the word "Node", so it is always 0 there).
 */
int kp_proc_parse_buddyinfo(struct kp_proc_arena *a, char *text, size_t len, struct ProcData *out)
{
	struct kp_proc_vec v = { 0 };
	char *cur = text, *line;

	(void)len;
	while ((line = kp_proc_line(&cur))) {
		struct ProcBuddyinfoEntry *e;
		char *w[4];

		if (kp_proc_words(&line, w, 4) < 4)
			continue;
		e = kp_proc_push(a, &v, sizeof(*e));
		if (!e || !(e->zone = kp_proc_strdup(a, w[1])) ||
		    !(e->zoneName = kp_proc_strdup(a, w[3])) ||
		    kp_proc_ull_words(a, line, &e->orders, &e->numOrders))
			return -ENOMEM;
		e->node = kp_proc_int(w[1]);
	}
	if (!v.n)
		return -ENODATA;
	out->buddyinfo = v.items;
	out->numEntries = v.n;
	return 0;
}
