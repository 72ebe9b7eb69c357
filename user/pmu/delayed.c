/*
 * delayed.c - symbols resolved after PmuRead (SymbolMode RESOLVE_DELAY_ELF, _DWARF):
 * ResolvePmuDataSymbol, and the count of what still needs a process's symbols.
 *
 * With a delayed mode, PmuRead returns records whose stack is NULL (as libkperf's) and keeps
 * their callchains in the array. The resolver recorded each process while it ran (its maps,
 * its files, the mmaps of the side band), and keeps that as long as an open task or an
 * unresolved array needs it, so the arrays resolve after the process exited and after
 * PmuClose alike: ResolvePmuDataSymbol fills every record's stack in place, with lines for
 * RESOLVE_DELAY_DWARF.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>

#include "core/core.h"
#include "kperf/pcerrc.h"
#include "pmu.h"
#include "sym/sym.h"

static pthread_mutex_t users_lock = PTHREAD_MUTEX_INITIALIZER;
static struct kp_map users; /* tgid -> number of holders (0: none any more) */
static size_t nheld; /* tgids with holders */

/* the map without the tgids no one holds (kp_map has no removal): an agent's profiles see
 * every pid of a node's churn, which would otherwise stay as slots for good */
static void compact_users(void)
{
	if (users.len < 2 * nheld + 1024)
		return;
	kp_map_compact(&users);
}

void kp_pmu_sym_hold(int tgid)
{
	struct kp_map_slot *slot;

	pthread_mutex_lock(&users_lock);
	slot = kp_map_slot(&users, (void *)(uintptr_t)tgid, NULL);
	if (slot) {
		nheld += !slot->val;
		slot->val = (void *)((uintptr_t)slot->val + 1);
	}
	pthread_mutex_unlock(&users_lock);
}

void kp_pmu_sym_release(int tgid)
{
	struct kp_map_slot *slot;
	bool last = false;

	pthread_mutex_lock(&users_lock);
	slot = kp_map_slot(&users, (void *)(uintptr_t)tgid, NULL);
	if (slot && (uintptr_t)slot->val > 0) {
		slot->val = (void *)((uintptr_t)slot->val - 1);
		last = !slot->val;
		nheld -= last;
	}
	if (last)
		compact_users();
	pthread_mutex_unlock(&users_lock);
	if (last)
		kp_sym_forget_pid(tgid);
}

KP_EXPORT int ResolvePmuDataSymbol(struct PmuData *pmuData)
{
	int err;

	kp_clear();
	if (!pmuData)
		return kp_fail(LIBPERF_ERR_INVALID_PMU_DATA, -EINVAL,
			       "ResolvePmuDataSymbol needs the array PmuRead returned (pmuData is "
			       "NULL)"),
		       LIBPERF_ERR_INVALID_PMU_DATA;
	err = kp_data_resolve(pmuData);
	if (err == -ENOENT)
		return kp_fail(LIBPERF_ERR_PMU_DATA_NO_FOUND, err,
			       "pmuData was not returned by PmuRead or PmuAppendData, or was "
			       "freed"),
		       LIBPERF_ERR_PMU_DATA_NO_FOUND;
	if (err) {
		kp_public_fail(err);
		return Perrorno();
	}
	return SUCCESS;
}
