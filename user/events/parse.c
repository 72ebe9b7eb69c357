/*
 * parse.c - event name -> perf_event_attr (see events.h for the accepted forms).
 *
 * PMU events are read from sysfs the way perf does: devices/<pmu>/type gives attr.type,
 * devices/<pmu>/events/<event> gives "term=value,..." and devices/<pmu>/format/<term>
 * says which bits of config, config1 or config2 a term fills ("config:0-7,32-35").
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/core.h"
#include "kperf/pcerrc.h"
#include "events.h"
#include "tracefs/tracefs.h"

struct named {
	const char *name;
	__u64 config;
};

static const struct named sw_events[] = {
	{ "cpu-clock", PERF_COUNT_SW_CPU_CLOCK },
	{ "task-clock", PERF_COUNT_SW_TASK_CLOCK },
	{ "page-faults", PERF_COUNT_SW_PAGE_FAULTS },
	{ "faults", PERF_COUNT_SW_PAGE_FAULTS },
	{ "minor-faults", PERF_COUNT_SW_PAGE_FAULTS_MIN },
	{ "major-faults", PERF_COUNT_SW_PAGE_FAULTS_MAJ },
	{ "context-switches", PERF_COUNT_SW_CONTEXT_SWITCHES },
	{ "cs", PERF_COUNT_SW_CONTEXT_SWITCHES },
	{ "cpu-migrations", PERF_COUNT_SW_CPU_MIGRATIONS },
	{ "migrations", PERF_COUNT_SW_CPU_MIGRATIONS },
	{ "alignment-faults", PERF_COUNT_SW_ALIGNMENT_FAULTS },
	{ "emulation-faults", PERF_COUNT_SW_EMULATION_FAULTS },
	{ "dummy", PERF_COUNT_SW_DUMMY },
};

static const struct named hw_events[] = {
	{ "cycles", PERF_COUNT_HW_CPU_CYCLES },
	{ "cpu-cycles", PERF_COUNT_HW_CPU_CYCLES },
	{ "instructions", PERF_COUNT_HW_INSTRUCTIONS },
	{ "cache-references", PERF_COUNT_HW_CACHE_REFERENCES },
	{ "cache-misses", PERF_COUNT_HW_CACHE_MISSES },
	{ "branch-instructions", PERF_COUNT_HW_BRANCH_INSTRUCTIONS },
	{ "branches", PERF_COUNT_HW_BRANCH_INSTRUCTIONS },
	{ "branch-misses", PERF_COUNT_HW_BRANCH_MISSES },
	{ "bus-cycles", PERF_COUNT_HW_BUS_CYCLES },
	{ "stalled-cycles-frontend", PERF_COUNT_HW_STALLED_CYCLES_FRONTEND },
	{ "idle-cycles-frontend", PERF_COUNT_HW_STALLED_CYCLES_FRONTEND },
	{ "stalled-cycles-backend", PERF_COUNT_HW_STALLED_CYCLES_BACKEND },
	{ "idle-cycles-backend", PERF_COUNT_HW_STALLED_CYCLES_BACKEND },
	{ "ref-cycles", PERF_COUNT_HW_REF_CPU_CYCLES },
};

static const struct named cache_ids[] = {
	{ "L1-dcache", PERF_COUNT_HW_CACHE_L1D }, { "L1-icache", PERF_COUNT_HW_CACHE_L1I },
	{ "LLC", PERF_COUNT_HW_CACHE_LL },	  { "dTLB", PERF_COUNT_HW_CACHE_DTLB },
	{ "iTLB", PERF_COUNT_HW_CACHE_ITLB },	  { "branch", PERF_COUNT_HW_CACHE_BPU },
	{ "node", PERF_COUNT_HW_CACHE_NODE },
};

/* op and result, as perf spells them: loads = read access, load-misses = read miss */
static const struct {
	const char *suffix;
	unsigned op, result;
} cache_ops[] = {
	{ "loads", PERF_COUNT_HW_CACHE_OP_READ, PERF_COUNT_HW_CACHE_RESULT_ACCESS },
	{ "load-misses", PERF_COUNT_HW_CACHE_OP_READ, PERF_COUNT_HW_CACHE_RESULT_MISS },
	{ "stores", PERF_COUNT_HW_CACHE_OP_WRITE, PERF_COUNT_HW_CACHE_RESULT_ACCESS },
	{ "store-misses", PERF_COUNT_HW_CACHE_OP_WRITE, PERF_COUNT_HW_CACHE_RESULT_MISS },
	{ "prefetches", PERF_COUNT_HW_CACHE_OP_PREFETCH, PERF_COUNT_HW_CACHE_RESULT_ACCESS },
	{ "prefetch-misses", PERF_COUNT_HW_CACHE_OP_PREFETCH, PERF_COUNT_HW_CACHE_RESULT_MISS },
};

