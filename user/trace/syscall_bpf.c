/*
 * syscall_bpf.c - the owner of the syscall BPF objects (syscall.skel.h and its fallback
 * syscall_compat.skel.h): configure, load, attach, read the summary and the counters, and
 * drain the ring buffer.
 *
 * Both objects come from bpf/syscall.bpf.c and share map names and the configuration
 * struct, so everything after open goes through the generic libbpf API.
 *
 * The summary is the kernel map's rows plus those of processes that exited: the exits ring
 * says which processes are gone, kp_sys_bpf_harvest moves their rows into a userspace table
 * (summary_table.c), so the map holds the live processes only and a long trace with
 * processes coming and going does not fill it.
 */
#include <errno.h>
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
#include "stack/stack.h"
#include "tracefs/tracefs.h"
#include "trace.h"
#include "skel/syscall.skel.h"
#include "skel/syscall_compat.skel.h"

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

static const char *const prog_names[NPROGS] = {
	"kp_sys_enter",	   "kp_sys_exit",  "kp_proc_fork",    "kp_proc_exec", "kp_proc_exit",
	"kp_proc_fork_ns", "kp_mark_fork", "kp_mark_targets", "kp_uw_exec",
};

#define MAX_EXITED_ROWS (1U << 18) /* rows of exited processes kept (~170 MB at most) */
#define MAX_PENDING (1U << 16) /* exited processes waiting for their rows to be moved */

struct kp_sys_bpf {
	struct syscall_bpf *skel;
	struct syscall_compat_bpf *cskel;
	struct bpf_object *obj;
	struct bpf_program *progs[NPROGS];
	struct bpf_link *links[NPROGS];
	struct ring_buffer *rb;
	int summary_fd, counters_fd, by_nr_fd, stack_summary_fd, stacks_fd, cg_summary_fd;
	size_t ringbuf_bytes;
	size_t record_size; /* kp_sys_event, or kp_sys_event_stk with stacks */
	kp_sys_event_fn on_event;
	void *ctx;
	bool compat;
	bool single; /* by_nr holds the one process's rows, else the overflow rows */
	bool by_cgroup; /* the summary is cg_summary: no process rows, nothing moved at exits */
	__u32 single_tgid;
	unsigned by_nr_entries;
	int ncpus; /* possible CPUs, for per-CPU values */

	struct ring_buffer *exits_rb; /* NULL: rows stay in the kernel map */
	pthread_mutex_t harvest_lock; /* exited, pending, the map's rows while moved */
	struct kp_sys_table exited; /* rows of the processes that exited */
	struct kp_sys_uw *uw; /* the unwind tables' loader, when unwinding */
	__u32 *pending; /* exited processes whose rows are still in the map */
	size_t npending, pcap;
	uint64_t late_calls; /* calls with no row in the kernel, added to their row here */
	uint64_t late_lost; /* ... that found no memory here either */
};

static int on_rb_sample(void *ctx, void *data, size_t size)
{
	struct kp_sys_bpf *b = ctx;

	if (size >= b->record_size && b->on_event)
		return b->on_event(b->ctx, data);
	return 0;
}

/* a call whose row the kernel could not allocate: into its row here (harvest_lock held) */
static void late_call(struct kp_sys_bpf *b, const struct kp_sys_late_call *c)
{
	struct kp_sys_key key = { .tgid = c->tgid, .nr = c->nr };
	struct kp_sys_stat s = { .calls = 1, .errors = c->ret < 0, .total_ns = c->dur_ns };
	unsigned slot = 0;
	uint64_t d = c->dur_ns;

	s.min_ns = s.max_ns = c->dur_ns;
	while (d >>= 1)
		slot++; /* the kernel's log2 slot */
	s.hist[slot] = 1;
	memcpy(s.comm, c->comm, sizeof(s.comm));
	/* out of memory here too: the only loss, and the reason is the same */
	if (kp_sys_table_add(&b->exited, &key, &s))
		b->late_lost++;
	b->late_calls++;
}

