/*
 * syscall_bpf.c - the owner of the syscall BPF objects (syscall.skel.h and its fallback
 * syscall_compat.skel.h): configure, load, attach and drain the ring buffer of records; what
 * the maps and the exits ring hold is read in syscall_read.c.
 *
 * Both objects come from bpf/syscall.bpf.c and share map names and the configuration
 * struct, so everything after open goes through the generic libbpf API.
 *
 * The summary is the kernel map's rows plus those of processes that exited: the exits ring
 * says which processes are gone, kp_sys_bpf_harvest moves their rows into a userspace table
 * (summary_table.c), so the map holds the live processes only and a long trace with
 * processes coming and going does not fill it; their rows of the summary by stack move the
 * same way (into the rows of it kept in userspace).
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "core/core.h"
#include "core/pidns.h"
#include "kperf/pcerrc.h"
#include "kperf/pmu.h"
#include "runtime/python.h"
#include "stack/stack.h"
#include "tracefs/tracefs.h"
#include "unwind/unwind.h"
#include "trace.h"
#include "skel/syscall.skel.h"
#include "skel/syscall_compat.skel.h"
#include "syscall_bpf.h"

static const char *const prog_names[NPROGS] = {
	"kp_sys_enter",	   "kp_sys_exit",  "kp_proc_fork",    "kp_proc_exec", "kp_proc_exit",
	"kp_proc_fork_ns", "kp_mark_fork", "kp_mark_targets", "kp_uw_exec",
};

static int on_rb_sample(void *ctx, void *data, size_t size)
{
	struct kp_sys_bpf *b = ctx;

	if (size >= b->record_size && b->on_event)
		return b->on_event(b->ctx, data);
	return 0;
}

static void set_bit(volatile __u64 *mask, unsigned bit)
{
	mask[bit / 64] |= 1ULL << (bit % 64);
}

/* user stacks from .eh_frame tables: asked for, with user stacks, where the kernel's BTF
 * says where the user registers are (the raw_syscalls fallback's tracepoints do not give them:
 * on 5.10 they are found at the top of the task's kernel stack, unwind/task_regs.c) */
static bool unwinds(const struct kp_sys_bpf *b, const struct kp_sys_bpf_opts *o)
{
	return o->unwind && o->user_stack && (!b->compat || kp_have(KP_FEAT_BTF));
}

/* CPython frames in the user stacks, as sampling reads them (where the verifier takes the
 * reader) */
static bool python(const struct kp_sys_bpf *b, const struct kp_sys_bpf_opts *o)
{
	return unwinds(b, o) && kp_py_kernel_reads();
}

static int configure(struct kp_sys_bpf *b, volatile struct kp_sys_config *cfg,
		     struct kp_pidns_cfg *pidns, const struct kp_sys_bpf_opts *o)
{
	struct bpf_map *m;
	bool fork_ns;
	unsigned i;
	int err;

