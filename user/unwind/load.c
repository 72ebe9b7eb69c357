/*
 * load.c - unwind tables into the maps of a BPF object that unwinds (unwind.bpf.h): each
 * table's rows copied once into the shared row array (memory-mapped: one memcpy, not a system
 * call per row), each process's executable mappings (/proc/PID/maps) written as one kp_uw_proc
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

struct placed {
	struct kp_uw_table *t; /* a reference held */
	uint32_t off;
};

struct kp_uw_loader {
	int rows_fd, procs_fd, want_fd, counters_fd;
	uint32_t cap, used;
	struct kp_uw_row *rows; /* the row array, mapped */
	size_t map_len;
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
	long page = sysconf(_SC_PAGESIZE);

	if (!l)
		return NULL;
	l->rows_fd = rows_fd;
	l->procs_fd = procs_fd;
	l->want_fd = want_fd;
	l->counters_fd = counters_fd;
	l->cap = cap;
	l->map_len = ((size_t)cap * sizeof(struct kp_uw_row) + (size_t)page - 1) &
		     ~((size_t)page - 1);
	l->rows = mmap(NULL, l->map_len, PROT_READ | PROT_WRITE, MAP_SHARED, rows_fd, 0);
	if (l->rows == MAP_FAILED) {
		int err = errno;

		free(l);
		errno = err;
		return NULL;
	}
	return l;
}

void kp_uw_loader_free(struct kp_uw_loader *l)
{
	size_t i;

	if (!l)
		return;
	for (i = 0; i < l->nplaced; i++)
		kp_uw_put(l->placed[i].t);
	free(l->placed);
	munmap(l->rows, l->map_len);
	free(l);
}

/* the rows of <t> in the array: their first index, or -ENOSPC */
static int64_t place(struct kp_uw_loader *l, struct kp_uw_table *t)
{
	size_t i;

	for (i = 0; i < l->nplaced; i++)
		if (l->placed[i].t == t) {
			kp_uw_put(t); /* the loader holds one reference already */
			return l->placed[i].off;
		}
	if (t->nrows > l->cap - l->used) {
		l->st.tables_full++;
		kp_uw_put(t);
		return -ENOSPC;
	}
	if (kp_grow((void **)&l->placed, &l->capplaced, l->nplaced + 1, sizeof(*l->placed))) {
		kp_uw_put(t);
		return -ENOMEM;
	}
	memcpy(&l->rows[l->used], t->rows, (size_t)t->nrows * sizeof(*t->rows));
	l->placed[l->nplaced].t = t;
	l->placed[l->nplaced++].off = l->used;
	l->used += t->nrows;
	l->st.tables++;
	l->st.rows += t->nrows;
	return l->placed[l->nplaced - 1].off;
}

/* the load bias of a mapping of <t>'s file at <start> from file offset <off> */
static bool bias_of(const struct kp_uw_table *t, uint64_t start, uint64_t off, uint64_t *bias)
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
		uint64_t bias;
		int64_t at;
		char why[128];
		int n = 0, e;

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
		} else if (file[0] != '/') {
			continue; /* anonymous (JIT): frame pointers */
		} else {
			snprintf(fpath, sizeof(fpath), "/proc/%d/map_files/%llx-%llx", pid, start,
				 end);
			t = kp_uw_get(fpath, &e, why, sizeof(why));
		}
		if (!t && file[0] == '/') {
			snprintf(fpath, sizeof(fpath), "/proc/%d/root%s", pid, file);
			t = kp_uw_get(fpath, &e, why, sizeof(why));
		}
		if (!t) {
			l->st.files_without++;
			continue;
		}
		if (!bias_of(t, start, off, &bias)) {
			kp_uw_put(t);
			l->st.files_without++;
			continue;
		}
		at = place(l, t);
		if (at < 0)
			continue;
		m->adj = bias + t->base;
		m->row_off = (__u32)at;
		m->nrows = t->nrows;
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
	for (k = 0; k < KP_UW_CNT_MAX; k++)
		a->counters[k] += b->counters[k];
}