/* the exits ring's callback, with harvest_lock held: an exit, or a call with no row */
static int on_exit_note(void *ctx, void *data, size_t size)
{
	struct kp_sys_bpf *b = ctx;
	const struct kp_sys_exit_note *n = data;

	if (size < sizeof(*n))
		return 0;
	if (n->kind == KP_SYS_NOTE_CALL) {
		if (size >= sizeof(struct kp_sys_late_call))
			late_call(b, data);
		return 0;
	}
	if (b->npending >= MAX_PENDING)
		return 0; /* its rows stay in the map, still counted */
	if (kp_grow((void **)&b->pending, &b->pcap, b->npending + 1, sizeof(*b->pending)))
		return 0;
	b->pending[b->npending++] = n->tgid;
	return 0;
}

static void set_bit(volatile __u64 *mask, unsigned bit)
{
	mask[bit / 64] |= 1ULL << (bit % 64);
}

/* user stacks from .eh_frame tables: asked for, with user stacks, where CO-RE is */
static bool unwinds(const struct kp_sys_bpf *b, const struct kp_sys_bpf_opts *o)
{
	return o->unwind && o->user_stack && !b->compat;
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
	if (b->single || b->by_cgroup)
		bpf_map__set_max_entries(bpf_object__find_map_by_name(b->obj, "exits"),
					 (__u32)getpagesize());
	/* the maps of stacks cost nothing unless asked for (a map of 0 entries is EINVAL) */
	m = bpf_object__find_map_by_name(b->obj, "stack_summary");
	bpf_map__set_max_entries(m, o->kernel_stack || o->user_stack ? o->summary_entries : 1);
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
	return kp_sys_uw_prepare(b->obj, unwinds(b, o), o->ntgids);
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
	kp_sys_uw_stop(b->uw);
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
	} else {
		b->skel = syscall_bpf__open_opts(&oo);
		if (!b->skel)
			return -errno;
		b->obj = b->skel->obj;
		cfg = &b->skel->rodata->cfg;
		pidns = (struct kp_pidns_cfg *)&b->skel->rodata->kp_pidns;
		b->skel->rodata->kp_uw_on = unwinds(b, o);
	}
	err = configure(b, cfg, pidns, o);
	if (err)
		return err;
	err = compat ? syscall_compat_bpf__load(b->cskel) : syscall_bpf__load(b->skel);
	if (err)
		return err;
	err = populate(b, o);
	if (!err && unwinds(b, o))
		err = kp_sys_uw_start(b->obj, o->tgids, o->ntgids, &b->uw);
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
	b->record_size = o->kernel_stack || o->user_stack ? sizeof(struct kp_sys_event_stk) :
							    sizeof(struct kp_sys_event);
	b->ctx = o->ctx;
	b->ncpus = libbpf_num_possible_cpus();
	pthread_mutex_init(&b->harvest_lock, NULL);
	b->exited.max_rows = MAX_EXITED_ROWS;
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
	if (!b->single && !b->by_cgroup) {
		b->exits_rb =
			ring_buffer__new(bpf_map__fd(bpf_object__find_map_by_name(b->obj, "exits")),
					 on_exit_note, b, NULL);
		if (!b->exits_rb) {
			err = kp_fail(LIBPERF_ERR_FAIL_MMAP, -errno,
				      "cannot map the ring buffer of process exits: %s",
				      strerror(errno));
			goto fail;
		}
	}
	b->stack_summary_fd = bpf_map__fd(bpf_object__find_map_by_name(b->obj, "stack_summary"));
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