	/* pids are the caller's namespace's; the fallback has no CO-RE: it walks to tasks of
	 * other namespaces with the offsets of the kernel's BTF */
	err = kp_pidns_bpf_config(pidns, b->compat);
	if (err)
		return err;
	fork_ns = b->compat && pidns->on;
	if (fork_ns && o->follow_fork && !pidns->have_offsets)
		return kp_fail(LIBPERF_ERR_KERNEL_NOT_SUPPORT, -ENOTSUP,
			       "following new processes from inside a PID namespace (%s) on kernel "
			       "%s, with the raw_syscalls fallback, needs the kernel's BTF to find "
			       "their pids, and there is none (/sys/kernel/btf/vmlinux or "
			       "KPERF_BPF_BTF): trace them by pid, or from the host",
			       kp_pidns_name(), kp_kernel_release());
	/* the tracer's own syscalls would feed back into what it traces: skip them when
	 * tracing everything; a caller that names its own pid gets its own pid traced */
	cfg->self_tgid = o->ntgids || !o->exclude_self ? 0 : (__u32)getpid();
	cfg->record_events = o->record_events;
	cfg->min_duration_ns = o->min_duration_ns;
	/* per CPU, so that all of them together wake the reader at a quarter of the ring */
	cfg->wakeup_records = o->ringbuf_bytes / (b->record_size + 8) / 4 /
			      (unsigned)(b->ncpus > 0 ? b->ncpus : 1);
	if (!cfg->wakeup_records)
		cfg->wakeup_records = 1;
	cfg->follow_fork = o->follow_fork;
	/* the targets in their threads' task storage: the BTF object only */
	cfg->task_filter = o->ntgids > 0 && !b->compat;
	/* one process and no children: its rows by syscall number, nothing to move at exit */
	b->by_cgroup = o->by_cgroup;
	b->single = o->ntgids == 1 && !o->follow_fork && !b->by_cgroup;
	b->single_tgid = b->single ? (__u32)o->tgids[0] : 0;
	cfg->single = b->single;
	cfg->by_cgroup = b->by_cgroup;
	cfg->exit_notes = !b->single && !b->by_cgroup;
	cfg->stack_notes = o->kernel_stack || o->user_stack;
	cfg->filter_pid = o->ntgids > 0;
	cfg->filter_cpu = o->ncpus > 0;
	cfg->filter_syscall = o->nnrs > 0;
	cfg->filter_cgroup = o->cgroup_fd >= 0;
	for (i = 0; i < o->nnrs; i++) {
		if (o->nrs[i] < 0 || o->nrs[i] >= KP_SYSCALL_WORDS * 64)
			return kp_fail(LIBPERF_ERR_INVALID_SYSCALL_FUN, -EINVAL,
				       "syscall number %d is beyond what the filter holds",
				       o->nrs[i]);
		set_bit(cfg->syscall_mask, (unsigned)o->nrs[i]);
	}
	for (i = 0; i < o->nfd_nrs; i++) {
		if (o->fd_nrs[i] < 0 || o->fd_nrs[i] >= KP_SYSCALL_WORDS * 64)
			return kp_fail(LIBPERF_ERR_INVALID_SYSCALL_FUN, -EINVAL,
				       "syscall number %d is beyond what the filter holds",
				       o->fd_nrs[i]);
		set_bit(cfg->fd_mask, (unsigned)o->fd_nrs[i]);
	}
	/* reading task->files needs CO-RE: the fallback has none */
	cfg->classify_fd = o->nfd_nrs > 0 && !b->compat;
	cfg->kernel_stack = o->kernel_stack;
	cfg->user_stack = o->user_stack;
	for (i = 0; i < o->ncpus; i++) {
		if (o->cpus[i] < 0 || o->cpus[i] >= KP_CPU_WORDS * 64)
			return kp_fail(LIBPERF_ERR_INVALID_CPULIST, -EINVAL,
				       "cpu %d is beyond the %d CPUs the filter holds", o->cpus[i],
				       KP_CPU_WORDS * 64);
		set_bit(cfg->cpu_mask, (unsigned)o->cpus[i]);
	}
	if (b->compat && o->follow_fork && !fork_ns) {
		struct kp_tp_format *fmt;
		const struct kp_tp_field *f;
		int err = kp_tp_format_load("sched", "sched_process_fork", &fmt);

		if (err)
			return err;
		f = kp_tp_format_field(fmt, "child_pid");
		if (!f || f->size != 4) {
			kp_tp_format_free(fmt);
			return kp_fail(LIBPERF_ERR_KERNEL_NOT_SUPPORT, -ENOTSUP,
				       "sched:sched_process_fork has no 4-byte child_pid field; "
				       "cannot follow children on this kernel without BTF");
		}
		cfg->fork_child_pid_off = f->offset;
		kp_tp_format_free(fmt);
	}

