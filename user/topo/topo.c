/*
 * topo.c - the CPU topology snapshot behind topo.h: read sysfs once, answer from arrays.
 *
 * The snapshot is immutable once published through an atomic pointer, so readers take no
 * lock. Building and replacing it happens under one mutex. A replaced snapshot is kept on a
 * list until exit rather than freed: a thread may still be reading it, and a snapshot is
 * small (a few words per CPU) and replaced only by kp_topo_reset() or a hot-plugged CPU.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/core.h"
#include "topo.h"

struct cpu_entry {
	bool present; /* has a topology directory */
	bool online;
	int core_id;
	int package;
	int die;
	int numa;
	long raw_cluster; /* topology/cluster_id, -1 when absent or invalid */
	int l3_first; /* lowest CPU sharing its L3, -1 when unknown */
	int cluster; /* dense index */
};

struct topo {
	struct topo *retired_next;
	char *root;
	int ncpu; /* entries in cpu[] */
	struct cpu_entry *cpu;
	int nnodes;
	int *nodes; /* numa node ids, ascending */
	int nclusters;
	enum kp_cluster_source cluster_source;
};

static pthread_mutex_t topo_lock = PTHREAD_MUTEX_INITIALIZER;
static struct topo *current; /* read with __atomic_load_n(ACQUIRE) */
static struct topo *retired;

static void topo_free(struct topo *t)
{
	if (!t)
		return;
	free(t->root);
	free(t->cpu);
	free(t->nodes);
	free(t);
}

__attribute__((destructor)) static void topo_cleanup(void)
{
	struct topo *t, *next;

	pthread_mutex_lock(&topo_lock);
	topo_free(current);
	current = NULL;
	for (t = retired; t; t = next) {
		next = t->retired_next;
		topo_free(t);
	}
	retired = NULL;
	pthread_mutex_unlock(&topo_lock);
}

static int read_long_at(const char *root, const char *rel, long *val)
{
	char path[PATH_MAX];

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", root, rel) >= sizeof(path))
		return -ENAMETOOLONG;
	return kp_read_long(path, val);
}

static int read_list_at(const char *root, const char *rel, int **list)
{
	char path[PATH_MAX], *buf;
	int n, err;

	*list = NULL;
	if ((size_t)snprintf(path, sizeof(path), "%s/%s", root, rel) >= sizeof(path))
		return -ENAMETOOLONG;
	err = kp_read_file(path, &buf, NULL);
	if (err)
		return err;
	n = kp_parse_cpu_list(buf, list);
	free(buf);
	return n;
}

/* highest N of the cpuN directories, or -1 */
static int max_cpu_dir(const char *root)
{
	char path[PATH_MAX];
	struct dirent *de;
	int max = -1;
	DIR *d;

	snprintf(path, sizeof(path), "%s/devices/system/cpu", root);
	d = opendir(path);
	if (!d)
		return -1;
	while ((de = readdir(d))) {
		char *end;
		long n;

		if (strncmp(de->d_name, "cpu", 3) || de->d_name[3] < '0' || de->d_name[3] > '9')
			continue;
		n = strtol(de->d_name + 3, &end, 10);
		if (*end || n > INT_MAX / 2)
			continue;
		if (n > max)
			max = (int)n;
	}
	closedir(d);
	return max;
}

static bool valid_cluster_id(long v)
{
	return v >= 0 && v != 0xffff && v != 0xffffffffL;
}

/* lowest CPU sharing the level-3 cache of <cpu>, or -1 */
static int l3_first_cpu(const char *root, int cpu)
{
	char rel[128];
	int idx, first = -1;

	for (idx = 0; idx < 16 && first < 0; idx++) {
		long level;
		int *cpus, n;

		snprintf(rel, sizeof(rel), "devices/system/cpu/cpu%d/cache/index%d/level", cpu,
			 idx);
		if (read_long_at(root, rel, &level))
			break; /* indexes are contiguous */
		if (level != 3)
			continue;
		snprintf(rel, sizeof(rel), "devices/system/cpu/cpu%d/cache/index%d/shared_cpu_list",
			 cpu, idx);
		n = read_list_at(root, rel, &cpus);
		if (n > 0)
			first = cpus[0];
		free(cpus);
	}
	return first;
}

