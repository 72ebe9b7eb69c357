/*
 * blocked.c - libkperf's blocked sampling (PmuAttr.blockedSample): a SAMPLING task whose
 * profile holds the time its threads spend off the CPU beside their on-CPU samples, in one
 * unit, so that a function that waits shows up with its share of the wall time next to the
 * ones that compute.
 *
 * As in libkperf the task samples one on-CPU event (per cpu here, keeping the samples of its
 * processes: sampling.c says why) and adds "context-switches" records whose
 * period is the time off the CPU in that event's unit. libkperf samples cycles and converts
 * the blocked time with each thread's cycle rate; kperf-bpf samples cpu-clock, whose period
 * is already nanoseconds, so the two kinds of records add up without a conversion (and work
 * where there is no hardware PMU). The blocked time comes from user/offcpu, summed in the
 * kernel per (thread, stack): a "context-switches" record is one (thread, stack) with its
 * number of blocks in count, not one record per switch. Time preempted (runnable, waiting for
 * a cpu) is off the CPU too: the wall time of a thread is its samples and its blocks.
 *
 * With KperfPmuOpts.offCpuOnly the task has no on-CPU event: an off-CPU profile of the time
 * threads wait for something (they called the scheduler), without the preemptions.
 *
 * The stacks are the user frames, as libkperf keeps them (KperfPmuOpts.blockedKernelStack:
 * the kernel frames too, above them).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "core/pidns.h"
#include "kperf/pcerrc.h"
#include "offcpu/offcpu.h"
#include "sym/sym.h"
#include "pmu.h"

#define BLOCKED_EVT "context-switches"
#define MAX_FRAMES 127

struct blk_ent {
	struct kp_offcpu_block b; /* summed since the last read */
};

/* a thread's time on the cpu: what the switches measured, what its samples say */
struct on_cpu {
	uint64_t drained; /* measured, drained since the last read (under the sampling lock) */
	uint64_t measured; /* what the read being made measured */
	uint64_t sampled; /* the periods of its samples in that read */
};

struct kp_blocked {
	struct kp_offcpu *off;
	struct kp_map threads; /* tid -> struct on_cpu */
	struct blk_ent *ent;
	size_t n, cap;
	size_t *index; /* open addressing over ent: index + 1, 0 = empty */
	size_t slots;
	uint64_t lost_warned;
};

static bool same_key(const struct kp_offcpu_block *a, const struct kp_offcpu_block *b)
{
	return a->tgid == b->tgid && a->tid == b->tid && a->kstack == b->kstack &&
	       a->ustack == b->ustack;
}

static size_t key_hash(const struct kp_offcpu_block *b)
{
	uint64_t h = ((uint64_t)b->tgid << 32 | b->tid) * 0x9e3779b97f4a7c15ULL;

	h ^= b->kstack + 0x7f4a7c15ULL + (h << 6) + (h >> 2);
	h ^= b->ustack + 0x9e3779b9ULL + (h << 6) + (h >> 2);
	return (size_t)h;
}

static size_t *slot_of(struct kp_blocked *k, const struct kp_offcpu_block *b)
{
	size_t i;

	for (i = key_hash(b) & (k->slots - 1);; i = (i + 1) & (k->slots - 1))
		if (!k->index[i] || same_key(&k->ent[k->index[i] - 1].b, b))
			return &k->index[i];
}

static int reindex(struct kp_blocked *k, size_t slots)
{
	size_t i;

	free(k->index);
	k->index = calloc(slots, sizeof(*k->index));
	k->slots = k->index ? slots : 0;
	if (!k->index)
		return -ENOMEM;
	for (i = 0; i < k->n; i++)
		*slot_of(k, &k->ent[i].b) = i + 1;
	return 0;
}

static struct on_cpu *on_cpu_of(struct kp_blocked *k, uint32_t tid)
{
	struct kp_map_slot *slot = kp_map_slot(&k->threads, (void *)(uintptr_t)tid, NULL);

	if (slot && !slot->val)
		slot->val = calloc(1, sizeof(struct on_cpu));
	return slot ? slot->val : NULL;
}

/* kp_offcpu_fn: add a drained (thread, stack) to what the next read returns */
static int take(void *ctx, const struct kp_offcpu_block *b)
{
	struct kp_pmu *p = ctx;
	struct kp_blocked *k = p->blocked;
	struct on_cpu *t;
	size_t *slot;

	if (b->on_cpu) {
		t = on_cpu_of(k, b->tid);
		if (!t)
			return kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
		t->drained += b->total_ns;
		return 0;
	}
	if ((k->n + 1) * 2 > k->slots && reindex(k, k->slots ? k->slots * 2 : 256))
		return kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
	slot = slot_of(k, b);
	if (*slot) {
		k->ent[*slot - 1].b.count += b->count;
		k->ent[*slot - 1].b.total_ns += b->total_ns;
		return 0;
	}
	if (kp_grow((void **)&k->ent, &k->cap, k->n + 1, sizeof(*k->ent)))
		return kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
	k->ent[k->n].b = *b;
	*slot = ++k->n;
	kp_sampling_note_process(p, (int)b->tgid);
	return 0;
}