	m = bpf_object__find_map_by_name(b->obj, "events");
	if (o->record_events)
		bpf_map__set_max_entries(m, (__u32)o->ringbuf_bytes);
	else
		bpf_map__set_max_entries(m, (__u32)getpagesize()); /* unused: smallest valid */
	m = bpf_object__find_map_by_name(b->obj, "summary");
	/* unused with one process: the smallest */
	bpf_map__set_max_entries(m, b->single || b->by_cgroup ? 1 : o->summary_entries);
	bpf_map__set_max_entries(bpf_object__find_map_by_name(b->obj, "cg_summary"),
				 b->by_cgroup ? o->summary_entries : 1);
	/* every syscall number of the table, and some beyond for those it does not name */
	b->by_nr_entries = ((unsigned)kp_syscall_max() + 63) / 64 * 64 + 64;
	if (b->by_nr_entries > KP_SYSCALL_WORDS * 64)
		b->by_nr_entries = KP_SYSCALL_WORDS * 64;
	/* a test of the path that memory pressure takes, which no test can cause at will */
	cfg->fault_nomem = (__u8)atoi(secure_getenv("KPERF_BPF_FAULT_NOMEM") ?: "0");
	/* with the hash, a second half: the no-memory rows (KP_SYS_NOMEM_TGID) */
	cfg->nomem_base = b->by_nr_entries;
	bpf_map__set_max_entries(bpf_object__find_map_by_name(b->obj, "by_nr"),
				 b->single ? b->by_nr_entries : 2 * b->by_nr_entries);
	/* no exits to note: a page, unless stacks' calls without a row may come (256 KiB) */
	if ((b->single || b->by_cgroup) && !cfg->stack_notes)
		bpf_map__set_max_entries(bpf_object__find_map_by_name(b->obj, "exits"),
					 (__u32)getpagesize());
	/* the maps of stacks cost nothing unless asked for (a map of 0 entries is EINVAL) */
	m = bpf_object__find_map_by_name(b->obj, "stack_summary");
	bpf_map__set_max_entries(m, o->kernel_stack || o->user_stack ? o->summary_entries : 1);
	/* its overflow rows: full, then (from nomem_base) no memory */
	bpf_map__set_max_entries(bpf_object__find_map_by_name(b->obj, "stack_by_nr"),
				 o->kernel_stack || o->user_stack ? 2 * b->by_nr_entries : 1);
	m = bpf_object__find_map_by_name(b->obj, "stacks");
	bpf_map__set_max_entries(m, o->kernel_stack || o->user_stack ? o->stack_entries : 1);
	m = bpf_object__find_map_by_name(b->obj, "targets");
	/* room for the given processes, and for their children when following forks */
	bpf_map__set_max_entries(m, o->follow_fork ? 65536 : (o->ntgids > 0 ? o->ntgids : 1));
	for (i = 0; i < NPROGS; i++) {
		b->progs[i] = bpf_object__find_program_by_name(b->obj, prog_names[i]);
		if (!b->progs[i])
			return kp_fail(LIBPERF_ERR_BPF_ACT_FAILED, -ENOENT,
				       "BPF program %s missing from object", prog_names[i]);
	}
	/* process-tree programs only when they have work: each one is a cost on every fork,
	 * exec or exit of the machine */
	bpf_program__set_autoload(b->progs[PROG_FORK],
				  o->follow_fork && !fork_ns && !cfg->task_filter);
	bpf_program__set_autoload(b->progs[PROG_FORK_NS], o->follow_fork && fork_ns);
	bpf_program__set_autoload(b->progs[PROG_EXEC], o->from_exec);
	bpf_program__set_autoload(b->progs[PROG_PEXIT], o->ntgids > 0 || cfg->exit_notes);
	bpf_program__set_autoload(b->progs[PROG_MARK_FORK], cfg->task_filter);
	bpf_program__set_autoload(b->progs[PROG_MARK_ITER], cfg->task_filter);
	bpf_program__set_autoload(b->progs[PROG_UW_EXEC], unwinds(b, o));
	/* the unwinder's maps: the one owner of every object that takes stacks (user/unwind) */
	if (kp_uw_owner_size(b->obj, unwinds(b, o), o->ntgids) ||
	    kp_uw_owner_py_size(b->obj, python(b, o), o->ntgids))
		return kp_fail(LIBPERF_ERR_BPF_ACT_FAILED, -ENOENT,
			       "the syscall BPF object has no unwinder");
	return 0;
}

static int populate(struct kp_sys_bpf *b, const struct kp_sys_bpf_opts *o)
{
	int fd = bpf_map__fd(bpf_object__find_map_by_name(b->obj, "targets"));
	__u8 state = o->from_exec ? KP_TARGET_UNTIL_EXEC : KP_TARGET_ACTIVE;
	unsigned i;
	__u32 key;

	for (i = 0; i < o->ntgids; i++) {
		key = (__u32)o->tgids[i];
		if (bpf_map_update_elem(fd, &key, &state, BPF_ANY))
			return kp_fail(LIBPERF_ERR_BPF_ACT_FAILED, -errno,
				       "cannot add pid %u to the BPF filter: %s", key,
				       strerror(errno));
	}
	if (o->cgroup_fd >= 0) {
		fd = bpf_map__fd(bpf_object__find_map_by_name(b->obj, "cgroup_filter"));
		key = 0;
		if (bpf_map_update_elem(fd, &key, &o->cgroup_fd, BPF_ANY))
			return kp_fail(LIBPERF_ERR_INVALID_CGROUP_LIST, -errno,
				       "the kernel refused the cgroup for filtering: %s",
				       strerror(errno));
	}
	return 0;
}

