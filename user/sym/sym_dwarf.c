/*
 * sym_dwarf.c - opening the DWARF of a file (libdw), the address index of its units, and the
 * source line of an address.
 *
 * Opening is the fixed cost a short profile pays for every library with debug information:
 * libdw inflates every compressed .debug_* section at dwarf_begin, with zlib. Debian's debug
 * files are compressed (libc's: 10 MB of DWARF in 4 MB), so the sections lines and inline
 * frames need are inflated here with libdeflate (about three times faster) into one ELF image
 * in memory that libdw then reads without inflating anything; location lists, macros, frame
 * tables and name indexes are left out. Files whose sections are not compressed are read in
 * place.
 *
 * The units are indexed by address from .debug_aranges where the producer wrote it (gcc does,
 * clang does not): a unit missing from it has its DW_AT_ranges read instead, so only those
 * DIEs are read at open. A lookup is a binary search for the unit and libdw's own search in
 * that unit's line table, which libdw parses the first time an address falls in the unit.
 */
#include <errno.h>
#include <gelf.h>
#include <libdeflate.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <elfutils/libdw.h>
#include <dwarf.h>

#include "core/core.h"
#include "kperf/pcerrc.h"
#include "sym.h"

#define BACKWARD_SCAN 16 /* overlapping unit ranges are rare: look at a few before */
#define HUGE_2M ((size_t)2 << 20)

static bool slow_inflate;

void sym_dwarf_set_slow_inflate(bool on)
{
	slow_inflate = on;
}

/* ---- the image of the debug sections ---- */

/* sections libdw reads for lines, scopes and names; the rest of .debug_* is left out */
static bool wanted(const char *name)
{
	static const char *const skip[] = {
		".debug_loc",	       ".debug_loclists", ".debug_macro",    ".debug_macinfo",
		".debug_frame",	       ".debug_pubnames", ".debug_pubtypes", ".debug_gnu_pubnames",
		".debug_gnu_pubtypes", ".debug_names",	  ".debug_cu_index", ".debug_tu_index",
	};
	size_t i;

	if (strncmp(name, ".debug_", 7))
		return false;
	for (i = 0; i < sizeof(skip) / sizeof(skip[0]); i++)
		if (!strcmp(name, skip[i]))
			return false;
	return true;
}

struct img_scn {
	Elf_Scn *scn;
	const char *name;
	const unsigned char *data; /* raw bytes (after the Chdr when compressed) */
	size_t len, size; /* raw length, size once inflated */
	bool compressed;
};

/* map the pages of <len> bytes at <p> of the file now, in one call (see image_alloc) */
static void prefault(const void *p, size_t len)
{
	uintptr_t a = (uintptr_t)p & ~(uintptr_t)4095, e = (uintptr_t)p + len;

	madvise((void *)a, e - a, MADV_POPULATE_READ);
}

static int inflate_into(struct libdeflate_decompressor *d, const struct img_scn *s, void *out)
{
	size_t got = 0;

	prefault(s->data, s->len);
	if (libdeflate_zlib_decompress(d, s->data, s->len, out, s->size, &got) !=
		    LIBDEFLATE_SUCCESS ||
	    got != s->size)
		return -EINVAL;
	return 0;
}

#define PARALLEL_MIN ((size_t)1 << 20) /* a thread for a section that inflates to 1 MB or more */

struct inflate_job {
	const struct img_scn *s;
	void *out;
	int err;
};

static void *inflate_job(void *arg)
{
	struct inflate_job *j = arg;
	struct libdeflate_decompressor *d = libdeflate_alloc_decompressor();

	j->err = d ? inflate_into(d, j->s, j->out) : -ENOMEM;
	if (d)
		libdeflate_free_decompressor(d);
	return NULL;
}

/* The slow path, for comparison: libelf inflates with zlib, as dwarf_begin would. */
static int inflate_zlib(struct img_scn *s, void *out)
{
	Elf_Data *d;

	if (elf_compress(s->scn, 0, 0) < 0)
		return -EINVAL;
	d = elf_getdata(s->scn, NULL);
	if (!d || d->d_size != s->size)
		return -EINVAL;
	memcpy(out, d->d_buf, s->size);
	return 0;
}

