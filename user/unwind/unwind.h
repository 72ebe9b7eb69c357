/*
 * unwind.h - the unwind tables of ELF files (the module's one internal header): each file's
 * call-frame information (.eh_frame, and .debug_frame where present), read through libdw's CFI
 * interface and compiled into a sorted array of 16-byte rows (bpf/unwind_table.h) that the BPF
 * unwinder binary-searches. Tables are cached by GNU build-id (else by device, inode, size and
 * mtime), so a library mapped by a thousand processes is compiled once, and found again from
 * a stat() of the mapped file.
 *
 *   compile.c   ELF -> rows (libdw's dwarf_cfi_addrframe per row; PLT stubs; signal frames)
 *   cache.c     files -> tables, by build-id, a file seen before by its stat(); reference
 *               counts; the idle tables bounded (least recently used out); figures
 *   load.c      tables and processes' mappings into the maps of a BPF object that unwinds
 *   owner.c     one BPF object's unwinder: maps sized, targets loaded, a loader thread,
 *               a launched command held (and the owners that share its hold map loaded)
 */
#ifndef KPERF_UNWIND_H
#define KPERF_UNWIND_H

#include <linux/types.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "unwind_table.h"

struct Elf;

/* what a compile saw (benchmarks, tests, the "why" of a missing frame) */
struct kp_uw_stats {
	uint32_t fdes_eh; /* FDEs of .eh_frame used */
	uint32_t fdes_debug; /* FDEs of .debug_frame used (addresses no .eh_frame FDE covers) */
	uint32_t fdes_skipped; /* FDEs not used: empty, overlapping, undecodable */
	uint32_t rows_raw; /* rows before equal neighbours were merged */
	uint32_t rows_expr; /* rows whose CFA rule is EXPR (not evaluable in BPF) */
	uint32_t rows_signal; /* rows of signal trampolines */
	uint32_t plt_synth; /* PLT sections given synthetic rows (no CFI for them) */
};

struct kp_uw_table {
	uint64_t base; /* rows' pc are offsets from this ELF virtual address */
	uint64_t end; /* one past the last address any row covers */
	uint32_t nrows;
	uint16_t machine; /* EM_X86_64 or EM_AARCH64 */
	struct kp_uw_row *rows;
	struct {
		uint64_t vaddr, off, filesz;
	} segs[8]; /* executable PT_LOAD segments: where a mapping's file offset lands */
	unsigned nsegs;
	uint8_t build_id[64];
	size_t build_id_len;
	struct kp_uw_stats stats;
	/* cache.c's */
	unsigned refs;
	uint64_t key_dev, key_ino, key_size; /* a file without a build-id: its identity */
	int64_t key_mtime_ns;
	struct kp_uw_table *next, *lru_prev; /* most recently used first */
};

/* ---- compile.c ---- */

/* Compile <elf>'s call-frame information into a new table (refs 1): 0, or a negative errno
 * with a sentence in <why>: -ENOTSUP a machine other than x86_64 and arm64, -ENOENT neither
 * .eh_frame nor .debug_frame, -EFBIG code spanning more than 4 GiB, -EINVAL malformed. */
int kp_uw_compile(struct Elf *elf, struct kp_uw_table **out, char *why, size_t whylen);
/* the same for the file at <path> (opened confined when under /proc/PID/root) */
int kp_uw_compile_path(const char *path, struct kp_uw_table **out, char *why, size_t whylen);
void kp_uw_table_free(struct kp_uw_table *t);

/* The row that holds at ELF address <pc> (NULL outside every row). A row with CFA NONE says
 * the file has no call-frame information there. */
const struct kp_uw_row *kp_uw_lookup(const struct kp_uw_table *t, uint64_t pc);

/* The row as readelf --debug-dump=frames-interp would write its CFA, FP and RA columns, e.g.
 * "rsp+8 u c-8" or "sp+16 c-16 c-8"; "exp" for an expression, "plt" for a PLT rule. */
const char *kp_uw_row_str(const struct kp_uw_table *t, const struct kp_uw_row *r, char *buf,
			  size_t len);

/* ---- cache.c ---- */

/* The table of the file at <path>, compiled at most once per build-id (or identity when it
 * has none), a file seen before answered from its stat() alone: a reference the caller gives
 * back with kp_uw_put. NULL with -errno in *errp and a sentence in <why> when it cannot be had
 * (see kp_uw_compile). Tables no one holds are kept, bounded (cache.c: IDLE_MAX, IDLE_BYTES). */
struct kp_uw_table *kp_uw_get(const char *path, int *errp, char *why, size_t whylen);
/* The same for an ELF image in memory (the vdso, as read from a process): cached by its
 * build-id, -ENOENT without one. <image> is not kept. */
