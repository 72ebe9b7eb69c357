/*
 * sym.h - the symbol resolver: kernel addresses through /proc/kallsyms, user addresses through
 * the process's mappings and the ELF/DWARF of the mapped files (sym_resolve.c implements the
 * public symbol.h API on top of this).
 *
 * The first part is what other modules call (the sampler resolves each distinct stack once
 * with kp_sym_resolve_stack). The second part is shared by the files of this module only.
 * Everything the resolver returns (struct Symbol, struct Stack) belongs to it and stays valid
 * until kp_sym_forget_pid(pid) for that pid's symbols and stacks, or kp_sym_destroy(); kernel
 * symbols live until kp_sym_destroy(). All kp_sym_* functions of the first part take the
 * resolver's lock: any thread may call them.
 */
#ifndef KPERF_SYM_H
#define KPERF_SYM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <elfutils/libdw.h>

#include "kperf/symbol.h"

/* ==== for other modules ==== */

#define KP_SYM_DWARF 0x1 /* also resolve file:line (libdw) */
/* with KP_SYM_DWARF: stacks get a frame for each inlined call (innermost first, before the
 * function it was inlined into, whose line is then the line of the call) */
#define KP_SYM_INLINE 0x2
/* a profile is being resolved (the sampler's stacks): a running HotSpot JVM with JIT code no
 * perf map names is asked to write its map (jvm_attach.c), at most every few seconds */
#define KP_SYM_ASK_JIT 0x4

/* x86_64: the upper half of the address space is the kernel's */
#define KP_SYM_KERNEL_START 0xffff800000000000ULL
/* perf callchain context markers (PERF_CONTEXT_KERNEL, _USER, ...) are >= this: not addresses */
#define KP_SYM_CONTEXT_MAX ((uint64_t)-4095)

/* Load /proc/kallsyms once (LIBSYM_ERR_KALLSYMS_INVALID when unreadable or hidden by
 * kptr_restrict). Resolving a kernel address loads it on demand as well. */
int kp_sym_record_kernel(void);

/* Snapshot /proc/<pid>/maps (again: mappings that vanished are kept for samples taken
 * before, overlapping ones replaced) and open the executable files now, so that the pid's
 * addresses still resolve after it exits (files with DWARF stay mapped; their DWARF is indexed
 * at the first line lookup). KP_SYM_DWARF makes the public SymResolverMapAddr/StackToHash give
 * lines for this pid; the kp_sym_resolve_* calls take the flag per call.
 * LIBSYM_ERR_NOT_FIND_PID when the process does not exist and was never recorded; when it
 * exited after an earlier snapshot, that snapshot is kept and 0 is returned. */
int kp_sym_record_pid(pid_t pid, unsigned flags);

/* Note, while <pid> lives, where its root is (Symbol.mntPoint; a chroot's directory), so that
 * its files are found once it has exited; nothing else is read. */
void kp_sym_note_root(pid_t pid);

/* Mappings learned from PERF_RECORD_MMAP2 (or MMAP): [start, end) maps <path> at file offset
 * <pgoff>. <path> as the kernel reports it ("/usr/lib/..", "[vdso]", "//anon", "x (deleted)").
 * An overlapping older mapping is cut, as the kernel does. The file is opened at once, so call
 * it while the process is likely alive. The _id variant also takes the device (major, minor)
 * and inode of the MMAP2 record (0, 0, 0 when unknown), so that a file replaced at the same
 * path is not mistaken for the one that was mapped. */
int kp_sym_add_mapping(pid_t pid, uint64_t start, uint64_t end, uint64_t pgoff, const char *path);
int kp_sym_add_mapping_id(pid_t pid, uint64_t start, uint64_t end, uint64_t pgoff, const char *path,
			  uint32_t maj, uint32_t min, uint64_t ino);

/* SymResolverUpdateModule: the ELF <path> (as <pid> names it) is loaded in <pid> with its
 * first page at <start>; its PT_LOAD segments are mapped as the loader would (ET_EXEC at their
 * own addresses). A live process's maps are read again first; a module it already maps is left
 * as it is. libkperf's codes: LIBSYM_ERR_PARAM_PID_INVALID, LIBSYM_ERR_FILE_NOT_RGE (no such
 * regular file), LIBSYM_ERR_OPEN_FILE_FAILED, LIBSYM_ERR_READ_BUILDID (not an ELF),
 * LIBSYM_ERR_NOT_FIND_PID (a process that never existed for the resolver). */
int kp_sym_add_module(pid_t pid, const char *path, uint64_t start, unsigned flags);

/* PERF_RECORD_FORK of a new process: <child> starts with a copy of <parent>'s mappings. */
int kp_sym_fork(pid_t parent, pid_t child);
/* PERF_RECORD_COMM with PERF_RECORD_MISC_COMM_EXEC: <pid> dropped its mappings and is now
 * called <comm> (NULL: unknown). Symbols and stacks already returned for it stay valid (until
 * kp_sym_forget_pid). */
void kp_sym_exec(pid_t pid, const char *comm);

