/*
 * test_timeline_offcpu.c - the off-CPU slices of the timeline (KperfTimelineOpts.offCpu), on
 * the sleeper workload: its main thread sleeps exactly 7 times for 5 ms in nap_here() inside
 * the mstx range "naps", while a thread "spinner" spins without waiting for anything. The
 * written Chrome trace (parsed with cJSON) must hold exactly 7 "blocked" slices of the main
 * thread inside "naps", each at least 5 ms long, each inside the nanosleep that made it on the
 * same thread, each with nap_here on its user stack; the spinner has no blocked slice; no
 * slice is shorter than the minimum asked for, and the shorter ones are counted.
 */
#include <cjson/cJSON.h>
#include <criterion/criterion.h>

#include "kperf/kperf.h"
#include "testutil.h"

TestSuite(timeline_offcpu, .timeout = 120);

#define NAPS 7
#define NAP_MS 5
#define MIN_US 1000

static double num(const cJSON *e, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(e, key);

	return cJSON_IsNumber(v) ? v->valuedouble : -1;
}

static const char *str(const cJSON *e, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(e, key);

	return cJSON_IsString(v) ? v->valuestring : "";
}

static const cJSON *first(const cJSON *evs, const char *ph, const char *name)
{
	const cJSON *e;

	cJSON_ArrayForEach(e, evs) if (!strcmp(str(e, "ph"), ph) &&
				       !strcmp(str(e, "name"), name)) return e;
	return NULL;
}

/* does <e> (ts, dur) lie within <outer> on the same thread? */
static bool inside(const cJSON *e, const cJSON *outer)
{
	double s = num(e, "ts"), end = s + num(e, "dur");

	return num(e, "tid") == num(outer, "tid") && s >= num(outer, "ts") &&
	       end <= num(outer, "ts") + num(outer, "dur");
}

/* is a frame named <fn> on the stack whose leaf is frame <sf> of stackFrames <frames>? */
static bool on_stack(const cJSON *frames, int sf, const char *fn)
{
	char key[32];
	int depth;

	for (depth = 0; sf > 0 && depth < 256; depth++) {
		const cJSON *f;

		snprintf(key, sizeof(key), "%d", sf);
		f = cJSON_GetObjectItemCaseSensitive(frames, key);
		if (!f)
			return false;
		if (!strcmp(str(f, "name"), fn))
			return true;
		sf = (int)num(f, "parent");
	}
	return false;
}

Test(timeline_offcpu, sleeps_are_blocked_slices_inside_their_syscalls)
{
	struct tu_proc p = tu_spawn("sleeper", "--wait", "--naps", "7", "--nap-ms", "5",
				    "--spin-ms", "100", NULL);
	struct KperfTimelineOpts o = KPERF_OPTS(KperfTimelineOpts, .pidList = &p.pid, .numPid = 1,
						.noSamples = 1, .offCpu = 1, .offCpuMinUs = MIN_US);
	struct KperfTimelineStats st;
	const cJSON *evs, *frames, *naps, *spin, *e, *s;
	char path[] = "/tmp/kperf-timeline-XXXXXX";
	int td, fd, in_naps = 0, long_enough = 0, in_syscall = 0, with_fn = 0, spin_blocked = 0;
	int too_short = 0, slices = 0, bad_reason = 0, before = tu_bpf_prog_count();
	char *text;
	cJSON *doc;

	cr_assert_gt(p.pid, 0);
	td = KperfTimelineOpen(&o);
	cr_assert_geq(td, 0, "%d %s", Perrorno(), Perror());
	cr_assert_eq(KperfTimelineEnable(td), 0, "%s", Perror());
	tu_go(&p);
	cr_assert_eq(tu_wait(&p), 0);
	cr_assert_eq(KperfTimelineDisable(td), 0, "%s", Perror());
	cr_assert_eq(KperfTimelineGetStats(td, &st), 0);
	cr_expect_eq(st.offCpuLost, 0);
	cr_expect_eq(st.dropped, 0);
	cr_expect_geq(st.offCpuSlices, NAPS);
	fd = mkstemp(path);
	cr_assert_geq(fd, 0);
	close(fd);
	cr_assert_eq(KperfTimelineWrite(td, path), 0, "%s", Perror());
	KperfTimelineClose(td);
	cr_assert_eq(kp_read_file(path, &text, NULL), 0);
	unlink(path);
	doc = cJSON_Parse(text);
	free(text);
	cr_assert(doc);
	evs = cJSON_GetObjectItemCaseSensitive(doc, "traceEvents");
	frames = cJSON_GetObjectItemCaseSensitive(doc, "stackFrames");
	naps = first(evs, "X", "naps");
	spin = first(evs, "X", "spin");
	cr_assert(naps && spin, "the ranges naps and spin");
	cr_assert_neq(num(naps, "tid"), num(spin, "tid"));
	cJSON_ArrayForEach(e, evs)
	{
		if (strcmp(str(e, "cat"), "off-cpu"))
			continue;
		slices++;
		too_short += num(e, "dur") < MIN_US;
		bad_reason += strcmp(str(e, "ph"), "X") ||
			      strcmp(str(cJSON_GetObjectItemCaseSensitive(e, "args"), "reason"),
				     str(e, "name"));
		if (strcmp(str(e, "name"), "blocked"))
			continue;
		spin_blocked += num(e, "tid") == num(spin, "tid");
		if (!inside(e, naps))
			continue;
		in_naps++;
		long_enough += num(e, "dur") >= NAP_MS * 1000;
		with_fn += on_stack(frames, (int)num(e, "sf"), "nap_here");
		cJSON_ArrayForEach(s, evs) if (!strcmp(str(s, "name"), "nanosleep") &&
					       !strcmp(str(s, "ph"), "X") && inside(e, s))
		{
			in_syscall++;
			break;
		}
	}
	cr_expect_eq(slices, (int)st.offCpuSlices);
	cr_expect_eq(in_naps, NAPS, "blocked slices of the main thread inside naps");
	cr_expect_eq(long_enough, NAPS, "slices at least as long as the sleep");
	cr_expect_eq(in_syscall, NAPS, "slices inside their nanosleep");
	cr_expect_eq(with_fn, NAPS, "slices with nap_here on their user stack");
	cr_expect_eq(spin_blocked, 0, "the spinner never waits");
	cr_expect_eq(too_short, 0, "slices shorter than %d us", MIN_US);
	cr_expect_eq(bad_reason, 0);
	cJSON_Delete(doc);
	cr_expect_eq(tu_bpf_prog_count_settle(before), before, "programs left loaded");
}

