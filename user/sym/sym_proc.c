/*
 * sym_proc.c - the address space of one process as the resolver knows it: the mappings read
 * from /proc/PID/maps or learned from MMAP2 records, and the vDSO copied out of its memory.
 *
 * A process's files are opened through /proc/PID/map_files (the very file that is mapped,
 * even when deleted or in another mount namespace), then /proc/PID/root/<path>, and only when
 * the process is gone through <path> itself, checked against the inode that was mapped.
 * Mappings that disappear from maps are kept unless something else is mapped over them: a
 * sample taken before a dlclose() still resolves. (JIT code and perf maps: sym_jit.c.)
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "core/core.h"
#include "kperf/pcerrc.h"
#include "sym.h"

#define DELETED_SUFFIX " (deleted)"
#define VDSO_MAX (1 << 20) /* a vDSO is a few pages; refuse to copy anything silly */

bool sym_proc_alive(pid_t pid)
{
	return pid > 0 && (kill(pid, 0) == 0 || errno == EPERM);
}

static enum sym_map_kind kind_of(const char *path)
{
	if (!*path || !strcmp(path, "//anon") || !strncmp(path, "[anon:", 6) ||
	    !strcmp(path, "[heap]") || !strncmp(path, "[stack", 6) ||
	    !strncmp(path, "/dev/zero", 9) || !strncmp(path, "/SYSV", 5))
		return SYM_MAP_ANON;
	if (!strcmp(path, "[vdso]"))
		return SYM_MAP_VDSO;
	if (path[0] == '/')
		return SYM_MAP_FILE;
	return SYM_MAP_SPECIAL;
}

static bool same_mapping(const struct sym_map *a, const struct sym_map *b)
{
	return a->start == b->start && a->end == b->end && a->pgoff == b->pgoff &&
	       a->path == b->path && a->ino == b->ino && a->dev == b->dev;
}

int sym_map_fill(struct sym_map *m, uint64_t start, uint64_t end, uint64_t pgoff, const char *path,
		 dev_t dev, uint64_t ino, bool exec)
{
	size_t len = strlen(path), sl = strlen(DELETED_SUFFIX);

	memset(m, 0, sizeof(*m));
	m->start = start;
	m->end = end;
	m->pgoff = pgoff;
	m->dev = dev;
	m->ino = ino;
	m->exec = exec;
	m->path = sym_intern(path);
	if (!m->path)
		return -ENOMEM;
	m->kind = kind_of(path);
	m->deleted = len > sl && !strcmp(path + len - sl, DELETED_SUFFIX);
	return 0;
}

struct sym_map *sym_proc_find_map(struct sym_proc *p, uint64_t addr)
{
	size_t lo = 0, hi = p->nmaps;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (p->maps[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0 || addr >= p->maps[lo - 1].end)
		return NULL;
	return &p->maps[lo - 1];
}

/* first mapping that ends after <addr> */
static size_t first_ending_after(const struct sym_map *v, size_t n, uint64_t addr)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (v[mid].end <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* ---- the vDSO ---- */

/* our own vDSO: same kernel, same image for 64-bit processes */
static int own_vdso(const void **image, size_t *size)
{
	unsigned long base = getauxval(AT_SYSINFO_EHDR);
	char *maps, *line;
	int err;

	if (!base)
		return -ENOENT;
	err = kp_read_file("/proc/self/maps", &maps, NULL);
	if (err)
		return err;
	err = -ENOENT;
	for (line = maps; line && *line;
	     line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
		unsigned long long s, e;

		if (sscanf(line, "%llx-%llx", &s, &e) == 2 && s == base) {
			*image = (const void *)base;
			*size = (size_t)(e - s);
			err = 0;
			break;
		}
	}
	free(maps);
	return err;
}

static struct sym_file *load_vdso(struct sym_proc *p, struct sym_map *m)
{
	size_t size = m->end - m->start;
	struct sym_file *f = NULL;
	const void *own;
	size_t own_size;
	char path[64];
	void *buf;
	int fd;

	if (size == 0 || size > VDSO_MAX)
		return NULL;
	if (!p->gone && p->pid > 0) {
		snprintf(path, sizeof(path), "/proc/%d/mem", (int)p->pid);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd >= 0) {
			buf = malloc(size);
			if (buf && pread(fd, buf, size, (off_t)m->start) == (ssize_t)size)
				sym_file_from_memory(buf, size, "[vdso]", &f);
			free(buf);
			close(fd);
		}
	}
	if (!f && !own_vdso(&own, &own_size) && own_size == size)
		sym_file_from_memory(own, own_size, "[vdso]", &f);
	sym_demote_error();
	return f;
}

/* ---- opening a mapping's file ---- */

struct sym_file *sym_proc_map_file(struct sym_proc *p, struct sym_map *m, unsigned flags)
{
	char bare[PATH_MAX], cand[3][PATH_MAX + 64];
	struct sym_file *f = NULL;
	bool alive = p->pid > 0 && !p->gone, replaced = false;
	struct stat st;
	size_t len;
	int n = 0, i;

