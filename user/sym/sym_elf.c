/*
 * sym_elf.c - the ELF files behind user addresses: the cache that makes a library mapped by
 * fifty processes parsed once, their load segments, and their DWARF opened on demand.
 *
 * A file is identified by what stat() says of it (device, inode, size, mtime: an inode number
 * reused by a rebuilt binary must not return the old symbols) and by its GNU build-id (the same
 * library in two container layers is one entry). A file stays cached while a process holds it
 * (its mappings, its Symbols); one no process holds any more is kept for the next ones, the
 * most recently released first, within bounds (IDLE_FILES, IDLE_BYTES, or what
 * kp_sym_file_cache_bounds says): an agent resolves the same libraries for hours, but the
 * files of processes long gone do not pile up. Symbols come from .symtab, else
 * from the .symtab of the separate debug file (sym_debugfile.c), else from .dynsym
 * (sym_symtab.c). The debug file is looked for when the file parsed has no .symtab, else only
 * when its lines are first asked for. Files that carry DWARF stay mapped (libelf mmap, no
 * descriptor kept) so that lines can be looked up after the process is gone.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>

#include "core/core.h"
#include "kperf/pcerrc.h"
#include "sym.h"

#define IDLE_FILES 128
#define IDLE_BYTES (64ull << 20)

static struct sym_file *all_files;
static struct sym_hmap by_inode; /* (dev, ino) -> newest file with that identity */
static struct sym_hmap by_build_id; /* (first 16 bytes) -> file */
static unsigned nparsed, ncached, ndwarf;
static bool elf_ready;
/* the files no one holds, most recently released first */
static struct sym_file *idle_head, *idle_tail;
static unsigned nidle;
static uint64_t idle_bytes, nevicted;
static unsigned idle_max = IDLE_FILES;
static uint64_t idle_bytes_max = IDLE_BYTES;

unsigned sym_files_parsed(void)
{
	return nparsed;
}

unsigned sym_files_cached(void)
{
	return ncached;
}

unsigned sym_files_dwarf_opened(void)
{
	return ndwarf;
}

static int elf_init(void)
{
	if (!elf_ready) {
		if (elf_version(EV_CURRENT) == EV_NONE)
			return kp_fail(LIBSYM_ERR_ELFIN_FOMAT_FAILED, -EINVAL,
				       "libelf refused its version: %s", elf_errmsg(-1));
		elf_ready = true;
	}
	return 0;
}

static int64_t mtime_ns(const struct stat *st)
{
	return (int64_t)st->st_mtim.tv_sec * 1000000000LL + st->st_mtim.tv_nsec;
}

static void build_id_key(const uint8_t *id, size_t len, uint64_t *a, uint64_t *b)
{
	uint8_t buf[16] = { 0 };

	memcpy(buf, id, len < 16 ? len : 16);
	memcpy(a, buf, 8);
	memcpy(b, buf + 8, 8);
	*b ^= (uint64_t)len << 56;
}

static struct sym_file *find_by_build_id(const uint8_t *id, size_t len)
{
	struct sym_file *f;
	uint64_t a, b;

	if (!len)
		return NULL;
	build_id_key(id, len, &a, &b);
	f = sym_hmap_get(&by_build_id, a, b);
	if (f && f->build_id_len == len && !memcmp(f->build_id, id, len))
		return f;
	return NULL;
}

/* ---- opening ELF files ---- */

/* An ELF mapped read-only, the descriptor closed: the image stays until elf_end. */
Elf *sym_elf_open(const char *path, struct stat *st, int *errp)
{
	Elf *elf;
	int fd;

	/* a process's /proc/PID/root/.. path resolves inside its root, whatever links it holds */
	fd = kp_open_path(path, O_RDONLY);
	if (fd < 0) {
		*errp = fd;
		return NULL;
	}
	if (fstat(fd, st)) {
		*errp = -errno;
		close(fd);
		return NULL;
	}
	if (!S_ISREG(st->st_mode)) {
		*errp = -EISDIR;
		close(fd);
		return NULL;
	}
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		if (elf)
			elf_end(elf);
		*errp = -ENOEXEC;
		close(fd);
		return NULL;
	}
	/* make sure everything is in memory (mapped, or read when mmap failed) and let go of the
	 * descriptor: FDREAD also marks it done */
	if (elf_cntl(elf, ELF_C_FDREAD)) {
		elf_end(elf);
		*errp = -EIO;
		close(fd);
		return NULL;
	}
	close(fd);
	return elf;
}

