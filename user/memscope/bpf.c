/*
 * bpf.c - the owner of memscope.skel.h: load memscope.bpf.c, place its uprobes and
 * uretprobes per process, attach its tracepoints, flip it on and off, drain its ring buffer,
 * read its counters and its stacks.
 *
 * Probes are placed per process (the kernel writes the breakpoints into that process's
 * memory only): a machine whose every process calls malloc pays nothing for the others.
 * Uprobes go through the kernel's uprobe PMU, never tracefs uprobe_events.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "core/core.h"
#include "core/pidns.h"
#include "kperf/pcerrc.h"
#include "memscope.h"
#include "runtime/python.h"
#include "stack_capture.h"
#include "trace/trace.h"
#include "unwind/unwind.h"
#include "skel/memscope.skel.h"

#define UPROBE_PMU_TYPE "/sys/bus/event_source/devices/uprobe/type"

struct kp_ms_bpf {
	struct memscope_bpf *skel;
	struct bpf_link **links; /* the tracepoints */
	size_t nlinks, cap;
	struct bpf_link *
		*probes; /* the uprobes and uretprobes, removable (kp_ms_bpf_remove_probes) */
	size_t nprobe_links, probe_cap;
	unsigned nprobes;
	struct ring_buffer *rb;
	kp_ms_event_fn on_event;
	void *ctx;
	int ncpus;
	struct kp_uw_owner *uw; /* stacks from .eh_frame tables: their loader */
};

static int on_rb_sample(void *ctx, void *data, size_t size)
{
	struct kp_ms_bpf *b = ctx;

	if (size >= sizeof(struct kp_ms_event) && b->on_event)
		b->on_event(b->ctx, data);
	return 0;
}

/* the syscalls whose (fd, buf, len) arguments name user memory that the call reads or fills */
static void buf_syscalls(__s32 out[8])
{
	static const char *const names[] = { "read",	 "write",    "pread64",
					     "pwrite64", "recvfrom", "sendto" };
	size_t i;

	for (i = 0; i < 8; i++)
		out[i] = -1;
	for (i = 0; i < KP_ARRAY_SIZE(names); i++)
		out[i] = kp_syscall_lookup(names[i]);
}

