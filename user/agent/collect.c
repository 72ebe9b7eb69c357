/*
 * collect.c - the in-kernel syscall summary by cgroup (one row per cgroup, command name and
 * syscall, cumulative: KperfTraceOpts.summaryByCgroup) folded into a bounded table of series
 * (workload, comm, syscall), and the counters.
 *
 * The kernel counts each call under the cgroup its task is in when it returns, so a process
 * that lives a millisecond is attributed like any other, and nothing is read from /proc per
 * process. A cgroup id is resolved once, to its path (one walk of the cgroup2 mount for the
 * ids new at a fold) and its workload; a row's comm label is fixed by its workload's
 * first-come --top-comm names, and kept while the workload has rows: so every series only ever
 * grows (a counter that went down would read as a reset to Prometheus). A series' value is
 * what emptied cgroups left (retired) plus the current rows. A cgroup whose rows stopped
 * moving is checked for processes (cgroup.events) before the summary is read: when it has
 * none, the rows then read are its last ones; they go into the retired totals and are deleted
 * from the kernel's map (KperfTraceForgetCgroups), which therefore holds the cgroups in use
 * only. Bounds: --max-workloads cgroups with labels of their own (then "[other]"),
 * --top-comm command names per workload (then "other"); a series whose workload has no
 * cgroup in use and that has not moved for --grace seconds is dropped.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/resource.h>

#include "agent.h"
#include "kperf/kperf.h"

#define OTHER_COMM "other"
#define W_OTHER "[other]"
#define W_EXITED "[exited]"
#define W_OUTSIDE "[outside namespace]"

struct cg_entry {
	uint64_t cgid;
	int workload;
	char *path; /* NULL: not found (removed, or out of the mount's sight) */
	uint64_t total; /* its calls at the last fold */
	double checked; /* when it was last found holding processes (monotonic s) */
	bool idle; /* total did not move at the last fold: check whether it is empty */
	bool final; /* empty before this fold's read: its rows are the last */
	bool special; /* outside the namespace, or the overflow rows: never final */
};

struct workload {
	struct agent_identity id;
	bool special; /* [other], [exited], [outside namespace]: not counted in the bound */
	unsigned live; /* live processes at the last fold */
	char (*comms)[16]; /* the command names with a label of their own */
	unsigned ncomms, capcomms;
};

struct agent_collector {
	struct agent_config cfg; /* the bounds (reconfigurable); strings not owned */
	int trace_pd, count_pd;
	struct cg_entry *cgs; /* sorted by cgid */
	size_t ncgs;
	char cgroot[256]; /* the cgroup2 mount: where ids are looked for */
	struct workload *wl;
	size_t nwl, capwl;
	struct agent_series *series;
	size_t nseries, capseries;
	int *index; /* open addressing over series, -1 empty */
	size_t index_cap;
	unsigned *live_mark; /* per series: the fold that last saw a live process in it */
	unsigned gen;
	struct agent_counter *counters;
	size_t ncounters;
	struct agent_health health;
};

static double mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static uint64_t series_hash(int w, const char *comm, int nr)
{
	uint64_t h = 1469598103934665603ULL;

	h = (h ^ (uint64_t)(unsigned)w) * 1099511628211ULL;
	h = (h ^ (uint64_t)(unsigned)nr) * 1099511628211ULL;
	while (*comm)
		h = (h ^ (unsigned char)*comm++) * 1099511628211ULL;
	return h;
}

static int index_rebuild(struct agent_collector *c, size_t want)
{
	size_t cap = 64, i;
	int *idx;

	while (cap < want * 2)
		cap *= 2;
	idx = malloc(cap * sizeof(*idx));
	if (!idx)
		return -ENOMEM;
	for (i = 0; i < cap; i++)
		idx[i] = -1;
	for (i = 0; i < c->nseries; i++) {
		const struct agent_series *s = &c->series[i];
		size_t h = series_hash(s->workload, s->comm, s->nr) & (cap - 1);

		while (idx[h] >= 0)
			h = (h + 1) & (cap - 1);
		idx[h] = (int)i;
	}
	free(c->index);
	c->index = idx;
	c->index_cap = cap;
	return 0;
}

