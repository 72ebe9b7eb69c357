/*
 * pmu.h (internal) - the PmuOpen task: what counting.c and sampling.c share with task.c,
 * and the builder of the PmuData arrays handed to callers (data.c).
 *
 * A task is one PmuOpen: its parsed events, its targets (threads or CPUs) and either the
 * counters (counting.c) or the sampling state (sampling.c). task.c owns the handle and
 * the public entry points and dispatches on the task type.
 */
#ifndef KPERF_PMU_INTERNAL_H
#define KPERF_PMU_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "events/events.h"
#include "kperf/kperf.h"

struct kp_counting;
struct kp_sampling;
struct kp_blocked;

struct kp_pmu {
	pthread_mutex_t lock; /* serialises API calls on this task */
	enum PmuTaskType type;
	struct PmuAttr attr; /* a copy, without the caller's arrays */
	struct KperfPmuOpts opts; /* kperf-bpf's options, zero where the caller gave none */
	struct kp_event *events; /* parsed evtList */
	int nevents;
	int *group_ids; /* per event, -1 when not grouped */
	struct EvtAttr *evt_attrs; /* per event: evtAttr[i] (numEvtAttr of them), else zero */
	int *pids; /* processes (tgids) from pidList, deduplicated */
	int npids;
	int *cpus; /* cpuList, or every online CPU */
	int ncpus;
	bool system_wide; /* no pidList: count per CPU */
	bool enabled;
	atomic_bool stop; /* PmuStop */
	atomic_bool exited; /* PmuExit: no more symbol resolution for this task */
	struct kp_counting *counting;
	struct kp_sampling *sampling;
	struct kp_blocked *blocked; /* SAMPLING with blockedSample (blocked.c) */
};

/* ---- task.c, for collect.c ---- */

/* Borrow and lock the task <pd> (NULL: LIBPERF_ERR_INVALID_PD recorded); kp_pmu_put undoes. */
struct kp_pmu *kp_pmu_get(int pd);
void kp_pmu_put(struct kp_pmu *p);
/* With the task locked: enable, disable (idempotent), is a process of pidList alive? */
int kp_pmu_enable_locked(struct kp_pmu *p);
int kp_pmu_disable_locked(struct kp_pmu *p);
bool kp_pmu_any_alive(const struct kp_pmu *p);

/* ---- counting.c ---- */

int kp_counting_open(struct kp_pmu *p);
int kp_counting_enable(struct kp_pmu *p);
int kp_counting_disable(struct kp_pmu *p);
/* Deltas since the previous read, one record per (event, thread or cpu). */
int kp_counting_read(struct kp_pmu *p, struct PmuData **out);
void kp_counting_close(struct kp_pmu *p);
/* The count to report for a delta <dv> that ran <dr> ns of <de> ns enabled (scaled when
 * multiplexed), and the running fraction (-1 when it was never enabled). */
uint64_t kp_count_scale(uint64_t dv, uint64_t de, uint64_t dr, double *percent);

/* ---- sampling.c ---- */

int kp_sampling_open(struct kp_pmu *p);
int kp_sampling_enable(struct kp_pmu *p);
int kp_sampling_disable(struct kp_pmu *p);
/* Move what the kernel collected into the task (called periodically by PmuCollect). */
int kp_sampling_drain(struct kp_pmu *p);
int kp_sampling_read(struct kp_pmu *p, struct PmuData **out);
/* PmuExit (p->exited set, task locked): give back what the resolver keeps for the task. */
void kp_sampling_exit(struct kp_pmu *p);
void kp_sampling_close(struct kp_pmu *p);
/* Record the modules of process <tgid> for the symbols of its records, the first time. */
void kp_sampling_note_process(struct kp_pmu *p, int tgid);

/* ---- blocked.c: blockedSample, the time off the CPU beside the samples ---- */

struct kp_data_builder;

/* Each does nothing for a task without blockedSample. Called by sampling.c: drain and read
 * with the sampling lock held, disable once the drain thread is stopped. */
int kp_blocked_open(struct kp_pmu *p);
int kp_blocked_enable(struct kp_pmu *p);
int kp_blocked_disable(struct kp_pmu *p);
int kp_blocked_drain(struct kp_pmu *p);
/* Add the "context-switches" records gathered since the last read to <b>. */
int kp_blocked_read(struct kp_pmu *p, struct kp_data_builder *b);
/* Scale the periods of the on-CPU samples of <data> (the <n> records PmuRead returns) so that
 * each thread's add up to its time on the CPU measured at its context switches. */
