/*
 * sampling.c - SAMPLING tasks: the owner of sample.skel.h (sample_read.c has the drain
 * thread and PmuRead).
 *
 * One sampling perf event per (event, thread) of the target processes, with inherit so
 * threads and children created later are sampled too (perThread: without, the threads of
 * the open only), per (cgroup, event, CPU) for cgroupNameList (PERF_FLAG_PID_CGROUP), or
 * per (event, CPU) system-wide; the events of an evtAttr group are one perf group per
 * target. Each runs kp_sample of sample.bpf.c with the event's index (and its cgroup's, see
 * sample.h) as attach cookie (before 5.15, which has no cookies: kp_sample_by_id, with the
 * event's perf id registered). A tracepoint event is one perf event whatever the targets:
 * its program (kp_tp_record, or its copy kp_tp_record_N without cookies) runs on every hit
 * of the tracepoint and filters processes (perThread: threads), cgroups and cpus itself.
 * By default each sample goes to the ring buffer with its timestamp; with `aggregate`
 * samples are counted in the kernel and a drain flips the map generation and moves the map
 * no longer written into `agg`, keyed the same way.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "core/core.h"
#include "core/pidns.h"
#include "kperf/pcerrc.h"
#include "stack/stack.h"
#include "sym/sym.h"
#include "tracefs/tracefs.h"
#include "pmu.h"
#include "sample.h"
#include "skel/sample.skel.h"
#include "pyframes.h"

#define COUNTS_ENTRIES 32768
#define STACK_ENTRIES 16384
#define EVENT_IDS 16384 /* kernels without attach cookies: sampling events of a task */
#define DEFAULT_RINGBUF_KB 8192
#define MAX_RINGBUF_KB (1U << 20)
#define FLIP_GRACE_NS 2000000 /* far longer than one run of kp_sample */

/* ---- symbols ---- */

/* Record a process's modules the first time it is seen, while it is (probably) alive. The
 * resolver is shared by every task of the library: the task holds the process's symbols until
 * it closes (delayed.c; the stacks of its PmuData are copies, nothing returned points into the
 * resolver). */
void kp_sampling_note_process(struct kp_pmu *p, int tgid)
{
	struct kp_sampling *s = p->sampling;
	size_t i;

	if (!kp_sampling_resolving(p) || tgid <= 0)
		return;
	for (i = 0; i < s->nseen; i++)
		if (s->seen[i] == tgid)
			return;
	if (kp_grow((void **)&s->seen, &s->capseen, s->nseen + 1, sizeof(*s->seen)))
		return;
	s->seen[s->nseen++] = tgid;
	kp_pmu_sym_hold(tgid);
	kp_sym_record_pid(tgid, kp_sampling_sym_flags(p));
}

/* ---- open ---- */

unsigned kp_pmu_sample_rate(const struct PmuAttr *a, const struct EvtAttr *ea)
{
	unsigned v = a->period ? a->period : ea ? ea->period : 0;

	return v ? v : KP_DEFAULT_PERIOD;
}

/* A tracepoint's program sees every hit: it records them at the event's rate itself, as a
 * perf event with that period would (tp_paced in sample.bpf.c) */