/* The series of (w, comm, nr), created when new; -1 out of memory. */
static int series_get(struct agent_collector *c, int w, const char *comm, int nr, const char *name,
		      double now)
{
	size_t h;
	struct agent_series *s;

	if (c->index_cap < (c->nseries + 1) * 2 && index_rebuild(c, c->nseries + 1))
		return -1;
	h = series_hash(w, comm, nr) & (c->index_cap - 1);
	while (c->index[h] >= 0) {
		s = &c->series[c->index[h]];
		if (s->workload == w && s->nr == nr && !strcmp(s->comm, comm))
			return c->index[h];
		h = (h + 1) & (c->index_cap - 1);
	}
	if (c->nseries == c->capseries) {
		size_t cap = c->capseries ? c->capseries * 2 : 64;
		void *ns = realloc(c->series, cap * sizeof(*c->series));
		void *nm;

		if (!ns)
			return -1;
		c->series = ns;
		nm = realloc(c->live_mark, cap * sizeof(*c->live_mark));
		if (!nm)
			return -1;
		c->live_mark = nm;
		c->capseries = cap;
	}
	s = &c->series[c->nseries];
	memset(s, 0, sizeof(*s));
	s->workload = w;
	s->nr = nr;
	snprintf(s->comm, sizeof(s->comm), "%s", comm);
	snprintf(s->name, sizeof(s->name), "%s", name);
	s->last_change = now;
	c->live_mark[c->nseries] = 0;
	c->index[h] = (int)c->nseries;
	return (int)c->nseries++;
}

static int workload_add(struct agent_collector *c, const struct agent_identity *id, bool special)
{
	if (c->nwl == c->capwl) {
		size_t cap = c->capwl ? c->capwl * 2 : 16;
		void *n = realloc(c->wl, cap * sizeof(*c->wl));

		if (!n)
			return -1;
		c->wl = n;
		c->capwl = cap;
	}
	memset(&c->wl[c->nwl], 0, sizeof(c->wl[0]));
	c->wl[c->nwl].id = *id;
	c->wl[c->nwl].special = special;
	return (int)c->nwl++;
}

static int workload_special(struct agent_collector *c, const char *name)
{
	struct agent_identity id = { 0 };
	size_t i;

	for (i = 0; i < c->nwl; i++)
		if (c->wl[i].special && !strcmp(c->wl[i].id.cgroup, name))
			return (int)i;
	snprintf(id.cgroup, sizeof(id.cgroup), "%s", name);
	return workload_add(c, &id, true);
}

static int workload_of_path(struct agent_collector *c, const char *path)
{
	struct agent_identity id;
	size_t i, real = 0;

	for (i = 0; i < c->nwl; i++) {
		if (c->wl[i].special)
			continue;
		real++;
		if (!strcmp(c->wl[i].id.cgroup, path))
			return (int)i;
	}
	if (real >= c->cfg.max_workloads) {
		c->health.series_refused++;
		return workload_special(c, W_OTHER);
	}
	agent_identity_from_path(path, c->cfg.kubelet_logs, &id);
	return workload_add(c, &id, false);
}

/* The comm label a new process of workload <w> gets. */
static const char *comm_slot(struct agent_collector *c, int w, const char *comm)
{
	struct workload *wl = &c->wl[w];
	unsigned i;

	for (i = 0; i < wl->ncomms; i++)
		if (!strcmp(wl->comms[i], comm))
			return wl->comms[i];
	if (wl->ncomms >= c->cfg.top_comm || !strcmp(comm, OTHER_COMM))
		return OTHER_COMM;
	if (wl->ncomms == wl->capcomms) {
		unsigned cap = wl->capcomms ? wl->capcomms * 2 : 4;
		void *n = realloc(wl->comms, cap * sizeof(*wl->comms));

		if (!n)
			return OTHER_COMM;
		wl->comms = n;
		wl->capcomms = cap;
	}
	snprintf(wl->comms[wl->ncomms], sizeof(wl->comms[0]), "%s", comm);
	return wl->comms[wl->ncomms++];
}

