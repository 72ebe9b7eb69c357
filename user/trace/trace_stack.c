/*
 * trace_stack.c - syscall stacks (PmuTraceAttr.callStack): the processes whose stacks are to
 * be resolved, the resolution of the stack ids the BPF program took at sys_enter, and the
 * summary by stack (KperfTraceReadStackSummary).
 *
 * A process's mappings come from /proc/PID/maps when it is first seen with a stack, and from
 * the side band of mmaps, execs and forks (pmu/sideband.c, as record has it) from the start
 * of the trace on: a command that execs, makes its calls and exits between two polls still
 * has the mappings of its new image when its stacks are resolved.
 *
 * The stacks handed out are copies that live with the array that refers to them (the
 * resolver's own may be forgotten once no task holds the process): they are the stacks of a
 * PmuData array built for them, freed with the records.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "core/pidns.h"
#include "kperf/kperf.h"
#include "pmu/pmu.h"
#include "stack_capture.h"
#include "sym/sym.h"
#include "trace.h"

#define MAX_FRAMES KP_CAP_MAX_FRAMES

void kp_trace_note_process(struct kp_trace *t, uint32_t tgid)
{
	struct kp_map_slot *slot;
	bool created = false;

	if (!t->stacks || t->symbol_mode == NO_SYMBOL_RESOLVE || !tgid || tgid == KP_PID_OUTSIDE)
		return;
	slot = kp_map_slot(&t->held, (void *)(uintptr_t)tgid, &created);
	if (!slot || !created)
		return;
	slot->val = (void *)1;
	kp_pmu_sym_hold((int)tgid);
	/* a process gone already resolves its kernel frames only: nothing to report here */
	if (kp_sym_record_pid((pid_t)tgid, 0))
		kp_clear_error();
}

static void note(void *ctx, uint32_t tgid)
{
	kp_trace_note_process(ctx, tgid);
}

void kp_trace_scan_processes(struct kp_trace *t)
{
	kp_sys_bpf_for_each_tgid(t->bpf, note, t);
}

void kp_trace_release_processes(struct kp_trace *t)
{
	size_t i;

	for (i = 0; i < t->held.cap; i++)
		if (t->held.slots[i].key)
			kp_pmu_sym_release((int)(uintptr_t)t->held.slots[i].key);
	kp_map_free(&t->held);
}

int kp_trace_sideband_open(struct kp_trace *t, const int *tgids, unsigned n)
{
	int possible = kp_cpu_possible(), ncpus = 0, c, *cpus, err;

	if (!t->stacks)
		return 0;
	cpus = calloc((size_t)(possible > 0 ? possible : 1), sizeof(*cpus));
	if (!cpus)
		return kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
	for (c = 0; c < possible; c++)
		if (kp_cpu_online(c))
			cpus[ncpus++] = c;
	err = kp_sideband_open(cpus, ncpus, tgids, (int)n, &t->sideband);
	free(cpus);
	if (err) {
		/* no perf events (only CAP_BPF, a strict perf_event_paranoid): the stacks are
		 * still taken, and resolved with what /proc shows when a process is seen */
		kp_clear_error();
		kp_warn(KPERF_WARN_SYM_INCOMPLETE,
			"cannot follow the processes' mmaps (%s): a process that execs and exits "
			"before the trace sees it has unknown user frames",
			strerror(-err));
		t->sideband = NULL;
	}
	return 0;
}

int kp_trace_sideband_enable(struct kp_trace *t, bool on)
{
	int err;

	if (!t->sideband)
		return 0;
	err = kp_sideband_enable(t->sideband, on);
	if (err)
		return kp_fail(LIBPERF_ERR_FAILED_PMU_ENABLE, err,
			       "cannot %s following mmaps for the stacks' symbols: %s",
			       on ? "start" : "stop", strerror(-err));
	return 0;
}

void kp_trace_sideband_drain(struct kp_trace *t)
{
	if (!t->sideband)
		return;
	pthread_mutex_lock(&t->sb_lock);
	kp_sideband_drain(t->sideband);
	pthread_mutex_unlock(&t->sb_lock);
}

void kp_trace_sideband_close(struct kp_trace *t)
{
	kp_sideband_close(t->sideband);
	t->sideband = NULL;
}

static unsigned sym_flags(const struct kp_trace *t)
{
	return t->symbol_mode == RESOLVE_ELF_DWARF || t->symbol_mode == RESOLVE_DELAY_DWARF ?
		       KP_SYM_DWARF :
		       0;
}

int kp_trace_resolve(struct kp_trace *t, size_t n, const uint32_t *pids,
		     const struct kp_trace_stk *stk, struct Stack **out, unsigned *kframes,
		     struct PmuData **keep)
{
	struct kp_data_builder *b = NULL;
	struct kp_map seen; /* "pid:kstack:ustack" -> index + 1 in the builder */
	unsigned *nk = NULL;
	long *idx = NULL;
	uint64_t ips[2 * MAX_FRAMES];
	struct PmuData *arr = NULL;
	size_t i, nb = 0;
	int err = 0;

