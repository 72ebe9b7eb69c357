/*
 * proctest.h - helpers of the ProcDataRead tests: read one source of the fixture tree
 * tests/fixtures/proc/full (or of a scratch tree) into a per-test arena, parse a string as
 * one source, write scratch /proc trees, and find a field by key.
 */
#ifndef KPERF_PROCTEST_H
#define KPERF_PROCTEST_H

#include <criterion/criterion.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/core.h"
#include "fixtures/fixture.h"
#include "kperf/pcerrc.h"
#include "kperf/pmu.h"
#include "proc/proc.h"

/* each criterion test runs in its own process: one arena per test, freed by pt_fini */
static struct kp_proc_arena pt_arena;

static inline void pt_fini(void)
{
	kp_proc_arena_free(&pt_arena);
}

static inline const char *pt_full(void)
{
	static char root[PATH_MAX];

	if (!root[0])
		snprintf(root, sizeof(root), "%s", fx_path("proc/full"));
	return root;
}

/* Read <src> (of <pid>) from <root> (NULL: the full fixture); returns 0 or the neg. errno. */
static inline int pt_read_in(const char *root, int src, int pid, struct ProcData *out)
{
	kp_clear();
	return kp_proc_read_source(&pt_arena, root ? root : pt_full(), src, pid, out);
}

/* Read <src> from the full fixture, which must succeed. */
static inline struct ProcData pt_read(int src, int pid)
{
	struct ProcData d;
	int err = pt_read_in(NULL, src, pid, &d);

	cr_assert_eq(err, 0, "source %d: %d (%s)", src, err, Perror());
	cr_assert_eq((int)d.source, src);
	cr_assert_eq(d.pid, pid);
	return d;
}

/* Parse <text> as source <src>; returns 0 or the neg. errno (code in Perrorno()). */
static inline int pt_parse_n(int src, const char *text, size_t len, struct ProcData *out)
{
	char *buf = malloc(len + 1);
	int err;

	cr_assert(buf);
	memcpy(buf, text, len);
	buf[len] = '\0';
	memset(out, 0, sizeof(*out));
	out->source = (enum ProcSource)src;
	kp_clear();
	err = kp_proc_parse(&pt_arena, src, buf, len, out);
	free(buf);
	return err;
}

static inline int pt_parse(int src, const char *text, struct ProcData *out)
{
	return pt_parse_n(src, text, strlen(text), out);
}

/* Does <s> end with <tail>? */
static inline int pt_ends(const char *s, const char *tail)
{
	size_t a = strlen(s), b = strlen(tail);

	return a >= b && !strcmp(s + a - b, tail);
}

static inline void pt_field(const struct ProcField *f, const char *key, const char *value)
{
	cr_assert_str_eq(f->key, key);
	cr_assert_str_eq(f->value, value);
}

/* ---- scratch trees ---- */

/* A new empty directory under /tmp, in a static buffer. */
static inline const char *pt_scratch(void)
{
	static char dir[64];

	snprintf(dir, sizeof(dir), "/tmp/kperf-proc-XXXXXX");
	cr_assert(mkdtemp(dir));
	return dir;
}

/* Write <len> bytes of <content> to <root>/<rel>, creating directories. */
static inline void pt_put_n(const char *root, const char *rel, const char *content, size_t len)
{
	char path[PATH_MAX], *slash;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	for (slash = strchr(path + strlen(root) + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		mkdir(path, 0755);
		*slash = '/';
	}
	f = fopen(path, "w");
	cr_assert(f, "%s: %s", path, strerror(errno));
	cr_assert_eq(fwrite(content, 1, len, f), len);
	fclose(f);
}

static inline void pt_put(const char *root, const char *rel, const char *content)
{
	pt_put_n(root, rel, content, strlen(content));
}

static inline void pt_rmtree(const char *root)
{
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	cr_assert_eq(system(cmd), 0);
}

#endif