int kp_sys_bpf_attach(struct kp_sys_bpf *b)
{
	int i, err;

	for (i = 0; i < NPROGS; i++) {
		if (i == PROG_MARK_ITER)
			continue;
		if (b->links[i] || !bpf_program__autoload(b->progs[i]))
			continue;
		b->links[i] = bpf_program__attach(b->progs[i]);
		if (!b->links[i]) {
			int err = -errno;

			kp_sys_bpf_detach(b);
			return kp_fail(LIBPERF_ERR_BPF_ACT_FAILED, err, "cannot attach %s: %s %s",
				       prog_names[i], strerror(-err), kp_bpf_log_tail());
		}
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
	return 0;
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
	return ring_buffer__consume(b->rb);
}

/* the per-CPU values of <key> in map <fd>, summed into <out>; -1 when it has none */
static int sum_cpus(struct kp_sys_bpf *b, int fd, const void *key, char *vals,
		    struct kp_sys_stat *out)
{
	size_t vsize = (sizeof(struct kp_sys_stat) + 7) / 8 * 8;
	int c;

	memset(out, 0, sizeof(*out));
	if (bpf_map_lookup_elem(fd, key, vals))
		return -1;
	for (c = 0; c < b->ncpus; c++)
		kp_sys_stat_add(out, (const void *)(vals + vsize * (size_t)c));
	return 0;
}

static char *cpu_values(struct kp_sys_bpf *b)
{
	/* zeroed: valgrind does not model per-CPU lookups */
	return calloc((size_t)b->ncpus, (sizeof(struct kp_sys_stat) + 7) / 8 * 8);
}

/* without CO-RE, the exit of a process's leader stands for the process's: it is gone when
 * /proc no longer has it, or has only its zombie leader */
static bool process_gone(__u32 tgid)
{
	char path[64], *text, *p;
	int threads = 0, i;
	bool gone;

	snprintf(path, sizeof(path), "/proc/%u/stat", tgid);
	if (kp_read_file(path, &text, NULL))
		return true;
	p = strrchr(text, ')');
	gone = false;
	if (p && (p[2] == 'Z' || p[2] == 'X')) {
		/* num_threads is field 20; p + 2 is field 3 */
		for (i = 3; p && i < 20; i++) {
			p = strchr(p + 1, ' ');
		}
		if (p)
			threads = atoi(p + 1);
		gone = threads <= 1;
	}
	free(text);
	return gone;
}

static int cmp_u32(const void *a, const void *b)
{
	__u32 x = *(const __u32 *)a, y = *(const __u32 *)b;

	return (x > y) - (x < y);
}

void kp_sys_bpf_harvest(struct kp_sys_bpf *b)
{
	struct kp_sys_key key, next, *prev = NULL, *keys = NULL;
	size_t nkeys = 0, kcap = 0, i, ngone = 0, nkeep = 0;
	struct kp_sys_stat sum;
	__u32 *gone = NULL;
	char *vals;

	if (!b->exits_rb)
		return;
	pthread_mutex_lock(&b->harvest_lock);
	ring_buffer__consume(b->exits_rb);
	if (!b->npending)
		goto out;
	/* the processes gone for sure; the others wait for the next round */
	gone = malloc(b->npending * sizeof(*gone));
	if (!gone)
		goto out;
	for (i = 0; i < b->npending; i++) {
		if (!b->compat || process_gone(b->pending[i]))
			gone[ngone++] = b->pending[i];
		else
			b->pending[nkeep++] = b->pending[i];
	}
	b->npending = nkeep;
	if (!ngone)
		goto out;
	qsort(gone, ngone, sizeof(*gone), cmp_u32);
	while (bpf_map_get_next_key(b->summary_fd, prev, &next) == 0) {
		key = next;
		prev = &key;
		if (!bsearch(&key.tgid, gone, ngone, sizeof(*gone), cmp_u32))
			continue;
		if (kp_grow((void **)&keys, &kcap, nkeys + 1, sizeof(*keys)))
			break;
		keys[nkeys++] = key;
	}
	vals = cpu_values(b);
	for (i = 0; vals && i < nkeys; i++) {
		/* the process made its last call: nothing adds to the row any more */
		if (sum_cpus(b, b->summary_fd, &keys[i], vals, &sum))
			continue;
		if (kp_sys_table_add(&b->exited, &keys[i], &sum))
			break; /* out of memory: the rows stay in the map */
		bpf_map_delete_elem(b->summary_fd, &keys[i]);
	}
	free(vals);
	free(keys);
out:
	free(gone);
	pthread_mutex_unlock(&b->harvest_lock);
}

int kp_sys_bpf_exits_epoll_fd(struct kp_sys_bpf *b)
{
	return b->exits_rb ? ring_buffer__epoll_fd(b->exits_rb) : -1;
}

int kp_sys_bpf_summary(struct kp_sys_bpf *b, struct kp_sys_row **rows)
{
	struct kp_sys_key key, next, *prev = NULL;
	struct kp_sys_table all = { 0 };
	struct kp_sys_stat sum;
	char *vals;
	__u32 nr;
	int err = 0;

	*rows = NULL;
	vals = cpu_values(b);
	if (!vals)
		return kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
	kp_sys_bpf_harvest(b);
	pthread_mutex_lock(&b->harvest_lock);
	err = kp_sys_table_copy(&all, &b->exited);
	while (!err && bpf_map_get_next_key(b->summary_fd, prev, &next) == 0) {
		key = next;
		prev = &key;
		if (sum_cpus(b, b->summary_fd, &key, vals, &sum))
			continue; /* deleted meanwhile */
		err = kp_sys_table_add(&all, &key, &sum);
	}
	/* by syscall number: the one process's rows, else the calls the map had no room for,
	 * then those it could not allocate a row for when the exits ring was full */
	for (nr = 0; !err && nr < (b->single ? 1 : 2) * b->by_nr_entries; nr++) {
		key = (struct kp_sys_key){ .tgid = b->single		 ? b->single_tgid :
						   nr < b->by_nr_entries ? KP_SYS_OVERFLOW_TGID :
									   KP_SYS_NOMEM_TGID,
					   .nr = nr % b->by_nr_entries };
		if (!sum_cpus(b, b->by_nr_fd, &nr, vals, &sum))
			err = kp_sys_table_add(&all, &key, &sum);
	}
	pthread_mutex_unlock(&b->harvest_lock);
	free(vals);
	free(all.index);
	if (err) {
		free(all.rows);
		return kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
	}
	*rows = all.rows;
	return (int)all.n;
}

/* row <key> with its per-CPU values <vals> summed, appended to *out (kp_grow); -1 no memory */
static int cg_append(struct kp_sys_bpf *b, struct kp_sys_cg_row **out, size_t *n, size_t *cap,
		     const struct kp_sys_cg_key *key, const char *vals, __u32 kind)
{
	size_t vsize = (sizeof(struct kp_sys_stat) + 7) / 8 * 8;
	struct kp_sys_cg_row *r;
	int c;

	if (kp_grow((void **)out, cap, *n + 1, sizeof(**out)))
		return -1;
	r = &(*out)[(*n)++];
	memset(r, 0, sizeof(*r));
	r->key = *key;
	r->kind = kind;
	for (c = 0; c < b->ncpus; c++)
		kp_sys_stat_add(&r->stat, (const void *)(vals + vsize * (size_t)c));
	return 0;
}

/* the whole map in a few bpf() calls (hash batch operations, Linux 5.6): 1 when the kernel
 * cannot, so the caller walks key by key */
static int cg_read_batch(struct kp_sys_bpf *b, struct kp_sys_cg_row **out, size_t *n, size_t *cap)
{
	LIBBPF_OPTS(bpf_map_batch_opts, opts);
	size_t vsize = (sizeof(struct kp_sys_stat) + 7) / 8 * 8, i;
	/* about 256 KiB of values at a time */
	__u32 chunk = (__u32)(256 * 1024 / (vsize * (size_t)b->ncpus)), count;
	struct kp_sys_cg_key tok_in, tok_out, *keys = NULL;
	char *vals = NULL;
	bool first = true;
	int err;

	if (chunk < 16)
		chunk = 16;
	for (;;) {
		if (!keys) {
			/* not zeroed: the kernel writes what is read */
			keys = malloc(chunk * sizeof(*keys));
			vals = malloc(chunk * vsize * (size_t)b->ncpus);
			if (!keys || !vals) {
				err = -ENOMEM;
				break;
			}
		}
		count = chunk;
		err = bpf_map_lookup_batch(b->cg_summary_fd, first ? NULL : &tok_in, &tok_out, keys,
					   vals, &count, &opts);
		err = err ? -errno : 0;
		if (err == -ENOSPC && count == 0) {
			/* a bucket holds more rows than a chunk: again with room for it */
			free(keys);
			free(vals);
			keys = NULL;
			vals = NULL;
			chunk *= 2;
			continue;
		}
		if (err && err != -ENOENT) {
			if (first)
				err = 1; /* no batch operations here */
			break;
		}
		for (i = 0; i < count; i++)
			if (cg_append(b, out, n, cap, &keys[i], vals + i * vsize * (size_t)b->ncpus,
				      0)) {
				err = -ENOMEM;
				goto done;
			}
		if (err == -ENOENT) {
			err = 0;
			break; /* the end of the map */
		}
		tok_in = tok_out;
		first = false;
	}
done:
	free(keys);
	free(vals);
	return err;
}

int kp_sys_bpf_cg_summary(struct kp_sys_bpf *b, struct kp_sys_cg_row **rows)
{
	struct kp_sys_cg_key key, next, *prev = NULL;
	struct kp_sys_cg_row *out = NULL;
	uint64_t cnt[KP_CNT_MAX];
	size_t cap = 0, n = 0;
	char *vals = cpu_values(b);
	__u32 nr;
	int err;

	*rows = NULL;
	if (!vals)
		return kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
	err = cg_read_batch(b, &out, &n, &cap);
	if (err < 0)
		goto nomem;
	while (err > 0 && bpf_map_get_next_key(b->cg_summary_fd, prev, &next) == 0) {
		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(b->cg_summary_fd, &key, vals))
			continue; /* deleted meanwhile */
		if (cg_append(b, &out, &n, &cap, &key, vals, 0))
			goto nomem;
	}
	/* the calls the map had no room for, then those it could not allocate a row for: read
	 * only when the counters say there are some (a fold would otherwise read every syscall
	 * number's per-CPU values twice) */
	kp_sys_bpf_counters(b, cnt);
	for (nr = 0; nr < 2 * b->by_nr_entries; nr++) {
		bool nomem = nr >= b->by_nr_entries;

		if (!cnt[nomem ? KP_CNT_NOMEM_FOLDED : KP_CNT_SUMMARY_FULL] ||
		    bpf_map_lookup_elem(b->by_nr_fd, &nr, vals))
			continue;
		memset(&key, 0, sizeof(key));
		key.cgid = ~0ULL;
		key.nr = nr % b->by_nr_entries;
		if (cg_append(b, &out, &n, &cap, &key, vals,
			      nomem ? KP_SYS_NOMEM_TGID : KP_SYS_OVERFLOW_TGID))
			goto nomem;
		if (!out[n - 1].stat.calls)
			n--;
	}
	free(vals);
	*rows = out;
	return (int)n;
nomem:
	free(vals);
	free(out);
	return kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
}