static void destroy_objects(struct kp_sys_bpf *b)
{
	int i;

	for (i = 0; i < NPROGS; i++) {
		bpf_link__destroy(b->links[i]);
		b->links[i] = NULL;
	}
	ring_buffer__free(b->rb);
	b->rb = NULL;
	ring_buffer__free(b->exits_rb);
	b->exits_rb = NULL;
	kp_uw_owner_stop(b->uw);
	b->uw = NULL;
	syscall_bpf__destroy(b->skel);
	syscall_compat_bpf__destroy(b->cskel);
	b->skel = NULL;
	b->cskel = NULL;
	b->obj = NULL;
}

static int load_variant(struct kp_sys_bpf *b, const struct kp_sys_bpf_opts *o, bool compat,
			const char *btf_custom)
{
	LIBBPF_OPTS(bpf_object_open_opts, oo, .btf_custom_path = btf_custom);
	volatile struct kp_sys_config *cfg;
	struct kp_pidns_cfg *pidns;
	int err;

	b->compat = compat;
	if (compat) {
		b->cskel = syscall_compat_bpf__open_opts(&oo);
		if (!b->cskel)
			return -errno;
		b->obj = b->cskel->obj;
		cfg = &b->cskel->rodata->cfg;
		pidns = (struct kp_pidns_cfg *)&b->cskel->rodata->kp_pidns;
		b->cskel->rodata->kp_uw_on = unwinds(b, o);
		b->cskel->rodata->kp_py_max_threads = python(b, o) ? KP_PY_MAX_THREADS : 0;
		b->cskel->rodata->kp_py_max_walk = python(b, o) ? KP_PY_MAX_WALK : 0;
	} else {
		b->skel = syscall_bpf__open_opts(&oo);
		if (!b->skel)
			return -errno;
		b->obj = b->skel->obj;
		cfg = &b->skel->rodata->cfg;
		pidns = (struct kp_pidns_cfg *)&b->skel->rodata->kp_pidns;
		b->skel->rodata->kp_uw_on = unwinds(b, o);
		b->skel->rodata->kp_py_max_threads = python(b, o) ? KP_PY_MAX_THREADS : 0;
		b->skel->rodata->kp_py_max_walk = python(b, o) ? KP_PY_MAX_WALK : 0;
	}
	err = configure(b, cfg, pidns, o);
	if (err)
		return err;
	err = compat ? syscall_compat_bpf__load(b->cskel) : syscall_bpf__load(b->skel);
	if (err)
		return err;
	err = populate(b, o);
	if (!err && unwinds(b, o))
		/* a launched command (traced from its exec) is held at its exec and its entry
		 * point while its tables load, as sampling's is: else its first calls, made before
		 * the loader's next poll, were unwound without libc's table (cut at
		 * __libc_start_call_main) and split its stacks in two (`trace --stack -- sysstack 7
		 * 5`: 3 stacks, 1 or 5 of ppid_from_a's 7 calls in the cut one, 2 runs in 40).
		 * The stops are signals between calls: no call is longer for them */
		err = kp_uw_owner_start_py(b->obj, o->tgids, o->ntgids, o->from_exec, python(b, o),
					   &b->uw);
	return err;
}

static bool force_compat(void)
{
	const char *v = secure_getenv("KPERF_BPF_FORCE_COMPAT");

	return v && *v && strcmp(v, "0");
}

/* Why the full variant (tp_btf + task storage) cannot be used here, "" when it can. */
static void compat_reason(const char *btf, char *why, size_t size)
{
	why[0] = '\0';
	if (!btf)
		snprintf(why, size, "the kernel has no BTF (/sys/kernel/btf/vmlinux is missing)");
	else if (force_compat())
		snprintf(why, size, "KPERF_BPF_FORCE_COMPAT is set");
	else if (!kp_have(KP_FEAT_TASK_STORAGE))
		snprintf(why, size, "kernel %s has no %s (%s)", kp_kernel_release(),
			 kp_feature_name(KP_FEAT_TASK_STORAGE),
			 kp_feature_since(KP_FEAT_TASK_STORAGE));
}

