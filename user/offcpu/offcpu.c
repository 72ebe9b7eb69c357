/*
 * offcpu.c - the owner of offcpu.skel.h: loads the off-CPU programs (tp_btf where the kernel
 * has BTF, the same programs as raw tracepoints where it has none), keeps the processes to
 * follow in their maps, drains the aggregation maps a generation at a time (as sampling does)
 * and closes the blocks still open when the collection ends.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "core/core.h"
#include "core/pidns.h"
#include "kperf/pcerrc.h"
#include "offcpu.h"
#include "offcpu_event.h"
#include "pidns_cfg.h" /* the rodata of stack_capture.bpf.h (unwind.bpf.h) */
#include "runtime/python.h"
#include "stack/stack.h"
#include "unwind/unwind.h"
#include "skel/offcpu.skel.h"

#define DEF_ENTRIES 16384
#define DEF_STACKS 8192
#define DEF_RING_KB 8192
#define MAX_RING_KB (1U << 20)
#define MAX_ENTRIES (1U << 22)
#define THREADS 32768
#define TARGETS 8192
#define GRACE_NS 2000000 /* far longer than one run of the switch program */
#define BATCH 512
#ifndef ENOTSUPP
#define ENOTSUPP 524 /* kernel-internal, but bpf() returns it for unsupported batch ops */
#endif

enum { P_SWITCH, P_FORK, P_EXEC, P_EXIT, P_FREE, P_RENAME, NPROGS };

struct kp_offcpu {
	struct offcpu_bpf *skel;
	bool raw; /* raw tracepoint programs */
	struct bpf_link *link[NPROGS];
	int counts_fd[2], threads_fd, stacks_fd, counters_fd;
	int ncpus;
	struct ring_buffer *ring; /* slices mode */
	kp_offcpu_slice_fn on_slice;
	void *slice_ctx;
	int slice_err; /* the first error on_slice returned while the ring was read */
	uint64_t min_slice_ns;
	struct kp_uw_owner *uw; /* user stacks from .eh_frame tables: their loader */
};

static struct bpf_program *prog(const struct kp_offcpu *c, bool raw, int which)
{
	struct offcpu_bpf *s = c->skel;
	struct bpf_program *const tp[NPROGS] = {
		s->progs.kp_off_switch, s->progs.kp_off_fork, s->progs.kp_off_exec,
		s->progs.kp_off_exit,	s->progs.kp_off_free, s->progs.kp_off_rename,
	};
	struct bpf_program *const rt[NPROGS] = {
		s->progs.kp_off_switch_raw, s->progs.kp_off_fork_raw, s->progs.kp_off_exec_raw,
		s->progs.kp_off_exit_raw,   s->progs.kp_off_free_raw, s->progs.kp_off_rename_raw,
	};

	return raw ? rt[which] : tp[which];
}

static bool force_raw(void)
{
	const char *v = secure_getenv("KPERF_BPF_FORCE_COMPAT");

	return v && *v && strcmp(v, "0");
}

static int attach(struct kp_offcpu *c, int which)
{
	int err;

	if (c->link[which])
		return 0;
	c->link[which] = bpf_program__attach(prog(c, c->raw, which));
	if (!c->link[which]) {
		err = -errno;
		return kp_fail(LIBPERF_ERR_BPF_ACT_FAILED, err,
			       "cannot attach the off-CPU program %s: %s",
			       bpf_program__name(prog(c, c->raw, which)), strerror(-err));
	}
	return 0;
}

/* The offset and size of the first of <names> that task_struct has, from the kernel's BTF
 * <btf>: 0 with *size 0 when none (a bit field does not count). */