/* Resolve one address of <pid> (a kernel address needs no pid; pid 0 is the idle task and has
 * only kernel addresses). The symbol is cached: the same (pid, addr, flags) gives the same
 * pointer. Unknown addresses resolve to symbolName "[unknown]" (module filled when known);
 * an error (negative errno, kp_fail recorded) only when nothing can be looked at: a pid that
 * does not exist and was never recorded, kallsyms unreadable, no memory. */
int kp_sym_resolve_addr(pid_t pid, uint64_t addr, unsigned flags, struct Symbol **out);

/* Resolve a stack of <pid>: addrs[0] is the leaf (the sampled ip), then return addresses
 * towards the callers; kernel and user addresses may be mixed (kernel part first, as in a
 * perf callchain). perf context markers and 0 entries are skipped. Return addresses are
 * looked up at addr - 1, so that a call at the end of a function and the line of the call
 * come out right (the leaf and the first user frame after kernel frames are exact ips).
 * Equal stacks of a pid give the same list (leaf first, next towards the caller, prev
 * back), resolved once. A pid that is gone and was never recorded still gets its kernel frames
 * (user frames "[unknown]", warning KPERF_WARN_SYM_INCOMPLETE); pid <= 0 means kernel only.
 * -EINVAL (KPERF_ERR_INVALID_ARG) when no address is left. */
int kp_sym_resolve_stack(pid_t pid, const uint64_t *addrs, unsigned nr, unsigned flags,
			 struct Stack **out);

/* The code object at <code> of Python process <pid> (a frame KP_PY_TAG | code of its stacks,
 * bpf/pyframes.h) is <qualname>, defined at <filename>:<line> (sym_py.c). */
int kp_sym_add_pycode(pid_t pid, uint64_t code, const char *qualname, const char *filename,
		      unsigned line);

/* Forget everything about <pid> (its mappings, symbols, stacks): pointers returned for it
 * become invalid. Files stay cached for other processes. */
void kp_sym_forget_pid(pid_t pid);
/* Free everything, files and kernel symbols included; the resolver starts again lazily. */
void kp_sym_destroy(void);

/* The frames of one file address of an ELF file, as SymResolverMapCodeAddr sees it: with
 * KP_SYM_INLINE the inlined calls first, then the function. Owned by the resolver (until
 * kp_sym_destroy), like SymResolverMapCodeAddr's symbols. */
int kp_sym_code_frames(const char *module, uint64_t addr, unsigned flags, struct Stack **out);

/* Inline frames are Symbols of their own, marked so that a caller can tell them apart
 * (KperfSymbolGetInfo): the resolver marks those it makes, a copy of one (a PmuData array's)
 * is marked by its maker with kp_sym_mark_copy and unmarked before it is freed. Any thread. */
bool kp_sym_is_inline(const struct Symbol *s);
/* 1 when <src> is an inline frame and <copy> was marked so, 0 when it is not, -ENOMEM */
int kp_sym_mark_copy(const struct Symbol *src, const struct Symbol *copy);
void kp_sym_unmark(const struct Symbol *s);

/* The length of <name> without its compiler clone suffixes (".isra.0", ".constprop.1",
 * ".part.2", ".cold", and their demangled " [clone .isra.0]"): what reports group it under. */
size_t kp_sym_base_len(const char *name);

/* Statistics, for tests and benchmarks. */
struct kp_sym_stats {
	unsigned files_parsed; /* ELF files whose symbol tables were read */
	unsigned files_cached; /* distinct files in the cache */
	unsigned dwarf_opened; /* files whose DWARF was opened */
	unsigned procs; /* processes known */
	unsigned kernel_loads; /* times /proc/kallsyms was read */
	uint64_t symbols; /* Symbol objects created */
	uint64_t stacks; /* distinct stacks resolved */
	uint64_t inline_frames; /* inline frame Symbols created */
	unsigned units_parsed; /* DWARF units whose function scopes were read */
	unsigned files_idle; /* cached files no process holds (kept for the next ones) */
	uint64_t files_idle_bytes; /* about what they hold in memory */
	uint64_t files_evicted; /* idle files dropped for the cache's bounds */
};
void kp_sym_get_stats(struct kp_sym_stats *st);
/* The parsed files no process holds (their processes were forgotten) are kept for the next
 * ones, at most <files_max> of them and about <bytes_max> bytes of their symbols (0: the
 * defaults, 128 files and 64 MiB); the least recently released go first, now and at each
 * kp_sym_forget_pid. An agent that profiles every few seconds keeps little. */
void kp_sym_file_cache_bounds(unsigned files_max, uint64_t bytes_max);
/* the resolver holds state of process <pid> (tests: what an exit released) */
bool kp_sym_knows_pid(pid_t pid);

/* ==== inside the module (callers hold the resolver lock) ==== */

/* ---- sym_resolve.c: the resolver's state, one address ---- */

#define SYM_F_RET 0x100 /* a return address, looked up at addr - 1 (with the KP_SYM_* flags) */

