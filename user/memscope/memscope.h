/*
 * memscope.h (internal) - memory events of a process (kperf-bpf memscope): its allocator
 * calls, the evidence that it uses its blocks, and its mstx marks, recorded with BPF and
 * written as msMemScope's dump (CSV or SQLite). The analyzers are Python (kperf.memscope).
 *
 *  target.c   which file provides the allocator of a process or of a command about to run,
 *             and where its functions start (the uprobe sites)
 *  bpf.c      the owner of memscope.skel.h: load, place the probes, targets, counters, the
 *             ring buffer, the stacks map
 *  follow.c   a forked child that stopped at its start: waited for, then let run, recorded
 *  record.c   a recording: the probes, the marks (the activity module), the events kept in
 *             memory with their stacks resolved while the process lives
 *  write.c    the events in time order, blocks matched (allocation ids, sizes of frees,
 *             accesses attributed), one row each
 *  sink.c     rows into a CSV file or a SQLite database, with msMemScope's columns
 */
#ifndef KPERF_MEMSCOPE_INTERNAL_H
#define KPERF_MEMSCOPE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>

#include "memscope_event.h" /* bpf/: struct kp_ms_event, enum kp_ms_func */

/* ---- target.c ---- */

struct kp_ms_site {
	char *path; /* the file, as this process opens it */
	uint64_t off; /* file offset of the function's entry */
	int func; /* enum kp_ms_func */
};

struct kp_ms_plan {
	struct kp_ms_site *sites; /* distinct (path, off); the first function named wins */
	unsigned nsites;
	char *owner; /* the basename of the file that provides malloc */
};

/* The allocator functions (names with <prefix> before them, "" for none: a renamed
 * allocator's je_malloc...) of process <pid>: malloc's family from the first of its files
 * that defines malloc (the executable, then other libraries, libc last), mmap/munmap/brk from
 * libc (or from that file when it is the executable), kperf_mem_access from a libkperf-bpf
 * it maps. KPERF_ERR_INVALID_ARG with a message when no file defines malloc. */
int kp_ms_plan_pid(int pid, const char *prefix, struct kp_ms_plan *out);
/* The same for the program <exe> about to be started: its dynamic loader lists the libraries
 * in the order it will load them (a static program: the program alone). */
int kp_ms_plan_command(const char *exe, const char *prefix, struct kp_ms_plan *out);
void kp_ms_plan_free(struct kp_ms_plan *p);
/* "malloc", "free", ...; the name of a record's function */
const char *kp_ms_func_name(int func);

/* ---- bpf.c ---- */

struct kp_ms_bpf;

typedef void (*kp_ms_event_fn)(void *ctx, const struct kp_ms_event *e);

struct kp_ms_bpf_opts {
	uint64_t sample_bytes; /* 0: exact */
	uint64_t min_size;
	bool stacks;
	bool fp_stacks; /* stacks by frame pointers only (not from .eh_frame tables) */
	bool follow; /* the children of the recorded processes too (FORK records) */
	size_t ringbuf_bytes; /* a power of two, multiple of the page size */
	kp_ms_event_fn on_event; /* called from kp_ms_bpf_consume() */
	void *ctx;
};

int kp_ms_bpf_open(const struct kp_ms_bpf_opts *o, struct kp_ms_bpf **out);
/* Record process <tgid> (<from_exec>: from its next exec on), and place the probes of <plan>
 * for it. */
int kp_ms_bpf_add_target(struct kp_ms_bpf *b, int tgid, bool from_exec,
			 const struct kp_ms_plan *plan);
/* The two halves of it: the state of <tgid> in the filter (enum kp_ms_target), the probes. */
int kp_ms_bpf_set_target(struct kp_ms_bpf *b, int tgid, int state);
int kp_ms_bpf_place_probes(struct kp_ms_bpf *b, int tgid, const struct kp_ms_plan *plan);
/* the state of <tgid> in the filter, 0 when it is not there */
int kp_ms_bpf_target_state(struct kp_ms_bpf *b, int tgid);
/* <tgid>'s state, only while it is in the filter: -ENOENT once it left (its process exited) */
int kp_ms_bpf_update_target(struct kp_ms_bpf *b, int tgid, int state);
/* The tracepoints of use evidence and processes; a missing page-fault tracepoint is a
 * warning (<no_faults> set), not a failure. */
int kp_ms_bpf_attach_tracepoints(struct kp_ms_bpf *b, bool *no_faults);
void kp_ms_bpf_set_enabled(struct kp_ms_bpf *b, bool on);
/* Take every uprobe and uretprobe placed so far out of the processes (the breakpoints gone:
 * their allocator calls cost nothing again); kp_ms_bpf_place_probes places them anew. */
void kp_ms_bpf_remove_probes(struct kp_ms_bpf *b);
/* An epoll fd readable when the programs woke the reader (a child to follow, a process's
 * first call, a quarter of the ring buffer used): to wait on, without consuming. */
