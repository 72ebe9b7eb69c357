/*
 * test_core.c - the shared core: cpu lists, handles, the returned-array registry,
 * per-thread errors, edit distance.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <stdlib.h>

#include "core/core.h"
#include "kperf/pcerrc.h"

Test(cpulist, ranges_sorted_deduplicated)
{
	int *cpus, n = kp_parse_cpu_list("3,0-2,2,7-8\n", &cpus);

	cr_assert_eq(n, 6);
	cr_assert_eq(cpus[0], 0);
	cr_assert_eq(cpus[2], 2);
	cr_assert_eq(cpus[3], 3);
	cr_assert_eq(cpus[5], 8);
	free(cpus);
}

Test(cpulist, bad_input_refused)
{
	const char *bad[] = { "a", "1-", "3-1", "1,x", "-1", "1-2-3", "99999999" };
	size_t i;
	int *cpus;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		cr_assert_eq(kp_parse_cpu_list(bad[i], &cpus), -EINVAL, "accepted '%s'", bad[i]);
		cr_assert_null(cpus);
	}
}

Test(cpulist, out_of_range_cpu_has_its_code)
{
	int bad[] = { 0, 4096 };

	kp_clear();
	cr_assert_lt(kp_check_cpus(bad, 2), 0);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_INVALID_CPULIST);
	cr_assert(strstr(Perror(), "cpu 4096 is out of range"), "%s", Perror());
}

Test(cpulist, minus_one_is_any_cpu)
{
	int any[] = { -1 }, mixed[] = { 0, -1 }, bad[] = { -2 }, many[4096] = { 0 };

	/* libkperf takes -1 as "any cpu": the list lifts the cpu restriction */
	kp_clear();
	cr_assert_eq(kp_check_cpus(any, 1), 1);
	cr_assert_eq(kp_check_cpus(mixed, 2), 1);
	cr_assert_eq(kp_check_cpus(NULL, 0), 0);
	cr_assert_eq(Perrorno(), SUCCESS);
	cr_assert_lt(kp_check_cpus(bad, 1), 0);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_INVALID_CPULIST);
	cr_assert(strstr(Perror(), "cpu -2 is out of range"), "%s", Perror());
	cr_assert_lt(kp_check_cpus(NULL, 1), 0);
	cr_assert_str_eq(Perror(), "the cpu list is NULL but its length is 1");
	/* more entries than cpus: refused before looking at them, as libkperf does */
	cr_assert_lt(kp_check_cpus(many, 4096), 0);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_INVALID_CPULIST);
	cr_assert(strstr(Perror(), "the cpu list has 4096 entries"), "%s", Perror());
}

static int destroyed;

static void destroy(void *obj)
{
	destroyed += *(int *)obj;
}

static const struct kp_handle_ops ops = { .destroy = destroy };

Test(handles, lowest_free_handle_reused_and_kinds_checked)
{
	int a = 1, b = 10, c = 100;
	int ha, hb, hc;

	destroyed = 0;
	ha = kp_handle_add(KP_HANDLE_TRACE, &a, &ops);
	hb = kp_handle_add(KP_HANDLE_TRACE, &b, &ops);
	cr_assert_gt(ha, 0);
	cr_assert_eq(hb, ha + 1);
	kp_clear();
	cr_assert_null(kp_handle_get(ha, KP_HANDLE_PMU));
	cr_assert_eq(Perrorno(), LIBPERF_ERR_INVALID_PD);
	cr_assert_eq(kp_handle_close(ha, KP_HANDLE_TRACE), 0);
	cr_assert_eq(destroyed, 1);
	hc = kp_handle_add(KP_HANDLE_TRACE, &c, &ops);
	cr_assert_eq(hc, ha);
	kp_handle_close(hb, KP_HANDLE_TRACE);
	kp_handle_close(hc, KP_HANDLE_TRACE);
	cr_assert_eq(destroyed, 111);
	kp_clear();
	cr_assert_lt(kp_handle_close(hc, KP_HANDLE_TRACE), 0);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_INVALID_PD);
}

