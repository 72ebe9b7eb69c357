/*
 * sym_mnt.c - Symbol.mntPoint: where the root of a process in another mount namespace (a
 * container) is in ours, so that mntPoint + module names, from here, the file it mapped.
 *
 * libkperf pairs the container's overlay mount with the host's by their options; the general
 * form of that is the container's root mount (its device and the directory of that device it
 * shows) found among our mounts of the same device, the rest of the path appended. The result
 * must be the very directory /proc/PID/root is (same device and inode), or it is not used:
 * then "/proc/PID/root" itself, which names the same files for as long as the process lives.
 * A process chroot'ed in our mount namespace: the directory its root link names.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/core.h"
#include "sym.h"

/* undo mountinfo's octal escapes (\040 space, \011 tab, \012 newline, \134 backslash) */
static int unescape(const char *s, size_t n, char **out, char *end)
{
	char *d = *out;
	size_t i;

	for (i = 0; i < n; i++) {
		if (d >= end)
			return -EINVAL;
		if (s[i] == '\\' && i + 3 < n && s[i + 1] >= '0' && s[i + 1] <= '3' &&
		    s[i + 2] >= '0' && s[i + 2] <= '7' && s[i + 3] >= '0' && s[i + 3] <= '7') {
			*d++ = (char)((s[i + 1] - '0') * 64 + (s[i + 2] - '0') * 8 +
				      (s[i + 3] - '0'));
			i += 3;
		} else {
			*d++ = s[i];
		}
	}
	if (d >= end)
		return -EINVAL;
	*d++ = '\0';
	*out = d;
	return 0;
}

/* the next space-separated field of *p: its start and length; false at the end of the line */
static bool field(const char **p, const char **start, size_t *len)
{
	const char *s = *p;

	while (*s == ' ')
		s++;
	if (!*s)
		return false;
	*start = s;
	while (*s && *s != ' ')
		s++;
	*len = (size_t)(s - *start);
	*p = s;
	return true;
}

int sym_mnt_parse(const char *line, char *buf, size_t size, struct sym_mnt_entry *e)
{
	const char *p = line, *f[5], *fs;
	char *out = buf, *end = buf + size;
	size_t len[5], fslen;
	char dev[32], *colon;
	int i;

	memset(e, 0, sizeof(*e));
	/* mount id, parent id, major:minor, root, mount point */
	for (i = 0; i < 5; i++)
		if (!field(&p, &f[i], &len[i]))
			return -EINVAL;
	/* optional fields up to the "-" separator, then the file system type */
	for (;;) {
		if (!field(&p, &fs, &fslen))
			return -EINVAL;
		if (fslen == 1 && *fs == '-')
			break;
	}
	if (!field(&p, &fs, &fslen))
		return -EINVAL;
	if (len[2] >= sizeof(dev))
		return -EINVAL;
	memcpy(dev, f[2], len[2]);
	dev[len[2]] = '\0';
	colon = strchr(dev, ':');
	if (!colon || colon == dev || !colon[1])
		return -EINVAL;
	e->major = (unsigned)strtoul(dev, NULL, 10);
	e->minor = (unsigned)strtoul(colon + 1, NULL, 10);
	e->root = out;
	if (unescape(f[3], len[3], &out, end))
		return -EINVAL;
	e->mount_point = out;
	if (unescape(f[4], len[4], &out, end))
		return -EINVAL;
	e->fstype = out;
	if (unescape(fs, fslen, &out, end))
		return -EINVAL;
	if (e->root[0] != '/' || e->mount_point[0] != '/')
		return -EINVAL;
	return 0;
}

/* Is <prefix> a leading path of <path> ("/" leads everything; "/a" leads "/a" and "/a/b")?
 * Returns the rest of <path> after it ("" or starting with '/'), NULL when it is not. */
static const char *under(const char *path, const char *prefix)
{
	size_t n = strlen(prefix);

	if (!strcmp(prefix, "/"))
		return path;
	if (strncmp(path, prefix, n) || (path[n] && path[n] != '/'))
		return NULL;
	return path + n;
}

