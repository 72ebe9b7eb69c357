/*
 * test_trace_exits.c - the syscall summary loses nothing when processes come and go (issue
 * 19): an exited process's rows leave the kernel map for userspace, so 20 000 short-lived
 * processes are counted exactly by a map of 16 384 rows, in the table, JSON and CSV; and a
 * process that is not traced creates no entry in any of the tracer's maps (issue 15).
 *
 * Exactly: every call is in a row, every process row holds its 10 calls (or a multiple: a pid
 * reused in the run, pid_max 32768). A row the kernel cannot allocate at that moment (the
 * percpu hash's allocator keeps 1 to 3 values per CPU, refilled from irq_work with atomic
 * percpu allocations: a transient -ENOMEM under load, not a full map) does not move a call
 * out of its row: it goes to userspace through the exits ring and is added to the row there.
 * That path is tested with KPERF_BPF_FAULT_NOMEM, which makes every new row fail so.
 */
#include <criterion/criterion.h>
#include <cjson/cJSON.h>
#include <bpf/bpf.h>

#include "core/core.h"
#include "trace_testutil.h"

#define CHILDREN 20000
#define CALLS 10

/* trace -e getppid of the workload and CHILDREN children, one at a time, CALLS each */
static char *trace_children(const char *format, int *status)
{
	char cmd[8192 + 256];

	snprintf(cmd, sizeof(cmd),
		 "%s/bin/kperf-bpf trace -e getppid --format %s -- %s/workloads/syscalls "
		 "--children %d --one-at-a-time --getppid %d --writes 0 --fails 0 2>/dev/null",
		 tu_build(), format, tu_build(), CHILDREN, CALLS);
	return tu_run(cmd, status);
}

Test(trace_exits, short_lived_processes_counted_exactly_csv, .timeout = 240)
{
	long rows = 0, calls = 0, overflow = 0;
	int st = -1;
	char *out = trace_children("csv", &st), *line, *save = NULL;

	cr_assert_not_null(out);
	cr_assert_eq(st, 0, "%.2000s", out);
	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *f = line;
		int i;

		if (strncmp(line, "summary,", 8))
			continue;
		for (i = 0; i < 10 && f; i++)
			f = strchr(f + 1, ',');
		cr_assert_not_null(f, "%s", line);
		calls += atol(f + 1);
		if (!strncmp(line, "summary,0,", 10)) {
			overflow += atol(f + 1);
			continue;
		}
		/* a multiple: on a busy machine (pid_max 32768) a pid may be reused in the run */
		cr_assert_eq(atol(f + 1) % CALLS, 0, "%s", line);
		rows += atol(f + 1) / CALLS;
	}
	cr_expect_eq(calls, (long)(CHILDREN + 1) * CALLS);
	cr_expect_eq(rows + overflow / CALLS, CHILDREN + 1, "%ld rows, %ld overflow", rows,
		     overflow);
	cr_expect_lt(overflow, CHILDREN * CALLS / 100, "the map never fills: %ld", overflow);
	free(out);
}

Test(trace_exits, short_lived_processes_counted_exactly_json, .timeout = 240)
{
	const cJSON *procs, *p;
	long rows = 0, calls = 0, overflow = 0;
	int st = -1;
	char *out = trace_children("json", &st);
	cJSON *doc;

	cr_assert_not_null(out);
	cr_assert_eq(st, 0, "%.2000s", out);
	doc = cJSON_Parse(out);
	cr_assert_not_null(doc, "%.2000s", out);
	cr_expect_eq(cJSON_GetObjectItem(doc, "not_counted")->valuedouble, 0);
	procs = cJSON_GetObjectItem(doc, "processes");
	cJSON_ArrayForEach(p, procs)
	{
		long c = (long)cJSON_GetObjectItem(p, "calls")->valuedouble;

		calls += c;
		if (!cJSON_GetObjectItem(p, "pid")->valueint) {
			overflow += c;
			continue;
		}
		cr_assert_eq(c % CALLS, 0, "%ld", c); /* a pid reused in the run: a multiple */
		rows += c / CALLS;
	}
	cr_expect_eq(cJSON_GetObjectItem(doc, "overflow")->valuedouble, overflow);
	cr_expect_eq(calls, (long)(CHILDREN + 1) * CALLS);
	cr_expect_eq(rows + overflow / CALLS, CHILDREN + 1, "%ld rows, %ld overflow", rows,
		     overflow);
	cr_expect_lt(overflow, CHILDREN * CALLS / 100, "the map never fills: %ld", overflow);
	cJSON_Delete(doc);
	free(out);
}