void kp_blocked_scale(struct kp_pmu *p, struct PmuData *data, int n);
void kp_blocked_close(struct kp_pmu *p);

/* ---- sideband.c: mmaps, execs and forks for the symbol resolver ---- */

struct kp_sideband;

/* Per-cpu dummy events (disabled until kp_sideband_enable) following the processes <pids>
 * and their descendants, or every process when npids is 0. */
int kp_sideband_open(const int *cpus, int ncpus, const int *pids, int npids,
		     struct kp_sideband **out);
int kp_sideband_enable(struct kp_sideband *sb, bool on);
/* Feed the waiting records to the resolver. */
void kp_sideband_drain(struct kp_sideband *sb);
uint64_t kp_sideband_lost(const struct kp_sideband *sb);
void kp_sideband_close(struct kp_sideband *sb);

/* ---- data.c: building PmuData arrays ---- */

/*
 * A PmuData array is one allocation: a hidden header, the records, then everything they
 * point to (event names, comms, topologies, stacks, raw records). It never points into
 * anything else, so it outlives the task and the symbol caches, and PmuDataFree frees it
 * in one go.
 */
struct kp_data_builder;

struct kp_data_builder *kp_data_builder_new(void);
/* Append one record; the strings and stack it points to are copied now. Its rawData is
 * shared when it is a live kp_raw_data record, else <raw_len> bytes of it are copied. */
int kp_data_builder_add(struct kp_data_builder *b, const struct PmuData *rec, size_t raw_len);
/* The number of records added so far. */
size_t kp_data_builder_len(const struct kp_data_builder *b);
/* Build the array (registered for PmuDataFree); *out is NULL when there are no records.
 * Returns the count or a negative errno. Frees the builder. */
int kp_data_builder_finish(struct kp_data_builder *b, struct PmuData **out);
void kp_data_builder_free(struct kp_data_builder *b);
/* The record count of an array returned by the builder, or -1 if it is not one. */
long kp_data_len(const struct PmuData *data);
/* A caller's (pointer, length) of PmuData, for the function <fn> of the public API: 0 when
 * <len> records from <data> are within an array the library returned (or when <data> is the
 * caller's own array, which cannot be checked); LIBPERF_ERR_INVALID_PMU_DATA when <len> goes
 * past its end, or when <data> belongs to an array freed lately. */
int kp_data_check(const struct PmuData *data, unsigned len, const char *fn);

/* The callchain of a record: its addresses as the resolver takes them (kernel frames, then
 * user frames, leaf first), kept when the record's symbols are resolved later
 * (RESOLVE_DELAY_*: its stack is NULL until kp_data_resolve). */
struct kp_data_chain {
	uint64_t *ips;
	unsigned n;
	unsigned flags; /* KP_SYM_DWARF: with source lines */
	bool pending; /* not resolved yet */
};
/* Append a record with its callchain (copied; n = 0: none). A pending chain (rec->stack NULL)
 * keeps the symbols of rec->pid (kp_pmu_sym_hold) until the array is freed. */
int kp_data_builder_add_chain(struct kp_data_builder *b, const struct PmuData *rec, size_t raw_len,
			      const uint64_t *ips, unsigned n, unsigned flags);
/* Append record <i> of <data> (an array of the builder) with its callchain (PmuAppendData). */
int kp_data_builder_add_from(struct kp_data_builder *b, const struct PmuData *data, size_t i);
/* The callchain of record <i> of <data>, NULL when it has none. */
const struct kp_data_chain *kp_data_chain_of(const struct PmuData *data, size_t i);
/* Resolve the pending callchains of <data> in place: each such record gets its stack, copied
 * into the array (a record whose stack cannot be resolved stays without one, with a warning).
 * -ENOENT (nothing recorded) when <data> is not an array of the builder. */
int kp_data_resolve(struct PmuData *data);

/* ---- delayed.c: symbols kept for later resolution ---- */

/* The resolver forgets a process's symbols when nothing holds them any more: every open
 * sampling task that saw it, every array with its pending callchains. */
void kp_pmu_sym_hold(int tgid);
void kp_pmu_sym_release(int tgid);

#endif
