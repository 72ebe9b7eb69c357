/*
 * sym_elf.c - the ELF files behind user addresses: symbol tables, load segments, separate
 * debug files, and the cache that makes a library mapped by fifty processes parsed once.
 *
 * A file is identified by what stat() says of it (device, inode, size, mtime: an inode number
 * reused by a rebuilt binary must not return the old symbols) and by its GNU build-id (the same
 * library in two container layers is one entry). Symbols come from .symtab, else from the
 * .symtab of the separate debug file, else from .dynsym; PLT stubs get "name@plt" symbols.
 * The debug file is looked for by build-id (DIR/.build-id/xx/rest.debug) and by
 * .gnu_debuglink (next to the file, in .debug/, in DIR/<dir of the file>/, CRC checked), in the
 * process's root first. Files that carry DWARF stay mapped (libelf mmap, no descriptor kept) so
 * that lines can be looked up after the process is gone.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>

#include "core/core.h"
#include "kperf/pcerrc.h"
#include "sym.h"

#define DEFAULT_DEBUG_DIR "/usr/lib/debug"

static struct sym_file *all_files;
static struct sym_hmap by_inode; /* (dev, ino) -> newest file with that identity */
static struct sym_hmap by_build_id; /* (first 16 bytes) -> file */
static unsigned nparsed, ncached, ndwarf;
static bool elf_ready;

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

/* ---- debug directories ---- */

static char *debug_env_copy;
static const char **debug_dirs_arr;