void sym_lock(void);
void sym_unlock(void);
/* the process entry of <pid>, NULL when unknown; sym_proc_new adds one (NULL on ENOMEM) */
struct sym_proc *sym_proc_get(pid_t pid);
struct sym_proc *sym_proc_new(pid_t pid);
/* drop the entry of <pid> and everything it holds */
void sym_proc_forget(pid_t pid);
/* after its mappings changed: what was unknown may be known now */
void sym_proc_forget_unknowns(struct sym_proc *p);
/* the process entry for <pid>, snapshotting its maps when it was never recorded; a process
 * that is gone gets an entry resolving to [unknown] (a warning) unless <must_exist> */
int sym_ensure_proc(pid_t pid, bool must_exist, struct sym_proc **out);
/* the cached Symbol of <addr> in <p> (NULL: found by <pid>), flags KP_SYM_* | SYM_F_RET */
int sym_resolve_one(struct sym_proc *p, pid_t pid, uint64_t addr, unsigned flags,
		    struct Symbol **out);
/* the inline frames of a Symbol sym_resolve_one gave with KP_SYM_INLINE, NULL when none */
const struct sym_inl *sym_inlines_of(const struct sym_proc *p, const struct Symbol *s);
/* KP_SYM_DWARF when <pid> was recorded with lines */
unsigned sym_pid_flags(pid_t pid);
size_t sym_procs_count(void);
void sym_destroy_locked(void);
/* the shared strings of Symbols: "" (fileName, mntPoint) and "[unknown]" (symbolName) */
extern char sym_empty_str[1];
extern char sym_unknown_str[];
extern struct sym_counters {
	uint64_t symbols, stacks, inline_frames;
} sym_counters;

/* ---- sym_py.c ---- */

/* the Symbol of Python frame <addr> (KP_PY_TAG | code) of <p> (NULL: found by <pid>) */
int sym_py_resolve(struct sym_proc *p, pid_t pid, uint64_t addr, struct Symbol **out);

/* ---- sym_stack.c ---- */

struct sym_stack_ent {
	uint64_t hash;
	unsigned nr;
	unsigned flags;
	bool has_unknown;
	uint64_t *keys; /* address << 1 | exact: canonical addresses lose nothing (bits 63, 62 equal) */
	struct Symbol **fns; /* per key, the function's Symbol (its inline frames left out) */
	struct Stack *head;
};
/* kp_sym_resolve_stack, lock held; <must_exist>: a pid that never existed is an error */
int sym_resolve_stack(pid_t pid, const uint64_t *addrs, unsigned nr, unsigned flags,
		      bool must_exist, struct Stack **out);

/* ---- sym_util.c ---- */

/* a chunked allocator: many small objects freed at once */
struct sym_arena {
	struct sym_chunk *head;
	size_t used, cap; /* in the head chunk */
};
void *sym_arena_alloc(struct sym_arena *a, size_t size); /* zeroed, 16-byte aligned */
/* zeroed, aligned to <align> (a power of two, at most 64) */
void *sym_arena_alloc_aligned(struct sym_arena *a, size_t size, size_t align);
void sym_arena_free(struct sym_arena *a);

/* open-addressing hash map from a 128-bit key (two u64) to a pointer */
struct sym_hmap {
	struct sym_hslot *slots;
	size_t cap; /* power of two, or 0 */
	size_t n;
};
void *sym_hmap_get(const struct sym_hmap *m, uint64_t a, uint64_t b);
int sym_hmap_put(struct sym_hmap *m, uint64_t a, uint64_t b, void *val); /* replaces */
bool sym_hmap_del(struct sym_hmap *m, uint64_t a, uint64_t b); /* false when absent */
/* Remove every entry whose value <drop>(val, ctx) says to. */
void sym_hmap_filter(struct sym_hmap *m, bool (*drop)(void *val, void *ctx), void *ctx);
void sym_hmap_free(struct sym_hmap *m);
uint64_t sym_hash64(uint64_t x);

/* Interned strings: one copy of each, stable until sym_intern_free(). NULL on ENOMEM. */
const char *sym_intern(const char *s);
const char *sym_intern_n(const char *s, size_t n);
void sym_intern_free(void);

/* __cxa_demangle of a C++ (or legacy Rust) name, malloc'd; NULL when <name> is not mangled */
char *sym_demangle(const char *name);

uint64_t sym_now_ms(void);

/* May a file owned by <uid> be trusted for process <pid>'s symbols (a perf map, a debug
 * file)? Only when root or the process's owner (we, for pid <= 0) owns it, as perf
 * decides; otherwise false with a warning naming <path>. */
bool sym_owner_trusted(const char *path, uid_t uid, pid_t pid);

/* A step failed but resolution goes on: forget the recorded error (keeping any warning), or
 * turn it into a KPERF_WARN_SYM_INCOMPLETE warning with the same message. */
void sym_drop_error(void);
void sym_demote_error(void);

/* ---- inline frames (sym_frames.c) ---- */

struct sym_inl {
	unsigned n;
	struct Symbol *frames[]; /* innermost first */
};
/* the inline frames of Symbols of one owner (a process, the file-address cache), and the
 * marks to undo when the owner goes (the Symbols themselves are in its arena) */
