/*
 * sym_module.c - modules a caller tells the resolver about: SymResolverUpdateModule says that
 * an ELF file is loaded in a process at an address (what a PERF_RECORD_MMAP of the caller's own
 * reading announces, or a module loaded by hand), so that the process's addresses there resolve
 * even when its maps never showed it (it was gone before they were read).
 *
 * As in libkperf, a process never recorded is recorded first, a live one's maps are read again,
 * and a module it already maps (by path or by file) is left where it is. The module is mapped as
 * the loader maps it: each PT_LOAD segment, a shared object or PIE shifted so that its first page
 * is at the address given, an ET_EXEC at its own addresses.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <elf.h>

#include "core/core.h"
#include "kperf/pcerrc.h"
#include "kperf/symbol.h"
#include "sym.h"

/* Does <p> map <path> (interned) or the file <f> already? Mappings of <path> whose file could
 * not be opened get <f>. */
static bool maps_module(struct sym_proc *p, const char *path, struct sym_file *f)
{
	bool found = false;
	size_t i;

	for (i = 0; i < p->nmaps; i++) {
		struct sym_map *m = &p->maps[i];

		if (m->path == path && !m->file && m->kind == SYM_MAP_FILE) {
			m->file = f;
			m->load_tried = true;
			sym_proc_hold_file(p, f);
		}
		found |= m->path == path || m->file == f;
	}
	return found;
}

/* map the PT_LOAD segments of <f> into <p>, its first page at <start> */
static int map_segments(struct sym_proc *p, struct sym_file *f, const char *path, uint64_t start,
			unsigned flags)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE), low = UINT64_MAX, bias = 0;
	unsigned i;
	int err;

	for (i = 0; i < f->nsegs; i++)
		if ((f->segs[i].vaddr & ~(page - 1)) < low)
			low = f->segs[i].vaddr & ~(page - 1);
	if (!f->nsegs)
		return kp_fail(LIBSYM_ERR_ELFIN_FOMAT_FAILED, -ENOEXEC,
			       "%s has no loadable segment", path);
	if (f->e_type == ET_DYN)
		bias = start - low;
	for (i = 0; i < f->nsegs; i++) {
		const struct sym_seg *sg = &f->segs[i];
		uint64_t s = bias + (sg->vaddr & ~(page - 1));
		uint64_t e = (bias + sg->vaddr + sg->memsz + page - 1) & ~(page - 1);
		struct sym_map m;

		if (!sg->memsz)
			continue;
		if (e <= s || s < bias)
			return kp_fail(KPERF_ERR_INVALID_ARG, -ERANGE,
				       "%s loaded at %#llx does not fit in the address space", path,
				       (unsigned long long)start);
		err = sym_map_fill(&m, s, e, sg->offset & ~(page - 1), path, 0, 0, sg->exec);
		if (err)
			return err;
		/* the file is known already: no need to look for it through the process */
		m.file = f;
		m.load_tried = true;
		sym_proc_hold_file(p, f);
		err = sym_proc_add_map(p, &m, false, flags);
		if (err)
			return err;
	}
	return 0;
}

int kp_sym_add_module(pid_t pid, const char *path, uint64_t start, unsigned flags)
{
	char open_path[PATH_MAX + 64];
	struct sym_file_ref ref = { 0 };
	struct sym_file *f = NULL;
	struct sym_proc *p;
	const char *ipath;
	struct stat st;
	bool alive;
	int err;

	if (pid <= 0)
		return kp_fail(LIBSYM_ERR_PARAM_PID_INVALID, -EINVAL,
			       "pid %d is not valid: a process id is positive", (int)pid);
	if (!path || !*path)
		return kp_fail(LIBSYM_ERR_FILE_NOT_RGE, -EINVAL,
			       "no module given (moduleName is %s)", path ? "empty" : "NULL");
	alive = sym_proc_alive(pid);
	/* the file as the process names it: through its root while it lives (a container) */
	snprintf(open_path, sizeof(open_path), "%s", path);
	if (alive && path[0] == '/') {
		char in_root[sizeof(open_path)];

		snprintf(in_root, sizeof(in_root), "/proc/%d/root%s", (int)pid, path);
		if (stat(in_root, &st) == 0)
			snprintf(open_path, sizeof(open_path), "%s", in_root);
	}
	if (stat(open_path, &st))
		return kp_fail(LIBSYM_ERR_FILE_NOT_RGE, -errno, "module %s: %s", path,
			       strerror(errno));
	if (!S_ISREG(st.st_mode))
		return kp_fail(LIBSYM_ERR_FILE_NOT_RGE, -EISDIR, "module %s is not a regular file",
			       path);
	err = sym_elf_check(open_path, path);
	if (err)
		return err;
	sym_lock();
	ipath = sym_intern(path);
	p = sym_proc_get(pid);
	if (!ipath) {
		err = -ENOMEM;
		goto out;
	}
	if (!p && !alive) {
		err = kp_fail(LIBSYM_ERR_NOT_FIND_PID, -ESRCH,
			      "process %d does not exist and was never recorded: there is nothing "
			      "to add %s to",
			      (int)pid, path);
		goto out;
	}
	if (!p)
		p = sym_proc_new(pid);
	if (!p) {
		err = -ENOMEM;
		goto out;
	}
	if (flags & KP_SYM_DWARF)
		p->dwarf = true;
	/* what it maps now first (a process that exited keeps what was recorded) */
	if (!p->gone) {
		err = sym_proc_read_maps(p, p->dwarf ? KP_SYM_DWARF : 0);
		if (err)
			goto out;
	}
	ref.path = path;
	ref.open_path = open_path;
	ref.pid = alive ? pid : 0;
	err = sym_file_get(&ref, flags, &f);
	if (err)
		goto out;
	if (!maps_module(p, ipath, f))
		err = map_segments(p, f, ipath, start, flags);
	if (!err) {
		p->recorded = true;
		sym_proc_forget_unknowns(p);
	}
out:
	sym_unlock();
	return err;
}

static int update_module(int pid, const char *moduleName, unsigned long startAddr, unsigned flags)
{
	int err;

	kp_clear();
	err = kp_sym_add_module(pid, moduleName, startAddr, flags);
	if (!err)
		return 0;
	kp_public_fail(err);
	return Perrorno();
}

KP_EXPORT int SymResolverUpdateModule(int pid, const char *moduleName, unsigned long startAddr)
{
	return update_module(pid, moduleName, startAddr, KP_SYM_DWARF);
}

KP_EXPORT int SymResolverUpdateModuleNoDwarf(int pid, const char *moduleName,
					     unsigned long startAddr)
{
	return update_module(pid, moduleName, startAddr, 0);
}
