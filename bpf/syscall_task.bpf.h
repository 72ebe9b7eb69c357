/*
 * syscall_task.bpf.h - the current task for syscall.bpf.c's sys_exit: its ids and its name,
 * and whether it has any task storage, read through its task_struct where the object has BTF
 * (plain loads) and through helpers in the raw_syscalls fallback (KPERF_COMPAT). Included by
 * syscall.bpf.c only, after pidns.bpf.h.
 */
#ifndef KPERF_BPF_SYSCALL_TASK_BPF_H
#define KPERF_BPF_SYSCALL_TASK_BPF_H

/* The current task. Where the object has BTF, its ids and its name are plain loads from its
 * task_struct (a trusted pointer in tp_btf programs), not helper calls: sys_exit gets the
 * pointer once (for the task storage) and reads the rest through it. */
#ifdef KPERF_COMPAT
#define kp_task_t void

static __always_inline kp_task_t *cur_task(void)
{
	return NULL;
}

static __always_inline __u64 cur_ids(kp_task_t *t)
{
	return kp_pidns_current();
}

static __always_inline void cur_comm(kp_task_t *t, char *dst)
{
	bpf_get_current_comm(dst, KP_COMM_LEN);
}
#else
/* a macro, not a typedef: CO-RE relocates the accesses of struct task_struct by its name */
#define kp_task_t struct task_struct

static __always_inline kp_task_t *cur_task(void)
{
	return bpf_get_current_task_btf();
}

/* what bpf_get_current_pid_tgid() gives, in the caller's namespace */
static __always_inline __u64 cur_ids(kp_task_t *t)
{
	if (kp_pidns.on)
		return kp_pidns_current();
	return ((__u64)(__u32)t->tgid << 32) | (__u32)t->pid;
}

/* what bpf_get_current_comm() gives (the kernel keeps comm NUL-padded), into an 8-byte
 * aligned field: two loads and two stores */
static __always_inline void cur_comm(kp_task_t *t, char *dst)
{
	_Static_assert(KP_COMM_LEN == 16, "comm is two words");
	((__u64 *)dst)[0] = *(__u64 *)&t->comm[0];
	((__u64 *)dst)[1] = *(__u64 *)&t->comm[8];
}

/* <t> has no task storage at all, of any map: ours has nothing for it either. Most threads
 * of the machine when the targets are marked (task_filter): a bystander's sys_enter and
 * sys_exit are one load each, no helper call */
static __always_inline bool no_storage(kp_task_t *t)
{
	return bpf_core_field_exists(t->bpf_storage) && !t->bpf_storage;
}
#endif

#endif