int sym_debug_dirs(const char ***dirs)
{
	const char *env = secure_getenv("KPERF_BPF_DEBUG_DIRS");
	size_t n = 0, cap = 0;
	char *p, *save = NULL;

	free(debug_env_copy);
	free(debug_dirs_arr);
	debug_env_copy = NULL;
	debug_dirs_arr = NULL;
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

/* ---- symbol tables ---- */

/* a symbol while the table is built */
struct rawsym {
	uint64_t start, size;
	uint64_t sec_end; /* end of its section: bounds a symbol without a size */
	uint32_t name;
	uint8_t bind, type;
};

struct symvec {
	struct rawsym *v;
	size_t n, cap;
	char *pool;
	size_t plen, pcap;
};

static int pool_add(struct symvec *sv, const char *s, const char *suffix, uint32_t *off)
{
	size_t l1 = strlen(s), l2 = suffix ? strlen(suffix) : 0;

	if (sv->plen + l1 + l2 + 1 > UINT32_MAX)
		return -E2BIG;
	if (kp_grow((void **)&sv->pool, &sv->pcap, sv->plen + l1 + l2 + 1, 1))
		return -ENOMEM;
	*off = (uint32_t)sv->plen;
	memcpy(sv->pool + sv->plen, s, l1);
	if (l2)
		memcpy(sv->pool + sv->plen + l1, suffix, l2);
	sv->pool[sv->plen + l1 + l2] = '\0';
	sv->plen += l1 + l2 + 1;
	return 0;
}

static int sym_add(struct symvec *sv, uint64_t start, uint64_t size, uint64_t sec_end,
		   const char *name, const char *suffix, uint8_t bind, uint8_t type)
{
	struct rawsym *s;
	uint32_t off;
	int err;

	if (kp_grow((void **)&sv->v, &sv->cap, sv->n + 1, sizeof(*sv->v)))
		return -ENOMEM;
	err = pool_add(sv, name, suffix, &off);
	if (err)
		return err;
	s = &sv->v[sv->n++];
	s->start = start;
	s->size = size;
	s->sec_end = sec_end;
	s->name = off;
	s->bind = bind;
	s->type = type;
	return 0;
}

static uint64_t section_end(Elf *elf, size_t shndx)
{
	Elf_Scn *scn = elf_getscn(elf, shndx);
	GElf_Shdr sh;

	if (!scn || !gelf_getshdr(scn, &sh) || sh.sh_addr + sh.sh_size < sh.sh_addr)
		return UINT64_MAX;
	return sh.sh_addr + sh.sh_size;
}

static int read_symtab(Elf *elf, Elf_Scn *scn, struct symvec *sv)
{
	GElf_Shdr sh;
	Elf_Data *data;
	size_t i, n, esize;
	int err;

	if (!gelf_getshdr(scn, &sh))
		return -EINVAL;
	data = elf_getdata(scn, NULL);
	if (!data || !data->d_buf)
		return -EINVAL;
	esize = gelf_fsize(elf, ELF_T_SYM, 1, EV_CURRENT);
	if (!esize)
		return -EINVAL;
	n = data->d_size / esize;
	for (i = 1; i < n && i < INT_MAX; i++) {
		GElf_Sym s;
		const char *name;
		uint8_t type;

		if (!gelf_getsym(data, (int)i, &s))
			break;
		type = GELF_ST_TYPE(s.st_info);
		if (type != STT_FUNC && type != STT_GNU_IFUNC)
			continue;
		if (s.st_shndx == SHN_UNDEF || s.st_shndx >= SHN_LORESERVE || !s.st_value)
			continue;
		if (s.st_size > UINT64_MAX - s.st_value)
			continue; /* corrupt */
		name = elf_strptr(elf, sh.sh_link, s.st_name);
		if (!name || !*name)
			continue;
		err = sym_add(sv, s.st_value, s.st_size,
			      s.st_size ? 0 : section_end(elf, s.st_shndx), name, NULL,
			      GELF_ST_BIND(s.st_info), type);
		if (err)
			return err;
	}
	return 0;
}

/* Which of the names of one address to show: global over weak over local (perf's choice too),
 * an unversioned name over "name@@VERSION", then fewer leading underscores (abort over
 * __GI_abort). */
/* where "@VERSION" or "@@VERSION" starts in a symbol name, NULL when none ("name@plt" is one of
 * our PLT names, not a version) */
static const char *version_at(const char *name)
{
	const char *at = strchr(name, '@');

	if (!at || at == name || !strcmp(at, "@plt"))
		return NULL;
	return at;
}

static int sym_rank(const struct symvec *sv, const struct rawsym *s)
{
	const char *name = sv->pool + s->name;
	const char *at = version_at(name);
	int r = 1000;

	if (s->bind == STB_GLOBAL)
		r += 200;
	else if (s->bind == STB_WEAK)
		r += 100;
	if (at)
		r -= at[1] == '@' ? 140 : 150;
	if (s->size)
		r += 50; /* a sized symbol over a label */
	while (*name == '_') {
		r--;
		name++;
	}
	return r;
}

static int cmp_sym(const void *a, const void *b, void *ctx)
{
	const struct rawsym *x = a, *y = b;
	const struct symvec *sort_ctx = ctx;
	int rx, ry;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	rx = sym_rank(sort_ctx, x);
	ry = sym_rank(sort_ctx, y);
	if (rx != ry)
		return rx > ry ? -1 : 1;
	return strcmp(sort_ctx->pool + x->name, sort_ctx->pool + y->name);
}

/* Sort, keep the best name of each address, give sizeless symbols an end (the next symbol
 * or the end of their section). */
static int finish_symbols(struct symvec *sv, struct sym_elf_sym **out, size_t *nout)
{
	struct sym_elf_sym *v;
	size_t i, j;

	*out = NULL;
	*nout = 0;
	if (!sv->n)
		return 0;
	qsort_r(sv->v, sv->n, sizeof(*sv->v), cmp_sym, sv);
	for (i = 0, j = 0; i < sv->n; i++) {
		if (j && sv->v[j - 1].start == sv->v[i].start) {
			/* an alias: the best name came first; borrow a size if it has none */
			if (!sv->v[j - 1].size && sv->v[i].size)
				sv->v[j - 1].size = sv->v[i].size;
			continue;
		}
		sv->v[j++] = sv->v[i];
	}
	sv->n = j;
	v = calloc(sv->n, sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (i = 0; i < sv->n; i++) {
		const struct rawsym *r = &sv->v[i];
		uint64_t next = i + 1 < sv->n ? sv->v[i + 1].start : UINT64_MAX;

		v[i].start = r->start;
		v[i].name = r->name;
		v[i].bind = r->bind;
		v[i].type = r->type;
		if (r->size) {
			v[i].end = r->start + r->size;
		} else {
			v[i].end = next < r->sec_end ? next : r->sec_end;
			if (v[i].end == UINT64_MAX || v[i].end <= r->start)
				v[i].end = r->start + 1;
		}
	}
	*out = v;
	*nout = sv->n;
	return 0;
}

/* x86_64 PLT stubs: the n-th R_X86_64_JUMP_SLOT of .rela.plt is the n-th 16-byte entry of
 * .plt.sec (IBT) or the (n+1)-th of .plt (entry 0 is the resolver trampoline) */
static int synthesize_plt(Elf *elf, size_t shstrndx, struct symvec *sv)
{
	Elf_Scn *scn = NULL, *rela = NULL, *plt = NULL, *plt_sec = NULL;
	GElf_Shdr sh, rsh, psh, dsh;
	Elf_Data *rdata, *ddata;
	Elf_Scn *dynsym;
	uint64_t base, entsize = 16;
	size_t i, n, esize;
	int err;

	while ((scn = elf_nextscn(elf, scn))) {
		const char *name;

		if (!gelf_getshdr(scn, &sh))
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!name)
			continue;
		if (!strcmp(name, ".rela.plt") && sh.sh_type == SHT_RELA)
			rela = scn;
		else if (!strcmp(name, ".plt") && sh.sh_type == SHT_PROGBITS)
			plt = scn;
		else if (!strcmp(name, ".plt.sec") && sh.sh_type == SHT_PROGBITS)
			plt_sec = scn;
	}
	if (!rela || !(plt || plt_sec) || !gelf_getshdr(rela, &rsh))
		return 0;
	if (!gelf_getshdr(plt_sec ? plt_sec : plt, &psh))
		return 0;
	base = psh.sh_addr + (plt_sec ? 0 : entsize);
	dynsym = elf_getscn(elf, rsh.sh_link);
	if (!dynsym || !gelf_getshdr(dynsym, &dsh))
		return 0;
	rdata = elf_getdata(rela, NULL);
	ddata = elf_getdata(dynsym, NULL);
	esize = gelf_fsize(elf, ELF_T_RELA, 1, EV_CURRENT);
	if (!rdata || !ddata || !esize)
		return 0;
	n = rdata->d_size / esize;
	for (i = 0; i < n; i++) {
		GElf_Rela r;
		GElf_Sym s;
		const char *name;
		uint64_t at = base + i * entsize;

		if (!gelf_getrela(rdata, (int)i, &r))
			break;
		if (at + entsize > psh.sh_addr + psh.sh_size)
			break;
		if (GELF_R_TYPE(r.r_info) != R_X86_64_JUMP_SLOT)
			continue;
		if (!gelf_getsym(ddata, (int)GELF_R_SYM(r.r_info), &s))
			continue;
		name = elf_strptr(elf, dsh.sh_link, s.st_name);
		if (!name || !*name)
			continue;
		err = sym_add(sv, at, entsize, 0, name, "@plt", STB_LOCAL, STT_FUNC);
		if (err)
			return err;
	}
	return 0;
}

struct elf_facts {
	Elf_Scn *symtab, *dynsym;
	bool has_debug_info;
	size_t shstrndx;
};

static int scan_sections(Elf *elf, struct elf_facts *ef)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	memset(ef, 0, sizeof(*ef));
	if (elf_getshdrstrndx(elf, &ef->shstrndx))
		ef->shstrndx = 0;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *name;

		if (!gelf_getshdr(scn, &sh))
			return -EINVAL;
		if (sh.sh_type == SHT_SYMTAB && sh.sh_size)
			ef->symtab = scn;
		else if (sh.sh_type == SHT_DYNSYM && sh.sh_size)
			ef->dynsym = scn;
		if (sh.sh_type == SHT_NOBITS || !ef->shstrndx)
			continue;
		name = elf_strptr(elf, ef->shstrndx, sh.sh_name);
		if (name && (!strcmp(name, ".debug_info") || !strcmp(name, ".zdebug_info")) &&
		    sh.sh_size)
			ef->has_debug_info = true;
	}
	return 0;
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