	if (m->file)
		return m->file;
	if (m->load_tried)
		return NULL;
	m->load_tried = true;
	if (m->kind == SYM_MAP_VDSO) {
		m->file = load_vdso(p, m);
		if (m->file)
			sym_proc_hold_file(p, m->file);
		return m->file;
	}
	if (m->kind != SYM_MAP_FILE)
		return NULL;
	len = strlen(m->path);
	if (m->deleted)
		len -= strlen(DELETED_SUFFIX);
	if (len >= sizeof(bare))
		return NULL;
	memcpy(bare, m->path, len);
	bare[len] = '\0';
	if (alive)
		snprintf(cand[n++], sizeof(cand[0]), "/proc/%d/map_files/%llx-%llx", (int)p->pid,
			 (unsigned long long)m->start, (unsigned long long)m->end);
	if (alive && !m->deleted)
		snprintf(cand[n++], sizeof(cand[0]), "/proc/%d/root%s", (int)p->pid, bare);
	if (!m->deleted) {
		/* by its path as we see it (under the directory that was its root, when it
		 * had another: a chroot, a container's root found among our mounts): only the
		 * inode that was mapped will do */
		char seen[PATH_MAX + 64];
		const char *mnt = p->mnt_point;

		if (mnt && mnt[0] == '/' && strncmp(mnt, "/proc/", 6))
			snprintf(seen, sizeof(seen), "%s%s", mnt, bare);
		else
			snprintf(seen, sizeof(seen), "%s", bare);
		if (stat(seen, &st) == 0 && m->ino && (uint64_t)st.st_ino != m->ino)
			replaced = true;
		else
			snprintf(cand[n++], sizeof(cand[0]), "%s", seen);
	}
	for (i = 0; i < n && !f; i++) {
		struct sym_file_ref ref = {
			.path = bare,
			.open_path = cand[i],
			.pid = alive ? p->pid : 0,
			.map_dev = m->dev,
			.map_ino = m->ino,
		};

		if (i)
			sym_drop_error(); /* only the last attempt's failure is worth telling */
		sym_file_get(&ref, flags, &f);
	}
	if (f) {
		sym_drop_error();
	} else if (replaced) {
		sym_drop_error();
		kp_warn(KPERF_WARN_SYM_INCOMPLETE,
			"%s was replaced since process %d mapped it (inode %llu, now %llu): its "
			"addresses resolve to [unknown]",
			bare, (int)p->pid, (unsigned long long)m->ino,
			(unsigned long long)st.st_ino);
	} else if (n == 0) {
		kp_fail(LIBSYM_ERR_OPEN_FILE_FAILED, -ENOENT,
			"%s of process %d is gone (the process exited before its files were read)",
			m->path, (int)p->pid);
	}
	sym_demote_error();
	m->file = f;
	if (f)
		sym_proc_hold_file(p, f);
	return f;
}

void sym_proc_hold_file(struct sym_proc *p, struct sym_file *f)
{
	size_t i;

	for (i = 0; i < p->nfiles; i++)
		if (p->files[i] == f)
			return;
	if (kp_grow((void **)&p->files, &p->capfiles, p->nfiles + 1, sizeof(*p->files))) {
		sym_file_keep(f); /* no room to note it: never evicted, rather than freed early */
		return;
	}
	p->files[p->nfiles++] = f;
	sym_file_hold(f);
}

/* ---- maps ---- */

int sym_start_ticks(pid_t pid, uint64_t *out)
{
	char path[64], *buf, *p;
	int err, field;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	err = kp_read_file(path, &buf, NULL);
	if (err)
		return err;
	/* the command may hold spaces and parentheses: count fields after the last ')' */
	p = strrchr(buf, ')');
	for (field = 2; p && field < 22; field++) {
		p = strchr(p + 1, ' ');
	}
	*out = p ? strtoull(p + 1, NULL, 10) : 0;
	free(buf);
	return 0;
}

int sym_parse_maps(char *buf, struct sym_map **out, size_t *nout)
{
	struct sym_map *v = NULL;
	size_t n = 0, cap = 0;
	char *line, *next;

	for (line = buf; line && *line; line = next) {
		unsigned long long start, end, pgoff, ino;
		unsigned maj, min;
		char perms[8];
		int pos = 0;
		char *path;

		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %n", &start, &end, perms, &pgoff,
			   &maj, &min, &ino, &pos) < 7 ||
		    end <= start)
			continue;
		path = pos ? line + pos : line + strlen(line);
		while (*path == ' ')
			path++;
		if (kp_grow((void **)&v, &cap, n + 1, sizeof(*v))) {
			free(v);
			return -ENOMEM;
		}
		if (sym_map_fill(&v[n], start, end, pgoff, path, makedev(maj, min), ino,
				 perms[2] == 'x')) {
			free(v);
			return -ENOMEM;
		}
		/* /proc/PID/maps is sorted, but be safe against anything else */
		if (n && v[n].start < v[n - 1].end) {
			free(v);
			return -EINVAL;
		}
		n++;
	}
	*out = v;
	*nout = n;
	return 0;
}