size_t sym_elf_build_id(Elf *elf, uint8_t *out, size_t cap)
{
	const void *id;
	ssize_t n = dwelf_elf_gnu_build_id(elf, &id);

	if (n <= 0 || (size_t)n > cap)
		return 0;
	memcpy(out, id, (size_t)n);
	return (size_t)n;
}

static int read_segments(Elf *elf, struct sym_file *f)
{
	size_t i, n;

	if (elf_getphdrnum(elf, &n))
		return -EINVAL;
	f->segs = calloc(n ? n : 1, sizeof(*f->segs));
	if (!f->segs)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph))
			return -EINVAL;
		if (ph.p_type != PT_LOAD)
			continue;
		f->segs[f->nsegs].vaddr = ph.p_vaddr;
		f->segs[f->nsegs].memsz = ph.p_memsz;
		f->segs[f->nsegs].offset = ph.p_offset;
		f->segs[f->nsegs].filesz = ph.p_filesz;
		f->segs[f->nsegs].exec = ph.p_flags & PF_X;
		f->nsegs++;
	}
	return 0;
}

static void file_free(struct sym_file *f)
{
	if (!f)
		return;
	sym_dwarf_close(f);
	if (f->dw_elf)
		elf_end(f->dw_elf);
	sym_dwarf_image_free(f->dw_image, f->dw_image_size);
	sym_symtab_free(f);
	free(f->segs);
	free(f);
}

/* ---- holders, the idle list, eviction ---- */

/* what <f> holds in memory, about: its symbols and names (the DWARF indexes grow with the
 * lines asked for and are left out), an inflated debug image */
static size_t file_bytes(const struct sym_file *f)
{
	return sizeof(*f) + f->nsyms * (sizeof(*f->syms) + sizeof(char *) + 1) + f->names_len +
	       f->nalias_names * sizeof(*f->alias_names) + f->nsegs * sizeof(*f->segs) +
	       f->dw_image_size;
}

static void idle_unlink(struct sym_file *f)
{
	if (!f->idle)
		return;
	if (f->idle_prev)
		f->idle_prev->idle_next = f->idle_next;
	else
		idle_head = f->idle_next;
	if (f->idle_next)
		f->idle_next->idle_prev = f->idle_prev;
	else
		idle_tail = f->idle_prev;
	f->idle_prev = f->idle_next = NULL;
	f->idle = false;
	nidle--;
	idle_bytes -= f->bytes;
}

static void idle_push(struct sym_file *f)
{
	if (f->idle || f->users || f->kept)
		return;
	f->bytes = file_bytes(f); /* fixed while idle: what idle_unlink takes back */
	f->idle = true;
	f->idle_prev = NULL;
	f->idle_next = idle_head;
	if (idle_head)
		idle_head->idle_prev = f;
	else
		idle_tail = f;
	idle_head = f;
	nidle++;
	idle_bytes += f->bytes;
}

void sym_file_hold(struct sym_file *f)
{
	if (!f->users++)
		idle_unlink(f);
}

void sym_file_release(struct sym_file *f)
{
	if (f->users && !--f->users)
		idle_push(f);
}

void sym_file_keep(struct sym_file *f)
{
	f->kept = true;
	idle_unlink(f);
}

static bool is_file(void *val, void *ctx)
{
	return val == ctx;
}

static void file_free(struct sym_file *f);