static unsigned task_field(struct btf *btf, const char *const *names, unsigned *size)
{
	const struct btf_member *m;
	const struct btf_type *t;
	int id, i, k;

	*size = 0;
	id = btf ? btf__find_by_name_kind(btf, "task_struct", BTF_KIND_STRUCT) : -1;
	t = id > 0 ? btf__type_by_id(btf, id) : NULL;
	for (k = 0; t && names[k]; k++) {
		for (i = 0, m = btf_members(t); i < btf_vlen(t); i++, m++) {
			__s64 sz;

			if (strcmp(btf__name_by_offset(btf, m->name_off), names[k]) ||
			    btf_member_bitfield_size(t, i))
				continue;
			sz = btf__resolve_size(btf, m->type);
			if (sz <= 0)
				return 0;
			*size = (unsigned)sz;
			return btf_member_bit_offset(t, i) / 8;
		}
	}
	return 0;
}

/* Where task_struct keeps what the programs read of a task they have no CO-RE for: its state
 * (__state, or state before 5.14), tgid, pid and comm. Left 0 without BTF. */
static void task_fields(struct kp_off_config *cfg)
{
	static const char *const state[] = { "__state", "state", NULL };
	static const char *const tgid[] = { "tgid", NULL }, *const pid[] = { "pid", NULL };
	static const char *const comm[] = { "comm", NULL };
	const char *path = kp_btf_path();
	struct btf *btf = path ? btf__parse(path, NULL) : NULL;
	unsigned size;

	if (!btf)
		return;
	cfg->state_off = task_field(btf, state, &size);
	cfg->state_size = size == 4 || size == 8 ? size : 0;
	cfg->tgid_off = task_field(btf, tgid, &size);
	cfg->pid_off = size == 4 ? task_field(btf, pid, &size) : 0;
	cfg->comm_off = size == 4 ? task_field(btf, comm, &size) : 0;
	if (size != KP_OFF_COMM)
		cfg->tgid_off = cfg->pid_off = cfg->comm_off = 0;
	btf__free(btf);
}

