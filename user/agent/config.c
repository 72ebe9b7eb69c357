/*
 * config.c - the agent's options: the command line, and the --config file, whose keys are
 * the long options ("top-comm = 5", "all = true", "# comments"). The file is read after the
 * command line at start (its values win) and again on SIGHUP.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent.h"

void agent_config_defaults(struct agent_config *c)
{
	memset(c, 0, sizeof(*c));
	snprintf(c->listen, sizeof(c->listen), "%s", AGENT_DEFAULT_LISTEN);
	c->target = TARGET_ALL;
	c->profile_hz = 99;
	c->max_profile_s = 60;
	c->cache_mb = 8;
	c->top_comm = 5;
	c->max_workloads = 200;
	c->grace_s = 300;
	c->interval_ms = 2000;
	c->max_connections = 32;
	snprintf(c->kubelet_logs, sizeof(c->kubelet_logs), "/var/log");
	c->counters = strdup("task-clock,context-switches,page-faults");
}

void agent_config_free(struct agent_config *c)
{
	free(c->pids);
	free(c->syscalls);
	free(c->counters);
	free(c->config_path);
	c->pids = NULL;
	c->syscalls = c->counters = c->config_path = NULL;
}

static void usage(FILE *f)
{
	fputs("usage: kperf-bpf agent [options]\n"
	      "\n"
	      "Serve Prometheus metrics and pprof profiles over HTTP until SIGTERM (SIGHUP\n"
	      "reloads --config).\n"
	      "\n"
	      "  --listen ADDR            address:port (default " AGENT_DEFAULT_LISTEN "; any\n"
	      "                           other address must be given)\n"
	      "  --all                    every process (the default)\n"
	      "  --cgroup PATH            the processes of this cgroup2 directory\n"
	      "  -p, --pid PID,...        these processes and their children\n"
	      "  --syscalls LIST|none     syscalls measured (default: all)\n"
	      "  --counters EVENTS|none   counted events (default task-clock,context-switches,\n"
	      "                           page-faults)\n"
	      "  --profile-hz HZ          sampling rate of /debug/pprof/* (default 99)\n"
	      "  --max-profile-seconds N  longest profile a request may ask for (default 60)\n"
	      "  --cache-mb MB            what profiles keep for the next ones: the symbols and\n"
	      "                           unwind tables of files no longer sampled, half each\n"
	      "                           (default 8; more: less CPU per profile, more memory)\n"
	      "  --top-comm K             per workload, command names with a label of their own\n"
	      "                           (default 5; the others: comm=\"other\")\n"
	      "  --max-workloads N        workloads (cgroups) with labels of their own (default\n"
	      "                           200; the others: cgroup=\"[other]\")\n"
	      "  --grace SECONDS          series of gone workloads stay this long (default 300)\n"
	      "  --interval SECONDS       how often the summary is folded (default 2)\n"
	      "  --max-connections N      concurrent HTTP connections (default 32)\n"
	      "  --kubelet-logs DIR       the kubelet's log directory, for pod names (default\n"
	      "                           /var/log)\n"
	      "  --cgroup-root DIR        the cgroup2 file system whose paths label the\n"
	      "                           workloads (default: this mount namespace's cgroup2;\n"
	      "                           in a container, the host's mounted read-only)\n"
	      "  --config FILE            options as \"key = value\" lines (reloaded on SIGHUP)\n",
	      f);
}

static int parse_uint(const char *s, unsigned lo, unsigned hi, unsigned *out)
{
	char *end;
	unsigned long v;

	if (!s || !*s || *s == '-')
		return -1;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v < lo || v > hi)
		return -1;
	*out = (unsigned)v;
	return 0;
}

static int parse_pids(const char *s, int **out, int *n)
{
	int *v = NULL, cnt = 0;
	const char *p = s;

	if (!*s)
		return -1;
	while (*p) {
		char *end;
		long x;
		int *nv;

		errno = 0;
		x = strtol(p, &end, 10);
		if (errno || end == p || x <= 0 || x > INT_MAX || (*end && *end != ','))
			goto bad;
		nv = realloc(v, sizeof(*v) * (size_t)(cnt + 1));
		if (!nv)
			goto bad;
		v = nv;
		v[cnt++] = (int)x;
		p = *end ? end + 1 : end;
		if (*end && !*p)
			goto bad;
	}
	free(*out);
	*out = v;
	*n = cnt;
	return 0;
bad:
	free(v);
	return -1;
}

static int set_str(char **dst, const char *v)
{
	char *s = strdup(v);

	if (!s)
		return -1;
	free(*dst);
	*dst = s;
	return 0;
}

/* One option by its long name; 0, or -1 with a message in err. */
static int set_option(struct agent_config *c, const char *key, const char *val, char *err,
		      size_t errsz)
{
	struct {
		const char *name;
		unsigned *dst, lo, hi, scale;
	} nums[] = {
		{ "profile-hz", &c->profile_hz, 1, 10000, 1 },
		{ "max-profile-seconds", &c->max_profile_s, 1, 3600, 1 },
		{ "cache-mb", &c->cache_mb, 0, 65536, 1 },
		{ "top-comm", &c->top_comm, 0, 1000, 1 },
		{ "max-workloads", &c->max_workloads, 1, 100000, 1 },
		{ "grace", &c->grace_s, 0, 30 * 86400, 1 },
		{ "interval", &c->interval_ms, 1, 3600, 1000 },
		{ "max-connections", &c->max_connections, 1, 4096, 1 },
	};
	size_t i;

	for (i = 0; i < sizeof(nums) / sizeof(nums[0]); i++) {
		if (strcmp(key, nums[i].name))
			continue;
		if (parse_uint(val, nums[i].lo, nums[i].hi, nums[i].dst)) {
			snprintf(err, errsz, "--%s wants a whole number from %u to %u, not '%s'",
				 key, nums[i].lo, nums[i].hi, val ? val : "");
			return -1;
		}
		*nums[i].dst *= nums[i].scale;
		return 0;
	}
	if (!val)
		val = "";
	if (!strcmp(key, "listen")) {
		if (!*val || strlen(val) >= sizeof(c->listen) || !strrchr(val, ':')) {
			snprintf(err, errsz,
				 "--listen wants ADDRESS:PORT (127.0.0.1:9464), not '%s'", val);
			return -1;
		}
		snprintf(c->listen, sizeof(c->listen), "%s", val);
	} else if (!strcmp(key, "all")) {
		if (strcmp(val, "true") && strcmp(val, "1") && *val) {
			snprintf(err, errsz, "all wants true, not '%s'", val);
			return -1;
		}
		c->target = TARGET_ALL;
	} else if (!strcmp(key, "cgroup")) {
		if (!*val || strlen(val) >= sizeof(c->cgroup)) {
			snprintf(err, errsz, "--cgroup wants a cgroup2 directory, not '%s'", val);
			return -1;
		}
		snprintf(c->cgroup, sizeof(c->cgroup), "%s", val);
		c->target = TARGET_CGROUP;
	} else if (!strcmp(key, "pid")) {
		if (parse_pids(val, &c->pids, &c->npids)) {
			snprintf(err, errsz, "-p wants pids like 1234,5678, not '%s'", val);
			return -1;
		}
		c->target = TARGET_PIDS;
	} else if (!strcmp(key, "syscalls")) {
		if (!*val || set_str(&c->syscalls, val)) {
			snprintf(err, errsz, "--syscalls wants names like read,write, all or none");
			return -1;
		}
		if (!strcmp(val, "all")) {
			free(c->syscalls);
			c->syscalls = NULL;
		}
	} else if (!strcmp(key, "counters")) {
		if (!*val || set_str(&c->counters, val)) {
			snprintf(err, errsz,
				 "--counters wants events like task-clock,page-faults or "
				 "none");
			return -1;
		}
	} else if (!strcmp(key, "kubelet-logs")) {
		if (!*val || strlen(val) >= sizeof(c->kubelet_logs)) {
			snprintf(err, errsz, "--kubelet-logs wants a directory, not '%s'", val);
			return -1;
		}
		snprintf(c->kubelet_logs, sizeof(c->kubelet_logs), "%s", val);
	} else if (!strcmp(key, "cgroup-root")) {
		if (!*val || strlen(val) >= sizeof(c->cgroup_root)) {
			snprintf(err, errsz, "--cgroup-root wants a directory, not '%s'", val);
			return -1;
		}
		snprintf(c->cgroup_root, sizeof(c->cgroup_root), "%s", val);
	} else if (!strcmp(key, "config")) {
		if (!*val || set_str(&c->config_path, val)) {
			snprintf(err, errsz, "--config wants a file");
			return -1;
		}
	} else {
		snprintf(err, errsz, "unknown option '%s'", key);
		return -1;
	}
	return 0;
}

