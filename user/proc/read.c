/*
 * read.c - where each ProcSource lives under the /proc root, how it is read (a file, a
 * directory listing, the stat files of every thread, a list of sysctl files), and the
 * codes a failed source records.
 *
 * The sysctl lists are libkperf's: a name a kernel lacks (several of its net/ipv4 names
 * exist only under net/core) is skipped like any missing file.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/core.h"
#include "kperf/pcerrc.h"
#include "proc.h"

enum {
	F_PID = 1, /* a file of one process: <root>/<pid>/<path> */
	F_EMPTY_OK = 2, /* an empty file is an answer (a running task's wchan, no fds) */
};

static const char *const sys_kernel[] = {
	"kernel/perf_event_paranoid",
	"kernel/pid_max",
	"kernel/threads-max",
	"kernel/kptr_restrict",
	"kernel/lock_stat",
	"kernel/tainted",
	"kernel/sched_cluster",
	"kernel/sched_schedstats",
	"kernel/sched_latency_ns",
	"kernel/sched_min_granularity_ns",
	"kernel/sched_wakeup_granularity_ns",
	"kernel/sched_tunable_scaling",
	"kernel/sched_migration_cost_ns",
	"kernel/sched_autogroup_enabled",
	"kernel/sched_child_runs_first",
	"kernel/sched_rt_period_us",
	"kernel/sched_rt_runtime_us",
	"kernel/sched_util_low_pct",
	"kernel/sched_soft_runtime_ratio",
	"kernel/numa_balancing",
	NULL,
};

static const char *const sys_fs[] = {
	"fs/aio-max-nr", "fs/aio-nr", "fs/file-max", "fs/file-nr", "fs/nr_open", NULL,
};

static const char *const sys_vm[] = {
	"vm/nr_hugepages",
	"vm/oom_kill_allocating_task",
	"vm/oom_dump_tasks",
	"vm/watermark_scale_factor",
	NULL,
};

static const char *const sys_net_ipv4[] = {
	"net/ipv4/tcp_tw_reuse",
	"net/ipv4/tcp_timestamps",
	"net/ipv4/tcp_sack",
	"net/ipv4/tcp_window_scaling",
	"net/ipv4/tcp_congestion_control",
	"net/ipv4/tcp_rmem",
	"net/ipv4/tcp_wmem",
	"net/ipv4/tcp_mem",
	"net/ipv4/tcp_max_syn_backlog",
	"net/ipv4/tcp_fin_timeout",
	"net/ipv4/ip_local_port_range",
	"net/ipv4/netdev_max_backlog",
	"net/ipv4/netdev_budget",
	"net/ipv4/somaxconn",
	"net/ipv4/rmem_default",
	"net/ipv4/rmem_max",
	"net/ipv4/wmem_default",
	"net/ipv4/wmem_max",
	NULL,
};

static const char *const sys_net_core[] = {
	"net/core/netdev_max_backlog", "net/core/netdev_budget",
	"net/core/somaxconn",	       "net/core/rmem_default",
	"net/core/rmem_max",	       "net/core/wmem_default",
	"net/core/wmem_max",	       NULL,
};

struct source {
	const char *path; /* under the root, or under <root>/<pid> with F_PID */
	kp_proc_parse_fn parse; /* NULL: read by the code of read_source */
	unsigned flags;
	const char *const *sysctl; /* PROC_SYS_*: the files, under <root>/sys */
};