static int load(struct kp_offcpu *c, const struct kp_offcpu_opts *o)
{
	struct offcpu_bpf *s;
	unsigned entries = o->entries ? o->entries : DEF_ENTRIES;
	unsigned stacks = o->stacks ? o->stacks : DEF_STACKS;
	int i, err, hold_fd;
	bool py;
	size_t ring = getpagesize();

	if (entries > MAX_ENTRIES || stacks > MAX_ENTRIES)
		return kp_fail(KPERF_ERR_INVALID_ATTR, -EINVAL,
			       "off-CPU maps of %u entries and %u stacks: at most %u each", entries,
			       stacks, MAX_ENTRIES);
	if (o->on_slice && o->ring_kb > MAX_RING_KB)
		return kp_fail(KPERF_ERR_INVALID_ATTR, -EINVAL,
			       "an off-CPU ring buffer of %u KiB: at most %u", o->ring_kb,
			       MAX_RING_KB);
	if (o->on_slice && !kp_have(KP_FEAT_RINGBUF))
		return kp_fail(LIBPERF_ERR_KERNEL_NOT_SUPPORT, -ENOTSUP,
			       "kernel %s has no %s (%s): off-CPU slices need Linux 5.8 or later",
			       kp_kernel_release(), kp_feature_name(KP_FEAT_RINGBUF),
			       kp_feature_since(KP_FEAT_RINGBUF));
	if (o->on_slice) {
		/* a power of two of pages, at least the size asked for */
		while (ring < ((size_t)(o->ring_kb ? o->ring_kb : DEF_RING_KB) << 10))
			ring <<= 1;
	}
	s = c->skel = offcpu_bpf__open();
	if (!s)
		return kp_fail(LIBPERF_ERR_BPF_ACT_FAILED, -errno,
			       "cannot open the off-CPU BPF object");
	c->raw = !kp_have(KP_FEAT_BTF) || force_raw();
	s->rodata->cfg.filter_pid = o->npids > 0;
	s->rodata->cfg.kernel_stack = o->kernel_stack;
	s->rodata->cfg.user_stack = o->user_stack;
	s->rodata->cfg.blocked_only = o->blocked_only;
	s->rodata->cfg.slices = o->on_slice != NULL;
	s->rodata->cfg.min_slice_ns = o->min_slice_ns;
	task_fields((struct kp_off_config *)&s->rodata->cfg);
	/* pids are the caller's namespace's (the walk to a task that is not the current one
	 * takes the offsets of the kernel's BTF; without BTF, only tasks of the caller's own
	 * namespace are seen from inside one) */
	err = kp_pidns_bpf_config((struct kp_pidns_cfg *)&s->rodata->kp_pidns, true);
	if (err)
		return err;
	s->rodata->cfg.self_tgid = (__u32)getpid();
	for (i = 0; i < NPROGS; i++) {
		bpf_program__set_autoload(prog(c, true, i), c->raw);
		bpf_program__set_autoload(prog(c, false, i), !c->raw);
	}
	/* summed blocks or slices: the other kind's maps are as small as they can be (and a
	 * kernel without ring buffers need not create one it does not use) */
	bpf_map__set_max_entries(s->maps.counts0, o->on_slice ? 1 : entries);
	bpf_map__set_max_entries(s->maps.counts1, o->on_slice ? 1 : entries);
	bpf_map__set_max_entries(s->maps.slices, (__u32)ring);
	if (!o->on_slice && !kp_have(KP_FEAT_RINGBUF))
		bpf_map__set_autocreate(s->maps.slices, false);
	bpf_map__set_max_entries(s->maps.stacks, o->kernel_stack || o->user_stack ? stacks : 1);
	bpf_map__set_max_entries(s->maps.threads, THREADS);
	bpf_map__set_max_entries(s->maps.targets, o->npids ? TARGETS : 1);
	bpf_map__set_max_entries(s->maps.children, o->npids ? TARGETS : 1);
	s->rodata->kp_uw_on = o->user_stack && !o->fp_stacks;
	kp_uw_owner_size(s->obj, s->rodata->kp_uw_on, (unsigned)o->npids);
	py = s->rodata->kp_uw_on && o->python_frames && kp_py_kernel_reads();
	s->rodata->kp_py_keep_interp = o->python_keep_interp;
	s->rodata->kp_py_max_threads = py ? KP_PY_MAX_THREADS : 0;
	s->rodata->kp_py_max_walk = py ? KP_PY_MAX_WALK : 0;
	kp_uw_owner_py_size(s->obj, py, (unsigned)o->npids);
	hold_fd = s->rodata->kp_uw_on ? kp_uw_owner_hold_fd(o->hold_with) : -1;
	if (hold_fd >= 0 && bpf_map__reuse_fd(s->maps.kp_uw_hold, hold_fd))
		return kp_fail(LIBPERF_ERR_BPF_ACT_FAILED, -errno,
			       "cannot share the unwinder's hold map: %s", strerror(errno));
	err = offcpu_bpf__load(s);
	if (err)
		return kp_bpf_load_error("off-CPU tracing", err);
	/* the targets' tables now (a command not exec'ed yet has kperf-bpf's mappings: it is held
	 * at its exec while its own load), their children's when first asked for */
	if (s->rodata->kp_uw_on) {
		err = kp_uw_owner_start_py(s->obj, o->pids, (unsigned)o->npids,
					   o->from_exec && hold_fd < 0, py, &c->uw);
		if (!err && hold_fd >= 0)
			err = kp_uw_owner_follow(o->hold_with, c->uw);
		if (err)
			return kp_fail(LIBPERF_ERR_FAIL_MMAP, err,
				       "cannot load the unwind tables: %s", strerror(-err));
	}
	c->counts_fd[0] = bpf_map__fd(s->maps.counts0);
	c->counts_fd[1] = bpf_map__fd(s->maps.counts1);
	c->threads_fd = bpf_map__fd(s->maps.threads);
	c->stacks_fd = bpf_map__fd(s->maps.stacks);
	c->counters_fd = bpf_map__fd(s->maps.counters);
	return 0;
}