int kp_ms_bpf_epoll_fd(struct kp_ms_bpf *b);
/* wait up to <timeout_ms> for records, deliver them; the count or a negative errno */
int kp_ms_bpf_poll(struct kp_ms_bpf *b, int timeout_ms);
/* The frames of stack <id> (leaf first) into <ips>; their count, 0 when unknown. */
unsigned kp_ms_bpf_stack(struct kp_ms_bpf *b, uint64_t id, uint64_t *ips, unsigned max);
/* counters summed over CPUs, indexed by enum kp_ms_counter */
void kp_ms_bpf_counters(struct kp_ms_bpf *b, uint64_t out[KP_MS_CNT_MAX]);
unsigned kp_ms_bpf_nprobes(const struct kp_ms_bpf *b);
/* the .eh_frame unwinder's figures (zero when stacks are frame pointers') */
struct kp_uw_load_stats;
void kp_ms_bpf_unwind_stats(struct kp_ms_bpf *b, struct kp_uw_load_stats *s);
void kp_ms_bpf_close(struct kp_ms_bpf *b);

/* ---- follow.c: the children of recorded processes (a FORK record) ---- */

/* A forked child <pid> that stops itself at its start (a FORK record with nr 1), its probes
 * placed by the caller: wait until it has stopped, or is gone. Whether it ran before its
 * probes (it could not stop itself). */
bool kp_ms_child_wait(struct kp_ms_bpf *b, int pid);
/* ... then recorded from now on (while it is still a target) and continued. */
void kp_ms_child_release(struct kp_ms_bpf *b, int pid);

/* ---- record.c ---- */

/* what a stored event is beyond enum kp_ms_kind: an mstx marker record */
#define KP_MS_EV_MSTX 16 /* nr: 1 mark, 2 range start, 3 range end */

struct kp_ms_ev {
	uint64_t ts;
	uint64_t ptr;
	uint64_t size;
	uint64_t old;
	uint64_t seq; /* arrival order: ties in time keep it */
	uint32_t tgid, tid;
	uint32_t stack; /* interned Call Stack(C), 0: none */
	uint32_t name; /* MSTX: interned message; 0 otherwise */
	uint32_t domain; /* MSTX: interned domain */
	uint32_t nr; /* SYSBUF: syscall; MSTX: kind; FAULT: error code */
	uint16_t kind; /* enum kp_ms_kind or KP_MS_EV_MSTX */
	uint16_t func;
};

struct kp_ms_opts {
	const int *pids; /* the processes (threads: their process) */
	unsigned npids;
	bool from_exec; /* pids are launched commands, recorded from their exec on */
	const char *command; /* with from_exec: the program they will run */
	const char *prefix; /* allocator symbol prefix, NULL: none */
	uint64_t sample_bytes;
	uint64_t min_size;
	bool stacks;
	bool no_markers;
	bool follow; /* the children they fork are recorded too */
	unsigned buffer_kb; /* 0: 16384 */
};

struct kp_ms_stats {
	uint64_t allocs, frees, accesses, marks, system;
	uint64_t lost_ringbuf, lost_inflight, lost_sampled, lost_stacks, lost_marks;
	uint64_t not_kept; /* events beyond the in-memory limit */
	uint64_t children; /* children followed */
	uint64_t not_stopped; /* followed children that ran before their probes were placed */
	unsigned probes;
	bool no_faults; /* no page-fault tracepoint here */
	bool marks_unavailable; /* marks asked for, not collectable here (a command, no cookies) */
};

struct kp_ms;

int kp_ms_open(const struct kp_ms_opts *o, struct kp_ms **out);
int kp_ms_enable(struct kp_ms *m, bool on);
/* Take in what the sources have, waiting up to <timeout_ms>; 0 or a negative errno. */
int kp_ms_poll(struct kp_ms *m, int timeout_ms);
/* Write everything recorded to <path>: SQLite when it ends in ".db", CSV otherwise; *st
 * says what was written and lost. */
int kp_ms_write(struct kp_ms *m, const char *path, struct kp_ms_stats *st);
void kp_ms_get_stats(struct kp_ms *m, struct kp_ms_stats *st);
void kp_ms_close(struct kp_ms *m);

/* for write.c: the events (not sorted) and the interned strings */
const struct kp_ms_ev *kp_ms_events(const struct kp_ms *m, size_t *n);
const char *kp_ms_str(const struct kp_ms *m, uint32_t i);
const struct kp_ms_opts *kp_ms_options(const struct kp_ms *m);
const char *kp_ms_owner(const struct kp_ms *m);

/* ---- sink.c: rows into a CSV file or a SQLite database ---- */

struct kp_ms_sink;

/* SQLite when <path> ends in ".db", CSV otherwise; the file appears complete at close */
int kp_ms_sink_open(const char *path, struct kp_ms_sink **out);
int kp_ms_sink_row(struct kp_ms_sink *s, const char *const cols[12]);
int kp_ms_sink_close(struct kp_ms_sink *s);
void kp_ms_sink_abort(struct kp_ms_sink *s);

/* ---- write.c ---- */

/* the columns of msMemScope's dump, in order */
extern const char *const kp_ms_columns[12];

int kp_ms_write_file(struct kp_ms *m, const char *path, struct kp_ms_stats *st);

#endif
