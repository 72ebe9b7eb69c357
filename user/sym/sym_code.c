/*
 * sym_code.c - questions about an ELF file that need no process: the symbol and source line
 * of one of its addresses (SymResolverMapCodeAddr, with its inline frames KperfMapCodeFrames)
 * and its GNU build-id (SymGetBuildId).
 *
 * Addresses here are file addresses (the ELF's own virtual addresses, what nm and objdump
 * print, Symbol.codeMapAddr of a resolved sample). The symbols MapCodeAddr returns belong to
 * the resolver, as every Symbol does: cached per (file, address), released by
 * SymResolverDestroy, so FreeSymbolPtr on them stays harmless.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <elfutils/libdwelf.h>

#include "core/core.h"
#include "kperf/pcerrc.h"
#include "kperf/symbol.h"
#include "sym.h"

/* libkperf refuses addresses above this as kernel code: arm64's kernel half starts here */
#define KERNEL_CODE_START 0xffff000000000000ULL
/* no build-id scheme comes near it (sha1 is 20 bytes); the file cache keeps 64 */
#define BUILD_ID_MAX 64

static struct sym_hmap code_syms; /* (addr, file | flags) -> struct Symbol */
static struct sym_hmap code_lists; /* Symbol* -> its frames (KperfMapCodeFrames) */
static struct sym_inl_store code_inl;
static struct sym_arena code_arena;

void sym_code_free(void)
{
	sym_hmap_free(&code_syms);
	sym_hmap_free(&code_lists);
	sym_inl_store_free(&code_inl);
	sym_arena_free(&code_arena);
}

/* The checks libkperf makes before it reads a module (and the codes it gives): the file
 * opens, is not empty, and starts with a valid ELF identification. On success *elf is the
 * file opened with libelf (elf_end it), the descriptor already closed. */
static int open_checked(const char *open_path, const char *name, Elf **elf)
{
	struct stat st;
	Elf *e;
	int fd;

	*elf = NULL;
	fd = open(open_path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return kp_fail(LIBSYM_ERR_OPEN_FILE_FAILED, -errno, "cannot open %s: %s", name,
			       strerror(errno));
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_size < EI_NIDENT) {
		close(fd);
		return kp_fail(LIBSYM_ERR_READ_BUILDID, -ENOEXEC, "%s is %s", name,
			       S_ISREG(st.st_mode) ? "too short to be an ELF file" :
						     "not a regular file");
	}
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!e || elf_kind(e) != ELF_K_ELF || gelf_getclass(e) == ELFCLASSNONE ||
	    elf_cntl(e, ELF_C_FDREAD)) {
		if (e)
			elf_end(e);
		close(fd);
		return kp_fail(LIBSYM_ERR_READ_BUILDID, -ENOEXEC, "%s is not an ELF file", name);
	}
	close(fd);
	*elf = e;
	return 0;
}

int sym_elf_check(const char *open_path, const char *name)
{
	Elf *elf;
	int err = open_checked(open_path, name, &elf);

	if (!err)
		elf_end(elf);
	return err;
}

/* a public int function: 0, or libkperf's code (recorded) */
static int code_of(int err)
{
	if (!err)
		return 0;
	kp_public_fail(err);
	return Perrorno();
}

static int read_build_id(const char *name, char **out)
{
	const unsigned char *id;
	GElf_Ehdr eh;
	ssize_t n, i;
	Elf *elf;
	char *hex;
	int err;

	err = open_checked(name, name, &elf);
	if (err)
		return err;
	if (!gelf_getehdr(elf, &eh)) {
		err = kp_fail(LIBSYM_ERR_READ_BUILDID, -ENOEXEC, "%s has a malformed ELF header",
			      name);
		goto out;
	}
	if (eh.e_type != ET_EXEC && eh.e_type != ET_DYN) {
		err = kp_fail(LIBSYM_ERR_READ_BUILDID, -ENOEXEC,
			      "%s is neither an executable nor a shared library (ELF type %u): "
			      "only those carry a build-id",
			      name, (unsigned)eh.e_type);
		goto out;
	}
	n = dwelf_elf_gnu_build_id(elf, (const void **)&id);
	if (n <= 0) {
		err = kp_fail(LIBSYM_ERR_READ_BUILDID, -ENOENT,
			      n < 0 ? "the notes of %s cannot be read" :
				      "%s has no GNU build-id (link it with -Wl,--build-id)",
			      name);
		goto out;
	}
	if (n > BUILD_ID_MAX) {
		err = kp_fail(LIBSYM_ERR_BUILDID_TOO_LONG, -E2BIG,
			      "the build-id of %s is %zd bytes long, more than the %d a build-id "
			      "can have here",
			      name, n, BUILD_ID_MAX);
		goto out;
	}
	hex = malloc((size_t)n * 2 + 1);
	if (!hex) {
		err = kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
		goto out;
	}
	for (i = 0; i < n; i++) {
		hex[2 * i] = "0123456789abcdef"[id[i] >> 4];
		hex[2 * i + 1] = "0123456789abcdef"[id[i] & 15];
	}
	hex[2 * n] = '\0';
	*out = hex;
out:
	elf_end(elf);
	return err;
}

