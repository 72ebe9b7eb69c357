/*
 * sampling.c - SAMPLING tasks: the owner of sample.skel.h.
 *
 * One sampling perf event per (event, thread) of the target processes, with inherit so
 * threads and children created later are sampled too, or per (event, CPU) system-wide;
 * each runs kp_sample of sample.bpf.c with the event's index as attach cookie (before 5.15,
 * which has no cookies: kp_sample_by_id, with the event's perf id registered). A
 * tracepoint event is one perf event whatever the targets: its program (kp_tp_record)
 * runs on every hit of the tracepoint and filters processes and cpus itself. Samples are aggregated in the kernel; a drain flips the
 * map generation and moves the map no longer written into `agg`, keyed the same way. A
 * read turns `agg` and the ring buffer's records into PmuData, resolving each distinct
 * stack once. While the task is enabled a drain thread runs every second (and whenever a
 * quarter of the ring buffer is full), so a caller that sleeps for minutes between
 * PmuEnable and PmuRead does not overflow the kernel's maps.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "core/core.h"
#include "kperf/pcerrc.h"
#include "sym/sym.h"
#include "topo/topo.h"
#include "tracefs/tracefs.h"
#include "pmu.h"
#include "sample.h"
#include "skel/sample.skel.h"

#define DEFAULT_FREQ 1000
#define COUNTS_ENTRIES 32768
#define STACK_ENTRIES 16384
#define EVENT_IDS 16384 /* kernels without attach cookies: sampling events of a task */
#define DEFAULT_RINGBUF_KB 8192
#define MAX_RINGBUF_KB (1U << 20)
#define FLIP_GRACE_NS 2000000 /* far longer than one run of kp_sample */
#define DRAIN_MS 1000
#ifndef ENOTSUPP
#define ENOTSUPP 524 /* kernel-internal, but bpf() returns it for unsupported batch ops */
#endif

struct kp_sevent {
	int fd;
	int evt;
	bool tp; /* tracepoint: its program runs on every hit, so it is attached only while
		  * the task is enabled */
	struct bpf_link *link;
};

struct agg_entry {
	struct kp_sample_key key;
	struct kp_sample_val val;
};

struct kp_sampling {
	pthread_mutex_t lock; /* everything below: the drain thread and the API calls */
	struct sample_bpf *skel;
	struct kp_sevent *ev;
	size_t nev, capev;
	struct ring_buffer *rb;
	struct bpf_link *fork_link, *exit_link;
	int counts_fd[2], stacks_fd, counters_fd;
	int ncpus_possible;

	struct agg_entry *agg; /* drained aggregates, not yet read */
	size_t nagg, capagg;
	size_t *agg_index; /* open addressing over agg: index + 1, 0 = empty */
	size_t agg_slots;
	struct kp_sample_rec **recs; /* ring buffer records, not yet read */
	size_t nrecs, caprecs;

	int *seen; /* processes whose modules were recorded for symbols */
	size_t nseen, capseen;
	bool has_tp, has_sample;
	bool cookie; /* attach cookies tell the programs which event fired (5.15+) */
	int tp_slot[KP_MAX_EVENTS]; /* without cookies: kp_tp_record_N of each tracepoint */
	bool enabled_once; /* PmuEnable was called */
	uint64_t dropped_warned;

	struct kp_sideband *sideband; /* when resolving symbols */

	pthread_t drainer;
	bool drainer_on;
	atomic_bool stop;
	int wake_fd, epoll_fd;
};

static int start_drainer(struct kp_pmu *p);
static int drain_locked(struct kp_pmu *p);
static void stop_drainer(struct kp_sampling *s);

/* ---- symbols ---- */

static bool resolving(const struct kp_pmu *p)
{
	return p->attr.symbolMode != NO_SYMBOL_RESOLVE && !atomic_load(&p->exited);
}

/* RESOLVE_DELAY_*: PmuRead keeps the callchains, ResolvePmuDataSymbol resolves them */
static bool delayed(const struct kp_pmu *p)
{
	return p->attr.symbolMode == RESOLVE_DELAY_ELF || p->attr.symbolMode == RESOLVE_DELAY_DWARF;
}

static unsigned sym_flags(const struct kp_pmu *p)
{
	enum SymbolMode m = p->attr.symbolMode;

	return m == RESOLVE_ELF_DWARF || m == RESOLVE_DELAY_DWARF ? KP_SYM_DWARF : 0;
}

/* Record a process's modules the first time it is seen, while it is (probably) alive. The
 * resolver is shared by every task of the library: the task holds the process's symbols until
 * it closes (delayed.c; the stacks of its PmuData are copies, nothing returned points into the
 * resolver). */
void kp_sampling_note_process(struct kp_pmu *p, int tgid)
{
	struct kp_sampling *s = p->sampling;
	size_t i;

	if (!resolving(p) || tgid <= 0)
		return;
	for (i = 0; i < s->nseen; i++)
		if (s->seen[i] == tgid)
			return;
	if (kp_grow((void **)&s->seen, &s->capseen, s->nseen + 1, sizeof(*s->seen)))
		return;
	s->seen[s->nseen++] = tgid;
	kp_pmu_sym_hold(tgid);
	kp_sym_record_pid(tgid, sym_flags(p));
}

/* ---- open ---- */

