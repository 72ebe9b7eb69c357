/*
 * maps.c - /proc/PID/maps of a traced process: which files it runs, and where. Module names
 * are looked up in it, and a probe hit's address is turned back into a file offset with it.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>

#include "core/core.h"
#include "utrace.h"

/* "start-end perms pgoff maj:min inode   path" */
static int parse_line(char *line, struct kp_ut_map *m)
{
	unsigned long long start, end, pgoff, ino;
	unsigned maj, min;
	char perms[8];
	int pos = 0;
	char *path;
	size_t len;

	if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %n", &start, &end, perms, &pgoff, &maj,
		   &min, &ino, &pos) < 7)
		return -EINVAL;
	memset(m, 0, sizeof(*m));
	m->start = start;
	m->end = end;
	m->pgoff = pgoff;
	m->dev = makedev(maj, min);
	m->ino = ino;
	m->exec = strchr(perms, 'x') != NULL;
	path = line + pos;
	len = strlen(path);
	while (len && (path[len - 1] == '\n' || path[len - 1] == ' '))
		path[--len] = '\0';
	if (ino && *path == '/') {
		m->path = strdup(path);
		if (!m->path)
			return -ENOMEM;
	}
	return 0;
}

int kp_ut_maps_read(pid_t pid, struct kp_ut_map **maps, size_t *n)
{
	struct kp_ut_map *out = NULL;
	size_t len = 0, cap = 0;
	char path[64], *buf, *line, *save = NULL;
	int err;

	*maps = NULL;
	*n = 0;
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	err = kp_read_file(path, &buf, NULL);
	if (err)
		return err;
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		struct kp_ut_map m;

		err = parse_line(line, &m);
		if (err == -EINVAL)
			continue;
		if (!err && kp_grow((void **)&out, &cap, len + 1, sizeof(*out))) {
			free(m.path);
			err = -ENOMEM;
		}
		if (err) {
			kp_ut_maps_free(out, len);
			free(buf);
			return err;
		}
		out[len++] = m;
	}
	free(buf);
	*maps = out;
	*n = len;
	return 0;
}

void kp_ut_maps_free(struct kp_ut_map *maps, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(maps[i].path);
	free(maps);
}