int kp_ms_bpf_open(const struct kp_ms_bpf_opts *o, struct kp_ms_bpf **out)
{
	struct kp_ms_bpf *b;
	long type;
	int err, i;
	bool py;

	*out = NULL;
	if (kp_read_long(UPROBE_PMU_TYPE, &type))
		return kp_fail(KPERF_ERR_NOT_SUPPORTED, -ENOTSUP,
			       "this kernel has no uprobe PMU (%s is missing): kperf-bpf places "
			       "uprobes through it and never through tracefs uprobe_events",
			       UPROBE_PMU_TYPE);
	kp_bpf_log_init();
	kp_bpf_log_clear();
	b = calloc(1, sizeof(*b));
	if (!b)
		return kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
	b->on_event = o->on_event;
	b->ctx = o->ctx;
	b->ncpus = libbpf_num_possible_cpus();
	b->skel = memscope_bpf__open();
	if (!b->skel) {
		err = -errno;
		goto fail;
	}
	err = kp_pidns_bpf_config((struct kp_pidns_cfg *)&b->skel->rodata->kp_pidns, false);
	if (err)
		goto fail;
	b->skel->rodata->cfg.wakeup_bytes = o->ringbuf_bytes / 4;
	b->skel->rodata->cfg.min_size = o->min_size;
	b->skel->rodata->cfg.sample_bytes = o->sample_bytes;
	b->skel->rodata->cfg.stacks = o->stacks;
	b->skel->rodata->cfg.follow = o->follow;
	bpf_program__set_autoload(b->skel->progs.kp_ms_fork, o->follow);
	bpf_program__set_autoload(b->skel->progs.kp_ms_child_start, o->follow);
	/* the gap quantiles: -mean * ln(1 - (i + 0.5) / N), whose average is the mean */
	for (i = 0; i < KP_MS_EXP_TABLE && o->sample_bytes; i++)
		b->skel->rodata->cfg.exp_gap[i] =
			(__u64)(-(double)o->sample_bytes *
				log(1.0 - (i + 0.5) / (double)KP_MS_EXP_TABLE)) +
			1;
	buf_syscalls((__s32 *)b->skel->rodata->cfg.buf_syscalls);
	bpf_map__set_max_entries(b->skel->maps.events, (__u32)o->ringbuf_bytes);
	if (!o->sample_bytes)
		bpf_map__set_max_entries(b->skel->maps.sampled, 1);
	if (!o->stacks)
		bpf_map__set_max_entries(b->skel->maps.stacks, 1);
	b->skel->rodata->kp_uw_on = o->stacks && !o->fp_stacks;
	kp_uw_owner_size(b->skel->obj, b->skel->rodata->kp_uw_on, 1);
	/* CPython frames in the allocation stacks, as sampling reads them */
	py = b->skel->rodata->kp_uw_on && kp_py_kernel_reads();
	b->skel->rodata->kp_py_max_threads = py ? KP_PY_MAX_THREADS : 0;
	b->skel->rodata->kp_py_max_walk = py ? KP_PY_MAX_WALK : 0;
	kp_uw_owner_py_size(b->skel->obj, py, 1);
	err = memscope_bpf__load(b->skel);
	if (err)
		goto fail;
	/* the targets' tables are loaded as their probes are placed */
	if (b->skel->rodata->kp_uw_on) {
		err = kp_uw_owner_start_py(b->skel->obj, NULL, 0, false, py, &b->uw);
		if (err) {
			kp_fail(LIBPERF_ERR_FAIL_MMAP, err, "cannot load the unwind tables: %s",
				strerror(-err));
			goto fail;
		}
	}
	b->rb = ring_buffer__new(bpf_map__fd(b->skel->maps.events), on_rb_sample, b, NULL);
	if (!b->rb) {
		err = kp_fail(LIBPERF_ERR_FAIL_MMAP, -errno,
			      "cannot map the %zu KiB ring buffer: %s", o->ringbuf_bytes >> 10,
			      strerror(errno));
		goto fail;
	}
	*out = b;
	return 0;
fail:
	if (!kp_failed())
		kp_bpf_load_error("memory tracing", err < 0 ? err : -EINVAL);
	kp_ms_bpf_close(b);
	return err < 0 ? err : -EINVAL;
}

static struct bpf_program *entry_prog(struct kp_ms_bpf *b, int func)
{
	struct memscope_bpf *s = b->skel;

	switch (func) {
	case KP_MS_MALLOC:
		return s->progs.kp_ms_malloc;
	case KP_MS_CALLOC:
		return s->progs.kp_ms_calloc;
	case KP_MS_REALLOC:
		return s->progs.kp_ms_realloc;
	case KP_MS_FREE:
		return s->progs.kp_ms_free;
	case KP_MS_POSIX_MEMALIGN:
		return s->progs.kp_ms_posix_memalign;
	case KP_MS_ALIGNED_ALLOC:
		return s->progs.kp_ms_aligned_alloc;
	case KP_MS_MEMALIGN:
		return s->progs.kp_ms_memalign;
	case KP_MS_VALLOC:
		return s->progs.kp_ms_valloc;
	case KP_MS_PVALLOC:
		return s->progs.kp_ms_pvalloc;
	case KP_MS_MMAP:
		return s->progs.kp_ms_mmap;
	case KP_MS_MUNMAP:
		return s->progs.kp_ms_munmap;
	case KP_MS_BRK:
		return s->progs.kp_ms_brk;
	case KP_MS_ACCESS_MARK:
		return s->progs.kp_ms_access;
	}
	return NULL;
}

static bool has_return(int func)
{
	return func != KP_MS_FREE && func != KP_MS_MUNMAP && func != KP_MS_BRK &&
	       func != KP_MS_ACCESS_MARK;
}

static int attach_one(struct kp_ms_bpf *b, struct bpf_program *prog, int tgid,
		      const struct kp_ms_site *s, bool ret)
{
	LIBBPF_OPTS(bpf_uprobe_opts, uo, .retprobe = ret);
	struct bpf_link *l;

	if (kp_grow((void **)&b->probes, &b->probe_cap, b->nprobe_links + 1, sizeof(*b->probes)))
		return kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
	l = bpf_program__attach_uprobe_opts(prog, tgid, s->path, (size_t)s->off, &uo);
	if (!l)
		return kp_fail(KPERF_ERR_NOT_SUPPORTED, -errno,
			       "cannot place a %s on %s (%s, offset 0x%llx) for process %d: %s",
			       ret ? "uretprobe" : "uprobe", kp_ms_func_name(s->func), s->path,
			       (unsigned long long)s->off, tgid, strerror(errno));
	b->probes[b->nprobe_links++] = l;
	b->nprobes++;
	return 0;
}