/* Blocked sampling samples its processes with per-cpu events whose program keeps only their
 * samples: a cpu-clock event per thread restarts its timer at every context switch, which
 * costs a switch-heavy process more than everything else blocked sampling does. */
static bool percpu_filtered(const struct kp_pmu *p)
{
	return p->attr.blockedSample && p->npids;
}

static int configure_tracepoint(struct kp_evt_cfg *c, const struct kp_event *ev)
{
	struct kp_tp_format *fmt;
	size_t i;
	int err;

	err = kp_tp_format_load(ev->tp_system, ev->tp_event, &fmt);
	if (err)
		return err;
	c->tp_id = fmt->id;
	c->fixed_size = fmt->fixed_size;
	for (i = 0; i < fmt->nfields; i++) {
		const struct kp_tp_field *f = &fmt->fields[i];

		if (!f->data_loc && !f->rel_loc)
			continue;
		if (c->nloc == KP_MAX_DATA_LOC)
			break; /* later payloads are still copied when they precede these */
		c->loc_off[c->nloc] = (__u16)f->offset;
		c->loc_rel[c->nloc] = f->rel_loc;
		c->nloc++;
	}
	kp_tp_format_free(fmt);
	return 0;
}

static size_t ringbuf_bytes(unsigned kb)
{
	size_t bytes = (size_t)(kb ? kb : DEFAULT_RINGBUF_KB) << 10, p = (size_t)getpagesize();

	while (p < bytes)
		p <<= 1;
	return p;
}

static int on_record(void *ctx, void *data, size_t size)
{
	struct kp_sampling *s = ctx;
	struct kp_sample_rec *r;

	if (size < sizeof(*r))
		return 0;
	if (kp_grow((void **)&s->recs, &s->caprecs, s->nrecs + 1, sizeof(*s->recs)))
		return -ENOMEM;
	r = malloc(size);
	if (!r)
		return -ENOMEM;
	memcpy(r, data, size);
	s->recs[s->nrecs++] = r;
	return 0;
}

/* kernels without attach cookies: the copy of kp_tp_record for slot <n> */
static struct bpf_program *tp_program(struct kp_sampling *s, int n)
{
	struct bpf_program *const progs[KP_TP_SLOTS] = {
		s->skel->progs.kp_tp_record_0, s->skel->progs.kp_tp_record_1,
		s->skel->progs.kp_tp_record_2, s->skel->progs.kp_tp_record_3,
		s->skel->progs.kp_tp_record_4, s->skel->progs.kp_tp_record_5,
		s->skel->progs.kp_tp_record_6, s->skel->progs.kp_tp_record_7,
	};

	return progs[n];
}

/* give tracepoint event <evt> its program copy when the kernel has no attach cookies */
static int tp_slot(struct kp_sampling *s, struct kp_pmu *p, int evt)
{
	int n = 0, i;

	if (s->cookie)
		return 0;
	for (i = 0; i < evt; i++)
		n += p->events[i].kind == KP_EV_TRACEPOINT;
	if (n >= KP_TP_SLOTS)
		return kp_fail(LIBPERF_ERR_KERNEL_NOT_SUPPORT, -E2BIG,
			       "kernel %s has no %s (%s): a task samples at most %d tracepoints "
			       "there",
			       kp_kernel_release(), kp_feature_name(KP_FEAT_ATTACH_COOKIE),
			       kp_feature_since(KP_FEAT_ATTACH_COOKIE), KP_TP_SLOTS);
	s->tp_slot[evt] = n;
	s->skel->rodata->cfg.tp_slot_evt[n] = (__u32)evt;
	return 0;
}

/* attach the program of event <evt> to its perf event <fd> */
static struct bpf_link *attach_event(struct kp_sampling *s, struct kp_pmu *p, int evt, int fd)
{
	LIBBPF_OPTS(bpf_perf_event_opts, opts, .bpf_cookie = s->cookie ? (__u64)evt : 0);
	struct bpf_program *prog;
	__u64 id;

	if (p->events[evt].kind == KP_EV_TRACEPOINT)
		prog = s->cookie ? s->skel->progs.kp_tp_record : tp_program(s, s->tp_slot[evt]);
	else if (s->cookie)
		prog = s->skel->progs.kp_sample;
	else {
		__u32 idx = (__u32)evt;

		prog = s->skel->progs.kp_sample_by_id;
		if (ioctl(fd, PERF_EVENT_IOC_ID, &id) ||
		    bpf_map_update_elem(bpf_map__fd(s->skel->maps.event_ids), &id, &idx, BPF_ANY))
			return NULL;
	}
	return bpf_program__attach_perf_event_opts(prog, fd, &opts);
}