Test(handles, borrowed_object_outlives_close)
{
	int a = 5, h;
	void *obj;

	destroyed = 0;
	h = kp_handle_add(KP_HANDLE_PMU, &a, &ops);
	obj = kp_handle_get(h, KP_HANDLE_PMU);
	cr_assert_eq(obj, &a);
	kp_handle_close(h, KP_HANDLE_PMU);
	cr_assert_eq(destroyed, 0, "destroyed while borrowed");
	cr_assert_null(kp_handle_get(h, KP_HANDLE_PMU));
	kp_handle_put(obj);
	cr_assert_eq(destroyed, 5);
}

static int released;

static void release(void *p)
{
	released++;
	free(p);
}

Test(registry, double_free_and_foreign_pointers_ignored)
{
	void *p = malloc(16);
	int local;

	released = 0;
	cr_assert_eq(kp_registry_add(p, release), 0);
	cr_assert(kp_registry_has(p));
	cr_assert(kp_registry_release(p));
	cr_assert_not(kp_registry_release(p));
	cr_assert_not(kp_registry_release(&local));
	cr_assert_not(kp_registry_release(NULL));
	cr_assert_eq(released, 1);
}

Test(registry, many_cycles_keep_working)
{
	int i;

	released = 0;
	for (i = 0; i < 100000; i++) {
		void *p = malloc(8);

		cr_assert_eq(kp_registry_add(p, release), 0);
		cr_assert(kp_registry_release(p));
	}
	cr_assert_eq(released, 100000);
}

static void *other_thread(void *arg)
{
	(void)arg;
	kp_clear();
	kp_fail(LIBPERF_ERR_INVALID_PID, -ESRCH, "thread error");
	return (void *)(long)Perrorno();
}

Test(errors, per_thread)
{
	pthread_t t;
	void *ret;

	kp_clear();
	kp_fail(LIBPERF_ERR_INVALID_CPULIST, -EINVAL, "main error %d", 7);
	pthread_create(&t, NULL, other_thread, NULL);
	pthread_join(t, &ret);
	cr_assert_eq((long)ret, LIBPERF_ERR_INVALID_PID);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_INVALID_CPULIST);
	cr_assert_str_eq(Perror(), "main error 7");
	kp_clear();
	cr_assert_eq(Perrorno(), SUCCESS);
	cr_assert_str_eq(Perror(), "success");
}

Test(errors, public_fail_fills_a_message)
{
	kp_clear();
	cr_assert_eq(kp_public_fail(-ENOMEM), -1);
	cr_assert_eq(Perrorno(), COMMON_ERR_NOMEM);
	kp_clear();
	kp_public_fail(-EPERM);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_NO_PERMISSION);
}

/* perf_event_open's errno as libkperf's MapErrno files it */
Test(errors, perf_event_open_errno_codes)
{
	cr_assert_eq(kp_perf_errno_code(-ENOENT), LIBPERF_ERR_OPEN_INVALID_FILE);
	cr_assert_eq(kp_perf_errno_code(ENOENT), LIBPERF_ERR_OPEN_INVALID_FILE);
	cr_assert_eq(kp_perf_errno_code(-EOPNOTSUPP), LIBPERF_ERR_INVALID_EVENT);
	cr_assert_eq(kp_perf_errno_code(-EINVAL), LIBPERF_ERR_DEVICE_INVAL);
	cr_assert_eq(kp_perf_errno_code(-EACCES), LIBPERF_ERR_NO_PERMISSION);
	cr_assert_eq(kp_perf_errno_code(-EPERM), LIBPERF_ERR_NO_PERMISSION);
	cr_assert_eq(kp_perf_errno_code(-EBUSY), LIBPERF_ERR_DEVICE_BUSY);
	cr_assert_eq(kp_perf_errno_code(-ESRCH), LIBPERF_ERR_NO_PROC);
	cr_assert_eq(kp_perf_errno_code(-EMFILE), LIBPERF_ERR_TOO_MANY_FD);
	cr_assert_eq(kp_perf_errno_code(-ENFILE), LIBPERF_ERR_TOO_MANY_FD);
	cr_assert_eq(kp_perf_errno_code(-ENODEV), UNKNOWN_ERROR);
}