struct sym_inl_store {
	struct sym_hmap lists; /* Symbol* -> struct sym_inl */
	const struct Symbol **marked;
	size_t nmarked, cap;
};
/* ---- sym_kallsyms.c ---- */

struct sym_ksym {
	uint64_t start, end;
	const char *name; /* into the table's pool */
	const char *module; /* "[kernel.kallsyms]" or "[modname]" (interned) */
};
/* Load /proc/kallsyms (or the path set by sym_kallsyms_set_path) if not loaded yet. */
int sym_kallsyms_load(void);
/* Find the symbol around <addr>; when the address is outside the known kernel text and
 * <may_reload>, /proc/kallsyms is read again (at most once a second) for code loaded since
 * (modules, BPF programs). NULL when unknown; *changed tells that a reload changed the table. */
const struct sym_ksym *sym_kallsyms_find(uint64_t addr, bool may_reload, bool *changed);
void sym_kallsyms_free(void);
unsigned sym_kallsyms_loads(void);
/* tests: read kallsyms (and modules) from other files; NULL restores /proc */
void sym_kallsyms_set_path(const char *kallsyms, const char *modules);

/* ---- sym_elf.c: one parsed file, shared by every process that maps it ---- */

struct sym_elf_sym {
	uint64_t start, end; /* ELF virtual addresses */
	uint32_t name; /* offset in the file's name pool */
	uint32_t alias_first; /* its other names: alias_names[alias_first ...] */
	uint16_t naliases;
	uint8_t bind, type;
};

struct sym_seg {
	uint64_t vaddr, memsz, offset, filesz;
	bool exec;
};

/* a debug section as libdw reads it (inflated), for the readers that bypass libdw */
struct sym_dwsec {
	const uint8_t *p; /* NULL: absent, or left compressed */
	size_t len;
};
struct sym_dwsecs {
	struct sym_dwsec info, abbrev, line, line_str, str;
	bool little; /* a little-endian file read on a little-endian host */
};

struct sym_file {
	struct sym_file *next; /* every cached file, for sym_files_free */
	/* who holds it: processes whose mappings (or Symbols) use it, and <kept> for the
	 * resolver's life (SymResolverRecordElf, code addresses). A file no one holds is idle:
	 * in the idle list (most recently released first) until evicted (sym_files_trim) */
	unsigned users;
	bool kept;
	struct sym_file *idle_prev, *idle_next;
	bool idle;
	size_t bytes; /* about what it holds in memory (symbols, names, an inflated image) */
	/* identity of the opened file */
	dev_t dev;
	ino_t ino;
	off_t size;
	int64_t mtime_ns;
	uint8_t build_id[64];
	size_t build_id_len;
	const char *path; /* interned: the first path it was opened as */
	bool is_vdso;

	int e_type; /* ET_EXEC, ET_DYN, ... */
	struct sym_seg *segs;
	unsigned nsegs;

	struct sym_elf_sym *syms; /* sorted by start, no duplicate starts */
	size_t nsyms;
	uint32_t *alias_names; /* name pool offsets of the aliases of syms */
	size_t nalias_names;
	char *names; /* name pool */
	size_t names_len;
	char **demangled; /* lazily filled, per symbol; NULL: not yet */
	bool *demangle_tried;
	const char *symtab_from; /* "symtab", "debug symtab", "dynsym", "none" */

	/* separate debug file: where it was found, and what finds it (.gnu_debuglink, the root
	 * of debug_pid first); looked for at once when the file has no .symtab, else lazily */
	const char *debug_path; /* interned */
	const char *debuglink; /* interned, NULL when none */
	uint32_t debuglink_crc;
	pid_t debug_pid;
	bool debug_tried;

	/* DWARF: the ELF that holds it (the file itself, its debug file, or an image of its
	 * debug sections decompressed, in dw_image), kept mapped */
	struct Elf *dw_elf;
	void *dw_image; /* sym_dwarf_image_free */
	size_t dw_image_size;
	bool has_dwarf; /* a .debug_info was found */
	bool dwarf_tried;
	struct Dwarf *dw;
	struct sym_cu_range *cus;
	size_t ncus;
	struct sym_hmap units; /* CU offset -> its function scopes (sym_inline.c) */
	struct sym_lines *lines; /* the units' line tables (sym_lines.c) */
	struct sym_hmap dies_units; /* CU offset -> its abbreviations (sym_dies.c) */
	struct sym_dwsecs sec; /* of dw, found at sym_dwarf_open */
};

/* where a file is, for a process: how to open it, and what identifies the mapping */
struct sym_file_ref {
	const char *path; /* as the process names it (no " (deleted)") */
	const char *open_path; /* a path that opens it from here (map_files, /proc/PID/root/..) */
	pid_t pid; /* to look in /proc/PID/root for debug files; 0: host only */
	dev_t map_dev; /* from maps or MMAP2, 0 when unknown */
	uint64_t map_ino;
	const struct stat *st; /* the caller's stat() of open_path just now, or NULL */
};