KP_EXPORT int SymGetBuildId(const char *moduleName, char **buildId)
{
	kp_clear();
	if (!buildId)
		return code_of(
			kp_fail(LIBPERF_ERR_NULL_POINTER, -EINVAL,
				"SymGetBuildId needs a place for the build-id (buildId is NULL)"));
	*buildId = NULL;
	if (!moduleName || !*moduleName)
		return code_of(kp_fail(LIBSYM_ERR_OPEN_FILE_FAILED, -EINVAL,
				       "SymGetBuildId needs a module (moduleName is %s)",
				       moduleName ? "empty" : "NULL"));
	return code_of(read_build_id(moduleName, buildId));
}

/* the cached Symbol of file address <addr> of <f>, named <module> */
static int code_symbol(struct sym_file *f, const char *module, uint64_t addr, unsigned flags,
		       struct Symbol **out)
{
	uint64_t key = (uint64_t)(uintptr_t)f | flags; /* a file is 8-aligned, flags < 4 */
	struct Symbol *s;
	unsigned ninl;
	int err;

	s = sym_hmap_get(&code_syms, addr, key);
	if (s && s->module == module) {
		*out = s;
		return 0;
	}
	s = sym_arena_alloc(&code_arena, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->addr = addr;
	s->module = (char *)module;
	s->symbolName = s->mangleName = sym_unknown_str;
	s->fileName = s->mntPoint = sym_empty_str;
	/* a file without DWARF (or with a broken one) still has its symbol */
	err = sym_fill_from_file(s, f, addr, addr, flags | KP_SYM_DWARF, &code_arena, &code_inl,
				 &ninl);
	sym_demote_error();
	if (!err)
		err = sym_hmap_put(&code_syms, addr, key, s);
	if (err)
		return err;
	*out = s;
	return 0;
}

/* SymResolverMapCodeAddr's checks and lookup, the lock held */
static int map_code(const char *moduleName, unsigned long startAddr, unsigned flags,
		    struct Symbol **out)
{
	struct sym_file_ref ref = { 0 };
	struct sym_file *f = NULL;
	const char *module;
	struct stat st;
	int err;

	if (!moduleName || !*moduleName || stat(moduleName, &st) || !S_ISREG(st.st_mode))
		return kp_fail(LIBSYM_ERR_FILE_NOT_RGE, -ENOENT, "%s%s is not a regular file",
			       moduleName ? "module " : "the module (NULL)",
			       moduleName ? moduleName : "");
	if (startAddr > KERNEL_CODE_START)
		return kp_fail(LIBSYM_ERR_MAP_CODE_KERNEL_NOT_SUPPORT, -EINVAL,
			       "%#lx is a kernel address: source lines of kernel code are not "
			       "supported",
			       startAddr);
	ref.path = moduleName;
	ref.open_path = moduleName;
	ref.st = &st; /* one stat per lookup: the file cache knows it by it */
	module = sym_intern(moduleName);
	err = module ? sym_file_get(&ref, KP_SYM_DWARF, &f) : -ENOMEM;
	if (!err)
		sym_file_keep(f); /* its Symbols live until kp_sym_destroy */
	if (!err)
		err = code_symbol(f, module, startAddr, flags, out);
	return err;
}

KP_EXPORT struct Symbol *SymResolverMapCodeAddr(const char *moduleName, unsigned long startAddr)
{
	struct Symbol *s = NULL;
	int err;

	kp_clear();
	sym_lock();
	err = map_code(moduleName, startAddr, 0, &s);
	sym_unlock();
	if (err) {
		kp_public_fail(err);
		return NULL;
	}
	return s;
}

int kp_sym_code_frames(const char *module, uint64_t addr, unsigned flags, struct Stack **out)
{
	const struct sym_inl *inl;
	struct Stack *nodes;
	struct Symbol *s;
	unsigned i, n;
	int err;

	*out = NULL;
	flags &= KP_SYM_INLINE;
	sym_lock();
	err = map_code(module, addr, flags, &s);
	if (err)
		goto out;
	nodes = sym_hmap_get(&code_lists, (uint64_t)(uintptr_t)s, 0);
	if (nodes) {
		*out = nodes;
		goto out;
	}
	inl = sym_inl_get(&code_inl, s);
	n = 1 + (inl ? inl->n : 0);
	nodes = sym_arena_alloc_aligned(&code_arena, n * sizeof(*nodes), _Alignof(struct Stack));
	if (!nodes) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0; i < n; i++) {
		nodes[i].symbol = i + 1 < n ? inl->frames[i] : s;
		nodes[i].prev = i ? &nodes[i - 1] : NULL;
		nodes[i].next = i + 1 < n ? &nodes[i + 1] : NULL;
	}
	err = sym_hmap_put(&code_lists, (uint64_t)(uintptr_t)s, 0, nodes);
	if (!err)
		*out = nodes;
out:
	sym_unlock();
	return err;
}
