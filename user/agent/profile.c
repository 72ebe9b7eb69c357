/*
 * profile.c - the pprof endpoints: a CPU profile (cpu-clock sampled at --profile-hz, whole
 * stacks, counted per distinct stack in the kernel) or an off-CPU profile (the time threads
 * spent blocked, by stack) of the processes the agent watches, taken for the seconds a
 * request asks and written as a gzipped profile.proto (export/profile.c), what `go tool
 * pprof`, Parca and Pyroscope read. Nothing is loaded between requests.
 */
#include <errno.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "agent.h"
#include "export/export.h"
#include "kperf/kperf.h"

unsigned agent_profile_stacks(const struct agent_config *c)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	uint64_t samples = (uint64_t)c->profile_hz * c->max_profile_s * (cpus > 0 ? cpus : 1);
	unsigned n = AGENT_STACKS_MIN;

	while (n < samples && n < AGENT_STACKS_MAX)
		n <<= 1;
	return n;
}

/* a sampling task of what <c> watches, disabled; -1 with Perror() */
static int open_task(const struct agent_config *c, enum agent_profile_kind kind,
		     struct kp_profile_meta *meta, char *err, size_t errsz, int *status)
{
	struct PmuAttr attr = { 0 };
	struct KperfPmuOpts o =
		KPERF_OPTS(KperfPmuOpts, .aggregate = 1, .stackEntries = agent_profile_stacks(c));
	char *evts[] = { "cpu-clock" }, *cg = (char *)c->cgroup;
	int pd;

	if (kind == PROFILE_CPU) {
		attr.evtList = evts;
		attr.numEvt = 1;
	} else {
		if (c->target != TARGET_PIDS) {
			snprintf(err, errsz,
				 "an off-CPU profile needs an agent started with -p PID");
			*status = 501;
			return -1;
		}
		attr.blockedSample = 1;
		o.offCpuOnly = 1;
		o.blockedKernelStack = 1;
		meta->weight = KP_WEIGHT_TIME;
		meta->event = KP_BLOCKED_EVT;
	}
	attr.useFreq = 1;
	attr.freq = c->profile_hz;
	attr.callStack = 1;
	attr.symbolMode = RESOLVE_ELF;
	if (c->target == TARGET_PIDS) {
		attr.pidList = c->pids;
		attr.numPid = (unsigned)c->npids;
		attr.includeNewFork = 1;
	} else if (c->target == TARGET_CGROUP) {
		attr.cgroupNameList = &cg;
		attr.numCgroup = 1;
	}
	pd = KperfOpen(SAMPLING, &attr, &o);
	if (pd < 0) {
		snprintf(err, errsz, "cannot sample: %s", Perror());
		*status = 500;
	}
	return pd;
}

/* -p: are the targets still there? (a kept task of a target gone is opened again, and the
 * open says what is missing) */
static bool targets_alive(const struct agent_config *c)
{
	int i;

	for (i = 0; c->target == TARGET_PIDS && i < c->npids; i++)
		if (kill(c->pids[i], 0) && errno == ESRCH)
			return false;
	return true;
}

void agent_profiler_close(struct agent_profiler *pr)
{
	if (pr->pd >= 0)
		PmuClose(pr->pd);
	pr->pd = -1;
}

int agent_profile_take(struct agent_profiler *pr, const struct agent_config *c,
		       enum agent_profile_kind kind, unsigned seconds, volatile bool *stop,
		       char **buf, size_t *len, uint64_t *lost, char *err, size_t errsz)
{
	struct kp_profile_meta meta = { .event = "cpu-clock", .weight = KP_WEIGHT_SAMPLES };
	struct PmuData *d = NULL;
	struct timespec wall, t0, t1;
	bool keep = kind == PROFILE_CPU;
	int pd, n, status = 0;
	FILE *f;

	*buf = NULL;
	*len = 0;
	*lost = 0;
	if (keep && pr->pd >= 0 && (pr->hz != c->profile_hz || !targets_alive(c)))
		agent_profiler_close(pr);
	pd = keep ? pr->pd : -1;
	if (pd < 0) {
		pd = open_task(c, kind, &meta, err, errsz, &status);
		if (pd < 0)
			return status;
		if (keep) {
			pr->pd = pd;
			pr->hz = c->profile_hz;
		}
	}
	if (PmuEnable(pd)) {
		snprintf(err, errsz, "cannot sample: %s", Perror());
		status = 500;
		goto out;
	}
	clock_gettime(CLOCK_REALTIME, &wall);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	meta.start_ns = (uint64_t)wall.tv_sec * 1000000000ULL + (uint64_t)wall.tv_nsec;
	for (;;) {
		struct timespec tick = { 0, 50 * 1000000L };

		clock_gettime(CLOCK_MONOTONIC, &t1);
		if (*stop || (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9 >=
				     (double)seconds)
			break;
		nanosleep(&tick, NULL);
	}
	PmuDisable(pd);
	if (*stop) {
		snprintf(err, errsz, "the agent is stopping");
		status = 503;
		goto out;
	}
	meta.duration_s = (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
	n = PmuRead(pd, &d);
	if (n < 0) {
		snprintf(err, errsz, "cannot read the samples: %s", Perror());
		status = 500;
		goto out;
	}
	f = open_memstream(buf, len);
	if (!f || kp_export_pprof(f, d, n, &meta)) {
		snprintf(err, errsz, "cannot write the profile: %s",
			 f ? Perror() : "out of memory");
		status = 500;
	}
	if (f && fclose(f))
		status = 500;
	if (status) {
		free(*buf);
		*buf = NULL;
		*len = 0;
	}
	if (n > 0)
		PmuDataFree(d);
out:
	/* a kept task that failed is opened anew by the next request */
	if (!keep || (status && status != 503))
		PmuClose(pd);
	if (keep && status && status != 503)
		pr->pd = -1;
	/* what the profile freed in the middle of the heaps (below their tops) goes back to the
	 * kernel too: the next one is seconds away, the agent's RSS between them is what counts */
	malloc_trim(0);
	return status;
}