/* The wanted debug sections of <elf>, when at least one is zlib-compressed and the file is a
 * native 64-bit ELF this code can lay out; else 0 sections (read the file in place). */
static int collect(Elf *elf, struct img_scn **out, size_t *nout)
{
	struct img_scn *v = NULL;
	size_t n = 0, cap = 0, shstrndx;
	bool any_compressed = false;
	Elf_Scn *scn = NULL;
	GElf_Ehdr eh;

	*out = NULL;
	*nout = 0;
	if (!gelf_getehdr(elf, &eh) || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_ident[EI_DATA] !=
		    (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? ELFDATA2LSB : ELFDATA2MSB) ||
	    elf_getshdrstrndx(elf, &shstrndx))
		return 0;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *raw;
		const char *name;
		struct img_scn *s;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS)
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!name)
			continue;
		/* dwz's shared file is found next to the debug file: leave such files to libdw */
		if (!strcmp(name, ".gnu_debugaltlink") || !strncmp(name, ".zdebug_", 8))
			goto in_place;
		if (!wanted(name))
			continue;
		raw = elf_rawdata(scn, NULL);
		if (!raw || (!raw->d_buf && raw->d_size))
			continue;
		if (kp_grow((void **)&v, &cap, n + 1, sizeof(*v))) {
			free(v);
			return -ENOMEM;
		}
		s = &v[n++];
		s->scn = scn;
		s->name = name;
		s->data = raw->d_buf;
		s->len = s->size = raw->d_size;
		s->compressed = sh.sh_flags & SHF_COMPRESSED;
		if (s->compressed) {
			Elf64_Chdr ch;

			if (raw->d_size < sizeof(ch))
				goto in_place;
			memcpy(&ch, raw->d_buf, sizeof(ch));
			if (ch.ch_type != ELFCOMPRESS_ZLIB)
				goto in_place; /* zstd...: libelf knows what it supports */
			s->data += sizeof(ch);
			s->len -= sizeof(ch);
			s->size = ch.ch_size;
			/* deflate cannot expand more than about 1032:1: a larger claim is a lie */
			if (ch.ch_size / 1032 > s->len + 64 || ch.ch_size > ((size_t)1 << 40))
				goto in_place;
			any_compressed = true;
		}
	}
	if (!any_compressed)
		goto in_place;
	*out = v;
	*nout = n;
	return 0;
in_place:
	free(v);
	return 0;
}

/* Memory for an image of several MB, written once: in huge pages where the kernel has them
 * (a fault per 2 MB instead of per 4 KB is a good part of the cost), zeroed by the kernel. */