static bool needs_file(const struct sym_map *m)
{
	return m->exec && (m->kind == SYM_MAP_FILE || m->kind == SYM_MAP_VDSO);
}

int sym_proc_read_maps(struct sym_proc *p, unsigned flags)
{
	struct sym_map *nv = NULL, *merged = NULL;
	size_t nn = 0, nm = 0, i, j, k;
	char path[64], *buf;
	uint64_t st = 0;
	int err;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)p->pid);
	err = kp_read_file(path, &buf, NULL);
	if (!err && sym_start_ticks(p->pid, &st)) {
		free(buf);
		err = -ESRCH; /* exited between the two reads */
	}
	if (err) {
		if (err == -ENOENT || err == -ESRCH) {
			if (p->recorded) {
				p->gone = true;
				return 0;
			}
			return kp_fail(LIBSYM_ERR_NOT_FIND_PID, -ESRCH,
				       "process %d does not exist (no /proc/%d/maps): it may have "
				       "exited before its symbols were recorded",
				       (int)p->pid, (int)p->pid);
		}
		if (err == -EACCES || err == -EPERM)
			return kp_fail(LIBSYM_ERR_OPEN_FILE_FAILED, err,
				       "cannot read /proc/%d/maps: permission denied (run as root "
				       "or as the process's user with ptrace access)",
				       (int)p->pid);
		return kp_fail(LIBSYM_ERR_OPEN_FILE_FAILED, err, "cannot read /proc/%d/maps: %s",
			       (int)p->pid, strerror(-err));
	}
	if (p->recorded && p->start_time && st && st != p->start_time) {
		/* the pid was reused by another process: nothing of the old one applies */
		sym_proc_clear_maps(p);
		p->mnt_point = NULL;
	}
	p->start_time = st;
	p->gone = false;
	if (!p->mnt_point) {
		/* while it lives: where its root is cannot be told afterwards */
		p->mnt_point = sym_mnt_point(p->pid, &p->arena);
		if (!p->mnt_point)
			return -ENOMEM;
	}
	err = sym_parse_maps(buf, &nv, &nn);
	free(buf);
	if (err)
		return err == -ENOMEM ? err :
					kp_fail(LIBSYM_ERR_FILE_INVALID, err,
						"/proc/%d/maps is not sorted", (int)p->pid);
	/* merge: every new mapping, plus old ones nothing new overlaps */
	merged = calloc(nn + p->nmaps + 1, sizeof(*merged));
	if (!merged) {
		free(nv);
		return -ENOMEM;
	}
	for (i = 0; i < p->nmaps; i++) {
		struct sym_map *o = &p->maps[i];
		size_t at = first_ending_after(nv, nn, o->start);

		if (at < nn && nv[at].start < o->end) {
			if (same_mapping(&nv[at], o)) {
				/* unchanged: keep what was opened for it */
				nv[at].file = o->file;
				nv[at].load_tried = o->load_tried;
			}
			continue;
		}
		merged[nm++] = *o; /* vanished, nothing over it: keep for older samples */
	}
	/* merged[0..nm) and nv are both sorted and disjoint: merge them in place from the end */
	k = nm + nn;
	i = nm;
	j = nn;
	while (j > 0) {
		if (i > 0 && merged[i - 1].start > nv[j - 1].start)
			merged[--k] = merged[--i];
		else
			merged[--k] = nv[--j];
	}
	free(nv);
	free(p->maps);
	p->maps = merged;
	p->nmaps = nm + nn;
	p->cap = nm + nn + 1;
	p->recorded = true;
	p->refreshed_ms = sym_now_ms();
	for (i = 0; i < p->nmaps; i++)
		if (needs_file(&p->maps[i]))
			sym_proc_map_file(p, &p->maps[i], flags);
	sym_proc_note_identity(p);
	sym_proc_load_jit(p);
	return 0;
}