static int load(struct kp_pmu *p)
{
	struct kp_sampling *s = p->sampling;
	struct sample_bpf *skel;
	size_t rb = 0;
	int i, err;

	kp_bpf_log_init();
	kp_bpf_log_clear();
	if (p->opts.ringBufferKb > MAX_RINGBUF_KB)
		return kp_fail(KPERF_ERR_INVALID_ATTR, -EINVAL,
			       "ringBufferKb %u is too large (at most %u)", p->opts.ringBufferKb,
			       MAX_RINGBUF_KB);
	if (p->nevents > KP_MAX_EVENTS)
		return kp_fail(LIBPERF_ERR_INVALID_EVTLIST, -E2BIG,
			       "%d events: a sampling task holds at most %d", p->nevents,
			       KP_MAX_EVENTS);
	skel = s->skel = sample_bpf__open();
	if (!skel)
		return kp_fail(LIBPERF_ERR_BPF_ACT_FAILED, -errno,
			       "cannot open the sampling BPF object");
	skel->rodata->cfg.kernel_stack = p->attr.callStack && !p->attr.excludeKernel;
	skel->rodata->cfg.user_stack = p->attr.callStack && !p->attr.excludeUser;
	skel->rodata->cfg.timeline = !p->opts.aggregate;
	skel->rodata->cfg.filter_pid = p->npids > 0;
	skel->rodata->cfg.filter_cpu = p->attr.numCpu > 0;
	skel->rodata->cfg.filter_sample = percpu_filtered(p);
	for (i = 0; i < p->ncpus && p->attr.numCpu; i++) {
		if (p->cpus[i] >= KP_SAMPLE_CPU_WORDS * 64)
			return kp_fail(LIBPERF_ERR_INVALID_CPULIST, -EINVAL,
				       "cpu %d is beyond the %d cpus the tracepoint filter holds",
				       p->cpus[i], KP_SAMPLE_CPU_WORDS * 64);
		skel->rodata->cfg.cpu_mask[p->cpus[i] / 64] |= 1ULL << (p->cpus[i] % 64);
	}
	s->cookie = kp_have(KP_FEAT_ATTACH_COOKIE);
	for (i = 0; i < p->nevents; i++) {
		if (p->events[i].kind == KP_EV_TRACEPOINT) {
			err = tp_slot(s, p, i);
			if (err)
				return err;
			s->has_tp = true;
			err = configure_tracepoint((struct kp_evt_cfg *)&skel->rodata->cfg.evt[i],
						   &p->events[i]);
			if (err)
				return err;
		} else {
			s->has_sample = true;
		}
	}
	if (s->has_tp || !p->opts.aggregate)
		rb = ringbuf_bytes(p->opts.ringBufferKb);
	skel->rodata->cfg.wakeup_bytes = rb / 4;
	bpf_map__set_max_entries(skel->maps.records, rb ? (__u32)rb : (__u32)getpagesize());
	bpf_map__set_max_entries(skel->maps.stacks, p->attr.callStack ? STACK_ENTRIES : 1);
	bpf_map__set_max_entries(skel->maps.counts0, COUNTS_ENTRIES);
	bpf_map__set_max_entries(skel->maps.counts1, COUNTS_ENTRIES);
	bpf_program__set_autoload(skel->progs.kp_sample, s->has_sample && s->cookie);
	bpf_program__set_autoload(skel->progs.kp_sample_by_id, s->has_sample && !s->cookie);
	bpf_program__set_autoload(skel->progs.kp_tp_record, s->has_tp && s->cookie);
	for (i = 0; i < KP_TP_SLOTS; i++)
		bpf_program__set_autoload(tp_program(s, i), false);
	for (i = 0; i < p->nevents; i++)
		if (p->events[i].kind == KP_EV_TRACEPOINT && !s->cookie)
			bpf_program__set_autoload(tp_program(s, s->tp_slot[i]), true);
	if (!s->cookie) /* one per (event, thread) opened: preallocated, so not too many */
		bpf_map__set_max_entries(skel->maps.event_ids, EVENT_IDS);
	bpf_program__set_autoload(skel->progs.kp_tp_fork,
				  (s->has_tp || percpu_filtered(p)) && p->npids);
	bpf_program__set_autoload(skel->progs.kp_tp_exit,
				  (s->has_tp || percpu_filtered(p)) && p->npids);
	bpf_map__set_max_entries(skel->maps.targets, p->npids > 0 ? 65536 : 1);
	err = sample_bpf__load(skel);
	if (err)
		return kp_bpf_load_error("sampling", err);
	s->counts_fd[0] = bpf_map__fd(skel->maps.counts0);
	s->counts_fd[1] = bpf_map__fd(skel->maps.counts1);
	s->stacks_fd = bpf_map__fd(skel->maps.stacks);
	s->counters_fd = bpf_map__fd(skel->maps.counters);
	s->ncpus_possible = libbpf_num_possible_cpus();
	if (rb) {
		s->rb = ring_buffer__new(bpf_map__fd(skel->maps.records), on_record, s, NULL);
		if (!s->rb)
			return kp_fail(LIBPERF_ERR_FAIL_MMAP, -errno,
				       "cannot map the sampling ring buffer: %s", strerror(errno));
	}
	if ((s->has_tp || percpu_filtered(p)) && p->npids) {
		__u8 one = 1;

		for (i = 0; i < p->npids; i++) {
			__u32 tgid = (__u32)p->pids[i];

			bpf_map_update_elem(bpf_map__fd(skel->maps.targets), &tgid, &one, BPF_ANY);
		}
		s->fork_link = bpf_program__attach(skel->progs.kp_tp_fork);
		s->exit_link = bpf_program__attach(skel->progs.kp_tp_exit);
		if (!s->fork_link || !s->exit_link)
			return kp_fail(LIBPERF_ERR_BPF_ACT_FAILED, -errno,
				       "cannot follow the processes' forks: %s", strerror(errno));
	}
	return 0;
}

