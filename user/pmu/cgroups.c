/*
 * cgroups.c - the cgroups of cgroupNameList: opened once when the task is checked (where
 * libkperf checks them, so a bad name gets its code at the same point) and kept open for
 * the perf events that follow them (PERF_FLAG_PID_CGROUP), the BPF counting mode and the
 * sampling program's tracepoint filter. The names are kept for PmuData.cgroupName.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/core.h"
#include "kperf/pcerrc.h"
#include "pmu.h"

int kp_pmu_cgroups_open(struct kp_pmu *p, const struct PmuAttr *a)
{
	unsigned i;

	if (!a->numCgroup)
		return 0;
	p->cgroup_fds = malloc(a->numCgroup * sizeof(*p->cgroup_fds));
	p->cgroup_names = calloc(a->numCgroup, sizeof(*p->cgroup_names));
	if (!p->cgroup_fds || !p->cgroup_names)
		return kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
	for (i = 0; i < a->numCgroup; i++) {
		int fd = kp_cgroup_open(a->cgroupNameList[i]);

		if (fd < 0)
			return fd;
		p->cgroup_fds[p->ncgroups] = fd;
		p->cgroup_names[p->ncgroups++] = kp_strdup(a->cgroupNameList[i]);
		if (!p->cgroup_names[p->ncgroups - 1])
			return kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
	}
	return 0;
}

void kp_pmu_cgroups_close(struct kp_pmu *p)
{
	int i;

	for (i = 0; i < p->ncgroups; i++) {
		close(p->cgroup_fds[i]);
		free(p->cgroup_names[i]);
	}
	free(p->cgroup_fds);
	free(p->cgroup_names);
	p->cgroup_fds = NULL;
	p->cgroup_names = NULL;
	p->ncgroups = 0;
}

int kp_pmu_cgroup_open_failed(int err)
{
	/* cgroup v2 gives perf_event to a cgroup only once some controller has been enabled
	 * below the root (systemd does it at boot; a bare mount has none) */
	return kp_fail(LIBPERF_ERR_INVALID_CGROUP_LIST, err,
		       "the kernel has no perf_event controller for the cgroups asked for: on "
		       "cgroup v2 it appears once a controller is enabled in the root's "
		       "cgroup.subtree_control (e.g. '+pids', as systemd does)");
}