/* a record of the ring buffer: to on_slice */
static int take_slice(void *ctx, void *data, size_t size)
{
	const struct kp_off_slice *r = data;
	struct kp_offcpu *c = ctx;
	struct kp_offcpu_slice sl = { 0 };
	int err;

	if (size < sizeof(*r) || c->slice_err)
		return 0;
	sl.tgid = r->tgid;
	sl.tid = r->tid;
	sl.start_ns = r->start_ns;
	sl.end_ns = r->end_ns;
	sl.kstack = r->kstack;
	sl.ustack = r->ustack;
	sl.preempted = r->preempted;
	memcpy(sl.comm, r->comm, KP_OFFCPU_COMM);
	err = c->on_slice(c->slice_ctx, &sl);
	if (err)
		c->slice_err = err; /* the others are consumed, and forgotten */
	return 0;
}

int kp_offcpu_read_slices(struct kp_offcpu *c)
{
	int n, err;

	if (!c->ring)
		return 0;
	kp_uw_owner_py_drain(c->uw); /* every code object of the slices read next */
	n = ring_buffer__consume(c->ring);
	err = c->slice_err;
	c->slice_err = 0;
	if (n < 0)
		return kp_fail(LIBPERF_ERR_BPF_ACT_FAILED, n, "cannot read the off-CPU slices: %s",
			       strerror(-n));
	return err ? err : n;
}

int kp_offcpu_open(const struct kp_offcpu_opts *o, struct kp_offcpu **out)
{
	struct kp_offcpu *c;
	__u8 st = o->from_exec ? KP_OFF_UNTIL_EXEC : KP_OFF_ACTIVE;
	int i, err;

	*out = NULL;
	err = kp_check_bpf_load();
	if (err)
		return err;
	kp_bpf_log_init();
	kp_bpf_log_clear();
	c = calloc(1, sizeof(*c));
	if (!c)
		return kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
	c->ncpus = libbpf_num_possible_cpus();
	c->on_slice = o->on_slice;
	c->slice_ctx = o->slice_ctx;
	c->min_slice_ns = o->min_slice_ns;
	err = load(c, o);
	if (!err && o->on_slice) {
		c->ring = ring_buffer__new(bpf_map__fd(c->skel->maps.slices), take_slice, c, NULL);
		if (!c->ring)
			err = kp_fail(LIBPERF_ERR_BPF_ACT_FAILED, -errno,
				      "cannot read the off-CPU ring buffer: %s", strerror(errno));
	}
	for (i = 0; !err && i < o->npids; i++) {
		__u32 tgid = (__u32)o->pids[i];

		if (bpf_map_update_elem(bpf_map__fd(c->skel->maps.targets), &tgid, &st, BPF_ANY))
			err = kp_fail(LIBPERF_ERR_BPF_ACT_FAILED, -errno,
				      "cannot follow process %d: %s", o->pids[i], strerror(errno));
	}
	/* the process tree is followed from the open on, as inherited perf events are */
	for (i = P_FORK; !err && i < NPROGS; i++)
		err = attach(c, i);
	if (err) {
		kp_offcpu_close(c);
		return err;
	}
	*out = c;
	return 0;
}

int kp_offcpu_enable(struct kp_offcpu *c)
{
	return attach(c, P_SWITCH);
}

static void grace(void)
{
	struct timespec ts = { 0, GRACE_NS };

	nanosleep(&ts, NULL);
}

static void to_block(struct kp_offcpu_block *b, const struct kp_off_key *k,
		     const struct kp_off_val *v)
{
	b->tgid = k->tgid;
	b->tid = k->tid;
	b->kstack = k->kstack;
	b->ustack = k->ustack;
	b->count = v->count;
	b->total_ns = v->total_ns;
	b->on_cpu = k->kstack == KP_OFF_ON_CPU;
	memcpy(b->comm, v->comm, KP_OFFCPU_COMM);
	b->comm[KP_OFFCPU_COMM] = '\0';
}

static int report(kp_offcpu_fn fn, void *ctx, const struct kp_off_thread *t, __u64 kstack,
		  __u64 ustack, uint64_t ns)
{
	struct kp_off_key k = { t->tgid, t->tid, kstack, ustack };
	struct kp_off_val v = { .count = 1, .total_ns = ns };
	struct kp_offcpu_block b;

	memcpy(v.comm, t->comm, sizeof(v.comm));
	to_block(&b, &k, &v);
	return fn(ctx, &b);
}