static void stat_add(struct agent_stat *s, const struct PmuTraceSummary *r)
{
	int i;

	s->calls += r->calls;
	s->errors += r->errors;
	s->total_ns += r->totalNs;
	for (i = 0; i < KPERF_HIST_SLOTS; i++) {
		/* hist[i] holds [2^i, 2^(i+1)) ns: below the bound 2^(i+1) */
		int b = i + 1 - AGENT_HIST_FIRST_BIT;

		if (!r->hist[i])
			continue;
		if (b < 0)
			b = 0;
		if (b < AGENT_HIST_BUCKETS)
			s->buckets[b] += r->hist[i];
		/* beyond the last bound: only in +Inf (calls) */
	}
}

/* Step one of a fold: the cgroups whose rows stopped moving, empty now? A cgroup with no
 * path (gone, or out of sight) has no process the agent could ever find: final when idle. */
static void check_empty(struct agent_collector *c, double now)
{
	double period = c->cfg.grace_s / 3.0;
	size_t i;

	if (period > 10)
		period = 10;
	for (i = 0; i < c->ncgs; i++) {
		struct cg_entry *e = &c->cgs[i];

		if (!e->idle || e->special || now - e->checked < period)
			continue;
		if (e->path && agent_cgroup_populated(c->cgroot, e->path))
			e->checked = now;
		else
			e->final = true;
	}
}

/* Drop series of gone workloads idle past the grace period, then workloads nothing refers to. */
static void expire(struct agent_collector *c, double now)
{
	size_t i, j, k;
	int *remap;
	bool changed = false;

	for (i = j = 0; i < c->nseries; i++) {
		struct agent_series *s = &c->series[i];
		bool keep = c->live_mark[i] == c->gen || now - s->last_change <= c->cfg.grace_s;

		if (keep) {
			c->live_mark[j] = c->live_mark[i];
			c->series[j++] = *s;
		} else {
			changed = true;
		}
	}
	c->nseries = j;
	if (!changed)
		return;
	remap = calloc(c->nwl ? c->nwl : 1, sizeof(*remap));
	if (!remap)
		return;
	for (i = 0; i < c->nwl; i++)
		remap[i] = c->wl[i].live ? 1 : 0;
	for (i = 0; i < c->nseries; i++)
		remap[c->series[i].workload] = 1;
	for (i = 0; i < c->ncgs; i++)
		remap[c->cgs[i].workload] = 1;
	for (i = j = 0; i < c->nwl; i++) {
		if (!remap[i]) {
			free(c->wl[i].comms);
			remap[i] = -1;
			continue;
		}
		remap[i] = (int)j;
		c->wl[j++] = c->wl[i];
	}
	c->nwl = j;
	for (i = 0; i < c->nseries; i++)
		c->series[i].workload = remap[c->series[i].workload];
	for (i = 0; i < c->ncgs; i++)
		c->cgs[i].workload = remap[c->cgs[i].workload];
	free(remap);
	/* a workload's comm labels: those its series still use, once it has no rows left (a
	 * row's label must not change: it would move its calls from one series to another) */
	for (i = 0; i < c->nwl; i++) {
		struct workload *w = &c->wl[i];

		if (w->live)
			continue;
		for (k = j = 0; k < w->ncomms; k++) {
			bool used = false;
			size_t m;

			for (m = 0; m < c->nseries && !used; m++)
				used = c->series[m].workload == (int)i &&
				       !strcmp(c->series[m].comm, w->comms[k]);
			if (used)
				memmove(w->comms[j++], w->comms[k], sizeof(w->comms[0]));
		}
		w->ncomms = (unsigned)j;
	}
	index_rebuild(c, c->nseries);
}

