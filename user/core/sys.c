/*
 * sys.c - facts about the running system that every collector checks before it opens
 * anything: which CPUs exist and are online, whether a pid exists, which privileges this
 * process holds, where BTF, tracefs and sysfs are.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <mntent.h>
#include <limits.h>
#include <linux/capability.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#include "core.h"
#include "pidns.h"
#include "kperf/pcerrc.h"

#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif
#ifndef CAP_BPF
#define CAP_BPF 39
#endif
#define TRACEFS_MAGIC_NR 0x74726163

const char *kp_sysfs(void)
{
	const char *root = secure_getenv("KPERF_BPF_SYSFS");

	return root && *root ? root : "/sys";
}

/* "0-3,5" style list of the sysfs file <name> under devices/system/cpu */
static int read_cpu_range_file(const char *name, int **cpus)
{
	char path[PATH_MAX], *buf;
	int n, err;

	snprintf(path, sizeof(path), "%s/devices/system/cpu/%s", kp_sysfs(), name);
	err = kp_read_file(path, &buf, NULL);
	if (err)
		return err;
	n = kp_parse_cpu_list(buf, cpus);
	free(buf);
	return n;
}

int kp_cpu_possible(void)
{
	int *cpus = NULL, n, max;

	n = read_cpu_range_file("possible", &cpus);
	if (n <= 0) {
		long c = sysconf(_SC_NPROCESSORS_CONF);

		return c > 0 ? (int)c : 1;
	}
	max = cpus[n - 1] + 1;
	free(cpus);
	return max;
}

bool kp_cpu_online(int cpu)
{
	int *cpus = NULL, n, i;
	bool online = false;

	n = read_cpu_range_file("online", &cpus);
	if (n <= 0)
		return cpu >= 0 && cpu < kp_cpu_possible();
	for (i = 0; i < n && !online; i++)
		online = cpus[i] == cpu;
	free(cpus);
	return online;
}

