/*
 * timeline.h (internal) - one timeline of processes, exported as Chrome trace events.
 *
 *  store.c    the events collected so far: syscalls, marks, ranges (paired from their start
 *             and end records), samples with their stacks interned as a tree of frames, and
 *             the names of processes and threads; strings interned
 *  chrome.c   the Chrome trace-event JSON writer (strictly valid JSON, events in time order,
 *             ranges as complete events where they nest on their thread, async otherwise)
 *  memory.c   the memory source: memscope's allocator records as a heap-in-use counter and
 *             large allocations
 *  check.c    KperfTimelineCheck: what the kernel must have for each source, asked first
 *  collect.c  KperfTimeline*: the sources (the activity module for markers and syscalls, the
 *             sampling task of pmu.h for CPU samples and their stacks, the off-CPU module
 *             in slices mode), a thread draining them
 *
 * Everything is in ns of CLOCK_MONOTONIC until the writer turns it into µs.
 */
#ifndef KPERF_TIMELINE_INTERNAL_H
#define KPERF_TIMELINE_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "activity/activity.h"
#include "core/core.h"
#include "kperf/kperf.h"
#include "kperf/timeline.h"
#include "offcpu/offcpu.h"

enum kp_tl_kind {
	KP_TL_SYSCALL, /* X: name = syscall, cat "syscall", ret */
	KP_TL_MARK, /* i: name = message, cat = domain */
	KP_TL_RANGE, /* X on its thread, or b/e when it crosses threads or does not nest */
	KP_TL_SAMPLE, /* P: sf = leaf frame node */
	KP_TL_OFFCPU, /* X: a slice off the cpu, name = "blocked" | "preempted", sf = id */
	KP_TL_COUNTER, /* C: name = the counter, id = its value (a process's) */
	KP_TL_ALLOC, /* i: a large allocation, name = the function, id = size, ret = ptr */
};

struct kp_tl_event {
	uint64_t ts; /* ns */
	uint64_t dur; /* ns: syscalls and ranges */
	uint64_t id; /* ranges: the mstx id; samples: the leaf frame node */
	int64_t ret; /* syscalls */
	int pid;
	int tid; /* the thread it happened on (a range: where it started) */
	int end_tid; /* ranges: where it ended */
	uint32_t name; /* interned strings */
	uint32_t cat;
	uint8_t kind; /* enum kp_tl_kind */
	uint8_t unfinished; /* a range still open (written up to its process's last event) */
	uint8_t cpu_valid;
	uint16_t cpu;
};

/* A node of the tree of stack frames: its frame, and the node of its caller (0: a root). */
struct kp_tl_frame {
	uint32_t parent;
	uint32_t name;
	uint32_t cat;
};

/* the Chrome trace's pid of processes outside the caller's PID namespace (pid -1 elsewhere):
 * PID_MAX_LIMIT, which no process has (the format's pids are not negative) */
#define KP_TL_OUTSIDE_PID 4194304
#define KP_TL_SYS_NAMES 1024 /* syscall numbers whose names the store keeps at hand */

struct kp_tl_store {
	struct kp_tl_event *ev;
	size_t nev, cap, max;
	uint64_t not_kept;
	/* interned strings: index -> text, text -> index + 1 */
	char **str;
	size_t nstr, strcap;
	struct kp_map str_idx;
	/* frames: node 1.. (node 0 is "no caller"); (parent << 32 | name) -> node */
	struct kp_tl_frame *frames;
	size_t nframes, framecap;
	struct kp_map frame_idx;
	/* ranges started and not ended yet: "pid:id" -> struct kp_tl_event * (malloc'd) */
	struct kp_map open;
	/* tid -> (pid, name); pid -> last event time, name */
	struct kp_map threads;
	struct kp_map procs;
	uint64_t n_sys, n_samples, n_marks, n_ranges, unmatched_ends, n_offcpu;
	uint64_t n_counters, n_allocs;
	/* the fast path of syscall records: the thread of the last record, and the interned
	 * name (+ 1, 0: not yet) of each syscall number and of the category "syscall" */
	void *last_thread;
	int last_tid;
	uint32_t sys_name[KP_TL_SYS_NAMES];
	uint32_t sys_cat;
};

/* one syscall, as the syscall programs recorded it */
struct kp_tl_syscall {
	uint64_t start, dur; /* ns */
	int64_t ret;
	int pid, tid, nr, cpu;
	const char *comm; /* NUL-terminated */
};

/* ---- store.c ---- */

