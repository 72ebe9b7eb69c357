/*
 * sym_api.c - what the other modules call (sym.h's first part): recording processes and the
 * mappings the side band reports, forks and execs, resolving an address or a stack, and
 * forgetting. Each takes the resolver's lock.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>

#include "core/core.h"
#include "kperf/pcerrc.h"
#include "sym.h"

int kp_sym_record_kernel(void)
{
	int err;

	sym_lock();
	err = sym_kallsyms_load();
	sym_unlock();
	return err;
}

static int record_pid_locked(pid_t pid, unsigned flags)
{
	struct sym_proc *p;
	bool existed;
	int err;

	if (pid < 0)
		return kp_fail(LIBSYM_ERR_PARAM_PID_INVALID, -EINVAL,
			       "pid %d is not valid: a process id is positive", (int)pid);
	if (pid == 0) /* libkperf: no /proc/0/maps to open */
		return kp_fail(LIBSYM_ERR_OPEN_FILE_FAILED, -ENOENT,
			       "pid 0 is no process (there is no /proc/0/maps): give a process id");
	p = sym_proc_get(pid);
	existed = p != NULL;
	if (!p) {
		p = sym_proc_new(pid);
		if (!p)
			return -ENOMEM;
	}
	if (flags & KP_SYM_DWARF)
		p->dwarf = true;
	err = sym_proc_read_maps(p, p->dwarf ? KP_SYM_DWARF : 0);
	if (err) {
		if (!existed || !p->recorded)
			sym_proc_forget(pid);
		/* a record that cannot open /proc/<pid>/maps is libkperf's OPEN_FILE_FAILED (a
		 * resolution of a pid never recorded stays NOT_FIND_PID) */
		return err == -ESRCH ? kp_fail_recode(LIBSYM_ERR_OPEN_FILE_FAILED, err) : err;
	}
	sym_proc_forget_unknowns(p);
	if (p->gone)
		kp_warn(KPERF_WARN_PROC_EXITED,
			"process %d has exited: the mappings recorded before are kept", (int)pid);
	return 0;
}

int kp_sym_record_pid(pid_t pid, unsigned flags)
{
	int err;

	sym_lock();
	err = record_pid_locked(pid, flags);
	sym_unlock();
	return err;
}

void kp_sym_note_root(pid_t pid)
{
	struct sym_proc *p;

	if (pid <= 0 || !sym_proc_alive(pid))
		return;
	sym_lock();
	p = sym_proc_get(pid);
	if (!p)
		p = sym_proc_new(pid);
	if (p)
		p->mnt_point = sym_mnt_point(pid, &p->arena);
	sym_unlock();
}

int kp_sym_add_mapping_id(pid_t pid, uint64_t start, uint64_t end, uint64_t pgoff, const char *path,
			  uint32_t maj, uint32_t min, uint64_t ino)
{
	struct sym_proc *p;
	struct sym_map m;
	int err;

	if (pid <= 0)
		return kp_fail(LIBSYM_ERR_PARAM_PID_INVALID, -EINVAL,
			       "pid %d is not valid: a process id is positive", (int)pid);
	if (end <= start)
		return kp_fail(LIBSYM_ERR_START_SMALLER_END, -EINVAL,
			       "mapping %#llx-%#llx of process %d is empty or reversed",
			       (unsigned long long)start, (unsigned long long)end, (int)pid);
	if (!path)
		path = "";
	sym_lock();
	p = sym_proc_get(pid);
	if (!p) {
		p = sym_proc_new(pid);
		if (!p) {
			err = -ENOMEM;
			goto out;
		}
		/* told about a process that already exited: open files by their paths */
		p->gone = !sym_proc_alive(pid);
	}
	/* where its root is, while it lives (again after an exec: a chroot comes before one) */
	if (!p->gone && !p->mnt_point)
		p->mnt_point = sym_mnt_point(pid, &p->arena);
	if (!p->gone)
		sym_proc_note_identity(p); /* once, and once after an exec */
	/* MMAP2 without mmap_data only reports executable mappings */
	err = sym_map_fill(&m, start, end, pgoff, path, makedev(maj, min), ino, true);
	if (err)
		goto out;
	err = sym_proc_add_map(p, &m, true, p->dwarf ? KP_SYM_DWARF : 0);
	if (!err) {
		/* an MMAP2 record says the process was alive at that time */
		p->recorded = true;
		sym_proc_forget_unknowns(p);
	}
out:
	sym_unlock();
	return err;
}

int kp_sym_add_mapping(pid_t pid, uint64_t start, uint64_t end, uint64_t pgoff, const char *path)
{
	return kp_sym_add_mapping_id(pid, start, end, pgoff, path, 0, 0, 0);
}

