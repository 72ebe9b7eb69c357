/*
 * test_stack_exits.c - the summary by stack loses no process's stacks when processes come and
 * go (issue 19): when a process exits, its rows of the summary by stack leave the kernel map
 * for userspace, as its summary rows do, so a map of 128 rows attributes the calls of 1 000
 * short-lived processes to their stacks, and none goes to the overflow row ([map full]).
 * Before, the 128 rows held the first processes' stacks for the whole trace and the calls of
 * the others were counted in the overflow row, without their process and stack.
 *
 * Exactly: every call is in a row; each process's rows hold its 10 calls (or a multiple: a
 * pid reused in the run); each row has its user stack; the overflow row is empty and
 * nothing is said about it. The map holds the rows of the processes alive or exited since
 * the last harvest (the poller's, every 0.1 s): 128 rows are far more than the one child
 * alive at a time and those that exit in 0.1 s. Both variants (the fallback tells an exit by
 * /proc).
 */
#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <stdlib.h>

#include "testutil.h"

#define CHILDREN 1000
#define CALLS 10
#define ROWS "128"

static int cmp_pid(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

/* true when the stack object <s> has a user frame with a symbol (the overflow row's one
 * frame is neither: it says why there is no stack) */
static bool has_user_stack(const cJSON *s)
{
	const cJSON *f;

	cJSON_ArrayForEach(f, cJSON_GetObjectItem(s, "frames"))
	{
		const cJSON *sym = cJSON_GetObjectItem(f, "symbol");

		if (cJSON_IsFalse(cJSON_GetObjectItem(f, "kernel")) && cJSON_IsString(sym) &&
		    sym->valuestring[0] && sym->valuestring[0] != '[')
			return true;
	}
	return false;
}

static void children_by_stack(bool compat)
{
	char cmd[8192], errpath[] = "/tmp/kperf-stack-exits-XXXXXX", err[4096];
	int st = -1, fd = mkstemp(errpath), *pids = NULL, n = 0, cap = 0, i, procs = 0;
	long calls = 0, overflow = 0, sum;
	const cJSON *s;
	cJSON *doc;
	char *out;
	ssize_t r;

	cr_assert_geq(fd, 0);
	snprintf(cmd, sizeof(cmd),
		 "%s/bin/kperf-bpf trace --stack -e getppid --summary-entries " ROWS
		 " --format json -- %s/workloads/syscalls --children %d --one-at-a-time "
		 "--getppid %d --writes 0 --fails 0 2>%s",
		 tu_build(), tu_build(), CHILDREN, CALLS, errpath);
	if (compat)
		setenv("KPERF_BPF_FORCE_COMPAT", "1", 1);
	out = tu_run(cmd, &st);
	unsetenv("KPERF_BPF_FORCE_COMPAT");
	r = read(fd, err, sizeof(err) - 1);
	err[r > 0 ? r : 0] = '\0';
	close(fd);
	unlink(errpath);
	cr_assert_not_null(out);
	cr_assert_eq(st, 0, "%.2000s %s", out, err);
	doc = cJSON_Parse(out);
	cr_assert_not_null(doc, "not JSON: %.500s", out);
	cJSON_ArrayForEach(s, cJSON_GetObjectItem(doc, "stacks"))
	{
		long c = (long)cJSON_GetObjectItem(s, "calls")->valuedouble;
		int pid = cJSON_GetObjectItem(s, "pid")->valueint;

		cr_assert_str_eq(cJSON_GetObjectItem(s, "syscall")->valuestring, "getppid");
		calls += c;
		if (!pid) {
			overflow += c;
			continue;
		}
		cr_assert(has_user_stack(s), "pid %d: a row without its stack", pid);
		if (n == cap) {
			cap = cap ? 2 * cap : 2048;
			pids = realloc(pids, (size_t)cap * 2 * sizeof(*pids));
			cr_assert_not_null(pids);
		}
		pids[2 * n] = pid;
		pids[2 * n + 1] = (int)c;
		n++;
	}
	/* a process's calls may be on more than one stack (its first ones unwound before its
	 * tables were loaded): summed per process */
	qsort(pids, (size_t)n, 2 * sizeof(*pids), cmp_pid);
	for (i = 0; i < n; i += 0) {
		int pid = pids[2 * i];

		for (sum = 0; i < n && pids[2 * i] == pid; i++)
			sum += pids[2 * i + 1];
		/* a pid reused in the run: a multiple */
		cr_assert_eq(sum % CALLS, 0, "pid %d: %ld calls", pid, sum);
		procs += (int)(sum / CALLS);
	}
	cr_assert_eq(calls, (long)(CHILDREN + 1) * CALLS, "%s", err);
	cr_assert_eq(overflow, 0, "%ld calls in the overflow row: %s", overflow, err);
	cr_assert_eq(procs, CHILDREN + 1);
	cr_assert_null(strstr(err, "[stack table full]"), "%s", err);
	cr_assert_null(strstr(err, "[no memory for a stack row]"), "%s", err);
	cJSON_Delete(doc);
	free(pids);
	free(out);
}

Test(sysstack_exits, short_lived_processes_keep_their_stacks, .timeout = 240)
{
	children_by_stack(false);
}

Test(sysstack_exits, the_fallback_moves_their_rows_too, .timeout = 240)
{
	children_by_stack(true);
}
