/*
 * activity.h (internal) - what a process does, as msPTI-style activity records: its mstx
 * markers, its syscalls and its communication.
 *
 *  probes.c     the files that hold the kperf USDT probes for a set of processes (their
 *               libkperf-bpf.so, or an executable it is linked into), from ELF notes
 *  mstx_bpf.c   the owner of mstx.skel.h: load, attach to those probes, the process and
 *               domain filters, the ring buffer and its counters
 *  syscalls.c   syscall and socket/pipe I/O records, from the trace module's programs
 *  api.c        KperfActivity* (include/kperf/activity.h), and kp_act_* below for the other
 *               modules (timeline) that collect through it
 *
 * Processes are handled in one place: kp_act_targets() decides which pids the filters hold
 * and whether their children follow, and mstx_bpf.c's populate() writes them to the kernel.
 */
#ifndef KPERF_ACTIVITY_INTERNAL_H
#define KPERF_ACTIVITY_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>

#include "kperf/activity.h"
#include "mstx/mstx.h"
#include "mstx_event.h" /* bpf/: struct kp_mstx_event */

/* ---- probes.c ---- */

/* One USDT probe note of an ELF file (.note.stapsdt). */
struct kp_usdt_note {
	char provider[32];
	char name[32];
	uint64_t pc; /* address of the probe site (a nop) */
	uint64_t sema; /* address of its semaphore, 0 without one */
	uint64_t base; /* the .stapsdt.base address the note was written against */
	uint64_t file_off; /* pc as an offset in the file (what a uprobe is placed at) */
	uint64_t sema_off; /* sema as an offset in the file, 0 without one */
};

/* The notes of <provider> (NULL: all) in the ELF file <path>: a malloc'd array in *out,
 * their count (0: none), or a negative errno (not a readable ELF file). */
int kp_usdt_notes(const char *path, const char *provider, struct kp_usdt_note **out);

struct kp_probe_files {
	char **paths; /* files holding kperf probes, each once (by device and inode) */
	size_t n, cap;
	void *ids; /* (dev, ino) of each, for de-duplication */
	void *without; /* (dev, ino) of files looked at that hold none (every-process scan) */
	size_t nwithout, without_cap;
};

/* Where may the probes of <pids> be? The files their processes map whose name starts with
 * "libkperf-bpf" and their executables; this process's own copy when <self> (or when one of
 * the pids is this process); with <command> (a program about to be started), that program
 * when it holds probes, and the libkperf-bpf.so.0 the dynamic loader would find in the
 * usual places ($KPERF_BPF_LIB, $LD_LIBRARY_PATH, the build tree next to this program, the
 * system's library directories); and <extra> files, which must hold probes
 * (KPERF_ERR_INVALID_ARG otherwise). Only files that hold kperf probes are kept. */
int kp_probe_files_find(const int *pids, unsigned npids, bool self, const char *command,
			const char *const *extra, unsigned nextra, struct kp_probe_files *out);
/* Every process's (allPids): the files with kperf probes that any process this one can see
 * maps (its executable, its libkperf-bpf*), the libkperf-bpf.so.0 a program started later
 * would load (as for <command> above), and <extra>. The pids looked at (its /proc) in
 * *pids (malloc'd; for kernels that attach a probe per process), their count in *npids. */
int kp_probe_files_every(const char *const *extra, unsigned nextra, struct kp_probe_files *out,
			 int **pids, unsigned *npids);
/* whether process <pid> maps file <i> of <f> now */
bool kp_probe_file_mapped(const struct kp_probe_files *f, size_t i, int pid);
void kp_probe_files_free(struct kp_probe_files *f);

/* ---- mstx_bpf.c ---- */

struct kp_mstx_bpf;

/* 0 to go on, < 0 stops the delivery after this record */
typedef int (*kp_mstx_event_fn)(void *ctx, const struct kp_mstx_event *e);

struct kp_mstx_bpf_opts {
	const int *tgids; /* processes, NULL: all */
	unsigned ntgids;
	bool follow_fork; /* their children too */
	size_t ringbuf_bytes; /* a power of two, multiple of the page size */
	kp_mstx_event_fn on_event; /* called from kp_mstx_bpf_consume() */
	void *ctx;
};

/* Load the programs (not attached, not enabled). */
int kp_mstx_bpf_open(const struct kp_mstx_bpf_opts *o, struct kp_mstx_bpf **out);
/* Attach the three programs to the probes of <path>, for process <pid> (-1: every process
 * that maps it). Returns the number of probe sites attached. */
