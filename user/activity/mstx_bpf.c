/*
 * mstx_bpf.c - the owner of mstx.skel.h: load the marker programs, attach them to the kperf
 * USDT probes of a file (libbpf's USDT support: it finds the probe sites and semaphores in
 * the ELF notes and places uprobes with reference counters, which is what sets the
 * semaphores), keep the process and domain filters, drain the ring buffer.
 *
 * libbpf tells a probe's argument layout to the program by attach cookie; on kernels without
 * cookies (before 5.15) by the probe's absolute address, which exists only per process, so
 * there the caller attaches per process (kp_mstx_bpf_attach with a pid).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "activity.h"
#include "core/core.h"
#include "core/pidns.h"
#include "kperf/pcerrc.h"
#include "tracefs/tracefs.h"
#include "skel/mstx.skel.h"

#define UPROBE_PMU_TYPE "/sys/bus/event_source/devices/uprobe/type"
#define NPROBES 3

struct kp_mstx_bpf {
	struct mstx_bpf *skel;
	struct bpf_link **links;
	size_t nlinks, cap;
	struct bpf_link *fork_link, *exit_link;
	struct ring_buffer *rb;
	kp_mstx_event_fn on_event;
	void *ctx;
	int ncpus;
	unsigned sites;
};

static int on_rb_sample(void *ctx, void *data, size_t size)
{
	struct kp_mstx_bpf *b = ctx;

	if (size >= sizeof(struct kp_mstx_event) && b->on_event)
		return b->on_event(b->ctx, data);
	return 0;
}

/* the offset of child_pid in sched:sched_process_fork, which moved between kernels */
static int fork_child_offset(__u32 *off)
{
	const struct kp_tp_field *f;
	struct kp_tp_format *fmt;
	int err = kp_tp_format_load("sched", "sched_process_fork", &fmt);

	if (err)
		return err;
	f = kp_tp_format_field(fmt, "child_pid");
	if (!f || f->size != 4) {
		kp_tp_format_free(fmt);
		return kp_fail(LIBPERF_ERR_KERNEL_NOT_SUPPORT, -ENOTSUP,
			       "sched:sched_process_fork has no 4-byte child_pid field: cannot "
			       "follow the children of the collected processes");
	}
	*off = f->offset;
	kp_tp_format_free(fmt);
	return 0;
}

/* the processes of the filter: the one place they reach the kernel */
static int populate(struct kp_mstx_bpf *b, const struct kp_mstx_bpf_opts *o)
{
	int fd = bpf_map__fd(b->skel->maps.targets);
	__u8 one = 1;
	unsigned i;
	__u32 key;

	for (i = 0; i < o->ntgids; i++) {
		key = (__u32)o->tgids[i];
		if (bpf_map_update_elem(fd, &key, &one, BPF_ANY))
			return kp_fail(LIBPERF_ERR_BPF_ACT_FAILED, -errno,
				       "cannot add pid %u to the BPF filter: %s", key,
				       strerror(errno));
	}
	return 0;
}

