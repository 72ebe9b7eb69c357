/*
 * load.c - unwind tables into the maps of a BPF object that unwinds (unwind.bpf.h): each
 * table's rows copied once into the shared row array (memory-mapped: one memcpy, not a system
 * call per row; only the pages of that copy are mapped, and only while it is made: a mapping of
 * a BPF array is resident whole, and the array is 16 MiB), each process's executable mappings (/proc/PID/maps) written as one kp_uw_proc
 * entry that leads a pc to its table's rows. A file is opened through /proc/PID/map_files
 * (the very file mapped, even deleted or in another mount namespace), else through
 * /proc/PID/root. The vdso's table comes from its image, read in the process's memory (one
 * compile per kernel: its build-id). The BPF side asks for processes it has no entry for, or whose pc fell in no
 * known mapping (kp_uw_want): kp_uw_loader_poll loads those again.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "core/core.h"
#include "unwind.h"

/* a table whose rows are in the array: what its mappings need of it (the table itself is
 * given back to the cache once copied: a profile of every process does not hold them all) */
struct placed {
	struct kp_uw_key key;
	uint64_t base;
	uint32_t nrows, off;
	struct {
		uint64_t vaddr, off, filesz;
	} segs[8];
	unsigned nsegs;
};

struct kp_uw_loader {
	int rows_fd, procs_fd, want_fd, counters_fd;
	uint32_t cap, used;
	size_t page;
	struct placed *placed;
	size_t nplaced, capplaced;
	struct kp_uw_load_stats st;
	void (*on_pid)(void *ctx, int pid);
	void *on_pid_ctx;
};

void kp_uw_loader_on_pid(struct kp_uw_loader *l, void (*fn)(void *ctx, int pid), void *ctx)
{
	l->on_pid = fn;
	l->on_pid_ctx = ctx;
}

struct kp_uw_loader *kp_uw_loader_new(int rows_fd, uint32_t cap, int procs_fd, int want_fd,
				      int counters_fd)
{
	struct kp_uw_loader *l = calloc(1, sizeof(*l));
	void *probe;

	if (!l)
		return NULL;
	l->rows_fd = rows_fd;
	l->procs_fd = procs_fd;
	l->want_fd = want_fd;
	l->counters_fd = counters_fd;
	l->cap = cap;
	l->page = (size_t)sysconf(_SC_PAGESIZE);
	/* the array must be mappable (BPF_F_MMAPABLE): said now, not at the first table */
	probe = mmap(NULL, l->page, PROT_READ | PROT_WRITE, MAP_SHARED, rows_fd, 0);
	if (probe == MAP_FAILED) {
		int err = errno;

		free(l);
		errno = err;
		return NULL;
	}
	munmap(probe, l->page);
	return l;
}

/* copy <n> rows into the array from row <at>: the pages they fall in mapped for the copy */
static int write_rows(struct kp_uw_loader *l, uint32_t at, const struct kp_uw_row *rows, uint32_t n)
{
	size_t from = (size_t)at * sizeof(*rows), len = (size_t)n * sizeof(*rows);
	size_t off = from & ~(l->page - 1),
	       maplen = (from + len - off + l->page - 1) & ~(l->page - 1);
	char *m;

	if (!n)
		return 0;
	m = mmap(NULL, maplen, PROT_READ | PROT_WRITE, MAP_SHARED, l->rows_fd, (off_t)off);
	if (m == MAP_FAILED)
		return -errno;
	memcpy(m + (from - off), rows, len);
	munmap(m, maplen);
	return 0;
}

void kp_uw_loader_free(struct kp_uw_loader *l)
{
	if (!l)
		return;
	free(l->placed);
	free(l);
}

static const struct placed *find_placed(const struct kp_uw_loader *l, const struct kp_uw_key *k)
{
	size_t i;

	for (i = 0; i < l->nplaced; i++)
		if (kp_uw_key_eq(&l->placed[i].key, k))
			return &l->placed[i];
	return NULL;
}

/* <t>'s rows in the array (once: a table placed before is found by its key); the reference
 * is given back. NULL when it does not fit (-ENOSPC in *errp), or on an error. */