Test(errors, recode_keeps_the_message)
{
	kp_clear();
	cr_assert_eq(kp_fail(KPERF_ERR_INVALID_ID, -ENOENT, "cpu 9 does not exist"), -ENOENT);
	cr_assert_eq(kp_fail_recode(LIBPERF_ERR_CPUFREQ_NOT_CONFIG, -ENOENT), -ENOENT);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_CPUFREQ_NOT_CONFIG);
	cr_assert_str_eq(Perror(), "cpu 9 does not exist");
}

/* a call's second warning does not hide its first (issue 19: calls in an overflow row, then
 * records dropped): each is a line, once; when they fill the message the oldest go */
Test(errors, every_warning_of_a_call_is_kept)
{
	char line[200];
	int i;

	kp_clear();
	kp_warn(KPERF_WARN_SUMMARY_FULL, "%d calls in the overflow row", 460);
	kp_warn(KPERF_WARN_RECORDS_DROPPED, "%d records dropped", 7);
	kp_warn(KPERF_WARN_SUMMARY_FULL, "%d calls in the overflow row", 460);
	cr_assert_eq(GetWarn(), KPERF_WARN_SUMMARY_FULL);
	cr_assert_str_eq(GetWarnMsg(), "460 calls in the overflow row\n7 records dropped");
	/* a line that only starts like one kept is another */
	kp_warn(KPERF_WARN_RECORDS_DROPPED, "%d records", 7);
	cr_assert_str_eq(GetWarnMsg(),
			 "460 calls in the overflow row\n7 records dropped\n7 records");
	kp_clear();
	cr_assert_eq(GetWarn(), SUCCESS);
	cr_assert_str_eq(GetWarnMsg(), "");
	/* 100 lines of ~100 bytes: the latest ones stay, whole */
	memset(line, 'x', 95);
	line[95] = '\0';
	for (i = 0; i < 100; i++)
		kp_warn(KPERF_WARN_SYM_INCOMPLETE, "%02d %s", i, line);
	cr_assert_lt(strlen(GetWarnMsg()), 2048);
	cr_assert(!strncmp(GetWarnMsg() + strlen(GetWarnMsg()) - 98, "99 ", 3), "%s", GetWarnMsg());
	cr_assert(strstr(GetWarnMsg(), "\n98 x"), "%s", GetWarnMsg());
	cr_assert_null(strstr(GetWarnMsg(), "00 x"));
	cr_assert_eq(GetWarnMsg()[0] >= '0' && GetWarnMsg()[0] <= '9', 1, "starts with a line");
	kp_clear();
}

Test(util, edit_distance)
{
	cr_assert_eq(kp_edit_distance("getppid", "getpid"), 1);
	cr_assert_eq(kp_edit_distance("", "abc"), 3);
	cr_assert_eq(kp_edit_distance("openat", "openat"), 0);
}

#include "pmu/pmu.h"

Test(counting, multiplexed_counts_are_scaled)
{
	double pct;

	cr_assert_eq(kp_count_scale(1000, 100, 100, &pct), 1000);
	cr_assert_float_eq(pct, 1.0, 1e-9);
	cr_assert_eq(kp_count_scale(1000, 400, 100, &pct), 4000, "ran a quarter of the time");
	cr_assert_float_eq(pct, 0.25, 1e-9);
	cr_assert_eq(kp_count_scale(7, 0, 0, &pct), 0);
	cr_assert_float_eq(pct, -1.0, 1e-9);
	cr_assert_eq(kp_count_scale(0, 500, 0, &pct), 0, "never scheduled");
	cr_assert_float_eq(pct, 0.0, 1e-9);
}

/* kp_map_compact keeps exactly the slots with a value, under their keys */
Test(map, compact_drops_the_slots_without_a_value)
{
	struct kp_map m;
	uintptr_t k;

	kp_map_init(&m, false);
	for (k = 1; k <= 3000; k++)
		kp_map_slot(&m, (void *)k, NULL)->val = k % 3 ? NULL : (void *)(k * 2);
	cr_assert_eq(m.len, 3000);
	kp_map_compact(&m);
	cr_assert_eq(m.len, 1000);
	for (k = 1; k <= 3000; k++)
		cr_assert_eq(kp_map_get(&m, (void *)k), k % 3 ? NULL : (void *)(k * 2), "key %lu",
			     (unsigned long)k);
	kp_map_free(&m);
}
