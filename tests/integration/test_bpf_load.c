/*
 * test_bpf_load.c - how a failed BPF load is reported: a program the verifier rejects
 * (tests/bpf/reject.bpf.c, built to fail) goes through the library's own diagnosis and
 * comes out as a verifier rejection with the kernel, the program and the verifier's words,
 * never as "permission denied"; and a process without the capabilities is told so before
 * anything is loaded.
 */
#include <criterion/criterion.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <linux/capability.h>
#include <bpf/libbpf.h>

#include "kperf/pcerrc.h"
#include "kperf/pmu.h"
#include "testutil.h"

/* load build/tests/bpf/reject.bpf.o the way the library loads its objects */
static int load_rejected(void)
{
	struct bpf_object *obj;
	int err;

	kp_bpf_log_init();
	kp_bpf_log_clear();
	kp_clear();
	obj = bpf_object__open_file(tu_path("tests/bpf/reject.bpf.o"), NULL);
	cr_assert_not_null(obj, "%s: %s", tu_path("tests/bpf/reject.bpf.o"), strerror(errno));
	err = bpf_object__load(obj);
	bpf_object__close(obj);
	cr_assert_lt(err, 0, "the verifier accepted a program that indexes without a bound");
	return kp_bpf_load_error("test", err);
}

Test(bpf_load, verifier_rejection_is_reported_as_such)
{
	struct utsname u;
	const char *msg;
	char log[1024], *p;

	load_rejected();
	msg = Perror();
	uname(&u);
	/* the kernel matrix (tests/kernels/table.py) shows what each kernel's verifier said,
	 * on one line */
	snprintf(log, sizeof(log), "%s", kp_bpf_rejected_log());
	while ((p = strchr(log, '\n')))
		*p = p[1] ? '|' : '\0';
	cr_log_info("verifier log of %s: %s", u.release, log);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_BPF_ACT_FAILED, "%d %s", Perrorno(), msg);
	cr_assert(strstr(msg, "the verifier of kernel "), "%s", msg);
	cr_assert(strstr(msg, u.release), "the kernel release is named: %s", msg);
	cr_assert(strstr(msg, "rejected the BPF program kp_unbounded_index (test programs"), "%s",
		  msg);
	/* the verifier's own words about the access, from the end of its log */
	cr_assert(strstr(msg, "map_value") || strstr(msg, "unbounded") ||
			  strstr(msg, "min value is negative"),
		  "%s", msg);
	cr_assert(strstr(msg, "please report this"), "%s", msg);
	cr_assert_null(strstr(msg, "run as root"), "%s", msg);
	cr_assert_null(strstr(msg, "CAP_BPF"), "%s", msg);
	/* the statistics line of the log says nothing and is left out */
	cr_assert_null(strstr(kp_bpf_rejected_log(), "processed "), "%s", kp_bpf_rejected_log());
	cr_assert_str_eq(kp_bpf_rejected_prog(), "kp_unbounded_index");
}

Test(bpf_load, missing_capabilities_found_before_loading)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct none[2] = { { 0 } };
	int before = tu_bpf_fds();

	/* criterion runs each test in its own process: dropping every capability is local */
	cr_assert_eq(syscall(SYS_capset, &h, none), 0);
	kp_clear();
	cr_assert_eq(kp_check_bpf_load(), -EPERM);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_NO_PERMISSION);
	cr_assert(strstr(Perror(), "needs root, or CAP_BPF and CAP_PERFMON (this process lacks "
				   "CAP_BPF and CAP_PERFMON"),
		  "%s", Perror());
	cr_assert_eq(tu_bpf_fds(), before, "nothing was loaded");
}

Test(bpf_load, features_command_names_the_variants)
{
	int status;
	char cmd[512], *out;

	snprintf(cmd, sizeof(cmd), "%s/bin/kperf-bpf features 2>&1", tu_build());
	out = tu_run(cmd, &status);
	cr_assert_not_null(out);
	cr_assert_eq(status, 0, "%s", out);
	cr_assert(strstr(out, tu_expected_syscall_fallback() ?
				      " variant  syscall   raw_syscalls tracepoints, LRU hash\n"
				      "          because   " :
				      " variant  syscall   tp_btf, task storage\n"),
		  "%s", out);
	cr_assert(strstr(out, kp_have(KP_FEAT_ATTACH_COOKIE) ?
				      " variant  sampling  attach cookie\n" :
				      " variant  sampling  perf event id\n"),
		  "%s", out);
	cr_assert(strstr(out, " task storage in tracing programs "), "%s", out);
	free(out);
}