int kp_sys_bpf_open(const struct kp_sys_bpf_opts *o, struct kp_sys_bpf **out)
{
	const char *btf = kp_btf_path(), *custom = NULL;
	struct kp_sys_bpf *b;
	char why[256];
	int err = 0;

	*out = NULL;
	kp_bpf_log_init();
	if (!kp_have(KP_FEAT_RINGBUF))
		return kp_fail(LIBPERF_ERR_KERNEL_NOT_SUPPORT, -ENOTSUP,
			       "kernel %s has no %s (%s): syscall tracing needs Linux 5.8 or later",
			       kp_kernel_release(), kp_feature_name(KP_FEAT_RINGBUF),
			       kp_feature_since(KP_FEAT_RINGBUF));
	kp_bpf_log_clear();
	b = calloc(1, sizeof(*b));
	if (!b)
		return kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
	b->on_event = o->on_event;
	b->stacks = o->kernel_stack || o->user_stack;
	b->record_size = o->kernel_stack || o->user_stack ? sizeof(struct kp_sys_event_stk) :
							    sizeof(struct kp_sys_event);
	b->ctx = o->ctx;
	b->ncpus = libbpf_num_possible_cpus();
	pthread_mutex_init(&b->harvest_lock, NULL);
	b->exited.max_rows = MAX_EXITED_ROWS;
	kp_map_init(&b->late_index, true);
	if (btf && strcmp(btf, "/sys/kernel/btf/vmlinux"))
		custom = btf; /* an external BTF file (e.g. from BTFHub) */

	compat_reason(btf, why, sizeof(why));
	if (!why[0]) {
		err = load_variant(b, o, false, custom);
		if (err && kp_failed())
			goto fail; /* our own configuration error: no point in retrying */
		if (err) {
			/* a rejection of the full variant is a bug to report; the fallback
			 * still lets the user trace meanwhile */
			kp_bpf_load_error("syscall tracing", err);
			snprintf(why, sizeof(why), "%s", Perror());
			kp_clear_error();
			destroy_objects(b);
			kp_bpf_log_clear();
			err = load_variant(b, o, true, NULL);
			if (!err)
				kp_warn(KPERF_WARN_FALLBACK, "%s; using the raw_syscalls fallback",
					why);
		}
	} else {
		err = load_variant(b, o, true, NULL);
		if (!err)
			kp_warn(KPERF_WARN_FALLBACK,
				"%s; using the raw_syscalls fallback (no CO-RE, start times in an "
				"LRU hash)",
				why);
	}
	if (err) {
		if (!kp_failed() && !btf && !kp_bpf_rejected_prog()[0])
			kp_fail(KPERF_ERR_NO_BTF, err,
				"the kernel has no BTF (/sys/kernel/btf/vmlinux) and the "
				"raw_syscalls fallback failed to load: %s %s",
				strerror(-err), kp_bpf_log_tail());
		err = kp_bpf_load_error("syscall tracing", err);
		goto fail;
	}
	b->summary_fd = bpf_map__fd(bpf_object__find_map_by_name(b->obj, "summary"));
	b->counters_fd = bpf_map__fd(bpf_object__find_map_by_name(b->obj, "counters"));
	b->by_nr_fd = bpf_map__fd(bpf_object__find_map_by_name(b->obj, "by_nr"));
	b->cg_summary_fd = bpf_map__fd(bpf_object__find_map_by_name(b->obj, "cg_summary"));
	/* read for the exits and the calls whose summary row could not be allocated, and with
	 * stacks for the calls whose row in the summary by stack could not be */
	if ((!b->single && !b->by_cgroup) || o->kernel_stack || o->user_stack) {
		b->exits_rb =
			ring_buffer__new(bpf_map__fd(bpf_object__find_map_by_name(b->obj, "exits")),
					 kp_sys_bpf_on_exit_note, b, NULL);
		if (!b->exits_rb) {
			err = kp_fail(LIBPERF_ERR_FAIL_MMAP, -errno,
				      "cannot map the ring buffer of process exits: %s",
				      strerror(errno));
			goto fail;
		}
	}
	b->stack_summary_fd = bpf_map__fd(bpf_object__find_map_by_name(b->obj, "stack_summary"));
	b->stack_by_nr_fd = bpf_map__fd(bpf_object__find_map_by_name(b->obj, "stack_by_nr"));
	b->stacks_fd = bpf_map__fd(bpf_object__find_map_by_name(b->obj, "stacks"));
	if (o->record_events) {
		b->ringbuf_bytes = o->ringbuf_bytes;
		b->rb = ring_buffer__new(
			bpf_map__fd(bpf_object__find_map_by_name(b->obj, "events")), on_rb_sample,
			b, NULL);
		if (!b->rb) {
			err = kp_fail(LIBPERF_ERR_FAIL_MMAP, -errno,
				      "cannot map the %zu KiB ring buffer: %s",
				      o->ringbuf_bytes >> 10, strerror(errno));
			goto fail;
		}
	}
	*out = b;
	return 0;
fail:
	kp_sys_bpf_close(b);
	return err;
}

