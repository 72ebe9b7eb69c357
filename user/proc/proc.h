/*
 * proc.h - ProcDataRead's module: reading /proc files of the system and of one process into
 * the structs of kperf/proc_data_types.h.
 *
 * Memory: everything one ProcDataRead returns (entries, strings, nested arrays) is carved out
 * of one arena, a chain of large malloc'd blocks, and ProcDataFree releases the chain. No
 * entry owns anything, so a source that fails half-way is undone by rolling the arena back
 * to a mark, and nothing can leak however a parse ends.
 *
 * Parsing: a parser gets the file's text in a mutable NUL-terminated buffer that it may cut
 * up in place (lines, words); whatever it keeps is copied into the arena. It returns 0,
 * -ENODATA when the text held nothing it recognises, or -ENOMEM.
 *
 * The /proc root is $KPERF_BPF_PROC when set (fixture trees in tests), else /proc.
 */
#ifndef KPERF_PROC_H
#define KPERF_PROC_H

#include <stdbool.h>
#include <stddef.h>

#include "kperf/proc_data_types.h"

/* ---- the arena (arena.c) ---- */

struct kp_proc_block;

struct kp_proc_arena {
	struct kp_proc_block *top; /* the newest block; each links to the one before */
};

struct kp_proc_mark {
	struct kp_proc_block *top;
	size_t used;
};

/* A growable array inside an arena: growing copies into a block twice the size, so at most
 * as much again as the final array is wasted, and only until the arena is freed. */
struct kp_proc_vec {
	void *items;
	unsigned n, cap;
};

/* <size> zeroed bytes aligned for any entry struct; NULL when memory runs out. */
void *kp_proc_alloc(struct kp_proc_arena *a, size_t size);
/* Copies of <n> bytes of <s> / of the string <s> (NULL gives ""), NUL-terminated. */
char *kp_proc_strndup(struct kp_proc_arena *a, const char *s, size_t n);
char *kp_proc_strdup(struct kp_proc_arena *a, const char *s);
/* A new zeroed element of <size> bytes at the end of <v>; valid until the next push. */
void *kp_proc_push(struct kp_proc_arena *a, struct kp_proc_vec *v, size_t size);
/* Append the pair (<key>, <value>) to a vector of struct ProcField; -ENOMEM or 0. */
int kp_proc_push_field(struct kp_proc_arena *a, struct kp_proc_vec *v, const char *key,
		       const char *value);
void kp_proc_mark(const struct kp_proc_arena *a, struct kp_proc_mark *m);
/* Free everything allocated since <m>. */
void kp_proc_rollback(struct kp_proc_arena *a, const struct kp_proc_mark *m);
void kp_proc_arena_free(struct kp_proc_arena *a);
/* Tests only: let the next <n> allocations of this thread succeed and fail the ones after
 * (n < 0: never fail). */
void kp_proc_fail_after(long n);

/* ---- text (text.c): all in place on a mutable NUL-terminated buffer ---- */

/* The next line at *cur (its '\n' replaced by NUL), or NULL when the text is exhausted. */
char *kp_proc_line(char **cur);
/* <s> without leading and trailing white space (the tail is cut with a NUL). */
char *kp_proc_trim(char *s);
/* The next word (separated by spaces or tabs) at *cur, NUL-terminated; NULL when none. */
char *kp_proc_word(char **cur);
/* Up to <max> words at *cur into <w> (cut in place, *cur moved past them); returns how many
 * were stored. */
unsigned kp_proc_words(char **cur, char **w, unsigned max);
/* How many words <s> has (not modified). */
unsigned kp_proc_count_words(const char *s);
/* The words of <s> joined by single spaces, copied into the arena. */
char *kp_proc_join(struct kp_proc_arena *a, const char *s);
/* The numbers of the words of <s> into a new array of *n elements (NULL when none). */
int kp_proc_ull_words(struct kp_proc_arena *a, char *s, unsigned long long **arr, unsigned *n);
/* The next block of "key: value" lines at *cur, ended by a blank line or the end of the
 * text, into <fields> (a vector of struct ProcField, reset first); lines without ':' are
 * passed over. Returns 1 when a block with fields was read, 0 at the end, -ENOMEM. */