/* The cached file for <ref>: found by (dev, inode, size, mtime) or build-id, else opened and
 * parsed. Symbols are read now; the ELF holding the DWARF stays mapped and its DWARF is opened
 * on the first line lookup (sym_file_dwarf). */
int sym_file_get(const struct sym_file_ref *ref, unsigned flags, struct sym_file **out);
/* The vdso image copied out of a process (or ours): cached by build-id. */
int sym_file_from_memory(const void *image, size_t size, const char *name, struct sym_file **out);
/* file offset -> ELF virtual address, through the PT_LOAD that maps it */
uint64_t sym_file_off_to_vaddr(const struct sym_file *f, uint64_t off);
/* Make the DWARF ready (finding the debug file first when that was left for now); 0 when
 * there is some, -ENOENT when the file has none. */
int sym_file_dwarf(struct sym_file *f);
/* false when the file is known to have no DWARF (sym_file_dwarf would say -ENOENT) */
bool sym_file_may_have_dwarf(const struct sym_file *f);
void sym_files_free(void);
/* <f> is used by one more holder (a process: sym_proc_hold_file), or one less; a file no one
 * holds becomes idle. sym_file_keep: held until kp_sym_destroy. */
void sym_file_hold(struct sym_file *f);
void sym_file_release(struct sym_file *f);
void sym_file_keep(struct sym_file *f);
/* Evict the least recently released idle files beyond the bounds. Only where no caller holds
 * a file pointer that no process or keep holds (kp_sym_forget_pid, the bounds' setter). */
void sym_files_trim(void);
void sym_files_set_bounds(unsigned files_max, uint64_t bytes_max);
void sym_files_idle_stats(unsigned *n, uint64_t *bytes, uint64_t *evicted);
unsigned sym_files_parsed(void);
unsigned sym_files_cached(void);
unsigned sym_files_dwarf_opened(void);
/* An ELF mapped read-only, the descriptor closed (the image stays until elf_end); NULL with
 * *errp: -EISDIR not a regular file, -ENOEXEC not an ELF, else the errno of the open. */
struct Elf *sym_elf_open(const char *path, struct stat *st, int *errp);
/* the GNU build-id of <elf> into out (at most cap bytes), its length or 0 */
size_t sym_elf_build_id(struct Elf *elf, uint8_t *out, size_t cap);

/* ---- sym_symtab.c: a file's function symbols ---- */

struct sym_elf_facts {
	struct Elf_Scn *symtab, *dynsym;
	bool has_debug_info;
	size_t shstrndx;
};
/* the sections of <elf> that matter here; -EINVAL when its section headers are broken */
int sym_elf_scan(struct Elf *elf, struct sym_elf_facts *ef);
/* Read f's symbols: .symtab of the main file, else of its debug file, else .dynsym; PLT stubs
 * as "name@plt"; the best name of each address first, its aliases after. */
int sym_symtab_read(struct sym_file *f, struct Elf *main_elf, const struct sym_elf_facts *mf,
		    struct Elf *debug_elf, const struct sym_elf_facts *df);
void sym_symtab_free(struct sym_file *f);
/* the symbol around <vaddr>, NULL when none */
const struct sym_elf_sym *sym_file_find(const struct sym_file *f, uint64_t vaddr);
const char *sym_file_sym_name(const struct sym_file *f, const struct sym_elf_sym *s);
/* the i-th other name of s (raw), NULL past the last */
const char *sym_file_alias_name(const struct sym_file *f, const struct sym_elf_sym *s, unsigned i);
/* demangled name (or the raw one when not mangled) */
const char *sym_file_sym_demangled(struct sym_file *f, const struct sym_elf_sym *s);
/* the name to show for a raw symbol name: demangled, without "@VERSION"; malloc'd, NULL
 * when it is the raw name itself (or on ENOMEM) */
char *sym_display_name(const char *raw);

/* ---- sym_debugfile.c ---- */

/* global directories holding debug files: $KPERF_BPF_DEBUG_DIRS (':'-separated) then
 * /usr/lib/debug */
int sym_debug_dirs(const char ***dirs);
void sym_debug_dirs_free(void);
/* The separate debug file of <f> (by build-id, then .gnu_debuglink), opened; NULL when none
 * (a warning when a .gnu_debuglink candidate had the wrong CRC). Sets f->debug_path. */
struct Elf *sym_debug_find(struct sym_file *f);

/* ---- sym_dwarf.c: opening DWARF, units, lines ---- */

struct sym_cu_range {
	uint64_t start, end;
	uint64_t cu_off; /* offset of the CU DIE */
};
/* Open f->dw from f->dw_elf (its compressed debug sections inflated into an image, the
 * sections lines and inline frames do not need left out) and index its units by address. */
