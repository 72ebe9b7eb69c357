/*
 * syscall_bpf.h - a loaded syscall object (struct kp_sys_bpf), shared by the two files that
 * own it: syscall_bpf.c (configure, load, attach) and syscall_read.c (the maps and rings read:
 * exits, late calls, the summary, the counters). Private to user/trace.
 */
#ifndef KPERF_TRACE_SYSCALL_BPF_H
#define KPERF_TRACE_SYSCALL_BPF_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "trace.h"

#define PROG_ENTER 0
#define PROG_EXIT 1
#define PROG_FORK 2
#define PROG_EXEC 3
#define PROG_PEXIT 4
#define PROG_FORK_NS 5 /* the fallback's kp_proc_fork in a PID namespace */
#define PROG_MARK_FORK 6 /* task_filter: new threads and children of targets */
#define PROG_MARK_ITER 7 /* task_filter: the targets' threads at attach (run, not attached) */
#define PROG_UW_EXEC 8 /* unwinding from tables: a process that execs needs its new ones */
#define NPROGS 9

#define MAX_EXITED_ROWS (1U << 18) /* rows of exited processes kept (~170 MB at most) */
#define MAX_PENDING (1U << 16) /* exited processes waiting for their rows to be moved */
#define KP_LATE_ERRNOS 64

struct kp_sys_bpf {
	struct syscall_bpf *skel;
	struct syscall_compat_bpf *cskel;
	struct bpf_object *obj;
	struct bpf_program *progs[NPROGS];
	struct bpf_link *links[NPROGS];
	struct ring_buffer *rb;
	int summary_fd, counters_fd, by_nr_fd, stack_summary_fd, stack_by_nr_fd, stacks_fd,
		cg_summary_fd;
	size_t ringbuf_bytes;
	size_t record_size; /* kp_sys_event, or kp_sys_event_stk with stacks */
	kp_sys_event_fn on_event;
	void *ctx;
	bool compat;
	bool single; /* by_nr holds the one process's rows, else the overflow rows */
	bool by_cgroup; /* the summary is cg_summary: no process rows, nothing moved at exits */
	bool stacks; /* the summary by stack is kept (stack_summary): its rows move at exits too */
	__u32 single_tgid;
	unsigned by_nr_entries;
	int ncpus; /* possible CPUs, for per-CPU values */

	struct ring_buffer *exits_rb; /* NULL: rows stay in the kernel map */
	pthread_mutex_t harvest_lock; /* exited, pending, the map's rows while moved */
	struct kp_sys_table exited; /* rows of the processes that exited */
	struct kp_uw_owner *uw; /* the unwind tables' loader, when unwinding */
	__u32 *pending; /* exited processes whose rows are still in the map */
	size_t npending, pcap;
	uint64_t late_calls; /* calls with no row in the kernel, added to their row here */
	uint64_t late_lost; /* ... that found no memory here either */
	/* ... by what the kernel's update answered (an errno; the last slot: any larger one) */
	uint64_t late_errno[KP_LATE_ERRNOS];
	/* rows of the summary by stack kept here: those of the processes that exited (moved
	 * out of the kernel map by kp_sys_bpf_harvest), and those the kernel could not allocate,
	 * made by their calls (struct kp_sys_late_stack_call); indexed by their key as a string */
	struct kp_sys_stack_row *late_stacks;
	size_t nlate_stacks, late_stacks_cap;
	struct kp_map late_index;
};

/* The exits ring's callback (syscall_read.c), with harvest_lock held: an exit, or a call
 * with no row in the kernel. */
int kp_sys_bpf_on_exit_note(void *ctx, void *data, size_t size);
/* the rows of the summary by stack made in userspace (syscall_read.c), at the close */
void kp_sys_bpf_free_late_stacks(struct kp_sys_bpf *b);

#endif