/* slices mode: the slice <t> is in ends <now> with the collection */
static int report_slice(struct kp_offcpu *c, const struct kp_off_thread *t, uint64_t now)
{
	struct kp_offcpu_slice sl = { 0 };

	if (now - t->start_ns < c->min_slice_ns)
		return 0;
	sl.tgid = t->tgid;
	sl.tid = t->tid;
	sl.start_ns = t->start_ns;
	sl.end_ns = now;
	sl.kstack = t->kstack;
	sl.ustack = t->ustack;
	sl.preempted = t->preempted;
	sl.unfinished = true;
	memcpy(sl.comm, t->comm, KP_OFFCPU_COMM);
	return c->on_slice(c->slice_ctx, &sl);
}

/* every block open now ends now: it goes to <fn>, and the thread is marked on the cpu. A slice
 * (slices mode) ends at <detach>, when the switch program began to be detached: a thread that
 * came back onto the cpu after that was not seen coming back, so only then is it known to
 * have been off the cpu; one that left after it (the detaching thread itself, blocked in the
 * detach) is no slice. */
static int close_open(struct kp_offcpu *c, kp_offcpu_fn fn, void *ctx, uint64_t detach)
{
	struct kp_off_thread t;
	__u64 key, next, *prev = NULL;
	uint64_t now = kp_now_ns();
	int err = 0;

	while (bpf_map_get_next_key(c->threads_fd, prev, &next) == 0) {
		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(c->threads_fd, &key, &t))
			continue;
		/* on the cpu now: its slice ends with the collection */
		if (fn && !err && t.on_since && now > t.on_since)
			err = report(fn, ctx, &t, KP_OFF_ON_CPU, 0, now - t.on_since);
		t.on_since = 0;
		if (c->on_slice && !err && t.start_ns && !t.exited && detach > t.start_ns)
			err = report_slice(c, &t, detach);
		else if (fn && !err && t.start_ns && !t.exited && now > t.start_ns)
			err = report(fn, ctx, &t, t.kstack, t.ustack, now - t.start_ns);
		t.start_ns = 0;
		bpf_map_update_elem(c->threads_fd, &key, &t, BPF_EXIST);
	}
	return err;
}

int kp_offcpu_disable(struct kp_offcpu *c, kp_offcpu_fn fn, void *ctx)
{
	uint64_t detach = kp_now_ns();

	if (!c->link[P_SWITCH])
		return 0;
	bpf_link__destroy(c->link[P_SWITCH]);
	c->link[P_SWITCH] = NULL;
	grace(); /* a switch that began before the detach has finished */
	kp_uw_owner_py_drain(c->uw);
	if (c->ring) {
		int n = kp_offcpu_read_slices(c); /* those that ended before */

		if (n < 0)
			return n;
	}
	return close_open(c, fn, ctx, detach);
}

/* kernels without batch operations: read every key, then delete them */
static int drain_by_key(int fd, kp_offcpu_fn fn, void *ctx)
{
	struct kp_off_key key, next, *prev = NULL, *keys = NULL;
	struct kp_off_val val;
	size_t n = 0, cap = 0, i;
	int err = 0;

	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		key = next;
		prev = &key;
		if (kp_grow((void **)&keys, &cap, n + 1, sizeof(*keys))) {
			err = kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
			break;
		}
		keys[n++] = key;
	}
	for (i = 0; i < n; i++) {
		struct kp_offcpu_block b;

		if (bpf_map_lookup_elem(fd, &keys[i], &val))
			continue;
		bpf_map_delete_elem(fd, &keys[i]);
		to_block(&b, &keys[i], &val);
		if (!err)
			err = fn(ctx, &b);
	}
	free(keys);
	return err;
}

