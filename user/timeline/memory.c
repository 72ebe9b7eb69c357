/*
 * memory.c - the memory source of a timeline (KperfTimelineOpts.memory): the allocator calls
 * of the processes, recorded by memscope's BPF programs through their owner's interface
 * (user/memscope: the probes of the allocator's file, per process, in exact mode), turned
 * into a counter track of each process's heap in use and instant events for large
 * allocations.
 *
 * The heap in use is the sum of the live blocks of the malloc family (malloc, calloc,
 * realloc, the aligned allocators) allocated since the collection began: each block is
 * remembered with its size until its free, so a free of a block from before is not counted
 * (the counter starts at 0 with the collection). Every change is a "C" event "heap in use"
 * (category "memory", args {"bytes": N}) of the process. An allocation of at least the
 * threshold is an "i" event named after the function (args size and ptr). The allocator's
 * own mmap and brk calls are not blocks of the heap in this sense and are left out.
 *
 * Children are followed as memscope follows them: a forked child stops at its start until
 * its probes are placed (by the drain that reads its FORK record, woken for it). Disabling
 * takes the probes out of the processes (the breakpoints gone, not merely the records
 * dropped); enabling places them again in every process followed that is still there.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "core/core.h"

#include "memscope/memscope.h"
#include "timeline.h"

struct proc_heap {
	int tgid;
	uint64_t in_use;
	struct kp_map live; /* ptr -> size */
};

struct kp_tl_mem {
	struct kp_ms_bpf *bpf;
	struct kp_tl_store *store;
	uint64_t big; /* allocations this large are instant events */
	struct kp_map procs; /* tgid -> struct proc_heap */
	int err; /* the first -ENOMEM of the callback */
	int *targets; /* the processes followed: those given, and their children */
	size_t ntargets, cap;
	char *command; /* from_exec: the program the given processes are about to run */
	bool placed; /* the probes are in the processes (enabled, or not enabled yet) */
};

#define KEY(v) ((void *)(uintptr_t)((uint64_t)(v) + 1))

static struct proc_heap *heap_of(struct kp_tl_mem *m, int tgid)
{
	struct kp_map_slot *slot;
	struct proc_heap *h;
	bool created;

	slot = kp_map_slot(&m->procs, KEY((unsigned)tgid), &created);
	if (!slot)
		return NULL;
	if (created) {
		h = calloc(1, sizeof(*h));
		if (h) {
			h->tgid = tgid;
			kp_map_init(&h->live, false);
		}
		slot->val = h;
	}
	return slot->val;
}

static bool heap_func(int func)
{
	return func != KP_MS_MMAP && func != KP_MS_MUNMAP && func != KP_MS_BRK &&
	       func != KP_MS_ACCESS_MARK;
}

/* the block at <ptr> is live with <size>: 0, -ENOMEM */
static int live_add(struct proc_heap *h, uint64_t ptr, uint64_t size)
{
	struct kp_map_slot *slot = kp_map_slot(&h->live, KEY(ptr), NULL);

	if (!slot)
		return -ENOMEM;
	if (slot->val) /* reused without a free seen: the old one is gone */
		h->in_use -= (uint64_t)(uintptr_t)slot->val - 1;
	slot->val = KEY(size);
	h->in_use += size;
	return 0;
}

/* the block at <ptr> is freed: whether it was one of the counted ones */
static bool live_del(struct proc_heap *h, uint64_t ptr)
{
	struct kp_map_slot *slot;

	if (!ptr || !kp_map_get(&h->live, KEY(ptr)))
		return false;
	slot = kp_map_slot(&h->live, KEY(ptr), NULL);
	h->in_use -= (uint64_t)(uintptr_t)slot->val - 1;
	slot->val = NULL; /* the map keeps its keys: absent again */
	return true;
}

static int add_target(struct kp_tl_mem *m, int tgid)
{
	if (kp_grow((void **)&m->targets, &m->cap, m->ntargets + 1, sizeof(*m->targets)))
		return -ENOMEM;
	m->targets[m->ntargets++] = tgid;
	return 0;
}

/* the allocator probes of process <tgid>, planned from what it maps now (or, before its exec,
 * from the command); 0 or why not (kp_fail said) */
static int place(struct kp_tl_mem *m, int tgid)
{
	struct kp_ms_plan plan = { 0 };
	int err;

	if (m->command && kp_ms_bpf_target_state(m->bpf, tgid) == KP_MS_TARGET_EXEC)
		err = kp_ms_plan_command(m->command, NULL, &plan);
	else
		err = kp_ms_plan_pid(tgid, NULL, &plan);
	if (!err)
		err = kp_ms_bpf_place_probes(m->bpf, tgid, &plan);
	kp_ms_plan_free(&plan);
	return err;
}

/* A child <pid> of a followed process: followed too. One with a memory of its own stops at
 * its start (<stops>) until its probes are placed (not while disabled: at the next enable),
 * then is recorded and continued (memscope's follow.c). */
static void follow_child(struct kp_tl_mem *m, int pid, bool stops)
{
	if (add_target(m, pid)) {
		m->err = -ENOMEM;
		return;
	}
	if (!stops)
		return; /* it shares its parent's memory, and so its probes */
	if (m->placed && place(m, pid))
		kp_clear(); /* gone already, or no allocator: nothing to record of it */
	kp_ms_child_wait(m->bpf, pid);
	kp_ms_child_release(m->bpf, pid);
}

