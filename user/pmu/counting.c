/*
 * counting.c - COUNTING tasks: perf_event_open counters read as deltas.
 *
 * Targets: every thread of each process of pidList (one counter per thread, with inherit
 * so threads and processes they create later are counted too), or every CPU of cpuList
 * (system-wide when both lists are empty), or cgroups (cgroupNameList, per CPU). Counters
 * are read with TOTAL_TIME_ENABLED|RUNNING: when the kernel multiplexed them, the delta is
 * scaled by enabled/running and countPercent says how much of the time it really ran.
 * Two variants share the entry points: BPF mode (enableBpf: the counters are per CPU and
 * bpf_count.c charges them to tasks) and user access (enableUserAccess: uaccess.c).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include "core/core.h"
#include "kperf/pcerrc.h"
#include "pmu.h"
#include "topo/topo.h"

struct kp_counter {
	int fd;
	int event; /* index in p->events */
	bool leader; /* enabled/disabled by ioctl (ungrouped events and group leaders) */
	pid_t pid; /* -1: per CPU */
	pid_t tid;
	int cpu; /* -1: any CPU */
	int cgroup; /* index in cgroup names, -1 when none */
	uint64_t value, enabled, running; /* at the previous read */
	char comm[16];
};

struct kp_counting {
	struct kp_counter *c;
	size_t n, cap;
};

/* the fd limit is raised once, to the hard limit, when counters need it */
static void raise_fd_limit(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

static int open_counter(struct kp_pmu *p, int ev, pid_t pid, pid_t tid, int cpu, int cgroup,
			int group_fd)
{
	struct kp_counting *k = p->counting;
	struct perf_event_attr attr = p->events[ev].attr;
	unsigned long flags = PERF_FLAG_FD_CLOEXEC;
	struct kp_counter *c;
	pid_t target = tid;
	int fd;

	attr.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
	attr.disabled = group_fd < 0;
	attr.inherit = tid > 0;
	attr.enable_on_exec = tid > 0 && p->attr.enableOnExec && group_fd < 0;
	attr.exclude_user |= p->attr.excludeUser | p->evt_attrs[ev].excludeUser;
	attr.exclude_kernel |= p->attr.excludeKernel | p->evt_attrs[ev].excludeKernel;
	attr.exclude_guest |= p->attr.excludeGuest;
	attr.exclude_host |= p->attr.excludeHost;
	if (cgroup >= 0) {
		target = p->cgroup_fds[cgroup];
		flags |= PERF_FLAG_PID_CGROUP;
	}
	if (kp_grow((void **)&k->c, &k->cap, k->n + 1, sizeof(*k->c)))
		return kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
	fd = kp_perf_event_open(&attr, target, cpu, group_fd, flags);
	if (fd < 0 && errno == EMFILE) {
		raise_fd_limit();
		fd = kp_perf_event_open(&attr, target, cpu, group_fd, flags);
	}
	if (fd < 0 && errno == EINVAL && attr.exclude_hv) {
		attr.exclude_hv = 0;
		fd = kp_perf_event_open(&attr, target, cpu, group_fd, flags);
	}
	if (fd < 0)
		return -errno;
	c = &k->c[k->n++];
	memset(c, 0, sizeof(*c));
	c->fd = fd;
	c->event = ev;
	c->leader = group_fd < 0;
	c->pid = pid;
	c->tid = tid;
	c->cpu = cpu;
	c->cgroup = cgroup;
	if (tid > 0)
		kp_pid_comm(tid, c->comm, sizeof(c->comm));
	return fd;
}

static int open_failed(struct kp_pmu *p, int ev, int err, pid_t tid, int cpu)
{
	const char *name = p->events[ev].name;

	switch (-err) {
	case EMFILE:
	case ENFILE:
		return kp_fail(
			LIBPERF_ERR_TOO_MANY_FD, err,
			"too many open files while opening '%s' (%zu counters so far): "
			"raise the open-file limit (ulimit -n) or count fewer threads/events",
			name, p->counting->n);
	case EACCES:
	case EPERM:
		return kp_fail(LIBPERF_ERR_NO_PERMISSION, err,
			       "not allowed to count '%s' on %s %d: run as root or grant "
			       "CAP_PERFMON (kernel.perf_event_paranoid), or count user space only "
			       "('%s:u')",
			       name, tid > 0 ? "thread" : "cpu", tid > 0 ? tid : cpu, name);
	case ENOENT:
		if (p->ncgroups > 0)
			return kp_pmu_cgroup_open_failed(err);
		/* fall through */
	case EOPNOTSUPP:
	case ENODEV:
		return kp_fail(kp_perf_errno_code(err), err,
			       "event '%s' is not supported here (%s)", name, strerror(-err));
	default:
		return kp_fail(kp_perf_errno_code(err), err, "cannot open '%s' on %s %d: %s", name,
			       tid > 0 ? "thread" : "cpu", tid > 0 ? tid : cpu, strerror(-err));
	}
}

/* open every event (in groups) for one target; returns 0, or -ESRCH for a vanished thread */
static int open_target(struct kp_pmu *p, pid_t pid, pid_t tid, int cpu, int cgroup)
{
	int *leader_fd = malloc(sizeof(int) * (size_t)p->nevents);
	int ev, j, fd, err = 0;

	if (!leader_fd)
		return kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
	for (ev = 0; ev < p->nevents; ev++) {
		int group_fd = -1;

		leader_fd[ev] = -1;
		if (p->events[ev].uncore && tid > 0) {
			err = kp_fail(LIBPERF_ERR_INVALID_EVTLIST, -EINVAL,
				      "'%s' is an uncore event: it counts per socket and cannot be "
				      "restricted to processes (leave pidList empty)",
				      p->events[ev].name);
			break;
		}
		/* an uncore PMU is opened only on the CPUs of its cpumask */
		if (p->events[ev].uncore) {
			bool mine = false;

			for (j = 0; j < p->events[ev].ncpus; j++)
				mine |= p->events[ev].cpus[j] == cpu;
			if (!mine)
				continue;
		}
		for (j = 0; j < ev; j++) {
			if (p->group_ids[ev] >= 0 && p->group_ids[j] == p->group_ids[ev] &&
			    leader_fd[j] >= 0) {
				group_fd = leader_fd[j];
				break;
			}
		}
		fd = open_counter(p, ev, pid, tid, cpu, cgroup, group_fd);
		if (fd < 0) {
			err = fd == -ESRCH ? -ESRCH : open_failed(p, ev, fd, tid, cpu);
			break;
		}
		leader_fd[ev] = group_fd < 0 ? fd : -1;
	}
	free(leader_fd);
	return err;
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

		if (tid <= 0)
			continue;
		if (p->attr.numCpu) {
			for (i = 0; i < p->ncpus && !err; i++)
				err = open_target(p, pid, tid, p->cpus[i], -1);
		} else {
			err = open_target(p, pid, tid, -1, -1);
		}
		if (err == -ESRCH) /* the thread exited meanwhile */
			err = 0;
		else if (!err)
			opened++;
	}
	closedir(d);
	if (!err && !opened)
		return kp_fail(LIBPERF_ERR_FAIL_GET_PROC, -ESRCH,
			       "process %d exited before it could be counted", (int)pid);
	return err;
}