Test(timeline_offcpu, the_minimum_needs_off_cpu)
{
	int self = getpid();
	struct KperfTimelineOpts o =
		KPERF_OPTS(KperfTimelineOpts, .pidList = &self, .numPid = 1, .offCpuMinUs = 10);

	cr_expect_eq(KperfTimelineOpen(&o), -1);
	cr_expect_eq(Perrorno(), KPERF_ERR_INVALID_ARG);
	cr_expect_str_eq(Perror(),
			 "offCpuMinUs 10 without offCpu: there are no off-CPU slices to filter");
	/* off-CPU slices alone are something to put on the timeline */
	o.offCpuMinUs = 0;
	o.offCpu = 1;
	o.noSyscalls = o.noSamples = o.noMarkers = 1;
	self = KperfTimelineOpen(&o);
	cr_expect_geq(self, 0, "%s", Perror());
	KperfTimelineClose(self);
}

/*
 * The memory source: heapsteps' known allocations after its go byte make the "heap in use"
 * counter of its process take exactly the values 1 MiB, 4 MiB, 4 MiB + 100, 3 MiB + 100,
 * 5 MiB + 100, 5 MiB, 2 MiB, 0 in this order, and its three allocations of 1 MiB or more are
 * instant events with their function and size.
 */
Test(timeline_offcpu, heap_in_use_counter_and_large_allocations)
{
	static const double want[] = { 1 << 20,		4 << 20, (4 << 20) + 100, (3 << 20) + 100,
				       (5 << 20) + 100, 5 << 20, 2 << 20,	  0 };
	struct tu_proc p = tu_spawn("heapsteps", "--wait", NULL);
	struct KperfTimelineOpts o = KPERF_OPTS(KperfTimelineOpts, .pidList = &p.pid, .numPid = 1,
						.noSamples = 1, .noSyscalls = 1, .noMarkers = 1,
						.memory = 1);
	struct KperfTimelineStats st;
	char path[] = "/tmp/kperf-timeline-XXXXXX";
	const cJSON *evs, *e, *args;
	int td, fd, n = 0, big = 0, pid = p.pid, before = tu_bpf_prog_count();
	double got[16];
	char *text;
	cJSON *doc;

	cr_assert_gt(pid, 0);
	td = KperfTimelineOpen(&o);
	cr_assert_geq(td, 0, "%d %s", Perrorno(), Perror());
	cr_assert_eq(KperfTimelineEnable(td), 0, "%s", Perror());
	tu_go(&p);
	cr_assert_eq(tu_wait(&p), 0);
	cr_assert_eq(KperfTimelineDisable(td), 0, "%s", Perror());
	cr_assert_eq(KperfTimelineGetStats(td, &st), 0);
	cr_expect_eq(st.memLost, 0);
	fd = mkstemp(path);
	cr_assert_geq(fd, 0);
	close(fd);
	cr_assert_eq(KperfTimelineWrite(td, path), 0, "%s", Perror());
	KperfTimelineClose(td);
	cr_assert_eq(kp_read_file(path, &text, NULL), 0);
	unlink(path);
	doc = cJSON_Parse(text);
	free(text);
	cr_assert(doc);
	evs = cJSON_GetObjectItemCaseSensitive(doc, "traceEvents");
	cJSON_ArrayForEach(e, evs)
	{
		if (strcmp(str(e, "cat"), "memory") || num(e, "pid") != pid)
			continue;
		args = cJSON_GetObjectItemCaseSensitive(e, "args");
		if (!strcmp(str(e, "ph"), "C")) {
			cr_expect_str_eq(str(e, "name"), "heap in use");
			if (n < 16)
				got[n] = num(args, "bytes");
			n++;
		} else if (!strcmp(str(e, "ph"), "i")) {
			big += (!strcmp(str(e, "name"), "malloc") && num(args, "size") == 1 << 20) +
			       (!strcmp(str(e, "name"), "calloc") && num(args, "size") == 3 << 20) +
			       (!strcmp(str(e, "name"), "malloc") && num(args, "size") == 2 << 20);
		}
	}
	cr_expect_eq(n, 8, "heap in use changes: %d", n);
	for (int i = 0; i < n && i < 8; i++)
		cr_expect_eq(got[i], want[i], "value %d: %.0f, not %.0f", i, got[i], want[i]);
	cr_expect_eq(big, 3);
	cr_expect_eq(st.heapChanges, 8);
	cr_expect_eq(st.largeAllocs, 3);
	cJSON_Delete(doc);
	cr_expect_eq(tu_bpf_prog_count_settle(before), before, "programs left loaded");
}
