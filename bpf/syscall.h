/*
 * syscall.h - what syscall.bpf.c and its userspace owner (user/trace) share: map keys and
 * values, the per-call record and the load-time configuration. Fixed-width types only.
 */
#ifndef KPERF_BPF_SYSCALL_H
#define KPERF_BPF_SYSCALL_H

#define KP_HIST_SLOTS 40 /* slots reported: must equal KPERF_HIST_SLOTS of pmu.h */
/* slots kept in the kernel: one per bit of a u64. A power of two, so that a mask bounds the
 * index for every verifier (5.10's does not carry a bound checked on a copy of the
 * register); userspace adds the slots from KP_HIST_SLOTS - 1 on into the last one reported */
#define KP_HIST_BPF_SLOTS 64
#define KP_SYSCALL_WORDS 16 /* syscall filter bitmap: numbers 0..1023 */
#define KP_CPU_WORDS 128 /* cpu filter bitmap: cpus 0..8191 */
#define KP_COMM_LEN 16

/* value of the targets map (tgid -> state) */
/* value of the targets map (tgid -> state), and kp_task_state.state of a thread */
enum kp_target_state {
	KP_TARGET_NONE = 0, /* not a target (a thread traced because everything is) */
	KP_TARGET_ACTIVE = 1, /* traced */
	KP_TARGET_UNTIL_EXEC = 2, /* traced from its next exec on */
};

/* indexes of the per-CPU counters array */
enum kp_counter {
	KP_CNT_DROPPED = 0, /* per-call record not reserved: ring buffer full */
	KP_CNT_SUMMARY_FULL = 1, /* call counted in the per-syscall overflow row: map full */
	KP_CNT_STATE_FULL = 2, /* call not timed: no room for its start time */
	/* call counted by stack in its syscall's overflow row (stack_by_nr): stack summary map
	 * full */
	KP_CNT_STACK_SUMMARY_FULL = 3,
	KP_CNT_EXITS_LOST = 4, /* exit notice not queued: its rows stay in the map */
	KP_CNT_UNWOKEN = 5, /* records submitted since the reader was last woken (per CPU) */
	/* the summary map could not allocate the call's row at that moment (not full: the
	 * kernel's allocator had no memory ready, -ENOMEM): the call went to userspace in the
	 * exits ring (struct kp_sys_late_call) and is counted in its process's row there */
	KP_CNT_SUMMARY_NOMEM = 6,
	/* ... and the exits ring was full too: counted in the per-syscall no-memory row */
	KP_CNT_NOMEM_FOLDED = 7,
	/* no memory for the call's row in the stack summary map, and the exits ring full: counted
	 * by stack in its syscall's no-memory row (stack_by_nr's second half) */
	KP_CNT_STACK_SUMMARY_NOMEM = 8,
	KP_CNT_CAP = 9, /* KP_CAP_FAILS counters of stack_capture.bpf.h from here on */
	/* no memory for the call's row in the stack summary map at that moment (not full): the
	 * call went to userspace in the exits ring (struct kp_sys_late_stack_call) and is counted
	 * in its row there */
	KP_CNT_STACK_LATE = 12,
	KP_CNT_MAX = 13
};

/* the tgid of the summary's overflow rows (by_nr, when the hash is full; stack_by_nr, when
 * the summary by stack is): calls counted without their process */
#define KP_SYS_OVERFLOW_TGID 0xfffffffeu
/* the tgid of the rows of calls whose row the kernel could not allocate (-ENOMEM) while the
 * exits ring was full too: by_nr's second half, when the summary is the hash; in the summary
 * by stack, stack_by_nr's second half (no ring there) */
#define KP_SYS_NOMEM_TGID 0xfffffffdu

struct kp_sys_key {
	__u32 tgid;
	__u32 nr;
};

/* the summary by cgroup (cfg.by_cgroup, map cg_summary): a row per (cgroup, command name,
 * syscall), so that a process that lived a millisecond is still counted under its cgroup */
struct kp_sys_cg_key {
	__u64 cgid; /* bpf_get_current_cgroup_id(); KP_SYS_CG_OUTSIDE: outside the caller's PID
		     * namespace (comm left empty: one row per syscall for all of them) */
	__u32 nr;
	__u32 pad;
	char comm[KP_COMM_LEN]; /* the command name when the call returned */
};

#define KP_SYS_CG_OUTSIDE 0ULL

struct kp_sys_stat {
	__u64 calls;
	__u64 errors;
	__u64 total_ns;
	__u64 min_ns;
	__u64 max_ns;
	__u64 hist[KP_HIST_BPF_SLOTS];
	char comm[KP_COMM_LEN];
};

/* what the file behind a call's first argument is (cfg.fd_mask syscalls only) */
enum kp_fd_kind {
	KP_FD_NONE = 0, /* not asked for, or not known (the raw_syscalls fallback) */
	KP_FD_SOCKET = 1,
	KP_FD_PIPE = 2, /* a pipe or a FIFO */
	KP_FD_OTHER = 3, /* a file, a device, ... or no such descriptor */
};

/* the in-flight call of a thread (task storage, or LRU hash keyed by tid); in the task
 * storage, also whether the thread is a target (set before its first call, see
 * syscall.bpf.c), so that a thread of no target costs one storage miss and nothing more */
