/*
 * sym_resolve.c - the resolver's state, and one address to its struct Symbol: a kernel
 * symbol, a JIT symbol from a perf map, or a file's symbol with its line and inline frames;
 * cached so that an address seen a million times is resolved once (sym_stack.c does the same
 * for callchains, sym_api.c and sym_public.c are the entry points).
 *
 * One lock guards everything: resolution is a hash lookup once warm, and the cold path
 * parses files that must not be parsed twice. Symbols of a process live in its arena and go
 * with FreeModuleData(pid); their strings are interned or belong to the file cache, which
 * lives until SymResolverDestroy(), so a symbol never points into memory freed earlier.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <linux/types.h>

#include "core/core.h"
#include "kperf/pcerrc.h"
#include "kperf/symbol.h"
#include "pyframes.h"
#include "sym.h"

#define UNKNOWN sym_unknown_str
#define KERNEL_MODULE "[kernel.kallsyms]"
#define F_RET SYM_F_RET
#define KEY_FLAGS (KP_SYM_DWARF | KP_SYM_INLINE | F_RET)
#define REFRESH_MIN_MS 200 /* re-read a live process's maps on a miss at most this often */

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct sym_hmap procs; /* pid -> struct sym_proc */
static struct sym_hmap kcache; /* (addr, flags) -> struct Symbol */
static struct sym_arena karena;
struct sym_counters sym_counters;
char sym_empty_str[1];
char sym_unknown_str[] = "[unknown]";

void sym_lock(void)
{
	pthread_mutex_lock(&lock);
}

void sym_unlock(void)
{
	pthread_mutex_unlock(&lock);
}

static struct sym_proc *get_proc(pid_t pid)
{
	return sym_hmap_get(&procs, (uint64_t)pid, 0);
}

struct sym_proc *sym_proc_get(pid_t pid)
{
	return get_proc(pid);
}

static struct sym_proc *new_proc(pid_t pid)
{
	struct sym_proc *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->pid = pid;
	if (sym_hmap_put(&procs, (uint64_t)pid, 0, p)) {
		free(p);
		return NULL;
	}
	return p;
}

struct sym_proc *sym_proc_new(pid_t pid)
{
	return new_proc(pid);
}

static bool drop_proc(void *val, void *ctx)
{
	return val == ctx;
}

void sym_proc_forget(pid_t pid)
{
	struct sym_proc *p = get_proc(pid);

	if (!p)
		return;
	sym_hmap_filter(&procs, drop_proc, p);
	sym_proc_free(p);
}

/* <ctx>: the process the symbol belongs to (its JIT label), NULL for the kernel's */
static bool is_unknown_sym(void *val, void *ctx)
{
	return sym_unresolved(ctx, val) || !strcmp(((struct Symbol *)val)->symbolName, UNKNOWN);
}

static bool is_unknown_stack(void *val, void *ctx)
{
	(void)ctx;
	return ((struct sym_stack_ent *)val)->has_unknown;
}

/* after the maps changed: what was unknown may be known now */
static void forget_unknowns(struct sym_proc *p)
{
	sym_hmap_filter(&p->symbols, is_unknown_sym, p);
	sym_hmap_filter(&p->stacks, is_unknown_stack, NULL);
}

void sym_proc_forget_unknowns(struct sym_proc *p)
{
	forget_unknowns(p);
}

static struct Symbol *new_symbol(struct sym_arena *a, uint64_t addr)
{
	struct Symbol *s = sym_arena_alloc(a, sizeof(*s));

	if (!s)
		return NULL;
	s->addr = addr;
	s->module = (char *)UNKNOWN;
	s->symbolName = (char *)UNKNOWN;
	s->mangleName = (char *)UNKNOWN;
	s->fileName = sym_empty_str;
	s->mntPoint = sym_empty_str;
	sym_counters.symbols++;
	return s;
}

/* ---- kernel ---- */

static int resolve_kernel(uint64_t addr, unsigned flags, struct Symbol **out)
{
	const struct sym_ksym *ks;
	uint64_t look = (flags & F_RET) ? addr - 1 : addr;
	struct Symbol *s;
	bool changed = false;
	int err;

	flags &= F_RET;
	s = sym_hmap_get(&kcache, addr, flags);
	if (s && s->symbolName != (char *)UNKNOWN) {
		*out = s;
		return 0;
	}
	err = sym_kallsyms_load();
	if (err)
		return err;
	/* unknown, cached or not: code loaded since (a module, a BPF program) may be it; the
	 * table is read again at most once a second, and never for the core kernel's text */
	ks = sym_kallsyms_find(look, true, &changed);
	sym_demote_error(); /* a failed reload: the old table stays, the address unknown */
	if (changed)
		sym_hmap_filter(&kcache, is_unknown_sym, NULL);
	else if (s) {
		*out = s;
		return 0;
	}
	s = new_symbol(&karena, addr);
	if (!s)
		return -ENOMEM;
	s->module = (char *)KERNEL_MODULE;
	s->codeMapAddr = addr;
	if (ks) {
		const char *name = sym_intern(ks->name);

		if (!name)
			return -ENOMEM;
		s->module = (char *)ks->module;
		s->symbolName = s->mangleName = (char *)name;
		s->offset = addr - ks->start;
		s->codeMapEndAddr = ks->end;
	}
	if (sym_hmap_put(&kcache, addr, flags, s))
		return -ENOMEM;
	*out = s;
	return 0;
}