int sym_dwarf_open(struct sym_file *f);
/* the CU DIE holding <vaddr>; false when none */
bool sym_dwarf_find_cu(struct sym_file *f, uint64_t vaddr, Dwarf_Die *cudie);
/* a source file name of <cudie>'s line program, as a full path (interned); NULL on ENOMEM */
const char *sym_dwarf_full_path(Dwarf_Die *cudie, const char *src);
/* file:line of <vaddr>; 0, or -ENOENT when the DWARF has no line for it */
int sym_dwarf_line(struct sym_file *f, uint64_t vaddr, const char **file, unsigned *line);
void sym_dwarf_close(struct sym_file *f);
/* An ELF image in memory (*out, on *image of *size bytes: sym_dwarf_image_free after elf_end)
 * holding the debug sections of <elf> that lines and scopes need, inflated; *out NULL when
 * none is compressed or the file is not one this can lay out (read it in place). -ENOMEM,
 * -EINVAL for a section that does not inflate to its announced size. */
int sym_dwarf_image(struct Elf *elf, void **image, size_t *size, struct Elf **out);
void sym_dwarf_image_free(void *image, size_t size);
/* tests and benchmarks: inflate with zlib (libelf) instead of libdeflate */
void sym_dwarf_set_slow_inflate(bool on);

/* ---- sym_lines.c: line tables read without libdw's per-row cost, libdw's answers ---- */

/* The row of <cudie>'s line table at <vaddr>, as dwarf_getsrc_die + dwarf_linesrc give it:
 * 0 (*file may be NULL), -ENOENT (no row), -ENOMEM, -ENOTSUP (a table read by libdw: ask
 * libdw). The table is read the first time and kept until sym_lines_free. */
int sym_lines_find(struct sym_file *f, Dwarf_Die *cudie, uint64_t vaddr, const char **file,
		   int *line);
/* File <idx> of <cudie>'s line table as dwarf_getsrcfiles + dwarf_filesrc give it: 0,
 * -ENOENT, -ENOMEM, -ENOTSUP (ask libdw). */
int sym_lines_file(struct sym_file *f, Dwarf_Die *cudie, size_t idx, const char **file);
void sym_lines_free(struct sym_file *f);
/* tests: every table read by libdw, as before sym_lines.c */
void sym_lines_force_libdw(bool on);
/* tests: every table's rows merge-sorted, in order or not (the path of overlapping sequences) */
void sym_lines_force_full_sort(bool on);

/* ---- sym_dies.c: the DIEs of a unit in one pass, without libdw ---- */

/* A DIE as sym_dies_walk shows it; for subprograms and inlined calls (wanted), the attributes
 * function scopes need. odd: one of them has a form not decoded here (addrx, sdata...): read
 * that DIE with libdw. */
struct sym_die_attrs {
	uint64_t off;
	int tag;
	unsigned depth; /* the unit's DIE is at 0 */
	bool children, wanted;
	/* wanted only (zero otherwise); has_low is the first of them */
	bool has_low, has_high, high_is_offset, has_ranges, odd;
	uint64_t low, high, call_line, call_file;
};
/* returns 1 to visit the DIE's children, 0 not to, < 0 to stop with that error */
typedef int (*sym_die_visit)(void *ctx, const struct sym_die_attrs *a);
/* Visit the DIEs of <cudie>'s unit in order (the unit's DIE first). 0; -ENOTSUP before any
 * visit when this reader cannot read the unit (ask libdw); -EINVAL when the unit turns out
 * malformed part way; -ENOMEM; or the visitor's error. */
int sym_dies_walk(struct sym_file *f, Dwarf_Die *cudie, sym_die_visit visit, void *ctx);
/* The same for the children of the DIE at <die_off> (in <cudie>'s unit), at <depth>. */
int sym_dies_walk_children(struct sym_file *f, Dwarf_Die *cudie, uint64_t die_off, unsigned depth,
			   sym_die_visit visit, void *ctx);
/* Attributes of the unit's DIE as libdw reads them: 1 (set), 0 (absent: *off 0, *dir NULL,
 * *lang -1), -ENOTSUP (this reader cannot say: ask libdw). */
int sym_dies_cu_stmt_list(struct sym_file *f, Dwarf_Die *cudie, uint64_t *off);
int sym_dies_cu_comp_dir(struct sym_file *f, Dwarf_Die *cudie, const char **dir);
int sym_dies_cu_lang(struct sym_file *f, Dwarf_Die *cudie, int *lang);
void sym_dies_free(struct sym_file *f);
/* tests: refuse every unit (libdw reads them all, as before sym_dies.c) */
void sym_dies_force_libdw(bool on);

/* ---- sym_inline.c: function scopes of a unit, inline chains ---- */

#define SYM_MAX_INLINE 64 /* frames at one address, the function included */

/* One frame at an address: an inlined call, or (the last) the function it was inlined into. */
struct sym_frame {
	const char *name; /* to show (demangled), interned; NULL when DWARF has none */
	const char *mangled; /* the linkage name, else the name, interned */
	const char *file; /* interned; NULL when unknown */
	unsigned line; /* of the address in the innermost frame, else of the call to the one
			* before */
	unsigned decl_line; /* where the function starts */
	uint64_t start, end; /* the range of its code that holds the address */
};
/* The frames of <vaddr>, innermost first, the function last: at least one (the line of the
 * address) when the DWARF knows the address. 0 with *n set, -ENOENT, -ENOMEM. */