static void evict(struct sym_file *f)
{
	struct sym_file **pp;
	uint64_t a, b;

	idle_unlink(f);
	sym_hmap_filter(&by_inode, is_file, f); /* every identity it had (aliases too) */
	if (f->build_id_len) {
		build_id_key(f->build_id, f->build_id_len, &a, &b);
		if (sym_hmap_get(&by_build_id, a, b) == f)
			sym_hmap_del(&by_build_id, a, b);
	}
	for (pp = &all_files; *pp; pp = &(*pp)->next)
		if (*pp == f) {
			*pp = f->next;
			break;
		}
	ncached--;
	nevicted++;
	file_free(f);
}

void sym_files_trim(void)
{
	while (idle_tail && (nidle > idle_max || idle_bytes > idle_bytes_max))
		evict(idle_tail);
}

void sym_files_set_bounds(unsigned files_max, uint64_t bytes_max)
{
	idle_max = files_max ? files_max : IDLE_FILES;
	idle_bytes_max = bytes_max ? bytes_max : IDLE_BYTES;
}

void sym_files_idle_stats(unsigned *n, uint64_t *bytes, uint64_t *evicted)
{
	*n = nidle;
	*bytes = idle_bytes;
	*evicted = nevicted;
}

static int cache_add(struct sym_file *f)
{
	uint64_t a, b;
	int err = 0;

	if (!f->is_vdso)
		err = sym_hmap_put(&by_inode, (uint64_t)f->dev, (uint64_t)f->ino, f);
	if (!err && f->build_id_len) {
		build_id_key(f->build_id, f->build_id_len, &a, &b);
		err = sym_hmap_put(&by_build_id, a, b, f);
	}
	if (err)
		return err;
	f->next = all_files;
	all_files = f;
	ncached++;
	idle_push(f); /* until a process holds it */
	return 0;
}

/* What finds the debug file later: the .gnu_debuglink of <elf> (name and CRC), the process
 * whose root is searched first. */
static int remember_debuglink(struct sym_file *f, Elf *elf, const struct sym_file_ref *ref)
{
	uint32_t crc = 0;
	const char *link = dwelf_elf_gnu_debuglink(elf, &crc);

	f->debug_pid = ref->pid;
	if (link && *link) {
		f->debuglink = sym_intern(link);
		if (!f->debuglink)
			return -ENOMEM;
		f->debuglink_crc = crc;
	}
	return 0;
}

/* Parse <elf> (the file at ref) into a new cached file. Consumes elf. */
static int parse_new(Elf *elf, const struct stat *st, const struct sym_file_ref *ref,
		     struct sym_file **out)
{
	struct sym_elf_facts mf, df = { 0 };
	struct sym_file *f;
	Elf *debug_elf = NULL;
	GElf_Ehdr eh;
	int err;