static int cmp_cg(const void *a, const void *b)
{
	const struct cg_entry *x = a, *y = b;

	return (x->cgid > y->cgid) - (x->cgid < y->cgid);
}

static struct cg_entry *cg_find(struct agent_collector *c, uint64_t cgid)
{
	struct cg_entry k = { .cgid = cgid };

	return c->ncgs ? bsearch(&k, c->cgs, c->ncgs, sizeof(k), cmp_cg) : NULL;
}

/* The cgroups of <rows> (sorted by id) not known yet: their paths by one walk, and their
 * workloads. -1 out of memory (tried again at the next fold). */
static int resolve_new(struct agent_collector *c, const struct KperfTraceCgroupSummary *rows, int n,
		       double now)
{
	uint64_t *ids = NULL;
	char **paths = NULL;
	size_t k = 0, i;
	struct cg_entry *nc;
	int r;

	for (r = 0; r < n; r++)
		if ((!r || rows[r].cgroupId != rows[r - 1].cgroupId) &&
		    !cg_find(c, rows[r].cgroupId))
			k++;
	if (!k)
		return 0;
	ids = malloc(k * sizeof(*ids));
	paths = calloc(k, sizeof(*paths));
	nc = realloc(c->cgs, (c->ncgs + k) * sizeof(*c->cgs));
	if (!ids || !paths || !nc) {
		free(ids);
		free(paths);
		if (nc)
			c->cgs = nc;
		return -1;
	}
	c->cgs = nc;
	for (r = 0, k = 0; r < n; r++)
		if ((!r || rows[r].cgroupId != rows[r - 1].cgroupId) &&
		    !cg_find(c, rows[r].cgroupId))
			ids[k++] = rows[r].cgroupId;
	/* the special ids sort first (0) and last (~0): never walked for */
	i = ids[0] == KPERF_TRACE_CGROUP_OUTSIDE;
	agent_cgroup_paths(c->cgroot, ids + i, k - i - (ids[k - 1] == KPERF_TRACE_CGROUP_NONE),
			   paths + i);
	for (i = 0; i < k; i++) {
		struct cg_entry *e = &c->cgs[c->ncgs + i];

		memset(e, 0, sizeof(*e));
		e->cgid = ids[i];
		e->path = paths[i];
		e->checked = now;
		e->special = ids[i] == KPERF_TRACE_CGROUP_OUTSIDE ||
			     ids[i] == KPERF_TRACE_CGROUP_NONE;
		if (ids[i] == KPERF_TRACE_CGROUP_OUTSIDE) {
			e->workload = workload_special(c, W_OUTSIDE);
		} else if (ids[i] == KPERF_TRACE_CGROUP_NONE) {
			e->workload = workload_special(c, W_OTHER); /* the summary map was full */
		} else if (!e->path) {
			c->health.exited_unresolved++;
			e->workload = workload_special(c, W_EXITED);
		} else {
			e->workload = workload_of_path(c, e->path);
		}
	}
	c->ncgs += k;
	qsort(c->cgs, c->ncgs, sizeof(*c->cgs), cmp_cg);
	free(ids);
	free(paths);
	return 0;
}