#define NCACHE (KP_ARRAY_SIZE(cache_ids) * KP_ARRAY_SIZE(cache_ops))
static char cache_names[NCACHE][40];

int kp_perf_event_open(struct perf_event_attr *attr, pid_t pid, int cpu, int group_fd,
		       unsigned long flags)
{
	return (int)syscall(SYS_perf_event_open, attr, pid, cpu, group_fd, flags);
}

void kp_event_free(struct kp_event *ev)
{
	if (!ev)
		return;
	free(ev->name);
	free(ev->pmu);
	free(ev->cpus);
	free(ev->tp_system);
	free(ev->tp_event);
	memset(ev, 0, sizeof(*ev));
}

static const struct named *find_named(const struct named *t, size_t n, const char *name)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!strcmp(t[i].name, name))
			return &t[i];
	return NULL;
}

static pthread_once_t cache_once = PTHREAD_ONCE_INIT;

static void fill_cache_names_once(void)
{
	size_t i, j;

	for (i = 0; i < KP_ARRAY_SIZE(cache_ids); i++)
		for (j = 0; j < KP_ARRAY_SIZE(cache_ops); j++)
			snprintf(cache_names[i * KP_ARRAY_SIZE(cache_ops) + j],
				 sizeof(cache_names[0]), "%s-%s", cache_ids[i].name,
				 cache_ops[j].suffix);
}

static void fill_cache_names(void)
{
	pthread_once(&cache_once, fill_cache_names_once);
}

static bool parse_cache(const char *name, __u64 *config)
{
	size_t i, j, len;

	for (i = 0; i < KP_ARRAY_SIZE(cache_ids); i++) {
		len = strlen(cache_ids[i].name);
		if (strncmp(name, cache_ids[i].name, len) || name[len] != '-')
			continue;
		for (j = 0; j < KP_ARRAY_SIZE(cache_ops); j++) {
			if (strcmp(name + len + 1, cache_ops[j].suffix))
				continue;
			*config = cache_ids[i].config | (cache_ops[j].op << 8) |
				  (cache_ops[j].result << 16);
			return true;
		}
	}
	return false;
}

/* ":u", ":k", ":uk", ...: returns false for anything that is not a modifier string */
static bool apply_modifiers(const char *mod, struct perf_event_attr *attr)
{
	bool u = false, k = false, h = false;
	const char *p;

	if (!*mod)
		return false;
	for (p = mod; *p; p++)
		if (!strchr("ukhGHpPS", *p))
			return false;
	for (p = mod; *p; p++) {
		u |= *p == 'u';
		k |= *p == 'k';
		h |= *p == 'h';
	}
	if (u || k || h) {
		attr->exclude_user = !u;
		attr->exclude_kernel = !k;
		attr->exclude_hv = !h;
	}
	return true;
}

