/*
 * sym_public.c - the symbol resolver's public API: libkperf's symbol.h (SymResolver*,
 * StackToHash, ...) and what kperf.h adds to it (inline frames, aliases).
 *
 * libkperf's int calls return the error code itself; its pointer calls NULL, with
 * Perrorno()/Perror() set in both cases.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "kperf/kperf.h"
#include "kperf/pcerrc.h"
#include "sym.h"

/* libkperf's int calls of symbol.h return the error code itself (LIBSYM_ERR_*), not -1 */
static int public_code(int err)
{
	kp_public_fail(err);
	return Perrorno();
}

KP_EXPORT void SymResolverInit(void)
{
	kp_clear();
}

KP_EXPORT int SymResolverRecordKernel(void)
{
	int err;

	kp_clear();
	err = kp_sym_record_kernel();
	return err ? public_code(err) : 0;
}

/* A record is always incremental: the maps read now are merged with what was known, so
 * SymResolverIncrUpdateModule* and SymResolverRecordModule* do the same. */
static int record_module(int pid, unsigned flags)
{
	int err;

	kp_clear();
	err = kp_sym_record_pid(pid, flags);
	return err ? public_code(err) : 0;
}

KP_EXPORT int SymResolverRecordModule(int pid)
{
	return record_module(pid, KP_SYM_DWARF);
}

KP_EXPORT int SymResolverRecordModuleNoDwarf(int pid)
{
	return record_module(pid, 0);
}

KP_EXPORT int SymResolverIncrUpdateModule(int pid)
{
	return record_module(pid, KP_SYM_DWARF);
}

KP_EXPORT int SymResolverIncrUpdateModuleNoDwarf(int pid)
{
	return record_module(pid, 0);
}

static int record_file(const char *fileName, unsigned flags)
{
	struct sym_file_ref ref = { 0 };
	struct sym_file *f = NULL;
	int err;

	kp_clear();
	if (!fileName || !*fileName)
		return public_code(
			kp_fail(LIBSYM_ERR_OPEN_FILE_FAILED, -EINVAL, "no file name given"));
	ref.path = fileName;
	ref.open_path = fileName;
	sym_lock();
	err = sym_file_get(&ref, flags, &f);
	if (!err)
		sym_file_keep(f); /* recorded by name: kept for the resolver's life, as libkperf */
	if (!err && (flags & KP_SYM_DWARF)) {
		err = sym_file_dwarf(f);
		if (err == -ENOENT && !f->has_dwarf && !kp_failed())
			err = kp_fail(LIBSYM_ERR_DWARF_FORMAT_FAILED, -ENOENT,
				      "%s has no DWARF debug information, and no separate debug "
				      "file was found for it (by build-id or .gnu_debuglink)",
				      fileName);
		if (err == -ENOENT && !kp_failed())
			err = kp_fail(LIBSYM_ERR_DWARF_FORMAT_FAILED, err,
				      "the DWARF of %s could not be read", fileName);
	}
	sym_unlock();
	return err ? public_code(err) : 0;
}

KP_EXPORT int SymResolverRecordElf(const char *fileName)
{
	return record_file(fileName, 0);
}

KP_EXPORT int SymResolverRecordDwarf(const char *fileName)
{
	return record_file(fileName, KP_SYM_DWARF);
}

KP_EXPORT void SymResolverDestroy(void)
{
	kp_clear();
	kp_sym_destroy();
}

/* the flags of KperfSymOpts (NULL: none asked); -1 with the error recorded */
static int opts_flags(const struct KperfSymOpts *opts, unsigned *flags)
{
	struct KperfSymOpts o;

	*flags = 0;
	if (kp_opts_copy(&o, sizeof(o), opts, opts ? opts->sz : 0, "KperfSymOpts"))
		return -1;
	if (o.dwarf > 1 || o.inlineFrames > 1) {
		kp_fail(KPERF_ERR_INVALID_ATTR, -EINVAL,
			"KperfSymOpts: dwarf and inlineFrames are 0 or 1 (dwarf %u, inlineFrames %u)",
			o.dwarf, o.inlineFrames);
		return -1;
	}
	if (o.dwarf || o.inlineFrames)
		*flags |= KP_SYM_DWARF;
	if (o.inlineFrames)
		*flags |= KP_SYM_INLINE;
	return 0;
}

static struct Stack *stack_to_hash(int pid, unsigned long *stack, int nr,
				   const struct KperfSymOpts *opts)
{
	struct Stack *out = NULL;
	uint64_t *addrs;
	unsigned flags;
	int i, err;

	kp_clear();
	if (opts_flags(opts, &flags))
		return NULL;
	if (pid < 0) {
		kp_fail(LIBSYM_ERR_PARAM_PID_INVALID, -EINVAL,
			"pid %d is not valid: a process id is 0 (kernel only) or positive", pid);
		return NULL;
	}
	if (nr <= 0)
		return NULL; /* no frames: no list, and no error (as libkperf) */
	if (!stack) {
		kp_fail(LIBPERF_ERR_NULL_POINTER, -EINVAL, "stack is NULL but nr is %d", nr);
		return NULL;
	}
	addrs = malloc((size_t)nr * sizeof(*addrs));
	if (!addrs) {
		kp_public_fail(-ENOMEM);
		return NULL;
	}
	for (i = 0; i < nr; i++)
		addrs[i] = stack[i];
	sym_lock();
	err = sym_resolve_stack(pid, addrs, (unsigned)nr, flags | sym_pid_flags(pid), true, &out);
	sym_unlock();
	free(addrs);
	if (err) {
		kp_public_fail(err);
		return NULL;
	}
	return out;
}

KP_EXPORT struct Stack *StackToHash(int pid, unsigned long *stack, int nr)
{
	return stack_to_hash(pid, stack, nr, NULL);
}

