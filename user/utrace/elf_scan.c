/*
 * elf_scan.c - where the functions asked for start and return, in one ELF file.
 *
 * Names are matched the way libkperf matches them (utrace.h). Return instructions are found
 * by disassembling the function with capstone: a linear sweep that stops at the first byte it
 * cannot decode, because a uprobe written into the middle of an instruction would corrupt the
 * traced program.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "sym/capstone_dl.h"

#include "core/core.h"
#include "utrace.h"

/* cxxabi.h is C++: the one function needed, with its C linkage */
char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

/* how to find return instructions, per machine */
struct ret_arch {
	int machine; /* EM_* */
	const char *name;
	cs_arch arch;
	cs_mode mode;
	unsigned ret_ids[3]; /* capstone instruction ids of returns, 0-terminated */
};

static const struct ret_arch arches[] = {
	{ EM_X86_64,
	  "x86_64",
	  CS_ARCH_X86,
	  CS_MODE_64,
	  { X86_INS_RET, X86_INS_RETF, X86_INS_RETFQ } },
	{ EM_AARCH64, "aarch64", CS_ARCH_ARM64, CS_MODE_ARM, { ARM64_INS_RET, 0, 0 } },
};

#if defined(__x86_64__)
#define HOST_MACHINE EM_X86_64
#elif defined(__aarch64__)
#define HOST_MACHINE EM_AARCH64
#else
#define HOST_MACHINE EM_NONE
#endif

enum match_rank {
	RANK_NONE = 0,
	RANK_CLONE, /* without a compiler clone suffix */
	RANK_NO_PARAMS, /* demangled, without the parameter list */
	RANK_DEMANGLED,
	RANK_RAW,
};

struct want {
	const char *name;
	enum match_rank rank;
	GElf_Sym sym;
	size_t shndx;
};

static const struct ret_arch *arch_of(int machine)
{
	size_t i;

	for (i = 0; i < KP_ARRAY_SIZE(arches); i++)
		if (arches[i].machine == machine)
			return &arches[i];
	return NULL;
}

static void offer(struct want *w, unsigned n, const char *cand, enum match_rank rank,
		  const GElf_Sym *sym, size_t shndx)
{
	unsigned i;

	for (i = 0; i < n; i++) {
		if (w[i].rank >= rank || strcmp(w[i].name, cand))
			continue;
		w[i].rank = rank;
		w[i].sym = *sym;
		w[i].shndx = shndx;
	}
}

/* the name without its parameter list: "ns::K::f(int) const" -> "ns::K::f"; NULL when it has
 * none. The list is the parenthesis group that closes last (operator() keeps its own). */
static char *strip_params(const char *d)
{
	const char *close = strrchr(d, ')'), *p;
	int depth = 0;

	if (!close)
		return NULL;
	for (p = close; p >= d; p--) {
		if (*p == ')')
			depth++;
		else if (*p == '(' && --depth == 0)
			break;
	}
	if (p <= d)
		return NULL;
	return strndup(d, (size_t)(p - d));
}

/* The suffixes compilers give a copy of a function that is still entered like it (GCC's
 * constant propagation, IPA-SRA, LTO privatisation and local aliases, clang's ThinLTO
 * renames). Split-off pieces (".cold", ".part") are left out: they run inside a call that
 * entered elsewhere. So are dotted names of other languages ("main.work" in Go). */
static bool entry_clone_suffix(const char *suffix)
{
	static const char *const kinds[] = { "constprop", "isra", "lto_priv", "localalias",
					     "llvm" };
	size_t i;

	if (*suffix++ != '.')
		return false;
	for (i = 0; i < KP_ARRAY_SIZE(kinds); i++)
		if (!strncmp(suffix, kinds[i], strlen(kinds[i])))
			return !strstr(suffix, "cold") && !strstr(suffix, "part");
	return false;
}

/* the symbol's name without a clone suffix: "f.constprop.0" -> "f", "f(int) [clone .isra.0]"
 * -> "f(int)"; NULL when there is none (or it is a cold/partial piece) */