static int fold_syscalls(struct agent_collector *c, double now)
{
	struct KperfTraceCgroupSummary *rows = NULL;
	uint64_t *gone = NULL;
	size_t ngone = 0, s, j;
	int n, i, k;
	struct PmuTraceStats st;

	check_empty(c, now);
	n = KperfTraceReadCgroupSummary(c->trace_pd, &rows);
	if (n < 0)
		return -1;
	if (resolve_new(c, rows, n, now) || (c->ncgs && !(gone = calloc(c->ncgs, sizeof(*gone))))) {
		KperfTraceCgroupSummaryFree(rows);
		return -1;
	}
	c->gen++;
	for (s = 0; s < c->nseries; s++)
		c->series[s].now = c->series[s].retired;
	for (s = 0; s < c->nwl; s++)
		c->wl[s].live = 0;
	for (j = 0; j < c->ncgs; j++)
		c->cgs[j].workload = -1 - c->cgs[j].workload; /* < 0: not seen in this read */
	for (i = 0; i < n; i = k) {
		struct cg_entry *e = cg_find(c, rows[i].cgroupId);
		uint64_t total = 0;

		for (k = i; k < n && rows[k].cgroupId == rows[i].cgroupId; k++)
			total += rows[k].s.calls;
		if (!e)
			continue;
		e->workload = -1 - e->workload;
		e->idle = e->total == total;
		e->total = total;
		for (int r = i; r < k; r++) {
			const char *comm = e->special ? OTHER_COMM :
							comm_slot(c, e->workload, rows[r].s.comm);
			int si = series_get(c, e->workload, comm, rows[r].s.nr, rows[r].s.funcs,
					    now);

			if (si < 0)
				continue;
			stat_add(&c->series[si].now, &rows[r].s);
			if (e->final)
				stat_add(&c->series[si].retired, &rows[r].s);
			else
				c->live_mark[si] = c->gen;
		}
		if (e->final)
			gone[ngone++] = e->cgid;
		else
			c->wl[e->workload].live++;
	}
	KperfTraceCgroupSummaryFree(rows);
	if (ngone)
		KperfTraceForgetCgroups(c->trace_pd, gone, (unsigned)ngone);
	free(gone);
	/* the entries that go: emptied, or without rows any more */
	for (j = s = 0; j < c->ncgs; j++) {
		struct cg_entry *e = &c->cgs[j];

		if (e->workload < 0 || e->final) {
			free(e->path);
			continue;
		}
		c->cgs[s++] = *e;
	}
	c->ncgs = s;
	c->health.processes = (unsigned)c->ncgs;
	for (s = 0; s < c->nseries; s++) {
		struct agent_series *se = &c->series[s];

		if (se->now.calls != se->last_calls) {
			se->last_calls = se->now.calls;
			se->last_change = now;
		}
	}
	if (PmuTraceGetStats(c->trace_pd, &st) == 0) {
		c->health.summary_dropped = st.summaryDropped;
		c->health.fallback = st.fallback;
	}
	expire(c, now);
	return 0;
}

static void fold_counters(struct agent_collector *c)
{
	struct PmuData *d = NULL;
	int n, i;
	size_t k;

	n = PmuRead(c->count_pd, &d);
	for (i = 0; i < n; i++) {
		for (k = 0; k < c->ncounters; k++) {
			if (d[i].evt && !strcmp(d[i].evt, c->counters[k].event)) {
				c->counters[k].total += d[i].count;
				break;
			}
		}
	}
	if (n > 0)
		PmuDataFree(d);
}

int agent_collect_fold(struct agent_collector *c)
{
	double now = mono_s();
	int rc = 0;

	if (c->trace_pd >= 0)
		rc = fold_syscalls(c, now);
	if (c->count_pd >= 0)
		fold_counters(c);
	return rc;
}

static int count_bpf_programs(void)
{
	char path[300], link[64];
	struct dirent *e;
	int n = 0;
	DIR *d = opendir("/proc/self/fd");

	if (!d)
		return -1;
	while ((e = readdir(d))) {
		ssize_t l;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/fd/%s", e->d_name);
		l = readlink(path, link, sizeof(link) - 1);
		if (l <= 0)
			continue;
		link[l] = 0;
		n += !strcmp(link, "anon_inode:bpf-prog");
	}
	closedir(d);
	return n;
}

int agent_collect_render(struct agent_collector *c, FILE *f, bool openmetrics)
{
	struct agent_identity *ids;
	struct agent_metrics_view v = { 0 };
	size_t i;
	int rc;

	agent_collect_fold(c);
	ids = calloc(c->nwl ? c->nwl : 1, sizeof(*ids));
	if (!ids)
		return -1;
	for (i = 0; i < c->nwl; i++)
		ids[i] = c->wl[i].id;
	v.series = c->series;
	v.nseries = c->nseries;
	v.workloads = ids;
	v.nworkloads = c->nwl;
	v.counters = c->counters;
	v.ncounters = c->ncounters;
	v.health = &c->health;
	v.bpf_programs = count_bpf_programs();
	rc = agent_metrics_write(f, &v, openmetrics);
	free(ids);
	return rc;
}