int sym_proc_add_map(struct sym_proc *p, const struct sym_map *m, bool load, unsigned flags)
{
	size_t first = first_ending_after(p->maps, p->nmaps, m->start), last, nins = 1;
	struct sym_map ins[3];
	size_t i;

	for (last = first; last < p->nmaps && p->maps[last].start < m->end; last++)
		;
	if (last == first + 1 && same_mapping(&p->maps[first], m)) {
		if (load && needs_file(&p->maps[first]))
			sym_proc_map_file(p, &p->maps[first], flags);
		return 0;
	}
	/* what is left of the overlapped mappings on each side */
	if (last > first && p->maps[first].start < m->start) {
		ins[0] = p->maps[first];
		ins[0].end = m->start;
		ins[1] = *m;
		nins = 2;
	} else {
		ins[0] = *m;
	}
	if (last > first && p->maps[last - 1].end > m->end) {
		struct sym_map *r = &ins[nins++];

		*r = p->maps[last - 1];
		r->pgoff += m->end - r->start;
		r->start = m->end;
	}
	if (kp_grow((void **)&p->maps, &p->cap, p->nmaps - (last - first) + nins, sizeof(*p->maps)))
		return -ENOMEM;
	memmove(&p->maps[first + nins], &p->maps[last], (p->nmaps - last) * sizeof(*p->maps));
	for (i = 0; i < nins; i++)
		p->maps[first + i] = ins[i];
	p->nmaps = p->nmaps - (last - first) + nins;
	if (load) {
		struct sym_map *added = sym_proc_find_map(p, m->start);

		if (added && needs_file(added))
			sym_proc_map_file(p, added, flags);
	}
	return 0;
}

void sym_proc_clear_maps(struct sym_proc *p)
{
	free(p->maps);
	p->maps = NULL;
	p->nmaps = p->cap = 0;
}

void sym_proc_free(struct sym_proc *p)
{
	size_t i;

	if (!p)
		return;
	sym_proc_clear_maps(p);
	free(p->jit);
	free(p->jit_names);
	sym_hmap_free(&p->symbols);
	sym_hmap_free(&p->pycodes);
	sym_hmap_free(&p->stacks);
	sym_inl_store_free(&p->inl);
	sym_arena_free(&p->arena);
	for (i = 0; i < p->nfiles; i++)
		sym_file_release(p->files[i]); /* its Symbols are gone: idle when no one else */
	free(p->files);
	free(p);
}