static void on_event(void *ctx, const struct kp_ms_event *e)
{
	struct kp_tl_mem *m = ctx;
	struct proc_heap *h;
	bool changed = false;
	int err = 0;

	if (e->kind == KP_MS_EV_FORK) {
		follow_child(m, (int)e->tgid, e->nr == 1);
		return;
	}
	if (m->err || !heap_func(e->func) ||
	    (e->kind != KP_MS_EV_ALLOC && e->kind != KP_MS_EV_FREE && e->kind != KP_MS_EV_REALLOC))
		return;
	h = heap_of(m, (int)e->tgid);
	if (!h) {
		m->err = -ENOMEM;
		return;
	}
	if (e->kind == KP_MS_EV_FREE)
		changed = live_del(h, e->ptr);
	if (e->kind == KP_MS_EV_REALLOC)
		changed = live_del(h, e->old);
	if (e->kind != KP_MS_EV_FREE && e->ptr) {
		err = live_add(h, e->ptr, e->size);
		changed = true;
		if (!err && e->size >= m->big)
			err = kp_tl_add_alloc(m->store, (int)e->tgid, (int)e->tid, e->ts,
					      kp_ms_func_name(e->func), e->ptr, e->size);
	}
	if (!err && changed)
		err = kp_tl_add_counter(m->store, (int)e->tgid, e->ts, "heap in use", h->in_use);
	if (err)
		m->err = err;
}

int kp_tl_mem_open(const struct kp_tl_mem_opts *o, struct kp_tl_mem **out)
{
	struct kp_ms_bpf_opts bo = { 0 };
	struct kp_tl_mem *m;
	size_t ring = 1U << 20;
	bool no_faults;
	int i, err = 0;

	*out = NULL;
	m = calloc(1, sizeof(*m));
	if (!m)
		return kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
	kp_map_init(&m->procs, false);
	m->store = o->store;
	m->big = o->big ? o->big : 1;
	while (ring < ((size_t)(o->ring_kb ? o->ring_kb : 8192) << 10))
		ring <<= 1;
	bo.ringbuf_bytes = ring;
	bo.follow = true;
	bo.on_event = on_event;
	bo.ctx = m;
	if (o->from_exec && !(m->command = strdup(o->command ? o->command : "")))
		err = kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
	if (!err)
		err = kp_ms_bpf_open(&bo, &m->bpf);
	for (i = 0; !err && i < o->npids; i++) {
		err = kp_ms_bpf_set_target(m->bpf, o->pids[i],
					   o->from_exec ? KP_MS_TARGET_EXEC : KP_MS_TARGET_ON);
		if (!err)
			err = add_target(m, o->pids[i]) ?
				      kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory") :
				      place(m, o->pids[i]);
	}
	m->placed = true;
	if (!err)
		err = kp_ms_bpf_attach_tracepoints(m->bpf, &no_faults);
	if (err) {
		kp_tl_mem_close(m);
		return err;
	}
	kp_ms_bpf_set_enabled(m->bpf, false);
	*out = m;
	return 0;
}

int kp_tl_mem_enable(struct kp_tl_mem *m, bool on)
{
	size_t i, k = 0;
	int err = 0;

	/* on: the probes go in while the programs are still off, or a thread calling malloc
	 * between an entry probe and its return probe would stay "inside" it for ever */
	if (!on)
		kp_ms_bpf_set_enabled(m->bpf, false);
	if (!on && m->placed) {
		kp_ms_bpf_remove_probes(m->bpf);
		m->placed = false;
	}
	if (on && !m->placed) {
		/* the processes still there get their probes again; the others (gone, or a
		 * zombie without mappings) are forgotten */
		for (i = 0; i < m->ntargets && !err; i++) {
			err = place(m, m->targets[i]);
			if (err && err != -ENOMEM) {
				kp_clear();
				err = 0;
				continue;
			}
			m->targets[k++] = m->targets[i];
		}
		for (; i < m->ntargets; i++)
			m->targets[k++] = m->targets[i];
		m->ntargets = k;
		m->placed = true;
		if (err) { /* not all of them: none */
			kp_ms_bpf_remove_probes(m->bpf);
			m->placed = false;
		}
	}
	if (on && !err)
		kp_ms_bpf_set_enabled(m->bpf, true);
	return err;
}

void kp_tl_mem_wait(struct kp_tl_mem *m, int timeout_ms)
{
	struct epoll_event ev;
	int fd = kp_ms_bpf_epoll_fd(m->bpf);

	if (fd < 0 || epoll_wait(fd, &ev, 1, timeout_ms) < 0)
		usleep((useconds_t)timeout_ms * 1000);
}

int kp_tl_mem_drain(struct kp_tl_mem *m)
{
	int n = kp_ms_bpf_poll(m->bpf, 0);

	if (m->err)
		return m->err;
	return n < 0 ? 0 : n;
}

uint64_t kp_tl_mem_lost(struct kp_tl_mem *m)
{
	uint64_t c[KP_MS_CNT_MAX];

	kp_ms_bpf_counters(m->bpf, c);
	return c[KP_MS_CNT_DROPPED] + c[KP_MS_CNT_INFLIGHT_FULL];
}

void kp_tl_mem_close(struct kp_tl_mem *m)
{
	size_t i;

	if (!m)
		return;
	kp_ms_bpf_close(m->bpf);
	for (i = 0; i < m->procs.cap; i++) {
		struct proc_heap *h = m->procs.slots[i].val;

		if (!m->procs.slots[i].key || !h)
			continue;
		kp_map_free(&h->live);
		free(h);
	}
	kp_map_free(&m->procs);
	free(m->targets);
	free(m->command);
	free(m);
}