static void *image_alloc(size_t size)
{
	size_t len = (size + HUGE_2M - 1) & ~(HUGE_2M - 1);
	char *p;

	if (size < HUGE_2M)
		return calloc(1, size);
	p = mmap(NULL, len + HUGE_2M, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	/* keep a 2 MB-aligned window of len bytes */
	{
		char *a = (char *)(((uintptr_t)p + HUGE_2M - 1) & ~(uintptr_t)(HUGE_2M - 1));

		if (a > p)
			munmap(p, (size_t)(a - p));
		munmap(a + len, (size_t)(p + HUGE_2M - a));
		p = a;
	}
	madvise(p, len, MADV_HUGEPAGE); /* a hint: without THP, 4 KB pages */
	/* map it all now, in one call: a page fault per 4 KB page costs more (on a VM, much
	 * more); kernels before 5.14 refuse the advice and fault as before */
	madvise(p, len, MADV_POPULATE_WRITE);
	return p;
}

void sym_dwarf_image_free(void *image, size_t size)
{
	if (!image)
		return;
	if (size < HUGE_2M)
		free(image);
	else
		munmap(image, (size + HUGE_2M - 1) & ~(HUGE_2M - 1));
}

/*
 * Lay the sections out as a minimal ELF: header, section data (8-aligned), the section name
 * table, the section headers. Only what libdw looks at is filled: class, byte order, machine,
 * type, and each section's name, type, offset and size.
 */
static int build_image(Elf *src, struct img_scn *v, size_t n, void **image, size_t *size, Elf **out)
{
	struct libdeflate_decompressor *dd = NULL;
	size_t i, off, names_len = 1, names_off, sh_off, total;
	Elf64_Ehdr *eh;
	Elf64_Shdr *sh;
	GElf_Ehdr seh;
	char *img, *names;
	int err = 0;
	struct inflate_job job = { 0 };
	pthread_t tid;
	bool started = false;

	if (!gelf_getehdr(src, &seh))
		return -EINVAL;
	off = sizeof(Elf64_Ehdr);
	for (i = 0; i < n; i++) {
		off = (off + 7) & ~(size_t)7;
		if (v[i].size > SIZE_MAX / 2 - off)
			return -EFBIG;
		off += v[i].size;
		names_len += strlen(v[i].name) + 1;
	}
	names_len += sizeof(".shstrtab");
	names_off = off;
	sh_off = (names_off + names_len + 7) & ~(size_t)7;
	total = sh_off + (n + 2) * sizeof(Elf64_Shdr);
	img = image_alloc(total);
	if (!img)
		return -ENOMEM;
	if (!slow_inflate) {
		dd = libdeflate_alloc_decompressor();
		if (!dd) {
			sym_dwarf_image_free(img, total);
			return -ENOMEM;
		}
	}
	eh = (Elf64_Ehdr *)img;
	memcpy(eh->e_ident, seh.e_ident, EI_NIDENT);
	eh->e_type = seh.e_type;
	eh->e_machine = seh.e_machine;
	eh->e_version = EV_CURRENT;
	eh->e_ehsize = sizeof(Elf64_Ehdr);
	eh->e_shoff = sh_off;
	eh->e_shentsize = sizeof(Elf64_Shdr);
	eh->e_shnum = (Elf64_Half)(n + 2);
	eh->e_shstrndx = (Elf64_Half)(n + 1);
	sh = (Elf64_Shdr *)(img + sh_off);
	names = img + names_off;
	off = sizeof(Elf64_Ehdr);
	names_len = 1;
	/* the largest compressed section (.debug_info) inflates on a thread of its own while
	 * this one inflates the others: the wall time of the two, not their sum */
	if (dd) {
		size_t o = sizeof(Elf64_Ehdr), best = 0;

		for (i = 0; i < n; i++) {
			o = (o + 7) & ~(size_t)7;
			if (v[i].compressed && v[i].size > best && v[i].size >= PARALLEL_MIN) {
				best = v[i].size;
				job.s = &v[i];
				job.out = img + o;
			}
			o += v[i].size;
		}
		if (job.s && pthread_create(&tid, NULL, inflate_job, &job) == 0)
			started = true;
		else
			job.s = NULL;
	}
	for (i = 0; i < n && !err; i++) {
		off = (off + 7) & ~(size_t)7;
		if (!v[i].compressed)
			memcpy(img + off, v[i].data, v[i].size);
		else if (&v[i] != job.s)
			err = dd ? inflate_into(dd, &v[i], img + off) :
				   inflate_zlib(&v[i], img + off);
		sh[i + 1].sh_name = (Elf64_Word)names_len;
		sh[i + 1].sh_type = SHT_PROGBITS;
		sh[i + 1].sh_offset = off;
		sh[i + 1].sh_size = v[i].size;
		sh[i + 1].sh_addralign = 1;
		strcpy(names + names_len, v[i].name);
		names_len += strlen(v[i].name) + 1;
		off += v[i].size;
	}
	sh[n + 1].sh_name = (Elf64_Word)names_len;
	sh[n + 1].sh_type = SHT_STRTAB;
	sh[n + 1].sh_offset = names_off;
	strcpy(names + names_len, ".shstrtab");
	names_len += sizeof(".shstrtab");
	sh[n + 1].sh_size = names_len;
	sh[n + 1].sh_addralign = 1;
	if (started) {
		pthread_join(tid, NULL);
		if (!err)
			err = job.err;
	}
	if (dd)
		libdeflate_free_decompressor(dd);
	if (err) {
		sym_dwarf_image_free(img, total);
		return err;
	}
	*out = elf_memory(img, total);
	if (!*out) {
		sym_dwarf_image_free(img, total);
		return -EINVAL;
	}
	*image = img;
	*size = total;
	return 0;
}

int sym_dwarf_image(Elf *elf, void **image, size_t *size, Elf **out)
{
	struct img_scn *v;
	size_t n;
	int err = collect(elf, &v, &n);

	*out = NULL;
	*image = NULL;
	*size = 0;
	if (err || !n)
		return err;
	err = build_image(elf, v, n, image, size, out);
	free(v);
	return err;
}

/* Replace f->dw_elf by an image of its wanted debug sections, inflated, when they are
 * compressed. A failure other than ENOMEM leaves f->dw_elf as it was (libdw inflates it). */
static int make_image(struct sym_file *f)
{
	size_t size;
	void *img;
	Elf *elf;
	int err = sym_dwarf_image(f->dw_elf, &img, &size, &elf);

	if (err == -ENOMEM)
		return err;
	if (err || !elf)
		return 0;
	elf_end(f->dw_elf);
	f->dw_elf = elf;
	f->dw_image = img;
	f->dw_image_size = size;
	return 0;
}

/* ---- units by address ---- */

static int cmp_range(const void *a, const void *b)
{
	const struct sym_cu_range *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->end < y->end ? -1 : x->end > y->end;
}

static int add_range(struct sym_cu_range **v, size_t *n, size_t *cap, uint64_t start, uint64_t end,
		     uint64_t cu_off)
{
	if (end <= start)
		return 0;
	if (kp_grow((void **)v, cap, *n + 1, sizeof(**v)))
		return -ENOMEM;
	(*v)[(*n)++] = (struct sym_cu_range){ start, end, cu_off };
	return 0;
}

/* .debug_aranges: the units it covers into <seen> */
static int index_aranges(struct sym_file *f, struct sym_cu_range **v, size_t *n, size_t *cap,
			 struct sym_hmap *seen)
{
	Dwarf_Aranges *ar;
	size_t i, na;

	if (dwarf_getaranges(f->dw, &ar, &na) != 0)
		return 0; /* none, or unreadable: every unit's ranges are read */
	for (i = 0; i < na; i++) {
		Dwarf_Arange *a = dwarf_onearange(ar, i);
		Dwarf_Addr addr;
		Dwarf_Word len;
		Dwarf_Off off;

		if (!a || dwarf_getarangeinfo(a, &addr, &len, &off) || !len)
			continue;
		if (add_range(v, n, cap, addr, addr + len, off) ||
		    sym_hmap_put(seen, off, 0, (void *)1))
			return -ENOMEM;
	}
	return 0;
}

static int index_units(struct sym_file *f)
{
	struct sym_cu_range *v = NULL;
	struct sym_hmap seen = { 0 };
	size_t n = 0, cap = 0;
	Dwarf_Off off = 0, next;
	size_t hsize;
	int err;

	err = index_aranges(f, &v, &n, &cap, &seen);
	/* units .debug_aranges leaves out: their DIE's ranges (reading unit headers is cheap) */
	while (!err && dwarf_nextcu(f->dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		Dwarf_Off die_off = off + hsize;
		Dwarf_Die cudie;
		Dwarf_Addr base, start, end;
		ptrdiff_t r = 0;

		off = next;
		if (sym_hmap_get(&seen, die_off, 0) || !dwarf_offdie(f->dw, die_off, &cudie))
			continue;
		while (!err && (r = dwarf_ranges(&cudie, r, &base, &start, &end)) > 0)
			err = add_range(&v, &n, &cap, start, end, die_off);
	}
	sym_hmap_free(&seen);
	if (err) {
		free(v);
		return err;
	}
	if (n)
		qsort(v, n, sizeof(*v), cmp_range);
	f->cus = v;
	f->ncus = n;
	return 0;
}

/* the sections read without libdw (sym_lines.c, sym_dies.c), as libdw sees them */
static void find_sections(struct sym_file *f)
{
	static const struct {
		const char *name;
		size_t at;
	} want[] = {
		{ ".debug_info", offsetof(struct sym_dwsecs, info) },
		{ ".debug_abbrev", offsetof(struct sym_dwsecs, abbrev) },
		{ ".debug_line", offsetof(struct sym_dwsecs, line) },
		{ ".debug_line_str", offsetof(struct sym_dwsecs, line_str) },
		{ ".debug_str", offsetof(struct sym_dwsecs, str) },
	};
	Elf *elf = dwarf_getelf(f->dw);
	Elf_Scn *scn = NULL;
	size_t shstrndx, i;
	GElf_Ehdr eh;

	memset(&f->sec, 0, sizeof(f->sec));
	if (!elf || elf_getshdrstrndx(elf, &shstrndx) || !gelf_getehdr(elf, &eh))
		return;
	f->sec.little = eh.e_ident[EI_DATA] == ELFDATA2LSB &&
			__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || !(name = elf_strptr(elf, shstrndx, sh.sh_name)))
			continue;
		for (i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
			struct sym_dwsec *sec = (struct sym_dwsec *)((char *)&f->sec + want[i].at);

			if (strcmp(name, want[i].name) || (sh.sh_flags & SHF_COMPRESSED))
				continue; /* a compressed one is libdw's alone */
			d = elf_getdata(scn, NULL);
			if (d && d->d_buf) {
				sec->p = d->d_buf;
				sec->len = d->d_size;
			}
		}
	}
}

