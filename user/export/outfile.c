/*
 * outfile.c - where reports are written: standard output, or a file (-o) that appears only
 * once it is complete.
 *
 * Every byte goes through a stdio stream whose writes we see (fopencookie), so the first
 * failed write(2) is kept with its errno: glibc forgets the error of a failed flush (the next
 * fflush and even fclose return 0), and "disk full" must end in a message and a non-zero
 * exit, not in a report cut off in the middle.
 *
 * A file is written under a temporary name in its own directory (".NAME.XXXXXX", created
 * with O_EXCL, so never through a link) and renamed over NAME when complete: a reader sees
 * the old file or the whole new one, never half a JSON document. It is created 0644 (less
 * when the umask or the file it replaces says so), whatever group/other write bits the umask
 * would let through. NAME itself is never opened through a symbolic link planted by someone
 * else: a symlink in a sticky world-writable directory (/tmp) is refused; elsewhere a link to
 * a regular file is resolved and its target replaced. Devices and FIFOs (/dev/null, a named
 * pipe) are written in place, and so is an existing file whose directory we cannot write.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/core.h"
#include "export.h"
#include "kperf/pcerrc.h"

#define OUT_MODE 0644

struct kp_out {
	FILE *f;
	int fd;
	int err; /* the first failed write, -errno */
	bool own_fd; /* not standard output: closed by us */
	char *name; /* for messages: the path as given, or "standard output" */
	char *target; /* the final path, when written under tmp */
	char *tmp;
};

static ssize_t cookie_write(void *cookie, const char *buf, size_t size)
{
	struct kp_out *o = cookie;
	size_t done = 0;
	ssize_t r;

	/* after a failure nothing more is written: the report is lost anyway */
	if (o->err)
		return 0;
	while (done < size) {
		r = write(o->fd, buf + done, size - done);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			o->err = r < 0 ? -errno : -EIO;
			return 0; /* stdio: an error */
		}
		done += (size_t)r;
	}
	return (ssize_t)done;
}

static struct kp_out *out_new(int fd, bool own_fd, const char *name)
{
	static const cookie_io_functions_t io = { .write = cookie_write };
	struct kp_out *o = calloc(1, sizeof(*o));

	if (!o)
		return NULL;
	o->fd = fd;
	o->own_fd = own_fd;
	o->name = strdup(name);
	if (o->name)
		o->f = fopencookie(o, "w", io);
	if (!o->f) {
		free(o->name);
		free(o);
		return NULL;
	}
	return o;
}

static void out_free(struct kp_out *o)
{
	free(o->name);
	free(o->target);
	free(o->tmp);
	free(o);
}

/* libkperf's codes: a file that cannot be opened, a write that fails */
static int cannot_open(const char *path, int err)
{
	return kp_fail(LIBPERF_ERR_PATH_INACCESSIBLE, err, "cannot write %s: %s", path,
		       strerror(-err));
}

static int cannot_write(const char *path, int err)
{
	return kp_fail(COMMON_ERR_WRITE, err, "cannot write %s: %s", path, strerror(-err));
}

/* directory part of <path> ("." when it has none), malloc'd */
static char *dir_of(const char *path)
{
	char *copy = strdup(path), *d;

	if (!copy)
		return NULL;
	d = strdup(dirname(copy));
	free(copy);
	return d;
}

static bool sticky_world_writable(const char *dir)
{
	struct stat st;

	return stat(dir, &st) == 0 && (st.st_mode & S_ISVTX) && (st.st_mode & S_IWOTH);
}

/* Write in place: a device, a FIFO, or a file whose directory we may not create files in. */
static int open_in_place(const char *path, const char *name, int flags, struct kp_out **out)
{
	int fd = open(path, O_WRONLY | O_NOCTTY | O_CLOEXEC | flags);

	if (fd < 0)
		return cannot_open(name, -errno);
	*out = out_new(fd, true, name);
	if (!*out) {
		close(fd);
		return kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
	}
	return 0;
}