static const struct source sources[MAX_PROC_SOURCE] = {
	[PROC_STAT] = { "stat", kp_proc_parse_stat },
	[PROC_CPUINFO] = { "cpuinfo", kp_proc_parse_cpuinfo },
	[PROC_MEMINFO] = { "meminfo", kp_proc_parse_meminfo },
	[PROC_LOADAVG] = { "loadavg", kp_proc_parse_loadavg },
	[PROC_VMSTAT] = { "vmstat", kp_proc_parse_vmstat },
	[PROC_NET_DEV] = { "net/dev", kp_proc_parse_net_dev },
	[PROC_DISKSTATS] = { "diskstats", kp_proc_parse_diskstats },
	[PROC_UPTIME] = { "uptime", kp_proc_parse_uptime },
	[PROC_MOUNTS] = { "mounts", kp_proc_parse_mounts },
	[PROC_SOFTIRQS] = { "softirqs", kp_proc_parse_softirqs },
	[PROC_SLABINFO] = { "slabinfo", kp_proc_parse_slabinfo },
	[PROC_SCHEDSTAT] = { "schedstat", kp_proc_parse_schedstat },
	[PROC_INTERRUPTS] = { "interrupts", kp_proc_parse_interrupts },
	[PROC_IRQ_AFFINITY] = { "irq/default_smp_affinity", kp_proc_parse_irq_affinity },
	[PROC_LOCKS] = { "locks", kp_proc_parse_locks },
	[PROC_ZONEINFO] = { "zoneinfo", kp_proc_parse_zoneinfo },
	[PROC_BUDDYINFO] = { "buddyinfo", kp_proc_parse_buddyinfo },
	[PROC_NET_SOCKSTAT] = { "net/sockstat", kp_proc_parse_sockstat },
	[PROC_NET_NETSTAT] = { "net/netstat", kp_proc_parse_netstat },
	[PROC_NET_ARP] = { "net/arp", kp_proc_parse_arp },
	[PROC_VERSION] = { "version", kp_proc_parse_version },
	[PROC_MODULES] = { "modules", kp_proc_parse_modules },
	[PROC_FILESYSTEMS] = { "filesystems", kp_proc_parse_filesystems },
	[PROC_SCSI] = { "scsi/scsi", kp_proc_parse_scsi },
	[PROC_PRESSURE_CPU] = { "pressure/cpu", kp_proc_parse_pressure },
	[PROC_PRESSURE_IO] = { "pressure/io", kp_proc_parse_pressure },
	[PROC_SYS_KERNEL] = { "sys/kernel", NULL, 0, sys_kernel },
	[PROC_SYS_FS] = { "sys/fs", NULL, 0, sys_fs },
	[PROC_SYS_VM] = { "sys/vm", NULL, 0, sys_vm },
	[PROC_SYS_NET_IPV4] = { "sys/net/ipv4", NULL, 0, sys_net_ipv4 },
	[PROC_SYS_NET_CORE] = { "sys/net/core", NULL, 0, sys_net_core },
	[PROC_PID_STAT] = { "stat", kp_proc_parse_pid_stat, F_PID },
	[PROC_PID_STATM] = { "statm", kp_proc_parse_pid_statm, F_PID },
	[PROC_PID_STATUS] = { "status", kp_proc_parse_pid_status, F_PID },
	[PROC_PID_IO] = { "io", kp_proc_parse_pid_io, F_PID },
	[PROC_PID_SMAPS_ROLLUP] = { "smaps_rollup", kp_proc_parse_pid_smaps_rollup, F_PID },
	[PROC_PID_FD] = { "fd", NULL, F_PID | F_EMPTY_OK },
	[PROC_PID_NUMA_MAPS] = { "numa_maps", kp_proc_parse_pid_numa_maps, F_PID },
	[PROC_PID_SMAPS] = { "smaps", kp_proc_parse_pid_smaps, F_PID },
	[PROC_PID_ENVIRON] = { "environ", kp_proc_parse_pid_environ, F_PID },
	[PROC_PID_CMDLINE] = { "cmdline", kp_proc_parse_pid_cmdline, F_PID },
	[PROC_PID_LIMITS] = { "limits", kp_proc_parse_pid_limits, F_PID },
	[PROC_PID_STACK] = { "stack", kp_proc_parse_pid_stack, F_PID | F_EMPTY_OK },
	[PROC_PID_WCHAN] = { "wchan", kp_proc_parse_pid_wchan, F_PID | F_EMPTY_OK },
	[PROC_PID_MAPS] = { "maps", kp_proc_parse_pid_maps, F_PID },
	[PROC_PID_COMM] = { "comm", kp_proc_parse_pid_comm, F_PID | F_EMPTY_OK },
	[PROC_PID_TASK_STAT] = { "task", kp_proc_parse_pid_task_stat, F_PID | F_EMPTY_OK },
};

const char *kp_proc_root(void)
{
	const char *root = secure_getenv("KPERF_BPF_PROC");

	return root && *root ? root : "/proc";
}

bool kp_proc_is_pid_source(int src)
{
	return src >= 0 && src < MAX_PROC_SOURCE && (sources[src].flags & F_PID);
}

kp_proc_parse_fn kp_proc_parser(int src)
{
	return src >= 0 && src < MAX_PROC_SOURCE ? sources[src].parse : NULL;
}

static int nomem(void)
{
	return kp_fail(LIBPERF_ERR_PROC_DATA_NULL, -ENOMEM, "out of memory reading /proc");
}

