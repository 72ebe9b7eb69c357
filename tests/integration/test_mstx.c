/*
 * test_mstx.c - the mstx markers end to end, from C: the mstx_wl workload's marks, nested
 * ranges, a range ended on another thread and two domains come back exactly
 * (KperfActivity*), with the syscalls it makes inside its ranges; a disabled domain is
 * dropped in the kernel; the semaphores are 0 and no probe site is patched while nothing
 * collects (checked in the workload's memory, not timed); the kernel-without-cookies path
 * (per-process probes); every process (allPids), with and without cookies; the
 * raw_syscalls fallback's descriptor lookup; every bad input with
 * its code and message; nothing left loaded afterwards.
 */
#include <criterion/criterion.h>
#include <limits.h>
#include <pthread.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>

#include "activity/activity.h"
#include "kperf/kperf.h"
#include "kperf/mstx.h"
#include "testutil.h"

TestSuite(mstx, .timeout = 120);

static const enum KperfActivityKind MARKER[] = { KPERF_ACTIVITY_KIND_MARKER };
static const enum KperfActivityKind MARKER_KERNEL[] = { KPERF_ACTIVITY_KIND_MARKER,
							KPERF_ACTIVITY_KIND_KERNEL };

/* every record of <ad> until the workload is gone and nothing more comes */
static int read_all(int ad, struct KperfActivityRecord **out)
{
	struct KperfActivityRecord *all = NULL, *r;
	int n = 0, k, i;

	while ((k = KperfActivityRead(ad, 200, &r)) > 0) {
		all = realloc(all, (size_t)(n + k) * sizeof(*all));
		cr_assert(all);
		for (i = 0; i < k; i++) {
			all[n + i] = r[i];
			all[n + i].name = strdup(r[i].name);
			all[n + i].domain = strdup(r[i].domain);
			all[n + i].comm = strdup(r[i].comm);
			all[n + i].channel = strdup(r[i].channel);
		}
		n += k;
		KperfActivityFree(r);
	}
	cr_assert_geq(k, 0, "%s", Perror());
	*out = all;
	return n;
}

static void free_all(struct KperfActivityRecord *r, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		free((void *)r[i].name);
		free((void *)r[i].domain);
		free((void *)r[i].comm);
		free((void *)r[i].channel);
	}
	free(r);
}

static int count(const struct KperfActivityRecord *r, int n, enum KperfActivityKind kind,
		 unsigned flag, const char *name, const char *domain)
{
	int i, c = 0;

	for (i = 0; i < n; i++)
		c += r[i].kind == kind &&
		     (kind != KPERF_ACTIVITY_KIND_MARKER || r[i].flag == flag) &&
		     (!name || !strcmp(r[i].name, name)) &&
		     (!domain || !strcmp(r[i].domain, domain));
	return c;
}

static const struct KperfActivityRecord *find(const struct KperfActivityRecord *r, int n,
					      unsigned flag, const char *name)
{
	int i;

	for (i = 0; i < n; i++)
		if (r[i].kind == KPERF_ACTIVITY_KIND_MARKER && r[i].flag == flag &&
		    !strcmp(r[i].name, name))
			return &r[i];
	return NULL;
}

static const struct KperfActivityRecord *end_of(const struct KperfActivityRecord *r, int n,
						const struct KperfActivityRecord *start)
{
	int i;

	for (i = 0; i < n; i++)
		if (r[i].kind == KPERF_ACTIVITY_KIND_MARKER &&
		    r[i].flag == KPERF_ACTIVITY_FLAG_MARKER_END && r[i].id == start->id &&
		    r[i].pid == start->pid)
			return &r[i];
	return NULL;
}

static int collect_wl(const enum KperfActivityKind *kinds, unsigned nk, const char *disable,
		      struct KperfActivityRecord **out, struct KperfActivityStats *st)
{
	struct tu_proc p = tu_spawn("mstx_wl", "--wait", "--marks", "100", "--calls", "7", NULL);
	struct KperfActivityOpts o = { .sz = sizeof(o), .pidList = &p.pid, .numPid = 1 };
	int ad, n;