struct kp_task_state {
	__u64 start_ns;
	__u32 nr;
	__s32 fd; /* the first argument, as an int */
	__u64 fd_ino; /* inode number of that descriptor's file (fd_mask syscalls) */
	__u32 fd_kind; /* enum kp_fd_kind */
	__u32 state; /* enum kp_target_state (task_filter) */
	__u64 kstack, ustack; /* stack ids at entry (cfg.kernel_stack, user_stack), else 0 */
};

/* a process whose last thread exited: its summary rows can leave the map (the exits ring) */
struct kp_sys_exit_note {
	__u32 tgid;
	__u32 kind; /* KP_SYS_NOTE_EXIT */
};

enum kp_sys_note_kind {
	KP_SYS_NOTE_EXIT = 0, /* struct kp_sys_exit_note */
	KP_SYS_NOTE_CALL = 1, /* struct kp_sys_late_call */
	KP_SYS_NOTE_STACK_CALL = 2, /* struct kp_sys_late_stack_call */
};

/* a call whose summary row the kernel could not allocate (-ENOMEM), sent through the exits
 * ring (before its process's exit note, in the same ring): userspace adds it to the row */
struct kp_sys_late_call {
	__u32 tgid;
	__u32 kind; /* KP_SYS_NOTE_CALL */
	__u32 nr;
	__u32 err; /* what the kernel's update answered, an errno (ENOMEM) */
	__u64 dur_ns;
	__s64 ret;
	char comm[KP_COMM_LEN];
};

/* a call whose row in the summary by stack the kernel could not allocate (-ENOMEM), through
 * the exits ring: userspace adds it to the row of its key */
struct kp_sys_late_stack_call {
	__u32 tgid;
	__u32 kind; /* KP_SYS_NOTE_STACK_CALL */
	__u32 nr;
	__u32 err; /* what the kernel's update answered, an errno (ENOMEM) */
	__u64 kstack;
	__u64 ustack;
	__u64 dur_ns;
	__s64 ret;
	char comm[KP_COMM_LEN];
};

/* one completed call, through the ring buffer */
struct kp_sys_event {
	__u64 start_ns;
	__u64 dur_ns;
	__s64 ret;
	__u32 tgid;
	__u32 tid;
	__u32 cpu;
	__u32 nr;
	char comm[KP_COMM_LEN];
	__s32 fd; /* the first argument, as an int */
	__u32 fd_kind; /* enum kp_fd_kind of that descriptor (fd_mask syscalls) */
	__u64 fd_ino; /* its inode number (fd_mask syscalls, KP_FD_SOCKET/PIPE) */
};

/* one completed call with the stacks taken at its entry: the record when cfg.kernel_stack or
 * cfg.user_stack is set (ids of the stacks map, KP_CAP_NONE when none) */
struct kp_sys_event_stk {
	struct kp_sys_event e;
	__u64 kstack;
	__u64 ustack;
};

/* the summary by stack (map stack_summary, only loaded with stacks): per process, syscall and
 * the stacks at entry */
struct kp_sys_stack_key {
	__u32 tgid;
	__u32 nr;
	__u64 kstack;
	__u64 ustack;
};

struct kp_sys_stack_stat {
	__u64 calls;
	__u64 errors;
	__u64 total_ns;
	__u64 min_ns;
	__u64 max_ns;
	char comm[KP_COMM_LEN];
};

/* load-time configuration: one const volatile global, so both object variants share it */
struct kp_sys_config {
	__u64 syscall_mask[KP_SYSCALL_WORDS];
	__u64 cpu_mask[KP_CPU_WORDS];
	/* syscalls whose first argument is a descriptor to look at when entered: the kind of
	 * its file and its inode go into the per-call record (kernel BTF only) */
	__u64 fd_mask[KP_SYSCALL_WORDS];
	__u64 min_duration_ns;
	__u64 wakeup_records; /* force a reader wake-up after this many records of a CPU */
	__u32 self_tgid; /* the tracer itself: never traced */
	__u32 fork_child_pid_off; /* compat: offset of child_pid in sched_process_fork */
	__u8 filter_pid;
	__u8 filter_cpu;
	__u8 filter_syscall;
	__u8 filter_cgroup;
	__u8 record_events;
	__u8 classify_fd; /* fd_mask is not empty */
	__u8 kernel_stack; /* take the kernel stack at entry: records and stack_summary */
	__u8 user_stack; /* take the user stack at entry */
	/* targets are marked in their threads' task storage (kernel BTF only): sys_enter looks
	 * nowhere else */
	__u8 task_filter;
	/* one process, no children: its summary is the by_nr array, indexed by syscall */
	__u8 single;
	__u8 exit_notes; /* queue a kp_sys_exit_note when a process exits */
	__u8 follow_fork; /* children of targets are targets */
	/* tests (KPERF_BPF_FAULT_NOMEM): 1, every new summary row (and row of the summary by
	 * stack) fails as if the allocator had no memory; 2, and the exits ring is full too */
	__u8 fault_nomem;
	__u8 by_cgroup; /* the summary is cg_summary (struct kp_sys_cg_key), no exit notes */
	__u32 nomem_base; /* by_nr's (and stack_by_nr's) index of the no-memory row of syscall 0 */
	/* userspace reads the exits ring with stacks: a row of the summary by stack the kernel
	 * could not allocate goes there (struct kp_sys_late_stack_call) */
	__u8 stack_notes;
	__u8 pad2[3];
};

#endif
