/*
 * sym_public.c - the symbol resolver's public API: libkperf's symbol.h (SymResolver*,
 * StackToHash, ...) and what kperf.h adds to it (inline frames, aliases).
 *
 * libkperf's int calls return the error code itself; its pointer calls NULL, with
 * Perrorno()/Perror() set in both cases.
 */
#include <errno.h>
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

KP_EXPORT struct Stack *StackToHash(int pid, unsigned long *stack, int nr)
{
	struct Stack *out = NULL;
	uint64_t *addrs;
	int i, err;

	kp_clear();
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
	err = sym_resolve_stack(pid, addrs, (unsigned)nr, sym_pid_flags(pid), true, &out);
	sym_unlock();
	free(addrs);
	if (err) {
		kp_public_fail(err);
		return NULL;
	}
	return out;
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