struct kp_uw_table *kp_uw_get_image(const void *image, size_t len, int *errp, char *why,
				    size_t whylen);
void kp_uw_put(struct kp_uw_table *t);

/* What identifies a table: its file's build-id, else (idlen 0) the file's identity. */
struct kp_uw_key {
	uint8_t id[64];
	size_t idlen;
	uint64_t dev, ino, size;
	int64_t mtime_ns;
};
/* The key of the table kp_uw_get(<path>) would give, without compiling it: from a stat() when
 * the file is known, else from its build-id read. 0 or -errno. */
int kp_uw_key_of(const char *path, struct kp_uw_key *k);
void kp_uw_key_of_table(const struct kp_uw_table *t, struct kp_uw_key *k);
bool kp_uw_key_eq(const struct kp_uw_key *a, const struct kp_uw_key *b);

struct kp_uw_cache_stats {
	uint64_t compiled; /* tables compiled */
	uint64_t hits; /* kp_uw_get answered from the cache */
	uint64_t stat_hits; /* ... of them from a stat() alone (the file not opened) */
	uint64_t evicted; /* tables no one held, dropped for the cache's bounds */
	uint64_t idents; /* (device, inode, size, times) known now */
	uint64_t idle; /* tables held now by the cache alone */
	uint64_t tables; /* tables held now */
	uint64_t rows; /* their rows */
	uint64_t bytes; /* their rows' bytes */
};
void kp_uw_cache_stats(struct kp_uw_cache_stats *s);
/* at most <tables_max> tables no one holds, and <bytes_max> of their rows (0: the defaults,
 * 256 and 32 MiB); the least recently used go first (tests) */
void kp_uw_cache_bounds(unsigned tables_max, uint64_t bytes_max);
/* forget every table no one holds (tests, benchmarks: a cold compile) */
void kp_uw_cache_trim(void);

/* ---- load.c ---- */

struct kp_uw_loader;

struct kp_uw_load_stats {
	uint64_t tables; /* tables copied into the row array */
	uint64_t rows; /* rows used */
	uint64_t rows_cap; /* rows the array holds */
	uint64_t tables_full; /* tables that did not fit (their mappings: frame pointers) */
	uint64_t pids; /* process entries written */
	uint64_t maps_dropped; /* executable mappings beyond KP_UW_MAX_MAPS of a process */
	uint64_t files_without; /* mapped files with no table (see kp_uw_get) */
	uint64_t reclaimed; /* times the row array was started afresh (kp_uw_loader_reclaim) */
	uint64_t counters[KP_UW_CNT_MAX]; /* the BPF side's (enum kp_uw_counter) */
};

/* A loader for the unwind maps of one loaded BPF object: kp_uw_rows (<rows_fd>, <cap> rows,
 * created BPF_F_MMAPABLE), kp_uw_procs, kp_uw_want, kp_uw_counters. NULL with errno. */
struct kp_uw_loader *kp_uw_loader_new(int rows_fd, uint32_t cap, int procs_fd, int want_fd,
				      int counters_fd);
void kp_uw_loader_free(struct kp_uw_loader *l);
/* (Re)load the executable mappings of process <pid> (as the caller sees it): 0 or -errno */
int kp_uw_loader_add_pid(struct kp_uw_loader *l, int pid);
void kp_uw_loader_forget(struct kp_uw_loader *l, int pid);
/* The row array started afresh when more than <used_max> of its rows are used: the tables
 * placed are forgotten and every process entry deleted (the BPF side asks for each again when
 * it next unwinds it). Only while no program of the object unwinds (a sampling task disabled
 * between collections): a loader kept for days (the agent's) would otherwise fill its array
 * with the tables of files no process maps any more. true when it did. */
bool kp_uw_loader_reclaim(struct kp_uw_loader *l, uint32_t used_max);
/* <fn>(<ctx>, pid) after each process loaded (the Python frame reader looks at it too) */
void kp_uw_loader_on_pid(struct kp_uw_loader *l, void (*fn)(void *ctx, int pid), void *ctx);
/* load the processes the BPF side asked for; how many were loaded */
int kp_uw_loader_poll(struct kp_uw_loader *l);
void kp_uw_loader_stats(const struct kp_uw_loader *l, struct kp_uw_load_stats *s);
/* <b> added into <a> */
void kp_uw_load_stats_add(struct kp_uw_load_stats *a, const struct kp_uw_load_stats *b);

struct bpf_object;

/* ---- task_regs.c ---- */

/* Before <obj>'s load, on a kernel without bpf_task_pt_regs: where its unwinder finds a task's
 * user registers (kp_uw_task, from the kernel's BTF). 0 also when they cannot be known (frame
 * pointers there), -errno when the object has no kp_uw_task. */
int kp_uw_set_task_layout(struct bpf_object *obj);

