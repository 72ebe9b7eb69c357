/*
 * cmd_features.c - `kperf-bpf features`: what this kernel's BPF can do, which variant of
 * each BPF program kperf-bpf picks here, and whether it loads. The first thing to run on a
 * new kernel, and what `make test-kernels` records for its table.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "core/core.h"
#include "core/pidns.h"
#include "kperf/kperf.h"

static void usage(FILE *f)
{
	fputs("usage: kperf-bpf features\n"
	      "\n"
	      "Print the kernel's BPF features that kperf-bpf uses (with the first Linux\n"
	      "release that has each), then load each BPF program set the way trace and\n"
	      "record do and print the variant that loaded ('variant NAME ...'). The exit\n"
	      "status is 1 when a program set does not load; its error says why.\n",
	      f);
}

/* load the syscall programs for this process alone, as `trace -p` would */
static int try_trace(void)
{
	int self = getpid();
	struct PmuTraceAttr a = { .pidList = &self, .numPid = 1 };
	struct KperfTraceOpts o = KPERF_OPTS(KperfTraceOpts, .summaryOnly = 1);
	struct PmuTraceStats st = { 0 };
	int pd = KperfTraceOpen(TRACE_SYS_CALL, &a, &o);
	char warning[512];

	snprintf(warning, sizeof(warning), "%s", GetWarnMsg()); /* the next call clears it */
	if (pd < 0) {
		printf(" variant  syscall   FAILED: [%d] %s\n", Perrorno(), Perror());
		return 1;
	}
	PmuTraceGetStats(pd, &st);
	if (st.fallback)
		printf(" variant  syscall   raw_syscalls tracepoints, LRU hash\n"
		       "          because   %s\n",
		       warning);
	else
		printf(" variant  syscall   tp_btf, task storage\n");
	PmuTraceClose(pd);
	return 0;
}

/* load the sampling programs: a software event and a tracepoint, on this process */
static int try_sampling(const char *evt, const char *what)
{
	int self = getpid();
	char *evts[] = { (char *)evt };
	struct PmuAttr a = { .evtList = evts, .numEvt = 1, .pidList = &self, .numPid = 1 };
	int pd;

	a.freq = 100;
	a.useFreq = 1;
	pd = PmuOpen(SAMPLING, &a);
	if (pd < 0) {
		printf(" variant  %-9s FAILED: [%d] %s\n", what, Perrorno(), Perror());
		return 1;
	}
	if (kp_have(KP_FEAT_ATTACH_COOKIE))
		printf(" variant  %-9s attach cookie\n", what);
	else
		printf(" variant  %-9s %s\n", what,
		       !strcmp(what, "sampling") ? "perf event id" : "one program per tracepoint");
	PmuClose(pd);
	return 0;
}

int cmd_features(int argc, char **argv)
{
	const char *btf;
	char mode[32];
	int f, bad = 0;

	if (argc > 1) {
		bool help = !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help");

		usage(help ? stdout : stderr);
		return help ? 0 : 2;
	}
	btf = kp_btf_path();
	printf(" kernel   %s\n", kp_kernel_release());
	printf(" BTF      %s\n", btf ? btf : "none");
	printf(" lockdown %s\n", kp_lockdown_mode(mode, sizeof(mode)) == 0 ? mode : "unknown");
	if (kp_pidns_is_host())
		printf(" pid ns   initial (pids are the kernel's own)\n");
	else
		printf(" pid ns   %s (pids are this namespace's%s)\n", kp_pidns_name(),
		       kp_pidns_check_proc() ? "; /proc is ANOTHER namespace's: mount its own" :
					       "");
	kp_clear();
	printf("\n %-45s %-5s %s\n", "feature", "here", "since");
	for (f = 0; f < KP_FEAT_MAX; f++)
		printf(" %-45s %-5s %s\n", kp_feature_name(f), kp_have(f) ? "yes" : "no",
		       kp_feature_since(f));
	putchar('\n');
	if (kp_check_bpf_load()) {
		printf(" no BPF program can be loaded: [%d] %s\n", Perrorno(), Perror());
		return 1;
	}
	bad |= try_trace();
	bad |= try_sampling("cpu-clock", "sampling");
	bad |= try_sampling("sched:sched_process_exec", "tracepoint");
	return bad;
}