int sym_dwarf_frames(struct sym_file *f, uint64_t vaddr, struct sym_frame *out, unsigned max,
		     unsigned *n);
/* The line where the function around <vaddr> starts: DW_AT_decl_line of the innermost
 * subprogram or inlined subroutine that holds it (the function whose line sym_dwarf_line
 * gives); 0, or -ENOENT when unknown. */
int sym_dwarf_decl_line(struct sym_file *f, uint64_t vaddr, unsigned *line);
void sym_inline_free(struct sym_file *f);
unsigned sym_inline_units_parsed(void);
/* of those, the units read in one pass by sym_dies.c (the others through libdw) */
unsigned sym_inline_units_scanned(void);

/* ---- sym_proc.c: the address space of one process ---- */

enum sym_map_kind {
	SYM_MAP_FILE = 0, /* a file (maybe deleted) */
	SYM_MAP_VDSO,
	SYM_MAP_ANON, /* anonymous memory, [heap], [stack], //anon, memfd: JIT code lives here */
	SYM_MAP_SPECIAL, /* [vsyscall], [vvar]... */
};

struct sym_map {
	uint64_t start, end, pgoff;
	dev_t dev;
	uint64_t ino;
	const char *path; /* interned, as in maps (" (deleted)" kept) */
	uint8_t kind;
	bool exec;
	bool deleted;
	bool load_tried;
	struct sym_file *file; /* NULL until loaded, or when it cannot be */
};

/* Fill <m> for a mapping of <path> (its kind: file, vdso, anonymous, special; whether the
 * file was deleted); -ENOMEM. Every source of mappings goes through it. */
int sym_map_fill(struct sym_map *m, uint64_t start, uint64_t end, uint64_t pgoff, const char *path,
		 dev_t dev, uint64_t ino, bool exec);

struct sym_jit_sym {
	uint64_t start, end;
	const char *name;
};

struct sym_proc {
	pid_t pid;
	/* who it is, noted while it lives: what its perf map is checked against once it has
	 * exited (sym_jit.c) */
	bool id_known; /* the fields below were noted at least once */
	bool id_fresh; /* ... and since its last exec */
	uid_t uid; /* its effective uid (the owner of /proc/PID) */
	pid_t nspid; /* its pid in its own PID namespace */
	int64_t born_s; /* when it started, seconds since the epoch */
	const char *comm; /* interned, NULL when unknown */
	const char *mnt_point; /* Symbol.mntPoint of its files (sym_mnt_point): interned, or in
				* its arena when it is its own /proc/PID/root */
	bool dwarf; /* recorded with DWARF */
	bool recorded; /* maps were read at least once */
	bool gone; /* the process no longer exists */
	uint64_t start_time; /* in clock ticks since boot: tells a reused pid */
	uint64_t refreshed_ms;

	struct sym_map *maps; /* sorted, not overlapping */
	size_t nmaps, cap;

	struct sym_jit_sym *jit; /* /tmp/perf-PID.map, sorted */
	size_t njit;
	const char *jit_path; /* interned, the module name of JIT symbols */
	off_t jit_size;
	uint64_t jit_checked_ms;
	char *jit_names; /* the file as read; symbols copy names out of it */
	bool jit_final; /* read after the process was gone: nothing more can come */
	const char *jit_label; /* interned "[JIT] comm": JIT code no perf map names */
	uint64_t jvm_asked_ms; /* a JVM last asked for its perf map (0: never) */
	bool jvm_refused; /* it refused (said once): never asked again */

	struct sym_hmap symbols; /* (addr, flags) -> struct Symbol */
	struct sym_hmap pycodes; /* (code object address, 0) -> struct Symbol (sym_py.c) */
	struct sym_hmap stacks; /* hash -> struct sym_stack_ent chain */
	struct sym_arena arena; /* Symbols, Stack nodes, stack keys */
	struct sym_inl_store inl; /* the inline frames of its Symbols */
	/* the files its mappings used (each held once, released when it is freed): its Symbols
	 * point into them, even after an exec replaced the mappings */
	struct sym_file **files;
	size_t nfiles, capfiles;
};

/* Parsers of the text a process (or its runtime) gives, in place: /proc/PID/maps lines into
 * sorted mappings (-EINVAL when not sorted), "START SIZE name" perf map lines into symbols
 * sorted by start (the last of equal starts kept; names point into <buf>). -ENOMEM. */
int sym_parse_maps(char *buf, struct sym_map **out, size_t *nout);
int sym_parse_perf_map(char *buf, struct sym_jit_sym **out, size_t *nout);
/* Read /proc/<pid>/maps into p (merge) and open the files of executable mappings. Failures
 * to open a file become warnings (KPERF_WARN_SYM_INCOMPLETE). */