/* mark the targets' threads that exist now (kp_mark_targets); the ones created from now on
 * are kp_mark_fork's */
static int mark_targets(struct kp_sys_bpf *b)
{
	struct bpf_link *link = bpf_program__attach_iter(b->progs[PROG_MARK_ITER], NULL);
	char buf[64];
	int fd, err = 0;
	ssize_t r;

	if (!link)
		return -errno;
	fd = bpf_iter_create(bpf_link__fd(link));
	if (fd < 0) {
		err = -errno;
	} else {
		while ((r = read(fd, buf, sizeof(buf))) > 0 || (r < 0 && errno == EINTR))
			;
		if (r < 0)
			err = -errno;
		close(fd);
	}
	bpf_link__destroy(link);
	return err;
}

static int attach_one(struct kp_sys_bpf *b, int i)
{
	int err;

	if (b->links[i] || !bpf_program__autoload(b->progs[i]))
		return 0;
	b->links[i] = bpf_program__attach(b->progs[i]);
	if (b->links[i])
		return 0;
	err = -errno;
	kp_sys_bpf_detach(b);
	return kp_fail(LIBPERF_ERR_BPF_ACT_FAILED, err, "cannot attach %s: %s %s", prog_names[i],
		       strerror(-err), kp_bpf_log_tail());
}

/* The process followers first, then the targets' threads marked, then sys_exit and sys_enter
 * last: once kp_sys_enter is attached, every call of a target is traced (an observer that
 * waits for that link, like the tests, starts its calls then; with sys_enter attached before
 * the mark, the calls of a target until the task iterator reached it were missed: 6.12 guest
 * under TCG, sysstack_cli "No syscalls were traced") */
int kp_sys_bpf_attach(struct kp_sys_bpf *b)
{
	int i, err;

	for (i = 0; i < NPROGS; i++) {
		if (i == PROG_MARK_ITER || i == PROG_ENTER || i == PROG_EXIT)
			continue;
		err = attach_one(b, i);
		if (err)
			return err;
	}
	if (bpf_program__autoload(b->progs[PROG_MARK_ITER])) {
		err = mark_targets(b);
		if (err) {
			kp_sys_bpf_detach(b);
			return kp_fail(LIBPERF_ERR_BPF_ACT_FAILED, err,
				       "cannot mark the traced threads (task iterator): %s",
				       strerror(-err));
		}
	}
	err = attach_one(b, PROG_EXIT);
	return err ? err : attach_one(b, PROG_ENTER);
}

void kp_sys_bpf_detach(struct kp_sys_bpf *b)
{
	int i;

	for (i = 0; i < NPROGS; i++) {
		bpf_link__destroy(b->links[i]);
		b->links[i] = NULL;
	}
}

int kp_sys_bpf_epoll_fd(struct kp_sys_bpf *b)
{
	return b->rb ? ring_buffer__epoll_fd(b->rb) : -1;
}

int kp_sys_bpf_consume(struct kp_sys_bpf *b)
{
	if (!b->rb)
		return 0;
	kp_uw_owner_py_drain(b->uw); /* every code object of the records read next */
	return ring_buffer__consume(b->rb);
}

bool kp_sys_bpf_is_compat(const struct kp_sys_bpf *b)
{
	return b->compat;
}

size_t kp_sys_bpf_ringbuf_bytes(const struct kp_sys_bpf *b)
{
	return b->ringbuf_bytes;
}

void kp_sys_bpf_close(struct kp_sys_bpf *b)
{
	if (!b)
		return;
	/* what the kernel's updates answered for the rows it did not make (KPERF_BPF_DEBUG):
	 * ENOMEM, its allocator had nothing ready; a full map's E2BIG never comes here */
	if (secure_getenv("KPERF_BPF_DEBUG"))
		for (int e = 0; e < KP_LATE_ERRNOS; e++)
			if (b->late_errno[e])
				fprintf(stderr,
					"kperf-bpf: %" PRIu64 " calls found no row in the kernel, "
					"whose update answered -%d (%s)\n",
					b->late_errno[e], e, strerrorname_np(e) ?: "?");
	destroy_objects(b);
	kp_sys_table_free(&b->exited);
	kp_sys_bpf_free_late_stacks(b);
	free(b->pending);
	pthread_mutex_destroy(&b->harvest_lock);
	free(b);
}