int kp_check_cpus(const int *cpus, unsigned n)
{
	int possible = kp_cpu_possible(), any = 0;
	unsigned i;

	if (n && !cpus)
		return kp_fail(LIBPERF_ERR_INVALID_CPULIST, -EINVAL,
			       "the cpu list is NULL but its length is %u", n);
	if (n > (unsigned)possible)
		return kp_fail(LIBPERF_ERR_INVALID_CPULIST, -EINVAL,
			       "the cpu list has %u entries: this machine has %d cpus", n,
			       possible);
	for (i = 0; i < n; i++) {
		if (cpus[i] == -1) {
			any = 1;
			continue;
		}
		if (cpus[i] < 0 || cpus[i] >= possible)
			return kp_fail(LIBPERF_ERR_INVALID_CPULIST, -EINVAL,
				       "cpu %d is out of range: this machine has cpus 0-%d (or -1 "
				       "for any cpu)",
				       cpus[i], possible - 1);
		if (!kp_cpu_online(cpus[i]))
			return kp_fail(LIBPERF_ERR_INVALID_CPULIST, -EINVAL,
				       "cpu %d is offline (see /sys/devices/system/cpu/online)",
				       cpus[i]);
	}
	return any;
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

int kp_parse_cpu_list(const char *s, int **cpus)
{
	int *out = NULL, n = 0, i, j;
	size_t cap = 0;
	const char *p = s;
	char *end;

	*cpus = NULL;
	if (!s)
		return -EINVAL;
	while (*p) {
		long lo, hi;

		while (*p == ' ' || *p == '\t' || *p == '\n' || *p == ',')
			p++;
		if (!*p)
			break;
		if (*p < '0' || *p > '9')
			goto bad;
		errno = 0;
		lo = strtol(p, &end, 10);
		if (errno || end == p)
			goto bad;
		hi = lo;
		p = end;
		if (*p == '-') {
			p++;
			if (*p < '0' || *p > '9')
				goto bad;
			hi = strtol(p, &end, 10);
			if (errno || end == p)
				goto bad;
			p = end;
		}
		if (lo > hi || hi > 1 << 20)
			goto bad;
		if (*p && *p != ',' && *p != '\n' && *p != ' ')
			goto bad;
		for (; lo <= hi; lo++) {
			if (kp_grow((void **)&out, &cap, (size_t)n + 1, sizeof(*out)))
				goto nomem;
			out[n++] = (int)lo;
		}
	}
	if (n) /* qsort(NULL, 0) is undefined: an empty list ("" of a CPU-less node) */
		qsort(out, (size_t)n, sizeof(*out), cmp_int);
	for (i = 0, j = 0; i < n; i++)
		if (j == 0 || out[j - 1] != out[i])
			out[j++] = out[i];
	*cpus = out;
	return j;
bad:
	free(out);
	return -EINVAL;
nomem:
	free(out);
	return -ENOMEM;
}

int kp_pid_tgid(pid_t pid)
{
	char path[64], *buf, *line;
	long tgid = -1;
	int err;

	if (pid <= 0)
		return kp_fail(LIBPERF_ERR_INVALID_PIDLIST, -EINVAL,
			       "pid %d is not valid: pids are positive", (int)pid);
	/* pids are the caller's namespace's: /proc must show that namespace */
	err = kp_pidns_check_proc();
	if (err)
		return err;
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	err = kp_read_file(path, &buf, NULL);
	if (err && !kp_pidns_is_host())
		return kp_fail(
			LIBPERF_ERR_INVALID_PIDLIST, -ESRCH,
			"no process or thread with pid %d exists in this PID namespace "
			"(%s, where kperf-bpf runs): pids are the namespace's, and a process "
			"outside it cannot be a target from here",
			(int)pid, kp_pidns_name());
	if (err)
		return kp_fail(LIBPERF_ERR_INVALID_PIDLIST, -ESRCH,
			       "no process or thread with pid %d exists", (int)pid);
	line = strstr(buf, "\nTgid:");
	if (line)
		tgid = strtol(line + 6, NULL, 10);
	free(buf);
	if (tgid <= 0)
		return kp_fail(LIBPERF_ERR_INVALID_PIDLIST, -ESRCH,
			       "pid %d exists but its thread group could not be read", (int)pid);
	return (int)tgid;
}

bool kp_pid_alive(pid_t pid)
{
	char path[64], *buf, *paren;
	bool alive = false;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (kp_read_file(path, &buf, NULL))
		return false;
	/* "pid (comm) S ...": the state follows the last ')' (comm may hold parentheses) */
	paren = strrchr(buf, ')');
	if (paren && paren[1] == ' ')
		alive = paren[2] != 'Z' && paren[2] != 'X' && paren[2] != 'x';
	free(buf);
	return alive;
}

void kp_pid_comm(pid_t pid, char *buf, size_t size)
{
	char path[64];
	FILE *f;

	buf[0] = '\0';
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return;
	if (fgets(buf, (int)size, f))
		buf[strcspn(buf, "\n")] = '\0';
	fclose(f);
}

static bool has_cap(const struct __user_cap_data_struct *d, int cap)
{
	return d[cap / 32].effective & (1U << (cap % 32));
}

static int effective_caps(struct __user_cap_data_struct d[2])
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3, .pid = 0 };

	memset(d, 0, 2 * sizeof(*d));
	if (syscall(SYS_capget, &h, d))
		return -errno;
	return 0;
}

int kp_check_bpf_privileges(void)
{
	struct __user_cap_data_struct d[2];
	long unpriv = -1;
	char why[160] = "";

	if (effective_caps(d))
		return 0; /* cannot tell: let the kernel decide */
	if (has_cap(d, CAP_SYS_ADMIN))
		return 0;
	if (has_cap(d, CAP_BPF) && has_cap(d, CAP_PERFMON))
		return 0;
	/* tracing programs always need the capabilities; say whether the machine would let
	 * an unprivileged user load any BPF at all, since that is the first thing one checks */
	if (kp_read_long("/proc/sys/kernel/unprivileged_bpf_disabled", &unpriv) == 0 && unpriv)
		snprintf(why, sizeof(why),
			 "; kernel.unprivileged_bpf_disabled is %ld, so this machine lets no "
			 "unprivileged process load BPF",
			 unpriv);
	return kp_fail(LIBPERF_ERR_NO_PERMISSION, -EPERM,
		       "loading BPF tracing programs needs root, or CAP_BPF and CAP_PERFMON "
		       "(this process lacks %s%s%s%s)",
		       has_cap(d, CAP_BPF) ? "" : "CAP_BPF",
		       !has_cap(d, CAP_BPF) && !has_cap(d, CAP_PERFMON) ? " and " : "",
		       has_cap(d, CAP_PERFMON) ? "" : "CAP_PERFMON", why);
}