int kp_proc_parse(struct kp_proc_arena *a, int src, char *text, size_t len, struct ProcData *out)
{
	kp_proc_parse_fn parse = kp_proc_parser(src);
	int err;

	if (!parse)
		return kp_fail(LIBPERF_ERR_PROC_SOURCE_INVALID, -EINVAL,
			       "proc source %d has no text to parse", src);
	err = parse(a, text, len, out);
	if (err == -ENOMEM)
		return nomem();
	if (err)
		return kp_fail(LIBPERF_ERR_PROC_PARSE_FAILED, err, "%s: no entry recognised",
			       out->filePath ? out->filePath : "proc text");
	return 0;
}

/* The sysctl files of <list> that exist and hold something, with their trimmed values. */
static int read_sysctl(struct kp_proc_arena *a, const char *root, const char *dir,
		       const char *const *list, struct ProcData *out)
{
	struct kp_proc_vec v = { 0 };
	char path[PATH_MAX];
	unsigned i;

	for (i = 0; list[i]; i++) {
		struct ProcSysDirEntry *e;
		char *buf, *value;
		int err;

		if (snprintf(path, sizeof(path), "%s/sys/%s", root, list[i]) >= (int)sizeof(path))
			continue;
		err = kp_read_file(path, &buf, NULL);
		if (err == -ENOMEM)
			return nomem();
		if (err)
			continue;
		value = kp_proc_trim(buf);
		if (!*value) {
			free(buf);
			continue;
		}
		e = kp_proc_push(a, &v, sizeof(*e));
		err = !e || !(e->name = kp_proc_strdup(a, strrchr(list[i], '/') + 1)) ||
		      !(e->path = kp_proc_strdup(a, path)) ||
		      !(e->value = kp_proc_strdup(a, value));
		free(buf);
		if (err)
			return nomem();
	}
	if (!v.n)
		return kp_fail(LIBPERF_ERR_PROC_PARSE_FAILED, -ENODATA,
			       "none of the %u files of %s/%s could be read", i, root, dir);
	out->sysDir = v.items;
	out->numEntries = v.n;
	return 0;
}

static int read_fd(struct kp_proc_arena *a, const char *path, struct ProcData *out)
{
	struct ProcPidFdEntry *e;
	struct dirent *d;
	unsigned n = 0;
	DIR *dir;

	dir = opendir(path);
	if (!dir)
		return kp_fail(LIBPERF_ERR_PROC_READ_FAILED, -errno, "cannot list %s: %s", path,
			       strerror(errno));
	while ((d = readdir(dir)))
		if (strcmp(d->d_name, ".") && strcmp(d->d_name, ".."))
			n++;
	closedir(dir);
	e = kp_proc_alloc(a, sizeof(*e));
	if (!e)
		return nomem();
	e->fdCount = n;
	out->pidFd = e;
	out->numEntries = 1;
	return 0;
}

static int cmp_tid(const void *x, const void *y)
{
	long a = *(const long *)x, b = *(const long *)y;

	return (a > b) - (a < b);
}

/* The thread ids in <dir>, ascending, in a new arena array. */
static int list_tids(struct kp_proc_arena *a, const char *path, long **tids, unsigned *n)
{
	struct kp_proc_vec v = { 0 };
	struct dirent *d;
	DIR *dir;

	dir = opendir(path);
	if (!dir)
		return kp_fail(LIBPERF_ERR_PROC_READ_FAILED, -errno, "cannot list %s: %s", path,
			       strerror(errno));
	while ((d = readdir(dir))) {
		char *end;
		long tid = strtol(d->d_name, &end, 10);
		long *slot;

		if (end == d->d_name || *end || tid <= 0)
			continue;
		slot = kp_proc_push(a, &v, sizeof(*slot));
		if (!slot) {
			closedir(dir);
			return nomem();
		}
		*slot = tid;
	}
	closedir(dir);
	if (v.n)
		qsort(v.items, v.n, sizeof(long), cmp_tid);
	*tids = v.items;
	*n = v.n;
	return 0;
}