size_t agent_collect_series(struct agent_collector *c)
{
	return c->nseries;
}

void agent_collect_reconfigure(struct agent_collector *c, const struct agent_config *cfg)
{
	c->cfg.top_comm = cfg->top_comm;
	c->cfg.max_workloads = cfg->max_workloads;
	c->cfg.grace_s = cfg->grace_s;
	memcpy(c->cfg.kubelet_logs, cfg->kubelet_logs, sizeof(c->cfg.kubelet_logs));
}

/* A Prometheus name for a counted event: kperf_<event>_total, seconds for the clocks. */
static void counter_name(struct agent_counter *k, const char *evt)
{
	char base[64];
	size_t i;

	snprintf(k->event, sizeof(k->event), "%s", evt);
	snprintf(base, sizeof(base), "%s", evt);
	for (i = 0; base[i]; i++)
		if (!((base[i] >= 'a' && base[i] <= 'z') || (base[i] >= '0' && base[i] <= '9')))
			base[i] = base[i] >= 'A' && base[i] <= 'Z' ? (char)(base[i] - 'A' + 'a') :
								     '_';
	k->scale = 1;
	if (!strcmp(evt, "task-clock") || !strcmp(evt, "cpu-clock")) {
		snprintf(k->metric, sizeof(k->metric), "kperf_%s_seconds_total", base);
		k->scale = 1e-9;
	} else if (!strcmp(evt, "cs")) {
		snprintf(k->metric, sizeof(k->metric), "kperf_context_switches_total");
	} else if (!strcmp(evt, "faults")) {
		snprintf(k->metric, sizeof(k->metric), "kperf_page_faults_total");
	} else {
		snprintf(k->metric, sizeof(k->metric), "kperf_%s_total", base);
	}
}

static int split(const char *s, char ***out)
{
	char *copy = strdup(s), *p, *save = NULL, **v = NULL;
	int n = 0;

	if (!copy)
		return -1;
	for (p = strtok_r(copy, ",", &save); p; p = strtok_r(NULL, ",", &save)) {
		char **nv = realloc(v, sizeof(*v) * (size_t)(n + 2));

		if (!nv) {
			free(v);
			free(copy);
			return -1;
		}
		v = nv;
		v[n++] = p;
		v[n] = copy; /* the block, freed by the caller through v[n] */
	}
	if (!n) {
		free(copy);
		return 0;
	}
	*out = v;
	return n;
}

static int open_counters(struct agent_collector *c, const struct agent_config *cfg, char *err,
			 size_t errsz)
{
	struct PmuAttr attr = { 0 };
	char **evts = NULL, *cg;
	int n, i;

	n = split(cfg->counters, &evts);
	if (n <= 0) {
		snprintf(err, errsz, "--counters: no event in '%s'", cfg->counters);
		return -1;
	}
	c->counters = calloc((size_t)n, sizeof(*c->counters));
	if (!c->counters)
		goto nomem;
	for (i = 0; i < n; i++)
		counter_name(&c->counters[i], evts[i]);
	c->ncounters = (size_t)n;
	attr.evtList = evts;
	attr.numEvt = (unsigned)n;
	if (cfg->target == TARGET_PIDS) {
		attr.pidList = cfg->pids;
		attr.numPid = (unsigned)cfg->npids;
		attr.includeNewFork = 1;
	} else if (cfg->target == TARGET_CGROUP) {
		/* relative to the cgroup2 mount, as PmuAttr wants it */
		cg = (char *)cfg->cgroup;
		attr.cgroupNameList = &cg;
		attr.numCgroup = 1;
	}
	c->count_pd = PmuOpen(COUNTING, &attr);
	if (c->count_pd < 0 || PmuEnable(c->count_pd)) {
		snprintf(err, errsz, "counters: %s", Perror());
		free(evts[n]);
		free(evts);
		return -1;
	}
	free(evts[n]);
	free(evts);
	return 0;
nomem:
	free(evts[n]);
	free(evts);
	snprintf(err, errsz, "out of memory");
	return -1;
}

