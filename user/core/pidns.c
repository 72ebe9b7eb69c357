/*
 * pidns.c - the caller's PID namespace, the one every pid of the library belongs to.
 *
 * perf_event_open takes and the perf side band gives pids of the caller's namespace; the
 * BPF programs are told the namespace (dev/inode of /proc/self/ns/pid) and translate theirs
 * to it, so that every output speaks the same pids, the ones `ps` shows the caller. That
 * holds only when /proc is the namespace's own: `unshare --pid --fork` without
 * --mount-proc leaves the parent's /proc, whose numbers name other processes. That is
 * refused, with what to do, instead of misattributing.
 *
 * Asked once per process (a fork after unshare(CLONE_NEWPID) is another namespace: the cache
 * is keyed by the pid that filled it). The objects built without CO-RE walk the kernel's
 * struct pid with offsets read here from the kernel's BTF.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "core.h"
#include "kperf/pcerrc.h"
#include "pidns.h"

/* the inode of the initial PID namespace: fixed by the kernel (PROC_PID_INIT_INO) */
#define INIT_PIDNS_INO 0xEFFFFFFCULL

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static struct {
	pid_t filled_by; /* getpid() of the process that filled this; 0: never */
	bool host;
	uint64_t dev, ino;
	char name[32];
	long proc_self; /* what /proc/self names (-1: unreadable) */
	bool offsets_tried, have_offsets;
	struct kp_pidns_offsets off;
} ns;

static void fill_locked(void)
{
	char link[32];
	struct stat st;
	ssize_t n;

	if (ns.filled_by == getpid())
		return;
	ns.filled_by = getpid();
	ns.host = true;
	ns.dev = ns.ino = 0;
	ns.name[0] = '\0';
	/* no /proc or no PID namespaces in this kernel: nothing to translate */
	if (stat("/proc/self/ns/pid", &st) == 0) {
		/* the helper compares with the kernel's dev_t (MKDEV), not stat's encoding */
		ns.dev = ((uint64_t)major(st.st_dev) << 20) | minor(st.st_dev);
		ns.ino = (uint64_t)st.st_ino;
		ns.host = ns.ino == INIT_PIDNS_INO;
		snprintf(ns.name, sizeof(ns.name), "pid:[%llu]", (unsigned long long)ns.ino);
	}
	n = readlink("/proc/self", link, sizeof(link) - 1);
	ns.proc_self = -1;
	if (n > 0) {
		link[n] = '\0';
		ns.proc_self = strtol(link, NULL, 10);
	}
}

bool kp_pidns_is_host(void)
{
	bool host;

	pthread_mutex_lock(&lock);
	fill_locked();
	host = ns.host;
	pthread_mutex_unlock(&lock);
	return host;
}

const char *kp_pidns_name(void)
{
	pthread_mutex_lock(&lock);
	fill_locked();
	pthread_mutex_unlock(&lock);
	return ns.name;
}

int kp_pidns_check_proc(void)
{
	long self;

	pthread_mutex_lock(&lock);
	fill_locked();
	self = ns.proc_self;
	pthread_mutex_unlock(&lock);
	if (self == (long)getpid())
		return 0;
	/* /proc/self resolves in the namespace of the /proc mount: another number (or none:
	 * that namespace cannot see us) means its pids are not the caller's */
	return kp_fail(KPERF_ERR_PROC_PIDNS, -EXDEV,
		       "/proc belongs to another PID namespace than kperf-bpf's (%s): this process "
		       "is %d here, and %s there; its pids would name other processes. Mount "
		       "the namespace's own /proc (unshare --pid --fork --mount-proc, or mount -t "
		       "proc proc /proc in a new mount namespace)",
		       ns.name, (int)getpid(), self < 0 ? "invisible" : "another pid");
}

/* ---- offsets for the objects without CO-RE ---- */

/* the byte offset of member <name> of struct/union <id>, looking into anonymous members
 * (the kernel nests some in unnamed structs and unions); -1 when absent */
static long member_offset(const struct btf *btf, __u32 id, const char *name, int depth)
{
	const struct btf_type *t = btf__type_by_id(btf, btf__resolve_type(btf, id));
	const struct btf_member *m;
	int i;

	if (!t || depth > 4 || (!btf_is_struct(t) && !btf_is_union(t)))
		return -1;
	m = btf_members(t);
	for (i = 0; i < btf_vlen(t); i++, m++) {
		const char *mname = btf__name_by_offset(btf, m->name_off);
		long inner;

		if (mname && *mname) {
			if (!strcmp(mname, name))
				return (long)(btf_member_bit_offset(t, (__u32)i) / 8);
			continue;
		}
		inner = member_offset(btf, m->type, name, depth + 1);
		if (inner >= 0)
			return (long)(btf_member_bit_offset(t, (__u32)i) / 8) + inner;
	}
	return -1;
}