Test(trace_exits, short_lived_processes_counted_exactly_table, .timeout = 240)
{
	long rows = 0, calls = 0, overflow = 0;
	bool in_overflow = false;
	int st = -1;
	char *out = trace_children("table", &st), *line, *save = NULL;

	cr_assert_not_null(out);
	cr_assert_eq(st, 0, "%.2000s", out);
	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		long n;

		/* a process's header line: " comm (pid), N calls, ..."; pid 0: [map full] or
		 * [no memory] */
		if (line[0] == ' ' && line[1] != ' ')
			in_overflow = !strncmp(line, " [map full] (0)", 15) ||
				      !strncmp(line, " [no memory] (0)", 16);
		if (sscanf(line, " getppid %ld", &n) != 1)
			continue;
		calls += n;
		if (in_overflow) {
			overflow += n;
			continue;
		}
		cr_assert_eq(n % CALLS, 0, "%s", line); /* a pid reused in the run: a multiple */
		rows += n / CALLS;
	}
	cr_expect_eq(calls, (long)(CHILDREN + 1) * CALLS);
	cr_expect_eq(rows + overflow / CALLS, CHILDREN + 1, "%ld rows, %ld overflow", rows,
		     overflow);
	cr_expect_lt(overflow, CHILDREN * CALLS / 100, "the map never fills: %ld", overflow);
	free(out);
}

/* the highest map id now: the tracer's maps come after it */
static __u32 last_map_id(void)
{
	__u32 id = 0;

	while (!bpf_map_get_next_id(id, &id))
		;
	return id;
}

/* the entries of every hash map created after map <first>, named in <names> */
static long entries_of_our_maps(__u32 first, char *names, size_t size)
{
	__u32 id = first;
	long total = 0;

	names[0] = '\0';
	while (!bpf_map_get_next_id(id, &id)) {
		struct bpf_map_info info = { 0 };
		__u32 len = sizeof(info);
		char key[64], next[64];
		void *prev = NULL;
		int fd = bpf_map_get_fd_by_id(id);
		long n = 0;

		if (fd < 0)
			continue;
		if (bpf_obj_get_info_by_fd(fd, &info, &len) || info.key_size > sizeof(key) ||
		    (info.type != BPF_MAP_TYPE_HASH && info.type != BPF_MAP_TYPE_PERCPU_HASH &&
		     info.type != BPF_MAP_TYPE_LRU_HASH)) {
			close(fd);
			continue;
		}
		while (!bpf_map_get_next_key(fd, prev, next)) {
			memcpy(key, next, info.key_size);
			prev = key;
			n++;
		}
		if (n) {
			size_t l = strlen(names);

			snprintf(names + l, size - l, " %s:%ld", info.name, n);
		}
		total += n;
		close(fd);
	}
	return total;
}

/* a process traced by pid, another one busy meanwhile: the maps hold the target only (the
 * summary of one process is an array; its start times are task storage, not a hash) */
Test(trace_exits, a_bystander_creates_no_map_entry)
{
	const char *funcs[] = { "getppid" };
	struct PmuTraceAttr a = { .funcs = funcs, .numFuncs = 1 };
	struct KperfTraceOpts x = KPERF_OPTS(KperfTraceOpts, .summaryOnly = 1);
	char *argv[] = { "syscalls", "--wait", "--getppid", "100000", NULL };
	struct PmuTraceSummary *s;
	struct tu_proc target, bystander;
	char names[4096];
	int pids[1], pd, n, target_pid;
	__u32 first = last_map_id();

	target = tu_spawn_v(argv, 0);
	bystander = tu_spawn_v(argv, 0);
	pids[0] = target_pid = target.pid;
	a.pidList = pids;
	a.numPid = 1;
	pd = KperfTraceOpen(TRACE_SYS_CALL, &a, &x);
	cr_assert_gt(pd, 0, "%s", Perror());
	cr_assert_eq(PmuTraceEnable(pd), 0, "%s", Perror());
	/* before and after the bystander's 100 000 calls: the targets map's one pid */
	cr_expect_eq(entries_of_our_maps(first, names, sizeof(names)), 1, "%s", names);
	tu_go(&bystander);
	cr_assert_eq(tu_wait(&bystander), 0);
	cr_expect_eq(entries_of_our_maps(first, names, sizeof(names)), 1, "%s", names);
	cr_expect(strstr(names, " targets:1"), "%s", names);
	tu_go(&target);
	cr_assert_eq(tu_wait(&target), 0);
	cr_assert_eq(PmuTraceDisable(pd), 0);
	n = PmuTraceReadSummary(pd, &s);
	cr_assert_eq(n, 1, "%d rows: %s", n, Perror());
	cr_expect_eq(s[0].pid, target_pid);
	cr_expect_eq(s[0].calls, 100000);
	PmuTraceSummaryFree(s);
	tt_finish(pd);
}