/* ---- owner.c ---- */

struct kp_uw_owner;

/* Before <obj>'s load: its unwinder's maps sized (1 entry each when not <on>), for <ntargets>
 * targets (0: every process). -ENOENT when the object has no unwinder. */
int kp_uw_owner_size(struct bpf_object *obj, bool on, unsigned ntargets);
/* After its load: a loader of its maps with processes <pids> loaded, and a thread that loads
 * every 10 ms what the BPF side asks for. <hold>: the pids are commands about to exec, held
 * (stopped) at each exec (a wrapper's, then the program's) and at its entry point while their
 * tables load. 0 or -errno. */
int kp_uw_owner_start(struct bpf_object *obj, const int *pids, unsigned n, bool hold,
		      struct kp_uw_owner **out);
/* The same with <on_pid>(<ctx>, pid) called after each process's tables are loaded, the
 * targets' included (the Python frame reader looks at each process too). */
int kp_uw_owner_start_hooked(struct bpf_object *obj, const int *pids, unsigned n, bool hold,
			     void (*on_pid)(void *ctx, int pid), void *ctx,
			     struct kp_uw_owner **out);
/* Python frames (bpf/pyframes.bpf.h) in <obj>'s stacks: before its load, the reader's maps
 * sized (1 entry each when not <on>; the owner also sets the object's kp_py_max_threads and
 * kp_py_max_walk, 0 when not on). -ENOENT when the object has no reader. */
int kp_uw_owner_py_size(struct bpf_object *obj, bool on, unsigned ntargets);
/* kp_uw_owner_start, and with <python> each process loaded is looked at by the Python frame
 * reader too (runtime/python.h), whose code objects kp_uw_owner_py_drain hands to the
 * resolver: called by the owner before it reads stacks (after its generation flip) */
int kp_uw_owner_start_py(struct bpf_object *obj, const int *pids, unsigned n, bool hold,
			 bool python, struct kp_uw_owner **out);
void kp_uw_owner_py_drain(struct kp_uw_owner *u); /* NULL, or without Python: nothing */
/* the next reason a process gets native frames only (once per interpreter and reason) into
 * <buf>: false when there is none */
bool kp_uw_owner_py_note(struct kp_uw_owner *u, char *buf, size_t len);
/* <fn>(<ctx>) under the owner's lock: its thread loads nothing meanwhile (NULL: nothing) */
void kp_uw_owner_locked(struct kp_uw_owner *u, void (*fn)(void *ctx), void *ctx);
/* <follower>, the owner of another object whose kp_uw_hold map is <holder>'s (reused before
 * its load, started without holding), gets the tables of each process <holder> holds before
 * that process goes on: one hold, one stop, for the objects that unwind a launched command
 * (record --wall: sampling's and off-CPU's). 0 (nothing when either is NULL), -EBUSY when it
 * follows another already, -ENOSPC beyond 4 followers. Either may be stopped first. */
int kp_uw_owner_follow(struct kp_uw_owner *holder, struct kp_uw_owner *follower);
/* kp_uw_loader_reclaim of its loader when a table found no room in the row array since the
 * last call (under its lock): between two collections of a task kept open, whose array keeps
 * the tables placed for the next collections until it is full */
void kp_uw_owner_reclaim(struct kp_uw_owner *u);
/* the fd of <u>'s kp_uw_hold map when it holds processes, else -1 (NULL: -1) */
int kp_uw_owner_hold_fd(const struct kp_uw_owner *u);
/* hold <pid>, a command about to exec, as kp_uw_owner_start does (0 when <u> is NULL) */
int kp_uw_owner_hold(struct kp_uw_owner *u, int pid);
/* load what the BPF side asked for now: how many processes */
int kp_uw_owner_poll(struct kp_uw_owner *u);
/* (Re)load process <pid> now (0 when <u> is NULL): 0 or -errno */
int kp_uw_owner_add_pid(struct kp_uw_owner *u, int pid);
void kp_uw_owner_stats(struct kp_uw_owner *u, struct kp_uw_load_stats *s);
void kp_uw_owner_stop(struct kp_uw_owner *u); /* NULL: nothing */

/* ---- hold_guard.c ---- */

/* the guard of a hold: a child process that continues the processes of the hold map <hold_fd>
 * that are stopped if this process dies without doing it (kill -9) */
struct kp_uw_guard {
	int pid; /* -1: none */
	int fd;
};
/* fork the guard of <hold_fd>: 0 or -errno (<g>'s pid -1 then) */
int kp_uw_guard_start(int hold_fd, struct kp_uw_guard *g);
/* the hold is over (what was stopped is continued): the guard exits and is reaped */
void kp_uw_guard_stop(struct kp_uw_guard *g);

#endif