/* ---- user ---- */

static uint64_t maps_signature(const struct sym_proc *p)
{
	uint64_t h = p->nmaps;
	size_t i;

	for (i = 0; i < p->nmaps; i++)
		h = sym_hash64(h ^ p->maps[i].start ^ (p->maps[i].end << 1) ^
			       (uint64_t)(uintptr_t)p->maps[i].path);
	return h;
}

/* An address of a process was not found: re-read its maps (a dlopen, a new JIT region) and
 * its perf map, each at most every REFRESH_MIN_MS, a running JVM asked to write its map first
 * (KP_SYM_ASK_JIT); once it is gone, the perf map it left, once. When something changed, the
 * unknown symbols and stacks cached so far are forgotten, to be looked up again. */
static bool refresh_for_unknown(struct sym_proc *p, unsigned flags)
{
	uint64_t now = sym_now_ms(), sig;
	bool changed = false;

	if (p->pid <= 0 || (p->gone && p->jit_final))
		return false;
	if (!p->gone && now - p->refreshed_ms < REFRESH_MIN_MS &&
	    now - p->jit_checked_ms < REFRESH_MIN_MS)
		return false;
	if (!p->gone && p->recorded && !sym_proc_alive(p->pid))
		p->gone = true; /* reaped: what it left behind is all there is */
	if (!p->gone && now - p->refreshed_ms >= REFRESH_MIN_MS) {
		sig = maps_signature(p);
		if (sym_proc_read_maps(p, flags & KP_SYM_DWARF) == 0)
			changed |= maps_signature(p) != sig;
		p->refreshed_ms = now;
		sym_demote_error();
	}
	if (p->gone ? !p->jit_final : now - p->jit_checked_ms >= REFRESH_MIN_MS) {
		size_t njit = p->njit;
		off_t size;

		sym_proc_ask_jvm(p); /* a JVM that wrote its map: jit_size -1, read it again */
		size = p->jit_size;
		sym_proc_load_jit(p);
		p->jit_checked_ms = sym_now_ms();
		changed |= p->njit != njit || p->jit_size != size;
	}
	if (changed)
		forget_unknowns(p);
	return changed;
}

/* Could looking again help an unknown address? Only when nothing or anonymous memory was
 * mapped there (a file mapped without a symbol there stays as it is). */
static bool refreshable(struct sym_proc *p, uint64_t addr, unsigned flags)
{
	struct sym_map *m = sym_proc_find_map(p, (flags & F_RET) && addr ? addr - 1 : addr);

	return !m || m->kind == SYM_MAP_ANON;
}

/* a JIT symbol from the perf map; its names are copied, the map is read again as it grows */
static int fill_from_jit(struct sym_proc *p, const struct sym_jit_sym *j, uint64_t addr,
			 struct Symbol *s)
{
	char *d = sym_demangle(j->name);
	size_t len = strlen(j->name) + 1;
	char *raw = sym_arena_alloc(&p->arena, len);

	if (!raw) {
		free(d);
		return -ENOMEM;
	}
	memcpy(raw, j->name, len);
	s->module = (char *)p->jit_path;
	s->mangleName = s->symbolName = raw;
	if (d) {
		size_t dl = strlen(d) + 1;

		s->symbolName = sym_arena_alloc(&p->arena, dl);
		if (!s->symbolName) {
			free(d);
			return -ENOMEM;
		}
		memcpy(s->symbolName, d, dl);
		free(d);
	}
	s->offset = addr - j->start;
	s->codeMapAddr = addr;
	s->codeMapEndAddr = j->end;
	return 0;
}

