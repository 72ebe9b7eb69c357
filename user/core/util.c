/*
 * util.c - small helpers used across modules: whole-file reads, growable arrays,
 * edit distance for "did you mean" suggestions.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core.h"
#include "kperf/pcerrc.h"

int kp_read_file(const char *path, char **buf, size_t *len)
{
	return kp_read_file_max(path, buf, len, KP_READ_FILE_MAX);
}

int kp_read_file_max(const char *path, char **buf, size_t *len, size_t max)
{
	size_t cap = 4096, n = 0;
	struct stat st;
	char *b, *nb;
	ssize_t r;
	int fd;

	*buf = NULL;
	fd = kp_open_path(path, O_RDONLY);
	if (fd < 0)
		return fd;
	/* a regular file says its size (a sparse one of terabytes costs nothing to make);
	 * /proc and sysfs files say 0 and are cut while reading */
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && (uint64_t)st.st_size > max) {
		close(fd);
		return -EFBIG;
	}
	b = malloc(cap);
	if (!b) {
		close(fd);
		return -ENOMEM;
	}
	for (;;) {
		if (n > max) {
			free(b);
			close(fd);
			return -EFBIG;
		}
		if (n + 1 >= cap) {
			nb = realloc(b, cap * 2);
			if (!nb) {
				free(b);
				close(fd);
				return -ENOMEM;
			}
			b = nb;
			cap *= 2;
		}
		r = read(fd, b + n, cap - n - 1);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			r = -errno;
			free(b);
			close(fd);
			return (int)r;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	b[n] = '\0';
	*buf = b;
	if (len)
		*len = n;
	return 0;
}

int kp_read_long(const char *path, long *val)
{
	char *buf, *end;
	long v;
	int err;

	err = kp_read_file(path, &buf, NULL);
	if (err)
		return err;
	errno = 0;
	v = strtol(buf, &end, 0);
	if (errno || end == buf) {
		free(buf);
		return -EINVAL;
	}
	free(buf);
	*val = v;
	return 0;
}

int kp_edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), i, j;
	int *row, d, prev, tmp;

	if (la > 256 || lb > 256)
		return 1 << 20;
	row = malloc((lb + 1) * sizeof(*row));
	if (!row)
		return 1 << 20;
	for (j = 0; j <= lb; j++)
		row[j] = (int)j;
	for (i = 1; i <= la; i++) {
		prev = row[0];
		row[0] = (int)i;
		for (j = 1; j <= lb; j++) {
			tmp = row[j];
			d = prev + (a[i - 1] != b[j - 1]);
			if (row[j] + 1 < d)
				d = row[j] + 1;
			if (row[j - 1] + 1 < d)
				d = row[j - 1] + 1;
			row[j] = d;
			prev = tmp;
		}
	}
	d = row[lb];
	free(row);
	return d;
}

char *kp_strdup(const char *s)
{
	char *d = strdup(s ? s : "");

	if (!d)
		kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
	return d;
}

int kp_grow(void **arr, size_t *cap, size_t need, size_t elem)
{
	size_t n = *cap ? *cap : 8;
	void *p;

	if (need <= *cap)
		return 0;
	while (n < need) {
		if (n > ((size_t)-1) / 2 / elem)
			return -ENOMEM;
		n *= 2;
	}
	p = realloc(*arr, n * elem);
	if (!p)
		return -ENOMEM;
	memset((char *)p + *cap * elem, 0, (n - *cap) * elem);
	*arr = p;
	*cap = n;
	return 0;
}

int kp_opts_copy(void *dst, size_t dst_sz, const void *src, size_t src_sz, const char *what)
{
	const unsigned char *b = src;
	size_t i;

	memset(dst, 0, dst_sz);
	if (!src)
		return 0;
	if (src_sz < sizeof(size_t))
		return kp_fail(KPERF_ERR_INVALID_ATTR, -EINVAL,
			       "%s.sz is %zu: set it to sizeof(struct %s)", what, src_sz, what);
	for (i = dst_sz; i < src_sz; i++)
		if (b[i])
			return kp_fail(KPERF_ERR_INVALID_ATTR, -E2BIG,
				       "%s has fields this library does not know (sz %zu, this "
				       "version knows %zu bytes): set them to 0 or use a newer "
				       "libkperf-bpf",
				       what, src_sz, dst_sz);
	memcpy(dst, src, src_sz < dst_sz ? src_sz : dst_sz);
	*(size_t *)dst = dst_sz;
	return 0;
}