	cr_assert_gt(p.pid, 0);
	ad = KperfActivityOpen(kinds, nk, &o);
	cr_assert_geq(ad, 0, "%d %s", Perrorno(), Perror());
	if (disable)
		cr_assert_eq(KperfActivityDisableDomain(ad, disable), 0, "%s", Perror());
	cr_assert_eq(KperfActivityEnable(ad), 0, "%s", Perror());
	tu_go(&p);
	cr_assert_eq(tu_wait(&p), 0);
	n = read_all(ad, out);
	cr_assert_eq(KperfActivityGetStats(ad, st), 0);
	KperfActivityClose(ad);
	return n;
}

Test(mstx, marks_ranges_domains_and_syscalls_of_a_c_workload)
{
	struct KperfActivityRecord *r;
	const struct KperfActivityRecord *outer, *inner, *oe, *ie, *hs, *he, *as, *ae;
	struct KperfActivityStats st;
	int before = tu_bpf_prog_count(), n, i, in_inner = 0, in_alpha = 0, k;

	n = collect_wl(MARKER_KERNEL, 2, NULL, &r, &st);
	cr_expect_eq(count(r, n, KPERF_ACTIVITY_KIND_MARKER,
			   KPERF_ACTIVITY_FLAG_MARKER_INSTANTANEOUS, "tick", "default"),
		     100);
	cr_expect_eq(count(r, n, KPERF_ACTIVITY_KIND_MARKER,
			   KPERF_ACTIVITY_FLAG_MARKER_INSTANTANEOUS, "alpha-mark", "alpha"),
		     3);
	cr_expect_eq(count(r, n, KPERF_ACTIVITY_KIND_MARKER,
			   KPERF_ACTIVITY_FLAG_MARKER_INSTANTANEOUS, "beta-mark", "beta"),
		     2);
	cr_expect_eq(count(r, n, KPERF_ACTIVITY_KIND_MARKER, KPERF_ACTIVITY_FLAG_MARKER_START, NULL,
			   NULL),
		     4);
	cr_expect_eq(count(r, n, KPERF_ACTIVITY_KIND_MARKER, KPERF_ACTIVITY_FLAG_MARKER_END, "",
			   NULL),
		     4, "range ends carry no name");
	outer = find(r, n, KPERF_ACTIVITY_FLAG_MARKER_START, "outer");
	inner = find(r, n, KPERF_ACTIVITY_FLAG_MARKER_START, "inner");
	hs = find(r, n, KPERF_ACTIVITY_FLAG_MARKER_START, "handoff");
	as = find(r, n, KPERF_ACTIVITY_FLAG_MARKER_START, "alpha-range");
	cr_assert(outer && inner && hs && as);
	oe = end_of(r, n, outer);
	ie = end_of(r, n, inner);
	he = end_of(r, n, hs);
	ae = end_of(r, n, as);
	cr_assert(oe && ie && he && ae);
	cr_expect(outer->start < inner->start && inner->start < ie->start && ie->start < oe->start,
		  "inner nests in outer");
	cr_expect_str_eq(as->domain, "alpha");
	cr_expect_str_eq(ae->domain, "alpha");
	cr_expect_eq(hs->tid, hs->pid);
	cr_expect_neq(he->tid, hs->tid, "handoff ends on the second thread");
	cr_expect_str_eq(he->comm, "mstx_wl_end");
	/* the syscalls made inside the ranges, on the same clock */
	for (i = 0; i < n; i++) {
		if (r[i].kind != KPERF_ACTIVITY_KIND_KERNEL || strcmp(r[i].name, "getppid"))
			continue;
		in_inner += r[i].tid == inner->tid && r[i].start > inner->start &&
			    r[i].end < ie->start;
		in_alpha += r[i].tid == as->tid && r[i].start > as->start && r[i].end < ae->start;
	}
	cr_expect_eq(in_inner, 7);
	cr_expect_eq(in_alpha, 1);
	/* and none elsewhere while the workload runs its markers (an ASan runtime makes more
	 * at exit: only this window counts) */
	k = 0;
	for (i = 0; i < n; i++)
		k += r[i].kind == KPERF_ACTIVITY_KIND_KERNEL && !strcmp(r[i].name, "getppid") &&
		     r[i].start > outer->start && r[i].end < he->start;
	cr_expect_eq(k, 8);
	/* ids: unique among the workload's calls (a range's start and end share one) */
	for (i = 0; i < n; i++)
		for (k = i + 1; k < n; k++)
			if (r[i].kind == KPERF_ACTIVITY_KIND_MARKER &&
			    r[k].kind == KPERF_ACTIVITY_KIND_MARKER && r[i].id == r[k].id)
				cr_expect(r[i].flag == KPERF_ACTIVITY_FLAG_MARKER_START &&
						  r[k].flag == KPERF_ACTIVITY_FLAG_MARKER_END,
					  "id %llu twice", (unsigned long long)r[i].id);
	cr_expect_eq(st.records, (uint64_t)n);
	cr_expect_eq(st.dropped, 0);
	cr_expect_eq(st.probes, 3, "mark, range_start and range_end: one site each");
	cr_expect_eq(st.probeFiles, 1);
	free_all(r, n);
	cr_expect_eq(tu_bpf_prog_count_settle(before), before, "programs left loaded");
}

