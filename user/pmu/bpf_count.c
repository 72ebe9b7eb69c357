/*
 * bpf_count.c - COUNTING in BPF mode (PmuAttr.enableBpf): the owner of count.skel.h.
 *
 * Instead of one counter per (event, thread) with inherit, each event is opened once per
 * CPU and count.bpf.c charges what the CPU's counters advanced to the task that ran, at
 * every context switch: to the slot of its thread (pidList: the threads that exist at
 * PmuOpen; a thread or process they create later counts in its creator's slot) or to the
 * cgroups of cgroupNameList it is in. The number of perf events no longer grows with the
 * number of threads, and processes forked later are followed without inherit.
 *
 * Reads run the program on every CPU first (BPF_PROG_TEST_RUN), so a task that has been
 * running since its last switch is charged up to now. The kernel's sums only grow; the
 * read reports what they advanced since the previous read: one record per (thread slot,
 * event, CPU) that advanced, as libkperf's BPF mode does, or per (cgroup, event, CPU).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "core/core.h"
#include "kperf/pcerrc.h"
#include "topo/topo.h"
#include "pmu.h"
#include "count.h"
#include "skel/count.skel.h"

struct slot {
	pid_t pid, tid; /* pid mode */
	int cgroup; /* cgroup mode: index in cgroupNameList */
	char comm[16];
};

struct kp_bpf_count {
	struct count_bpf *skel;
	int nevents, ncpus;
	int ncpus_possible;
	struct slot *slots;
	size_t nslots, capslots;
	struct kp_count_val *last; /* [(slot * nevents + evt) * ncpus_possible + cpu] */
	struct kp_count_val *vals; /* one lookup's per-CPU values */
	bool by_cgroup;
};

static int add_slot(struct kp_bpf_count *b, pid_t pid, pid_t tid, int cgroup)
{
	struct slot *s;

	if (kp_grow((void **)&b->slots, &b->capslots, b->nslots + 1, sizeof(*b->slots)))
		return kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
	s = &b->slots[b->nslots++];
	memset(s, 0, sizeof(*s));
	s->pid = pid;
	s->tid = tid;
	s->cgroup = cgroup;
	if (tid > 0)
		kp_pid_comm(tid, s->comm, sizeof(s->comm));
	return 0;
}

/* one slot per thread of <pid> that exists now */
static int add_threads(struct kp_bpf_count *b, pid_t pid)
{
	char path[64];
	struct dirent *de;
	size_t before = b->nslots;
	int err = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (!d)
		return kp_fail(LIBPERF_ERR_INVALID_PID, -ESRCH,
			       "process %d does not exist (any more)", (int)pid);
	while ((de = readdir(d)) && !err) {
		pid_t tid = (pid_t)atoi(de->d_name);

		if (tid > 0)
			err = add_slot(b, pid, tid, -1);
	}
	closedir(d);
	if (!err && b->nslots == before)
		return kp_fail(LIBPERF_ERR_INVALID_PID, -ESRCH,
			       "process %d exited before it could be counted", (int)pid);
	return err;
}

/* the kernel's id of a cgroup v2 directory (what the BPF program reads in kn->id) */
static int cgroup_id(int dirfd, const char *name, __u64 *id)
{
	struct {
		struct file_handle fh;
		__u64 id;
	} h = { .fh.handle_bytes = sizeof(__u64) };
	int mount_id;

	if (name_to_handle_at(dirfd, "", &h.fh, &mount_id, AT_EMPTY_PATH))
		return kp_fail(LIBPERF_ERR_BPF_ACT_FAILED, -errno,
			       "cannot get the id of cgroup %s: %s", name, strerror(errno));
	*id = h.id;
	return 0;
}

