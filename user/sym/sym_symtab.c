/*
 * sym_symtab.c - the function symbols of one ELF file: which table they come from, which of
 * the names of one address is shown, the other names (aliases), PLT stubs, display names.
 *
 * An address often has several names (glibc: __GI___fork, __fork, __libc_fork, fork). The one
 * shown is the one a user would write: exported in .dynsym under its default version, then
 * fewest leading underscores once an internal-alias prefix (__GI_, __EI_) is dropped, then
 * global over weak over local, a sized symbol over a label, an unversioned name over
 * name@VERSION, and at last the shortest name. The others stay reachable as aliases, ranked
 * the same way.
 */
#include <errno.h>
#include <gelf.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "sym.h"

/* a symbol while the table is built */
struct rawsym {
	uint64_t start, size;
	uint64_t sec_end; /* end of its section: bounds a symbol without a size */
	uint32_t name;
	uint8_t bind, type;
	/* ranking facts, fixed when added */
	bool exported; /* in .dynsym under its default version */
	bool prefixed; /* an internal-alias prefix (__GI_...) */
	uint8_t unders; /* leading underscores after that prefix */
	uint8_t version; /* 0 none, 1 "@@VER", 2 "@VER" */
};

struct symvec {
	struct rawsym *v;
	size_t n, cap;
	char *pool;
	size_t plen, pcap;
	struct sym_hmap exports; /* (address, name hash) of default-version .dynsym names */
};

/* glibc's internal aliases of a function: hidden (__GI_), exported-internal (__EI_) */
static const char *const internal_prefixes[] = { "__GI_", "__EI_" };

/* where "@VERSION" or "@@VERSION" starts in a symbol name, NULL when none ("name@plt" is one of
 * our PLT names, not a version) */
static const char *version_at(const char *name)
{
	const char *at = strchr(name, '@');

	if (!at || at == name || !strcmp(at, "@plt"))
		return NULL;
	return at;
}

static uint64_t name_hash(const char *s, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	size_t i;

	for (i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 0x100000001b3ULL;
	return h;
}

static size_t bare_len(const char *name)
{
	const char *at = version_at(name);

	return at ? (size_t)(at - name) : strlen(name);
}

static void rank_facts(struct symvec *sv, struct rawsym *r)
{
	const char *name = sv->pool + r->name, *at = version_at(name), *p = name;
	size_t i, u = 0;

	r->version = at ? (at[1] == '@' ? 1 : 2) : 0;
	r->exported = sv->exports.n &&
		      sym_hmap_get(&sv->exports, r->start, name_hash(name, bare_len(name)));
	for (i = 0; i < sizeof(internal_prefixes) / sizeof(internal_prefixes[0]); i++) {
		size_t l = strlen(internal_prefixes[i]);

		if (!strncmp(p, internal_prefixes[i], l) && p[l]) {
			r->prefixed = true;
			p += l;
			break;
		}
	}
	while (*p == '_' && u < 255) {
		u++;
		p++;
	}
	r->unders = (uint8_t)u;
}

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
	memset(s, 0, sizeof(*s));
	s->start = start;
	s->size = size;
	s->sec_end = sec_end;
	s->name = off;
	s->bind = bind;
	s->type = type;
	rank_facts(sv, s);
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

static bool is_function(const GElf_Sym *s)
{
	uint8_t type = GELF_ST_TYPE(s->st_info);

	if (type != STT_FUNC && type != STT_GNU_IFUNC)
		return false;
	if (s->st_shndx == SHN_UNDEF || s->st_shndx >= SHN_LORESERVE || !s->st_value)
		return false;
	return s->st_size <= UINT64_MAX - s->st_value; /* else corrupt */
}

/* The names .dynsym exports under their default version: no version table, or a version
 * index that is neither local (0) nor hidden (a non-default "name@VER"). */
static int read_exports(Elf *elf, Elf_Scn *dynsym, struct symvec *sv)
{
	Elf_Scn *scn = NULL, *versym = NULL;
	Elf_Data *data, *vdata = NULL;
	GElf_Shdr sh, vsh;
	size_t i, n, esize;

	if (!dynsym || !gelf_getshdr(dynsym, &sh))
		return 0;
	while ((scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, &vsh) && vsh.sh_type == SHT_GNU_versym &&
		    vsh.sh_link == elf_ndxscn(dynsym))
			versym = scn;
	data = elf_getdata(dynsym, NULL);
	if (versym)
		vdata = elf_getdata(versym, NULL);
	esize = gelf_fsize(elf, ELF_T_SYM, 1, EV_CURRENT);
	if (!data || !data->d_buf || !esize)
		return 0;
	n = data->d_size / esize;
	for (i = 1; i < n && i < INT_MAX; i++) {
		GElf_Sym s;
		GElf_Versym v;
		const char *name;

		if (!gelf_getsym(data, (int)i, &s))
			break;
		if (!is_function(&s) || GELF_ST_BIND(s.st_info) == STB_LOCAL)
			continue;
		if (vdata && gelf_getversym(vdata, (int)i, &v) &&
		    ((v & 0x8000) || (v & 0x7fff) == 0))
			continue;
		name = elf_strptr(elf, sh.sh_link, s.st_name);
		if (!name || !*name)
			continue;
		if (sym_hmap_put(&sv->exports, s.st_value, name_hash(name, bare_len(name)),
				 (void *)1))
			return -ENOMEM;
	}
	return 0;
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

		if (!gelf_getsym(data, (int)i, &s))
			break;
		if (!is_function(&s))
			continue;
		name = elf_strptr(elf, sh.sh_link, s.st_name);
		if (!name || !*name)
			continue;
		err = sym_add(sv, s.st_value, s.st_size,
			      s.st_size ? 0 : section_end(elf, s.st_shndx), name, NULL,
			      GELF_ST_BIND(s.st_info), GELF_ST_TYPE(s.st_info));
		if (err)
			return err;
	}
	return 0;
}