Test(mstx, disabled_domain_is_dropped_in_the_kernel)
{
	struct KperfActivityRecord *r;
	struct KperfActivityStats st;
	int n = collect_wl(MARKER, 1, "beta", &r, &st);

	cr_expect_eq(count(r, n, KPERF_ACTIVITY_KIND_MARKER,
			   KPERF_ACTIVITY_FLAG_MARKER_INSTANTANEOUS, NULL, "beta"),
		     0);
	cr_expect_eq(count(r, n, KPERF_ACTIVITY_KIND_MARKER,
			   KPERF_ACTIVITY_FLAG_MARKER_INSTANTANEOUS, "alpha-mark", "alpha"),
		     3);
	cr_expect_eq(st.filtered, 2);
	cr_expect_eq(st.records, (uint64_t)n);
	free_all(r, n);
}

/* ---- not collected: the semaphores are 0 and no probe site is patched ---- */

struct probe_state {
	unsigned short sema[3];
	bool patched[3];
};

/* the workload's copy of libkperf-bpf, its notes, and what its memory holds now */
static void probe_state(pid_t pid, struct probe_state *ps)
{
	char maps[64], line[PATH_MAX + 128], lib[PATH_MAX] = "";
	struct kp_usdt_note *notes;
	unsigned long start, end, off;
	int n, i, k = 0, fd;
	FILE *f;

	memset(ps, 0, sizeof(*ps));
	snprintf(maps, sizeof(maps), "/proc/%d/maps", pid);
	f = fopen(maps, "r");
	cr_assert(f);
	while (fgets(line, sizeof(line), f))
		if (strstr(line, "/libkperf-bpf.so"))
			sscanf(strchr(line, '/'), "%s", lib);
	cr_assert(lib[0], "the workload maps no libkperf-bpf.so");
	n = kp_usdt_notes(lib, "kperf", &notes);
	cr_assert_eq(n, 3, "%s: %d kperf probes", lib, n);
	fd = open(lib, O_RDONLY);
	cr_assert_geq(fd, 0);
	for (i = 0; i < n; i++) {
		unsigned char file[4], mem[4];
		uint64_t sema_addr = 0, site_addr = 0;

		rewind(f);
		while (fgets(line, sizeof(line), f)) {
			if (!strstr(line, lib) ||
			    sscanf(line, "%lx-%lx %*s %lx", &start, &end, &off) != 3)
				continue;
			if (notes[i].sema_off >= off && notes[i].sema_off < off + (end - start))
				sema_addr = start + notes[i].sema_off - off;
			if (notes[i].file_off >= off && notes[i].file_off < off + (end - start))
				site_addr = start + notes[i].file_off - off;
		}
		cr_assert(sema_addr && site_addr, "probe %s not mapped", notes[i].name);
		k = !strcmp(notes[i].name, "mark")	  ? 0 :
		    !strcmp(notes[i].name, "range_start") ? 1 :
							    2;
		struct iovec local = { &ps->sema[k], 2 }, remote = { (void *)sema_addr, 2 };

		cr_assert_eq(process_vm_readv(pid, &local, 1, &remote, 1, 0), 2);
		local = (struct iovec){ mem, sizeof(mem) };
		remote = (struct iovec){ (void *)site_addr, sizeof(mem) };
		cr_assert_eq(process_vm_readv(pid, &local, 1, &remote, 1, 0), (ssize_t)sizeof(mem));
		cr_assert_eq(pread(fd, file, sizeof(file), (off_t)notes[i].file_off),
			     (ssize_t)sizeof(file));
		/* a uprobe replaces the instruction at the site by a breakpoint */
		ps->patched[k] = memcmp(mem, file, sizeof(mem)) != 0;
	}
	close(fd);
	fclose(f);
	free(notes);
}