int sym_dwarf_open(struct sym_file *f)
{
	int err = make_image(f);

	if (err)
		return err;
	f->dw = dwarf_begin_elf(f->dw_elf, DWARF_C_READ, NULL);
	if (!f->dw)
		return kp_fail(LIBSYM_ERR_DWARF_FORMAT_FAILED, -EINVAL,
			       "the DWARF of %s%s%s cannot be read: %s", f->path,
			       f->debug_path ? " in " : "", f->debug_path ? f->debug_path : "",
			       dwarf_errmsg(-1));
	find_sections(f);
	err = index_units(f);
	if (err)
		sym_dwarf_close(f);
	return err;
}

bool sym_dwarf_find_cu(struct sym_file *f, uint64_t addr, Dwarf_Die *cudie)
{
	size_t lo = 0, hi = f->ncus, i, k;

	if (!f->dw)
		return false;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (f->cus[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (i = lo, k = 0; i > 0 && k < BACKWARD_SCAN; i--, k++) {
		const struct sym_cu_range *c = &f->cus[i - 1];

		if (addr < c->end)
			return dwarf_offdie(f->dw, c->cu_off, cudie) != NULL;
	}
	return false;
}

const char *sym_dwarf_full_path(Dwarf_Die *cudie, const char *src)
{
	Dwarf_Attribute attr;
	const char *dir, *res;
	char *full;

	if (src[0] == '/')
		return sym_intern(src);
	/* relative to the compilation directory: give the full path */
	dir = dwarf_formstring(dwarf_attr(cudie, DW_AT_comp_dir, &attr));
	if (!dir || !*dir)
		return sym_intern(src);
	if (asprintf(&full, "%s%s%s", dir, dir[strlen(dir) - 1] == '/' ? "" : "/", src) < 0)
		return NULL;
	res = sym_intern(full);
	free(full);
	return res;
}

int sym_dwarf_line(struct sym_file *f, uint64_t vaddr, const char **file, unsigned *line)
{
	Dwarf_Die cudie;
	Dwarf_Line *l;
	const char *src;
	int lineno = 0;

	*file = NULL;
	*line = 0;
	if (!sym_dwarf_find_cu(f, vaddr, &cudie))
		return -ENOENT;
	lineno = 0;
	switch (sym_lines_find(f, &cudie, vaddr, &src, &lineno)) {
	case -ENOTSUP:
		break; /* libdw reads this table */
	case 0:
		if (lineno <= 0)
			return -ENOENT;
		goto found;
	case -ENOMEM:
		return -ENOMEM;
	default:
		return -ENOENT;
	}
	l = dwarf_getsrc_die(&cudie, vaddr);
	if (!l || dwarf_lineno(l, &lineno) || lineno <= 0)
		return -ENOENT;
	src = dwarf_linesrc(l, NULL, NULL);
found:
	if (src) {
		src = sym_dwarf_full_path(&cudie, src);
		if (!src)
			return -ENOMEM;
	}
	*file = src;
	*line = (unsigned)lineno;
	return 0;
}

void sym_dwarf_close(struct sym_file *f)
{
	sym_inline_free(f);
	sym_lines_free(f);
	sym_dies_free(f);
	if (f->dw)
		dwarf_end(f->dw);
	f->dw = NULL;
	free(f->cus);
	f->cus = NULL;
	f->ncus = 0;
}