static int open_one(struct kp_pmu *p, int evt, pid_t tid, int cpu)
{
	struct kp_sampling *s = p->sampling;
	struct perf_event_attr attr = p->events[evt].attr;
	struct kp_sevent *e;
	int fd, err;

	attr.disabled = 1;
	attr.inherit = tid > 0;
	attr.enable_on_exec = tid > 0 && p->attr.enableOnExec;
	attr.exclude_user |= p->attr.excludeUser | p->evt_attrs[evt].excludeUser;
	attr.exclude_kernel |= p->attr.excludeKernel | p->evt_attrs[evt].excludeKernel;
	attr.exclude_guest |= p->attr.excludeGuest;
	attr.exclude_host |= p->attr.excludeHost;
	if (p->events[evt].kind == KP_EV_TRACEPOINT) {
		attr.sample_period = 1;
	} else {
		if (p->evt_attrs[evt].period) {
			attr.sample_period = p->evt_attrs[evt].period;
		} else if (p->attr.useFreq || !p->attr.period) {
			attr.freq = 1;
			attr.sample_freq = p->attr.freq ? p->attr.freq : DEFAULT_FREQ;
		} else {
			attr.sample_period = p->attr.period;
		}
	}
	fd = kp_perf_event_open(&attr, tid > 0 ? tid : -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0 && errno == EINVAL && attr.exclude_hv) {
		attr.exclude_hv = 0;
		fd = kp_perf_event_open(&attr, tid > 0 ? tid : -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
	}
	if (fd < 0) {
		err = -errno;
		if (err == -ESRCH)
			return err;
		if (err == -EMFILE || err == -ENFILE)
			return kp_fail(
				LIBPERF_ERR_TOO_MANY_FD, err,
				"too many open files for %zu sampling events: raise ulimit -n",
				s->nev);
		if (err == -EINVAL && attr.freq)
			return kp_fail(LIBPERF_ERR_DEVICE_INVAL, err,
				       "the kernel refused sampling '%s' at %llu Hz (see "
				       "kernel.perf_event_max_sample_rate)",
				       p->events[evt].name, (unsigned long long)attr.sample_freq);
		return kp_fail(kp_perf_errno_code(err), err, "cannot sample '%s' on %s %d: %s",
			       p->events[evt].name, tid > 0 ? "thread" : "cpu", tid > 0 ? tid : cpu,
			       strerror(-err));
	}
	if (kp_grow((void **)&s->ev, &s->capev, s->nev + 1, sizeof(*s->ev))) {
		close(fd);
		return kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
	}
	e = &s->ev[s->nev++];
	e->fd = fd;
	e->evt = evt;
	e->tp = p->events[evt].kind == KP_EV_TRACEPOINT;
	e->link = NULL;
	if (e->tp)
		return 0;
	e->link = attach_event(s, p, evt, fd);
	if (!e->link) {
		err = -errno;
		return kp_fail(LIBPERF_ERR_BPF_ACT_FAILED, err, "cannot attach to '%s': %s %s",
			       p->events[evt].name, strerror(-err), kp_bpf_log_tail());
	}
	/* libbpf enables the event as it attaches the program: sampling starts at PmuEnable (or
	 * at the exec, with enableOnExec), not here; what came in between is dropped then */
	ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
	return 0;
}

static int open_process(struct kp_pmu *p, pid_t pid)
{
	char path[64];
	struct dirent *de;
	int opened = 0, err = 0, evt, i;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (!d)
		return kp_fail(LIBPERF_ERR_INVALID_PID, -ESRCH,
			       "process %d does not exist (any more)", (int)pid);
	while ((de = readdir(d)) && !err) {
		pid_t tid = (pid_t)atoi(de->d_name);
		int terr = 0;

		if (tid <= 0)
			continue;
		for (evt = 0; evt < p->nevents && !terr; evt++) {
			if (p->events[evt].kind == KP_EV_TRACEPOINT)
				continue;
			if (p->attr.numCpu)
				for (i = 0; i < p->ncpus && !terr; i++)
					terr = open_one(p, evt, tid, p->cpus[i]);
			else
				terr = open_one(p, evt, tid, -1);
		}
		if (terr == -ESRCH)
			continue; /* the thread exited meanwhile */
		err = terr;
		opened += !terr;
	}
	closedir(d);
	if (!err && !opened)
		return kp_fail(LIBPERF_ERR_FAIL_GET_PROC, -ESRCH,
			       "process %d exited before it could be sampled", (int)pid);
	kp_sampling_note_process(p, pid);
	return err;
}

int kp_sampling_open(struct kp_pmu *p)
{
	int i, evt, err;

	p->sampling = calloc(1, sizeof(*p->sampling));
	if (!p->sampling)
		return kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
	pthread_mutex_init(&p->sampling->lock, NULL);
	p->sampling->wake_fd = p->sampling->epoll_fd = -1;
	for (evt = 0; evt < p->nevents; evt++)
		if (p->events[evt].uncore)
			return kp_fail(LIBPERF_ERR_INVALID_EVTLIST, -EINVAL,
				       "'%s' is an uncore event: uncore PMUs cannot sample, count "
				       "it (COUNTING) instead",
				       p->events[evt].name);
	/* the cgroups are checked as for counting, then refused rather than ignored */
	for (i = 0; i < (int)p->attr.numCgroup; i++) {
		int fd = kp_cgroup_open(p->attr.cgroupNameList[i]);

		if (fd < 0)
			return fd;
		close(fd);
	}
	if (p->attr.numCgroup)
		return kp_fail(KPERF_ERR_NOT_SUPPORTED, -EOPNOTSUPP,
			       "cgroupNameList in SAMPLING is not implemented by kperf-bpf yet: "
			       "sample the processes (pidList), or count the cgroups (COUNTING)");
	err = kp_check_bpf_load();
	if (!err)
		err = load(p);
	if (err)
		return err;
	if (resolving(p)) {
		kp_sym_record_kernel();
		err = kp_sideband_open(p->cpus, p->ncpus, p->pids, p->npids,
				       &p->sampling->sideband);
		if (err)
			return err;
	}
	err = kp_blocked_open(p);
	if (err || !p->nevents)
		return err; /* blockedSample with offCpuOnly: no on-CPU event */
	/* a tracepoint's program sees every hit: one perf event to attach it through */
	for (evt = 0; evt < p->nevents && !err; evt++)
		if (p->events[evt].kind == KP_EV_TRACEPOINT)
			err = open_one(p, evt, -1, p->cpus[0]);
	if (p->npids && !percpu_filtered(p)) {
		for (i = 0; i < p->npids && !err; i++)
			err = open_process(p, p->pids[i]);
		return err;
	}
	for (evt = 0; evt < p->nevents && !err; evt++) {
		if (p->events[evt].kind == KP_EV_TRACEPOINT)
			continue;
		for (i = 0; i < p->ncpus && !err; i++)
			err = open_one(p, evt, -1, p->cpus[i]);
	}
	return err;
}

static int ioctl_all(struct kp_pmu *p, unsigned long req)
{
	struct kp_sampling *s = p->sampling;
	size_t i;

	for (i = 0; i < s->nev; i++)
		if (ioctl(s->ev[i].fd, req, 0))
			return -errno;
	return 0;
}

static void detach_tracepoints(struct kp_sampling *s)
{
	size_t i;

	for (i = 0; i < s->nev; i++) {
		if (s->ev[i].tp) {
			bpf_link__destroy(s->ev[i].link);
			s->ev[i].link = NULL;
		}
	}
}

/* the drained samples and records not read yet (s->lock held) */
static void forget_pending(struct kp_sampling *s)
{
	size_t i;

	s->nagg = 0;
	if (s->agg_slots)
		memset(s->agg_index, 0, s->agg_slots * sizeof(*s->agg_index));
	for (i = 0; i < s->nrecs; i++)
		free(s->recs[i]);
	s->nrecs = 0;
}

int kp_sampling_enable(struct kp_pmu *p)
{
	struct kp_sampling *s = p->sampling;
	size_t i;
	int err;

	if (!s->enabled_once) {
		/* samples of the moment between attaching a program (which enables its event)
		 * and disabling it again at open: not of the collection */
		pthread_mutex_lock(&s->lock);
		drain_locked(p);
		forget_pending(s);
		pthread_mutex_unlock(&s->lock);
		s->enabled_once = true;
	}

	err = kp_sideband_enable(s->sideband, true);
	if (err)
		return kp_fail(LIBPERF_ERR_FAILED_PMU_ENABLE, err,
			       "cannot enable mmap tracking: %s", strerror(-err));
	for (i = 0; i < s->nev; i++) {
		if (!s->ev[i].tp || s->ev[i].link)
			continue;
		s->ev[i].link = attach_event(s, p, s->ev[i].evt, s->ev[i].fd);
		if (!s->ev[i].link) {
			err = -errno;
			detach_tracepoints(s);
			return kp_fail(LIBPERF_ERR_BPF_ACT_FAILED, err, "cannot attach to '%s': %s",
				       p->events[s->ev[i].evt].name, strerror(-err));
		}
	}
	err = kp_blocked_enable(p);
	if (err) {
		detach_tracepoints(s);
		return err;
	}
	/* with enableOnExec the kernel enables the sampling events of a task at its exec */
	err = p->attr.enableOnExec && p->npids && !percpu_filtered(p) ?
		      0 :
		      ioctl_all(p, PERF_EVENT_IOC_ENABLE);
	if (err) {
		detach_tracepoints(s);
		return kp_fail(LIBPERF_ERR_FAILED_PMU_ENABLE, err, "cannot enable sampling: %s",
			       strerror(-err));
	}
	err = start_drainer(p);
	if (err) {
		ioctl_all(p, PERF_EVENT_IOC_DISABLE);
		detach_tracepoints(s);
	}
	return err;
}

int kp_sampling_disable(struct kp_pmu *p)
{
	int err = ioctl_all(p, PERF_EVENT_IOC_DISABLE), berr;

	detach_tracepoints(p->sampling);
	stop_drainer(p->sampling);
	pthread_mutex_lock(&p->sampling->lock);
	berr = kp_blocked_disable(p);
	pthread_mutex_unlock(&p->sampling->lock);
	kp_sideband_enable(p->sampling->sideband, false);
	if (berr)
		return berr;
	if (err)
		return kp_fail(LIBPERF_ERR_FAILED_PMU_DISABLE, err, "cannot disable sampling: %s",
			       strerror(-err));
	return 0;
}

/* ---- drain ---- */

static size_t key_hash(const struct kp_sample_key *k)
{
	const unsigned char *b = (const unsigned char *)k;
	uint64_t h = 1469598103934665603ULL;
	size_t i;

	for (i = 0; i < sizeof(*k); i++)
		h = (h ^ b[i]) * 1099511628211ULL;
	return (size_t)h;
}

/* the index slot for <k>: holds its entry (index + 1) or 0 where it would go */
static size_t *agg_slot(struct kp_sampling *s, const struct kp_sample_key *k)
{
	size_t i;

	for (i = key_hash(k) & (s->agg_slots - 1);; i = (i + 1) & (s->agg_slots - 1)) {
		size_t *slot = &s->agg_index[i];

		if (!*slot || !memcmp(&s->agg[*slot - 1].key, k, sizeof(*k)))
			return slot;
	}
}

static int agg_reindex(struct kp_sampling *s, size_t slots)
{
	size_t i;

	free(s->agg_index);
	s->agg_index = calloc(slots, sizeof(*s->agg_index));
	if (!s->agg_index) {
		s->agg_slots = 0;
		return -ENOMEM;
	}
	s->agg_slots = slots;
	for (i = 0; i < s->nagg; i++)
		*agg_slot(s, &s->agg[i].key) = i + 1;
	return 0;
}

/* add <val> to the pending aggregate of <key>; returns 1 when the key is new */
static int agg_add(struct kp_sampling *s, const struct kp_sample_key *key,
		   const struct kp_sample_val *val)
{
	size_t *slot;

	if ((s->nagg + 1) * 2 > s->agg_slots &&
	    agg_reindex(s, s->agg_slots ? s->agg_slots * 2 : 1024))
		return kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
	slot = agg_slot(s, key);
	if (*slot) {
		s->agg[*slot - 1].val.count += val->count;
		s->agg[*slot - 1].val.period += val->period;
		return 0;
	}
	if (kp_grow((void **)&s->agg, &s->capagg, s->nagg + 1, sizeof(*s->agg)))
		return kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
	s->agg[s->nagg].key = *key;
	s->agg[s->nagg].val = *val;
	*slot = ++s->nagg;
	return 1;
}

static int take(struct kp_pmu *p, const struct kp_sample_key *key, const struct kp_sample_val *val)
{
	int added = agg_add(p->sampling, key, val);

	if (added > 0)
		kp_sampling_note_process(p, (int)key->tgid);
	return added < 0 ? added : 0;
}

/* kernels without batch operations (before 5.6): read every key, then delete them */
static int drain_map_by_key(struct kp_pmu *p, int fd)
{
	struct kp_sample_key key, next, *prev = NULL, *keys = NULL;
	struct kp_sample_val val;
	size_t n = 0, cap = 0, i;
	int err = 0;

	while (!err && bpf_map_get_next_key(fd, prev, &next) == 0) {
		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, &val))
			continue;
		err = take(p, &key, &val);
		if (!err && kp_grow((void **)&keys, &cap, n + 1, sizeof(*keys)) == 0)
			keys[n++] = key;
	}
	for (i = 0; i < n; i++)
		bpf_map_delete_elem(fd, &keys[i]);
	free(keys);
	return err;
}