/* filePath becomes the stat files read, one per line, as in libkperf. */
static int read_task_stat(struct kp_proc_arena *a, const char *dir, struct ProcData *out)
{
	struct kp_proc_vec v = { 0 }, paths = { 0 };
	char path[PATH_MAX], *all;
	size_t total = 0, at = 0;
	unsigned n = 0, i;
	long *tids = NULL;
	int err;

	err = list_tids(a, dir, &tids, &n);
	if (err)
		return err;
	for (i = 0; i < n; i++) {
		struct ProcPidStatEntry e = { 0 };
		struct ProcPidTaskStatEntry *slot;
		char *buf, **p;

		if (snprintf(path, sizeof(path), "%s/%ld/stat", dir, tids[i]) >= (int)sizeof(path))
			continue;
		err = kp_read_file(path, &buf, NULL);
		if (err == -ENOMEM)
			return nomem();
		if (err)
			continue; /* the thread has exited since the listing */
		err = kp_proc_stat_line(a, buf, &e);
		free(buf);
		if (err == -ENODATA)
			continue;
		if (err || !(slot = kp_proc_push(a, &v, sizeof(*slot))) ||
		    !(p = kp_proc_push(a, &paths, sizeof(*p))) || !(*p = kp_proc_strdup(a, path)))
			return nomem();
		memcpy(slot, &e, sizeof(*slot));
		total += strlen(path) + 1;
	}
	if (!v.n)
		return kp_fail(LIBPERF_ERR_PROC_PARSE_FAILED, -ENODATA,
			       "%s: no thread with a readable stat", dir);
	all = kp_proc_alloc(a, total);
	if (!all)
		return nomem();
	for (i = 0; i < paths.n; i++) {
		const char *p = ((char **)paths.items)[i];

		if (i)
			all[at++] = '\n';
		memcpy(all + at, p, strlen(p));
		at += strlen(p);
	}
	out->filePath = all;
	out->pidTaskStat = v.items;
	out->numEntries = v.n;
	return 0;
}

int kp_proc_read_source(struct kp_proc_arena *a, const char *root, int src, int pid,
			struct ProcData *out)
{
	const struct source *s;
	char path[PATH_MAX], *buf;
	struct stat st;
	size_t len;
	int err;

	if (src < 0 || src >= MAX_PROC_SOURCE)
		return kp_fail(LIBPERF_ERR_PROC_SOURCE_INVALID, -EINVAL,
			       "%d is not a proc source (0 to %d)", src, MAX_PROC_SOURCE - 1);
	s = &sources[src];
	if ((s->flags & F_PID) && pid <= 0)
		return kp_fail(LIBPERF_ERR_PROC_SOURCE_INVALID, -EINVAL,
			       "proc source %d is a process's: it needs a pid > 0, not %d", src,
			       pid);
	memset(out, 0, sizeof(*out));
	out->source = (enum ProcSource)src;
	out->pid = s->flags & F_PID ? pid : 0;
	if (s->sysctl) {
		out->filePath = kp_proc_strdup(a, "sys_dir");
		return out->filePath ? read_sysctl(a, root, s->path, s->sysctl, out) : nomem();
	}
	if (s->flags & F_PID)
		len = (size_t)snprintf(path, sizeof(path), "%s/%d/%s", root, pid, s->path);
	else
		len = (size_t)snprintf(path, sizeof(path), "%s/%s", root, s->path);
	if (len >= sizeof(path))
		return kp_fail(LIBPERF_ERR_PROC_FILE_NOT_FOUND, -ENAMETOOLONG,
			       "the /proc root %s is too long a path", root);
	if (stat(path, &st))
		return errno == ENOENT || errno == ENOTDIR ?
			       kp_fail(LIBPERF_ERR_PROC_FILE_NOT_FOUND, -ENOENT,
				       "%s does not exist", path) :
			       kp_fail(LIBPERF_ERR_PROC_READ_FAILED, -errno, "cannot reach %s: %s",
				       path, strerror(errno));
	out->filePath = kp_proc_strdup(a, path);
	if (!out->filePath)
		return nomem();
	if (src == PROC_PID_FD)
		return read_fd(a, path, out);
	if (src == PROC_PID_TASK_STAT)
		return read_task_stat(a, path, out);
	err = kp_read_file(path, &buf, &len);
	if (err == -ENOMEM)
		return nomem();
	if (err)
		return kp_fail(LIBPERF_ERR_PROC_READ_FAILED, err, "cannot read %s: %s", path,
			       strerror(-err));
	if (!len && !(s->flags & F_EMPTY_OK)) {
		free(buf);
		return kp_fail(LIBPERF_ERR_PROC_READ_FAILED, -ENODATA, "%s is empty", path);
	}
	err = kp_proc_parse(a, src, buf, len, out);
	free(buf);
	return err;
}
