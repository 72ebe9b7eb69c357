/*
 * test_pidns.c - user/core/pidns.c where the tests run (the initial PID namespace, /proc of
 * it): nothing to translate, BPF objects told so, the label of processes out of sight. The
 * namespace side is tested end to end by the integration suite pidns.
 */
#include <criterion/criterion.h>
#include <sys/stat.h>

#include "core/pidns.h"
#include "kperf/pcerrc.h"
#include "testutil.h"

Test(pidns_core, the_initial_namespace_translates_nothing)
{
	struct kp_pidns_cfg cfg;
	struct stat st;
	char want[64];

	cr_assert_eq(stat("/proc/self/ns/pid", &st), 0);
	cr_assert_eq(kp_pidns_is_host(), st.st_ino == 0xEFFFFFFCULL);
	if (!kp_pidns_is_host())
		cr_skip_test("the unit tests run inside a PID namespace");
	cr_assert_eq(kp_pidns_check_proc(), 0);
	memset(&cfg, 0xff, sizeof(cfg));
	cr_assert_eq(kp_pidns_bpf_config(&cfg, true), 0);
	cr_assert_eq(cfg.on, 0);
	cr_assert_eq(cfg.dev, 0);
	cr_assert_eq(cfg.ino, 0);
	cr_assert_eq(cfg.have_offsets, 0, "no walk in the initial namespace");
	cr_assert(kp_pidns_have_offsets());
	snprintf(want, sizeof(want), "pid:[%llu]", (unsigned long long)st.st_ino);
	cr_assert_str_eq(kp_pidns_name(), want);
}

Test(pidns_core, processes_out_of_sight_are_labelled)
{
	cr_assert_str_eq(kp_pidns_comm(KP_PID_OUTSIDE, "bash"), "[outside namespace]");
	cr_assert_str_eq(kp_pidns_comm(1234, "bash"), "bash");
	cr_assert_eq((int)KP_PID_OUTSIDE, -1, "reported as pid -1");
}
