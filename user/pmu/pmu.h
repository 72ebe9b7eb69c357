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
#include <linux/types.h>

#include "events/events.h"
#include "kperf/kperf.h"
#include "sample.h" /* bpf/: struct kp_sample_key, kp_sample_val */
#include "sym/sym.h"

struct kp_counting;
struct kp_sampling;
struct kp_bpf_count;
struct kp_uaccess;
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
	int *cgroup_fds; /* cgroupNameList, opened (cgroups.c) */
	char **cgroup_names; /* copies of its names */
	int ncgroups;
	bool system_wide; /* no pidList: count per CPU */
	bool enabled;
	atomic_bool stop; /* PmuStop */
	atomic_bool exited; /* PmuExit: no more symbol resolution for this task */
	struct kp_counting *counting;
	struct kp_sampling *sampling;
	struct kp_bpf_count *bpf_count; /* COUNTING with enableBpf */
	struct kp_uaccess *uaccess; /* COUNTING with enableUserAccess */
	struct kp_blocked *blocked; /* SAMPLING with blockedSample (blocked.c) */
};

/* libkperf's sample period of an event with none: its PmuAttr and EvtAttr give 0 */
#define KP_DEFAULT_PERIOD 4000

/* libkperf's sampling rate of an event, tracepoints included: PmuAttr's period (or freq: the
 * same field) before the event's own <ea> period (NULL: none), KP_DEFAULT_PERIOD when both
 * are 0; a frequency in Hz with a->useFreq, else a period in events */
unsigned kp_pmu_sample_rate(const struct PmuAttr *a, const struct EvtAttr *ea);

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
/* The counters a counting task opened (BPF mode hands them to its program). */
size_t kp_counting_ncounters(const struct kp_pmu *p);
void kp_counting_counter(const struct kp_pmu *p, size_t i, int *fd, int *event, int *cpu);

/* ---- cgroups.c: the cgroups of cgroupNameList ---- */

/* Open the cgroups of <a> into p->cgroup_fds (LIBPERF_ERR_INVALID_CGROUP_LIST or
 * LIBPERF_ERR_OPEN_INVALID_FILE for a bad one); kp_pmu_cgroups_close closes them. */
int kp_pmu_cgroups_open(struct kp_pmu *p, const struct PmuAttr *a);
void kp_pmu_cgroups_close(struct kp_pmu *p);
/* The failure of a perf event on a cgroup that perf_event_open refused with ENOENT. */
int kp_pmu_cgroup_open_failed(int err);

/* ---- bpf_count.c: COUNTING in BPF mode (enableBpf), over the per-CPU counters ---- */

int kp_bpf_count_open(struct kp_pmu *p);
/* Charge the tasks running now with what they counted since their last switch. */
void kp_bpf_count_flush(struct kp_pmu *p);
int kp_bpf_count_read(struct kp_pmu *p, struct PmuData **out);
void kp_bpf_count_close(struct kp_pmu *p);

/* ---- uaccess.c: COUNTING of the calling thread read in user space (enableUserAccess) ---- */

/* libkperf's conditions for enableUserAccess, checked before anything else of the attr. */
int kp_uaccess_check(enum PmuTaskType type, const struct PmuAttr *a);
int kp_uaccess_open(struct kp_pmu *p);
int kp_uaccess_enable(struct kp_pmu *p);
int kp_uaccess_disable(struct kp_pmu *p);
int kp_uaccess_read(struct kp_pmu *p, struct PmuData **out);
void kp_uaccess_close(struct kp_pmu *p);

struct perf_event_mmap_page;
struct kp_ua_value {
	uint64_t count, enabled, running;
};

/* The count behind a perf mmap page, read under its sequence lock the way
 * <linux/perf_event.h> documents it: <pmc>(idx) reads hardware counter idx, <ts> the time
 * base of time_mult/shift/offset. 0, -ENODEV (cap_user_rdpmc is 0: not allowed) or -EAGAIN
 * (index 0: the event is not on a counter). */
int kp_ua_read_page(const volatile struct perf_event_mmap_page *pc,
		    uint64_t (*pmc)(unsigned idx, void *ctx), uint64_t (*ts)(void *ctx), void *ctx,
		    struct kp_ua_value *v);
/* Is user access allowed: x86 (<sysfs>/bus/event_source/devices/cpu/rdpmc not 0), arm64
 * (kernel <release> 6.6 or later and <sysctl> (perf_user_access) 1)?
 * LIBPERF_ERR_CHECK_USER_ACCESS when not. */