static const struct placed *place(struct kp_uw_loader *l, struct kp_uw_table *t, int *errp)
{
	const struct placed *found;
	struct kp_uw_key key;
	struct placed *pl;
	unsigned i;

	kp_uw_key_of_table(t, &key);
	found = find_placed(l, &key);
	*errp = 0;
	if (found) {
		kp_uw_put(t);
		return found;
	}
	if (t->nrows > l->cap - l->used) {
		l->st.tables_full++;
		*errp = -ENOSPC;
	} else if (kp_grow((void **)&l->placed, &l->capplaced, l->nplaced + 1,
			   sizeof(*l->placed))) {
		*errp = -ENOMEM;
	} else {
		*errp = write_rows(l, l->used, t->rows, t->nrows);
	}
	if (*errp) {
		kp_uw_put(t);
		return NULL;
	}
	pl = &l->placed[l->nplaced++];
	pl->key = key;
	pl->base = t->base;
	pl->nrows = t->nrows;
	pl->off = l->used;
	pl->nsegs = t->nsegs < 8 ? t->nsegs : 8;
	for (i = 0; i < pl->nsegs; i++) {
		pl->segs[i].vaddr = t->segs[i].vaddr;
		pl->segs[i].off = t->segs[i].off;
		pl->segs[i].filesz = t->segs[i].filesz;
	}
	l->used += t->nrows;
	l->st.tables++;
	l->st.rows += t->nrows;
	kp_uw_put(t);
	return pl;
}

/* the table of the file at <path> in the array: found by its key when placed already (no
 * compile, even when the cache has let it go since), else had from the cache and placed */
static const struct placed *get_placed(struct kp_uw_loader *l, const char *path, int *errp,
				       char *why, size_t whylen)
{
	const struct placed *pl;
	struct kp_uw_table *t;
	struct kp_uw_key k;

	if (kp_uw_key_of(path, &k) == 0 && (pl = find_placed(l, &k))) {
		*errp = 0;
		return pl;
	}
	t = kp_uw_get(path, errp, why, whylen);
	return t ? place(l, t, errp) : NULL;
}

/* the load bias of a mapping of <t>'s file at <start> from file offset <off> */
static bool bias_of(const struct placed *t, uint64_t start, uint64_t off, uint64_t *bias)
{
	unsigned i;

	for (i = 0; i < t->nsegs; i++)
		if (off >= t->segs[i].off && off < t->segs[i].off + t->segs[i].filesz) {
			*bias = start - (off - t->segs[i].off) - t->segs[i].vaddr;
			return true;
		}
	return false;
}

#define VDSO_MAX (1 << 20)

/* the table of the vdso mapped at [start, end) in process <pid>, from its image there */
static struct kp_uw_table *vdso_table(int pid, uint64_t start, uint64_t end, int *errp)
{
	char path[64], why[128];
	struct kp_uw_table *t = NULL;
	size_t len = end - start;
	void *img;
	ssize_t n;
	int fd;

	*errp = -EINVAL;
	if (end <= start || len > VDSO_MAX)
		return NULL;
	snprintf(path, sizeof(path), "/proc/%d/mem", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		*errp = -errno;
		return NULL;
	}
	img = malloc(len);
	if (img) {
		n = pread(fd, img, len, (off_t)start);
		if (n == (ssize_t)len)
			t = kp_uw_get_image(img, len, errp, why, sizeof(why));
		else
			*errp = n < 0 ? -errno : -EIO;
		free(img);
	}
	close(fd);
	return t;
}