static int read_symbols(struct sym_file *f, Elf *main_elf, const struct elf_facts *mf,
			Elf *debug_elf, const struct elf_facts *df)
{
	struct symvec sv = { 0 };
	int err = 0;

	if (mf->symtab) {
		err = read_symtab(main_elf, mf->symtab, &sv);
		f->symtab_from = "symtab";
	} else if (debug_elf && df->symtab) {
		err = read_symtab(debug_elf, df->symtab, &sv);
		f->symtab_from = "debug symtab";
	} else if (mf->dynsym) {
		err = read_symtab(main_elf, mf->dynsym, &sv);
		f->symtab_from = "dynsym";
	} else {
		f->symtab_from = "none";
	}
	if (err == -EINVAL)
		err = 0; /* an unreadable table: what was read before it broke stays */
	if (!err && mf->shstrndx)
		err = synthesize_plt(main_elf, mf->shstrndx, &sv);
	if (!err)
		err = finish_symbols(&sv, &f->syms, &f->nsyms);
	free(sv.v);
	if (err) {
		free(sv.pool);
		return err;
	}
	f->names = sv.pool;
	if (f->nsyms) {
		f->demangled = calloc(f->nsyms, sizeof(*f->demangled));
		f->demangle_tried = calloc(f->nsyms, sizeof(*f->demangle_tried));
		if (!f->demangled || !f->demangle_tried)
			return -ENOMEM;
	}
	return 0;
}