int kp_out_open(const char *path, struct kp_out **out)
{
	char *target = NULL, *dir = NULL, *tmp = NULL, *base;
	struct stat lst, st;
	bool exists;
	mode_t mask, mode = OUT_MODE;
	int fd = -1, err;

	*out = NULL;
	if (!path) {
		*out = out_new(STDOUT_FILENO, false, "standard output");
		return *out ? 0 : kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
	}
	if (!*path)
		return kp_fail(KPERF_ERR_INVALID_ARG, -EINVAL, "an empty output file name");
	if (lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode)) {
		dir = dir_of(path);
		if (!dir)
			return kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
		if (sticky_world_writable(dir)) {
			err = kp_fail(LIBPERF_ERR_PATH_INACCESSIBLE, -ELOOP,
				      "refusing to write %s: it is a symbolic link in %s, a sticky "
				      "world-writable directory where any user may have planted it "
				      "(remove it or choose another name)",
				      path, dir);
			free(dir);
			return err;
		}
		free(dir);
		dir = NULL;
		if (stat(path, &st))
			return kp_fail(LIBPERF_ERR_PATH_INACCESSIBLE, -errno,
				       "cannot write %s: it is a symbolic link to a missing file",
				       path);
		if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))
			return open_in_place(path, path, 0, out); /* /dev/stdout: a link we trust */
		target = realpath(path, NULL);
		if (!target)
			return cannot_open(path, -errno);
	} else {
		target = strdup(path);
		if (!target)
			return kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
	}
	exists = lstat(target, &st) == 0;
	if (exists && S_ISDIR(st.st_mode)) {
		err = cannot_open(path, -EISDIR);
		goto fail;
	}
	if (exists && !S_ISREG(st.st_mode)) {
		err = open_in_place(target, path, O_NOFOLLOW, out);
		free(target);
		return err;
	}
	dir = dir_of(target);
	base = strrchr(target, '/');
	base = base ? base + 1 : target;
	if (!dir || asprintf(&tmp, "%s/.%s.XXXXXX", dir, base) < 0) {
		tmp = NULL;
		err = kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
		goto fail;
	}
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		if (exists && (err == -EACCES || err == -EPERM || err == -EROFS)) {
			/* a file we may write in a directory we may not: like before, in place */
			free(tmp);
			free(dir);
			err = open_in_place(target, path, O_NOFOLLOW | O_TRUNC, out);
			free(target);
			return err;
		}
		if (err == -ENAMETOOLONG || err == -EINVAL)
			err = kp_fail(LIBPERF_ERR_PATH_INACCESSIBLE, err,
				      "cannot write %s: no room for a temporary name", path);
		else
			err = cannot_open(path, err);
		goto fail;
	}
	mask = umask(0);
	umask(mask);
	mode &= ~mask;
	if (exists)
		mode &= st.st_mode; /* never more open than the file it replaces */
	if (fchmod(fd, mode)) {
		err = cannot_open(path, -errno);
		goto fail;
	}
	*out = out_new(fd, true, path);
	if (!*out) {
		err = kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
		goto fail;
	}
	(*out)->target = target;
	(*out)->tmp = tmp;
	free(dir);
	return 0;
fail:
	if (fd >= 0) {
		close(fd);
		unlink(tmp);
	}
	free(tmp);
	free(dir);
	free(target);
	return err;
}

FILE *kp_out_file(const struct kp_out *o)
{
	return o->f;
}

const char *kp_out_name(const struct kp_out *o)
{
	return o->name;
}

int kp_out_check(struct kp_out *o)
{
	if (fflush(o->f) && !o->err)
		o->err = errno ? -errno : -EIO;
	if (!o->err && ferror(o->f))
		o->err = -EIO;
	return o->err ? cannot_write(o->name, o->err) : 0;
}

void kp_out_discard(struct kp_out *o)
{
	if (!o)
		return;
	if (o->f)
		fclose(o->f);
	if (o->own_fd)
		close(o->fd);
	if (o->tmp)
		unlink(o->tmp);
	out_free(o);
}

int kp_out_commit(struct kp_out *o)
{
	int err;

	if (!o)
		return 0;
	err = kp_out_check(o);
	if (!err && o->tmp && fdatasync(o->fd))
		err = cannot_write(o->name, -errno);
	if (!err && o->own_fd) {
		/* close(2) reports errors of some filesystems (NFS) that came late */
		fclose(o->f);
		o->f = NULL;
		err = close(o->fd) ? cannot_write(o->name, -errno) : 0;
		o->own_fd = false;
	}
	if (!err && o->tmp) {
		if (rename(o->tmp, o->target))
			err = cannot_write(o->name, -errno);
		else {
			free(o->tmp);
			o->tmp = NULL;
		}
	}
	if (err) {
		kp_out_discard(o);
		return err;
	}
	if (o->f)
		fclose(o->f);
	out_free(o);
	return 0;
}