int kp_counting_open(struct kp_pmu *p)
{
	int i, j, err = 0;

	if (p->attr.enableUserAccess)
		return kp_uaccess_open(p);
	p->counting = calloc(1, sizeof(*p->counting));
	if (!p->counting)
		return kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
	if (p->attr.numCgroup && p->npids)
		return kp_fail(LIBPERF_ERR_INVALID_CGROUP_LIST, -EINVAL,
			       "give either pidList or cgroupNameList, not both");
	if (p->attr.enableBpf) {
		/* one counter per (event, CPU) whatever the targets: the program charges tasks */
		for (i = 0; i < p->nevents; i++)
			if (p->events[i].uncore)
				return kp_fail(LIBPERF_ERR_INVALID_BPF_PARAM, -EINVAL,
					       "'%s' is an uncore event: BPF mode charges core "
					       "events to tasks",
					       p->events[i].name);
		for (i = 0; i < p->ncpus && !err; i++)
			err = open_target(p, -1, -1, p->cpus[i], -1);
		return err ? err : kp_bpf_count_open(p);
	}
	if (p->ncgroups) {
		for (j = 0; j < p->ncgroups && !err; j++)
			for (i = 0; i < p->ncpus && !err; i++)
				err = open_target(p, -1, -1, p->cpus[i], j);
		return err;
	}
	if (p->npids) {
		for (i = 0; i < p->npids && !err; i++)
			err = open_process(p, p->pids[i]);
		return err;
	}
	for (i = 0; i < p->ncpus && !err; i++)
		err = open_target(p, -1, -1, p->cpus[i], -1);
	return err;
}

size_t kp_counting_ncounters(const struct kp_pmu *p)
{
	return p->counting ? p->counting->n : 0;
}