static int unknown_event(const char *name)
{
	const char *best_name = NULL;
	int best = INT_MAX, d;
	size_t i;

	fill_cache_names();
	for (i = 0; i < KP_ARRAY_SIZE(sw_events); i++) {
		d = kp_edit_distance(name, sw_events[i].name);
		if (d < best)
			best = d, best_name = sw_events[i].name;
	}
	for (i = 0; i < KP_ARRAY_SIZE(hw_events); i++) {
		d = kp_edit_distance(name, hw_events[i].name);
		if (d < best)
			best = d, best_name = hw_events[i].name;
	}
	for (i = 0; i < NCACHE; i++) {
		d = kp_edit_distance(name, cache_names[i]);
		if (d < best)
			best = d, best_name = cache_names[i];
	}
	if (best_name && best <= 3)
		return kp_fail(LIBPERF_ERR_INVALID_EVENT, -ENOENT,
			       "unknown event '%s' (did you mean %s?); `kperf-bpf list` shows "
			       "the events of this machine",
			       name, best_name);
	return kp_fail(LIBPERF_ERR_INVALID_EVENT, -ENOENT,
		       "unknown event '%s'; `kperf-bpf list` shows the events of this machine",
		       name);
}

/* ---- PMU events from sysfs ---- */

static int pmu_dir(const char *pmu, char *buf, size_t size)
{
	snprintf(buf, size, "%s/bus/event_source/devices/%s", kp_sysfs(), pmu);
	return access(buf, F_OK) == 0 ? 0 : -ENOENT;
}

/* set bits <spec> ("config:0-7,32-35" / "config1:0-15") of attr to <value> */
static int apply_format(struct perf_event_attr *attr, const char *spec, __u64 value)
{
	const char *colon = strchr(spec, ':'), *p;
	__u64 *field;
	int bit = 0;

	if (!colon)
		return -EINVAL;
	if (!strncmp(spec, "config1", 7))
		field = &attr->config1;
	else if (!strncmp(spec, "config2", 7))
		field = &attr->config2;
	else if (!strncmp(spec, "config", 6))
		field = &attr->config;
	else
		return -EINVAL;
	for (p = colon + 1; *p && *p != '\n';) {
		char *end;
		long lo = strtol(p, &end, 10), hi = lo, b;

		if (end == p || lo < 0 || lo > 63)
			return -EINVAL;
		p = end;
		if (*p == '-') {
			hi = strtol(p + 1, &end, 10);
			if (end == p + 1 || hi < lo || hi > 63)
				return -EINVAL;
			p = end;
		}
		for (b = lo; b <= hi; b++, bit++)
			if (value & (1ULL << bit))
				*field |= 1ULL << b;
		if (*p == ',')
			p++;
		else if (*p && *p != '\n')
			return -EINVAL;
	}
	return 0;
}

/* perf's built-in terms, for PMUs without a format file of that name: the events of the
 * HiSilicon uncore PMUs read "config=0x1" while their format only has "event" */
static bool builtin_term(struct perf_event_attr *attr, const char *tok, __u64 value)
{
	if (!strcmp(tok, "config"))
		attr->config = value;
	else if (!strcmp(tok, "config1"))
		attr->config1 = value;
	else if (!strcmp(tok, "config2"))
		attr->config2 = value;
	else
		return false;
	return true;
}

