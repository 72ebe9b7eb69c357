/*
 * sym_resolve.c - the resolver's state and the symbol.h API: addresses to struct Symbol,
 * callchains to struct Stack lists, each cached so that an address or a stack seen a
 * million times is resolved once.
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

#include "core/core.h"
#include "kperf/pcerrc.h"
#include "kperf/symbol.h"
#include "sym.h"

#define UNKNOWN "[unknown]"
#define KERNEL_MODULE "[kernel.kallsyms]"
#define F_RET 0x100 /* internal: a return address, looked up at addr - 1 */
#define KEY_FLAGS (KP_SYM_DWARF | F_RET)
#define REFRESH_MIN_MS 200 /* re-read a live process's maps on a miss at most this often */

struct sym_stack_ent {
	uint64_t hash;
	unsigned nr;
	unsigned flags;
	bool has_unknown;
	uint64_t *keys; /* address << 1 | exact: canonical addresses lose nothing (bits 63, 62 equal) */
	struct Stack *head;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct sym_hmap procs; /* pid -> struct sym_proc */
static struct sym_hmap kcache; /* (addr, flags) -> struct Symbol */
static struct sym_arena karena;
static uint64_t nsymbols, nstacks;
char sym_empty_str[1];

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

static void forget_proc(pid_t pid)
{
	struct sym_proc *p = get_proc(pid);

	if (!p)
		return;
	sym_hmap_filter(&procs, drop_proc, p);
	sym_proc_free(p);
}

static bool is_unknown_sym(void *val, void *ctx)
{
	(void)ctx;
	return ((struct Symbol *)val)->symbolName == (char *)UNKNOWN ||
	       !strcmp(((struct Symbol *)val)->symbolName, UNKNOWN);
}

static bool is_unknown_stack(void *val, void *ctx)
{
	(void)ctx;
	return ((struct sym_stack_ent *)val)->has_unknown;
}

/* after the maps changed: what was unknown may be known now */
static void forget_unknowns(struct sym_proc *p)
{
	sym_hmap_filter(&p->symbols, is_unknown_sym, NULL);
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
	nsymbols++;
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

static void fill_from_file(struct Symbol *s, struct sym_file *f, uint64_t vaddr, uint64_t vlook,
			   unsigned flags)
{
	const struct sym_elf_sym *es = sym_file_find(f, vlook);

	s->codeMapAddr = vaddr;
	if (es) {
		s->symbolName = (char *)sym_file_sym_demangled(f, es);
		s->mangleName = (char *)sym_file_sym_name(f, es);
		s->offset = vaddr - es->start;
		s->codeMapEndAddr = es->end;
	}
	if ((flags & KP_SYM_DWARF) && f->has_dwarf && !f->dwarf_tried) {
		/* first line asked of this file: open its DWARF now (a failure is remembered) */
		sym_file_dwarf(f);
		sym_demote_error();
	}
	if ((flags & KP_SYM_DWARF) && f->dw) {
		const char *file;
		unsigned line;

		if (sym_dwarf_line(f, vlook, &file, &line) == 0) {
			s->fileName = file ? (char *)file : sym_empty_str;
			s->lineNum = line;
		}
		if (sym_dwarf_decl_line(f, vlook, &line) == 0)
			s->firstLine = line;
	}
}

static uint64_t maps_signature(const struct sym_proc *p)
{
	uint64_t h = p->nmaps;
	size_t i;

	for (i = 0; i < p->nmaps; i++)
		h = sym_hash64(h ^ p->maps[i].start ^ (p->maps[i].end << 1) ^
			       (uint64_t)(uintptr_t)p->maps[i].path);
	return h;
}

/* An address of a live process was not found: re-read its maps (a dlopen, a new JIT region)
 * and its perf map, each at most every REFRESH_MIN_MS. When something changed, the unknown
 * symbols and stacks cached so far are forgotten, to be looked up again. */
static bool refresh_for_unknown(struct sym_proc *p, unsigned flags)
{
	uint64_t now = sym_now_ms(), sig;
	bool changed = false;

	if (p->pid <= 0 || p->gone)
		return false;
	if (now - p->refreshed_ms >= REFRESH_MIN_MS) {
		sig = maps_signature(p);
		if (sym_proc_read_maps(p, flags & KP_SYM_DWARF) == 0)
			changed |= maps_signature(p) != sig;
		p->refreshed_ms = now;
		sym_demote_error();
	}
	if (now - p->jit_checked_ms >= REFRESH_MIN_MS) {
		size_t njit = p->njit;
		off_t size = p->jit_size;

		p->jit_checked_ms = now;
		sym_proc_load_jit(p);
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
		return 0;
	}
	{
		uint64_t vaddr = sym_file_off_to_vaddr(f, off);
		uint64_t vlook =
			look == addr ? vaddr : sym_file_off_to_vaddr(f, look - m->start + m->pgoff);

		fill_from_file(s, f, vaddr, vlook, flags);
	}
	return 0;
}

/* the process entry for <pid>, snapshotting its maps when it was never recorded */
static int ensure_proc(pid_t pid, bool must_exist, struct sym_proc **out)
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
			forget_proc(pid);
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

static int resolve_one(struct sym_proc *p, pid_t pid, uint64_t addr, unsigned flags,
		       struct Symbol **out)
{
	struct Symbol *s;
	int err;

	flags &= KEY_FLAGS;
	if (addr >= KP_SYM_KERNEL_START)
		return resolve_kernel(addr, flags, out);
	if (!p) {
		err = ensure_proc(pid, true, &p);
		if (err)
			return err;
	}
	s = sym_hmap_get(&p->symbols, addr, flags);
	if (s && (s->symbolName != (char *)UNKNOWN || !refreshable(p, addr, flags) ||
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

static uint64_t hash_keys(const uint64_t *keys, unsigned n, unsigned flags)
{
	uint64_t h = 0x84222325cbf29ce4ULL ^ flags;
	unsigned i;

	for (i = 0; i < n; i++)
		h = sym_hash64(h ^ keys[i]) + i;
	return h;
}

/* Does a cached stack with unknown frames have better answers now (code loaded since)? */
static bool unknowns_now_known(struct sym_proc *p, pid_t pid, const struct sym_stack_ent *e)
{
	const struct Stack *node;
	unsigned i;

	for (i = 0, node = e->head; node && i < e->nr; i++, node = node->next) {
		struct Symbol *s;
		uint64_t addr;

		if (node->symbol->symbolName != (char *)UNKNOWN)
			continue;
		/* an arithmetic shift restores the top bit of a (canonical) kernel address */
		addr = (uint64_t)((int64_t)e->keys[i] >> 1);
		if (resolve_one(p, pid, addr, e->flags | ((e->keys[i] & 1) ? 0 : F_RET), &s) == 0 &&
		    s != node->symbol)
			return true;
	}
	return false;
}

static int resolve_stack(pid_t pid, const uint64_t *addrs, unsigned nr, unsigned flags,
			 bool must_exist, struct Stack **out)
{
	struct sym_proc *p = NULL;
	struct sym_stack_ent *e;
	uint64_t *keys, h, k;
	bool need_user = false, prev_kernel = false, after_marker = true;
	struct Stack *nodes;
	unsigned i, n = 0;
	int err;

	*out = NULL;
	flags &= KP_SYM_DWARF;
	if (!addrs || !nr)
		return kp_fail(KPERF_ERR_INVALID_ARG, -EINVAL,
			       "an empty stack (no addresses) cannot be resolved");
	keys = malloc(nr * sizeof(*keys));
	if (!keys)
		return -ENOMEM;
	/* keep real addresses; mark the exact ips (the leaf, the first user frame after kernel
	 * frames, a frame right after a context marker) */
	for (i = 0; i < nr; i++) {
		uint64_t a = addrs[i];
		bool kernel = a >= KP_SYM_KERNEL_START, exact;

		if (a >= KP_SYM_CONTEXT_MAX) {
			after_marker = true;
			continue;
		}
		if (!a)
			continue;
		exact = after_marker || n == 0 || (prev_kernel && !kernel);
		keys[n++] = a << 1 | exact;
		after_marker = false;
		prev_kernel = kernel;
		need_user |= !kernel;
	}
	if (!n) {
		free(keys);
		return kp_fail(KPERF_ERR_INVALID_ARG, -EINVAL,
			       "the stack holds no address (only context markers or zeros)");
	}
	err = ensure_proc(pid, must_exist && need_user, &p);
	if (err)
		goto out;
	h = hash_keys(keys, n, flags);
	for (k = 0;; k++) {
		e = sym_hmap_get(&p->stacks, h, k);
		if (!e)
			break;
		if (e->nr == n && e->flags == flags && !memcmp(e->keys, keys, n * sizeof(*keys))) {
			if (!e->has_unknown || !unknowns_now_known(p, pid, e)) {
				*out = e->head;
				goto out;
			}
			break; /* resolved again below, in this slot */
		}
	}
	e = sym_arena_alloc(&p->arena, sizeof(*e));
	nodes = sym_arena_alloc_aligned(&p->arena, n * sizeof(*nodes), _Alignof(struct Stack));
	if (!e || !nodes) {
		err = -ENOMEM;
		goto out;
	}
	e->keys = sym_arena_alloc(&p->arena, n * sizeof(*keys));
	if (!e->keys) {
		err = -ENOMEM;
		goto out;
	}
	memcpy(e->keys, keys, n * sizeof(*keys));
	e->hash = h;
	e->nr = n;
	e->flags = flags;
	for (i = 0, n = 0; i < nr; i++) {
		uint64_t a = addrs[i];
		struct Symbol *s;

		if (a >= KP_SYM_CONTEXT_MAX || !a)
			continue;
		err = resolve_one(p, pid, a, flags | ((keys[n] & 1) ? 0 : F_RET), &s);
		if (err)
			goto out;
		e->has_unknown |= s->symbolName == (char *)UNKNOWN;
		nodes[n].symbol = s;
		nodes[n].prev = n ? &nodes[n - 1] : NULL;
		if (n)
			nodes[n - 1].next = &nodes[n];
		n++;
	}
	e->head = nodes;
	err = sym_hmap_put(&p->stacks, h, k, e);
	if (err)
		goto out;
	nstacks++;
	*out = nodes;
out:
	free(keys);
	return err;
}

/* ---- the internal API ---- */

int kp_sym_record_kernel(void)
{
	int err;

	pthread_mutex_lock(&lock);
	err = sym_kallsyms_load();
	pthread_mutex_unlock(&lock);
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
	p = get_proc(pid);
	existed = p != NULL;
	if (!p) {
		p = new_proc(pid);
		if (!p)
			return -ENOMEM;
	}
	if (flags & KP_SYM_DWARF)
		p->dwarf = true;
	err = sym_proc_read_maps(p, p->dwarf ? KP_SYM_DWARF : 0);
	if (err) {
		if (!existed || !p->recorded)
			forget_proc(pid);
		/* a record that cannot open /proc/<pid>/maps is libkperf's OPEN_FILE_FAILED (a
		 * resolution of a pid never recorded stays NOT_FIND_PID) */
		return err == -ESRCH ? kp_fail_recode(LIBSYM_ERR_OPEN_FILE_FAILED, err) : err;
	}
	forget_unknowns(p);
	if (p->gone)
		kp_warn(KPERF_WARN_PROC_EXITED,
			"process %d has exited: the mappings recorded before are kept", (int)pid);
	return 0;
}

int kp_sym_record_pid(pid_t pid, unsigned flags)
{
	int err;

	pthread_mutex_lock(&lock);
	err = record_pid_locked(pid, flags);
	pthread_mutex_unlock(&lock);
	return err;
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
	pthread_mutex_lock(&lock);
	p = get_proc(pid);
	if (!p) {
		p = new_proc(pid);
		if (!p) {
			err = -ENOMEM;
			goto out;
		}
		/* told about a process that already exited: open files by their paths */
		p->gone = !sym_proc_alive(pid);
		if (!p->gone)
			p->mnt_point = sym_mnt_point(pid);
	}
	/* MMAP2 without mmap_data only reports executable mappings */
	err = sym_map_fill(&m, start, end, pgoff, path, makedev(maj, min), ino, true);
	if (err)
		goto out;
	err = sym_proc_add_map(p, &m, true, p->dwarf ? KP_SYM_DWARF : 0);
	if (!err) {
		/* an MMAP2 record says the process was alive at that time */
		p->recorded = true;
		forget_unknowns(p);
	}
out:
	pthread_mutex_unlock(&lock);
	return err;
}

int kp_sym_add_mapping(pid_t pid, uint64_t start, uint64_t end, uint64_t pgoff, const char *path)
{
	return kp_sym_add_mapping_id(pid, start, end, pgoff, path, 0, 0, 0);
}

int kp_sym_fork(pid_t parent, pid_t child)
{
	struct sym_proc *pp, *cp;
	int err = 0;

	if (parent <= 0 || child <= 0 || parent == child)
		return kp_fail(LIBSYM_ERR_PARAM_PID_INVALID, -EINVAL,
			       "fork of %d into %d: both must be distinct positive pids",
			       (int)parent, (int)child);
	pthread_mutex_lock(&lock);
	pp = get_proc(parent);
	if (!pp || !pp->nmaps)
		goto out; /* nothing known to copy: the child's maps are read when needed */
	cp = get_proc(child);
	if (!cp)
		cp = new_proc(child);
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
	cp->dwarf = pp->dwarf;
	cp->recorded = true;
	cp->refreshed_ms = sym_now_ms();
	forget_unknowns(cp);
out:
	pthread_mutex_unlock(&lock);
	return err;
}

static bool drop_all(void *val, void *ctx)
{
	(void)val;
	(void)ctx;
	return true;
}

void kp_sym_exec(pid_t pid)
{
	struct sym_proc *p;

	pthread_mutex_lock(&lock);
	p = get_proc(pid);
	if (p) {
		sym_proc_clear_maps(p);
		free(p->jit);
		free(p->jit_names);
		p->jit = NULL;
		p->jit_names = NULL;
		p->njit = 0;
		p->jit_path = NULL;
		p->jit_size = 0;
		p->start_time = 0;
		/* returned symbols and stacks stay allocated; new lookups start afresh */
		sym_hmap_filter(&p->symbols, drop_all, NULL);
		sym_hmap_filter(&p->stacks, drop_all, NULL);
	}
	pthread_mutex_unlock(&lock);
}

int kp_sym_resolve_addr(pid_t pid, uint64_t addr, unsigned flags, struct Symbol **out)
{
	int err;

	*out = NULL;
	if (pid < 0 && addr < KP_SYM_KERNEL_START)
		return kp_fail(LIBSYM_ERR_PARAM_PID_INVALID, -EINVAL,
			       "pid %d is not valid for the user address %#llx", (int)pid,
			       (unsigned long long)addr);
	pthread_mutex_lock(&lock);
	err = resolve_one(NULL, pid, addr, flags, out);
	pthread_mutex_unlock(&lock);
	return err;
}

int kp_sym_resolve_stack(pid_t pid, const uint64_t *addrs, unsigned nr, unsigned flags,
			 struct Stack **out)
{
	int err;

	if (pid < 0)
		pid = 0;
	pthread_mutex_lock(&lock);
	err = resolve_stack(pid, addrs, nr, flags, false, out);
	pthread_mutex_unlock(&lock);
	return err;
}

void kp_sym_forget_pid(pid_t pid)
{
	pthread_mutex_lock(&lock);
	forget_proc(pid);
	pthread_mutex_unlock(&lock);
}

static bool free_proc_cb(void *val, void *ctx)
{
	(void)ctx;
	sym_proc_free(val);
	return true;
}

static void destroy_locked(void)
{
	sym_hmap_filter(&procs, free_proc_cb, NULL);
	sym_hmap_free(&procs);
	sym_hmap_free(&kcache);
	sym_arena_free(&karena);
	sym_kallsyms_free();
	sym_code_free();
	sym_files_free();
	sym_intern_free();
	nsymbols = nstacks = 0;
}

void kp_sym_destroy(void)
{
	pthread_mutex_lock(&lock);
	destroy_locked();
	pthread_mutex_unlock(&lock);
}

void kp_sym_get_stats(struct kp_sym_stats *st)
{
	pthread_mutex_lock(&lock);
	memset(st, 0, sizeof(*st));
	st->files_parsed = sym_files_parsed();
	st->files_cached = sym_files_cached();
	st->dwarf_opened = sym_files_dwarf_opened();
	st->procs = (unsigned)procs.n;
	st->kernel_loads = sym_kallsyms_loads();
	st->symbols = nsymbols;
	st->stacks = nstacks;
	pthread_mutex_unlock(&lock);
}

/* ---- the public API (symbol.h) ---- */

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
	pthread_mutex_lock(&lock);
	err = sym_file_get(&ref, flags, &f);
	if (!err && (flags & KP_SYM_DWARF)) {
		if (!f->has_dwarf)
			err = kp_fail(LIBSYM_ERR_DWARF_FORMAT_FAILED, -ENOENT,
				      "%s has no DWARF debug information, and no separate debug "
				      "file was found for it (by build-id or .gnu_debuglink)",
				      fileName);
		else
			err = sym_file_dwarf(f);
		if (err == -ENOENT && !kp_failed())
			err = kp_fail(LIBSYM_ERR_DWARF_FORMAT_FAILED, err,
				      "the DWARF of %s could not be read", fileName);
	}
	pthread_mutex_unlock(&lock);
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

static unsigned pid_flags(pid_t pid)
{
	struct sym_proc *p = get_proc(pid);

	return p && p->dwarf ? KP_SYM_DWARF : 0;
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
	pthread_mutex_lock(&lock);
	err = resolve_stack(pid, addrs, (unsigned)nr, pid_flags(pid), true, &out);
	pthread_mutex_unlock(&lock);
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
	pthread_mutex_lock(&lock);
	err = resolve_one(NULL, pid, addr, pid_flags(pid), &s);
	pthread_mutex_unlock(&lock);
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
