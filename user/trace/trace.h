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

#include <pthread.h>
#include <stdatomic.h>

#include "core/core.h"
#include "kperf/pmu.h"
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
struct bpf_object;

/* 0 to go on; < 0 stops the delivery after this record (the next ones wait in the ring).
 * With stacks (kp_sys_bpf_opts kernel_stack, user_stack) <e> is the start of a
 * struct kp_sys_event_stk. */
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
	bool by_cgroup; /* the summary by (cgroup, comm, syscall): kp_sys_bpf_cg_summary */
	uint64_t min_duration_ns;
	size_t ringbuf_bytes; /* a power of two, multiple of the page size */
	unsigned summary_entries;
	/* stacks at entry: in the records (kp_sys_event_stk) and in the summary by stack
	 * (kp_sys_bpf_stack_summary); stack_entries distinct stacks are kept */
	bool kernel_stack;
	bool user_stack;
	unsigned stack_entries;
	/* user stacks unwound from .eh_frame tables (user/unwind/owner.c), frame pointers where a
	 * mapping has none; else frame pointers only. The raw_syscalls fallback: frame pointers */
	bool unwind;
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

/* ---- summary_table.c ---- */

/* (process, syscall) rows in userspace, with an index */
struct kp_sys_table {
	struct kp_sys_row *rows;
	size_t n, cap;
	size_t *index; /* open addressing: row + 1, 0 free */
	size_t isize;
	size_t max_rows; /* 0: no limit; beyond, a new pair goes to its overflow row */
	uint64_t folded; /* calls put into overflow rows for want of a row */
};

/* Add <s> (a kernel value: its histogram folded) to row <key>, created if new. */
int kp_sys_table_add(struct kp_sys_table *t, const struct kp_sys_key *key,
		     const struct kp_sys_stat *s);
int kp_sys_table_copy(struct kp_sys_table *to, const struct kp_sys_table *from);
/* Remove the rows of the <n> processes <tgids>; the number removed. */
size_t kp_sys_table_drop(struct kp_sys_table *t, const int *tgids, unsigned n);
void kp_sys_table_free(struct kp_sys_table *t);
/* to += from (calls, errors, total, min, max, comm if none, histogram folded) */
void kp_sys_stat_add(struct kp_sys_stat *to, const struct kp_sys_stat *from);
/* the same for a value of the summary by stack (no histogram) */
void kp_sys_stack_stat_add(struct kp_sys_stack_stat *to, const struct kp_sys_stack_stat *from);

/* The summary, summed over CPUs, with the rows of the processes that exited; *rows is
 * malloc'd. Returns the count or -errno. */
int kp_sys_bpf_summary(struct kp_sys_bpf *b, struct kp_sys_row **rows);
struct kp_sys_cg_row {
	struct kp_sys_cg_key key; /* cgid ~0: an overflow row (kind says which) */
	struct kp_sys_stat stat; /* summed over CPUs */
	__u32 kind; /* 0, KP_SYS_OVERFLOW_TGID or KP_SYS_NOMEM_TGID */
};

/* The summary by cgroup (opened with by_cgroup) with the overflow rows that have calls;
 * *rows is malloc'd. Returns the count or -errno. */
int kp_sys_bpf_cg_summary(struct kp_sys_bpf *b, struct kp_sys_cg_row **rows);
/* Delete the rows of the cgroups <ids> from the summary by cgroup; the number deleted. */
int kp_sys_bpf_cg_forget(struct kp_sys_bpf *b, const uint64_t *ids, unsigned n);
struct kp_sys_stack_row {
	struct kp_sys_stack_key key;
	struct kp_sys_stack_stat stat; /* summed over CPUs */
};

/* The summary by stack (opened with stacks), summed over CPUs; *rows is malloc'd. Returns the
 * count or -errno. */
int kp_sys_bpf_stack_summary(struct kp_sys_bpf *b, struct kp_sys_stack_row **rows);
/* <fn> for the process of each entry of the summary (a process comes once per syscall). */
void kp_sys_bpf_for_each_tgid(struct kp_sys_bpf *b, void (*fn)(void *ctx, uint32_t tgid),
			      void *ctx);
/* The frames of stack <id> (kernel or user), leaf first, into <ips> (at most <max>): their
 * number, 0 when unknown. */
unsigned kp_sys_bpf_stack(struct kp_sys_bpf *b, uint64_t id, bool kernel, uint64_t *ips,
			  unsigned max);