int kp_sym_fork(pid_t parent, pid_t child)
{
	struct sym_proc *pp, *cp;
	size_t i;
	int err = 0;

	if (parent <= 0 || child <= 0 || parent == child)
		return kp_fail(LIBSYM_ERR_PARAM_PID_INVALID, -EINVAL,
			       "fork of %d into %d: both must be distinct positive pids",
			       (int)parent, (int)child);
	sym_lock();
	pp = sym_proc_get(parent);
	if (!pp || !pp->nmaps)
		goto out; /* nothing known to copy: the child's maps are read when needed */
	cp = sym_proc_get(child);
	if (!cp)
		cp = sym_proc_new(child);
	if (!cp) {
		err = -ENOMEM;
		goto out;
	}
	sym_proc_clear_maps(cp);
	cp->maps = malloc(pp->nmaps * sizeof(*cp->maps));
	if (!cp->maps) {
		err = -ENOMEM;
		goto out;
	}
	memcpy(cp->maps, pp->maps, pp->nmaps * sizeof(*cp->maps));
	cp->nmaps = cp->cap = pp->nmaps;
	for (i = 0; i < cp->nmaps; i++)
		if (cp->maps[i].file)
			sym_proc_hold_file(cp, cp->maps[i].file); /* the child's own hold */
	cp->dwarf = pp->dwarf;
	cp->recorded = true;
	/* the same user and name; its pid in its namespace is its own only where that is ours */
	cp->id_known = pp->id_known && pp->nspid == pp->pid;
	cp->uid = pp->uid;
	cp->nspid = child;
	cp->born_s = 0; /* not known here: a map it left is not checked against it */
	cp->comm = pp->comm;
	cp->refreshed_ms = sym_now_ms();
	sym_proc_forget_unknowns(cp);
out:
	sym_unlock();
	return err;
}

static bool drop_all(void *val, void *ctx)
{
	(void)val;
	(void)ctx;
	return true;
}

void kp_sym_exec(pid_t pid, const char *comm)
{
	struct sym_proc *p;

	sym_lock();
	p = sym_proc_get(pid);
	if (p) {
		sym_proc_clear_maps(p);
		free(p->jit);
		free(p->jit_names);
		p->jit = NULL;
		p->jit_names = NULL;
		p->njit = 0;
		p->jit_path = NULL;
		p->jit_size = 0;
		p->jit_final = false;
		p->start_time = 0;
		/* its root may have changed before the exec (chroot): asked again while it
		 * lives; the one known so far is kept for a process already gone */
		if (sym_proc_alive(pid))
			p->mnt_point = NULL;
		/* the same process (uid and pid as noted, unless its next look says otherwise)
		 * under another name, maybe another runtime */
		p->id_fresh = false;
		p->comm = comm && *comm ? sym_intern(comm) : NULL;
		p->jit_label = NULL;
		p->jvm_asked_ms = 0;
		p->jvm_refused = false;
		/* returned symbols and stacks stay allocated; new lookups start afresh */
		sym_hmap_filter(&p->symbols, drop_all, NULL);
		sym_hmap_filter(&p->stacks, drop_all, NULL);
	}
	sym_unlock();
}

int kp_sym_resolve_addr(pid_t pid, uint64_t addr, unsigned flags, struct Symbol **out)
{
	int err;

	*out = NULL;
	if (pid < 0 && addr < KP_SYM_KERNEL_START)
		return kp_fail(LIBSYM_ERR_PARAM_PID_INVALID, -EINVAL,
			       "pid %d is not valid for the user address %#llx", (int)pid,
			       (unsigned long long)addr);
	sym_lock();
	err = sym_resolve_one(NULL, pid, addr, flags, out);
	sym_unlock();
	return err;
}

int kp_sym_resolve_stack(pid_t pid, const uint64_t *addrs, unsigned nr, unsigned flags,
			 struct Stack **out)
{
	int err;

	if (pid < 0)
		pid = 0;
	sym_lock();
	sym_ask_jit = flags & KP_SYM_ASK_JIT;
	err = sym_resolve_stack(pid, addrs, nr, flags, false, out);
	sym_ask_jit = false;
	sym_unlock();
	return err;
}

void kp_sym_forget_pid(pid_t pid)
{
	sym_lock();
	sym_proc_forget(pid);
	sym_files_trim(); /* no file pointer is in use between calls */
	sym_unlock();
}

void kp_sym_file_cache_bounds(unsigned files_max, uint64_t bytes_max)
{
	sym_lock();
	sym_files_set_bounds(files_max, bytes_max);
	sym_files_trim();
	sym_unlock();
}

void kp_sym_destroy(void)
{
	sym_lock();
	sym_destroy_locked();
	sym_unlock();
}

void kp_sym_get_stats(struct kp_sym_stats *st)
{
	sym_lock();
	memset(st, 0, sizeof(*st));
	st->files_parsed = sym_files_parsed();
	st->files_cached = sym_files_cached();
	st->dwarf_opened = sym_files_dwarf_opened();
	st->procs = (unsigned)sym_procs_count();
	st->kernel_loads = sym_kallsyms_loads();
	st->symbols = sym_counters.symbols;
	st->stacks = sym_counters.stacks;
	st->inline_frames = sym_counters.inline_frames;
	st->units_parsed = sym_inline_units_parsed();
	sym_files_idle_stats(&st->files_idle, &st->files_idle_bytes, &st->files_evicted);
	sym_unlock();
}

bool kp_sym_knows_pid(pid_t pid)
{
	bool known;

	sym_lock();
	known = pid > 0 && sym_proc_get(pid) != NULL;
	sym_unlock();
	return known;
}