/* ---- opening ELF files ---- */

/* An ELF mapped read-only, the descriptor closed: the image stays until elf_end. */
static Elf *open_elf(const char *path, struct stat *st, int *errp)
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

static size_t get_build_id(Elf *elf, uint8_t *out, size_t cap)
{
	const void *id;
	ssize_t n = dwelf_elf_gnu_build_id(elf, &id);

	if (n <= 0 || (size_t)n > cap)
		return 0;
	memcpy(out, id, (size_t)n);
	return (size_t)n;
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
	pid_t pid; /* whose files: debug files must be owned by root or its owner */
	const struct stat *main_st;
	const char *debuglink;
	uint32_t crc;
	bool crc_mismatch;
	char found[PATH_MAX];
};

/* Open <path> as the debug file of s->f, or NULL when it is not one. */
static Elf *try_debug(struct debug_search *s, const char *path, bool by_link)
{
	struct stat st;
	uint8_t id[64];
	size_t idlen;
	Elf *elf;
	int err;

	if (kp_stat_path(path, &st) || !S_ISREG(st.st_mode))
		return NULL;
	if (st.st_dev == s->main_st->st_dev && st.st_ino == s->main_st->st_ino)
		return NULL; /* the debuglink names the file itself */
	if (!sym_owner_trusted(path, st.st_uid, s->pid))
		return NULL;
	if (by_link) {
		uint32_t crc;

		if (crc_file(path, &crc))
			return NULL;
		if (crc != s->crc) {
			s->crc_mismatch = true;
			return NULL;
		}
	}
	elf = open_elf(path, &st, &err);
	if (!elf)
		return NULL;
	idlen = get_build_id(elf, id, sizeof(id));
	if (s->f->build_id_len && idlen &&
	    (idlen != s->f->build_id_len || memcmp(id, s->f->build_id, idlen))) {
		elf_end(elf);
		return NULL;
	}
	snprintf(s->found, sizeof(s->found), "%s", path);
	return elf;
}