static int load(struct kp_bpf_count *b)
{
	struct count_bpf *skel;
	int err;

	kp_bpf_log_init();
	kp_bpf_log_clear();
	skel = b->skel = count_bpf__open();
	if (!skel)
		return kp_fail(LIBPERF_ERR_BPF_ACT_FAILED, -errno,
			       "cannot open the BPF counting object");
	skel->rodata->nevents = (__u32)b->nevents;
	skel->rodata->ncpus = (__u32)b->ncpus_possible;
	skel->rodata->by_cgroup = b->by_cgroup;
	bpf_map__set_max_entries(skel->maps.events, (__u32)(b->nevents * b->ncpus_possible));
	bpf_map__set_max_entries(skel->maps.sums, (__u32)(b->nslots * (size_t)b->nevents));
	bpf_map__set_max_entries(skel->maps.cgroups, b->by_cgroup ? (__u32)b->nslots : 1);
	bpf_program__set_autoload(skel->progs.kp_count_newtask, !b->by_cgroup);
	bpf_program__set_autoload(skel->progs.kp_count_free, !b->by_cgroup);
	err = count_bpf__load(skel);
	if (err)
		return kp_bpf_load_error("counting (enableBpf)", err);
	return 0;
}

static int fill_slots(struct kp_pmu *p, struct kp_bpf_count *b)
{
	size_t i;
	int err;

	for (i = 0; i < b->nslots; i++) {
		__u32 slot = (__u32)i;

		if (b->by_cgroup) {
			__u64 id;

			err = cgroup_id(p->cgroup_fds[b->slots[i].cgroup],
					p->cgroup_names[b->slots[i].cgroup], &id);
			if (err)
				return err;
			err = bpf_map_update_elem(bpf_map__fd(b->skel->maps.cgroups), &id, &slot,
						  BPF_ANY);
		} else {
			__u32 tid = (__u32)b->slots[i].tid;

			err = bpf_map_update_elem(bpf_map__fd(b->skel->maps.owners), &tid, &slot,
						  BPF_ANY);
		}
		if (err)
			return kp_fail(LIBPERF_ERR_BPF_ACT_FAILED, -errno,
				       "cannot fill the BPF counting maps: %s", strerror(errno));
	}
	return 0;
}

/* the per-CPU counters counting.c opened, at evt * ncpus_possible + cpu */
static int hand_counters(struct kp_pmu *p, struct kp_bpf_count *b)
{
	int map_fd = bpf_map__fd(b->skel->maps.events), fd, evt, cpu;
	size_t i;

	for (i = 0; i < kp_counting_ncounters(p); i++) {
		__u32 key;

		kp_counting_counter(p, i, &fd, &evt, &cpu);
		key = (__u32)(evt * b->ncpus_possible + cpu);
		if (bpf_map_update_elem(map_fd, &key, &fd, BPF_ANY))
			return kp_fail(LIBPERF_ERR_BPF_ACT_FAILED, -errno,
				       "cannot hand '%s' on cpu %d to the BPF program: %s",
				       p->events[evt].name, cpu, strerror(errno));
	}
	return 0;
}

int kp_bpf_count_open(struct kp_pmu *p)
{
	struct kp_bpf_count *b;
	int i, err;

	err = kp_check_bpf_load();
	if (err)
		return err;
	b = p->bpf_count = calloc(1, sizeof(*b));
	if (!b)
		return kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
	b->nevents = p->nevents;
	b->ncpus = p->ncpus;
	b->ncpus_possible = libbpf_num_possible_cpus();
	b->by_cgroup = p->attr.numCgroup > 0;
	if (b->ncpus_possible <= 0)
		return kp_fail(LIBPERF_ERR_FAIL_GET_CPU,
			       b->ncpus_possible ? b->ncpus_possible : -EINVAL,
			       "cannot count the possible CPUs");
	if (b->by_cgroup) {
		for (i = 0; i < (int)p->attr.numCgroup; i++) {
			err = add_slot(b, -1, -1, i);
			if (err)
				return err;
		}
	} else {
		for (i = 0; i < p->npids; i++) {
			err = add_threads(b, p->pids[i]);
			if (err)
				return err;
		}
	}
	b->last = calloc(b->nslots * (size_t)b->nevents * (size_t)b->ncpus_possible,
			 sizeof(*b->last));
	b->vals = calloc((size_t)b->ncpus_possible, sizeof(*b->vals));
	if (!b->last || !b->vals)
		return kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
	err = load(b);
	if (!err)
		err = fill_slots(p, b);
	if (!err)
		err = hand_counters(p, b);
	if (!err && count_bpf__attach(b->skel))
		err = kp_fail(LIBPERF_ERR_BPF_ACT_FAILED, -errno,
			      "cannot attach the BPF counting program to sched_switch: %s %s",
			      strerror(errno), kp_bpf_log_tail());
	return err;
}