int kp_ua_check_x86(const char *sysfs);
int kp_ua_check_arm64(const char *sysctl, const char *release);

/* ---- hwmetric.c: PmuOpenWithHWMetric and enableHwMetric ---- */

/* libkperf's conditions for enableHwMetric in PmuOpen (SAMPLING, a kernel built with
 * CONFIG_HISILICON_HW_METRIC). */
int kp_hwmetric_check(enum PmuTaskType type, const struct PmuAttr *a);
/* The events (libkperf's names) and their EvtAttr for <a>, at most <max>; returns their
 * number (two per metric) or LIBPERF_ERR_INVALID_HWMETRIC_ATTR. */
int kp_hwmetric_events(const struct PmuHwMetricAttr *a, const char **evts,
		       struct EvtAttr *evt_attrs, unsigned max);
/* Does the kernel config file <path> say CONFIG_HISILICON_HW_METRIC=y? */
bool kp_hwmetric_kconfig(const char *path);

/* ---- sample_table.c: tables keyed by struct kp_sample_key ---- */

struct kp_sample_ent {
	struct kp_sample_key key;
	struct kp_sample_val val;
	struct Stack *stack; /* the resolver's, when the table memoises stacks */
};

struct kp_sample_table {
	struct kp_sample_ent *e; /* dense, in the order added */
	size_t n, cap;
	size_t *index; /* open addressing: entry number + 1, 0 = empty */
	size_t slots;
};

/* The entry of <key>, added zeroed (*created) when absent; NULL when out of memory. A
 * pointer is valid until the next get. */
struct kp_sample_ent *kp_sample_table_get(struct kp_sample_table *t,
					  const struct kp_sample_key *key, bool *created);
void kp_sample_table_clear(struct kp_sample_table *t);
void kp_sample_table_free(struct kp_sample_table *t);

/* ---- sampling.c (open, enable, drain) and sample_read.c (drain thread, read) ---- */

struct sample_bpf;
struct ring_buffer;
struct bpf_link;

struct kp_sevent {
	int fd;
	int evt;
	int cgroup; /* index in cgroupNameList, -1 when none */
	bool tp; /* tracepoint: its program runs on every hit, so it is attached only while
		  * the task is enabled */
	struct bpf_link *link;
};

struct kp_uw_owner;

struct kp_sampling {
	pthread_mutex_t lock; /* everything below: the drain thread and the API calls */
	struct sample_bpf *skel;
	struct kp_sevent *ev;
	size_t nev, capev;
	struct ring_buffer *rb;
	struct bpf_link *fork_link, *exit_link, *exec_link;
	int counts_fd[2], stacks_fd, counters_fd;
	int ncpus_possible;

	struct kp_sample_table agg; /* drained aggregates, not yet read */
	struct kp_sample_rec **recs; /* ring buffer records, not yet read */
	size_t nrecs, caprecs;
	/* during a read: each distinct (process, kernel stack, user stack) resolved once */
	struct kp_sample_table memo;

	int *seen; /* processes whose modules were recorded for symbols */
	size_t nseen, capseen;
	bool has_tp, has_sample;
	bool cookie; /* attach cookies tell the programs which event fired (5.15+) */
	int tp_slot[KP_MAX_EVENTS]; /* without cookies: kp_tp_record_N of each tracepoint */
	bool enabled_once; /* PmuEnable was called */
	bool stacks_read; /* read while disabled: the stack map is emptied at the next enable */
	uint64_t dropped_warned;

	struct kp_sideband *sideband; /* when resolving symbols */

	/* user stacks from unwind tables (sample_unwind.c) */
	struct kp_uw_owner *uw; /* the loader and its thread (unwind/owner.c) */
	struct kp_py *py; /* CPython processes (runtime/python.h), under the owner's lock */
	struct bpf_link *uw_exec_link, *uw_exit_link, *uw_mmap_link, *uw_fork_link;
	uint64_t uw_late_warned, uw_full_warned;
	uint64_t stacks_lost_warned; /* stacks not kept, already said */

	pthread_t drainer;
	bool drainer_on;
	atomic_bool stop;
	int wake_fd, epoll_fd;
};

/* ---- sample_unwind.c: user stacks from unwind tables ---- */

