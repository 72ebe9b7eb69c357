/*
 * tracing.c - the HEADER_TRACING_DATA feature of a file with tracepoint events.
 *
 * perf refuses a file whose tracepoint events it cannot describe ("broken or missing trace
 * data"): it looks each one up by its id (the attribute's config) among the tracefs format
 * files this section carries. The section is tracefs' own text, in the layout perf's
 * trace-event reader expects (version 0.6): the ring buffer's header_page and header_event,
 * no ftrace formats, the format file of every tracepoint event of the file grouped by system,
 * and empty kallsyms, printk formats and saved comms (perf has its own sources for names).
 * It is built at PmuBeginWrite, so that a format that cannot be read fails there.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kperf/pcerrc.h"
#include "perfdata.h"

/* a tracefs file: its size (u64), then its bytes */
static int put_file(struct kp_pf_buf *b, const char *tfs, const char *rel)
{
	char path[PATH_MAX], *text;
	uint64_t n;
	size_t len;
	int err;

	snprintf(path, sizeof(path), "%s/%s", tfs, rel);
	err = kp_read_file(path, &text, &len);
	if (err)
		return kp_fail(LIBPERF_ERR_PATH_INACCESSIBLE, err,
			       "cannot read %s for the file's tracepoint events: %s", path,
			       strerror(-err));
	n = len;
	kp_pf_buf_put(b, &n, sizeof(n));
	kp_pf_buf_put(b, text, len);
	free(text);
	return 0;
}

/* "system:event" of event <i> when it is a tracepoint; its system's length in <syslen> */
static const char *tracepoint(const struct kp_pf *f, int i, size_t *syslen)
{
	const char *colon;

	if (f->evts[i].attr.type != PERF_TYPE_TRACEPOINT)
		return NULL;
	colon = strchr(f->evts[i].name, ':');
	if (!colon)
		return NULL;
	*syslen = (size_t)(colon - f->evts[i].name);
	return f->evts[i].name;
}

/* is event <i> the first of the file with its name (system and event)? */
static bool first_named(const struct kp_pf *f, int i)
{
	int j;

	for (j = 0; j < i; j++)
		if (f->evts[j].attr.type == PERF_TYPE_TRACEPOINT &&
		    !strcmp(f->evts[j].name, f->evts[i].name))
			return false;
	return true;
}

/* is event <i> the first tracepoint of the file in its system? */
static bool first_of_system(const struct kp_pf *f, int i, size_t syslen)
{
	size_t len;
	int j;

	for (j = 0; j < i; j++)
		if (tracepoint(f, j, &len) && len == syslen &&
		    !strncmp(f->evts[j].name, f->evts[i].name, len))
			return false;
	return true;
}

/* the systems and their format files */
static int put_events(const struct kp_pf *f, struct kp_pf_buf *b, const char *tfs)
{
	uint32_t nsys = 0, nev;
	size_t syslen, len, at;
	char rel[PATH_MAX], sys[NAME_MAX + 1];
	int i, j, err;

	for (i = 0; i < f->nevts; i++)
		nsys += tracepoint(f, i, &syslen) && first_of_system(f, i, syslen);
	kp_pf_buf_put(b, &nsys, sizeof(nsys));
	for (i = 0; i < f->nevts; i++) {
		if (!tracepoint(f, i, &syslen) || !first_of_system(f, i, syslen))
			continue;
		snprintf(sys, sizeof(sys), "%.*s", (int)syslen, f->evts[i].name);
		kp_pf_buf_put(b, sys, strlen(sys) + 1);
		at = b->len;
		nev = 0;
		kp_pf_buf_put(b, &nev, sizeof(nev));
		for (j = i; j < f->nevts; j++) {
			if (!tracepoint(f, j, &len) || len != syslen ||
			    strncmp(f->evts[j].name, sys, len) || !first_named(f, j))
				continue;
			snprintf(rel, sizeof(rel), "events/%s/%s/format", sys,
				 f->evts[j].name + len + 1);
			err = put_file(b, tfs, rel);
			if (err)
				return err;
			nev++;
		}
		if (!b->oom)
			memcpy(b->p + at, &nev, sizeof(nev));
	}
	return 0;
}

int kp_pf_tracing_build(struct kp_pf *f)
{
	static const unsigned char magic[] = { 0x17, 0x08, 0x44, 't', 'r', 'a', 'c', 'i', 'n', 'g' };
	struct kp_pf_buf *b = &f->tracing;
	const unsigned char little = __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? 0 : 1;
	const unsigned char long_size = sizeof(long);
	uint32_t page = (uint32_t)getpagesize(), zero4 = 0;
	uint64_t zero8 = 0;
	const char *tfs;
	size_t syslen;
	int i, err;

	for (i = 0; i < f->nevts && !tracepoint(f, i, &syslen); i++)
		;
	if (i == f->nevts)
		return 0; /* no tracepoint: no section */
	tfs = kp_tracefs();
	if (!tfs)
		return kp_fail(LIBPERF_ERR_PATH_INACCESSIBLE, -ENOENT,
			       "tracefs is not mounted: the file's tracepoint events cannot be "
			       "described to perf");
	kp_pf_buf_put(b, magic, sizeof(magic));
	kp_pf_buf_put(b, "0.6", 4);
	kp_pf_buf_put(b, &little, 1);
	kp_pf_buf_put(b, &long_size, 1);
	kp_pf_buf_put(b, &page, sizeof(page));
	kp_pf_buf_put(b, "header_page", sizeof("header_page"));
	err = put_file(b, tfs, "events/header_page");
	if (!err) {
		kp_pf_buf_put(b, "header_event", sizeof("header_event"));
		err = put_file(b, tfs, "events/header_event");
	}
	if (!err) {
		kp_pf_buf_put(b, &zero4, sizeof(zero4)); /* ftrace formats */
		err = put_events(f, b, tfs);
	}
	if (err) {
		kp_pf_buf_free(b);
		return err;
	}
	kp_pf_buf_put(b, &zero4, sizeof(zero4)); /* kallsyms */
	kp_pf_buf_put(b, &zero4, sizeof(zero4)); /* printk formats */
	kp_pf_buf_put(b, &zero8, sizeof(zero8)); /* saved comms */
	if (b->oom) {
		kp_pf_buf_free(b);
		return kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
	}
	return 0;
}