/* "event=0x3c,umask=0x1" (terms of a sysfs event or of the user) applied through format/ */
static int apply_terms(struct perf_event_attr *attr, const char *dir, const char *terms,
		       const char *name)
{
	char *copy = strdup(terms), *tok, *save = NULL, path[PATH_MAX], *spec;
	int err = 0;

	if (!copy)
		return kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
	for (tok = strtok_r(copy, ",\n", &save); tok && !err; tok = strtok_r(NULL, ",\n", &save)) {
		char *eq = strchr(tok, '='), *end;
		__u64 value = 1;

		while (isspace((unsigned char)*tok))
			tok++;
		if (!*tok)
			continue;
		if (eq) {
			*eq = '\0';
			errno = 0;
			value = strtoull(eq + 1, &end, 0);
			if (errno || end == eq + 1 || (*end && !isspace((unsigned char)*end))) {
				err = kp_fail(LIBPERF_ERR_INVALID_EVENT, -EINVAL,
					      "event '%s': term %s has no numeric value", name,
					      tok);
				break;
			}
		}
		snprintf(path, sizeof(path), "%s/format/%s", dir, tok);
		if (kp_read_file(path, &spec, NULL) && builtin_term(attr, tok, value))
			continue;
		if (!spec) {
			err = kp_fail(LIBPERF_ERR_INVALID_EVENT, -EINVAL,
				      "event '%s': the PMU has no format term '%s'", name, tok);
			break;
		}
		if (apply_format(attr, spec, value))
			err = kp_fail(LIBPERF_ERR_INVALID_EVENT, -EINVAL,
				      "event '%s': cannot understand format '%s' of term %s", name,
				      spec, tok);
		free(spec);
	}
	free(copy);
	return err;
}

static int parse_pmu(const char *name, const char *body, struct kp_event *ev)
{
	char pmu[256], evname[256], dir[PATH_MAX], path[PATH_MAX + 300], *terms = NULL, *comma;
	const char *slash = strchr(body, '/');
	long type;
	int err, n;

	if (!slash || (size_t)(slash - body) >= sizeof(pmu) || slash == body)
		return kp_fail(LIBPERF_ERR_INVALID_EVENT, -EINVAL,
			       "event '%s' is not of the form pmu/event/", name);
	memcpy(pmu, body, (size_t)(slash - body));
	pmu[slash - body] = '\0';
	n = snprintf(evname, sizeof(evname), "%s", slash + 1);
	if (n >= (int)sizeof(evname))
		return kp_fail(LIBPERF_ERR_INVALID_EVENT, -EINVAL,
			       "event '%.64s...': the event of pmu/event/ is longer than %zu bytes",
			       name, sizeof(evname) - 1);
	if (n <= 1 || evname[n - 1] != '/')
		return kp_fail(LIBPERF_ERR_INVALID_EVENT, -EINVAL,
			       "event '%s' is not of the form pmu/event/", name);
	evname[n - 1] = '\0';
	if (strchr(pmu, '.') || strchr(evname, '/'))
		return kp_fail(LIBPERF_ERR_INVALID_EVENT, -EINVAL, "event '%s' is malformed", name);
	if (pmu_dir(pmu, dir, sizeof(dir)))
		return kp_fail(LIBPERF_ERR_INVALID_EVENT, -ENODEV,
			       "event '%s': this machine has no PMU called '%s' (see %s/bus/"
			       "event_source/devices)",
			       name, pmu, kp_sysfs());
	snprintf(path, sizeof(path), "%s/type", dir);
	if (kp_read_long(path, &type) || type < 0)
		return kp_fail(LIBPERF_ERR_INVALID_EVENT, -EINVAL, "cannot read %s", path);
	ev->attr.type = (__u32)type;
	ev->kind = KP_EV_PMU;
	ev->pmu = strdup(pmu);
	if (!ev->pmu)
		return kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
	comma = strchr(evname, ',');
	if (strchr(evname, '=') && (!comma || memchr(evname, '=', (size_t)(comma - evname)))) {
		err = apply_terms(&ev->attr, dir, evname, name);
	} else {
		/* a sysfs event, optionally followed by terms: pmu/event,term=value/ */
		if (comma)
			*comma = '\0';
		snprintf(path, sizeof(path), "%s/events/%s", dir, evname);
		if (kp_read_file(path, &terms, NULL))
			return kp_fail(LIBPERF_ERR_INVALID_EVENT, -ENOENT,
				       "PMU '%s' has no event '%s' (see %s/events)", pmu, evname,
				       dir);
		err = apply_terms(&ev->attr, dir, terms, name);
		free(terms);
		if (!err && comma)
			err = apply_terms(&ev->attr, dir, comma + 1, name);
	}
	if (err)
		return err;
	/* an uncore PMU says on which CPUs it must be opened */
	snprintf(path, sizeof(path), "%s/cpumask", dir);
	if (kp_read_file(path, &terms, NULL) == 0) {
		n = kp_parse_cpu_list(terms, &ev->cpus);
		free(terms);
		if (n > 0) {
			ev->ncpus = n;
			ev->uncore = true;
		}
	}
	return 0;
}