/* move the quiet generation's map into `agg`, emptying it, a batch at a time */
static int drain_map(struct kp_pmu *p, int fd)
{
	enum { BATCH = 1024 };
	struct kp_sample_key *keys = malloc(BATCH * sizeof(*keys));
	struct kp_sample_val *vals = malloc(BATCH * sizeof(*vals));
	__u64 token = 0;
	bool first = true;
	int err = 0;
	__u32 i;

	if (!keys || !vals) {
		free(keys);
		free(vals);
		return kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
	}
	/* kernels before 5.6 (or KPERF_BPF_NO_BATCH=1) */
	if (!kp_have(KP_FEAT_BATCH_OPS)) {
		free(keys);
		free(vals);
		return drain_map_by_key(p, fd);
	}
	for (;;) {
		__u32 count = BATCH;
		int r = bpf_map_lookup_and_delete_batch(fd, first ? NULL : &token, &token, keys,
							vals, &count, NULL);

		if (r && first && (errno == EINVAL || errno == ENOTSUPP || errno == EOPNOTSUPP)) {
			err = drain_map_by_key(p, fd);
			break;
		}
		first = false;
		for (i = 0; i < count && !err; i++)
			err = take(p, &keys[i], &vals[i]);
		if (err || (r && errno == ENOENT))
			break; /* done: the last batch came with ENOENT */
		if (r) {
			err = kp_fail(LIBPERF_ERR_BPF_ACT_FAILED, -errno,
				      "cannot read the sample map: %s", strerror(errno));
			break;
		}
	}
	free(keys);
	free(vals);
	return err;
}