void kp_bpf_count_flush(struct kp_pmu *p)
{
	struct kp_bpf_count *b = p->bpf_count;
	int prog = bpf_program__fd(b->skel->progs.kp_count_switch), i;

	for (i = 0; i < b->ncpus; i++) {
		LIBBPF_OPTS(bpf_test_run_opts, opts, .flags = BPF_F_TEST_RUN_ON_CPU,
			    .cpu = (__u32)p->cpus[i]);

		/* without it (kernels before 5.10), the sums stop at each CPU's last switch */
		bpf_prog_test_run_opts(prog, &opts);
	}
}

static int add(struct kp_pmu *p, struct kp_data_builder *db, const struct slot *s, int evt, int cpu,
	       const struct kp_count_val *d, int64_t ts)
{
	struct PmuData rec = { 0 };
	struct CpuTopology topo;

	rec.evt = p->events[evt].name;
	rec.ts = ts;
	rec.pid = s->pid;
	rec.tid = s->tid;
	rec.cpu = cpu;
	rec.groupId = -1;
	rec.comm = s->tid > 0 ? s->comm : NULL;
	rec.cgroupName = s->cgroup >= 0 ? p->cgroup_names[s->cgroup] : NULL;
	rec.count = kp_count_scale(d->counter, d->enabled, d->running, &rec.countPercent);
	if (kp_topo_cpu(cpu, &topo) == 0)
		rec.cpuTopo = &topo;
	else
		kp_clear_error();
	return kp_data_builder_add(db, &rec, 0);
}

int kp_bpf_count_read(struct kp_pmu *p, struct PmuData **out)
{
	struct kp_bpf_count *b = p->bpf_count;
	int sums = bpf_map__fd(b->skel->maps.sums), evt, i, err = 0;
	struct kp_data_builder *db;
	int64_t ts = (int64_t)kp_now_ns();
	size_t s;

	kp_bpf_count_flush(p);
	db = kp_data_builder_new();
	if (!db)
		return kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
	for (s = 0; s < b->nslots && !err; s++) {
		for (evt = 0; evt < b->nevents && !err; evt++) {
			__u32 key = (__u32)(s * (size_t)b->nevents + (size_t)evt);
			struct kp_count_val *last = &b->last[key * (size_t)b->ncpus_possible];

			if (bpf_map_lookup_elem(sums, &key, b->vals)) {
				err = kp_fail(LIBPERF_ERR_BPF_ACT_FAILED, -errno,
					      "cannot read the BPF counting sums: %s",
					      strerror(errno));
				break;
			}
			for (i = 0; i < b->ncpus && !err; i++) {
				int cpu = p->cpus[i];
				struct kp_count_val d = {
					.counter = b->vals[cpu].counter - last[cpu].counter,
					.enabled = b->vals[cpu].enabled - last[cpu].enabled,
					.running = b->vals[cpu].running - last[cpu].running,
				};

				last[cpu] = b->vals[cpu];
				/* a thread reports the CPUs it counted on, a cgroup every CPU */
				if (d.counter || b->by_cgroup)
					err = add(p, db, &b->slots[s], evt, cpu, &d, ts);
			}
		}
	}
	if (err) {
		kp_data_builder_free(db);
		return err;
	}
	return kp_data_builder_finish(db, out);
}

void kp_bpf_count_close(struct kp_pmu *p)
{
	struct kp_bpf_count *b = p->bpf_count;

	if (!b)
		return;
	count_bpf__destroy(b->skel);
	free(b->slots);
	free(b->last);
	free(b->vals);
	free(b);
	p->bpf_count = NULL;
}