static void tracepoint_rate(struct kp_evt_cfg *c, const struct kp_pmu *p, int evt)
{
	unsigned v = kp_pmu_sample_rate(&p->attr, &p->evt_attrs[evt]);

	if (p->attr.useFreq)
		c->gap_ns = 1000000000ULL / v; /* 0 above 1 GHz: every hit */
	else
		c->period = v;
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

/* the evt the programs see for event <evt> on cgroup <cgroup> (-1: none), see sample.h */
static __u32 evt_tag(int evt, int cgroup)
{
	return (__u32)evt | (cgroup >= 0 ? (__u32)cgroup << KP_EVT_CGROUP_SHIFT : 0);
}

/* attach the program of event <e> to its perf event */
static struct bpf_link *attach_event(struct kp_sampling *s, struct kp_pmu *p,
				     const struct kp_sevent *e)
{
	__u32 tag = evt_tag(e->evt, e->cgroup);
	LIBBPF_OPTS(bpf_perf_event_opts, opts, .bpf_cookie = s->cookie ? (__u64)tag : 0);
	struct bpf_program *prog;
	__u64 id;

	if (p->events[e->evt].kind == KP_EV_TRACEPOINT)
		prog = s->cookie ? s->skel->progs.kp_tp_record : tp_program(s, s->tp_slot[e->evt]);
	else if (s->cookie)
		prog = s->skel->progs.kp_sample;
	else {
		prog = s->skel->progs.kp_sample_by_id;
		if (ioctl(e->fd, PERF_EVENT_IOC_ID, &id) ||
		    bpf_map_update_elem(bpf_map__fd(s->skel->maps.event_ids), &id, &tag, BPF_ANY))
			return NULL;
	}
	return bpf_program__attach_perf_event_opts(prog, e->fd, &opts);
}

/* Blocked sampling samples its processes with per-cpu events whose program keeps only their
 * samples: a cpu-clock event per thread restarts its timer at every context switch, which
 * costs a switch-heavy process more than everything else blocked sampling does. */
static bool percpu_filtered(const struct kp_pmu *p)
{
	return p->attr.blockedSample && p->npids;
}

/* does a program filter processes (tracepoints, per-cpu samples), following their forks? */
static bool follows_processes(const struct kp_pmu *p)
{
	return (p->sampling->has_tp || percpu_filtered(p)) && p->npids && !p->attr.perThread;
}

static int load(struct kp_pmu *p)
{
	struct kp_sampling *s = p->sampling;
	struct sample_bpf *skel;
	size_t rb = 0;
	__u32 nstacks;
	int i, err;

	kp_bpf_log_init();
	kp_bpf_log_clear();
	if (p->opts.ringBufferKb > MAX_RINGBUF_KB)
		return kp_fail(KPERF_ERR_INVALID_ATTR, -EINVAL,
			       "ringBufferKb %u is too large (at most %u)", p->opts.ringBufferKb,
			       MAX_RINGBUF_KB);
	if (p->opts.inlineFrames > 1 || p->opts.stackEntries > KPERF_MAX_STACK_ENTRIES)
		return kp_fail(
			KPERF_ERR_INVALID_ATTR, -EINVAL,
			p->opts.inlineFrames > 1 ? "inlineFrames is 0 or 1, not %u" :
						   "stackEntries %u is too large (at most 1048576)",
			p->opts.inlineFrames > 1 ? p->opts.inlineFrames : p->opts.stackEntries);
	if (p->opts.inlineFrames && !(kp_sampling_sym_flags(p) & KP_SYM_DWARF))
		return kp_fail(KPERF_ERR_INVALID_ATTR, -EINVAL,
			       "inlineFrames needs symbolMode RESOLVE_ELF_DWARF or "
			       "RESOLVE_DELAY_DWARF: inline frames come from DWARF");
	if (p->nevents > KP_MAX_EVENTS)
		return kp_fail(LIBPERF_ERR_INVALID_EVTLIST, -E2BIG,
			       "%d events: a sampling task holds at most %d", p->nevents,
			       KP_MAX_EVENTS);
	if (p->ncgroups > KP_SAMPLE_MAX_CGROUPS)
		return kp_fail(LIBPERF_ERR_INVALID_CGROUP_LIST, -E2BIG,
			       "%d cgroups: a sampling task follows at most %d", p->ncgroups,
			       KP_SAMPLE_MAX_CGROUPS);
	skel = s->skel = sample_bpf__open();
	if (!skel)
		return kp_fail(LIBPERF_ERR_BPF_ACT_FAILED, -errno,
			       "cannot open the sampling BPF object");
	/* the programs name processes as the caller does (a PID namespace's pids) */
	err = kp_pidns_bpf_config((struct kp_pidns_cfg *)&skel->rodata->kp_pidns, false);
	if (err)
		return err;
	skel->rodata->cfg.kernel_stack = p->attr.callStack && !p->attr.excludeKernel;
	skel->rodata->cfg.user_stack = p->attr.callStack && !p->attr.excludeUser;
	skel->rodata->cfg.timeline = !p->opts.aggregate;
	skel->rodata->cfg.filter_pid = p->npids > 0;
	skel->rodata->cfg.filter_tid = p->attr.perThread;
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
			tracepoint_rate((struct kp_evt_cfg *)&skel->rodata->cfg.evt[i], p, i);
		} else {
			s->has_sample = true;
		}
	}
	if (s->has_tp && p->ncgroups > KP_SAMPLE_TP_CGROUPS)
		return kp_fail(LIBPERF_ERR_INVALID_CGROUP_LIST, -E2BIG,
			       "%d cgroups: tracepoints are sampled for at most %d cgroups at once",
			       p->ncgroups, KP_SAMPLE_TP_CGROUPS);
	skel->rodata->cfg.ncgroups = s->has_tp ? (__u32)p->ncgroups : 0;
	bpf_map__set_max_entries(skel->maps.cgroups,
				 s->has_tp && p->ncgroups ? (__u32)p->ncgroups : 1);
	/* at least one slot: a task of off-CPU time alone has no event (a map of 0 is EINVAL) */
	bpf_map__set_max_entries(skel->maps.tp_pace,
				 (__u32)(p->nevents ? p->nevents : 1) *
					 (s->has_tp && p->ncgroups ? p->ncgroups : 1));
	if (s->has_tp || !p->opts.aggregate)
		rb = ringbuf_bytes(p->opts.ringBufferKb);
	skel->rodata->cfg.wakeup_bytes = rb / 4;
	bpf_map__set_max_entries(skel->maps.records, rb ? (__u32)rb : (__u32)getpagesize());
	/* kernel and user stacks share the map: room for as many of each */
	nstacks = (skel->rodata->cfg.kernel_stack + skel->rodata->cfg.user_stack) *
		  (p->opts.stackEntries ? p->opts.stackEntries : STACK_ENTRIES);
	bpf_map__set_max_entries(skel->maps.stacks, nstacks ? nstacks : 1);
	bpf_map__set_max_entries(skel->maps.counts0, p->opts.stackEntries ?: COUNTS_ENTRIES);
	bpf_map__set_max_entries(skel->maps.counts1, p->opts.stackEntries ?: COUNTS_ENTRIES);
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
	/* perThread: the threads of the open only (open_process), no process followed */
	bpf_program__set_autoload(skel->progs.kp_tp_fork, follows_processes(p));
	bpf_program__set_autoload(skel->progs.kp_tp_exit, follows_processes(p));
	bpf_program__set_autoload(skel->progs.kp_tp_exec,
				  follows_processes(p) && p->attr.enableOnExec);
	bpf_map__set_max_entries(skel->maps.targets, p->npids > 0 ? 65536 : 1);
	skel->rodata->kp_uw_on = kp_sampling_unwinds(p);
	skel->rodata->kp_py_keep_interp = p->opts.pythonFrames == KPERF_PY_FRAMES_KEEP_INTERP;
	skel->rodata->kp_py_max_threads = kp_sample_py_frames(p) ? KP_PY_MAX_THREADS : 0;
	skel->rodata->kp_py_max_walk = kp_sample_py_frames(p) ? KP_PY_MAX_WALK : 0;
	err = kp_sample_unwind_prepare(p, skel->obj);
	if (err)
		return err;
	err = sample_bpf__load(skel);
	if (err)
		return kp_bpf_load_error("sampling", err);
	s->counts_fd[0] = bpf_map__fd(skel->maps.counts0);
	s->counts_fd[1] = bpf_map__fd(skel->maps.counts1);
	s->stacks_fd = bpf_map__fd(skel->maps.stacks);
	s->counters_fd = bpf_map__fd(skel->maps.counters);
	s->ncpus_possible = libbpf_num_possible_cpus();
	err = kp_sample_unwind_start(p, skel->obj);
	if (err)
		return err;
	if (rb) {
		s->rb = ring_buffer__new(bpf_map__fd(skel->maps.records), on_record, s, NULL);
		if (!s->rb)
			return kp_fail(LIBPERF_ERR_FAIL_MMAP, -errno,
				       "cannot map the sampling ring buffer: %s", strerror(errno));
	}
	for (i = 0; i < (int)skel->rodata->cfg.ncgroups; i++) {
		__u32 k = (__u32)i;

		if (bpf_map_update_elem(bpf_map__fd(skel->maps.cgroups), &k, &p->cgroup_fds[i],
					BPF_ANY))
			return kp_fail(LIBPERF_ERR_BPF_ACT_FAILED, -errno,
				       "cannot give cgroup %s to the tracepoint filter: %s",
				       p->cgroup_names[i], strerror(errno));
	}
	if (follows_processes(p)) {
		/* a command about to exec: from its exec on, as enable_on_exec would start a
		 * per-process event (before, it is kperf-bpf's child) */
		__u8 st = p->attr.enableOnExec ? KP_SAMPLE_TARGET_EXEC : KP_SAMPLE_TARGET_ON;

		for (i = 0; i < p->npids; i++) {
			__u32 tgid = (__u32)p->pids[i];

			bpf_map_update_elem(bpf_map__fd(skel->maps.targets), &tgid, &st, BPF_ANY);
		}
		s->fork_link = bpf_program__attach(skel->progs.kp_tp_fork);
		s->exit_link = bpf_program__attach(skel->progs.kp_tp_exit);
		if (p->attr.enableOnExec) {
			s->exec_link = bpf_program__attach(skel->progs.kp_tp_exec);
			if (!s->exec_link)
				return kp_fail(LIBPERF_ERR_BPF_ACT_FAILED, -errno,
					       "cannot follow the processes' execs: %s",
					       strerror(errno));
		}
		if (!s->fork_link || !s->exit_link)
			return kp_fail(LIBPERF_ERR_BPF_ACT_FAILED, -errno,
				       "cannot follow the processes' forks: %s", strerror(errno));
	}
	return 0;
}