Test(mstx, not_collected_costs_a_load_and_a_branch)
{
	struct tu_proc p = tu_spawn("mstx_wl", "--wait", "--marks", "3", NULL);
	struct KperfActivityOpts o = { .sz = sizeof(o), .pidList = &p.pid, .numPid = 1 };
	struct probe_state ps;
	int ad, i;

	cr_assert_gt(p.pid, 0);
	probe_state(p.pid, &ps);
	for (i = 0; i < 3; i++) {
		cr_expect_eq(ps.sema[i], 0, "semaphore %d while nothing collects", i);
		cr_expect(!ps.patched[i], "probe site %d patched while nothing collects", i);
	}
	ad = KperfActivityOpen(MARKER, 1, &o);
	cr_assert_geq(ad, 0, "%s", Perror());
	probe_state(p.pid, &ps);
	for (i = 0; i < 3; i++) {
		cr_expect_eq(ps.sema[i], 1, "semaphore %d while collected", i);
		cr_expect(ps.patched[i], "probe site %d not patched while collected", i);
	}
	KperfActivityClose(ad);
	probe_state(p.pid, &ps);
	for (i = 0; i < 3; i++) {
		cr_expect_eq(ps.sema[i], 0, "semaphore %d after the collection", i);
		cr_expect(!ps.patched[i], "probe site %d still patched", i);
	}
	tu_kill(&p);
}

Test(mstx, uncollected_workload_takes_no_ids)
{
	struct tu_proc p;
	char *argv[] = { "mstx_wl", "--marks", "5", NULL };
	char out[256] = "";
	ssize_t n;

	p = tu_spawn_v(argv, 1);
	cr_assert_gt(p.pid, 0);
	n = read(p.out_fd, out, sizeof(out) - 1);
	cr_assert_gt(n, 0);
	cr_expect_str_eq(out, "ids outer=0 inner=0 alpha=0 handoff=0\n",
			 "no collector: the probe path is never taken");
	cr_expect_eq(tu_wait(&p), 0);
	close(p.out_fd);
}

/* kernels before 5.15 (no attach cookies): probes per process, children not followed */
Test(mstx, without_attach_cookies_per_process_probes)
{
	struct KperfActivityRecord *r;
	struct KperfActivityStats st;
	struct tu_proc p;
	struct KperfActivityOpts o = { .sz = sizeof(o), .numPid = 1 };
	int ad, n;

	setenv("KPERF_BPF_NO_COOKIE", "1", 1);
	p = tu_spawn("mstx_wl", "--wait", "--marks", "4", "--fork", NULL);
	o.pidList = &p.pid;
	ad = KperfActivityOpen(MARKER, 1, &o);
	cr_assert_geq(ad, 0, "%s", Perror());
	cr_expect_eq(GetWarn(), KPERF_WARN_FALLBACK);
	cr_expect(strstr(GetWarnMsg(), "markers are collected from the given processes and the "
				       "copies of libkperf-bpf they had loaded, not from their "
				       "children"),
		  "%s", GetWarnMsg());
	cr_assert_eq(KperfActivityEnable(ad), 0);
	tu_go(&p);
	cr_assert_eq(tu_wait(&p), 0);
	n = read_all(ad, &r);
	KperfActivityGetStats(ad, &st);
	KperfActivityClose(ad);
	cr_expect_eq(count(r, n, KPERF_ACTIVITY_KIND_MARKER,
			   KPERF_ACTIVITY_FLAG_MARKER_INSTANTANEOUS, "tick", NULL),
		     4, "the parent's, not its forked child's");
	cr_expect_eq(st.probes, 3);
	free_all(r, n);
}