void kp_tl_store_init(struct kp_tl_store *s, size_t max_events);
void kp_tl_store_free(struct kp_tl_store *s);
/* Add what an activity record says; -ENOMEM. */
int kp_tl_add_activity(struct kp_tl_store *s, const struct KperfActivityRecord *r);
/* Add a syscall (what kp_tl_add_activity does with a KERNEL record, without the strings to
 * look up: the collector's path); -ENOMEM. */
int kp_tl_add_syscall(struct kp_tl_store *s, const struct kp_tl_syscall *c);
/* Add a CPU sample with its stack (leaf first, as PmuData has it); -ENOMEM. */
int kp_tl_add_sample(struct kp_tl_store *s, const struct PmuData *d);
/* Add a slice off the cpu, with the user stack it left the cpu with (leaf first; NULL: none);
 * -ENOMEM. */
int kp_tl_add_offcpu(struct kp_tl_store *s, const struct kp_offcpu_slice *sl,
		     const struct Stack *stack);
/* A value of the counter <name> of process <pid> (category "memory"); -ENOMEM. */
int kp_tl_add_counter(struct kp_tl_store *s, int pid, uint64_t ts, const char *name,
		      uint64_t value);
/* A large allocation by <func>; -ENOMEM. */
int kp_tl_add_alloc(struct kp_tl_store *s, int pid, int tid, uint64_t ts, const char *func,
		    uint64_t ptr, uint64_t size);
/* The interned string <i>. */
const char *kp_tl_str(const struct kp_tl_store *s, uint32_t i);
/* Thread <tid>'s process and name (NULL when never seen). */
bool kp_tl_thread(const struct kp_tl_store *s, int tid, int *pid, const char **name);
/* Process <pid>: its name and the time of its last event (0 when never seen). */
bool kp_tl_process(const struct kp_tl_store *s, int pid, const char **name, uint64_t *last);
/* Call <fn> for every range still open. */
void kp_tl_open_ranges(const struct kp_tl_store *s,
		       void (*fn)(void *ctx, const struct kp_tl_event *e), void *ctx);
/* Every thread and process seen: fn(ctx, tid, pid) once per thread. */
void kp_tl_threads(const struct kp_tl_store *s, void (*fn)(void *ctx, int tid, int pid), void *ctx);

/* ---- memory.c: the heap in use and large allocations (memscope's programs) ---- */

struct kp_tl_mem;

struct kp_tl_mem_opts {
	const int *pids; /* tgids */
	int npids;
	bool from_exec;
	const char *command; /* with from_exec: the program about to run */
	uint64_t big; /* allocations of at least this many bytes are instant events */
	unsigned ring_kb; /* 0: 8192 */
	struct kp_tl_store *store; /* where the events go (the caller's lock held at drains) */
};

/* Load and place the probes, disabled; children are followed. */
int kp_tl_mem_open(const struct kp_tl_mem_opts *o, struct kp_tl_mem **out);
/* Records made (in the kernel) or not: off takes the probes out of the processes, on places
 * them again (in the processes still there). 0, or why a process's could not be placed. */
int kp_tl_mem_enable(struct kp_tl_mem *m, bool on);
/* Sleep up to <timeout_ms>, less when the programs woke the reader (a child to follow). */
void kp_tl_mem_wait(struct kp_tl_mem *m, int timeout_ms);
/* What the kernel recorded, into the store: the number of records, or -ENOMEM. */
int kp_tl_mem_drain(struct kp_tl_mem *m);
/* Records the kernel lost. */
uint64_t kp_tl_mem_lost(struct kp_tl_mem *m);
void kp_tl_mem_close(struct kp_tl_mem *m);

/* ---- chrome.c ---- */

struct kp_tl_meta {
	uint64_t dropped; /* records the kernel lost */
	const char *command; /* what was traced, for otherData (may be NULL) */
	bool off_cpu; /* off-CPU slices were collected: */
	uint64_t off_short; /* slices shorter than the minimum, left out */
	uint64_t off_lost; /* slices the kernel lost */
	bool memory; /* the memory source was on: */
	uint64_t mem_lost; /* allocator records the kernel lost */
};

/* The Chrome trace-event JSON of everything in <s>. 0, or -EIO when <f> failed, -ENOMEM. */
int kp_tl_write_chrome(FILE *f, const struct kp_tl_store *s, const struct kp_tl_meta *m);
/* <text> as a JSON string (quotes included): escapes, and invalid UTF-8 as U+FFFD. */
void kp_json_string(FILE *f, const char *text);

#endif