static int resolve_user(struct sym_proc *p, uint64_t addr, unsigned flags, struct Symbol *s)
{
	uint64_t look = (flags & F_RET) && addr ? addr - 1 : addr;
	const struct sym_jit_sym *j;
	struct sym_map *m;
	struct sym_file *f = NULL;
	uint64_t off;

	m = sym_proc_find_map(p, look);
	if (!m || m->kind == SYM_MAP_ANON) {
		j = sym_proc_find_jit(p, look);
		if (!j) {
			refresh_for_unknown(p, flags);
			/* the maps may have been read again (and moved): look them up anew */
			m = sym_proc_find_map(p, look);
			j = sym_proc_find_jit(p, look);
		}
		if (j)
			return fill_from_jit(p, j, addr, s);
	}
	if (!m) {
		s->codeMapAddr = addr;
		return 0;
	}
	s->module = (char *)(m->path[0] ? m->path : "[anon]");
	if (m->kind == SYM_MAP_FILE && p->mnt_point)
		s->mntPoint = (char *)p->mnt_point;
	off = addr - m->start + m->pgoff;
	if (m->kind != SYM_MAP_ANON)
		f = sym_proc_map_file(p, m, flags & KP_SYM_DWARF);
	if (!f) {
		/* not an ELF we can read (a memfd holding JIT code...): the perf map may know it */
		j = m->kind != SYM_MAP_ANON ? sym_proc_find_jit(p, look) : NULL;
		if (j)
			return fill_from_jit(p, j, addr, s);
		s->codeMapAddr = m->kind == SYM_MAP_FILE ? off : addr;
		if (sym_map_is_jit(m)) {
			/* JIT code no map names: one name for all of it, not one per address */
			const char *label = sym_proc_jit_label(p);

			if (!label)
				return -ENOMEM;
			s->symbolName = s->mangleName = (char *)label;
			s->offset = addr - m->start;
		}
		return 0;
	}
	{
		uint64_t vaddr = sym_file_off_to_vaddr(f, off);
		uint64_t vlook =
			look == addr ? vaddr : sym_file_off_to_vaddr(f, look - m->start + m->pgoff);
		unsigned ninl;
		int err = sym_fill_from_file(s, f, vaddr, vlook, flags, &p->arena, &p->inl, &ninl);

		sym_counters.inline_frames += ninl;
		return err;
	}
}

int sym_ensure_proc(pid_t pid, bool must_exist, struct sym_proc **out)
{
	struct sym_proc *p = get_proc(pid);
	int err;

	if (p && (p->recorded || p->gone || pid == 0)) {
		*out = p;
		return 0;
	}
	if (!p) {
		p = new_proc(pid);
		if (!p)
			return -ENOMEM;
	}
	if (pid == 0) {
		p->gone = true; /* the idle task: kernel addresses only */
		*out = p;
		return 0;
	}
	err = sym_proc_read_maps(p, 0);
	if (err) {
		if (must_exist) {
			sym_proc_forget(pid);
			return err;
		}
		/* resolve what can be: kernel frames, [unknown] for the rest */
		kp_clear();
		kp_warn(KPERF_WARN_SYM_INCOMPLETE,
			"process %d is gone and was never recorded: its user addresses resolve "
			"to [unknown]",
			(int)pid);
		p->gone = true;
	}
	*out = p;
	return 0;
}

int sym_resolve_one(struct sym_proc *p, pid_t pid, uint64_t addr, unsigned flags,
		    struct Symbol **out)
{
	struct Symbol *s;
	int err;

	flags &= KEY_FLAGS;
	if ((addr & KP_PY_TAG_MASK) == KP_PY_TAG)
		return sym_py_resolve(p, pid, addr, out);
	if (addr >= KP_SYM_KERNEL_START)
		return resolve_kernel(addr, flags, out);
	if (!p) {
		err = sym_ensure_proc(pid, true, &p);
		if (err)
			return err;
	}
	s = sym_hmap_get(&p->symbols, addr, flags);
	if (s && (!sym_unresolved(p, s) || !refreshable(p, addr, flags) ||
		  !refresh_for_unknown(p, flags))) {
		*out = s;
		return 0;
	}
	s = new_symbol(&p->arena, addr);
	if (!s)
		return -ENOMEM;
	err = resolve_user(p, addr, flags, s);
	if (!err)
		err = sym_hmap_put(&p->symbols, addr, flags, s);
	if (err)
		return err;
	*out = s;
	return 0;
}

const struct sym_inl *sym_inlines_of(const struct sym_proc *p, const struct Symbol *s)
{
	return p ? sym_inl_get(&p->inl, s) : NULL;
}

unsigned sym_pid_flags(pid_t pid)
{
	struct sym_proc *p = get_proc(pid);

	return p && p->dwarf ? KP_SYM_DWARF : 0;
}

size_t sym_procs_count(void)
{
	return procs.n;
}

static bool free_proc_cb(void *val, void *ctx)
{
	(void)ctx;
	sym_proc_free(val);
	return true;
}

void sym_destroy_locked(void)
{
	sym_hmap_filter(&procs, free_proc_cb, NULL);
	sym_hmap_free(&procs);
	sym_hmap_free(&kcache);
	sym_arena_free(&karena);
	sym_kallsyms_free();
	sym_code_free();
	sym_files_free();
	sym_intern_free();
	memset(&sym_counters, 0, sizeof(sym_counters));
}