static Elf *find_debug_file(struct sym_file *f, const struct sym_file_ref *ref, Elf *main_elf,
			    const struct stat *main_st)
{
	struct debug_search s = { .f = f, .main_st = main_st, .pid = ref->pid };
	char root[64] = "", path[PATH_MAX * 2], dir[PATH_MAX], hex[140];
	const char **dirs;
	const char *roots[2];
	int ndirs, r, d;
	size_t i;
	Elf *elf;

	ndirs = sym_debug_dirs(&dirs);
	if (ndirs < 0)
		return NULL;
	if (ref->pid > 0)
		snprintf(root, sizeof(root), "/proc/%d/root", (int)ref->pid);
	roots[0] = root;
	roots[1] = "";
	if (f->build_id_len) {
		for (i = 0; i < f->build_id_len; i++)
			snprintf(hex + 2 * i + (i ? 1 : 0), 4, i == 0 ? "%02x/" : "%02x",
				 f->build_id[i]);
		for (r = ref->pid > 0 ? 0 : 1; r < 2; r++) {
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
	s.debuglink = dwelf_elf_gnu_debuglink(main_elf, &s.crc);
	if (s.debuglink && *s.debuglink && !strchr(s.debuglink, '/') && ref->path[0] == '/') {
		char *slash;

		snprintf(dir, sizeof(dir), "%s", ref->path);
		slash = strrchr(dir, '/');
		if (slash)
			slash[slash == dir ? 1 : 0] = '\0';
		for (r = ref->pid > 0 ? 0 : 1; r < 2; r++) {
			const char *sep = strcmp(dir, "/") ? "/" : "";

			snprintf(path, sizeof(path), "%s%s%s%s", roots[r], dir, sep, s.debuglink);
			if ((elf = try_debug(&s, path, true)))
				goto found;
			snprintf(path, sizeof(path), "%s%s%s.debug/%s", roots[r], dir, sep,
				 s.debuglink);
			if ((elf = try_debug(&s, path, true)))
				goto found;
			for (d = 0; d < ndirs; d++) {
				if (r == 0 && strcmp(dirs[d], DEFAULT_DEBUG_DIR))
					continue;
				snprintf(path, sizeof(path), "%s%s%s%s%s", roots[r], dirs[d], dir,
					 sep, s.debuglink);
				if ((elf = try_debug(&s, path, true)))
					goto found;
			}
		}
		if (s.crc_mismatch)
			kp_warn(KPERF_WARN_SYM_INCOMPLETE,
				"the debug file %s of %s was found, but its CRC does not match the "
				".gnu_debuglink: it belongs to another build and was ignored",
				s.debuglink, ref->path);
	}
	return NULL;
found:
	f->debug_path = sym_intern(s.found);
	return elf;
}

static void file_free(struct sym_file *f)
{
	size_t i;

	if (!f)
		return;
	sym_dwarf_close(f);
	if (f->dw_elf)
		elf_end(f->dw_elf);
	free(f->dw_image);
	if (f->demangled)
		for (i = 0; i < f->nsyms; i++)
			if (f->demangled[i] && f->demangled[i] != f->names + f->syms[i].name)
				free(f->demangled[i]);
	free(f->demangled);
	free(f->demangle_tried);
	free(f->syms);
	free(f->names);
	free(f->segs);
	free(f);
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
	return 0;
}

/* Parse <elf> (the file at ref) into a new cached file. Consumes elf. */
static int parse_new(Elf *elf, const struct stat *st, const struct sym_file_ref *ref,
		     struct sym_file **out)
{
	struct elf_facts mf, df = { 0 };
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
	f->build_id_len = get_build_id(elf, f->build_id, sizeof(f->build_id));
	err = read_segments(elf, f);
	if (!err)
		err = scan_sections(elf, &mf);
	if (err) {
		if (err == -EINVAL)
			err = kp_fail(LIBSYM_ERR_ELFIN_FOMAT_FAILED, -ENOEXEC,
				      "%s is a malformed ELF file: %s", ref->path, elf_errmsg(-1));
		goto fail;
	}
	if (!mf.symtab || !mf.has_debug_info) {
		debug_elf = find_debug_file(f, ref, elf, st);
		if (debug_elf && scan_sections(debug_elf, &df)) {
			elf_end(debug_elf);
			debug_elf = NULL;
			f->debug_path = NULL;
		}
	}
	err = read_symbols(f, elf, &mf, debug_elf, &df);
	if (err)
		goto fail;
	/* keep mapped the ELF that has the DWARF */
	if (mf.has_debug_info) {
		f->dw_elf = elf;
		elf = NULL;
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
	if (kp_stat_path(ref->open_path, &st) == 0) {
		f = sym_hmap_get(&by_inode, (uint64_t)st.st_dev, (uint64_t)st.st_ino);
		if (f && f->size == st.st_size && f->mtime_ns == mtime_ns(&st))
			goto have;
	}
	elf = open_elf(ref->open_path, &st, &err);
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
	idlen = get_build_id(elf, id, sizeof(id));
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
	struct elf_facts mf;
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
	idlen = get_build_id(elf, id, sizeof(id));
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
	f->path = sym_intern(name);
	f->e_type = eh.e_type;
	f->build_id_len = idlen;
	memcpy(f->build_id, id, idlen);
	err = f->path ? read_segments(elf, f) : -ENOMEM;
	if (!err)
		err = scan_sections(elf, &mf);
	if (!err)
		err = read_symbols(f, elf, &mf, NULL, NULL);
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

const struct sym_elf_sym *sym_file_find(const struct sym_file *f, uint64_t vaddr)
{
	size_t lo = 0, hi = f->nsyms;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (f->syms[mid].start <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0 || vaddr >= f->syms[lo - 1].end)
		return NULL;
	return &f->syms[lo - 1];
}

const char *sym_file_sym_name(const struct sym_file *f, const struct sym_elf_sym *s)
{
	return f->names + s->name;
}

/* the name to show: demangled, without the "@VERSION" of a versioned symbol */
static char *display_name(const char *raw)
{
	const char *at = version_at(raw);
	char *bare, *d;

	if (!at)
		return sym_demangle(raw);
	bare = strndup(raw, (size_t)(at - raw));
	if (!bare)
		return NULL;
	d = sym_demangle(bare);
	if (d) {
		free(bare);
		return d;
	}
	return bare;
}

const char *sym_file_sym_demangled(struct sym_file *f, const struct sym_elf_sym *s)
{
	size_t i = (size_t)(s - f->syms);
	const char *raw = f->names + s->name;

	if (!f->demangle_tried[i]) {
		f->demangle_tried[i] = true;
		f->demangled[i] = display_name(raw);
	}
	return f->demangled[i] ? f->demangled[i] : raw;
}

int sym_file_dwarf(struct sym_file *f)
{
	int err;

	if (f->dwarf_tried)
		return f->dw ? 0 : -ENOENT;
	f->dwarf_tried = true;
	if (!f->dw_elf)
		return -ENOENT;
	f->dw = dwarf_begin_elf(f->dw_elf, DWARF_C_READ, NULL);
	if (!f->dw)
		return kp_fail(LIBSYM_ERR_DWARF_FORMAT_FAILED, -EINVAL,
			       "the DWARF of %s%s%s cannot be read: %s", f->path,
			       f->debug_path ? " in " : "", f->debug_path ? f->debug_path : "",
			       dwarf_errmsg(-1));
	ndwarf++;
	err = sym_dwarf_index(f);
	if (err) {
		sym_dwarf_close(f);
		return err;
	}
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
	sym_hmap_free(&by_inode);
	sym_hmap_free(&by_build_id);
	nparsed = ncached = ndwarf = 0;
	free(debug_env_copy);
	free(debug_dirs_arr);
	debug_env_copy = NULL;
	debug_dirs_arr = NULL;
}
