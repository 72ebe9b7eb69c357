/*
 * syscall_bpf.c - the owner of the syscall BPF objects (syscall.skel.h and its fallback
 * syscall_compat.skel.h): configure, load, attach, read the summary and the counters, and
 * drain the ring buffer.
 *
 * Both objects come from bpf/syscall.bpf.c and share map names and the configuration
 * struct, so everything after open goes through the generic libbpf API.
 */
#include <errno.h>
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
#define NPROGS 6

static const char *const prog_names[NPROGS] = { "kp_sys_enter", "kp_sys_exit",	"kp_proc_fork",
						"kp_proc_exec", "kp_proc_exit", "kp_proc_fork_ns" };

struct kp_sys_bpf {
	struct syscall_bpf *skel;
	struct syscall_compat_bpf *cskel;
	struct bpf_object *obj;
	struct bpf_program *progs[NPROGS];
	struct bpf_link *links[NPROGS];
	struct ring_buffer *rb;
	int summary_fd, counters_fd;
	size_t ringbuf_bytes;
	kp_sys_event_fn on_event;
	void *ctx;
	bool compat;
	int ncpus; /* possible CPUs, for per-CPU values */
};

static int on_rb_sample(void *ctx, void *data, size_t size)
{
	struct kp_sys_bpf *b = ctx;

	if (size >= sizeof(struct kp_sys_event) && b->on_event)
		return b->on_event(b->ctx, data);
	return 0;
}

static void set_bit(volatile __u64 *mask, unsigned bit)
{
	mask[bit / 64] |= 1ULL << (bit % 64);
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
	cfg->wakeup_bytes = o->ringbuf_bytes / 4;
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
	bpf_map__set_max_entries(m, o->summary_entries);
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
	bpf_program__set_autoload(b->progs[PROG_FORK], o->follow_fork && !fork_ns);
	bpf_program__set_autoload(b->progs[PROG_FORK_NS], o->follow_fork && fork_ns);
	bpf_program__set_autoload(b->progs[PROG_EXEC], o->from_exec);
	bpf_program__set_autoload(b->progs[PROG_PEXIT], o->ntgids > 0);
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
	}
	err = configure(b, cfg, pidns, o);
	if (err)
		return err;
	err = compat ? syscall_compat_bpf__load(b->cskel) : syscall_bpf__load(b->skel);
	if (err)
		return err;
	return populate(b, o);
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
	b->ctx = o->ctx;
	b->ncpus = libbpf_num_possible_cpus();
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

int kp_sys_bpf_attach(struct kp_sys_bpf *b)
{
	int i;

	for (i = 0; i < NPROGS; i++) {
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

int kp_sys_bpf_summary(struct kp_sys_bpf *b, struct kp_sys_row **rows)
{
	size_t vsize = (sizeof(struct kp_sys_stat) + 7) / 8 * 8, cap = 0, n = 0;
	struct kp_sys_key key, next, *prev = NULL;
	struct kp_sys_row *out = NULL;
	char *vals;
	int c, i;

	*rows = NULL;
	vals = calloc((size_t)b->ncpus,
		      vsize); /* zeroed: valgrind does not model per-CPU lookups */
	if (!vals)
		return kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
	while (bpf_map_get_next_key(b->summary_fd, prev, &next) == 0) {
		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(b->summary_fd, &key, vals))
			continue; /* deleted meanwhile */
		if (kp_grow((void **)&out, &cap, n + 1, sizeof(*out))) {
			free(out);
			free(vals);
			return kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
		}
		memset(&out[n], 0, sizeof(out[n]));
		out[n].key = key;
		for (c = 0; c < b->ncpus; c++) {
			const struct kp_sys_stat *s = (const void *)(vals + vsize * (size_t)c);
			struct kp_sys_stat *t = &out[n].stat;

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
			for (i = 0; i < KP_HIST_BPF_SLOTS; i++)
				t->hist[i < KP_HIST_SLOTS ? i : KP_HIST_SLOTS - 1] += s->hist[i];
		}
		if (out[n].stat.calls)
			n++;
	}
	free(vals);
	*rows = out;
	return (int)n;
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
	free(b);
}
