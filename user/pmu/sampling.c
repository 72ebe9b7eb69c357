/*
 * sampling.c - SAMPLING tasks (in progress in this commit: counting lands first).
 */
#include <errno.h>

#include "core/core.h"
#include "kperf/pcerrc.h"
#include "pmu.h"

int kp_sampling_open(struct kp_pmu *p)
{
	(void)p;
	return kp_fail(LIBPERF_ERR_INVALID_TASK_TYPE, -EOPNOTSUPP,
		       "SAMPLING lands with the BPF sampler in the next commit");
}

int kp_sampling_enable(struct kp_pmu *p)
{
	(void)p;
	return 0;
}

int kp_sampling_disable(struct kp_pmu *p)
{
	(void)p;
	return 0;
}

int kp_sampling_drain(struct kp_pmu *p)
{
	(void)p;
	return 0;
}

int kp_sampling_read(struct kp_pmu *p, struct PmuData **out)
{
	(void)p;
	*out = NULL;
	return 0;
}

void kp_sampling_close(struct kp_pmu *p)
{
	(void)p;
}
