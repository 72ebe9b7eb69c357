/*
 * workload.c - who a process belongs to, told by its cgroup2 path: the container id that
 * container runtimes put in the last components (docker-ID.scope, cri-containerd-ID.scope,
 * crio-ID.scope, libpod-ID.scope, or a bare 64-hex directory under the cgroupfs driver), the
 * pod UID of the kubelet's layout (kubepods-...-pod<UID with _>.slice, or pod<UID>), and the
 * names the kubelet gives its log files: /var/log/pods/NAMESPACE_POD_UID/ and
 * /var/log/containers/POD_NAMESPACE_CONTAINER-ID.log. Nothing here asks the API server:
 * the agent stays a node-local process with a read-only view of the host.
 *
 * The kernel's summary names cgroups by id (the inode number of their directory in the
 * cgroup2 file system): agent_cgroup_paths finds the paths of new ids with one walk of the
 * agent's cgroup2 mount, agent_cgroup_populated tells an emptied cgroup (cgroup.events).
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <mntent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "agent.h"

static bool all_hex(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!isxdigit((unsigned char)s[i]) || isupper((unsigned char)s[i]))
			return false;
	return true;
}

/* A container id in one path component, into out (65 bytes). */
static bool component_container(const char *c, size_t n, char *out)
{
	static const char *const prefixes[] = { "docker-", "cri-containerd-", "crio-",
						"libpod-", "containerd-",     "cri-o-" };
	const char *id = c;
	size_t i, idn = n;

	if (n > 6 && !memcmp(c + n - 6, ".scope", 6))
		idn = n - 6;
	for (i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++) {
		size_t pl = strlen(prefixes[i]);

		if (idn > pl && !memcmp(c, prefixes[i], pl)) {
			id = c + pl;
			idn -= pl;
			break;
		}
	}
	if (idn != 64 || !all_hex(id, 64))
		return false;
	memcpy(out, id, 64);
	out[64] = 0;
	return true;
}

/* A pod UID in one component: "pod" then 36 characters of a UUID (with _ for - under
 * systemd), before ".slice" or at the end. */
static bool component_pod(const char *c, size_t n, char *out)
{
	const char *p;
	size_t i;

	if (n > 6 && !memcmp(c + n - 6, ".slice", 6))
		n -= 6;
	if (n < 39)
		return false;
	p = c + n - 36;
	if (memcmp(p - 3, "pod", 3))
		return false;
	for (i = 0; i < 36; i++) {
		char ch = p[i];

		if (i == 8 || i == 13 || i == 18 || i == 23) {
			if (ch != '-' && ch != '_')
				return false;
			out[i] = '-';
		} else {
			if (!isxdigit((unsigned char)ch))
				return false;
			out[i] = (char)tolower((unsigned char)ch);
		}
	}
	out[36] = 0;
	return true;
}

/* NS_POD_UID under logs/pods: the namespace and pod names of <uid>. */
static void names_of_pod(const char *logs, struct agent_identity *id)
{
	char dir[512];
	struct dirent *e;
	DIR *d;

	snprintf(dir, sizeof(dir), "%s/pods", logs);
	d = opendir(dir);
	if (!d)
		return;
	while ((e = readdir(d))) {
		size_t n = strlen(e->d_name);
		const char *us1, *us2;

		if (n < 38 || strcmp(e->d_name + n - 36, id->pod_uid) || e->d_name[n - 37] != '_')
			continue;
		us1 = strchr(e->d_name, '_');
		us2 = e->d_name + n - 37;
		if (!us1 || us1 >= us2)
			continue;
		snprintf(id->k8s_namespace, sizeof(id->k8s_namespace), "%.*s",
			 (int)(us1 - e->d_name), e->d_name);
		snprintf(id->k8s_pod, sizeof(id->k8s_pod), "%.*s", (int)(us2 - us1 - 1), us1 + 1);
		break;
	}
	closedir(d);
}

/* POD_NS_CONTAINER-ID.log under logs/containers: the container's name. */
static void name_of_container(const char *logs, struct agent_identity *id)
{
	char dir[512], prefix[512], suffix[80];
	struct dirent *e;
	size_t pl, sl;
	DIR *d;

	if (!id->k8s_pod[0])
		return;
	snprintf(dir, sizeof(dir), "%s/containers", logs);
	snprintf(prefix, sizeof(prefix), "%s_%s_", id->k8s_pod, id->k8s_namespace);
	snprintf(suffix, sizeof(suffix), "-%s.log", id->container_id);
	pl = strlen(prefix);
	sl = strlen(suffix);
	d = opendir(dir);
	if (!d)
		return;
	while ((e = readdir(d))) {
		size_t n = strlen(e->d_name);

		if (n <= pl + sl || memcmp(e->d_name, prefix, pl) ||
		    strcmp(e->d_name + n - sl, suffix))
			continue;
		snprintf(id->k8s_container, sizeof(id->k8s_container), "%.*s", (int)(n - pl - sl),
			 e->d_name + pl);
		break;
	}
	closedir(d);
}