	*keep = NULL;
	kp_trace_sideband_drain(t); /* the mappings that came meanwhile */
	kp_map_init(&seen, true);
	idx = calloc(n ? n : 1, sizeof(*idx));
	nk = calloc(n ? n : 1, sizeof(*nk));
	b = kp_data_builder_new();
	if (!idx || !nk || !b) {
		err = kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
		goto out;
	}
	for (i = 0; i < n; i++) {
		struct PmuData d = { 0 };
		struct kp_map_slot *slot;
		char key[64], *k;
		bool created = false;
		unsigned nkern, nuser;

		idx[i] = -1;
		if (!stk[i].kstack && !stk[i].ustack)
			continue;
		snprintf(key, sizeof(key), "%u:%llx:%llx", pids[i],
			 (unsigned long long)stk[i].kstack, (unsigned long long)stk[i].ustack);
		slot = kp_map_slot(&seen, key, &created);
		if (!slot) {
			err = kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
			goto out;
		}
		if (!created) {
			idx[i] = (long)(uintptr_t)slot->val - 1;
			continue;
		}
		k = strdup(key);
		if (!k) {
			slot->key = NULL; /* never looked up again: the map is freed below */
			err = kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
			goto out;
		}
		slot->key = k;
		slot->val = (void *)(uintptr_t)0; /* no stack, until resolved */
		nkern = kp_sys_bpf_stack(t->bpf, stk[i].kstack, true, ips, MAX_FRAMES);
		nuser = kp_sys_bpf_stack(t->bpf, stk[i].ustack, false, ips + nkern, MAX_FRAMES);
		if (!nkern && !nuser)
			continue;
		if (kp_sym_resolve_stack((pid_t)pids[i], ips, nkern + nuser, sym_flags(t),
					 &d.stack)) {
			kp_warn(KPERF_WARN_SYM_INCOMPLETE, "a stack of pid %u was not resolved: %s",
				pids[i], Perror());
			kp_clear_error();
			continue;
		}
		d.pid = (pid_t)pids[i];
		d.tid = (int)pids[i];
		d.cpu = -1;
		d.groupId = -1;
		d.countPercent = -1;
		d.comm = "";
		err = kp_data_builder_add(b, &d, 0);
		if (err) {
			err = kp_fail(COMMON_ERR_NOMEM, err, "out of memory");
			goto out;
		}
		nk[nb] = nkern;
		slot->val = (void *)(uintptr_t)(++nb);
		idx[i] = (long)nb - 1;
	}
	err = kp_data_builder_finish(b, &arr);
	b = NULL;
	if (err < 0)
		goto out;
	err = 0;
	for (i = 0; i < n; i++) {
		out[i] = idx[i] >= 0 && arr ? arr[idx[i]].stack : NULL;
		if (kframes)
			kframes[i] = idx[i] >= 0 ? nk[idx[i]] : 0;
	}
	*keep = arr;
out:
	if (b)
		kp_data_builder_free(b);
	for (i = 0; i < seen.cap; i++)
		free((void *)seen.slots[i].key);
	kp_map_free(&seen);
	free(idx);
	free(nk);
	return err;
}

/* ---- the summary by stack ---- */

struct stack_block {
	size_t n;
	struct PmuData *keep; /* owns the stacks */
	max_align_t align[];
};

static void release_stack_summary(void *p)
{
	struct stack_block *blk = (struct stack_block *)p - 1;

	PmuDataFree(blk->keep);
	free(blk);
}

static int cmp_total(const void *a, const void *b)
{
	const struct KperfTraceStackSummary *x = a, *y = b;

	if (x->totalNs != y->totalNs)
		return x->totalNs > y->totalNs ? -1 : 1;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->nr - y->nr;
}

#define NAME_SLOT 24

/* the one frame of the overflow rows (read-only: shared by every array handed out) */
static struct Symbol full_sym = { .module = "",
				  .symbolName = KPERF_TRACE_STACK_FULL,
				  .mangleName = KPERF_TRACE_STACK_FULL,
				  .fileName = "",
				  .mntPoint = "" };
static struct Symbol nomem_sym = { .module = "",
				   .symbolName = KPERF_TRACE_STACK_NOMEM,
				   .mangleName = KPERF_TRACE_STACK_NOMEM,
				   .fileName = "",
				   .mntPoint = "" };
static struct Stack full_stack = { .symbol = &full_sym };
static struct Stack nomem_stack = { .symbol = &nomem_sym };

/* row <r>'s process, its comm into <comm> (a NAME_SLOT), and the overflow rows' stack into
 * *stack */
