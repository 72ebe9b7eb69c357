/*
 * trace.h - the syscall tracing module: syscall names (syscall_names.c), the BPF program
 * that measures them (syscall_bpf.c, the only owner of the syscall skeletons) and the
 * PmuTrace* API on top (trace.c).
 */
#ifndef KPERF_TRACE_H
#define KPERF_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>

#include "syscall.h"

/* ---- syscall_names.c ---- */

/* The number of <name> if the running kernel implements it, else LIBPERF_ERR_INVALID_SYSCALL_FUN
 * with close names suggested. */
int kp_syscall_lookup(const char *name);
/* The name of <nr>, NULL when the table has none. */
const char *kp_syscall_name(int nr);
/* One past the highest number in the table. */
int kp_syscall_max(void);
/* The syscalls this kernel implements, in number order; *names is malloc'd (the strings are
 * static). Returns their count or a negative errno. */
int kp_syscall_list(const char ***names);
/* Did the list come from the running kernel (tracefs) rather than the build-time table? */
bool kp_syscall_names_from_kernel(void);

/* ---- syscall_bpf.c ---- */

struct kp_sys_bpf;

/* 0 to go on; < 0 stops the delivery after this record (the next ones wait in the ring) */
typedef int (*kp_sys_event_fn)(void *ctx, const struct kp_sys_event *e);

struct kp_sys_bpf_opts {
	const int *tgids; /* processes, NULL: all */
	unsigned ntgids;
	const int *cpus; /* NULL: all */
	unsigned ncpus;
	const int *nrs; /* syscall numbers, NULL: all */
	unsigned nnrs;
	/* syscalls whose first argument is a descriptor: each record of theirs says what file
	 * it is (kp_sys_event.fd_kind, fd_ino); the raw_syscalls fallback leaves KP_FD_NONE */
	const int *fd_nrs;
	unsigned nfd_nrs;
	int cgroup_fd; /* -1: no cgroup filter */
	bool record_events;
	bool follow_fork;
	bool from_exec;
	bool exclude_self; /* with no tgids: leave out the caller's own process */
	uint64_t min_duration_ns;
	size_t ringbuf_bytes; /* a power of two, multiple of the page size */
	unsigned summary_entries;
	kp_sys_event_fn on_event; /* called from kp_sys_bpf_consume() */
	void *ctx;
};

/* Open and load (not attach). Picks tp_btf + task storage when the kernel has BTF and
 * they load, else the raw_syscalls fallback (kp_warn KPERF_WARN_FALLBACK). */
int kp_sys_bpf_open(const struct kp_sys_bpf_opts *opts, struct kp_sys_bpf **out);
int kp_sys_bpf_attach(struct kp_sys_bpf *b);
void kp_sys_bpf_detach(struct kp_sys_bpf *b);
/* The ring buffer's epoll fd (-1 without per-call records), to wait for data. */
int kp_sys_bpf_epoll_fd(struct kp_sys_bpf *b);
/* Deliver every waiting record to on_event; not thread-safe (callers serialise). */
int kp_sys_bpf_consume(struct kp_sys_bpf *b);

struct kp_sys_row {
	struct kp_sys_key key;
	struct kp_sys_stat stat; /* summed over CPUs */
};

/* The summary, summed over CPUs; *rows is malloc'd. Returns the count or -errno. */
int kp_sys_bpf_summary(struct kp_sys_bpf *b, struct kp_sys_row **rows);
/* Delete the summary rows of <tgids> (processes that are gone); the number deleted or -errno. */
int kp_sys_bpf_forget(struct kp_sys_bpf *b, const int *tgids, unsigned n);
/* The counters of enum kp_counter, summed over CPUs. */
void kp_sys_bpf_counters(struct kp_sys_bpf *b, uint64_t out[KP_CNT_MAX]);
bool kp_sys_bpf_is_compat(const struct kp_sys_bpf *b);
size_t kp_sys_bpf_ringbuf_bytes(const struct kp_sys_bpf *b);
void kp_sys_bpf_close(struct kp_sys_bpf *b);

#endif