/* with s->lock held */
static int drain_locked(struct kp_pmu *p)
{
	struct kp_sampling *s = p->sampling;

	/* mappings first: the samples drained next resolve against them */
	kp_sideband_drain(s->sideband);
	struct timespec grace = { 0, FLIP_GRACE_NS };
	__u32 old;
	size_t i;
	int err = 0;

	if (s->has_sample && p->opts.aggregate) {
		old = s->skel->bss->gen;
		__atomic_store_n(&s->skel->bss->gen, old + 1, __ATOMIC_SEQ_CST);
		/* a sample that read the old generation finishes its update within
		 * microseconds (it runs in interrupt context); then the old map is quiet */
		nanosleep(&grace, NULL);
		err = drain_map(p, s->counts_fd[old & 1]);
	}
	if (!err)
		err = kp_blocked_drain(p);
	if (!err && s->rb) {
		size_t first = s->nrecs;

		ring_buffer__consume(s->rb);
		for (i = first; i < s->nrecs; i++)
			kp_sampling_note_process(p, (int)s->recs[i]->tgid);
	}
	return err;
}

int kp_sampling_drain(struct kp_pmu *p)
{
	int err;

	pthread_mutex_lock(&p->sampling->lock);
	err = drain_locked(p);
	pthread_mutex_unlock(&p->sampling->lock);
	return err;
}