int kp_sys_bpf_cg_forget(struct kp_sys_bpf *b, const uint64_t *ids, unsigned n)
{
	struct kp_sys_cg_key key, next, *prev = NULL, *del = NULL;
	size_t cap = 0, ndel = 0, i;
	int removed = 0;

	/* keys first, deletions after: a hash map's walk restarts when its current key goes */
	while (bpf_map_get_next_key(b->cg_summary_fd, prev, &next) == 0) {
		key = next;
		prev = &key;
		for (i = 0; i < n; i++)
			if (ids[i] == key.cgid)
				break;
		if (i == n)
			continue;
		if (kp_grow((void **)&del, &cap, ndel + 1, sizeof(*del))) {
			free(del);
			return kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
		}
		del[ndel++] = key;
	}
	for (i = 0; i < ndel; i++)
		removed += bpf_map_delete_elem(b->cg_summary_fd, &del[i]) == 0;
	free(del);
	return removed;
}

int kp_sys_bpf_stack_summary(struct kp_sys_bpf *b, struct kp_sys_stack_row **rows)
{
	size_t vsize = (sizeof(struct kp_sys_stack_stat) + 7) / 8 * 8, cap = 0, n = 0;
	struct kp_sys_stack_key key, next, *prev = NULL;
	struct kp_sys_stack_row *out = NULL;
	char *vals;
	int c;

	*rows = NULL;
	vals = calloc((size_t)b->ncpus, vsize);
	if (!vals)
		return kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
	while (bpf_map_get_next_key(b->stack_summary_fd, prev, &next) == 0) {
		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(b->stack_summary_fd, &key, vals))
			continue; /* deleted meanwhile */
		if (kp_grow((void **)&out, &cap, n + 1, sizeof(*out))) {
			free(out);
			free(vals);
			return kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
		}
		memset(&out[n], 0, sizeof(out[n]));
		out[n].key = key;
		for (c = 0; c < b->ncpus; c++) {
			const struct kp_sys_stack_stat *s =
				(const void *)(vals + vsize * (size_t)c);
			struct kp_sys_stack_stat *t = &out[n].stat;

			if (!s->calls)
				continue;
			if (!t->calls || s->min_ns < t->min_ns)
				t->min_ns = s->min_ns;
			if (s->max_ns > t->max_ns)
				t->max_ns = s->max_ns;
			if (!t->comm[0])
				memcpy(t->comm, s->comm, sizeof(t->comm));
			t->calls += s->calls;
			t->errors += s->errors;
			t->total_ns += s->total_ns;
		}
		if (out[n].stat.calls)
			n++;
	}
	free(vals);
	*rows = out;
	return (int)n;
}