int agent_config_check(const struct agent_config *c, char *err, size_t errsz)
{
	if (c->syscalls && !strcmp(c->syscalls, "none") && c->counters &&
	    !strcmp(c->counters, "none")) {
		snprintf(err, errsz, "--syscalls none and --counters none leave nothing to serve");
		return -1;
	}
	return 0;
}

static char *trim(char *s)
{
	char *e;

	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\n' || e[-1] == '\r'))
		*--e = 0;
	return s;
}

int agent_config_file(struct agent_config *c, const char *path, char *err, size_t errsz)
{
	char line[1024], msg[256];
	FILE *f = fopen(path, "re");
	int lineno = 0, rc = 0;

	if (!f) {
		snprintf(err, errsz, "cannot read %s: %s", path, strerror(errno));
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		char *eq, *key, *val;

		lineno++;
		if (!strchr(line, '\n') && !feof(f)) {
			snprintf(err, errsz, "%s:%d: line longer than %zu bytes", path, lineno,
				 sizeof(line) - 2);
			rc = -1;
			break;
		}
		key = trim(line);
		if (!*key || *key == '#')
			continue;
		eq = strchr(key, '=');
		if (!eq) {
			snprintf(err, errsz, "%s:%d: want 'key = value', not '%s'", path, lineno,
				 key);
			rc = -1;
			break;
		}
		*eq = 0;
		val = trim(eq + 1);
		key = trim(key);
		if (!strcmp(key, "config")) {
			snprintf(err, errsz, "%s:%d: a config file cannot name another", path,
				 lineno);
			rc = -1;
			break;
		}
		if (set_option(c, key, val, msg, sizeof(msg))) {
			snprintf(err, errsz, "%s:%d: %s", path, lineno, msg);
			rc = -1;
			break;
		}
	}
	fclose(f);
	return rc;
}

