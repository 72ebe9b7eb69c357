/*
 * rootpath.c - open a file of another process's file system without leaving it.
 *
 * /proc/PID/root/<path> shows what PID sees at <path>, but the kernel resolves the rest of
 * the path from our root: inside a container, a symlink usr/lib/debug/x.debug ->
 * /etc/shadow reaches the host's /etc/shadow, and ../../.. climbs out. Whoever controls the
 * container controls those links. So a path under /proc/PID/root/ is resolved with that
 * directory as its root: openat2(RESOLVE_IN_ROOT) (Linux 5.6), else a walk that opens one
 * component at a time without following links, resolves each link itself against the same
 * root, and never lets ".." go above it. Other paths are opened as they are.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/openat2.h>

#include "core.h"

#ifndef SYS_openat2
#define SYS_openat2 437 /* the same number on every architecture */
#endif

#define MAX_LINKS 40 /* as the kernel's ELOOP limit */

static bool no_openat2_for_tests;

void kp_rootpath_test_no_openat2(bool on)
{
	no_openat2_for_tests = on;
}

/* "/proc/PID/root" or "/proc/PID/root/...": the length of the root part, else 0 */
static size_t proc_root_prefix(const char *path)
{
	const char *p;

	if (strncmp(path, "/proc/", 6))
		return 0;
	p = path + 6;
	if (!strncmp(p, "self", 4))
		p += 4;
	else if (*p >= '0' && *p <= '9')
		while (*p >= '0' && *p <= '9')
			p++;
	else
		return 0;
	if (strncmp(p, "/root", 5) || (p[5] && p[5] != '/'))
		return 0;
	return (size_t)(p + 5 - path);
}

/* take the next component off *rest into comp; false at the end */
static bool next_component(const char **rest, char *comp, size_t size, int *err)
{
	const char *p = *rest, *end;
	size_t len;

	while (*p == '/')
		p++;
	if (!*p)
		return false;
	end = strchr(p, '/');
	len = end ? (size_t)(end - p) : strlen(p);
	if (len >= size) {
		*err = -ENAMETOOLONG;
		return false;
	}
	memcpy(comp, p, len);
	comp[len] = '\0';
	*rest = p + len;
	return true;
}

/* <rel> under the directory <root>, one component at a time (kernels without openat2) */
static int walk_in_root(int root, const char *rel, int flags)
{
	char comp[NAME_MAX + 1], target[PATH_MAX], *todo = strdup(rel), *next;
	const char *rest;
	int *dirs = NULL, depth = 0, links = 0, fd = -1, err = 0;
	size_t cap = 0;
	struct stat st;

	if (!todo)
		return -ENOMEM;
	if (kp_grow((void **)&dirs, &cap, 1, sizeof(*dirs))) {
		free(todo);
		return -ENOMEM;
	}
	dirs[0] = root; /* not ours to close */
	rest = todo;
	while (next_component(&rest, comp, sizeof(comp), &err)) {
		bool last;
		const char *after = rest;

		while (*after == '/')
			after++;
		last = !*after;
		if (!strcmp(comp, "."))
			continue;
		if (!strcmp(comp, "..")) {
			if (depth > 0)
				close(dirs[depth--]);
			continue;
		}
		fd = openat(dirs[depth], comp, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0 || fstat(fd, &st)) {
			err = -errno;
			break;
		}
		if (S_ISLNK(st.st_mode)) {
			ssize_t n = readlinkat(fd, "", target, sizeof(target) - 1);

			close(fd);
			fd = -1;
			if (n < 0 || ++links > MAX_LINKS) {
				err = n < 0 ? -errno : -ELOOP;
				break;
			}
			target[n] = '\0';
			/* the link's text, then what was left of the path */
			if (asprintf(&next, "%s/%s", target, rest) < 0) {
				err = -ENOMEM;
				break;
			}
			free(todo);
			todo = next;
			rest = todo;
			if (target[0] == '/')
				while (depth > 0)
					close(dirs[depth--]);
			continue;
		}
		if (last) {
			close(fd);
			/* O_NOFOLLOW: a link put there since the check is not followed */
			fd = openat(dirs[depth], comp, flags | O_NOFOLLOW | O_CLOEXEC);
			if (fd < 0)
				err = -errno;
			break;
		}
		if (!S_ISDIR(st.st_mode)) {
			err = -ENOTDIR;
			break;
		}
		if (kp_grow((void **)&dirs, &cap, (size_t)depth + 2, sizeof(*dirs))) {
			err = -ENOMEM;
			break;
		}
		dirs[++depth] = fd;
		fd = -1;
	}
	if (!err && fd < 0) {
		/* the path ended in the root, "." or "..": that directory itself */
		fd = openat(dirs[depth], ".", flags | O_CLOEXEC);
		if (fd < 0)
			err = -errno;
	}
	while (depth > 0)
		close(dirs[depth--]);
	free(dirs);
	free(todo);
	if (err) {
		if (fd >= 0)
			close(fd);
		return err;
	}
	return fd;
}

int kp_open_path(const char *path, int flags)
{
	size_t prefix = proc_root_prefix(path);
	char root_path[64];
	struct open_how how;
	int root, fd;

	if (!prefix) {
		fd = open(path, flags | O_CLOEXEC);
		return fd < 0 ? -errno : fd;
	}
	if (prefix >= sizeof(root_path))
		return -ENAMETOOLONG;
	memcpy(root_path, path, prefix);
	root_path[prefix] = '\0';
	root = open(root_path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (root < 0)
		return -errno;
	path += prefix;
	while (*path == '/')
		path++;
	if (!no_openat2_for_tests) {
		memset(&how, 0, sizeof(how));
		how.flags = (uint64_t)(flags | O_CLOEXEC);
		/* magic links (/proc/N/fd/...) would lead anywhere: not followed either */
		how.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS;
		fd = (int)syscall(SYS_openat2, root, *path ? path : ".", &how, sizeof(how));
		if (fd >= 0 || (errno != ENOSYS && errno != EPERM)) {
			fd = fd < 0 ? -errno : fd;
			close(root);
			return fd;
		}
	}
	fd = walk_in_root(root, path, flags);
	close(root);
	return fd;
}

int kp_stat_path(const char *path, struct stat *st)
{
	int fd, err = 0;

	if (!proc_root_prefix(path))
		return stat(path, st) ? -errno : 0;
	fd = kp_open_path(path, O_PATH);
	if (fd < 0)
		return fd;
	if (fstat(fd, st))
		err = -errno;
	close(fd);
	return err;
}
