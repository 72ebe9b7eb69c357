/*
 * test_timeline.c - KperfTimeline* from C: the mstx_wl workload's marks, ranges and syscalls
 * in the written Chrome trace (parsed with cJSON) with exact counts and nesting, the
 * statistics, a write that cannot happen, and every bad option with its code and message.
 * (The strict format check of every event and the speedscope import are in
 * tests/python/test_timeline.py.)
 */
#include <cjson/cJSON.h>
#include <criterion/criterion.h>

#include "kperf/kperf.h"
#include "testutil.h"

TestSuite(timeline, .timeout = 120);

static cJSON *load(const char *path)
{
	char *text;
	cJSON *doc;

	cr_assert_eq(kp_read_file(path, &text, NULL), 0, "%s", path);
	doc = cJSON_Parse(text);
	free(text);
	cr_assert(doc, "%s is not JSON", path);
	return doc;
}

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

static int count(const cJSON *evs, const char *ph, const char *name, const char *cat)
{
	const cJSON *e;
	int n = 0;

	cJSON_ArrayForEach(e, evs) n += !strcmp(str(e, "ph"), ph) &&
					(!name || !strcmp(str(e, "name"), name)) &&
					(!cat || !strcmp(str(e, "cat"), cat));
	return n;
}

static const cJSON *first(const cJSON *evs, const char *ph, const char *name)
{
	const cJSON *e;

	cJSON_ArrayForEach(e, evs) if (!strcmp(str(e, "ph"), ph) &&
				       !strcmp(str(e, "name"), name)) return e;
	return NULL;
}

Test(timeline, workload_markers_and_syscalls_in_the_chrome_trace)
{
	struct tu_proc p = tu_spawn("mstx_wl", "--wait", "--marks", "30", "--calls", "7", NULL);
	struct KperfTimelineOpts o =
		KPERF_OPTS(KperfTimelineOpts, .pidList = &p.pid, .numPid = 1, .noSamples = 1);
	struct KperfTimelineStats st;
	const cJSON *evs, *inner, *outer, *e;
	char path[] = "/tmp/kperf-timeline-XXXXXX";
	int td, fd, in_inner = 0, before = tu_bpf_prog_count();
	double is, ie;
	cJSON *doc;

	cr_assert_gt(p.pid, 0);
	td = KperfTimelineOpen(&o);
	cr_assert_geq(td, 0, "%d %s", Perrorno(), Perror());
	cr_assert_eq(KperfTimelineEnable(td), 0, "%s", Perror());
	tu_go(&p);
	cr_assert_eq(tu_wait(&p), 0);
	cr_assert_eq(KperfTimelineDisable(td), 0);
	cr_assert_eq(KperfTimelineGetStats(td, &st), 0);
	cr_expect_eq(st.marks, 35);
	cr_expect_eq(st.ranges, 4);
	cr_expect_eq(st.openRanges, 0);
	cr_expect_eq(st.samples, 0);
	cr_expect_eq(st.dropped, 0);
	cr_expect_eq(st.notKept, 0);
	fd = mkstemp(path);
	cr_assert_geq(fd, 0);
	close(fd);
	cr_assert_eq(KperfTimelineWrite(td, path), 0, "%s", Perror());
	/* a file that cannot be written: said, and the collection still there */
	cr_expect_eq(KperfTimelineWrite(td, "/nonexistent-dir/t.json"), -1);
	cr_expect(strstr(Perror(), "/nonexistent-dir/t.json"), "%s", Perror());
	KperfTimelineClose(td);
	doc = load(path);
	unlink(path);
	evs = cJSON_GetObjectItemCaseSensitive(doc, "traceEvents");
	cr_assert(cJSON_IsArray(evs));
	cr_expect_eq(count(evs, "i", "tick", "default"), 30);
	cr_expect_eq(count(evs, "i", "alpha-mark", "alpha"), 3);
	cr_expect_eq(count(evs, "i", "beta-mark", "beta"), 2);
	cr_expect_eq(count(evs, "X", "alpha-range", "alpha"), 1);
	cr_expect_eq(count(evs, "b", "handoff", "default"), 1);
	cr_expect_eq(count(evs, "e", "handoff", "default"), 1);
	cr_expect_eq(count(evs, "P", NULL, NULL), 0);
	outer = first(evs, "X", "outer");
	inner = first(evs, "X", "inner");
	cr_assert(outer && inner);
	is = num(inner, "ts");
	ie = is + num(inner, "dur");
	cr_expect(num(outer, "ts") < is && ie < num(outer, "ts") + num(outer, "dur"));
	cJSON_ArrayForEach(e, evs) in_inner += !strcmp(str(e, "name"), "getppid") &&
					       num(e, "ts") > is &&
					       num(e, "ts") + num(e, "dur") < ie;
	cr_expect_eq(in_inner, 7);
	/* 8 in all while the workload runs its markers (an ASan runtime makes more at exit) */
	e = first(evs, "e", "handoff");
	cr_assert(e);
	in_inner = 0;
	cJSON_ArrayForEach(e, evs) in_inner += !strcmp(str(e, "name"), "getppid") &&
					       num(e, "ts") > num(outer, "ts") &&
					       num(e, "ts") < num(first(evs, "e", "handoff"), "ts");
	cr_expect_eq(in_inner, 8);
	cJSON_Delete(doc);
	cr_expect_eq(tu_bpf_prog_count_settle(before), before, "programs left loaded");
}