void kp_sys_bpf_for_each_tgid(struct kp_sys_bpf *b, void (*fn)(void *ctx, uint32_t tgid), void *ctx)
{
	struct kp_sys_key key, next, *prev = NULL;

	if (b->single)
		fn(ctx, b->single_tgid); /* its rows are by syscall number, not in the map */
	while (bpf_map_get_next_key(b->summary_fd, prev, &next) == 0) {
		key = next;
		prev = &key;
		fn(ctx, key.tgid);
	}
}

unsigned kp_sys_bpf_stack(struct kp_sys_bpf *b, uint64_t id, bool kernel, uint64_t *ips,
			  unsigned max)
{
	return kp_stack_read(b->stacks_fd, id, kernel, ips, max);
}

/* the summary by stack forgets the same processes (nothing to do without stacks) */
static void forget_stack_rows(struct kp_sys_bpf *b, const int *tgids, unsigned n)
{
	struct kp_sys_stack_key key, next, *prev = NULL, *del = NULL;
	size_t cap = 0, ndel = 0, i;

	while (bpf_map_get_next_key(b->stack_summary_fd, prev, &next) == 0) {
		key = next;
		prev = &key;
		for (i = 0; i < n; i++)
			if ((__u32)tgids[i] == key.tgid)
				break;
		if (i < n && !kp_grow((void **)&del, &cap, ndel + 1, sizeof(*del)))
			del[ndel++] = key;
	}
	for (i = 0; i < ndel; i++)
		bpf_map_delete_elem(b->stack_summary_fd, &del[i]);
	free(del);
}

