/*
 * collect.c - PmuCollectV, several tasks collected over one window, and PmuExit, the end of a
 * task's analysis phase.
 *
 * PmuCollectV follows libkperf: every task is enabled, then the window runs (the kernel's
 * buffers drained every 100 ms), then every task is disabled; it ends early when every task
 * was stopped with PmuStop, or, with -1, when no process of any task's pidList is left. Its
 * result is SUCCESS or the error code itself (libkperf returns the code, not -1).
 * The tasks are locked in the order of their addresses, so two PmuCollectV over overlapping
 * sets cannot deadlock, and unlocked while the window sleeps, so PmuStop and PmuRead from other
 * threads go on.
 */
#include <errno.h>
#include <stdlib.h>
#include <time.h>

#include "core/core.h"
#include "kperf/pcerrc.h"
#include "pmu.h"

#define STEP_MS 100

static int cmp_ptr(const void *a, const void *b)
{
	uintptr_t x = (uintptr_t) * (void *const *)a, y = (uintptr_t) * (void *const *)b;

	return (x > y) - (x < y);
}

static void lock_all(struct kp_pmu **p, unsigned n)
{
	unsigned i;

	for (i = 0; i < n; i++)
		pthread_mutex_lock(&p[i]->lock);
}

static void unlock_all(struct kp_pmu **p, unsigned n)
{
	unsigned i;

	for (i = 0; i < n; i++)
		pthread_mutex_unlock(&p[i]->lock);
}

/* borrow every task once (a pd given twice is one task), sorted by address */
static int borrow(const int *pd, unsigned len, struct kp_pmu **p, unsigned *n)
{
	unsigned i, j;

	*n = 0;
	for (i = 0; i < len; i++) {
		struct kp_pmu *t = kp_handle_get(pd[i], KP_HANDLE_PMU);

		if (!t)
			return -EBADF;
		for (j = 0; j < *n && p[j] != t; j++)
			;
		if (j < *n)
			kp_handle_put(t);
		else
			p[(*n)++] = t;
	}
	qsort(p, *n, sizeof(*p), cmp_ptr);
	return 0;
}

static bool all_stopped(struct kp_pmu **p, unsigned n)
{
	unsigned i;

	for (i = 0; i < n; i++)
		if (!atomic_load(&p[i]->stop))
			return false;
	return true;
}

static bool any_alive(struct kp_pmu **p, unsigned n)
{
	unsigned i;

	for (i = 0; i < n; i++)
		if (kp_pmu_any_alive(p[i]))
			return true;
	return false;
}

static int run(struct kp_pmu **p, unsigned n, int milliseconds)
{
	uint64_t end = 0, now;
	unsigned i;
	int err = 0, derr;

	for (i = 0; i < n; i++) {
		if (milliseconds == -1 && !p[i]->npids)
			return kp_fail(LIBPERF_ERR_INVALID_TIME, -EINVAL,
				       "milliseconds -1 (until the processes exit) needs a pidList "
				       "in every task: one task has none");
		atomic_store(&p[i]->stop, false);
	}
	for (i = 0; i < n && !err; i++)
		err = kp_pmu_enable_locked(p[i]);
	if (milliseconds > 0)
		end = kp_now_ns() + (uint64_t)milliseconds * 1000000ULL;
	while (!err) {
		uint64_t step = STEP_MS * 1000000ULL;
		struct timespec ts;

		now = kp_now_ns();
		if (end && now >= end)
			break;
		if (end && end - now < step)
			step = end - now;
		unlock_all(p, n);
		ts.tv_sec = (time_t)(step / 1000000000ULL);
		ts.tv_nsec = (long)(step % 1000000000ULL);
		nanosleep(&ts, NULL);
		lock_all(p, n);
		if (all_stopped(p, n))
			break;
		for (i = 0; i < n && !err; i++)
			if (p[i]->type == SAMPLING)
				err = kp_sampling_drain(p[i]);
		if (milliseconds == -1 && !any_alive(p, n))
			break;
	}
	for (i = 0; i < n; i++) {
		derr = kp_pmu_disable_locked(p[i]);
		if (!err)
			err = derr;
	}
	return err;
}

KP_EXPORT int PmuCollectV(int *pd, unsigned len, int milliseconds)
{
	struct kp_pmu **p;
	unsigned n = 0, i;
	int err;

	kp_clear();
	if (!len)
		return SUCCESS; /* no task: nothing to collect */
	if (!pd)
		return kp_fail(LIBPERF_ERR_NULL_POINTER, -EINVAL,
			       "pd cannot be NULL when len is %u", len),
		       Perrorno();
	if (milliseconds < -1 || milliseconds == 0)
		return kp_fail(LIBPERF_ERR_INVALID_TIME, -EINVAL,
			       "milliseconds is %d: give a positive time, or -1 to collect until "
			       "the processes of the pidLists exit",
			       milliseconds),
		       Perrorno();
	p = calloc(len, sizeof(*p));
	if (!p)
		return kp_public_fail(-ENOMEM), Perrorno();
	err = borrow(pd, len, p, &n);
	if (!err) {
		lock_all(p, n);
		err = run(p, n, milliseconds);
		unlock_all(p, n);
	}
	for (i = 0; i < n; i++)
		kp_handle_put(p[i]);
	free(p);
	if (err) {
		kp_public_fail(err);
		return Perrorno();
	}
	return SUCCESS;
}

KP_EXPORT void PmuExit(int pd)
{
	struct kp_pmu *p;

	kp_clear();
	p = kp_handle_get(pd, KP_HANDLE_PMU);
	if (!p)
		return;
	/* first the flag, without the lock: a PmuRead resolving stacks in another thread stops
	 * resolving at its next record and lets go of the task */
	atomic_store(&p->exited, true);
	pthread_mutex_lock(&p->lock);
	if (p->type == SAMPLING)
		kp_sampling_exit(p);
	pthread_mutex_unlock(&p->lock);
	kp_handle_put(p);
}
