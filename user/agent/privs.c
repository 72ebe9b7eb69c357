/*
 * privs.c - the agent's least privilege: CAP_BPF and CAP_PERFMON to load and attach its
 * programs and open perf events on any process; CAP_SYS_PTRACE and CAP_DAC_READ_SEARCH only
 * to read the symbols of other users' processes (other containers). CAP_SYS_ADMIN is never
 * needed, and the agent says so when it has it. Checked on the effective set before anything
 * loads, so a missing capability is named rather than met as a verifier's EPERM.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <linux/capability.h>

#include "agent.h"

#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif
#ifndef CAP_BPF
#define CAP_BPF 39
#endif

static int effective(unsigned long long *caps)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2];

	memset(d, 0, sizeof(d));
	if (syscall(SYS_capget, &h, d))
		return -1;
	*caps = (unsigned long long)d[0].effective | (unsigned long long)d[1].effective << 32;
	return 0;
}

int agent_check_privileges(char *err, size_t errsz, FILE *warn)
{
	static const struct {
		int cap;
		const char *name, *why;
		bool needed;
	} list[] = {
		{ CAP_BPF, "CAP_BPF", "to load the BPF programs", true },
		{ CAP_PERFMON, "CAP_PERFMON", "to attach them and open perf events", true },
		{ CAP_SYS_PTRACE, "CAP_SYS_PTRACE",
		  "other users' processes (other containers) will have no user symbols", false },
		{ CAP_DAC_READ_SEARCH, "CAP_DAC_READ_SEARCH",
		  "files other users can read will not be read for symbols", false },
	};
	unsigned long long caps;
	size_t i;

	if (effective(&caps)) {
		snprintf(err, errsz, "cannot read the process's capabilities");
		return -1;
	}
	for (i = 0; i < sizeof(list) / sizeof(list[0]); i++) {
		if (caps & (1ULL << list[i].cap))
			continue;
		if (list[i].needed) {
			snprintf(
				err, errsz,
				"missing capability %s, needed %s (the agent runs with CAP_BPF, "
				"CAP_PERFMON, and for other containers' symbols CAP_SYS_PTRACE and "
				"CAP_DAC_READ_SEARCH; never CAP_SYS_ADMIN)",
				list[i].name, list[i].why);
			return -1;
		}
		if (warn)
			fprintf(warn, "kperf-bpf agent: note: no %s: %s\n", list[i].name,
				list[i].why);
	}
	if (warn && (caps & (1ULL << CAP_SYS_ADMIN)) && getuid() != 0)
		fprintf(warn, "kperf-bpf agent: note: CAP_SYS_ADMIN is held but not needed\n");
	return 0;
}