int agent_config_parse(struct agent_config *c, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "listen", required_argument, NULL, 1 },
		{ "all", no_argument, NULL, 'a' },
		{ "cgroup", required_argument, NULL, 1 },
		{ "pid", required_argument, NULL, 'p' },
		{ "syscalls", required_argument, NULL, 1 },
		{ "counters", required_argument, NULL, 1 },
		{ "profile-hz", required_argument, NULL, 1 },
		{ "max-profile-seconds", required_argument, NULL, 1 },
		{ "cache-mb", required_argument, NULL, 1 },
		{ "top-comm", required_argument, NULL, 1 },
		{ "max-workloads", required_argument, NULL, 1 },
		{ "grace", required_argument, NULL, 1 },
		{ "interval", required_argument, NULL, 1 },
		{ "max-connections", required_argument, NULL, 1 },
		{ "kubelet-logs", required_argument, NULL, 1 },
		{ "cgroup-root", required_argument, NULL, 1 },
		{ "config", required_argument, NULL, 1 },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	char err[512];
	int opt, idx;

	optind = 1;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":ap:h", longopts, &idx)) != -1) {
		const char *key, *val = optarg;

		switch (opt) {
		case 'h':
			usage(stdout);
			return 1;
		case 'a':
			key = "all";
			break;
		case 'p':
			key = "pid";
			break;
		case 1:
			key = longopts[idx].name;
			break;
		case ':':
			fprintf(stderr, "kperf-bpf agent: %s needs a value\n", argv[optind - 1]);
			return -1;
		default:
			fprintf(stderr, "kperf-bpf agent: unknown option '%s'\n", argv[optind - 1]);
			usage(stderr);
			return -1;
		}
		if (set_option(c, key, val, err, sizeof(err))) {
			fprintf(stderr, "kperf-bpf agent: %s\n", err);
			return -1;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "kperf-bpf agent: unexpected argument '%s'\n", argv[optind]);
		return -1;
	}
	if (c->config_path && agent_config_file(c, c->config_path, err, sizeof(err))) {
		fprintf(stderr, "kperf-bpf agent: %s\n", err);
		return -1;
	}
	if (agent_config_check(c, err, sizeof(err))) {
		fprintf(stderr, "kperf-bpf agent: %s\n", err);
		return -1;
	}
	return 0;
}
