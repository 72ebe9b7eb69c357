/*
 * agent.c - the agent's life: check the capabilities, open and attach the programs, serve
 * HTTP, fold the summary every --interval, and wait for signals. SIGTERM or SIGINT: stop
 * serving (a profile being taken is abandoned), detach and close everything, exit 0. SIGHUP:
 * read --config again and apply its bounds; what needs the programs or the socket opened
 * again (listen, targets, syscalls, counters) is kept, with a note, until a restart.
 */
#include <errno.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agent.h"
#include "kperf/kperf.h"
#include "sym/sym.h"
#include "unwind/unwind.h"

/* What the profiles leave for the next one (--cache-mb, half to the symbols of parsed files,
 * half to unwind tables; the files of processes no longer sampled go, least recently used
 * first). A profile of a busy node parses tens of files (4-16 MB of symbols) and compiles as
 * many tables (20-30 MB of rows): kept whole, they were most of the agent's RSS (README,
 * bench/agent_soak.sh); dropped, the next profile makes them again (CPU). */
static void apply_cache_bounds(unsigned mb)
{
	uint64_t half = (uint64_t)mb << 19;

	/* 0 means "the library's defaults" to the caches: one byte is "keep nothing" */
	kp_sym_file_cache_bounds(256, half ? half : 1);
	kp_uw_cache_bounds(256, half ? half : 1);
}

static bool same_str(const char *a, const char *b)
{
	return (!a && !b) || (a && b && !strcmp(a, b));
}

static void reload(struct agent *a)
{
	struct agent_config n;
	char err[512];

	if (!a->cfg.config_path) {
		fprintf(stderr, "kperf-bpf agent: SIGHUP: no --config file to reload\n");
		return;
	}
	n = a->cfg;
	n.pids = NULL;
	n.syscalls = a->cfg.syscalls ? strdup(a->cfg.syscalls) : NULL;
	n.counters = a->cfg.counters ? strdup(a->cfg.counters) : NULL;
	n.config_path = NULL;
	if (agent_config_file(&n, a->cfg.config_path, err, sizeof(err)) ||
	    agent_config_check(&n, err, sizeof(err))) {
		fprintf(stderr, "kperf-bpf agent: SIGHUP: %s; the configuration is unchanged\n",
			err);
		agent_config_free(&n);
		return;
	}
	if (strcmp(n.listen, a->cfg.listen) || n.target != a->cfg.target ||
	    strcmp(n.cgroup, a->cfg.cgroup) || n.pids || !same_str(n.syscalls, a->cfg.syscalls) ||
	    !same_str(n.counters, a->cfg.counters))
		fprintf(stderr, "kperf-bpf agent: SIGHUP: listen, targets, syscalls and counters "
				"change at the next start\n");
	pthread_mutex_lock(&a->lock);
	a->cfg.top_comm = n.top_comm;
	a->cfg.max_workloads = n.max_workloads;
	a->cfg.grace_s = n.grace_s;
	a->cfg.interval_ms = n.interval_ms;
	a->cfg.profile_hz = n.profile_hz;
	a->cfg.max_profile_s = n.max_profile_s;
	a->cfg.cache_mb = n.cache_mb;
	apply_cache_bounds(n.cache_mb);
	memcpy(a->cfg.kubelet_logs, n.kubelet_logs, sizeof(n.kubelet_logs));
	agent_collect_reconfigure(a->col, &a->cfg);
	pthread_mutex_unlock(&a->lock);
	agent_config_free(&n);
	fprintf(stderr, "kperf-bpf agent: configuration reloaded from %s\n", a->cfg.config_path);
}

int agent_run(struct agent_config *c)
{
	struct agent a = { .cfg = *c, .profiler = { .pd = -1 } };
	struct agent_http *http = NULL;
	char err[1024];
	sigset_t set;
	int rc = 1;

	/* one malloc arena per connection thread would each keep its pages: two are enough */
	mallopt(M_ARENA_MAX, 2);
	/* a fixed threshold: blocks above it (symbol tables, unwind rows, a profile's arrays) are
	 * mmap'ed and go back to the kernel when freed; glibc's default raises it to the largest
	 * block freed (up to 32 MiB), after which those blocks fragment the heap for good */
	mallopt(M_MMAP_THRESHOLD, 128 * 1024);
	apply_cache_bounds(a.cfg.cache_mb);
	pthread_mutex_init(&a.lock, NULL);
	pthread_mutex_init(&a.profile_lock, NULL);
	if (agent_check_privileges(err, sizeof(err), stderr)) {
		fprintf(stderr, "kperf-bpf agent: %s\n", err);
		return 1;
	}
	/* every thread (the library's, the server's) leaves these to the main loop */
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);
	if (agent_http_start(&a, a.cfg.listen, a.cfg.max_connections, &http, err, sizeof(err))) {
		fprintf(stderr, "kperf-bpf agent: %s\n", err);
		goto out;
	}
	if (agent_collect_open(&a.cfg, &a.col, err, sizeof(err))) {
		fprintf(stderr, "kperf-bpf agent: %s\n", err);
		goto out;
	}
	malloc_trim(0); /* what loading the programs parsed (the kernel's BTF) and freed */
	a.ready = true;
	fprintf(stderr, "kperf-bpf agent: listening on %.*s:%u\n",
		(int)(strrchr(a.cfg.listen, ':') - a.cfg.listen), a.cfg.listen,
		agent_http_port(http));
	for (;;) {
		struct timespec ts;
		int sig;

		pthread_mutex_lock(&a.lock);
		ts.tv_sec = a.cfg.interval_ms / 1000;
		ts.tv_nsec = (long)(a.cfg.interval_ms % 1000) * 1000000L;
		pthread_mutex_unlock(&a.lock);
		sig = sigtimedwait(&set, NULL, &ts);
		if (sig == SIGTERM || sig == SIGINT)
			break;
		if (sig == SIGHUP) {
			reload(&a);
			continue;
		}
		pthread_mutex_lock(&a.lock);
		agent_collect_fold(a.col);
		pthread_mutex_unlock(&a.lock);
	}
	rc = 0;
out:
	a.ready = false;
	a.stopping = true;
	agent_http_stop(http);
	agent_profiler_close(&a.profiler); /* no request left: the server has stopped */
	agent_collect_close(a.col);
	return rc;
}