int kp_mstx_bpf_open(const struct kp_mstx_bpf_opts *o, struct kp_mstx_bpf **out)
{
	struct kp_mstx_bpf *b;
	bool follow = o->ntgids && o->follow_fork, fork_ns;
	long type;
	int err;

	*out = NULL;
	if (!kp_have(KP_FEAT_RINGBUF))
		return kp_fail(LIBPERF_ERR_KERNEL_NOT_SUPPORT, -ENOTSUP,
			       "kernel %s has no %s (%s): collecting markers needs Linux 5.8 or "
			       "later",
			       kp_kernel_release(), kp_feature_name(KP_FEAT_RINGBUF),
			       kp_feature_since(KP_FEAT_RINGBUF));
	if (kp_read_long(UPROBE_PMU_TYPE, &type))
		return kp_fail(LIBPERF_ERR_KERNEL_NOT_SUPPORT, -ENOTSUP,
			       "this kernel has no uprobe PMU (%s is missing): kperf-bpf places "
			       "the marker probes through it and never through tracefs",
			       UPROBE_PMU_TYPE);
	kp_bpf_log_init();
	kp_bpf_log_clear();
	b = calloc(1, sizeof(*b));
	if (!b)
		return kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
	b->on_event = o->on_event;
	b->ctx = o->ctx;
	b->ncpus = libbpf_num_possible_cpus();
	b->skel = mstx_bpf__open();
	if (!b->skel) {
		err = -errno;
		goto fail;
	}
	/* pids are the caller's namespace's; without CO-RE, the walk to a task of a nested
	 * namespace (a fork's child) uses the offsets of the kernel's BTF */
	err = kp_pidns_bpf_config((struct kp_pidns_cfg *)&b->skel->rodata->kp_pidns, true);
	if (err)
		goto fail;
	fork_ns = b->skel->rodata->kp_pidns.on;
	if (follow && fork_ns && !b->skel->rodata->kp_pidns.have_offsets) {
		err = kp_fail(LIBPERF_ERR_KERNEL_NOT_SUPPORT, -ENOTSUP,
			      "following the markers of new processes from inside a PID namespace "
			      "(%s) needs the kernel's BTF to find their pids, and there is none "
			      "(/sys/kernel/btf/vmlinux or KPERF_BPF_BTF): collect them by pid "
			      "without children, or from the host",
			      kp_pidns_name());
		goto fail;
	}
	/* the exit (and, on the host, fork) programs are tracepoints */
	if (o->ntgids) {
		err = kp_tracefs_need("collecting the markers of given processes",
				      "sched:sched_process_exit");
		if (err)
			goto fail;
	}
	b->skel->rodata->cfg.filter_pid = o->ntgids > 0;
	b->skel->rodata->cfg.wakeup_bytes = o->ringbuf_bytes / 4;
	if (follow && !fork_ns) {
		err = fork_child_offset(&b->skel->rodata->cfg.fork_child_pid_off);
		if (err)
			goto fail;
	}
	bpf_map__set_max_entries(b->skel->maps.events, (__u32)o->ringbuf_bytes);
	/* room for the given processes, and for their children when following forks */
	bpf_map__set_max_entries(b->skel->maps.targets, follow ? 65536 : (o->ntgids ?: 1));
	bpf_program__set_autoload(b->skel->progs.kp_mstx_fork, follow && !fork_ns);
	bpf_program__set_autoload(b->skel->progs.kp_mstx_fork_ns, follow && fork_ns);
	bpf_program__set_autoload(b->skel->progs.kp_mstx_exit, o->ntgids > 0);
	err = mstx_bpf__load(b->skel);
	if (err)
		goto fail;
	err = populate(b, o);
	if (err)
		goto fail;
	if (follow) {
		b->fork_link = bpf_program__attach(fork_ns ? b->skel->progs.kp_mstx_fork_ns :
							     b->skel->progs.kp_mstx_fork);
		if (!b->fork_link) {
			err = kp_fail(LIBPERF_ERR_BPF_ACT_FAILED, -errno,
				      "cannot attach to sched:sched_process_fork: %s %s",
				      strerror(errno), kp_bpf_log_tail());
			goto fail;
		}
	}
	if (o->ntgids) {
		b->exit_link = bpf_program__attach(b->skel->progs.kp_mstx_exit);
		if (!b->exit_link) {
			err = kp_fail(LIBPERF_ERR_BPF_ACT_FAILED, -errno,
				      "cannot attach to sched:sched_process_exit: %s %s",
				      strerror(errno), kp_bpf_log_tail());
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
		kp_bpf_load_error("marker collection", err < 0 ? err : -EINVAL);
	kp_mstx_bpf_close(b);
	return err < 0 ? err : -EINVAL;
}

int kp_mstx_bpf_attach(struct kp_mstx_bpf *b, const char *path, int pid)
{
	struct bpf_program *progs[NPROBES] = { b->skel->progs.kp_mstx_mark,
					       b->skel->progs.kp_mstx_range_start,
					       b->skel->progs.kp_mstx_range_end };
	static const char *const names[NPROBES] = { KP_MSTX_PROBE_MARK, KP_MSTX_PROBE_RANGE_START,
						    KP_MSTX_PROBE_RANGE_END };
	struct kp_usdt_note *notes;
	int i, n, sites = 0, k;

	n = kp_usdt_notes(path, KP_MSTX_PROVIDER, &notes);
	if (n < 0)
		return kp_fail(KPERF_ERR_INVALID_ARG, n, "cannot read the probes of %s: %s", path,
			       strerror(-n));
	for (i = 0; i < NPROBES; i++) {
		struct bpf_link *l;
		int here = 0;

		for (k = 0; k < n; k++)
			here += !strcmp(notes[k].name, names[i]);
		if (!here)
			continue; /* an older copy without this probe */
		if (kp_grow((void **)&b->links, &b->cap, b->nlinks + 1, sizeof(*b->links))) {
			free(notes);
			return kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
		}
		kp_bpf_log_clear();
		l = bpf_program__attach_usdt(progs[i], pid, path, KP_MSTX_PROVIDER, names[i], NULL);
		if (!l) {
			int err = -errno;

			free(notes);
			if (err == -ESRCH || err == -ENOENT)
				return kp_fail(LIBPERF_ERR_BPF_ACT_FAILED, err,
					       "cannot place the %s:%s probes of %s in process %d: "
					       "it does not map that file (any more) %s",
					       KP_MSTX_PROVIDER, names[i], path, pid,
					       kp_bpf_log_tail());
			return kp_fail(LIBPERF_ERR_BPF_ACT_FAILED, err,
				       "cannot place the %s:%s probes of %s: %s %s",
				       KP_MSTX_PROVIDER, names[i], path, strerror(-err),
				       kp_bpf_log_tail());
		}
		b->links[b->nlinks++] = l;
		sites += here;
	}
	free(notes);
	b->sites += (unsigned)sites;
	return sites;
}

void kp_mstx_bpf_set_enabled(struct kp_mstx_bpf *b, bool on)
{
	/* the programs read it on every call; a store to the mapped .bss is all it takes */
	__atomic_store_n(&b->skel->bss->enabled, on ? 1U : 0U, __ATOMIC_SEQ_CST);
}

int kp_mstx_bpf_set_domain(struct kp_mstx_bpf *b, const char *name, bool disabled)
{
	struct kp_mstx_domain key;
	int fd = bpf_map__fd(b->skel->maps.disabled_domains);
	__u8 one = 1;

	/* the kernel compares what the probe recorded: the name cut like a recorded one */
	memset(&key, 0, sizeof(key));
	snprintf(key.name, sizeof(key.name), "%s", name);
	if (!disabled) {
		if (bpf_map_delete_elem(fd, &key) && errno != ENOENT)
			return kp_fail(LIBPERF_ERR_BPF_ACT_FAILED, -errno,
				       "cannot enable domain %s: %s", name, strerror(errno));
		return 0;
	}
	if (bpf_map_update_elem(fd, &key, &one, BPF_ANY))
		return kp_fail(errno == E2BIG ? KPERF_ERR_INVALID_ARG : LIBPERF_ERR_BPF_ACT_FAILED,
			       -errno, "cannot disable domain %s: %s%s", name, strerror(errno),
			       errno == E2BIG ? " (at most 1024 domains can be disabled)" : "");
	return 0;
}

int kp_mstx_bpf_epoll_fd(struct kp_mstx_bpf *b)
{
	return ring_buffer__epoll_fd(b->rb);
}

int kp_mstx_bpf_consume(struct kp_mstx_bpf *b)
{
	return ring_buffer__consume(b->rb);
}

void kp_mstx_bpf_counters(struct kp_mstx_bpf *b, uint64_t *dropped, uint64_t *filtered)
{
	__u64 *vals = calloc((size_t)b->ncpus, sizeof(*vals));
	int fd = bpf_map__fd(b->skel->maps.counters), c;
	__u32 key;

	*dropped = *filtered = 0;
	if (!vals)
		return;
	key = KP_MSTX_CNT_DROPPED;
	if (!bpf_map_lookup_elem(fd, &key, vals))
		for (c = 0; c < b->ncpus; c++)
			*dropped += vals[c];
	key = KP_MSTX_CNT_FILTERED;
	if (!bpf_map_lookup_elem(fd, &key, vals))
		for (c = 0; c < b->ncpus; c++)
			*filtered += vals[c];
	free(vals);
}

unsigned kp_mstx_bpf_nprobes(const struct kp_mstx_bpf *b)
{
	return b->sites;
}

void kp_mstx_bpf_close(struct kp_mstx_bpf *b)
{
	size_t i;

	if (!b)
		return;
	for (i = 0; i < b->nlinks; i++)
		bpf_link__destroy(b->links[i]);
	free(b->links);
	bpf_link__destroy(b->fork_link);
	bpf_link__destroy(b->exit_link);
	ring_buffer__free(b->rb);
	mstx_bpf__destroy(b->skel);
	free(b);
}