static char *strip_clone(const char *name, bool demangled)
{
	const char *cut;

	if (demangled) {
		cut = strstr(name, " [clone ");
		if (!cut || !entry_clone_suffix(cut + strlen(" [clone ")))
			return NULL;
	} else {
		cut = strchr(name, '.');
		if (!cut || cut == name || !entry_clone_suffix(cut))
			return NULL;
	}
	return strndup(name, (size_t)(cut - name));
}

/* offer everything a symbol that is not an exact raw match can be called */
static void offer_derived(struct want *w, unsigned n, const char *raw, const GElf_Sym *sym,
			  size_t shndx)
{
	char *d = NULL, *base, *np;
	int status = -1;

	if (raw[0] == '_' && raw[1] == 'Z')
		d = __cxa_demangle(raw, NULL, NULL, &status);
	if (d && status == 0) {
		offer(w, n, d, RANK_DEMANGLED, sym, shndx);
		base = strip_clone(d, true);
		np = strip_params(base ? base : d);
		if (np)
			offer(w, n, np, base ? RANK_CLONE : RANK_NO_PARAMS, sym, shndx);
		if (base)
			offer(w, n, base, RANK_CLONE, sym, shndx);
		free(np);
		free(base);
	} else {
		base = strip_clone(raw, false);
		if (base)
			offer(w, n, base, RANK_CLONE, sym, shndx);
		free(base);
	}
	free(d);
}

/* match every defined function symbol of one symbol table section */
static void scan_symtab(Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh, size_t shnum, struct want *w,
			unsigned n, bool derived)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	size_t i, count;
	GElf_Sym sym;

	if (!data || !sh->sh_entsize)
		return;
	count = sh->sh_size / sh->sh_entsize;
	for (i = 0; i < count; i++) {
		const char *name;

		if (!gelf_getsym(data, (int)i, &sym) || GELF_ST_TYPE(sym.st_info) != STT_FUNC)
			continue;
		if (sym.st_shndx == SHN_UNDEF || sym.st_shndx >= SHN_LORESERVE ||
		    sym.st_shndx >= shnum)
			continue;
		name = elf_strptr(elf, sh->sh_link, sym.st_name);
		if (!name || !*name)
			continue;
		if (derived)
			offer_derived(w, n, name, &sym, sym.st_shndx);
		else
			offer(w, n, name, RANK_RAW, &sym, sym.st_shndx);
	}
}

static int add_off(struct kp_ut_func *f, uint64_t off)
{
	uint64_t *nr = realloc(f->rets, (f->nrets + 1) * sizeof(*nr));

	if (!nr)
		return -ENOMEM;
	f->rets = nr;
	f->rets[f->nrets++] = off;
	return 0;
}

static bool is_ret(const struct ret_arch *a, unsigned id)
{
	unsigned i;

	for (i = 0; i < KP_ARRAY_SIZE(a->ret_ids) && a->ret_ids[i]; i++)
		if (a->ret_ids[i] == id)
			return true;
	return false;
}

/* the entry and return instructions of the function <w> matched */
static int locate(Elf *elf, const struct ret_arch *a, const struct want *w, struct kp_ut_func *f)
{
	Elf_Scn *scn = elf_getscn(elf, w->shndx);
	uint64_t delta, size, addr;
	const uint8_t *code;
	Elf_Data *data;
	GElf_Shdr sh;
	cs_insn *insn;
	size_t left;
	csh cs;
	int err = 0;

	if (!scn || !gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
	    w->sym.st_value < sh.sh_addr || w->sym.st_value >= sh.sh_addr + sh.sh_size)
		return -ENOENT;
	delta = w->sym.st_value - sh.sh_addr;
	f->found = true;
	f->vaddr = w->sym.st_value;
	f->entry = sh.sh_offset + delta;
	size = w->sym.st_size;
	if (size > sh.sh_size - delta)
		size = sh.sh_size - delta;
	data = elf_getdata(scn, NULL);
	if (!size || !data || !data->d_buf || data->d_size < delta + size)
		return 0; /* no code to look at: the entry alone is probed */
	if (cs_open(a->arch, a->mode, &cs) != CS_ERR_OK)
		return 0;
	insn = cs_malloc(cs);
	code = (const uint8_t *)data->d_buf + delta;
	left = size;
	addr = w->sym.st_value;
	while (insn && !err && cs_disasm_iter(cs, &code, &left, &addr, insn))
		if (is_ret(a, insn->id))
			err = add_off(f, sh.sh_offset + (insn->address - sh.sh_addr));
	if (insn)
		cs_free(insn, 1);
	cs_close(&cs);
	return err;
}