void kp_ms_bpf_remove_probes(struct kp_ms_bpf *b)
{
	size_t i;

	for (i = 0; i < b->nprobe_links; i++)
		bpf_link__destroy(b->probes[i]);
	b->nprobe_links = 0;
	b->nprobes = 0;
}

int kp_ms_bpf_epoll_fd(struct kp_ms_bpf *b)
{
	return ring_buffer__epoll_fd(b->rb);
}

int kp_ms_bpf_set_target(struct kp_ms_bpf *b, int tgid, int state)
{
	__u32 key = (__u32)tgid;
	__u8 v = (__u8)state;

	if (bpf_map_update_elem(bpf_map__fd(b->skel->maps.targets), &key, &v, BPF_ANY))
		return kp_fail(UNKNOWN_ERROR, -errno, "cannot add pid %d to the BPF filter: %s",
			       tgid, strerror(errno));
	return 0;
}

int kp_ms_bpf_update_target(struct kp_ms_bpf *b, int tgid, int state)
{
	__u32 key = (__u32)tgid;
	__u8 v = (__u8)state;
	int fd = bpf_map__fd(b->skel->maps.targets);

	return bpf_map_update_elem(fd, &key, &v, BPF_EXIST) ? -errno : 0;
}

int kp_ms_bpf_target_state(struct kp_ms_bpf *b, int tgid)
{
	__u32 key = (__u32)tgid;
	__u8 v = 0;

	if (bpf_map_lookup_elem(bpf_map__fd(b->skel->maps.targets), &key, &v))
		return 0;
	return v;
}

int kp_ms_bpf_add_target(struct kp_ms_bpf *b, int tgid, bool from_exec,
			 const struct kp_ms_plan *plan)
{
	int err = kp_ms_bpf_set_target(b, tgid, from_exec ? KP_MS_TARGET_EXEC : KP_MS_TARGET_ON);

	if (!err && from_exec)
		err = kp_uw_owner_hold(b->uw, tgid);
	return err ? err : kp_ms_bpf_place_probes(b, tgid, plan);
}

int kp_ms_bpf_place_probes(struct kp_ms_bpf *b, int tgid, const struct kp_ms_plan *plan)
{
	unsigned i;
	int err;

	for (i = 0; i < plan->nsites; i++) {
		const struct kp_ms_site *s = &plan->sites[i];

		err = attach_one(b, entry_prog(b, s->func), tgid, s, false);
		if (!err && has_return(s->func))
			err = attach_one(b, b->skel->progs.kp_ms_ret, tgid, s, true);
		if (err)
			return err;
	}
	/* its unwind tables before it runs on (a stopped child, a running target); a command
	 * not exec'ed yet has kperf-bpf's mappings still: its exec asks for them */
	if (kp_ms_bpf_target_state(b, tgid) != KP_MS_TARGET_EXEC)
		kp_uw_owner_add_pid(b->uw, tgid);
	return 0;
}

static int attach_tp(struct kp_ms_bpf *b, struct bpf_program *p, const char *cat, const char *name)
{
	struct bpf_link *l;

	if (kp_grow((void **)&b->links, &b->cap, b->nlinks + 1, sizeof(*b->links)))
		return kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
	l = bpf_program__attach_tracepoint(p, cat, name);
	if (!l)
		return -errno;
	b->links[b->nlinks++] = l;
	return 0;
}