int kp_mstx_bpf_attach(struct kp_mstx_bpf *b, const char *path, int pid);
void kp_mstx_bpf_set_enabled(struct kp_mstx_bpf *b, bool on);
/* Add <name> to the domains filtered out in the kernel (<disabled>), or take it out. */
int kp_mstx_bpf_set_domain(struct kp_mstx_bpf *b, const char *name, bool disabled);
int kp_mstx_bpf_epoll_fd(struct kp_mstx_bpf *b);
int kp_mstx_bpf_consume(struct kp_mstx_bpf *b);
/* records lost (ring buffer full) and calls filtered out (disabled domains) */
void kp_mstx_bpf_counters(struct kp_mstx_bpf *b, uint64_t *dropped, uint64_t *filtered);
unsigned kp_mstx_bpf_nprobes(const struct kp_mstx_bpf *b);
void kp_mstx_bpf_close(struct kp_mstx_bpf *b);

/* ---- syscalls.c ---- */

struct kp_act_sys;
struct kp_act_sink;
struct kp_sys_event; /* bpf/syscall.h */

/* Syscall records of <tgids> (and children when <follow_fork>; from their next exec on when
 * <from_exec>) for KERNEL (every syscall) and/or HCCL (socket and pipe I/O); no tgids: of
 * every process but this one. */
int kp_act_sys_open(const int *tgids, unsigned ntgids, bool follow_fork, bool from_exec,
		    bool kernel, bool hccl, size_t ringbuf_bytes, struct kp_act_sink *sink,
		    struct kp_act_sys **out);
int kp_act_sys_attach(struct kp_act_sys *s);
void kp_act_sys_detach(struct kp_act_sys *s);
int kp_act_sys_epoll_fd(struct kp_act_sys *s);
int kp_act_sys_consume(struct kp_act_sys *s);
uint64_t kp_act_sys_dropped(struct kp_act_sys *s);
bool kp_act_sys_fallback(const struct kp_act_sys *s);
void kp_act_sys_close(struct kp_act_sys *s);

/* ---- api.c: the records of one read ---- */

/* A record under construction: the strings are copied into the array at the end. */
struct kp_act_rec {
	struct KperfActivityRecord r;
	char comm[32]; /* the task's, or "[outside namespace]" */
	char domain[64];
	char name[256];
	char channel[40];
};

/* Where sources put their records during a read (api.c); -ENOMEM when it cannot grow. */
int kp_act_sink_add(struct kp_act_sink *s, const struct kp_act_rec *rec);
/* the next correlation id of the sink's handle */
uint64_t kp_act_sink_next_id(struct kp_act_sink *s);

/* With a direct consumer (kp_act_set_direct), the KERNEL record of <e> goes to it instead of
 * becoming an activity record: true then, with its result in *err. */
bool kp_act_sink_direct_sys(struct kp_act_sink *s, const struct kp_sys_event *e, int *err);

/* ---- api.c: a collection, for the modules that build on it (timeline) ---- */

struct kp_activity;

/* KperfActivityOpen without the handle: *opts is a full struct KperfActivityOpts (zeroed
 * where unused). */
int kp_act_open(const enum KperfActivityKind *kinds, unsigned nkinds,
		const struct KperfActivityOpts *opts, struct kp_activity **out);
int kp_act_enable(struct kp_activity *a, bool on);
/* Everything recorded since the last read into *recs (malloc'd; free() it), waiting up to
 * <timeout_ms> as KperfActivityRead does. Returns the count or a negative errno. */
int kp_act_read(struct kp_activity *a, int timeout_ms, struct kp_act_rec **recs);
void kp_act_stats(struct kp_activity *a, struct KperfActivityStats *st);

/* A module that makes something of its own of the records (the timeline) takes them as the
 * programs wrote them: no activity record is built (about 400 bytes, zeroed and formatted,
 * then copied twice), which is most of what reading a syscall costs. Each function returns
 * 0 to go on, or a negative errno that stops the drain. */
struct kp_act_direct {
	int (*on_sys)(void *ctx, const struct kp_sys_event *e); /* a KERNEL syscall */
	int (*on_mstx)(void *ctx, const struct kp_mstx_event *e); /* a marker call */
	void *ctx;
};

/* From now on, records go to <d> (kept by the caller; NULL: activity records again). */
void kp_act_set_direct(struct kp_activity *a, const struct kp_act_direct *d);
/* Everything recorded so far into the direct consumer, without waiting: the number of
 * records drained, or the consumer's error. */
int kp_act_consume(struct kp_activity *a);
void kp_act_close(struct kp_activity *a);

/* The pids an activity collection holds in its filters: <pids> as processes (threads
 * replaced by their process), or this process when there are none. *out is malloc'd;
 * returns the count or a negative errno (LIBPERF_ERR_INVALID_PIDLIST for a pid that does
 * not exist). */
int kp_act_targets(const int *pids, unsigned npids, int **out);

#endif