int kp_proc_field_block(struct kp_proc_arena *a, char **cur, struct kp_proc_vec *fields);
/* Split "key: value" at its first ':' into trimmed parts; false when there is no ':'. */
bool kp_proc_colon(char *line, char **key, char **value);
bool kp_proc_prefix(const char *s, const char *prefix);
/* Numbers as the leading digits of <s> say; 0 for NULL, no digits, or out of range. */
unsigned long long kp_proc_ull(const char *s);
long long kp_proc_ll(const char *s);
int kp_proc_int(const char *s);
double kp_proc_double(const char *s);

/* ---- parsers: sys_cpu.c, sys_mem.c, sys_misc.c, pid.c ---- */

typedef int (*kp_proc_parse_fn)(struct kp_proc_arena *a, char *text, size_t len,
				struct ProcData *out);

int kp_proc_parse_stat(struct kp_proc_arena *a, char *text, size_t len, struct ProcData *out);
int kp_proc_parse_cpuinfo(struct kp_proc_arena *a, char *text, size_t len, struct ProcData *out);
int kp_proc_parse_loadavg(struct kp_proc_arena *a, char *text, size_t len, struct ProcData *out);
int kp_proc_parse_uptime(struct kp_proc_arena *a, char *text, size_t len, struct ProcData *out);
int kp_proc_parse_softirqs(struct kp_proc_arena *a, char *text, size_t len, struct ProcData *out);
int kp_proc_parse_schedstat(struct kp_proc_arena *a, char *text, size_t len, struct ProcData *out);
int kp_proc_parse_interrupts(struct kp_proc_arena *a, char *text, size_t len, struct ProcData *out);
int kp_proc_parse_irq_affinity(struct kp_proc_arena *a, char *text, size_t len,
			       struct ProcData *out);
int kp_proc_parse_pressure(struct kp_proc_arena *a, char *text, size_t len, struct ProcData *out);

int kp_proc_parse_meminfo(struct kp_proc_arena *a, char *text, size_t len, struct ProcData *out);
int kp_proc_parse_vmstat(struct kp_proc_arena *a, char *text, size_t len, struct ProcData *out);
int kp_proc_parse_slabinfo(struct kp_proc_arena *a, char *text, size_t len, struct ProcData *out);
int kp_proc_parse_zoneinfo(struct kp_proc_arena *a, char *text, size_t len, struct ProcData *out);
int kp_proc_parse_buddyinfo(struct kp_proc_arena *a, char *text, size_t len, struct ProcData *out);

int kp_proc_parse_net_dev(struct kp_proc_arena *a, char *text, size_t len, struct ProcData *out);
int kp_proc_parse_sockstat(struct kp_proc_arena *a, char *text, size_t len, struct ProcData *out);
int kp_proc_parse_netstat(struct kp_proc_arena *a, char *text, size_t len, struct ProcData *out);
int kp_proc_parse_arp(struct kp_proc_arena *a, char *text, size_t len, struct ProcData *out);
int kp_proc_parse_diskstats(struct kp_proc_arena *a, char *text, size_t len, struct ProcData *out);
int kp_proc_parse_mounts(struct kp_proc_arena *a, char *text, size_t len, struct ProcData *out);
int kp_proc_parse_locks(struct kp_proc_arena *a, char *text, size_t len, struct ProcData *out);
int kp_proc_parse_version(struct kp_proc_arena *a, char *text, size_t len, struct ProcData *out);
int kp_proc_parse_modules(struct kp_proc_arena *a, char *text, size_t len, struct ProcData *out);
int kp_proc_parse_filesystems(struct kp_proc_arena *a, char *text, size_t len,
			      struct ProcData *out);
int kp_proc_parse_scsi(struct kp_proc_arena *a, char *text, size_t len, struct ProcData *out);