#define EXPECT_FAIL(call, code, msg)                                                        \
	do {                                                                                \
		cr_expect_eq((call), -1, #call);                                            \
		cr_expect_eq(Perrorno(), (code), "%s: %d %s", #call, Perrorno(), Perror()); \
		cr_expect(strstr(Perror(), (msg)), "%s: '%s'", #call, Perror());            \
	} while (0)

Test(timeline, bad_options)
{
	int self = getpid();
	struct KperfTimelineOpts o = KPERF_OPTS(KperfTimelineOpts, .pidList = &self, .numPid = 1);
	struct KperfTimelineStats st;

	EXPECT_FAIL(KperfTimelineOpen(NULL), LIBPERF_ERR_INVALID_PIDLIST,
		    "a timeline needs the processes to follow (or allPids): pidList is NULL and "
		    "numPid 0");
	o.allPids = 1;
	EXPECT_FAIL(KperfTimelineOpen(&o), LIBPERF_ERR_INVALID_PIDLIST,
		    "allPids takes every process: it takes no pidList");
	o.pidList = NULL;
	o.numPid = 0;
	o.memory = 1;
	EXPECT_FAIL(KperfTimelineOpen(&o), KPERF_ERR_INVALID_ARG,
		    "allPids takes every process: memory follows given processes only");
	o.memory = 0;
	o.fromExec = 1;
	EXPECT_FAIL(KperfTimelineOpen(&o), LIBPERF_ERR_INVALID_PIDLIST,
		    "allPids takes every process: it takes no fromExec");
	o.fromExec = 0;
	o.allPids = 0;
	o.pidList = &self;
	o.numPid = 1;
	o.noSyscalls = o.noSamples = o.noMarkers = 1;
	EXPECT_FAIL(KperfTimelineOpen(&o), KPERF_ERR_INVALID_ARG,
		    "noSyscalls, noSamples and noMarkers leave nothing to put on the timeline");
	o.noSyscalls = o.noSamples = o.noMarkers = 0;
	o.freq = 100001;
	EXPECT_FAIL(KperfTimelineOpen(&o), KPERF_ERR_INVALID_ARG,
		    "freq 100001 is more than 100000 samples a second");
	EXPECT_FAIL(KperfTimelineEnable(4242), LIBPERF_ERR_INVALID_PD, "4242");
	EXPECT_FAIL(KperfTimelineWrite(4242, "/tmp/x.json"), LIBPERF_ERR_INVALID_PD, "4242");
	EXPECT_FAIL(KperfTimelineGetStats(4242, &st), LIBPERF_ERR_INVALID_PD, "4242");
	KperfTimelineClose(4242);
}

/*
 * A paused timeline (disabled, then enabled again) of the calling process: the syscalls made
 * while it is disabled are not recorded, because the syscall programs are detached (their
 * links closed: fewer BPF descriptors while disabled), not because records are filtered
 * afterwards. kperf.profiler's pause()/resume() are these calls. The timeline's own thread,
 * which reads and sleeps in this same process, is not on it: every syscall is this thread's.
 */
Test(timeline, disabled_records_nothing_and_leaves_its_own_thread_out)
{
	int self = getpid(), td, fd, i, on_fds, off_fds, n_getppid = 0, others = 0;
	struct KperfTimelineOpts o =
		KPERF_OPTS(KperfTimelineOpts, .pidList = &self, .numPid = 1, .noSamples = 1);
	char path[] = "/tmp/kperf-timeline-XXXXXX";
	int before = tu_bpf_prog_count();
	const cJSON *evs, *e;
	cJSON *doc;

	td = KperfTimelineOpen(&o);
	cr_assert_geq(td, 0, "%d %s", Perrorno(), Perror());
	cr_assert_eq(KperfTimelineEnable(td), 0, "%s", Perror());
	on_fds = tu_attach_fds();
	for (i = 0; i < 5; i++)
		syscall(SYS_getppid);
	cr_assert_eq(KperfTimelineDisable(td), 0, "%s", Perror());
	off_fds = tu_attach_fds();
	cr_expect_lt(off_fds, on_fds, "the syscall programs stay attached while disabled");
	for (i = 0; i < 11; i++)
		syscall(SYS_getppid);
	cr_assert_eq(KperfTimelineEnable(td), 0, "%s", Perror());
	for (i = 0; i < 3; i++)
		syscall(SYS_getppid);
	tu_sleep_ms(150); /* the timeline's thread reads (and sleeps) a few times */
	cr_assert_eq(KperfTimelineDisable(td), 0, "%s", Perror());
	fd = mkstemp(path);
	cr_assert_geq(fd, 0);
	close(fd);
	cr_assert_eq(KperfTimelineWrite(td, path), 0, "%s", Perror());
	KperfTimelineClose(td);
	doc = load(path);
	unlink(path);
	evs = cJSON_GetObjectItemCaseSensitive(doc, "traceEvents");
	cr_assert(cJSON_IsArray(evs));
	cJSON_ArrayForEach(e, evs)
	{
		if (strcmp(str(e, "ph"), "X"))
			continue;
		n_getppid += !strcmp(str(e, "name"), "getppid");
		others += (int)num(e, "tid") != (int)gettid();
	}
	cr_expect_eq(n_getppid, 5 + 3);
	cr_expect_eq(others, 0, "syscalls of the timeline's own thread are on it");
	cJSON_Delete(doc);
	cr_expect_eq(tu_bpf_prog_count_settle(before), before, "programs left loaded");
}