static int read_cpus(struct topo *t)
{
	int *online = NULL, nonline, cpu, i;
	char rel[128];

	nonline = read_list_at(t->root, "devices/system/cpu/online", &online);
	for (cpu = 0; cpu < t->ncpu; cpu++) {
		struct cpu_entry *e = &t->cpu[cpu];
		long v;

		e->numa = -1;
		e->raw_cluster = -1;
		e->l3_first = -1;
		snprintf(rel, sizeof(rel), "devices/system/cpu/cpu%d/topology/physical_package_id",
			 cpu);
		if (read_long_at(t->root, rel, &v))
			continue;
		e->present = true;
		e->package = v < 0 ? 0 : (int)v;
		snprintf(rel, sizeof(rel), "devices/system/cpu/cpu%d/topology/core_id", cpu);
		e->core_id = read_long_at(t->root, rel, &v) ? cpu : (int)v;
		snprintf(rel, sizeof(rel), "devices/system/cpu/cpu%d/topology/die_id", cpu);
		e->die = read_long_at(t->root, rel, &v) || v < 0 ? 0 : (int)v;
		snprintf(rel, sizeof(rel), "devices/system/cpu/cpu%d/topology/cluster_id", cpu);
		if (!read_long_at(t->root, rel, &v) && valid_cluster_id(v))
			e->raw_cluster = v;
		if (nonline < 0) {
			e->online = true; /* no online file: assume what has a topology runs */
		} else {
			for (i = 0; i < nonline && online[i] != cpu; i++)
				;
			e->online = i < nonline;
		}
	}
	free(online);
	return 0;
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

static int read_nodes(struct topo *t)
{
	char path[PATH_MAX], rel[128];
	size_t cap = 0;
	struct dirent *de;
	DIR *d;
	int i, cpu;

	snprintf(path, sizeof(path), "%s/devices/system/node", t->root);
	d = opendir(path);
	while (d && (de = readdir(d))) {
		char *end;
		long id;

		if (strncmp(de->d_name, "node", 4) || de->d_name[4] < '0' || de->d_name[4] > '9')
			continue;
		id = strtol(de->d_name + 4, &end, 10);
		if (*end || id > INT_MAX)
			continue;
		if (kp_grow((void **)&t->nodes, &cap, (size_t)t->nnodes + 1, sizeof(int))) {
			closedir(d);
			return -ENOMEM;
		}
		t->nodes[t->nnodes++] = (int)id;
	}
	if (d)
		closedir(d);
	if (!t->nnodes) {
		/* a kernel without NUMA: one node 0 holding every CPU */
		t->nodes = malloc(sizeof(int));
		if (!t->nodes)
			return -ENOMEM;
		t->nodes[0] = 0;
		t->nnodes = 1;
		for (cpu = 0; cpu < t->ncpu; cpu++)
			if (t->cpu[cpu].present)
				t->cpu[cpu].numa = 0;
		return 0;
	}
	qsort(t->nodes, (size_t)t->nnodes, sizeof(int), cmp_int);
	for (i = 0; i < t->nnodes; i++) {
		int *cpus, n, j;

		snprintf(rel, sizeof(rel), "devices/system/node/node%d/cpulist", t->nodes[i]);
		n = read_list_at(t->root, rel, &cpus);
		if (n == -ENOMEM)
			return n;
		for (j = 0; j < n; j++)
			if (cpus[j] >= 0 && cpus[j] < t->ncpu && t->cpu[cpus[j]].present)
				t->cpu[cpus[j]].numa = t->nodes[i];
		free(cpus);
	}
	return 0;
}

/* the key that groups <e> into its cluster under <src> */
static void cluster_key(const struct cpu_entry *e, enum kp_cluster_source src, long key[2])
{
	switch (src) {
	case KP_CLUSTER_SYSFS:
		key[0] = e->package;
		key[1] = e->raw_cluster;
		break;
	case KP_CLUSTER_L3:
		key[0] = e->l3_first;
		key[1] = 0;
		break;
	case KP_CLUSTER_DIE:
		key[0] = e->package;
		key[1] = e->die;
		break;
	default:
		key[0] = e->package;
		key[1] = 0;
		break;
	}
}

static int assign_clusters(struct topo *t)
{
	bool all_sysfs = true, all_l3 = true;
	struct ckey {
		long a, b;
	} *keys = NULL;
	size_t cap = 0;
	int cpu, i, npresent = 0;

	for (cpu = 0; cpu < t->ncpu; cpu++) {
		if (!t->cpu[cpu].present)
			continue;
		npresent++;
		all_sysfs &= t->cpu[cpu].raw_cluster >= 0;
	}
	if (!all_sysfs) {
		for (cpu = 0; cpu < t->ncpu; cpu++) {
			if (!t->cpu[cpu].present)
				continue;
			t->cpu[cpu].l3_first = l3_first_cpu(t->root, cpu);
			all_l3 &= t->cpu[cpu].l3_first >= 0;
		}
	}
	if (npresent == 0)
		t->cluster_source = KP_CLUSTER_PACKAGE;
	else if (all_sysfs)
		t->cluster_source = KP_CLUSTER_SYSFS;
	else if (all_l3)
		t->cluster_source = KP_CLUSTER_L3;
	else {
		char path[PATH_MAX];

		snprintf(path, sizeof(path), "%s/devices/system/cpu/cpu0/topology/die_id", t->root);
		t->cluster_source = access(path, F_OK) == 0 ? KP_CLUSTER_DIE : KP_CLUSTER_PACKAGE;
	}
	/* ascending CPUs: a new key is a new cluster, so clusters are ordered by lowest CPU */
	for (cpu = 0; cpu < t->ncpu; cpu++) {
		long key[2];

		if (!t->cpu[cpu].present)
			continue;
		cluster_key(&t->cpu[cpu], t->cluster_source, key);
		for (i = 0; i < t->nclusters; i++)
			if (keys[i].a == key[0] && keys[i].b == key[1])
				break;
		if (i == t->nclusters) {
			if (kp_grow((void **)&keys, &cap, (size_t)i + 1, sizeof(*keys))) {
				free(keys);
				return -ENOMEM;
			}
			keys[i].a = key[0];
			keys[i].b = key[1];
			t->nclusters++;
		}
		t->cpu[cpu].cluster = i;
	}
	free(keys);
	return 0;
}

static int topo_build(struct topo **out)
{
	struct topo *t = calloc(1, sizeof(*t));
	int *possible = NULL, n, maxdir, err;

	*out = NULL;
	if (!t)
		return -ENOMEM;
	t->root = strdup(kp_sysfs());
	if (!t->root) {
		err = -ENOMEM;
		goto fail;
	}
	n = read_list_at(t->root, "devices/system/cpu/possible", &possible);
	t->ncpu = n > 0 ? possible[n - 1] + 1 : 0;
	free(possible);
	maxdir = max_cpu_dir(t->root);
	if (maxdir + 1 > t->ncpu)
		t->ncpu = maxdir + 1;
	if (t->ncpu <= 0) {
		err = -ENOENT;
		goto fail;
	}
	t->cpu = calloc((size_t)t->ncpu, sizeof(*t->cpu));
	if (!t->cpu) {
		err = -ENOMEM;
		goto fail;
	}
	err = read_cpus(t);
	if (!err)
		err = read_nodes(t);
	if (!err)
		err = assign_clusters(t);
	if (err)
		goto fail;
	*out = t;
	return 0;
fail:
	topo_free(t);
	return err;
}

static int topo_fail(int err)
{
	if (err == -ENOMEM)
		return kp_fail(COMMON_ERR_NOMEM, err, "out of memory reading the CPU topology");
	return kp_fail(LIBPERF_ERR_KERNEL_NOT_SUPPORT, err,
		       "cannot read the CPU topology from %s/devices/system/cpu: %s", kp_sysfs(),
		       strerror(-err));
}

/* Publish a new snapshot; <stale> is the one the caller found wanting (NULL: none). */
static int topo_refresh(struct topo *stale, struct topo **out)
{
	struct topo *t;
	int err = 0;

	pthread_mutex_lock(&topo_lock);
	t = current;
	if (!t || t == stale) {
		struct topo *fresh;

		err = topo_build(&fresh);
		if (!err) {
			if (t) {
				t->retired_next = retired;
				retired = t;
			}
			__atomic_store_n(&current, fresh, __ATOMIC_RELEASE);
			t = fresh;
		}
	}
	pthread_mutex_unlock(&topo_lock);
	*out = t;
	return err ? topo_fail(err) : 0;
}

static int topo_get(struct topo **out)
{
	struct topo *t = __atomic_load_n(&current, __ATOMIC_ACQUIRE);

	if (t) {
		*out = t;
		return 0;
	}
	return topo_refresh(NULL, out);
}

void kp_topo_reset(void)
{
	pthread_mutex_lock(&topo_lock);
	if (current) {
		current->retired_next = retired;
		retired = current;
		__atomic_store_n(&current, NULL, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&topo_lock);
}

static bool cpu_known(const struct topo *t, int cpu)
{
	return cpu >= 0 && cpu < t->ncpu && t->cpu[cpu].present;
}

/* the snapshot, re-read once if <cpu> appeared since (hotplug) */
static int topo_for_cpu(int cpu, struct topo **out)
{
	char path[PATH_MAX];
	struct topo *t;
	int err = topo_get(&t);

	if (err)
		return err;
	if (!cpu_known(t, cpu) && cpu >= 0) {
		snprintf(path, sizeof(path), "%s/devices/system/cpu/cpu%d/topology", t->root, cpu);
		if (access(path, F_OK) == 0) {
			err = topo_refresh(t, &t);
			if (err)
				return err;
		}
	}
	if (!cpu_known(t, cpu))
		return kp_fail(KPERF_ERR_INVALID_ID, -ENOENT,
			       "cpu %d does not exist: this machine has cpus 0-%d (see %s/devices/"
			       "system/cpu)",
			       cpu, t->ncpu - 1, t->root);
	*out = t;
	return 0;
}

int kp_topo_cpu(int cpu, struct CpuTopology *out)
{
	struct topo *t = __atomic_load_n(&current, __ATOMIC_ACQUIRE);
	int err;

	if (!t || !cpu_known(t, cpu)) {
		err = topo_for_cpu(cpu, &t);
		if (err)
			return err;
	}
	out->coreId = cpu;
	out->numaId = t->cpu[cpu].numa;
	out->socketId = t->cpu[cpu].package;
	return 0;
}

int kp_topo_cpu_info(int cpu, struct kp_cpu_info *out)
{
	struct topo *t;
	int err = topo_for_cpu(cpu, &t);

	if (err)
		return err;
	out->cpu = cpu;
	out->coreId = t->cpu[cpu].core_id;
	out->socketId = t->cpu[cpu].package;
	out->numaId = t->cpu[cpu].numa;
	out->dieId = t->cpu[cpu].die;
	out->clusterId = t->cpu[cpu].cluster;
	out->online = t->cpu[cpu].online;
	return 0;
}

int kp_topo_cpu_count(void)
{
	struct topo *t;
	int err = topo_get(&t);

	return err ? err : t->ncpu;
}

enum kp_group { GROUP_NUMA, GROUP_SOCKET, GROUP_CLUSTER };

static const char *const group_names[] = { "numa node", "socket", "cluster" };
/* libkperf's code for an id with no such group: a numa node it cannot read is
 * LIBPERF_ERR_KERNEL_NOT_SUPPORT, a cluster past the last one LIBPERF_ERR_CLUSTER_ID_OVERSIZE */
static const int group_missing_code[] = { LIBPERF_ERR_KERNEL_NOT_SUPPORT, KPERF_ERR_INVALID_ID,
					  LIBPERF_ERR_CLUSTER_ID_OVERSIZE };

static int group_of(const struct cpu_entry *e, enum kp_group g)
{
	return g == GROUP_NUMA ? e->numa : g == GROUP_SOCKET ? e->package : e->cluster;
}

/* "0-3" style list of the ids of group <g> that exist, for messages */
static void existing_ids(const struct topo *t, enum kp_group g, char *buf, size_t size)
{
	int *ids = NULL, n = 0, cpu, i, lo;
	size_t cap = 0, len = 0;

	buf[0] = '\0';
	if (g == GROUP_NUMA) {
		ids = malloc((size_t)t->nnodes * sizeof(int));
		if (!ids)
			return;
		memcpy(ids, t->nodes, (size_t)t->nnodes * sizeof(int));
		n = t->nnodes;
	} else {
		for (cpu = 0; cpu < t->ncpu; cpu++) {
			if (!t->cpu[cpu].present)
				continue;
			if (kp_grow((void **)&ids, &cap, (size_t)n + 1, sizeof(int)))
				break;
			ids[n++] = group_of(&t->cpu[cpu], g);
		}
		qsort(ids, (size_t)n, sizeof(int), cmp_int);
	}
	for (i = 0; i < n && len + 24 < size;) {
		lo = ids[i];
		while (i + 1 < n && ids[i + 1] <= ids[i] + 1)
			i++;
		len += (size_t)snprintf(buf + len, size - len, "%s%d", len ? "," : "", lo);
		if (ids[i] != lo)
			len += (size_t)snprintf(buf + len, size - len, "-%d", ids[i]);
		i++;
	}
	free(ids);
}

static int group_cpus(enum kp_group g, int id, int **cpus)
{
	struct topo *t;
	int err = topo_get(&t), n = 0, cpu, total = 0, i;
	bool exists = false;
	char ids[256];

	*cpus = NULL;
	if (err)
		return err;
	if (g == GROUP_NUMA) {
		for (i = 0; i < t->nnodes; i++)
			exists |= t->nodes[i] == id;
	}
	for (cpu = 0; cpu < t->ncpu; cpu++) {
		if (t->cpu[cpu].present && group_of(&t->cpu[cpu], g) == id) {
			total++;
			exists = true;
		}
	}
	if (!exists || id < 0) {
		existing_ids(t, g, ids, sizeof(ids));
		return kp_fail(group_missing_code[g], -ENOENT,
			       "%s %d does not exist: this machine has %s%s %s", group_names[g], id,
			       group_names[g], strchr(ids, ',') || strchr(ids, '-') ? "s" : "",
			       ids);
	}
	if (!total)
		return 0;
	*cpus = malloc((size_t)total * sizeof(int));
	if (!*cpus)
		return kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
	for (cpu = 0; cpu < t->ncpu; cpu++)
		if (t->cpu[cpu].present && group_of(&t->cpu[cpu], g) == id)
			(*cpus)[n++] = cpu;
	return n;
}

int kp_topo_numa_cpus(int node, int **cpus)
{
	return group_cpus(GROUP_NUMA, node, cpus);
}

int kp_topo_socket_cpus(int socket, int **cpus)
{
	return group_cpus(GROUP_SOCKET, socket, cpus);
}

int kp_topo_cluster_cpus(int cluster, int **cpus)
{
	return group_cpus(GROUP_CLUSTER, cluster, cpus);
}

int kp_topo_numa_nodes(int **ids)
{
	struct topo *t;
	int err = topo_get(&t);

	*ids = NULL;
	if (err)
		return err;
	*ids = malloc((size_t)t->nnodes * sizeof(int));
	if (!*ids)
		return kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
	memcpy(*ids, t->nodes, (size_t)t->nnodes * sizeof(int));
	return t->nnodes;
}

int kp_topo_cluster_count(void)
{
	struct topo *t;
	int err = topo_get(&t);

	return err ? err : t->nclusters;
}

enum kp_cluster_source kp_topo_cluster_source(void)
{
	struct topo *t;

	return topo_get(&t) ? KP_CLUSTER_PACKAGE : t->cluster_source;
}

const char *kp_topo_cluster_source_name(enum kp_cluster_source src)
{
	switch (src) {
	case KP_CLUSTER_SYSFS:
		return "cluster_id";
	case KP_CLUSTER_L3:
		return "l3";
	case KP_CLUSTER_DIE:
		return "die";
	default:
		return "package";
	}
}