static int bind_rank(uint8_t bind)
{
	return bind == STB_GLOBAL ? 0 : bind == STB_WEAK ? 1 : 2;
}

/* <0 when x is the better name of one address */
static int cmp_rank(const struct symvec *sv, const struct rawsym *x, const struct rawsym *y)
{
	const char *nx = sv->pool + x->name, *ny = sv->pool + y->name;
	size_t lx, ly;

	if (x->exported != y->exported)
		return x->exported ? -1 : 1;
	if (x->unders != y->unders)
		return x->unders < y->unders ? -1 : 1;
	if (bind_rank(x->bind) != bind_rank(y->bind))
		return bind_rank(x->bind) < bind_rank(y->bind) ? -1 : 1;
	if (!x->size != !y->size)
		return x->size ? -1 : 1; /* a sized symbol over a label */
	if (x->version != y->version)
		return x->version < y->version ? -1 : 1;
	if (x->prefixed != y->prefixed)
		return x->prefixed ? 1 : -1;
	lx = strlen(nx);
	ly = strlen(ny);
	if (lx != ly)
		return lx < ly ? -1 : 1;
	return strcmp(nx, ny);
}

static int cmp_sym(const void *a, const void *b, void *ctx)
{
	const struct rawsym *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return cmp_rank(ctx, x, y);
}

/* Sort; keep the best name of each address as its symbol and the others (without repeats of
 * the same bare name) as its aliases; give sizeless symbols an end (the next symbol or the
 * end of their section). */