int sym_proc_read_maps(struct sym_proc *p, unsigned flags);
/* Insert one mapping, cutting what it overlaps; opens its file when <load>. */
int sym_proc_add_map(struct sym_proc *p, const struct sym_map *m, bool load, unsigned flags);
/* The mapping holding <addr>, NULL when none. */
struct sym_map *sym_proc_find_map(struct sym_proc *p, uint64_t addr);
/* The file of a mapping, opened on first use; NULL when it cannot be. */
struct sym_file *sym_proc_map_file(struct sym_proc *p, struct sym_map *m, unsigned flags);
/* <p> holds <f> (once, whatever the number of its mappings of it) until it is freed */
void sym_proc_hold_file(struct sym_proc *p, struct sym_file *f);
bool sym_proc_alive(pid_t pid);
/* field 22 of /proc/<pid>/stat: when it started, in clock ticks since boot; -errno */
int sym_start_ticks(pid_t pid, uint64_t *out);
void sym_proc_clear_maps(struct sym_proc *p);
void sym_proc_free(struct sym_proc *p);

/* ---- sym_jit.c: code a runtime generated (perf maps, JVMs asked for theirs) ---- */

/* Note who <p> is (uid, pid in its namespace, start, comm) while it lives; once known it is
 * kept until an exec. */
void sym_proc_note_identity(struct sym_proc *p);
/* (Re)read /tmp/perf-PID.map when it changed: through the process's root while it lives;
 * once it is gone, the file it left in /tmp (read once), if its owner, mode and time say it is
 * this process's. Files that fail the checks are ignored with a warning. */
int sym_proc_load_jit(struct sym_proc *p);
const struct sym_jit_sym *sym_proc_find_jit(const struct sym_proc *p, uint64_t addr);
/* Executable anonymous memory (or a memfd) that no perf map names: JIT code. */
bool sym_map_is_jit(const struct sym_map *m);
/* "[JIT] comm" of <p> (interned), the name of JIT code no perf map names; NULL on ENOMEM */
const char *sym_proc_jit_label(struct sym_proc *p);
/* Is <s> (a Symbol of <p>) a name for what is not known yet: [unknown], or a JIT label? */
bool sym_unresolved(const struct sym_proc *p, const struct Symbol *s);
/* With KP_SYM_ASK_JIT in effect: when <p> is a running HotSpot JVM not asked lately, ask it
 * to write its perf map (Compiler.perfmap); true when it did (read the map again). A JVM
 * that refuses is said once (KPERF_WARN_SYM_INCOMPLETE) and not asked again. */
bool sym_proc_ask_jvm(struct sym_proc *p);
/* KP_SYM_ASK_JIT of the call in progress (set by kp_sym_resolve_stack, lock held) */
extern bool sym_ask_jit;

/* ---- sym_mnt.c: where a process's files are, seen from here ---- */

/* Symbol.mntPoint of <pid>'s files (interned): "" when it shares our mount namespace and
 * root (or is gone); the directory of ours that is its root when chroot'ed; else the directory of ours that is its root (a container's overlay, a bind mount),
 * found through the mountinfo of both sides and checked to be the same directory; else
 * "/proc/PID/root", valid while it lives. mntPoint + module is then the file as we see it.
 * NULL only on ENOMEM. */
/* "/proc/PID/root" is one string per process: copied into <a> (the process's arena, its
 * lifetime), not interned, lest a node's churn of containers grow the interned strings. */
const char *sym_mnt_point(pid_t pid, struct sym_arena *a);

/* one line of a mountinfo file, its escapes (\040 ...) undone; pointers into <buf> */
struct sym_mnt_entry {
	unsigned major, minor;
	const char *root; /* the directory of the file system mounted here */
	const char *mount_point;
	const char *fstype;
};
/* Parse <line> (without its newline) into <e>, using <buf> of <size> bytes for the strings;
 * -EINVAL when it is not a mountinfo line (or does not fit). */
int sym_mnt_parse(const char *line, char *buf, size_t size, struct sym_mnt_entry *e);

/* ---- sym_code.c: questions about a file, no process needed ---- */

/* free the symbols of SymResolverMapCodeAddr (with the rest of the resolver) */
void sym_code_free(void);
/* The checks libkperf makes before it reads a module, with its codes: <open_path> opens
 * (LIBSYM_ERR_OPEN_FILE_FAILED), is a regular file with an ELF identification
 * (LIBSYM_ERR_READ_BUILDID). <name> is how messages call it. */
int sym_elf_check(const char *open_path, const char *name);

/* ---- sym_frames.c: a file address to Symbols, inline frames ---- */

void sym_inl_store_free(struct sym_inl_store *st);
const struct sym_inl *sym_inl_get(const struct sym_inl_store *st, const struct Symbol *s);
/* Fill <s> for file address <vaddr> of <f> (<vlook>: where to look, vaddr - 1 for a return
 * address): its symbol; with KP_SYM_DWARF its line (opening the DWARF on first use); with
 * KP_SYM_INLINE too, the line of the call to its outermost inlined function and a Symbol in
 * <a> for each inlined call, kept in <st> (*ninline of them). 0 or -ENOMEM. */
int sym_fill_from_file(struct Symbol *s, struct sym_file *f, uint64_t vaddr, uint64_t vlook,
		       unsigned flags, struct sym_arena *a, struct sym_inl_store *st,
		       unsigned *ninline);

#endif