/* the type of member <name> of struct <id> (through anonymous members), 0 when absent */
static __u32 member_type(const struct btf *btf, __u32 id, const char *name, int depth)
{
	const struct btf_type *t = btf__type_by_id(btf, btf__resolve_type(btf, id));
	const struct btf_member *m;
	int i;

	if (!t || depth > 4 || (!btf_is_struct(t) && !btf_is_union(t)))
		return 0;
	m = btf_members(t);
	for (i = 0; i < btf_vlen(t); i++, m++) {
		const char *mname = btf__name_by_offset(btf, m->name_off);
		__u32 inner;

		if (mname && *mname) {
			if (!strcmp(mname, name))
				return m->type;
			continue;
		}
		inner = member_type(btf, m->type, name, depth + 1);
		if (inner)
			return inner;
	}
	return 0;
}

static bool read_offsets(struct kp_pidns_offsets *o)
{
	const char *path = kp_btf_path();
	long task_pid, task_leader, level, numbers, nr, upns, common, inum;
	__s32 task, pid, upid, pidns;
	struct btf *btf;
	__s64 usize;
	__u32 ct;
	bool ok;

	if (!path)
		return false;
	btf = btf__parse(path, NULL);
	if (!btf)
		return false;
	task = btf__find_by_name_kind(btf, "task_struct", BTF_KIND_STRUCT);
	pid = btf__find_by_name_kind(btf, "pid", BTF_KIND_STRUCT);
	upid = btf__find_by_name_kind(btf, "upid", BTF_KIND_STRUCT);
	pidns = btf__find_by_name_kind(btf, "pid_namespace", BTF_KIND_STRUCT);
	ok = task > 0 && pid > 0 && upid > 0 && pidns > 0;
	if (ok) {
		task_pid = member_offset(btf, (__u32)task, "thread_pid", 0);
		task_leader = member_offset(btf, (__u32)task, "group_leader", 0);
		level = member_offset(btf, (__u32)pid, "level", 0);
		numbers = member_offset(btf, (__u32)pid, "numbers", 0);
		nr = member_offset(btf, (__u32)upid, "nr", 0);
		upns = member_offset(btf, (__u32)upid, "ns", 0);
		common = member_offset(btf, (__u32)pidns, "ns", 0);
		ct = member_type(btf, (__u32)pidns, "ns", 0);
		inum = ct ? member_offset(btf, ct, "inum", 0) : -1;
		usize = btf__resolve_size(btf, (__u32)upid);
		ok = task_pid >= 0 && task_leader >= 0 && level >= 0 && numbers >= 0 && nr >= 0 &&
		     upns >= 0 && common >= 0 && inum >= 0 && usize > 0;
	}
	if (ok) {
		o->task_thread_pid = (__u32)task_pid;
		o->task_group_leader = (__u32)task_leader;
		o->pid_level = (__u32)level;
		o->pid_numbers = (__u32)numbers;
		o->upid_size = (__u32)usize;
		o->upid_nr = (__u32)nr;
		o->upid_ns = (__u32)upns;
		o->ns_inum = (__u32)(common + inum);
	}
	btf__free(btf);
	return ok;
}

/* with lock held */
static void offsets_locked(void)
{
	if (ns.offsets_tried)
		return;
	ns.offsets_tried = true;
	ns.have_offsets = read_offsets(&ns.off);
}

bool kp_pidns_have_offsets(void)
{
	bool have;

	pthread_mutex_lock(&lock);
	fill_locked();
	if (!ns.host)
		offsets_locked();
	have = ns.host || ns.have_offsets;
	pthread_mutex_unlock(&lock);
	return have;
}

int kp_pidns_bpf_config(struct kp_pidns_cfg *cfg, bool offsets)
{
	int err = kp_pidns_check_proc();

	memset(cfg, 0, sizeof(*cfg));
	if (err)
		return err;
	pthread_mutex_lock(&lock);
	fill_locked();
	if (!ns.host) {
		cfg->on = 1;
		cfg->dev = ns.dev;
		cfg->ino = ns.ino;
		if (offsets) {
			offsets_locked();
			cfg->have_offsets = ns.have_offsets;
			cfg->off = ns.off;
		}
	}
	pthread_mutex_unlock(&lock);
	return 0;
}

const char *kp_pidns_comm(uint32_t tgid, const char *comm)
{
	return tgid == KP_PID_OUTSIDE ? KP_PIDNS_OUTSIDE_COMM : comm;
}