int kp_check_perf_privileges(bool system_wide)
{
	struct __user_cap_data_struct d[2];
	long paranoid = 2;

	if (effective_caps(d) == 0 && (has_cap(d, CAP_SYS_ADMIN) || has_cap(d, CAP_PERFMON)))
		return 0;
	kp_read_long("/proc/sys/kernel/perf_event_paranoid", &paranoid);
	if (system_wide && paranoid > 0)
		return kp_fail(LIBPERF_ERR_NO_PERMISSION, -EPERM,
			       "system-wide or per-cpu collection needs root or CAP_PERFMON "
			       "(kernel.perf_event_paranoid is %ld; it must be <= 0 without them)",
			       paranoid);
	if (paranoid > 2)
		return kp_fail(
			LIBPERF_ERR_NO_PERMISSION, -EPERM,
			"perf events are disabled for unprivileged users "
			"(kernel.perf_event_paranoid is %ld): run as root or grant CAP_PERFMON",
			paranoid);
	return 0;
}

const char *kp_btf_path(void)
{
	const char *p = secure_getenv("KPERF_BPF_BTF");

	if (!p || !*p)
		p = "/sys/kernel/btf/vmlinux";
	return access(p, R_OK) == 0 ? p : NULL;
}

static bool is_tracefs(const char *dir)
{
	struct statfs st;

	return statfs(dir, &st) == 0 && st.f_type == TRACEFS_MAGIC_NR;
}

const char *kp_tracefs(void)
{
	static const char *const candidates[] = { "/sys/kernel/tracing",
						  "/sys/kernel/debug/tracing" };
	size_t i;

	for (i = 0; i < KP_ARRAY_SIZE(candidates); i++)
		if (is_tracefs(candidates[i]))
			return candidates[i];
	if (mount("nodev", candidates[0], "tracefs", 0, NULL) == 0 && is_tracefs(candidates[0]))
		return candidates[0];
	return NULL;
}

int kp_tracefs_fail(int code, const char *what)
{
	int err = errno; /* kp_tracefs()'s mount: EPERM in a container without CAP_SYS_ADMIN */

	return kp_fail(code, -ENOENT,
		       "%s needs tracefs, which is not mounted and cannot be mounted here "
		       "(/sys/kernel/tracing: %s%s): mount it (mount -t tracefs nodev "
		       "/sys/kernel/tracing), or bind the host's into the container",
		       what, strerror(err), err == EPERM ? "; mounting needs CAP_SYS_ADMIN" : "");
}

int kp_tracefs_need(const char *what, const char *tp)
{
	char why[256];

	if (kp_tracefs())
		return 0;
	snprintf(why, sizeof(why), "%s (tracepoint %s)", what, tp);
	return kp_tracefs_fail(LIBPERF_ERR_PATH_INACCESSIBLE, why);
}

/* the first cgroup2 mount point, in <buf> */
static int cgroup2_root(char *buf, size_t size)
{
	struct mntent *m;
	FILE *f = setmntent("/proc/self/mounts", "re");
	int err = -ENOENT;

	if (!f)
		return -errno;
	while ((m = getmntent(f))) {
		if (!strcmp(m->mnt_type, "cgroup2")) {
			snprintf(buf, size, "%s", m->mnt_dir);
			err = 0;
			break;
		}
	}
	endmntent(f);
	return err;
}

int kp_cgroup_open(const char *path)
{
	char root[PATH_MAX], full[PATH_MAX * 2];
	struct statfs st;
	int fd;

	if (!path || !*path)
		return kp_fail(LIBPERF_ERR_INVALID_CGROUP_LIST, -EINVAL, "empty cgroup path");
	if (path[0] == '/') {
		snprintf(full, sizeof(full), "%s", path);
	} else {
		if (cgroup2_root(root, sizeof(root)))
			return kp_fail(LIBPERF_ERR_INVALID_CGROUP_LIST, -ENOENT,
				       "cgroup '%s': no cgroup v2 hierarchy is mounted", path);
		snprintf(full, sizeof(full), "%s/%s", root, path);
	}
	fd = open(full, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return kp_fail(LIBPERF_ERR_OPEN_INVALID_FILE, -errno, "cannot open cgroup %s: %s",
			       full, strerror(errno));
	if (fstatfs(fd, &st) || st.f_type != CGROUP2_SUPER_MAGIC) {
		close(fd);
		return kp_fail(LIBPERF_ERR_INVALID_CGROUP_LIST, -EINVAL,
			       "%s is not a cgroup v2 directory (cgroup v1 hierarchies cannot be "
			       "used)",
			       full);
	}
	return fd;
}

uint64_t kp_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}