static int finish_symbols(struct symvec *sv, struct sym_file *f)
{
	struct sym_elf_sym *v;
	uint32_t *al = NULL;
	size_t i, j, nal = 0, calias = 0;

	if (!sv->n)
		return 0;
	qsort_r(sv->v, sv->n, sizeof(*sv->v), cmp_sym, sv);
	v = calloc(sv->n, sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (i = 0, j = 0; i < sv->n; i++) {
		const struct rawsym *r = &sv->v[i];
		struct sym_elf_sym *k;

		if (j && v[j - 1].start == r->start) {
			/* an alias: the best name came first; borrow a size if it has none */
			const char *name = sv->pool + r->name, *prev;
			size_t a, bl = bare_len(name);
			bool dup = false;

			k = &v[j - 1];
			if (k->end == k->start && r->size)
				k->end = r->start + r->size;
			prev = sv->pool + k->name;
			dup = bare_len(prev) == bl && !strncmp(prev, name, bl);
			for (a = k->alias_first; !dup && a < nal; a++) {
				prev = sv->pool + al[a];
				dup = bare_len(prev) == bl && !strncmp(prev, name, bl);
			}
			if (dup || k->naliases == UINT16_MAX)
				continue;
			if (kp_grow((void **)&al, &calias, nal + 1, sizeof(*al))) {
				free(v);
				free(al);
				return -ENOMEM;
			}
			al[nal++] = r->name;
			k->naliases++;
			continue;
		}
		k = &v[j++];
		k->start = r->start;
		k->end = r->size ? r->start + r->size : r->start; /* fixed below when sizeless */
		k->name = r->name;
		k->bind = r->bind;
		k->type = r->type;
		k->alias_first = (uint32_t)nal;
		sv->v[j - 1].sec_end = r->sec_end;
	}
	for (i = 0; i < j; i++) {
		uint64_t next = i + 1 < j ? v[i + 1].start : UINT64_MAX;
		uint64_t sec_end = sv->v[i].sec_end;

		if (v[i].end != v[i].start)
			continue;
		v[i].end = next < sec_end ? next : sec_end;
		if (v[i].end == UINT64_MAX || v[i].end <= v[i].start)
			v[i].end = v[i].start + 1;
	}
	/* aliases took no entry of their own: give their room back */
	f->syms = j < sv->n ? realloc(v, j * sizeof(*v)) : v;
	if (!f->syms)
		f->syms = v;
	f->nsyms = j;
	f->alias_names = al;
	f->nalias_names = nal;
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

int sym_elf_scan(Elf *elf, struct sym_elf_facts *ef)
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

int sym_symtab_read(struct sym_file *f, Elf *main_elf, const struct sym_elf_facts *mf,
		    Elf *debug_elf, const struct sym_elf_facts *df)
{
	struct symvec sv = { 0 };
	int err = read_exports(main_elf, mf->dynsym, &sv);

	if (err)
		goto out;
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
		err = finish_symbols(&sv, f);
out:
	free(sv.v);
	sym_hmap_free(&sv.exports);
	if (err) {
		free(sv.pool);
		return err;
	}
	/* the pool grew by doubling: give back what it does not use (a cached file keeps it) */
	f->names = sv.plen ? realloc(sv.pool, sv.plen) : sv.pool;
	if (!f->names)
		f->names = sv.pool;
	f->names_len = sv.plen;
	return 0;
}

void sym_symtab_free(struct sym_file *f)
{
	size_t i;

	if (f->demangled)
		for (i = 0; i < f->nsyms; i++)
			if (f->demangled[i] && f->demangled[i] != f->names + f->syms[i].name)
				free(f->demangled[i]);
	free(f->demangled);
	free(f->demangle_tried);
	free(f->syms);
	free(f->alias_names);
	free(f->names);
	f->demangled = NULL;
	f->demangle_tried = NULL;
	f->syms = NULL;
	f->alias_names = NULL;
	f->names = NULL;
	f->nsyms = f->nalias_names = 0;
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

const char *sym_file_alias_name(const struct sym_file *f, const struct sym_elf_sym *s, unsigned i)
{
	if (i >= s->naliases || s->alias_first + i >= f->nalias_names)
		return NULL;
	return f->names + f->alias_names[s->alias_first + i];
}

/* the name to show: demangled, without the "@VERSION" of a versioned symbol */
char *sym_display_name(const char *raw)
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

	if (!f->demangled) { /* the first name shown: most files of a profile need none */
		f->demangled = calloc(f->nsyms, sizeof(*f->demangled));
		f->demangle_tried = calloc(f->nsyms, sizeof(*f->demangle_tried));
		if (!f->demangled || !f->demangle_tried) {
			free(f->demangled);
			free(f->demangle_tried);
			f->demangled = NULL;
			f->demangle_tried = NULL;
			return raw;
		}
	}
	if (!f->demangle_tried[i]) {
		f->demangle_tried[i] = true;
		f->demangled[i] = sym_display_name(raw);
	}
	return f->demangled[i] ? f->demangled[i] : raw;
}