void kp_counting_counter(const struct kp_pmu *p, size_t i, int *fd, int *event, int *cpu)
{
	const struct kp_counter *c = &p->counting->c[i];

	*fd = c->fd;
	*event = c->event;
	*cpu = c->cpu;
}

static int ioctl_all(struct kp_pmu *p, unsigned long req)
{
	struct kp_counting *k = p->counting;
	size_t i;

	for (i = 0; i < k->n; i++) {
		if (!k->c[i].leader)
			continue;
		if (ioctl(k->c[i].fd, req, PERF_IOC_FLAG_GROUP))
			return -errno;
	}
	return 0;
}

int kp_counting_enable(struct kp_pmu *p)
{
	int err;

	if (p->uaccess)
		return kp_uaccess_enable(p);
	/* the kernel enables per-thread counters at the exec; BPF mode's are per CPU */
	if (p->attr.enableOnExec && p->npids && !p->bpf_count)
		return 0;
	err = ioctl_all(p, PERF_EVENT_IOC_ENABLE);

	if (err)
		return kp_fail(LIBPERF_ERR_FAILED_PMU_ENABLE, err, "cannot enable the counters: %s",
			       strerror(-err));
	return 0;
}

int kp_counting_disable(struct kp_pmu *p)
{
	int err;

	if (p->uaccess)
		return kp_uaccess_disable(p);
	/* BPF mode: charge the running tasks before the counters stop, or the next switch
	 * of each CPU would charge whichever task leaves it then */
	if (p->bpf_count)
		kp_bpf_count_flush(p);
	err = ioctl_all(p, PERF_EVENT_IOC_DISABLE);

	if (err)
		return kp_fail(LIBPERF_ERR_FAILED_PMU_DISABLE, err,
			       "cannot disable the counters: %s", strerror(-err));
	return 0;
}

uint64_t kp_count_scale(uint64_t dv, uint64_t de, uint64_t dr, double *percent)
{
	if (de == 0) {
		*percent = -1;
		return 0;
	}
	if (dr == 0) {
		/* enabled but never scheduled on the PMU: nothing can be estimated */
		*percent = 0;
		return 0;
	}
	if (dr < de) {
		*percent = (double)dr / (double)de;
		return (uint64_t)((double)dv * (double)de / (double)dr + 0.5);
	}
	*percent = 1.0;
	return dv;
}

static int read_counters(struct kp_pmu *p, struct PmuData **out)
{
	struct kp_counting *k = p->counting;
	struct kp_data_builder *b = kp_data_builder_new();
	int64_t ts = (int64_t)kp_now_ns();
	size_t i;
	int err;

	if (!b)
		return kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
	for (i = 0; i < k->n; i++) {
		struct kp_counter *c = &k->c[i];
		uint64_t v[3] = { 0, 0, 0 }, dv, de, dr;
		struct PmuData d = { 0 };
		struct CpuTopology topo;

		if (read(c->fd, v, sizeof(v)) != (ssize_t)sizeof(v))
			continue; /* cannot happen for a counting fd; never report garbage */
		dv = v[0] - c->value;
		de = v[1] - c->enabled;
		dr = v[2] - c->running;
		c->value = v[0];
		c->enabled = v[1];
		c->running = v[2];
		d.evt = p->events[c->event].name;
		d.ts = ts;
		d.pid = c->pid;
		d.tid = c->tid;
		d.cpu = c->cpu;
		d.groupId = p->group_ids[c->event];
		d.comm = c->comm;
		d.cgroupName = c->cgroup >= 0 ? p->cgroup_names[c->cgroup] : NULL;
		d.count = kp_count_scale(dv, de, dr, &d.countPercent);
		if (c->cpu >= 0 && kp_topo_cpu(c->cpu, &topo) == 0)
			d.cpuTopo = &topo;
		err = kp_data_builder_add(b, &d, 0);
		if (err) {
			kp_data_builder_free(b);
			return err;
		}
	}
	return kp_data_builder_finish(b, out);
}

int kp_counting_read(struct kp_pmu *p, struct PmuData **out)
{
	if (p->uaccess)
		return kp_uaccess_read(p, out);
	if (p->bpf_count)
		return kp_bpf_count_read(p, out);
	return read_counters(p, out);
}

void kp_counting_close(struct kp_pmu *p)
{
	struct kp_counting *k = p->counting;
	size_t i;

	kp_uaccess_close(p);
	kp_bpf_count_close(p); /* before the counters it reads are closed */
	if (!k)
		return;
	for (i = 0; i < k->n; i++)
		close(k->c[i].fd);
	free(k->c);
	free(k);
	p->counting = NULL;
}