/* the "tick" marks and the getppid calls inside the "inner" range of process <pid> */
static void of_pid(const struct KperfActivityRecord *r, int n, int pid, int *ticks, int *calls)
{
	uint64_t from = 0, to = 0;
	int i;

	*ticks = *calls = 0;
	for (i = 0; i < n; i++)
		if (r[i].pid == pid && r[i].kind == KPERF_ACTIVITY_KIND_MARKER &&
		    !strcmp(r[i].name, "inner"))
			from = r[i].start;
	for (i = 0; i < n && from; i++)
		if (r[i].pid == pid && r[i].kind == KPERF_ACTIVITY_KIND_MARKER &&
		    r[i].flag == KPERF_ACTIVITY_FLAG_MARKER_END && r[i].start > from &&
		    (!to || r[i].start < to))
			to = r[i].start; /* the first end after it: inner's, the innermost */
	for (i = 0; i < n; i++) {
		if (r[i].pid != pid)
			continue;
		*ticks += r[i].kind == KPERF_ACTIVITY_KIND_MARKER && !strcmp(r[i].name, "tick");
		*calls += r[i].kind == KPERF_ACTIVITY_KIND_KERNEL &&
			  !strcmp(r[i].name, "getppid") && r[i].start >= from && r[i].end <= to;
	}
}

/* allPids: every process. A workload that was running before the collection opened (a
 * pid list of this process would not reach it: children are followed from their fork on)
 * is collected, its marks and its calls exact; the collector's own calls are left out. */
Test(mstx, all_pids_take_a_process_running_before)
{
	struct tu_proc p = tu_spawn("mstx_wl", "--wait", "--marks", "20", "--calls", "7", NULL);
	struct KperfActivityOpts o = { .sz = sizeof(o), .allPids = 1, .bufferKb = 65536 };
	struct KperfActivityRecord *r;
	struct KperfActivityStats st;
	int ad, n, i, ticks, calls, mine = 0, pid = p.pid;

	cr_assert_gt(p.pid, 0);
	ad = KperfActivityOpen(MARKER_KERNEL, 2, &o);
	cr_assert_geq(ad, 0, "%d %s", Perrorno(), Perror());
	cr_assert_eq(KperfActivityEnable(ad), 0, "%s", Perror());
	tu_go(&p);
	cr_assert_eq(tu_wait(&p), 0);
	cr_assert_eq(KperfActivityDisable(ad), 0);
	n = read_all(ad, &r);
	cr_assert_eq(KperfActivityGetStats(ad, &st), 0);
	KperfActivityClose(ad);
	of_pid(r, n, pid, &ticks, &calls);
	for (i = 0; i < n; i++)
		mine += r[i].kind == KPERF_ACTIVITY_KIND_KERNEL && r[i].pid == getpid();
	cr_expect_eq(ticks, 20, "ticks of pid %d in %d records", pid, n);
	cr_expect_eq(calls, 7, "getppid calls inside its inner range");
	cr_expect_eq(mine, 0, "the collector's own syscalls");
	cr_expect_eq(st.dropped, 0);
	free_all(r, n);
}

/* allPids without attach cookies: probes per process, on the ones running at the open */
Test(mstx, all_pids_without_attach_cookies)
{
	struct tu_proc p = tu_spawn("mstx_wl", "--wait", "--marks", "4", NULL);
	struct KperfActivityOpts o = { .sz = sizeof(o), .allPids = 1 };
	struct KperfActivityRecord *r;
	int ad, n, ticks, calls, pid = p.pid;

	setenv("KPERF_BPF_NO_COOKIE", "1", 1);
	cr_assert_gt(p.pid, 0);
	ad = KperfActivityOpen(MARKER, 1, &o);
	cr_assert_geq(ad, 0, "%s", Perror());
	cr_expect_eq(GetWarn(), KPERF_WARN_FALLBACK);
	cr_expect(strstr(GetWarnMsg(), "running when the collection opened, not from those started "
				       "later"),
		  "%s", GetWarnMsg());
	cr_assert_eq(KperfActivityEnable(ad), 0);
	tu_go(&p);
	cr_assert_eq(tu_wait(&p), 0);
	n = read_all(ad, &r);
	KperfActivityClose(ad);
	of_pid(r, n, pid, &ticks, &calls);
	cr_expect_eq(ticks, 4);
	free_all(r, n);
}