int kp_blocked_open(struct kp_pmu *p)
{
	struct kp_offcpu_opts o = {
		.pids = p->pids,
		.npids = p->npids,
		.from_exec = p->attr.enableOnExec,
		.kernel_stack = p->opts.blockedKernelStack && p->attr.callStack &&
				!p->attr.excludeKernel,
		.user_stack = !p->attr.excludeUser,
		/* the unwinder of the on-CPU samples, so that a function is drawn once */
		.fp_stacks = p->opts.callGraph == KPERF_CALL_GRAPH_FP,
		/* a launched command is held while its tables load; with on-CPU samples too
		 * (wall) sampling's unwinder holds it, and this one shares its hold map and is
		 * loaded by it (#21: the two held it in turn, each with a map of its own, and
		 * each counted or skipped the other's stops: blocked time went missing) */
		.hold_with = p->sampling ? p->sampling->uw : NULL,
		.blocked_only = p->opts.offCpuOnly,
		/* Python frames as in the on-CPU samples (KperfPmuOpts.pythonFrames) */
		.python_frames = p->attr.callStack && p->opts.pythonFrames != KPERF_PY_FRAMES_OFF,
		.python_keep_interp = p->opts.pythonFrames == KPERF_PY_FRAMES_KEEP_INTERP,
	};
	int i;

	if (!p->attr.blockedSample)
		return 0;
	p->blocked = calloc(1, sizeof(*p->blocked));
	if (!p->blocked)
		return kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
	kp_map_init(&p->blocked->threads, false);
	/* the on-CPU events are per cpu (sampling.c): the processes are noted here */
	for (i = 0; i < p->npids; i++)
		kp_sampling_note_process(p, p->pids[i]);
	return kp_offcpu_open(&o, &p->blocked->off);
}

int kp_blocked_enable(struct kp_pmu *p)
{
	return p->blocked ? kp_offcpu_enable(p->blocked->off) : 0;
}

/* the blocks still open end with the collection */
int kp_blocked_disable(struct kp_pmu *p)
{
	int err;

	if (!p->blocked)
		return 0;
	err = kp_offcpu_drain(p->blocked->off, take, p);
	if (!err)
		err = kp_offcpu_disable(p->blocked->off, take, p);
	return err;
}

int kp_blocked_drain(struct kp_pmu *p)
{
	return p->blocked ? kp_offcpu_drain(p->blocked->off, take, p) : 0;
}

static bool resolving(const struct kp_pmu *p)
{
	return p->attr.symbolMode != NO_SYMBOL_RESOLVE && !atomic_load(&p->exited);
}

static unsigned sym_flags(const struct kp_pmu *p)
{
	enum SymbolMode m = p->attr.symbolMode;

	return m == RESOLVE_ELF_DWARF || m == RESOLVE_DELAY_DWARF ? KP_SYM_DWARF : 0;
}

static int add(struct kp_pmu *p, struct kp_data_builder *b, const struct kp_offcpu_block *e,
	       int64_t ts)
{
	struct kp_offcpu *off = p->blocked->off;
	uint64_t ips[2 * MAX_FRAMES];
	struct PmuData d = { 0 };
	unsigned n = 0, nu;

	d.evt = BLOCKED_EVT;
	d.ts = ts;
	d.pid = (pid_t)e->tgid;
	d.tid = (int)e->tid;
	d.cpu = -1; /* summed over the cpus it left */
	d.groupId = -1;
	/* a thread of a process outside the caller's PID namespace (every process collected
	 * from a container): pid -1, kernel frames only */
	d.comm = (char *)kp_pidns_comm(e->tgid, e->comm);
	d.period = e->total_ns;
	d.count = e->count;
	d.countPercent = -1;
	if (!resolving(p))
		return kp_data_builder_add(b, &d, 0);
	if (p->attr.callStack)
		n = kp_offcpu_stack(off, e->kstack, true, ips, MAX_FRAMES);
	nu = e->tgid == KP_PID_OUTSIDE ?
		     0 :
		     kp_offcpu_stack(off, e->ustack, false, ips + n, MAX_FRAMES);
	/* without callStack a record has its top frame only, as a sample has */
	n += p->attr.callStack || !nu ? nu : 1;
	if (p->attr.symbolMode == RESOLVE_DELAY_ELF || p->attr.symbolMode == RESOLVE_DELAY_DWARF)
		return kp_data_builder_add_chain(b, &d, 0, ips, n, sym_flags(p));
	if (n && kp_sym_resolve_stack(d.pid, ips, n, sym_flags(p) | KP_SYM_ASK_JIT, &d.stack)) {
		kp_warn(KPERF_WARN_SYM_INCOMPLETE, "a stack of pid %u was not resolved: %s",
			e->tgid, Perror());
		kp_clear_error();
		d.stack = NULL;
	}
	return kp_data_builder_add(b, &d, 0);
}