/* Move the rows of the processes that exited out of the kernel map (into the table the
 * summary adds); thread-safe against kp_sys_bpf_summary. The fd to wait on for exits: -1
 * when the rows stay in the kernel (one process). */
void kp_sys_bpf_harvest(struct kp_sys_bpf *b);
int kp_sys_bpf_exits_epoll_fd(struct kp_sys_bpf *b);
/* Delete the summary rows of <tgids> (processes that are gone), in the kernel map and among
 * the rows of exited processes; the number deleted or -errno. */
int kp_sys_bpf_forget(struct kp_sys_bpf *b, const int *tgids, unsigned n);
/* The counters of enum kp_counter, summed over CPUs. */
void kp_sys_bpf_counters(struct kp_sys_bpf *b, uint64_t out[KP_CNT_MAX]);
bool kp_sys_bpf_is_compat(const struct kp_sys_bpf *b);
size_t kp_sys_bpf_ringbuf_bytes(const struct kp_sys_bpf *b);
void kp_sys_bpf_close(struct kp_sys_bpf *b);

/* ---- trace.c, trace_stack.c: the PmuTrace* task ---- */

struct kp_trace_stk {
	uint64_t kstack, ustack;
};

struct kp_trace {
	pthread_mutex_t lock; /* serialises API calls on this task */
	pthread_mutex_t rb_lock; /* ring buffer consumption and the record store */
	struct kp_sys_bpf *bpf;
	bool enabled;
	bool summary_only;
	int cgroup_fd;

	struct kp_sys_event *recs; /* the record store */
	struct kp_trace_stk *stk; /* with stacks: the stack ids of each stored record */
	size_t nrecs, cap, stk_cap;
	size_t max_stored; /* full: the next records wait in the ring buffer */
	uint64_t store_dropped; /* records lost for want of memory */
	uint64_t delivered;
	uint64_t dropped_warned;

	pthread_t poller;
	bool poller_on;
	int wake_fd; /* eventfd that stops the poller */
	int epoll_fd; /* the ring buffer and wake_fd */
	atomic_bool stop;

	/* callStack (trace_stack.c) */
	bool stacks;
	enum SymbolMode symbol_mode;
	struct kp_map held; /* tgid -> 1: processes whose symbols it holds (seen with a stack) */
	/* the mmaps, execs and forks of the traced processes as they happen (pmu/sideband.c),
	 * so that a process that execs and exits between two polls has its mappings */
	struct kp_sideband *sideband;
	pthread_mutex_t sb_lock; /* the side band's drains */
};

/* What was lost so far, as warnings (trace_read.c; lock held). */
void kp_trace_warn_drops(struct kp_trace *t);
/* Move what the ring buffer holds into the store, as far as the store has room; with rb_lock
 * held. Whether the store is full now (trace.c). */
bool kp_trace_consume(struct kp_trace *t);

/* ---- trace_stack.c ---- */

/* A record of process <tgid> came with a stack: its mappings are recorded (once) so that its
 * stacks resolve after it exits. rb_lock held. */
void kp_trace_note_process(struct kp_trace *t, uint32_t tgid);
/* The processes of the summary noted as above (the summary by stack has no records to see
 * them in). rb_lock held. */
void kp_trace_scan_processes(struct kp_trace *t);
/* Release the processes the trace holds. */
void kp_trace_release_processes(struct kp_trace *t);
/* With stacks: follow the mmaps, execs and forks of <tgids> (every process when n is 0) from
 * kp_trace_sideband_enable on; drain feeds what came to the symbol resolver. */
int kp_trace_sideband_open(struct kp_trace *t, const int *tgids, unsigned n);
int kp_trace_sideband_enable(struct kp_trace *t, bool on);
void kp_trace_sideband_drain(struct kp_trace *t);
void kp_trace_sideband_close(struct kp_trace *t);

/* Resolve the stacks of records: pids[i] with stk[i] into out[i] (NULL when the record has
 * none), kernel frames first; kframes[i] (may be NULL) their number. The stacks live in *keep,
 * to free with PmuDataFree (NULL when no record had a stack). 0 or -errno. */
int kp_trace_resolve(struct kp_trace *t, size_t n, const uint32_t *pids,
		     const struct kp_trace_stk *stk, struct Stack **out, unsigned *kframes,
		     struct PmuData **keep);

#endif