static int parse_tracepoint(const char *name, const char *sys, const char *evt, struct kp_event *ev)
{
	struct kp_tp_format *fmt;
	int err = kp_tp_format_load(sys, evt, &fmt);

	if (err)
		return err;
	ev->kind = KP_EV_TRACEPOINT;
	ev->attr.type = PERF_TYPE_TRACEPOINT;
	ev->attr.config = fmt->id;
	kp_tp_format_free(fmt);
	ev->tp_system = strdup(sys);
	ev->tp_event = strdup(evt);
	if (!ev->tp_system || !ev->tp_event)
		return kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
	(void)name;
	return 0;
}

int kp_event_probe_attr(const struct perf_event_attr *attr)
{
	struct perf_event_attr a = *attr;
	int fd;

	a.disabled = 1;
	fd = kp_perf_event_open(&a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0 && errno == EINVAL && a.exclude_hv) {
		/* some PMUs (and VMs) refuse exclude_hv: try without */
		a.exclude_hv = 0;
		fd = kp_perf_event_open(&a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	}
	if (fd < 0 && (errno == EINVAL || errno == EOPNOTSUPP) &&
	    attr->type != PERF_TYPE_SOFTWARE) {
		/* per-task refused (uncore PMUs): a CPU is the real test */
		fd = kp_perf_event_open(&a, -1, 0, -1, PERF_FLAG_FD_CLOEXEC);
	}
	if (fd < 0)
		return -errno;
	close(fd);
	return 0;
}

static int probe(struct kp_event *ev)
{
	int err;

	if (ev->kind == KP_EV_SOFTWARE || ev->kind == KP_EV_TRACEPOINT)
		return 0;
	err = kp_event_probe_attr(&ev->attr);
	if (!err || err == -EACCES || err == -EPERM)
		return 0; /* exists; privileges are checked when it is really opened */
	/* the code libkperf gives the same perf_event_open failure: ENOENT (no PMU takes the
	 * event: no hardware counters, as in most VMs) is LIBPERF_ERR_OPEN_INVALID_FILE */
	if (err == -ENOENT || err == -EOPNOTSUPP || err == -ENODEV || err == -EINVAL) {
		if (ev->kind == KP_EV_PMU)
			kp_fail(kp_perf_errno_code(err), err,
				"event '%s': the %s PMU refused it (%s)", ev->name, ev->pmu,
				strerror(-err));
		else
			kp_fail(kp_perf_errno_code(err), err,
				"hardware event '%s' is not available: this machine has no "
				"hardware PMU for it (a VM without a virtual PMU?). Software events "
				"such as cpu-clock, task-clock, page-faults and context-switches "
				"work",
				ev->name);
		return -ENODEV;
	}
	return kp_fail(kp_perf_errno_code(err), err, "event '%s' cannot be opened: %s", ev->name,
		       strerror(-err));
}

static int parse_plain(const char *name, const char *base, struct kp_event *ev)
{
	const struct named *n;
	char *end;

	n = find_named(sw_events, KP_ARRAY_SIZE(sw_events), base);
	if (n) {
		ev->kind = KP_EV_SOFTWARE;
		ev->attr.type = PERF_TYPE_SOFTWARE;
		ev->attr.config = n->config;
		return 0;
	}
	n = find_named(hw_events, KP_ARRAY_SIZE(hw_events), base);
	if (n) {
		ev->kind = KP_EV_HARDWARE;
		ev->attr.type = PERF_TYPE_HARDWARE;
		ev->attr.config = n->config;
		return 0;
	}
	if (parse_cache(base, &ev->attr.config)) {
		ev->kind = KP_EV_HW_CACHE;
		ev->attr.type = PERF_TYPE_HW_CACHE;
		return 0;
	}
	if (base[0] == 'r' && isxdigit((unsigned char)base[1])) {
		errno = 0;
		ev->attr.config = strtoull(base + 1, &end, 16);
		if (!errno && !*end && strlen(base + 1) <= 16) {
			ev->kind = KP_EV_RAW;
			ev->attr.type = PERF_TYPE_RAW;
			return 0;
		}
	}
	return unknown_event(name);
}

int kp_event_parse(const char *name, bool do_probe, struct kp_event *ev)
{
	char base[512], *colon;
	int err;

	memset(ev, 0, sizeof(*ev));
	if (!name || !*name)
		return kp_fail(LIBPERF_ERR_INVALID_EVENT, -EINVAL, "empty event name");
	if (strlen(name) >= sizeof(base))
		return kp_fail(LIBPERF_ERR_INVALID_EVENT, -EINVAL, "event name too long");
	ev->name = strdup(name);
	if (!ev->name)
		return kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
	ev->attr.size = sizeof(ev->attr);
	strcpy(base, name);

	if (strchr(base, '/')) {
		/* pmu/event/ with optional modifiers after the last slash: pmu/event/u */
		char *last = strrchr(base, '/');

		if (last[1]) {
			if (last[1] == ':' ? !apply_modifiers(last + 2, &ev->attr) :
					     !apply_modifiers(last + 1, &ev->attr)) {
				err = kp_fail(LIBPERF_ERR_INVALID_EVENT, -EINVAL,
					      "event '%s': unknown modifier '%s'", name, last + 1);
				goto fail;
			}
			last[1] = '\0';
		}
		err = parse_pmu(name, base, ev);
	} else if ((colon = strchr(base, ':'))) {
		*colon = '\0';
		if (!strchr(colon + 1, ':') && apply_modifiers(colon + 1, &ev->attr) &&
		    (find_named(sw_events, KP_ARRAY_SIZE(sw_events), base) ||
		     find_named(hw_events, KP_ARRAY_SIZE(hw_events), base) || base[0] == 'r' ||
		     strchr(base, '-'))) {
			err = parse_plain(name, base, ev);
		} else {
			memset(&ev->attr, 0, sizeof(ev->attr));
			ev->attr.size = sizeof(ev->attr);
			err = parse_tracepoint(name, base, colon + 1, ev);
		}
	} else {
		err = parse_plain(name, base, ev);
	}
	if (!err && do_probe)
		err = probe(ev);
	if (err)
		goto fail;
	return 0;
fail:
	kp_event_free(ev);
	return err;
}

static int names_of(const struct named *t, size_t n, const char ***out)
{
	const char **v = calloc(n + 1, sizeof(*v));
	size_t i;

	if (!v)
		return kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
	for (i = 0; i < n; i++)
		v[i] = t[i].name;
	*out = v;
	return (int)n;
}

int kp_event_software_names(const char ***names)
{
	return names_of(sw_events, KP_ARRAY_SIZE(sw_events), names);
}

int kp_event_hardware_names(const char ***names)
{
	return names_of(hw_events, KP_ARRAY_SIZE(hw_events), names);
}

int kp_event_cache_names(const char ***names)
{
	const char **v = calloc(NCACHE + 1, sizeof(*v));
	size_t i;

	if (!v)
		return kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
	fill_cache_names();
	for (i = 0; i < NCACHE; i++)
		v[i] = cache_names[i];
	*names = v;
	return (int)NCACHE;
}