	f = calloc(1, sizeof(*f));
	if (!f) {
		elf_end(elf);
		return -ENOMEM;
	}
	f->dev = st->st_dev;
	f->ino = st->st_ino;
	f->size = st->st_size;
	f->mtime_ns = mtime_ns(st);
	f->path = sym_intern(ref->path);
	if (!f->path) {
		err = -ENOMEM;
		goto fail;
	}
	if (!gelf_getehdr(elf, &eh) || (eh.e_type != ET_EXEC && eh.e_type != ET_DYN)) {
		err = kp_fail(LIBSYM_ERR_ELFIN_FOMAT_FAILED, -ENOEXEC,
			      "%s is not an ELF executable or shared library%s%s", ref->path,
			      elf_errno() ? ": " : "", elf_errno() ? elf_errmsg(-1) : "");
		goto fail;
	}
	f->e_type = eh.e_type;
	f->build_id_len = sym_elf_build_id(elf, f->build_id, sizeof(f->build_id));
	err = read_segments(elf, f);
	if (!err)
		err = sym_elf_scan(elf, &mf);
	if (err) {
		if (err == -EINVAL)
			err = kp_fail(LIBSYM_ERR_ELFIN_FOMAT_FAILED, -ENOEXEC,
				      "%s is a malformed ELF file: %s", ref->path, elf_errmsg(-1));
		goto fail;
	}
	err = remember_debuglink(f, elf, ref);
	if (err)
		goto fail;
	/* the debug file now only when the names are in it; else at the first line lookup */
	if (!mf.symtab) {
		f->debug_tried = true;
		debug_elf = sym_debug_find(f);
		if (debug_elf && sym_elf_scan(debug_elf, &df)) {
			elf_end(debug_elf);
			debug_elf = NULL;
			f->debug_path = NULL;
		}
	}
	err = sym_symtab_read(f, elf, &mf, debug_elf, &df);
	if (err)
		goto fail;
	/* keep mapped the ELF that has the DWARF */
	if (mf.has_debug_info) {
		f->dw_elf = elf;
		elf = NULL;
		f->debug_tried = true;
	} else if (debug_elf && df.has_debug_info) {
		f->dw_elf = debug_elf;
		debug_elf = NULL;
	}
	f->has_dwarf = f->dw_elf != NULL;
	if (elf)
		elf_end(elf);
	if (debug_elf)
		elf_end(debug_elf);
	err = cache_add(f);
	if (err) {
		file_free(f);
		return err;
	}
	nparsed++;
	*out = f;
	return 0;
fail:
	if (debug_elf)
		elf_end(debug_elf);
	if (elf)
		elf_end(elf);
	file_free(f);
	return err;
}

int sym_file_get(const struct sym_file_ref *ref, unsigned flags, struct sym_file **out)
{
	struct sym_file *f;
	struct stat st;
	uint8_t id[64];
	size_t idlen;
	Elf *elf;
	int err;

	*out = NULL;
	err = elf_init();
	if (err)
		return err;
	/* fast path: a stat, no open, when the file is known */
	if (ref->st)
		st = *ref->st;
	if (ref->st || kp_stat_path(ref->open_path, &st) == 0) {
		f = sym_hmap_get(&by_inode, (uint64_t)st.st_dev, (uint64_t)st.st_ino);
		if (f && f->size == st.st_size && f->mtime_ns == mtime_ns(&st))
			goto have;
	}
	elf = sym_elf_open(ref->open_path, &st, &err);
	if (!elf) {
		if (err == -EISDIR)
			return kp_fail(LIBSYM_ERR_FILE_NOT_RGE, err, "%s is not a regular file",
				       ref->path);
		if (err == -ENOEXEC)
			return kp_fail(LIBSYM_ERR_ELFIN_FOMAT_FAILED, err,
				       "%s is not an ELF file (or is truncated): %s", ref->path,
				       elf_errmsg(-1));
		return kp_fail(LIBSYM_ERR_OPEN_FILE_FAILED, err, "cannot open %s%s%s: %s",
			       ref->path, strcmp(ref->path, ref->open_path) ? " as " : "",
			       strcmp(ref->path, ref->open_path) ? ref->open_path : "",
			       strerror(-err));
	}
	f = sym_hmap_get(&by_inode, (uint64_t)st.st_dev, (uint64_t)st.st_ino);
	if (f && f->size == st.st_size && f->mtime_ns == mtime_ns(&st)) {
		elf_end(elf);
		goto have;
	}
	idlen = sym_elf_build_id(elf, id, sizeof(id));
	f = find_by_build_id(id, idlen);
	if (f) {
		/* the same build elsewhere (another container layer, a copy): an alias */
		elf_end(elf);
		err = sym_hmap_put(&by_inode, (uint64_t)st.st_dev, (uint64_t)st.st_ino, f);
		if (err)
			return err;
		goto have;
	}
	err = parse_new(elf, &st, ref, &f);
	if (err)
		return err;
have:
	(void)flags;
	*out = f;
	return 0;
}