static void *drainer_main(void *arg)
{
	struct kp_pmu *p = arg;
	struct kp_sampling *s = p->sampling;
	struct epoll_event ev[2];

	while (!atomic_load(&s->stop)) {
		epoll_wait(s->epoll_fd, ev, 2, DRAIN_MS);
		if (atomic_load(&s->stop))
			break;
		kp_sampling_drain(p);
	}
	return NULL;
}

static int start_drainer(struct kp_pmu *p)
{
	struct kp_sampling *s = p->sampling;
	struct epoll_event ev = { .events = EPOLLIN };
	int err;

	if (s->drainer_on)
		return 0;
	if (s->epoll_fd < 0) {
		s->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		s->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
		if (s->wake_fd < 0 || s->epoll_fd < 0)
			return kp_fail(UNKNOWN_ERROR, -errno, "cannot create the drain thread: %s",
				       strerror(errno));
		ev.data.fd = s->wake_fd;
		epoll_ctl(s->epoll_fd, EPOLL_CTL_ADD, s->wake_fd, &ev);
		if (s->rb) {
			ev.data.fd = ring_buffer__epoll_fd(s->rb);
			epoll_ctl(s->epoll_fd, EPOLL_CTL_ADD, ev.data.fd, &ev);
		}
	}
	atomic_store(&s->stop, false);
	err = pthread_create(&s->drainer, NULL, drainer_main, p);
	if (err)
		return kp_fail(UNKNOWN_ERROR, -err, "cannot start the drain thread: %s",
			       strerror(err));
	s->drainer_on = true;
	return 0;
}

static void stop_drainer(struct kp_sampling *s)
{
	uint64_t one = 1;

	if (!s->drainer_on)
		return;
	atomic_store(&s->stop, true);
	if (write(s->wake_fd, &one, sizeof(one)) < 0) {
		/* it stops at its next timeout anyway */
	}
	pthread_join(s->drainer, NULL);
	s->drainer_on = false;
	if (read(s->wake_fd, &one, sizeof(one)) < 0) {
		/* nothing written: fine */
	}
}

/* ---- read ---- */

static void counters(struct kp_sampling *s, uint64_t out[KP_SCNT_MAX])
{
	__u64 *vals = calloc((size_t)s->ncpus_possible, sizeof(*vals));
	__u32 k;
	int c;

	memset(out, 0, sizeof(uint64_t) * KP_SCNT_MAX);
	if (!vals)
		return;
	for (k = 0; k < KP_SCNT_MAX; k++) {
		if (bpf_map_lookup_elem(s->counters_fd, &k, vals))
			continue;
		for (c = 0; c < s->ncpus_possible; c++)
			out[k] += vals[c];
	}
	free(vals);
}

/* kernel frames then user frames, leaf first, as the resolver wants them */
static int stack_ips(struct kp_sampling *s, __s32 kstack, __s32 ustack, __u64 ip, uint64_t *ips)
{
	__u64 frames[KP_MAX_STACK];
	int n = 0, i;

	if (kstack >= 0 && !bpf_map_lookup_elem(s->stacks_fd, &kstack, frames))
		for (i = 0; i < KP_MAX_STACK && frames[i]; i++)
			ips[n++] = frames[i];
	if (ustack >= 0 && !bpf_map_lookup_elem(s->stacks_fd, &ustack, frames))
		for (i = 0; i < KP_MAX_STACK && frames[i]; i++)
			ips[n++] = frames[i];
	if (!n && ip)
		ips[n++] = ip;
	return n;
}

static int add_record(struct kp_pmu *p, struct kp_data_builder *b, const struct kp_sample_key *k,
		      const struct kp_sample_val *v, int64_t ts, const void *raw, size_t raw_len)
{
	struct kp_sampling *s = p->sampling;
	uint64_t ips[2 * KP_MAX_STACK];
	struct SampleRawData rd = { (char *)raw };
	struct PmuData d = { 0 };
	struct CpuTopology topo;
	char comm[KP_SAMPLE_COMM + 1];
	int n;

	memcpy(comm, v->comm, KP_SAMPLE_COMM);
	comm[KP_SAMPLE_COMM] = '\0';
	d.evt = p->events[k->evt].name;
	d.ts = ts;
	d.pid = (pid_t)k->tgid;
	d.tid = (int)k->tid;
	d.cpu = (int)k->cpu;
	d.groupId = p->group_ids[k->evt];
	d.comm = comm;
	d.period = v->period;
	d.count = v->count;
	d.countPercent = -1;
	if (kp_topo_cpu(d.cpu, &topo) == 0)
		d.cpuTopo = &topo;
	else
		kp_clear_error();
	if (raw_len)
		d.rawData = &rd;
	if (resolving(p)) {
		n = stack_ips(s, k->kstack, k->ustack, k->ip, ips);
		if (delayed(p))
			return kp_data_builder_add_chain(b, &d, raw_len, ips, (unsigned)n,
							 sym_flags(p));
		/* a failure leaves this record without a stack (and says so), not the read failed */
		if (n && kp_sym_resolve_stack((pid_t)k->tgid, ips, (unsigned)n, sym_flags(p),
					      &d.stack)) {
			kp_warn(KPERF_WARN_SYM_INCOMPLETE, "a stack of pid %u was not resolved: %s",
				k->tgid, Perror());
			kp_clear_error();
			d.stack = NULL;
		}
	}
	return kp_data_builder_add(b, &d, raw_len);
}