void agent_identity_from_path(const char *path, const char *logs_dir, struct agent_identity *id)
{
	const char *c = path;

	memset(id, 0, sizeof(*id));
	snprintf(id->cgroup, sizeof(id->cgroup), "%s", path);
	while (*c) {
		const char *end;
		size_t n;

		while (*c == '/')
			c++;
		end = strchrnul(c, '/');
		n = (size_t)(end - c);
		if (n) {
			char uid[37], cid[65];

			if (component_pod(c, n, uid))
				memcpy(id->pod_uid, uid, sizeof(uid));
			else if (component_container(c, n, cid))
				memcpy(id->container_id, cid, sizeof(cid));
		}
		c = end;
	}
	if (id->pod_uid[0] && logs_dir && *logs_dir) {
		names_of_pod(logs_dir, id);
		if (id->container_id[0])
			name_of_container(logs_dir, id);
	}
}

static ssize_t read_small(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, size - 1);
	if (n < 0)
		n = -errno;
	close(fd);
	if (n >= 0)
		buf[n] = 0;
	return n;
}

int agent_cgroup_of(pid_t pid, char *buf, size_t size)
{
	char path[64], data[4096], *line, *save = NULL;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	n = read_small(path, data, sizeof(data));
	if (n < 0)
		return (int)n == -ESRCH ? -ENOENT : (int)n;
	for (line = strtok_r(data, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (!strncmp(line, "0::", 3)) {
			snprintf(buf, size, "%s", line + 3);
			return 0;
		}
	}
	return -ENODATA; /* no cgroup2 hierarchy */
}

uint64_t agent_start_time(pid_t pid)
{
	char path[64], data[1024], *p;
	unsigned long long v = 0;
	int field;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (read_small(path, data, sizeof(data)) <= 0)
		return 0;
	p = strrchr(data, ')'); /* the comm may hold spaces and parentheses */
	if (!p)
		return 0;
	/* after ") ": field 3 (state) ... field 22 (starttime) */
	for (field = 2; field < 22 && p; field++)
		p = strchr(p + 1, ' ');
	if (!p || sscanf(p + 1, "%llu", &v) != 1)
		return 0;
	return v;
}

int agent_cgroup_root(char *buf, size_t size)
{
	struct mntent *m, ent;
	char strs[1024];
	FILE *f = setmntent("/proc/self/mounts", "re");
	int rc = -ENOENT;

	if (!f)
		return -errno;
	while ((m = getmntent_r(f, &ent, strs, sizeof(strs)))) {
		if (!strcmp(m->mnt_type, "cgroup2")) {
			snprintf(buf, size, "%s", m->mnt_dir);
			rc = 0;
			break;
		}
	}
	endmntent(f);
	return rc;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* depth-first below <dir> (path <rel> under the root): each directory whose inode number is
 * one of the sorted <ids> gets its path; stops when all are found */
static void walk(int dir, char *rel, size_t len, size_t cap, const uint64_t *ids, size_t n,
		 char **paths, size_t *left, int depth)
{
	DIR *d;
	struct dirent *e;

	if (depth > 32 || !*left)
		return;
	d = fdopendir(dir);
	if (!d) {
		close(dir);
		return;
	}
	while (*left && (e = readdir(d))) {
		const uint64_t *hit;
		struct stat st;
		size_t l;
		int sub;

		if (e->d_type != DT_DIR || e->d_name[0] == '.')
			continue;
		l = strlen(e->d_name);
		if (len + 1 + l + 1 > cap)
			continue;
		sub = openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (sub < 0)
			continue;
		if (fstat(sub, &st)) {
			close(sub);
			continue;
		}
		rel[len] = '/';
		memcpy(rel + len + 1, e->d_name, l + 1);
		hit = bsearch(&(uint64_t){ st.st_ino }, ids, n, sizeof(*ids), cmp_u64);
		if (hit && !paths[hit - ids] && (paths[hit - ids] = strdup(rel)))
			(*left)--;
		walk(sub, rel, len + 1 + l, cap, ids, n, paths, left, depth + 1);
		rel[len] = 0;
	}
	closedir(d);
}

size_t agent_cgroup_paths(const char *root, const uint64_t *ids, size_t n, char **paths)
{
	char rel[4096] = "";
	struct stat st;
	size_t left = n, i;
	int fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	for (i = 0; i < n; i++)
		paths[i] = NULL;
	if (fd < 0)
		return 0;
	if (!fstat(fd, &st)) {
		const uint64_t *hit =
			bsearch(&(uint64_t){ st.st_ino }, ids, n, sizeof(*ids), cmp_u64);

		if (hit && (paths[hit - ids] = strdup("/")))
			left--;
	}
	walk(fd, rel, 0, sizeof(rel), ids, n, paths, &left, 0);
	return n - left;
}

int agent_cgroup_populated(const char *root, const char *path)
{
	char file[4400], data[256], *p;

	if (!strcmp(path, "/"))
		return 1; /* the root has no cgroup.events, and is never empty */
	snprintf(file, sizeof(file), "%s%s/cgroup.events", root, strcmp(path, "/") ? path : "");
	if (read_small(file, data, sizeof(data)) < 0)
		return 0; /* gone */
	p = strstr(data, "populated ");
	return !p || p[10] != '0';
}
