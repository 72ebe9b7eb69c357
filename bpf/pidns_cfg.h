/*
 * pidns_cfg.h - what the BPF programs and user/core/pidns.c share about PID namespaces: the
 * caller's namespace, handed to every program that filters or reports processes, so that
 * they speak the caller's pids (see pidns.bpf.h). Fixed-width types only.
 */
#ifndef KPERF_BPF_PIDNS_CFG_H
#define KPERF_BPF_PIDNS_CFG_H

/* the pid (and tid) of a task the caller's namespace does not contain: reported as -1 */
#define KP_PID_OUTSIDE 0xffffffffu
/* the kernel's MAX_PID_NS_LEVEL: no task has more levels than this */
#define KP_PIDNS_MAX_LEVEL 32

/* where the walk finds things in the kernel's structs, for objects built without CO-RE */
struct kp_pidns_offsets {
	__u32 task_thread_pid; /* task_struct.thread_pid */
	__u32 task_group_leader; /* task_struct.group_leader */
	__u32 pid_level; /* pid.level */
	__u32 pid_numbers; /* pid.numbers */
	__u32 upid_size; /* sizeof(struct upid) */
	__u32 upid_nr; /* upid.nr */
	__u32 upid_ns; /* upid.ns */
	__u32 ns_inum; /* pid_namespace.ns.inum */
};

struct kp_pidns_cfg {
	__u64 dev; /* the nsfs device of the caller's PID namespace, as the kernel's dev_t */
	__u64 ino; /* its inode number */
	__u8 on; /* the caller is not in the initial namespace: translate every pid */
	__u8 have_offsets; /* objects without CO-RE: `off` is known (from the kernel's BTF) */
	__u8 pad[6];
	struct kp_pidns_offsets off;
};

#endif