int kp_ms_bpf_attach_tracepoints(struct kp_ms_bpf *b, bool *no_faults)
{
	struct memscope_bpf *s = b->skel;
	int err;

	*no_faults = false;
	if (!kp_tracefs())
		return kp_fail(KPERF_ERR_NOT_SUPPORTED, -ENOENT,
			       "tracefs is not mounted and cannot be: memscope needs the "
			       "sched_process_exec and raw_syscalls tracepoints");
	err = attach_tp(b, s->progs.kp_ms_exec, "sched", "sched_process_exec");
	if (!err)
		err = attach_tp(b, s->progs.kp_ms_exit, "sched", "sched_process_exit");
	if (!err)
		err = attach_tp(b, s->progs.kp_ms_sys_enter, "raw_syscalls", "sys_enter");
	if (err)
		return kp_fail(KPERF_ERR_NOT_SUPPORTED, err,
			       "cannot attach memscope's tracepoints: %s", strerror(-err));
	if (attach_tp(b, s->progs.kp_ms_fault, "exceptions", "page_fault_user"))
		*no_faults = true;
	if (s->rodata->cfg.follow) {
		struct bpf_program *progs[] = { s->progs.kp_ms_fork, s->progs.kp_ms_child_start };
		size_t i;

		for (i = 0; i < KP_ARRAY_SIZE(progs); i++) {
			struct bpf_link *l;

			if (kp_grow((void **)&b->links, &b->cap, b->nlinks + 1, sizeof(*b->links)))
				return kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
			l = bpf_program__attach(progs[i]);
			if (!l)
				return kp_fail(
					KPERF_ERR_NOT_SUPPORTED, -errno,
					"cannot follow the children of the recorded processes "
					"(%s: %s); record without following them "
					"(--no-children)",
					bpf_program__name(progs[i]), strerror(errno));
			b->links[b->nlinks++] = l;
		}
	}
	return 0;
}

void kp_ms_bpf_set_enabled(struct kp_ms_bpf *b, bool on)
{
	__atomic_store_n(&b->skel->bss->enabled, on ? 1U : 0U, __ATOMIC_SEQ_CST);
}

int kp_ms_bpf_poll(struct kp_ms_bpf *b, int timeout_ms)
{
	int n = timeout_ms > 0 ? ring_buffer__poll(b->rb, timeout_ms) : ring_buffer__consume(b->rb);

	return n == -EINTR ? 0 : n;
}

unsigned kp_ms_bpf_stack(struct kp_ms_bpf *b, uint64_t id, uint64_t *ips, unsigned max)
{
	struct kp_cap_stack s;
	__u64 key = id;
	unsigned i, n;
	bool py_drained = false;

	if (!id || bpf_map_lookup_elem(bpf_map__fd(b->skel->maps.stacks), &key, &s))
		return 0;
	n = s.n < max ? s.n : max;
	for (i = 0; i < n; i++) {
		ips[i] = s.ip[i];
		/* a Python frame: its code object is named before the stack is (copied by BPF
		 * before the record was sent) */
		if ((ips[i] & KP_PY_TAG_MASK) == KP_PY_TAG && !py_drained) {
			kp_uw_owner_py_drain(b->uw);
			py_drained = true;
		}
	}
	return n;
}

void kp_ms_bpf_counters(struct kp_ms_bpf *b, uint64_t out[KP_MS_CNT_MAX])
{
	__u64 *vals = calloc((size_t)b->ncpus, sizeof(*vals));
	__u32 key;
	int c;

	memset(out, 0, KP_MS_CNT_MAX * sizeof(out[0]));
	if (!vals)
		return;
	for (key = 0; key < KP_MS_CNT_MAX; key++)
		if (!bpf_map_lookup_elem(bpf_map__fd(b->skel->maps.counters), &key, vals))
			for (c = 0; c < b->ncpus; c++)
				out[key] += vals[c];
	free(vals);
}

void kp_ms_bpf_unwind_stats(struct kp_ms_bpf *b, struct kp_uw_load_stats *s)
{
	memset(s, 0, sizeof(*s));
	if (b->uw)
		kp_uw_owner_stats(b->uw, s);
}

unsigned kp_ms_bpf_nprobes(const struct kp_ms_bpf *b)
{
	return b->nprobes;
}

void kp_ms_bpf_close(struct kp_ms_bpf *b)
{
	size_t i;

	if (!b)
		return;
	kp_uw_owner_stop(b->uw);
	kp_ms_bpf_remove_probes(b);
	free(b->probes);
	for (i = 0; i < b->nlinks; i++)
		bpf_link__destroy(b->links[i]);
	free(b->links);
	ring_buffer__free(b->rb);
	memscope_bpf__destroy(b->skel);
	free(b);
}