int kp_proc_parse_pid_stat(struct kp_proc_arena *a, char *text, size_t len, struct ProcData *out);
int kp_proc_parse_pid_statm(struct kp_proc_arena *a, char *text, size_t len, struct ProcData *out);
int kp_proc_parse_pid_status(struct kp_proc_arena *a, char *text, size_t len, struct ProcData *out);
int kp_proc_parse_pid_io(struct kp_proc_arena *a, char *text, size_t len, struct ProcData *out);
int kp_proc_parse_pid_smaps_rollup(struct kp_proc_arena *a, char *text, size_t len,
				   struct ProcData *out);
int kp_proc_parse_pid_numa_maps(struct kp_proc_arena *a, char *text, size_t len,
				struct ProcData *out);
int kp_proc_parse_pid_smaps(struct kp_proc_arena *a, char *text, size_t len, struct ProcData *out);
int kp_proc_parse_pid_environ(struct kp_proc_arena *a, char *text, size_t len,
			      struct ProcData *out);
int kp_proc_parse_pid_cmdline(struct kp_proc_arena *a, char *text, size_t len,
			      struct ProcData *out);
int kp_proc_parse_pid_limits(struct kp_proc_arena *a, char *text, size_t len, struct ProcData *out);
int kp_proc_parse_pid_stack(struct kp_proc_arena *a, char *text, size_t len, struct ProcData *out);
int kp_proc_parse_pid_wchan(struct kp_proc_arena *a, char *text, size_t len, struct ProcData *out);
int kp_proc_parse_pid_maps(struct kp_proc_arena *a, char *text, size_t len, struct ProcData *out);
int kp_proc_parse_pid_comm(struct kp_proc_arena *a, char *text, size_t len, struct ProcData *out);
/* Stat lines of threads, one per line (what ProcDataRead assembles from task/TID/stat). */
int kp_proc_parse_pid_task_stat(struct kp_proc_arena *a, char *text, size_t len,
				struct ProcData *out);
/* One stat line into <e>; -ENODATA when it has no "(comm)". */
int kp_proc_stat_line(struct kp_proc_arena *a, char *line, struct ProcPidStatEntry *e);

/* ---- reading (read.c) ---- */

/* The /proc root: $KPERF_BPF_PROC or "/proc". */
const char *kp_proc_root(void);
/* Is <src> a source of one process (PROC_PID_*)? */
bool kp_proc_is_pid_source(int src);
/* The text parser of <src>, NULL for those that are not one file's text (PROC_PID_FD and
 * the PROC_SYS_* lists). */
kp_proc_parse_fn kp_proc_parser(int src);
/* Parse <text> (<len> bytes, text[len] == 0, cut up in place) as source <src> into <out>.
 * Failures are recorded with kp_fail(): LIBPERF_ERR_PROC_SOURCE_INVALID for a source with
 * no text parser, LIBPERF_ERR_PROC_PARSE_FAILED when nothing was recognised,
 * LIBPERF_ERR_PROC_DATA_NULL when memory runs out (-ENOMEM). */
int kp_proc_parse(struct kp_proc_arena *a, int src, char *text, size_t len, struct ProcData *out);
/* Read source <src> (of process <pid> for PROC_PID_*) under <root> into <out>. On failure
 * the recorded code says why: LIBPERF_ERR_PROC_SOURCE_INVALID (no such source, or a process
 * source with pid <= 0), LIBPERF_ERR_PROC_FILE_NOT_FOUND (-ENOENT), LIBPERF_ERR_PROC_READ_FAILED
 * (unreadable, or empty where empty means nothing), LIBPERF_ERR_PROC_PARSE_FAILED (-ENODATA),
 * LIBPERF_ERR_PROC_DATA_NULL (-ENOMEM). What a failure allocated stays in the arena until the
 * caller rolls back. */
int kp_proc_read_source(struct kp_proc_arena *a, const char *root, int src, int pid,
			struct ProcData *out);

#endif