int kp_sys_bpf_forget(struct kp_sys_bpf *b, const int *tgids, unsigned n)
{
	struct kp_sys_key key, next, *prev = NULL, *del = NULL;
	size_t cap = 0, ndel = 0, i;
	int removed = 0;

	if (!n)
		return 0;
	/* keys first, deletions after: a hash map's walk restarts when its current key goes */
	while (bpf_map_get_next_key(b->summary_fd, prev, &next) == 0) {
		key = next;
		prev = &key;
		for (i = 0; i < n; i++)
			if ((__u32)tgids[i] == key.tgid)
				break;
		if (i == n)
			continue;
		if (kp_grow((void **)&del, &cap, ndel + 1, sizeof(*del))) {
			free(del);
			return kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
		}
		del[ndel++] = key;
	}
	for (i = 0; i < ndel; i++)
		removed += bpf_map_delete_elem(b->summary_fd, &del[i]) == 0;
	free(del);
	/* and those already moved out of the map at the process's exit */
	pthread_mutex_lock(&b->harvest_lock);
	removed += (int)kp_sys_table_drop(&b->exited, tgids, n);
	pthread_mutex_unlock(&b->harvest_lock);
	forget_stack_rows(b, tgids, n);
	return removed;
}

void kp_sys_bpf_counters(struct kp_sys_bpf *b, uint64_t out[KP_CNT_MAX])
{
	__u64 *vals = calloc((size_t)b->ncpus, sizeof(*vals));
	__u32 k;
	int c;

	memset(out, 0, KP_CNT_MAX * sizeof(*out));
	if (!vals)
		return;
	for (k = 0; k < KP_CNT_MAX; k++) {
		if (bpf_map_lookup_elem(b->counters_fd, &k, vals))
			continue;
		for (c = 0; c < b->ncpus; c++)
			out[k] += vals[c];
	}
	free(vals);
	/* calls without a kernel row that found no memory here either: not counted */
	pthread_mutex_lock(&b->harvest_lock);
	out[KP_CNT_STATE_FULL] += b->late_lost;
	pthread_mutex_unlock(&b->harvest_lock);
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
	destroy_objects(b);
	kp_sys_table_free(&b->exited);
	free(b->pending);
	pthread_mutex_destroy(&b->harvest_lock);
	free(b);
}
