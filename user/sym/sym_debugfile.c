/*
 * sym_debugfile.c - finding the separate debug file of an ELF file.
 *
 * By build-id (DIR/.build-id/xx/rest.debug) first, then by .gnu_debuglink (next to the file,
 * in its .debug/, in DIR/<directory of the file>/, the CRC checked), in the process's root
 * first and then in ours. DIR is each of $KPERF_BPF_DEBUG_DIRS and /usr/lib/debug (only the
 * latter inside a process's root). A candidate must be owned by root or by the process's
 * owner, and carry the same build-id when both have one.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "core/core.h"
#include "kperf/pcerrc.h"
#include "sym.h"

#define DEFAULT_DEBUG_DIR "/usr/lib/debug"

static char *debug_env_copy;
static const char **debug_dirs_arr;

int sym_debug_dirs(const char ***dirs)
{
	const char *env = secure_getenv("KPERF_BPF_DEBUG_DIRS");
	size_t n = 0, cap = 0;
	char *p, *save = NULL;

	sym_debug_dirs_free();
	if (env && *env) {
		debug_env_copy = strdup(env);
		if (!debug_env_copy)
			return -ENOMEM;
		for (p = strtok_r(debug_env_copy, ":", &save); p; p = strtok_r(NULL, ":", &save)) {
			if (kp_grow((void **)&debug_dirs_arr, &cap, n + 2, sizeof(char *)))
				return -ENOMEM;
			debug_dirs_arr[n++] = p;
		}
	}
	if (kp_grow((void **)&debug_dirs_arr, &cap, n + 2, sizeof(char *)))
		return -ENOMEM;
	debug_dirs_arr[n++] = DEFAULT_DEBUG_DIR;
	debug_dirs_arr[n] = NULL;
	*dirs = debug_dirs_arr;
	return (int)n;
}

void sym_debug_dirs_free(void)
{
	free(debug_env_copy);
	free(debug_dirs_arr);
	debug_env_copy = NULL;
	debug_dirs_arr = NULL;
}

static int crc_file(const char *path, uint32_t *crc)
{
	unsigned char buf[65536];
	uLong c = crc32(0L, Z_NULL, 0);
	ssize_t r;
	int fd = kp_open_path(path, O_RDONLY);

	if (fd < 0)
		return fd;
	while ((r = read(fd, buf, sizeof(buf))) != 0) {
		if (r < 0) {
			if (errno == EINTR)
				continue;
			r = -errno;
			close(fd);
			return (int)r;
		}
		c = crc32(c, buf, (uInt)r);
	}
	close(fd);
	*crc = (uint32_t)c;
	return 0;
}

struct debug_search {
	const struct sym_file *f;
	bool crc_mismatch;
	char found[PATH_MAX];
};

/* Open <path> as the debug file of s->f, or NULL when it is not one. */
static Elf *try_debug(struct debug_search *s, const char *path, bool by_link)
{
	const struct sym_file *f = s->f;
	struct stat st;
	uint8_t id[64];
	size_t idlen;
	Elf *elf;
	int err;

	if (kp_stat_path(path, &st) || !S_ISREG(st.st_mode))
		return NULL;
	if (st.st_dev == f->dev && st.st_ino == f->ino)
		return NULL; /* the debuglink names the file itself */
	if (!sym_owner_trusted(path, st.st_uid, f->debug_pid))
		return NULL;
	if (by_link) {
		uint32_t crc;

		if (crc_file(path, &crc))
			return NULL;
		if (crc != f->debuglink_crc) {
			s->crc_mismatch = true;
			return NULL;
		}
	}
	elf = sym_elf_open(path, &st, &err);
	if (!elf)
		return NULL;
	idlen = sym_elf_build_id(elf, id, sizeof(id));
	if (f->build_id_len && idlen &&
	    (idlen != f->build_id_len || memcmp(id, f->build_id, idlen))) {
		elf_end(elf);
		return NULL;
	}
	snprintf(s->found, sizeof(s->found), "%s", path);
	return elf;
}

Elf *sym_debug_find(struct sym_file *f)
{
	struct debug_search s = { .f = f };
	char root[64] = "", path[PATH_MAX * 2], dir[PATH_MAX], hex[140];
	const char **dirs;
	const char *roots[2];
	pid_t pid = f->debug_pid;
	int ndirs, r, d;
	size_t i;
	Elf *elf;

	ndirs = sym_debug_dirs(&dirs);
	if (ndirs < 0)
		return NULL;
	if (pid > 0)
		snprintf(root, sizeof(root), "/proc/%d/root", (int)pid);
	roots[0] = root;
	roots[1] = "";
	if (f->build_id_len) {
		for (i = 0; i < f->build_id_len; i++)
			snprintf(hex + 2 * i + (i ? 1 : 0), 4, i == 0 ? "%02x/" : "%02x",
				 f->build_id[i]);
		for (r = pid > 0 ? 0 : 1; r < 2; r++) {
			for (d = 0; d < ndirs; d++) {
				/* the process's root only has the system directory */
				if (r == 0 && strcmp(dirs[d], DEFAULT_DEBUG_DIR))
					continue;
				snprintf(path, sizeof(path), "%s%s/.build-id/%s.debug", roots[r],
					 dirs[d], hex);
				elf = try_debug(&s, path, false);
				if (elf)
					goto found;
			}
		}
	}
	if (f->debuglink && *f->debuglink && !strchr(f->debuglink, '/') && f->path[0] == '/') {
		char *slash;

		snprintf(dir, sizeof(dir), "%s", f->path);
		slash = strrchr(dir, '/');
		if (slash)
			slash[slash == dir ? 1 : 0] = '\0';
		for (r = pid > 0 ? 0 : 1; r < 2; r++) {
			const char *sep = strcmp(dir, "/") ? "/" : "";

			snprintf(path, sizeof(path), "%s%s%s%s", roots[r], dir, sep, f->debuglink);
			if ((elf = try_debug(&s, path, true)))
				goto found;
			snprintf(path, sizeof(path), "%s%s%s.debug/%s", roots[r], dir, sep,
				 f->debuglink);
			if ((elf = try_debug(&s, path, true)))
				goto found;
			for (d = 0; d < ndirs; d++) {
				if (r == 0 && strcmp(dirs[d], DEFAULT_DEBUG_DIR))
					continue;
				snprintf(path, sizeof(path), "%s%s%s%s%s", roots[r], dirs[d], dir,
					 sep, f->debuglink);
				if ((elf = try_debug(&s, path, true)))
					goto found;
			}
		}
		if (s.crc_mismatch)
			kp_warn(KPERF_WARN_SYM_INCOMPLETE,
				"the debug file %s of %s was found, but its CRC does not match the "
				".gnu_debuglink: it belongs to another build and was ignored",
				f->debuglink, f->path);
	}
	return NULL;
found:
	f->debug_path = sym_intern(s.found);
	return elf;
}