/* open event <evt> on (tid or -1, cpu or -1), or on (cgroup <cgroup>, cpu), in the group of
 * <group_fd> (-1: none) and attach the sampling program to it; returns the fd, or -ESRCH
 * when the thread is gone */
static int open_one(struct kp_pmu *p, int evt, pid_t tid, int cpu, int cgroup, int group_fd)
{
	struct kp_sampling *s = p->sampling;
	struct perf_event_attr attr = p->events[evt].attr;
	unsigned long flags = PERF_FLAG_FD_CLOEXEC;
	pid_t target = tid > 0 ? tid : -1;
	struct kp_sevent *e;
	int fd, err;

	/* a group member follows its leader's enables */
	attr.disabled = group_fd < 0;
	/* perThread: these threads only, not the ones they create */
	attr.inherit = tid > 0 && !p->attr.perThread;
	attr.enable_on_exec = tid > 0 && p->attr.enableOnExec && group_fd < 0;
	attr.exclude_user |= p->attr.excludeUser | p->evt_attrs[evt].excludeUser;
	attr.exclude_kernel |= p->attr.excludeKernel | p->evt_attrs[evt].excludeKernel;
	attr.exclude_guest |= p->attr.excludeGuest;
	attr.exclude_host |= p->attr.excludeHost;
	if (p->attr.enableHwMetric)
		attr.config2 |= 1; /* the HiSilicon driver's metric sampling */
	if (p->events[evt].kind == KP_EV_TRACEPOINT) {
		/* only the program's way in: it runs on every hit whatever the period, and
		 * samples itself (tracepoint_rate) */
		attr.sample_period = 1;
	} else {
		attr.freq = p->attr.useFreq;
		attr.sample_period = kp_pmu_sample_rate(&p->attr, &p->evt_attrs[evt]);
	}
	if (cgroup >= 0) { /* the cgroup's tasks on that cpu, as libkperf opens them */
		target = p->cgroup_fds[cgroup];
		flags |= PERF_FLAG_PID_CGROUP;
	}
	fd = kp_perf_event_open(&attr, target, cpu, group_fd, flags);
	if (fd < 0 && errno == EINVAL && attr.exclude_hv) {
		attr.exclude_hv = 0;
		fd = kp_perf_event_open(&attr, target, cpu, group_fd, flags);
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
		if (err == -ENOENT && cgroup >= 0)
			return kp_pmu_cgroup_open_failed(err);
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
	e->cgroup = cgroup;
	e->tp = p->events[evt].kind == KP_EV_TRACEPOINT;
	e->link = NULL;
	if (e->tp)
		return fd;
	e->link = attach_event(s, p, e);
	if (!e->link) {
		err = -errno;
		return kp_fail(LIBPERF_ERR_BPF_ACT_FAILED, err, "cannot attach to '%s': %s %s",
			       p->events[evt].name, strerror(-err), kp_bpf_log_tail());
	}
	/* libbpf enables the event as it attaches the program: sampling starts at PmuEnable (or
	 * at the exec, with enableOnExec), not here; what came in between is dropped then */
	ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
	return fd;
}

/* every sampling event on one target, the members of a group (evtAttr groupId) with their
 * leader: the first event of the group; returns 0 or a negative errno (-ESRCH: gone) */
static int open_target(struct kp_pmu *p, pid_t tid, int cpu, int cgroup)
{
	int *leader = malloc(sizeof(int) * (size_t)p->nevents);
	int evt, j, fd = 0;

	if (!leader)
		return kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
	for (evt = 0; evt < p->nevents; evt++) {
		int group_fd = -1;

		leader[evt] = -1;
		if (p->events[evt].kind == KP_EV_TRACEPOINT)
			continue; /* opened once, see kp_sampling_open */
		for (j = 0; j < evt && p->group_ids[evt] >= 0; j++) {
			if (p->group_ids[j] == p->group_ids[evt] && leader[j] >= 0) {
				group_fd = leader[j];
				break;
			}
		}
		fd = open_one(p, evt, tid, cpu, cgroup, group_fd);
		if (fd < 0)
			break;
		leader[evt] = group_fd < 0 ? fd : -1;
	}
	free(leader);
	return fd < 0 ? fd : 0;
}

static int open_process(struct kp_pmu *p, pid_t pid)
{
	char path[64];
	struct dirent *de;
	int opened = 0, err = 0, i;
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
		if (p->attr.numCpu)
			for (i = 0; i < p->ncpus && !terr; i++)
				terr = open_target(p, tid, p->cpus[i], -1);
		else
			terr = open_target(p, tid, -1, -1);
		if (terr == -ESRCH)
			continue; /* the thread exited meanwhile */
		if (!terr && p->attr.perThread && p->sampling->has_tp) {
			__u32 key = (__u32)tid;
			__u8 one = 1;

			/* the tracepoints' filter: this thread, as a per-thread event would */
			if (bpf_map_update_elem(bpf_map__fd(p->sampling->skel->maps.targets), &key,
						&one, BPF_ANY))
				terr = kp_fail(LIBPERF_ERR_BPF_ACT_FAILED, -errno,
					       "cannot add thread %d to the tracepoint filter: %s",
					       (int)tid, strerror(errno));
		}
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
	int i, j, evt, err;

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
	err = kp_check_bpf_load();
	if (!err)
		err = load(p);
	if (err)
		return err;
	if (kp_sampling_resolving(p)) {
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
		if (p->events[evt].kind == KP_EV_TRACEPOINT) {
			err = open_one(p, evt, -1, p->cpus[0], -1, -1);
			err = err < 0 ? err : 0;
		}
	if (p->npids && !percpu_filtered(p)) {
		for (i = 0; i < p->npids && !err; i++)
			err = open_process(p, p->pids[i]);
		return err;
	}
	/* cgroupNameList: per (cgroup, cpu), as libkperf; else system-wide per cpu */
	for (j = 0; j < (p->ncgroups ? p->ncgroups : 1); j++)
		for (i = 0; i < p->ncpus && !err; i++)
			err = open_target(p, -1, p->cpus[i], p->ncgroups ? j : -1);
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
void kp_sampling_forget_pending(struct kp_sampling *s)
{
	size_t i;

	kp_sample_table_clear(&s->agg);
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
		kp_sampling_drain_locked(p);
		kp_sampling_forget_pending(s);
		pthread_mutex_unlock(&s->lock);
		s->enabled_once = true;
	}
	if (s->stacks_read) { /* enabled again after a read (sample_read.c, release_all) */
		kp_stack_clear(s->stacks_fd);
		kp_sample_unwind_rearm(p);
		s->stacks_read = false;
	}

	err = kp_sideband_enable(s->sideband, true);
	if (err)
		return kp_fail(LIBPERF_ERR_FAILED_PMU_ENABLE, err,
			       "cannot enable mmap tracking: %s", strerror(-err));
	for (i = 0; i < s->nev; i++) {
		if (!s->ev[i].tp || s->ev[i].link)
			continue;
		s->ev[i].link = attach_event(s, p, &s->ev[i]);
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
	err = kp_sampling_start_drainer(p);
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
	kp_sampling_stop_drainer(p->sampling);
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

/* with s->lock held */
int kp_sampling_drain_locked(struct kp_pmu *p)
{
	struct kp_sampling *s = p->sampling;

	/* mappings first: the samples drained next resolve against them */
	kp_sideband_drain(s->sideband);
	/* and the unwind tables of the processes that asked: for the samples that follow */
	kp_sample_unwind_poll(p);
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
		kp_sample_unwind_py_codes(p); /* every code object of the samples drained next */
		err = kp_sampling_drain_map(p, s->counts_fd[old & 1]);
	}
	if (!err)
		err = kp_blocked_drain(p);
	if (!err && s->rb) {
		size_t first = s->nrecs;

		kp_sample_unwind_py_codes(p);
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
	err = kp_sampling_drain_locked(p);
	pthread_mutex_unlock(&p->sampling->lock);
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
	kp_sampling_stop_drainer(s);
	kp_blocked_close(p);
	kp_sideband_close(s->sideband);
	for (i = 0; i < s->nev; i++) {
		bpf_link__destroy(s->ev[i].link);
		close(s->ev[i].fd);
	}
	bpf_link__destroy(s->fork_link);
	bpf_link__destroy(s->exit_link);
	bpf_link__destroy(s->exec_link);
	kp_sample_unwind_close(s);
	ring_buffer__free(s->rb);
	sample_bpf__destroy(s->skel);
	for (i = 0; i < s->nrecs; i++)
		free(s->recs[i]);
	for (i = 0; i < s->nseen; i++)
		kp_pmu_sym_release(s->seen[i]);
	free(s->recs);
	kp_sample_table_free(&s->memo);
	kp_sample_table_free(&s->agg);
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