KP_EXPORT struct Stack *KperfStackToHash(int pid, unsigned long *stack, int nr,
					 const struct KperfSymOpts *opts)
{
	return stack_to_hash(pid, stack, nr, opts);
}

KP_EXPORT struct Stack *KperfMapCodeFrames(const char *moduleName, unsigned long addr,
					   const struct KperfSymOpts *opts)
{
	struct Stack *out = NULL;
	unsigned flags;
	int err;

	kp_clear();
	if (opts_flags(opts, &flags))
		return NULL;
	err = kp_sym_code_frames(moduleName, addr, flags, &out);
	if (err) {
		kp_public_fail(err);
		return NULL;
	}
	return out;
}

KP_EXPORT int KperfSymbolGetInfo(const struct Symbol *sym, struct KperfSymbolInfo *info)
{
	struct KperfSymbolInfo o = { sizeof(o) };
	size_t sz, len;

	kp_clear();
	if (!sym || !info) {
		kp_fail(LIBPERF_ERR_NULL_POINTER, -EINVAL, "KperfSymbolGetInfo: %s is NULL",
			sym ? "info" : "sym");
		return -1;
	}
	sz = info->sz;
	if (sz < sizeof(size_t)) {
		kp_fail(KPERF_ERR_INVALID_ATTR, -EINVAL,
			"KperfSymbolInfo.sz is %zu: set it to sizeof(struct KperfSymbolInfo)", sz);
		return -1;
	}
	o.inlined = kp_sym_is_inline(sym);
	len = sym->symbolName ? kp_sym_base_len(sym->symbolName) : 0;
	o.baseNameLen = len > UINT32_MAX ? UINT32_MAX : (unsigned)len;
	/* an older caller's smaller struct gets what it has room for */
	memcpy(info, &o, sz < sizeof(o) ? sz : sizeof(o));
	info->sz = sz;
	return 0;
}

/* the file of a resolved Symbol, as the caller sees it: mntPoint + module */
static int symbol_file(const struct Symbol *sym, char **path)
{
	const char *mnt = sym->mntPoint ? sym->mntPoint : "";

	*path = NULL;
	if (!sym->module || sym->module[0] != '/')
		return 0; /* [kernel.kallsyms], [vdso], [unknown]... */
	if (asprintf(path, "%s%s", mnt, sym->module) < 0) {
		*path = NULL;
		return -ENOMEM;
	}
	return 0;
}

static int list_aliases(const struct Symbol *sym, const char *path, char ***out)
{
	struct sym_file_ref ref = { .path = sym->module, .open_path = path };
	const struct sym_elf_sym *es = NULL;
	struct sym_file *f = NULL;
	const char *name;
	size_t n = 0, bytes = sizeof(char *), i;
	char **v, *p;
	int err = 0;

	sym_lock();
	if (path) {
		err = sym_file_get(&ref, 0, &f);
		if (err == -ENOEXEC) {
			/* not an ELF (a perf map of JIT code): no symbol table, no aliases */
			kp_clear();
			err = 0;
		} else if (!err && sym->offset <= sym->codeMapAddr) {
			es = sym_file_find(f, sym->codeMapAddr - sym->offset);
		}
	}
	for (i = 0; es && (name = sym_file_alias_name(f, es, (unsigned)i)); i++) {
		n++;
		bytes += sizeof(char *) + strlen(name) + 1;
	}
	v = err ? NULL : malloc(bytes);
	if (!v) {
		sym_unlock();
		return err ? err : -ENOMEM;
	}
	p = (char *)(v + n + 1);
	for (i = 0; i < n; i++) {
		name = sym_file_alias_name(f, es, (unsigned)i);
		v[i] = strcpy(p, name);
		p += strlen(name) + 1;
	}
	v[n] = NULL;
	sym_unlock();
	*out = v;
	return (int)n;
}

KP_EXPORT int KperfSymbolAliases(const struct Symbol *sym, char ***aliases)
{
	char *path = NULL;
	int r;

	kp_clear();
	if (!sym || !aliases) {
		kp_fail(LIBPERF_ERR_NULL_POINTER, -EINVAL, "KperfSymbolAliases: %s is NULL",
			sym ? "aliases" : "sym");
		return -1;
	}
	*aliases = NULL;
	r = kp_sym_is_inline(sym) ? 0 : symbol_file(sym, &path);
	if (r == 0)
		r = list_aliases(sym, path, aliases);
	free(path);
	if (r < 0) {
		kp_public_fail(r);
		return -1;
	}
	return r;
}

KP_EXPORT struct Symbol *SymResolverMapAddr(int pid, unsigned long addr)
{
	struct Symbol *s = NULL;
	int err;

	kp_clear();
	if (pid < 0 && addr < KP_SYM_KERNEL_START) {
		kp_fail(LIBSYM_ERR_PARAM_PID_INVALID, -EINVAL,
			"pid %d is not valid: a process id is positive", pid);
		return NULL;
	}
	sym_lock();
	err = sym_resolve_one(NULL, pid, addr, sym_pid_flags(pid), &s);
	sym_unlock();
	if (err) {
		kp_public_fail(err);
		return NULL;
	}
	return s;
}

KP_EXPORT void FreeSymbolPtr(struct Symbol *symbol)
{
	/* Symbols belong to the resolver (libkperf hands out the same cached pointers): they
	 * are released by FreeModuleData/SymResolverDestroy, so freeing one is a no-op rather
	 * than a double free of a pointer other stacks share. */
	(void)symbol;
	kp_clear();
}

KP_EXPORT void FreeModuleData(int pid)
{
	kp_clear();
	kp_sym_forget_pid(pid);
}