int kp_uw_loader_add_pid(struct kp_uw_loader *l, int pid)
{
	char path[64], *text, *line, *save = NULL;
	struct kp_uw_proc *proc;
	__u32 key = (__u32)pid;
	int err;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	err = kp_read_file(path, &text, NULL);
	if (err)
		return err;
	proc = calloc(1, sizeof(*proc));
	if (!proc) {
		free(text);
		return -ENOMEM;
	}
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		unsigned long long start, end, off;
		char perms[8], file[4096] = "", fpath[4200];
		struct kp_uw_map *m;
		struct kp_uw_table *t;
		const struct placed *pl = NULL;
		uint64_t bias;
		char why[128];
		int n = 0, e = 0;

		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %n", &start, &end, perms, &off, &n) <
		    4)
			continue;
		if (perms[2] != 'x')
			continue;
		if (n > 0)
			snprintf(file, sizeof(file), "%s", line + n);
		if (proc->n >= KP_UW_MAX_MAPS) {
			l->st.maps_dropped++;
			break;
		}
		m = &proc->m[proc->n++];
		m->start = start;
		m->end = end;
		if (!strcmp(file, "[vdso]")) {
			t = vdso_table(pid, start, end, &e);
			off = 0; /* the image maps from its start */
			if (t)
				pl = place(l, t, &e);
		} else if (file[0] != '/') {
			continue; /* anonymous (JIT): frame pointers */
		} else {
			snprintf(fpath, sizeof(fpath), "/proc/%d/map_files/%llx-%llx", pid, start,
				 end);
			pl = get_placed(l, fpath, &e, why, sizeof(why));
			if (!pl && e != -ENOSPC) {
				snprintf(fpath, sizeof(fpath), "/proc/%d/root%s", pid, file);
				pl = get_placed(l, fpath, &e, why, sizeof(why));
			}
		}
		if (!pl) {
			if (e != -ENOSPC) /* no room: counted as tables_full */
				l->st.files_without++;
			continue;
		}
		if (!bias_of(pl, start, off, &bias)) {
			l->st.files_without++;
			continue;
		}
		m->adj = bias + pl->base;
		m->row_off = pl->off;
		m->nrows = pl->nrows;
	}
	free(text);
	err = bpf_map_update_elem(l->procs_fd, &key, proc, BPF_ANY) ? -errno : 0;
	free(proc);
	if (!err)
		l->st.pids++;
	if (!err && l->on_pid)
		l->on_pid(l->on_pid_ctx, pid);
	return err;
}

bool kp_uw_loader_reclaim(struct kp_uw_loader *l, uint32_t used_max)
{
	__u32 *keys = NULL, key, last, *prev = NULL;
	size_t n = 0, cap = 0, i;

	if (l->used <= used_max)
		return false;
	while (bpf_map_get_next_key(l->procs_fd, prev, &key) == 0) {
		if (kp_grow((void **)&keys, &cap, n + 1, sizeof(*keys)))
			break;
		keys[n++] = key;
		last = key;
		prev = &last;
	}
	for (i = 0; i < n; i++)
		bpf_map_delete_elem(l->procs_fd, &keys[i]);
	free(keys);
	l->nplaced = 0;
	l->used = 0;
	l->st.tables = l->st.rows = 0; /* what the array holds now */
	l->st.reclaimed++;
	return true;
}

void kp_uw_loader_forget(struct kp_uw_loader *l, int pid)
{
	__u32 key = (__u32)pid;

	bpf_map_delete_elem(l->procs_fd, &key);
}

int kp_uw_loader_poll(struct kp_uw_loader *l)
{
	__u32 key, next, *prev = NULL;
	int loaded = 0;

	while (!bpf_map_get_next_key(l->want_fd, prev, &next)) {
		key = next;
		bpf_map_delete_elem(l->want_fd, &key);
		/* a process gone since it asked: nothing to load */
		if (kp_uw_loader_add_pid(l, (int)key) == 0)
			loaded++;
		prev = NULL; /* deleted: start over */
	}
	return loaded;
}

void kp_uw_loader_stats(const struct kp_uw_loader *l, struct kp_uw_load_stats *s)
{
	__u64 *vals;
	int ncpu = libbpf_num_possible_cpus(), c;
	__u32 k;

	*s = l->st;
	s->rows_cap = l->cap;
	if (ncpu <= 0 || !(vals = calloc((size_t)ncpu, sizeof(*vals))))
		return;
	for (k = 0; k < KP_UW_CNT_MAX; k++) {
		if (bpf_map_lookup_elem(l->counters_fd, &k, vals))
			continue;
		for (c = 0; c < ncpu; c++)
			s->counters[k] += vals[c];
	}
	free(vals);
}

void kp_uw_load_stats_add(struct kp_uw_load_stats *a, const struct kp_uw_load_stats *b)
{
	unsigned k;

	a->tables += b->tables;
	a->rows += b->rows;
	a->rows_cap += b->rows_cap;
	a->tables_full += b->tables_full;
	a->pids += b->pids;
	a->maps_dropped += b->maps_dropped;
	a->files_without += b->files_without;
	a->reclaimed += b->reclaimed;
	for (k = 0; k < KP_UW_CNT_MAX; k++)
		a->counters[k] += b->counters[k];
}