/* Each line of the mountinfo file <path>, parsed, to <fn> until it returns true. */
static int each_mount(const char *path, bool (*fn)(const struct sym_mnt_entry *e, void *ctx),
		      void *ctx)
{
	char *text, *line, *next, *buf;
	struct sym_mnt_entry e;
	size_t len;
	int err;

	err = kp_read_file(path, &text, &len);
	if (err)
		return err;
	buf = malloc(len + 1);
	if (!buf) {
		free(text);
		return -ENOMEM;
	}
	for (line = text; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		if (sym_mnt_parse(line, buf, len + 1, &e) == 0 && fn(&e, ctx))
			break;
	}
	free(buf);
	free(text);
	return 0;
}

struct their_root {
	unsigned major, minor;
	char root[4096];
	bool found;
};

static bool find_their_root(const struct sym_mnt_entry *e, void *ctx)
{
	struct their_root *r = ctx;

	/* several mounts stacked on "/": the last one is what the process sees */
	if (!strcmp(e->mount_point, "/") && strlen(e->root) < sizeof(r->root)) {
		r->major = e->major;
		r->minor = e->minor;
		snprintf(r->root, sizeof(r->root), "%s", e->root);
		r->found = true;
	}
	return false;
}

struct our_view {
	const struct their_root *want;
	char path[4096];
	size_t best; /* length of the root of the mount chosen so far, + 1 */
};

static bool find_our_view(const struct sym_mnt_entry *e, void *ctx)
{
	struct our_view *v = ctx;
	const char *rest;
	size_t rl = strlen(e->root);

	if (e->major != v->want->major || e->minor != v->want->minor)
		return false;
	rest = under(v->want->root, e->root);
	/* the mount that shows most of the directory wins; the first of equals */
	if (!rest || rl + 1 <= v->best)
		return false;
	if (snprintf(v->path, sizeof(v->path), "%s%s",
		     strcmp(e->mount_point, "/") || !*rest ? e->mount_point : "",
		     rest) >= (int)sizeof(v->path))
		return false;
	v->best = rl + 1;
	return false;
}

static bool same_namespace(pid_t pid)
{
	char path[64];
	struct stat ours, theirs;

	snprintf(path, sizeof(path), "/proc/%d/ns/mnt", (int)pid);
	/* unknown either way: take it as ours (libkperf does the same) */
	if (stat("/proc/self/ns/mnt", &ours) || stat(path, &theirs))
		return true;
	return ours.st_dev == theirs.st_dev && ours.st_ino == theirs.st_ino;
}

const char *sym_mnt_point(pid_t pid, struct sym_arena *a)
{
	char *copy;
	char path[64], proc_root[64];
	struct their_root r = { 0 };
	struct our_view v = { &r, "", 0 };
	struct stat want, got;

	if (pid <= 0)
		return sym_intern("");
	if (same_namespace(pid)) {
		char root[PATH_MAX];
		ssize_t n;

		/* a chroot: the same mounts, another root, which its link names as we see it
		 * (checked to be that very directory) */
		snprintf(proc_root, sizeof(proc_root), "/proc/%d/root", (int)pid);
		n = readlink(proc_root, root, sizeof(root) - 1);
		if (n > 1 && root[0] == '/' && stat(proc_root, &want) == 0) {
			root[n] = '\0';
			if (stat(root, &got) == 0 && want.st_dev == got.st_dev &&
			    want.st_ino == got.st_ino)
				return sym_intern(root);
		}
		return sym_intern("");
	}
	snprintf(proc_root, sizeof(proc_root), "/proc/%d/root", (int)pid);
	snprintf(path, sizeof(path), "/proc/%d/mountinfo", (int)pid);
	if (each_mount(path, find_their_root, &r) == 0 && r.found &&
	    each_mount("/proc/self/mountinfo", find_our_view, &v) == 0 && v.best &&
	    stat(proc_root, &want) == 0 && stat(v.path, &got) == 0 && want.st_dev == got.st_dev &&
	    want.st_ino == got.st_ino)
		return sym_intern(strcmp(v.path, "/") ? v.path : "");
	copy = sym_arena_alloc(a, strlen(proc_root) + 1);
	if (copy)
		strcpy(copy, proc_root);
	return copy;
}