struct bpf_object;
bool kp_sampling_unwinds(const struct kp_pmu *p);
/* before the sampling object's load: its unwind maps sized, its exec program chosen */
int kp_sample_unwind_prepare(struct kp_pmu *p, struct bpf_object *obj);
/* after it: the target processes' tables loaded */
int kp_sample_unwind_start(struct kp_pmu *p, struct bpf_object *obj);
/* the unwinder's figures of sampling, added to <s> */
struct kp_uw_load_stats;
void kp_sample_unwind_stats(struct kp_pmu *p, struct kp_uw_load_stats *s);
/* ... and of the blocked time's (blocked.c) */
void kp_blocked_unwind_stats(struct kp_pmu *p, struct kp_uw_load_stats *s);
/* at each drain: the processes the BPF side asked for */
/* enabled again after a read: the row array started afresh when it was full (a task kept
 * open for days, the agent's, would fill it with the tables of files long unmapped) */
void kp_sample_unwind_rearm(struct kp_pmu *p);
void kp_sample_unwind_poll(struct kp_pmu *p);
void kp_sample_unwind_close(struct kp_sampling *s);
/* warnings of what could not be unwound; <cap_fails>: the counters of enum kp_cap_fail */
void kp_sample_unwind_warn(struct kp_pmu *p);
/* the code objects of Python frames copied by BPF, to the resolver (before stacks resolve) */
void kp_sample_unwind_py_codes(struct kp_pmu *p);
/* Python frames read in this task's stacks (asked for, unwinding, a kernel that takes it) */
bool kp_sample_py_frames(const struct kp_pmu *p);

/* does the task resolve symbols? */
static inline bool kp_sampling_resolving(const struct kp_pmu *p)
{
	return p->attr.symbolMode != NO_SYMBOL_RESOLVE && !atomic_load(&p->exited);
}

/* RESOLVE_DELAY_*: PmuRead keeps the callchains, ResolvePmuDataSymbol resolves them */
static inline bool kp_sampling_delayed(const struct kp_pmu *p)
{
	return p->attr.symbolMode == RESOLVE_DELAY_ELF || p->attr.symbolMode == RESOLVE_DELAY_DWARF;
}

/* the resolver's flags for the task's symbol mode (and its inline frames, KperfPmuOpts) */
static inline unsigned kp_sampling_sym_flags(const struct kp_pmu *p)
{
	enum SymbolMode m = p->attr.symbolMode;

	if (m != RESOLVE_ELF_DWARF && m != RESOLVE_DELAY_DWARF)
		return 0;
	return KP_SYM_DWARF | (p->opts.inlineFrames ? KP_SYM_INLINE : 0);
}

/* Move what the kernel collected into the task, with s->lock held. */
int kp_sampling_drain_locked(struct kp_pmu *p);
/* Move the quiet generation's aggregation map <fd> into `agg`, emptying it (s->lock held). */
int kp_sampling_drain_map(struct kp_pmu *p, int fd);
/* Drop the drained samples and records not read yet (s->lock held). */
void kp_sampling_forget_pending(struct kp_sampling *s);
/* Record a process's modules for the resolver the first time the task sees it. */
void kp_sampling_note_process(struct kp_pmu *p, int tgid);
/* The thread that drains every second (and when the ring buffer is a quarter full). */
int kp_sampling_start_drainer(struct kp_pmu *p);
void kp_sampling_stop_drainer(struct kp_sampling *s);

int kp_sampling_open(struct kp_pmu *p);
int kp_sampling_enable(struct kp_pmu *p);
int kp_sampling_disable(struct kp_pmu *p);
/* Move what the kernel collected into the task (called periodically by PmuCollect). */
int kp_sampling_drain(struct kp_pmu *p);
int kp_sampling_read(struct kp_pmu *p, struct PmuData **out);
/* PmuExit (p->exited set, task locked): give back what the resolver keeps for the task. */
void kp_sampling_exit(struct kp_pmu *p);
void kp_sampling_close(struct kp_pmu *p);

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
/* The processes whose exit was applied by the drains so far are let go: <fn>(<ctx>, pid) for
 * each (NULL: none), and the side band's hold on their resolver state released. Call it once
 * the samples drained with those exits are resolved (the read). */
void kp_sideband_forget_exited(struct kp_sideband *sb, void (*fn)(void *ctx, int pid), void *ctx);
/* processes released so far after their exit */
/* every process told about released (<fn> called for each), exited or not */
void kp_sideband_forget_all(struct kp_sideband *sb, void (*fn)(void *ctx, int pid), void *ctx);
uint64_t kp_sideband_released(const struct kp_sideband *sb);
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