static void warn_losses(struct kp_blocked *k)
{
	struct kp_offcpu_stats s;
	uint64_t lost;

	kp_offcpu_get_stats(k->off, &s);
	lost = s.map_full + s.threads_full;
	if (lost > k->lost_warned) {
		kp_warn(KPERF_WARN_RECORDS_DROPPED,
			"blocked time lost: %llu blocks not counted (aggregation map full), %llu "
			"threads not followed (thread map full)",
			(unsigned long long)s.map_full, (unsigned long long)s.threads_full);
		k->lost_warned = lost;
	} else if (s.stack_full + s.stack_clash + s.stack_read) {
		kp_warn(KPERF_WARN_RECORDS_DROPPED,
			"%llu blocked stacks were not kept (%llu: stack map full, %llu: clashing "
			"ids, %llu: unreadable); their time is counted without a stack",
			(unsigned long long)(s.stack_full + s.stack_clash + s.stack_read),
			(unsigned long long)s.stack_full, (unsigned long long)s.stack_clash,
			(unsigned long long)s.stack_read);
	}
}

int kp_blocked_read(struct kp_pmu *p, struct kp_data_builder *b)
{
	struct kp_blocked *k = p->blocked;
	int64_t now = (int64_t)kp_now_ns();
	size_t i;
	int err = 0;

	if (!k)
		return 0;
	for (i = 0; i < k->n && !err; i++)
		err = add(p, b, &k->ent[i].b, now);
	/* what the switches measured of each thread's time on the cpu, for kp_blocked_scale */
	for (i = 0; !err && i < k->threads.cap; i++) {
		struct on_cpu *t = k->threads.slots[i].key ? k->threads.slots[i].val : NULL;

		if (t) {
			t->measured = t->drained;
			t->drained = 0;
			t->sampled = 0;
		}
	}
	if (err)
		return err;
	k->n = 0;
	if (k->slots)
		memset(k->index, 0, k->slots * sizeof(*k->index));
	warn_losses(k);
	return 0;
}

/*
 * The samples of a thread stand for its time on the cpu, one period each; the switches
 * measure that time exactly. Where a timer fires late or is missed (a busy or emulated
 * machine), the samples say less than the thread ran: each thread's sample periods are
 * scaled to add up to its measured time, so on- and off-CPU shares are each thread's real
 * ones while the samples still tell where on the cpu the time went.
 */
void kp_blocked_scale(struct kp_pmu *p, struct PmuData *data, int n)
{
	struct kp_blocked *k = p->blocked;
	struct on_cpu *t;
	int r;

	if (!k || p->opts.offCpuOnly)
		return;
	for (r = 0; r < n; r++) {
		if (!strcmp(data[r].evt, BLOCKED_EVT))
			continue;
		t = kp_map_get(&k->threads, (void *)(uintptr_t)data[r].tid);
		if (t)
			t->sampled += data[r].period;
	}
	for (r = 0; r < n; r++) {
		if (!strcmp(data[r].evt, BLOCKED_EVT))
			continue;
		t = kp_map_get(&k->threads, (void *)(uintptr_t)data[r].tid);
		if (t && t->measured && t->sampled)
			data[r].period = (uint64_t)((unsigned __int128)data[r].period *
						    t->measured / t->sampled);
	}
}

void kp_blocked_close(struct kp_pmu *p)
{
	struct kp_blocked *k = p->blocked;
	size_t i;

	if (!k)
		return;
	for (i = 0; i < k->threads.cap; i++)
		free(k->threads.slots[i].val);
	kp_map_free(&k->threads);
	kp_offcpu_close(k->off);
	free(k->ent);
	free(k->index);
	free(k);
	p->blocked = NULL;
}

void kp_blocked_unwind_stats(struct kp_pmu *p, struct kp_uw_load_stats *s)
{
	if (p->blocked && p->blocked->off)
		kp_offcpu_unwind_stats(p->blocked->off, s);
}