static int drain_map(int fd, kp_offcpu_fn fn, void *ctx)
{
	struct kp_off_key *keys;
	struct kp_off_val *vals;
	__u64 token = 0;
	bool first = true;
	int err = 0;
	__u32 i;

	if (!kp_have(KP_FEAT_BATCH_OPS))
		return drain_by_key(fd, fn, ctx);
	keys = malloc(BATCH * sizeof(*keys));
	vals = malloc(BATCH * sizeof(*vals));
	if (!keys || !vals) {
		free(keys);
		free(vals);
		return kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
	}
	for (;;) {
		__u32 count = BATCH;
		int r = bpf_map_lookup_and_delete_batch(fd, first ? NULL : &token, &token, keys,
							vals, &count, NULL);

		if (r && first && (errno == EINVAL || errno == ENOTSUPP || errno == EOPNOTSUPP)) {
			err = drain_by_key(fd, fn, ctx);
			break;
		}
		first = false;
		for (i = 0; i < count && !err; i++) {
			struct kp_offcpu_block b;

			to_block(&b, &keys[i], &vals[i]);
			err = fn(ctx, &b);
		}
		if (err || (r && errno == ENOENT))
			break; /* done: the last batch came with ENOENT */
		if (r) {
			err = kp_fail(LIBPERF_ERR_BPF_ACT_FAILED, -errno,
				      "cannot read the off-CPU map: %s", strerror(errno));
			break;
		}
	}
	free(keys);
	free(vals);
	return err;
}

int kp_offcpu_drain(struct kp_offcpu *c, kp_offcpu_fn fn, void *ctx)
{
	__u32 old = c->skel->bss->gen;

	__atomic_store_n(&c->skel->bss->gen, old + 1, __ATOMIC_SEQ_CST);
	/* a switch that read the old generation finishes its update within microseconds */
	grace();
	kp_uw_owner_py_drain(c->uw); /* every code object of the stacks drained next */
	return drain_map(c->counts_fd[old & 1], fn, ctx);
}

unsigned kp_offcpu_stack(struct kp_offcpu *c, uint64_t id, bool kernel, uint64_t *ips, unsigned max)
{
	return kp_stack_read(c->stacks_fd, id, kernel, ips, max);
}

void kp_offcpu_get_stats(struct kp_offcpu *c, struct kp_offcpu_stats *s)
{
	__u64 *vals = calloc((size_t)c->ncpus, sizeof(*vals));
	uint64_t sum[KP_OFFC_MAX] = { 0 };
	__u32 k;
	int i;

	memset(s, 0, sizeof(*s));
	s->raw_tp = c->raw;
	if (!vals)
		return;
	for (k = 0; k < KP_OFFC_MAX; k++) {
		if (bpf_map_lookup_elem(c->counters_fd, &k, vals))
			continue;
		for (i = 0; i < c->ncpus; i++)
			sum[k] += vals[i];
	}
	free(vals);
	s->map_full = sum[KP_OFFC_MAP_FULL];
	s->threads_full = sum[KP_OFFC_THREADS_FULL];
	s->stack_full = sum[KP_OFFC_CAP + KP_CAP_FAIL_FULL];
	s->stack_clash = sum[KP_OFFC_CAP + KP_CAP_FAIL_CLASH];
	s->stack_read = sum[KP_OFFC_CAP + KP_CAP_FAIL_READ];
	s->slices_lost = sum[KP_OFFC_SLICE_LOST];
	s->slices_short = sum[KP_OFFC_SLICE_SHORT];
}

void kp_offcpu_unwind_stats(struct kp_offcpu *c, struct kp_uw_load_stats *s)
{
	struct kp_uw_load_stats u;

	if (!c->uw)
		return;
	kp_uw_owner_stats(c->uw, &u);
	kp_uw_load_stats_add(s, &u);
}

void kp_offcpu_close(struct kp_offcpu *c)
{
	int i;

	if (!c)
		return;
	for (i = 0; i < NPROGS; i++)
		bpf_link__destroy(c->link[i]);
	kp_uw_owner_stop(c->uw);
	ring_buffer__free(c->ring);
	offcpu_bpf__destroy(c->skel);
	free(c);
}