static void warn_losses(struct kp_pmu *p)
{
	struct kp_sampling *s = p->sampling;
	uint64_t c[KP_SCNT_MAX], lost;

	counters(s, c);
	lost = c[KP_SCNT_MAP_FULL] + c[KP_SCNT_RB_DROPPED];
	if (lost > s->dropped_warned) {
		kp_warn(KPERF_WARN_RECORDS_DROPPED,
			"%llu samples or records were lost (%llu: aggregation map full, %llu: ring "
			"buffer full); raise ringBufferKb or read more often",
			(unsigned long long)(lost - s->dropped_warned),
			(unsigned long long)c[KP_SCNT_MAP_FULL],
			(unsigned long long)c[KP_SCNT_RB_DROPPED]);
		s->dropped_warned = lost;
	} else if (c[KP_SCNT_STACK_LOST]) {
		kp_warn(KPERF_WARN_RECORDS_DROPPED,
			"%llu stacks could not be captured (stack map collisions); those samples "
			"have only their top frame",
			(unsigned long long)c[KP_SCNT_STACK_LOST]);
	}
}

int kp_sampling_read(struct kp_pmu *p, struct PmuData **out)
{
	struct kp_sampling *s = p->sampling;
	struct kp_data_builder *b;
	int64_t now = (int64_t)kp_now_ns();
	size_t i;
	int err;

	pthread_mutex_lock(&s->lock);
	err = drain_locked(p);
	b = err ? NULL : kp_data_builder_new();
	if (!b) {
		pthread_mutex_unlock(&s->lock);
		return err ? err : kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
	}
	for (i = 0; i < s->nagg && !err; i++)
		err = add_record(p, b, &s->agg[i].key, &s->agg[i].val, now, NULL, 0);
	for (i = 0; i < s->nrecs && !err; i++) {
		const struct kp_sample_rec *r = s->recs[i];
		struct kp_sample_key k = { .tgid = r->tgid,
					   .tid = r->tid,
					   .cpu = r->cpu,
					   .evt = r->evt,
					   .kstack = r->kstack,
					   .ustack = r->ustack,
					   .ip = r->ip };
		struct kp_sample_val v = { .count = 1, .period = r->period };

		memcpy(v.comm, r->comm, sizeof(v.comm));
		err = add_record(p, b, &k, &v, (int64_t)r->ts, r + 1, r->raw_size);
	}
	if (!err)
		err = kp_blocked_read(p, b);
	if (err) {
		pthread_mutex_unlock(&s->lock);
		kp_data_builder_free(b);
		return err;
	}
	forget_pending(s);
	warn_losses(p);
	pthread_mutex_unlock(&s->lock);
	err = kp_data_builder_finish(b, out);
	if (err > 0)
		kp_blocked_scale(p, *out, err);
	return err;
}

void kp_sampling_exit(struct kp_pmu *p)
{
	struct kp_sampling *s = p->sampling;
	size_t i;

	pthread_mutex_lock(&s->lock);
	/* no more mmap tracking: nothing resolves for this task any more */
	kp_sideband_close(s->sideband);
	s->sideband = NULL;
	for (i = 0; i < s->nseen; i++)
		kp_pmu_sym_release(s->seen[i]);
	s->nseen = 0;
	pthread_mutex_unlock(&s->lock);
}

void kp_sampling_close(struct kp_pmu *p)
{
	struct kp_sampling *s = p->sampling;
	size_t i;

	if (!s)
		return;
	stop_drainer(s);
	kp_blocked_close(p);
	kp_sideband_close(s->sideband);
	for (i = 0; i < s->nev; i++) {
		bpf_link__destroy(s->ev[i].link);
		close(s->ev[i].fd);
	}
	bpf_link__destroy(s->fork_link);
	bpf_link__destroy(s->exit_link);
	ring_buffer__free(s->rb);
	sample_bpf__destroy(s->skel);
	for (i = 0; i < s->nrecs; i++)
		free(s->recs[i]);
	for (i = 0; i < s->nseen; i++)
		kp_pmu_sym_release(s->seen[i]);
	free(s->recs);
	free(s->agg);
	free(s->agg_index);
	free(s->ev);
	free(s->seen);
	if (s->wake_fd >= 0)
		close(s->wake_fd);
	if (s->epoll_fd >= 0)
		close(s->epoll_fd);
	pthread_mutex_destroy(&s->lock);
	free(s);
	p->sampling = NULL;
}