static int open_syscalls(struct agent_collector *c, const struct agent_config *cfg, char *err,
			 size_t errsz)
{
	struct PmuTraceAttr attr = { 0 };
	struct KperfTraceOpts o = KPERF_OPTS(KperfTraceOpts, .summaryOnly = 1, .excludeSelf = 1,
					     .summaryByCgroup = 1);
	char **names = NULL;
	int n = 0;

	if (cfg->syscalls) {
		n = split(cfg->syscalls, &names);
		if (n <= 0) {
			snprintf(err, errsz, "--syscalls: no name in '%s'", cfg->syscalls);
			return -1;
		}
		attr.funcs = (const char **)names;
		attr.numFuncs = (unsigned)n;
	}
	if (cfg->target == TARGET_PIDS) {
		attr.pidList = cfg->pids;
		attr.numPid = (unsigned)cfg->npids;
		o.includeNewFork = 1;
	} else if (cfg->target == TARGET_CGROUP) {
		o.cgroupPath = cfg->cgroup;
	}
	c->trace_pd = KperfTraceOpen(TRACE_SYS_CALL, &attr, &o);
	if (names) {
		free(names[n]);
		free(names);
	}
	if (c->trace_pd < 0 || PmuTraceEnable(c->trace_pd)) {
		snprintf(err, errsz, "syscalls: %s", Perror());
		return -1;
	}
	return 0;
}

int agent_collect_open(const struct agent_config *cfg, struct agent_collector **out, char *err,
		       size_t errsz)
{
	struct agent_collector *c = calloc(1, sizeof(*c));

	*out = NULL;
	if (!c) {
		snprintf(err, errsz, "out of memory");
		return -1;
	}
	c->cfg = *cfg;
	c->trace_pd = c->count_pd = -1;
	if (cfg->cgroup_root[0])
		snprintf(c->cgroot, sizeof(c->cgroot), "%s", cfg->cgroup_root);
	else if (agent_cgroup_root(c->cgroot, sizeof(c->cgroot)))
		snprintf(c->cgroot, sizeof(c->cgroot), "/sys/fs/cgroup");
	if (index_rebuild(c, 32))
		goto fail;
	if (!(cfg->syscalls && !strcmp(cfg->syscalls, "none")) && open_syscalls(c, cfg, err, errsz))
		goto fail;
	if (!(cfg->counters && !strcmp(cfg->counters, "none")) &&
	    open_counters(c, cfg, err, errsz)) {
		/* the syscall metrics stand without them (a cgroup2 without perf_event) */
		if (c->trace_pd < 0)
			goto fail;
		fprintf(stderr, "kperf-bpf agent: warning: no counters: %s\n", err);
		free(c->counters);
		c->counters = NULL;
		c->ncounters = 0;
		if (c->count_pd >= 0)
			PmuClose(c->count_pd);
		c->count_pd = -1;
	}
	*out = c;
	return 0;
fail:
	agent_collect_close(c);
	return -1;
}

void agent_collect_close(struct agent_collector *c)
{
	size_t i;

	if (!c)
		return;
	if (c->trace_pd >= 0) {
		PmuTraceDisable(c->trace_pd);
		PmuTraceClose(c->trace_pd);
	}
	if (c->count_pd >= 0) {
		PmuDisable(c->count_pd);
		PmuClose(c->count_pd);
	}
	for (i = 0; i < c->nwl; i++)
		free(c->wl[i].comms);
	free(c->wl);
	for (i = 0; i < c->ncgs; i++)
		free(c->cgs[i].path);
	free(c->cgs);
	free(c->series);
	free(c->index);
	free(c->live_mark);
	free(c->counters);
	free(c);
}