static int scan_elf(Elf *elf, const char *const *names, unsigned n, struct kp_ut_func *out,
		    char *why, size_t whylen)
{
	const struct ret_arch *a;
	struct want *w;
	size_t shnum, missing;
	Elf_Scn *scn = NULL;
	GElf_Ehdr eh;
	GElf_Shdr sh;
	bool any_symtab = false;
	unsigned i;
	int pass, err = 0;

	if (elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh)) {
		snprintf(why, whylen, "not an ELF file");
		return -ENOEXEC;
	}
	if (gelf_getclass(elf) != ELFCLASS64) {
		snprintf(why, whylen, "a 32-bit ELF file: only 64-bit files are supported");
		return -ENOEXEC;
	}
	a = arch_of(eh.e_machine);
	if (!a || eh.e_machine != HOST_MACHINE) {
		snprintf(why, whylen, "an ELF file for machine %u (%s), not for this machine (%s)",
			 eh.e_machine, a ? a->name : "unsupported",
			 arch_of(HOST_MACHINE) ? arch_of(HOST_MACHINE)->name : "unsupported");
		return -ENOEXEC;
	}
	if (eh.e_type != ET_EXEC && eh.e_type != ET_DYN) {
		snprintf(why, whylen, "neither an executable nor a shared library (ELF type %u)",
			 eh.e_type);
		return -ENOEXEC;
	}
	if (elf_getshdrnum(elf, &shnum)) {
		snprintf(why, whylen, "its section headers cannot be read: %s", elf_errmsg(-1));
		return -ENOEXEC;
	}
	w = calloc(n ? n : 1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		w[i].name = names[i];
	/* raw names first: demangling every symbol of a large C++ file is only worth it for
	 * the names that are not found as they are */
	for (pass = 0; pass < 2; pass++) {
		for (i = 0, missing = 0; i < n; i++)
			missing += w[i].rank != RANK_RAW;
		if (pass == 1 && !missing)
			break;
		while ((scn = elf_nextscn(elf, scn))) {
			if (!gelf_getshdr(scn, &sh) ||
			    (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM))
				continue;
			any_symtab = true;
			scan_symtab(elf, scn, &sh, shnum, w, n, pass == 1);
		}
	}
	if (!any_symtab) {
		snprintf(why, whylen, "it has no symbol table (.symtab or .dynsym)");
		free(w);
		return -ENOEXEC;
	}
	for (i = 0; i < n && !err; i++) {
		memset(&out[i], 0, sizeof(out[i]));
		if (w[i].rank != RANK_NONE) {
			err = locate(elf, a, &w[i], &out[i]);
			if (err == -ENOENT) { /* a symbol outside its section: not usable */
				kp_ut_funcs_free(&out[i], 1);
				memset(&out[i], 0, sizeof(out[i]));
				err = 0;
			}
		}
	}
	free(w);
	return err;
}

int kp_ut_elf_scan(const char *path, const char *const *names, unsigned n, struct kp_ut_func *out,
		   char *why, size_t whylen)
{
	Elf *elf;
	int fd, err;

	memset(out, 0, n * sizeof(*out));
	why[0] = '\0';
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		snprintf(why, whylen, "cannot open it: %s", strerror(-err));
		return err;
	}
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf) {
		snprintf(why, whylen, "not an ELF file (%s)", elf_errmsg(-1));
		close(fd);
		return -ENOEXEC;
	}
	err = scan_elf(elf, names, n, out, why, whylen);
	if (err == -ENOMEM)
		snprintf(why, whylen, "out of memory");
	if (err)
		kp_ut_funcs_free(out, n);
	elf_end(elf);
	close(fd);
	return err;
}

void kp_ut_funcs_free(struct kp_ut_func *f, unsigned n)
{
	unsigned i;

	for (i = 0; i < n; i++) {
		free(f[i].rets);
		f[i].rets = NULL;
		f[i].nrets = 0;
	}
}