/* the raw_syscalls fallback cannot look at descriptors in the kernel: /proc tells */
Test(mstx, hccl_channels_under_the_fallback)
{
	static const enum KperfActivityKind HCCL[] = { KPERF_ACTIVITY_KIND_HCCL };
	struct KperfActivityOpts o = { .sz = sizeof(o) };
	struct KperfActivityRecord *r;
	struct KperfActivityStats st;
	char want[64], buf[64];
	struct stat sa;
	int sv[2], ad, n, i, found = 0;

	setenv("KPERF_BPF_FORCE_COMPAT", "1", 1);
	cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	ad = KperfActivityOpen(HCCL, 1, &o);
	cr_assert_geq(ad, 0, "%s", Perror());
	cr_assert_eq(KperfActivityEnable(ad), 0);
	cr_assert_eq(write(sv[0], "hello", 5), 5);
	cr_assert_eq(read(sv[1], buf, sizeof(buf)), 5);
	cr_assert_eq(KperfActivityDisable(ad), 0);
	n = KperfActivityRead(ad, 0, &r);
	KperfActivityGetStats(ad, &st);
	cr_expect_eq(st.fallback, 1);
	fstat(sv[0], &sa);
	snprintf(want, sizeof(want), "socket:[%llu]", (unsigned long long)sa.st_ino);
	for (i = 0; i < n; i++)
		if (r[i].tid == gettid() && !strcmp(r[i].name, "write")) {
			cr_expect_str_eq(r[i].channel, want);
			cr_expect_eq(r[i].bytes, 5);
			cr_expect_eq(r[i].kind, KPERF_ACTIVITY_KIND_HCCL);
			found++;
		}
	cr_expect_eq(found, 1);
	KperfActivityFree(r);
	KperfActivityClose(ad);
}

/* ---- bad input ---- */