static pid_t row_process(const struct kp_sys_stack_row *r, char *comm, struct Stack **stack)
{
	if (r->key.tgid == KP_SYS_OVERFLOW_TGID || r->key.tgid == KP_SYS_NOMEM_TGID) {
		bool full = r->key.tgid == KP_SYS_OVERFLOW_TGID;

		snprintf(comm, NAME_SLOT, "%s",
			 full ? KPERF_TRACE_OVERFLOW_COMM : KPERF_TRACE_NOMEM_COMM);
		*stack = full ? &full_stack : &nomem_stack;
		return 0;
	}
	if (r->key.tgid == KP_PID_OUTSIDE)
		snprintf(comm, NAME_SLOT, "%s", KP_PIDNS_OUTSIDE_COMM);
	else
		snprintf(comm, NAME_SLOT, "%.*s", KP_COMM_LEN, r->stat.comm);
	return (pid_t)r->key.tgid;
}

KP_EXPORT int KperfTraceReadStackSummary(int pd, struct KperfTraceStackSummary **out)
{
	struct KperfTraceStackSummary *s = NULL;
	struct kp_sys_stack_row *rows = NULL;
	struct kp_trace_stk *stk = NULL;
	struct stack_block *blk = NULL;
	struct Stack **stacks = NULL;
	unsigned *kframes = NULL;
	uint32_t *pids = NULL;
	struct PmuData *keep = NULL;
	struct kp_trace *t;
	int n, i;

	kp_clear();
	if (!out)
		return kp_fail(LIBPERF_ERR_NULL_POINTER, -EINVAL, "the output pointer is NULL"), -1;
	*out = NULL;
	t = kp_handle_get(pd, KP_HANDLE_TRACE);
	if (!t)
		return -1;
	pthread_mutex_lock(&t->lock);
	if (!t->stacks) {
		n = kp_fail(KPERF_ERR_INVALID_ATTR, -EINVAL,
			    "trace %d has no summary by stack: open it with callStack", pd);
		goto out;
	}
	n = kp_sys_bpf_stack_summary(t->bpf, &rows);
	if (n <= 0)
		goto out;
	stk = calloc((size_t)n, sizeof(*stk));
	pids = calloc((size_t)n, sizeof(*pids));
	stacks = calloc((size_t)n, sizeof(*stacks));
	kframes = calloc((size_t)n, sizeof(*kframes));
	blk = malloc(sizeof(*blk) + (size_t)n * (sizeof(*s) + 2 * NAME_SLOT));
	if (blk)
		blk->keep = NULL;
	if (!stk || !pids || !stacks || !kframes || !blk) {
		n = kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
		goto out;
	}
	for (i = 0; i < n; i++) {
		/* the overflow rows have no stacks to resolve (KP_CAP_NONE) */
		pids[i] = rows[i].key.tgid;
		stk[i].kstack = rows[i].key.kstack;
		stk[i].ustack = rows[i].key.ustack;
	}
	/* the summary is resolved whatever symbolMode says: it is only read to be shown */
	n = kp_trace_resolve(t, (size_t)n, pids, stk, stacks, kframes, &keep) ?: n;
	if (n < 0)
		goto out;
	s = (struct KperfTraceStackSummary *)(blk + 1);
	blk->n = (size_t)n;
	blk->keep = keep;
	keep = NULL;
	for (i = 0; i < n; i++) {
		const struct kp_sys_stack_row *r = &rows[i];
		char *comm = (char *)(s + n) + (size_t)i * 2 * NAME_SLOT, *name = comm + NAME_SLOT;
		const char *label = kp_syscall_name((int)r->key.nr);
		pid_t pid = row_process(r, comm, &stacks[i]);

		if (label)
			snprintf(name, NAME_SLOT, "%s", label);
		else
			snprintf(name, NAME_SLOT, "syscall_%u", r->key.nr);
		s[i] = (struct KperfTraceStackSummary){
			.funcs = name,
			.nr = (int)r->key.nr,
			.pid = pid,
			.comm = comm,
			.calls = r->stat.calls,
			.errors = r->stat.errors,
			.totalNs = r->stat.total_ns,
			.minNs = r->stat.min_ns,
			.maxNs = r->stat.max_ns,
			.stack = stacks[i],
			.kernelFrames = stacks[i] ? kframes[i] : 0,
		};
	}
	qsort(s, (size_t)n, sizeof(*s), cmp_total);
	if (kp_registry_add(s, release_stack_summary)) {
		n = kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
		goto out;
	}
	blk = NULL;
	*out = s;
	kp_trace_warn_drops(t);
out:
	if (blk) {
		PmuDataFree(blk->keep);
		free(blk);
	}
	PmuDataFree(keep);
	pthread_mutex_unlock(&t->lock);
	kp_handle_put(t);
	free(rows);
	free(stk);
	free(pids);
	free(stacks);
	free(kframes);
	return n < 0 ? kp_public_fail(n) : n;
}

KP_EXPORT void KperfTraceStackSummaryFree(struct KperfTraceStackSummary *summary)
{
	kp_registry_release(summary);
}