int sym_file_from_memory(const void *image, size_t size, const char *name, struct sym_file **out)
{
	struct sym_elf_facts mf;
	struct sym_file *f;
	uint8_t id[64];
	size_t idlen;
	char *copy;
	Elf *elf;
	GElf_Ehdr eh;
	int err;

	*out = NULL;
	err = elf_init();
	if (err)
		return err;
	copy = malloc(size);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, image, size);
	elf = elf_memory(copy, size);
	if (!elf || elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh)) {
		if (elf)
			elf_end(elf);
		free(copy);
		return kp_fail(LIBSYM_ERR_ELFIN_FOMAT_FAILED, -ENOEXEC,
			       "the %s image is not a valid ELF", name);
	}
	idlen = sym_elf_build_id(elf, id, sizeof(id));
	f = find_by_build_id(id, idlen);
	if (f && f->is_vdso) {
		elf_end(elf);
		free(copy);
		*out = f;
		return 0;
	}
	f = calloc(1, sizeof(*f));
	if (!f) {
		elf_end(elf);
		free(copy);
		return -ENOMEM;
	}
	f->is_vdso = true;
	f->debug_tried = true;
	f->path = sym_intern(name);
	f->e_type = eh.e_type;
	f->build_id_len = idlen;
	memcpy(f->build_id, id, idlen);
	err = f->path ? read_segments(elf, f) : -ENOMEM;
	if (!err)
		err = sym_elf_scan(elf, &mf);
	if (!err)
		err = sym_symtab_read(f, elf, &mf, NULL, NULL);
	elf_end(elf);
	free(copy);
	if (!err)
		err = cache_add(f);
	if (err) {
		file_free(f);
		if (err == -EINVAL)
			return kp_fail(LIBSYM_ERR_ELFIN_FOMAT_FAILED, -ENOEXEC,
				       "the %s image is a malformed ELF", name);
		return err;
	}
	nparsed++;
	*out = f;
	return 0;
}

uint64_t sym_file_off_to_vaddr(const struct sym_file *f, uint64_t off)
{
	unsigned i;

	for (i = 0; i < f->nsegs; i++) {
		const struct sym_seg *s = &f->segs[i];

		if (off >= s->offset && off - s->offset < s->filesz)
			return s->vaddr + (off - s->offset);
	}
	/* not backed by the file (bss, or an odd mapping): assume the usual layout, where the
	 * first segment maps offset 0 and the address grows with the offset */
	if (f->nsegs)
		return f->segs[0].vaddr - f->segs[0].offset + off;
	return off;
}

bool sym_file_may_have_dwarf(const struct sym_file *f)
{
	return f->has_dwarf || !f->debug_tried;
}

/* The file's own symbols were enough: its debug file is looked for now, when lines are. */
static void find_debug_late(struct sym_file *f)
{
	struct sym_elf_facts df;
	Elf *debug_elf;

	f->debug_tried = true;
	debug_elf = sym_debug_find(f);
	if (!debug_elf)
		return;
	if (sym_elf_scan(debug_elf, &df) || !df.has_debug_info) {
		elf_end(debug_elf);
		f->debug_path = NULL;
		return;
	}
	f->dw_elf = debug_elf;
	f->has_dwarf = true;
}

int sym_file_dwarf(struct sym_file *f)
{
	int err;

	if (f->dwarf_tried)
		return f->dw ? 0 : -ENOENT;
	f->dwarf_tried = true;
	if (!f->dw_elf && !f->debug_tried)
		find_debug_late(f);
	if (!f->dw_elf)
		return -ENOENT;
	err = sym_dwarf_open(f);
	if (err)
		return err;
	ndwarf++;
	return 0;
}

void sym_files_free(void)
{
	struct sym_file *f = all_files, *n;

	for (; f; f = n) {
		n = f->next;
		file_free(f);
	}
	all_files = NULL;
	idle_head = idle_tail = NULL;
	nidle = 0;
	idle_bytes = nevicted = 0;
	sym_hmap_free(&by_inode);
	sym_hmap_free(&by_build_id);
	nparsed = ncached = ndwarf = 0;
	sym_debug_dirs_free();
}