#define EXPECT_FAIL(call, code, msg)                                                        \
	do {                                                                                \
		cr_expect_eq((call), -1, #call);                                            \
		cr_expect_eq(Perrorno(), (code), "%s: %d %s", #call, Perrorno(), Perror()); \
		cr_expect(strstr(Perror(), (msg)), "%s: '%s'", #call, Perror());            \
	} while (0)

Test(mstx, bad_input)
{
	static const enum KperfActivityKind bad[] = { 3 }, twice[] = { 1, 1 },
					    kernel[] = { KPERF_ACTIVITY_KIND_KERNEL };
	const char *files[] = { "/bin/true" };
	struct KperfActivityOpts o = { .sz = sizeof(o) };
	struct KperfActivityRecord *r;
	struct {
		struct KperfActivityOpts o;
		int extra;
	} newer = { { .sz = sizeof(newer) }, 1 };
	int missing = 0x3fffffff, ad, before = tu_bpf_prog_count();

	EXPECT_FAIL(KperfActivityOpen(NULL, 0, NULL), KPERF_ERR_INVALID_ARG,
		    "no activity kind given: ask for KPERF_ACTIVITY_KIND_MARKER, "
		    "KPERF_ACTIVITY_KIND_KERNEL or KPERF_ACTIVITY_KIND_HCCL");
	EXPECT_FAIL(KperfActivityOpen(bad, 1, NULL), KPERF_ERR_INVALID_ARG,
		    "activity kind 3 does not exist (MARKER 1, KERNEL 2, HCCL 4)");
	EXPECT_FAIL(KperfActivityOpen(twice, 2, NULL), KPERF_ERR_INVALID_ARG,
		    "activity kind 1 is given twice");
	o.bufferKb = (1U << 20) + 1;
	EXPECT_FAIL(KperfActivityOpen(MARKER, 1, &o), KPERF_ERR_INVALID_ARG,
		    "bufferKb 1048577 is more than the 1048576 KiB a ring buffer may take");
	o.bufferKb = 0;
	o.numPid = 1;
	EXPECT_FAIL(KperfActivityOpen(MARKER, 1, &o), LIBPERF_ERR_INVALID_PIDLIST,
		    "numPid is 1 but pidList is NULL");
	o.pidList = &missing;
	EXPECT_FAIL(KperfActivityOpen(MARKER, 1, &o), LIBPERF_ERR_INVALID_PIDLIST, "1073741823");
	o.pidList = NULL;
	o.numPid = 0;
	o.probeFiles = files;
	o.numProbeFiles = 1;
	EXPECT_FAIL(KperfActivityOpen(MARKER, 1, &o), KPERF_ERR_INVALID_ARG,
		    "/bin/true holds no kperf USDT probes (the mstx markers of libkperf-bpf): "
		    "give a libkperf-bpf.so or a program linked with libkperf-bpf.a");
	o.probeFiles = NULL;
	EXPECT_FAIL(KperfActivityOpen(MARKER, 1, &o), KPERF_ERR_INVALID_ARG,
		    "numProbeFiles is 1 but probeFiles is NULL");
	EXPECT_FAIL(KperfActivityOpen(MARKER, 1, &newer.o), KPERF_ERR_INVALID_ATTR,
		    "KperfActivityOpts");
	o.allPids = 1;
	o.pidList = &missing;
	o.numPid = 1;
	EXPECT_FAIL(KperfActivityOpen(MARKER, 1, &o), LIBPERF_ERR_INVALID_PIDLIST,
		    "allPids collects every process: it takes no pidList");
	o.pidList = NULL;
	o.numPid = 0;
	o.fromExec = 1;
	EXPECT_FAIL(KperfActivityOpen(MARKER, 1, &o), LIBPERF_ERR_INVALID_PIDLIST,
		    "allPids collects every process: it takes no fromExec");
	o.fromExec = 0;
	o.noChildren = 1;
	EXPECT_FAIL(KperfActivityOpen(MARKER, 1, &o), LIBPERF_ERR_INVALID_PIDLIST,
		    "allPids collects every process: it takes no noChildren");
	o.noChildren = 0;
	o.allPids = 0;

	EXPECT_FAIL(KperfActivityEnable(12345), LIBPERF_ERR_INVALID_PD, "12345");
	EXPECT_FAIL(KperfActivityRead(12345, 0, &r), LIBPERF_ERR_INVALID_PD, "12345");
	ad = KperfActivityOpen(kernel, 1, NULL);
	cr_assert_geq(ad, 0, "%s", Perror());
	EXPECT_FAIL(KperfActivityDisableDomain(ad, "x"), KPERF_ERR_INVALID_ARG,
		    "this activity collection has no MARKER kind: domains apply to markers");
	EXPECT_FAIL(KperfActivityRead(ad, 0, NULL), LIBPERF_ERR_NULL_POINTER,
		    "KperfActivityRead: records is NULL");
	EXPECT_FAIL(KperfActivityRead(ad, -2, &r), KPERF_ERR_INVALID_ARG,
		    "KperfActivityRead: timeoutMs -2 is below -1");
	EXPECT_FAIL(KperfActivityGetStats(ad, NULL), LIBPERF_ERR_NULL_POINTER,
		    "KperfActivityGetStats: stats is NULL");
	cr_expect_eq(KperfActivityRead(ad, 0, &r), 0, "not enabled: nothing");
	cr_expect_null(r);
	KperfActivityClose(ad);
	ad = KperfActivityOpen(MARKER, 1, NULL);
	cr_assert_geq(ad, 0, "%s", Perror());
	EXPECT_FAIL(KperfActivityDisableDomain(ad, ""), KPERF_ERR_INVALID_ARG,
		    "a domain name cannot be empty");
	EXPECT_FAIL(KperfActivityEnableDomain(ad, NULL), KPERF_ERR_INVALID_ARG,
		    "a domain name cannot be NULL");
	cr_expect_eq(KperfActivityEnable(ad), 0);
	mstxMarkA("self", NULL);
	cr_expect_eq(KperfActivityRead(ad, 0, &r), 1);
	KperfActivityFree(r);
	KperfActivityFree(r); /* twice: ignored */
	KperfActivityClose(ad);
	KperfActivityClose(ad); /* twice: ignored */
	cr_expect_eq(tu_bpf_prog_count_settle(before), before, "programs left loaded");
}

/* a reader waiting forever is woken by the close of its collection */
static void *close_soon(void *arg)
{
	tu_sleep_ms(100);
	KperfActivityClose(*(int *)arg);
	return NULL;
}

Test(mstx, close_wakes_a_waiting_reader)
{
	struct KperfActivityRecord *r;
	pthread_t t;
	int ad = KperfActivityOpen(MARKER, 1, NULL);

	cr_assert_geq(ad, 0, "%s", Perror());
	cr_assert_eq(KperfActivityEnable(ad), 0);
	pthread_create(&t, NULL, close_soon, &ad);
	cr_expect_eq(KperfActivityRead(ad, -1, &r), 0);
	pthread_join(t, NULL);
}
