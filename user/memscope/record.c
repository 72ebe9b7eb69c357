/*
 * record.c - one memscope recording: the allocator probes of the target processes
 * (target.c, bpf.c), their mstx marks (the activity module, the same probes and records as
 * `kperf-bpf timeline`), and the events kept in memory until they are written (write.c).
 *
 * Stacks are resolved when their record is read, while the process most likely still runs
 * (its mappings are snapshotted at its first record, so the records read after its exit
 * resolve too): the Call Stack(C) of a block is its call site (the return address into the
 * allocator's caller, which a frame-pointer walk from the allocator's entry would skip),
 * then, with stacks, the callers of that frame as the stack-capture module walked them.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "activity/activity.h"
#include "core/core.h"
#include "kperf/pcerrc.h"
#include "memscope.h"
#include "stack_capture.h"
#include "sym/sym.h"

#define DEFAULT_BUFFER_KB 16384
#define MAX_EVENTS (16ULL << 20) /* 16 Mi events (1.1 GiB) at most in memory */

struct kp_ms {
	struct kp_ms_opts o;
	int *tgids;
	unsigned ntgids;
	struct kp_ms_plan plan;
	struct kp_ms_bpf *bpf;
	struct kp_activity *act;
	struct kp_ms_ev *ev;
	size_t nev, cap;
	uint64_t seq, not_kept;
	/* interned strings: index -> text (0 is ""), text -> index */
	char **str;
	size_t nstr, strcap;
	struct kp_map str_idx;
	/* "tgid:stack:callsite" -> interned Call Stack(C) + 1 */
	struct kp_map stack_idx;
	char **stack_keys;
	size_t nstack_keys, stack_keys_cap;
	/* tgids whose mappings were snapshotted */
	struct kp_map seen;
	bool no_faults;
	bool marks_unavailable; /* asked for, but this kernel cannot give a command's */
	uint64_t children, not_stopped; /* children followed; those that ran unprobed */
	int err; /* the first failure while reading (-ENOMEM) */
};

static uint32_t intern(struct kp_ms *m, const char *s)
{
	struct kp_map_slot *slot;
	bool created;
	char *copy;

	if (!s || !*s)
		return 0;
	slot = kp_map_slot(&m->str_idx, s, &created);
	if (!slot)
		goto nomem;
	if (!created)
		return (uint32_t)(uintptr_t)slot->val;
	copy = strdup(s);
	if (!copy || kp_grow((void **)&m->str, &m->strcap, m->nstr + 1, sizeof(*m->str))) {
		free(copy);
		slot->key = "";
		goto nomem;
	}
	slot->key = copy;
	slot->val = (void *)(uintptr_t)m->nstr;
	m->str[m->nstr] = copy;
	return (uint32_t)m->nstr++;
nomem:
	if (!m->err)
		m->err = -ENOMEM;
	return 0;
}

const char *kp_ms_str(const struct kp_ms *m, uint32_t i)
{
	return i < m->nstr ? m->str[i] : "";
}

static struct kp_ms_ev *push(struct kp_ms *m)
{
	if (m->nev >= MAX_EVENTS) {
		m->not_kept++;
		return NULL;
	}
	if (kp_grow((void **)&m->ev, &m->cap, m->nev + 1, sizeof(*m->ev))) {
		m->not_kept++;
		if (!m->err)
			m->err = -ENOMEM;
		return NULL;
	}
	memset(&m->ev[m->nev], 0, sizeof(m->ev[0]));
	m->ev[m->nev].seq = m->seq++;
	return &m->ev[m->nev++];
}

/* append "name (module)" of <s> to <buf> */
static void frame_text(char *buf, size_t size, size_t *len, const struct Symbol *s)
{
	const char *mod = s->module ? strrchr(s->module, '/') : NULL;
	int n;

	mod = mod ? mod + 1 : (s->module ? s->module : "");
	if (*len >= size)
		return;
	n = snprintf(buf + *len, size - *len, "%s%s (%s)", *len ? ";" : "",
		     s->symbolName ? s->symbolName : "[unknown]", mod);
	if (n > 0)
		*len += (size_t)n;
}

/* the interned Call Stack(C) of an allocation */
static uint32_t stack_of(struct kp_ms *m, const struct kp_ms_event *e)
{
	uint64_t ips[KP_CAP_MAX_FRAMES + 2], frames[KP_CAP_MAX_FRAMES + 1];
	unsigned n = 0, k, i;
	char key[80], buf[8192];
	struct kp_map_slot *slot;
	struct Stack *st = NULL, *f;
	size_t len = 0;
	bool created;
	char *kcopy;
	uint32_t idx;

	if (!e->callsite && !e->stack)
		return 0;
	snprintf(key, sizeof(key), "%u:%llx:%llx", e->tgid, (unsigned long long)e->stack,
		 (unsigned long long)e->callsite);
	slot = kp_map_slot(&m->stack_idx, key, &created);
	if (!slot)
		return 0;
	if (!created)
		return (uint32_t)(uintptr_t)slot->val - 1;
	kcopy = strdup(key);
	if (!kcopy || kp_grow((void **)&m->stack_keys, &m->stack_keys_cap, m->nstack_keys + 1,
			      sizeof(char *))) {
		free(kcopy);
		slot->key = "";
		return 0;
	}
	slot->key = kcopy;
	m->stack_keys[m->nstack_keys++] = kcopy;
	/* the call site, looked up inside the call instruction; then the walk's frames past
	 * the allocator's own (a walk that found the call site itself does not repeat it) */
	if (e->callsite)
		ips[n++] = e->callsite - 1;
	k = kp_ms_bpf_stack(m->bpf, e->stack, frames, KP_CAP_MAX_FRAMES + 1);
	for (i = 1; i < k && n < KP_CAP_MAX_FRAMES + 1; i++) {
		if (i == 1 && frames[i] == e->callsite)
			continue;
		ips[n++] = frames[i];
	}
	if (!e->callsite && k)
		ips[n++] = frames[0];
	buf[0] = '\0';
	/* a frame in no file known: a library loaded since the mappings were read */
	if (n && kp_sym_resolve_stack((pid_t)e->tgid, ips, n, 0, &st) == 0 && st && st->symbol &&
	    st->symbol->module && !strcmp(st->symbol->module, "[unknown]") &&
	    kp_pid_alive((pid_t)e->tgid)) {
		kp_sym_record_pid((pid_t)e->tgid, 0);
		st = NULL;
	}
	if (n && (st || kp_sym_resolve_stack((pid_t)e->tgid, ips, n, 0, &st) == 0))
		for (f = st; f; f = f->next)
			if (f->symbol)
				frame_text(buf, sizeof(buf), &len, f->symbol);
	kp_clear();
	idx = intern(m, buf);
	slot = kp_map_slot(&m->stack_idx, key, &created);
	if (slot)
		slot->val = (void *)(uintptr_t)(idx + 1);
	return idx;
}

static bool is_libc_name(const char *b)
{
	return !strncmp(b, "libc.so", 7) || !strncmp(b, "libc-", 5);
}

/* mmap, munmap or brk called by the C library or the allocator itself (malloc's arenas and
 * chunks, thread stacks, free trimming the heap): their memory is not the program's blocks.
 * Told by the module of the call site; not for a static program, whose libc is the program. */
static bool internal_call(struct kp_ms *m, const struct kp_ms_event *e)
{
	struct Symbol *s = NULL;
	const char *b;

	if (!e->callsite || kp_sym_resolve_addr((pid_t)e->tgid, e->callsite - 1, 0, &s) || !s ||
	    !s->module) {
		kp_clear();
		return false;
	}
	b = strrchr(s->module, '/');
	b = b ? b + 1 : s->module;
	if (is_libc_name(b))
		return true;
	/* an allocator library (jemalloc, tcmalloc), not a program that holds its own */
	return m->plan.owner && !strncmp(m->plan.owner, "lib", 3) && !strcmp(b, m->plan.owner);
}

/* A followed child <pid> of a recorded process: its probes (the same files as its parent:
 * it is a copy of it), then, when it stops itself at its start (<stops>), it is recorded and
 * continued (follow.c). */
static void follow_child(struct kp_ms *m, int pid, bool stops)
{
	struct kp_ms_plan own = { 0 };
	const struct kp_ms_plan *p = &m->plan;
	struct kp_map_slot *slot;
	bool created;

	m->children++;
	if (!stops)
		return; /* it shares its parent's memory, and so its probes */
	if (kp_ms_plan_pid(pid, m->o.prefix, &own) == 0)
		p = &own;
	if (kp_ms_bpf_place_probes(m->bpf, pid, p))
		kp_clear(); /* gone already, or an allocator elsewhere: nothing to record */
	kp_ms_plan_free(&own);
	if (kp_ms_child_wait(m->bpf, pid))
		m->not_stopped++; /* it could not stop itself: it ran before its probes */
	/* its mappings now, while it waits: a child's records are often read after its exit */
	slot = kp_map_slot(&m->seen, (const void *)(uintptr_t)(pid + 1), &created);
	if (slot && created) {
		kp_sym_record_pid((pid_t)pid, 0);
		kp_clear();
	}
	kp_ms_child_release(m->bpf, pid);
}

static void on_event(void *ctx, const struct kp_ms_event *e)
{
	struct kp_ms *m = ctx;
	struct kp_ms_ev *v;
	bool created;
	struct kp_map_slot *slot;

	if (e->kind == KP_MS_EV_FORK) {
		follow_child(m, (int)e->tgid, e->nr == 1);
		return;
	}

	/* the first allocator call of a process (the kernel woke us for it): its mappings, for
	 * the stacks of the records read after its exit */
	slot = e->kind == KP_MS_EV_FAULT || e->kind == KP_MS_EV_SYSBUF ?
		       NULL :
		       kp_map_slot(&m->seen, (const void *)(uintptr_t)(e->tgid + 1), &created);
	if (slot && created) {
		kp_sym_record_pid((pid_t)e->tgid, 0);
		kp_clear();
	}
	if (((e->kind == KP_MS_EV_ALLOC && e->func == KP_MS_MMAP) ||
	     (e->kind == KP_MS_EV_FREE && e->func == KP_MS_MUNMAP) || e->kind == KP_MS_EV_BRK) &&
	    internal_call(m, e))
		return;
	v = push(m);
	if (!v)
		return;
	v->ts = e->ts;
	v->ptr = e->ptr;
	v->size = e->size;
	v->old = e->old;
	v->tgid = e->tgid;
	v->tid = e->tid;
	v->kind = e->kind;
	v->func = e->func;
	v->nr = e->nr;
	if ((e->kind == KP_MS_EV_ALLOC || e->kind == KP_MS_EV_REALLOC) && e->ptr)
		m->ev[m->nev - 1].stack = stack_of(m, e);
}

static void take_marks(struct kp_ms *m)
{
	struct kp_act_rec *recs = NULL;
	struct kp_ms_ev *v;
	int n, i;

	if (!m->act)
		return;
	n = kp_act_read(m->act, 0, &recs);
	for (i = 0; i < n; i++) {
		const struct KperfActivityRecord *r = &recs[i].r;

		v = push(m);
		if (!v)
			break;
		v->kind = KP_MS_EV_MSTX;
		v->ts = r->start;
		v->ptr = r->id;
		v->tgid = (uint32_t)r->pid;
		v->tid = (uint32_t)r->tid;
		v->nr = r->flag == KPERF_ACTIVITY_FLAG_MARKER_START ? 2 :
			r->flag == KPERF_ACTIVITY_FLAG_MARKER_END   ? 3 :
								      1;
		v->name = intern(m, recs[i].name);
		v->domain = intern(m, recs[i].domain);
	}
	free(recs);
}

static int open_marks(struct kp_ms *m)
{
	enum KperfActivityKind kind = KPERF_ACTIVITY_KIND_MARKER;
	struct KperfActivityOpts ao = {
		.sz = sizeof(ao),
		.pidList = m->tgids,
		.numPid = m->ntgids,
		.fromExec = m->o.from_exec,
		.command = m->o.command,
		.noChildren = !m->o.follow,
	};

	return kp_act_open(&kind, 1, &ao, &m->act);
}

int kp_ms_open(const struct kp_ms_opts *o, struct kp_ms **out)
{
	struct kp_ms_bpf_opts bo = { 0 };
	struct kp_ms *m;
	size_t rb;
	unsigned i;
	int err, n;

	*out = NULL;
	if (!o->pids || !o->npids)
		return kp_fail(LIBPERF_ERR_INVALID_PIDLIST, -EINVAL,
			       "memscope needs a process to record (-p PID or a command)");
	if (o->from_exec && !o->command)
		return kp_fail(KPERF_ERR_INVALID_ARG, -EINVAL, "a launched command needs its path");
	m = calloc(1, sizeof(*m));
	if (!m)
		return kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
	m->o = *o;
	kp_map_init(&m->str_idx, true);
	kp_map_init(&m->stack_idx, true);
	kp_map_init(&m->seen, false);
	m->str = calloc(1, sizeof(*m->str));
	if (!m->str) {
		err = kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
		goto fail;
	}
	m->str[0] = "";
	m->nstr = m->strcap = 1;
	if (o->from_exec) {
		m->tgids = malloc(o->npids * sizeof(int));
		if (!m->tgids) {
			err = kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
			goto fail;
		}
		memcpy(m->tgids, o->pids, o->npids * sizeof(int));
		n = (int)o->npids;
	} else {
		n = kp_act_targets(o->pids, o->npids, &m->tgids);
		if (n < 0) {
			err = n;
			goto fail;
		}
	}
	m->ntgids = (unsigned)n;
	err = kp_check_bpf_load();
	if (err)
		goto fail;
	/* one allocator for all: the command's, or the first process's */
	err = o->from_exec ? kp_ms_plan_command(o->command, o->prefix, &m->plan) :
			     kp_ms_plan_pid(m->tgids[0], o->prefix, &m->plan);
	if (err)
		goto fail;
	for (rb = 4096; rb < (size_t)(o->buffer_kb ? o->buffer_kb : DEFAULT_BUFFER_KB) << 10;)
		rb <<= 1;
	bo.sample_bytes = o->sample_bytes;
	bo.min_size = o->min_size;
	bo.stacks = o->stacks;
	bo.follow = o->follow;
	bo.ringbuf_bytes = rb;
	bo.on_event = on_event;
	bo.ctx = m;
	err = kp_ms_bpf_open(&bo, &m->bpf);
	if (err)
		goto fail;
	for (i = 0; i < m->ntgids; i++) {
		struct kp_ms_plan own = { 0 };
		const struct kp_ms_plan *p = &m->plan;

		/* other processes may run other programs: their own files */
		if (i > 0 && !o->from_exec) {
			err = kp_ms_plan_pid(m->tgids[i], o->prefix, &own);
			if (err)
				goto fail;
			p = &own;
		}
		err = kp_ms_bpf_add_target(m->bpf, m->tgids[i], o->from_exec, p);
		kp_ms_plan_free(&own);
		if (err)
			goto fail;
	}
	err = kp_ms_bpf_attach_tracepoints(m->bpf, &m->no_faults);
	if (err)
		goto fail;
	/* without attach cookies, libbpf places a USDT probe by its address in a process, which a
	 * command that has not started yet does not have */
	if (!o->no_markers && o->from_exec && !kp_have(KP_FEAT_ATTACH_COOKIE)) {
		m->marks_unavailable = true;
	} else if (!o->no_markers) {
		err = open_marks(m);
		if (err)
			goto fail;
	}
	if (m->marks_unavailable)
		kp_warn(KPERF_WARN_FALLBACK,
			"kernel %s has no %s (%s): the mstx marks of a command kperf-bpf starts are "
			"not collected (record the running process with -p to have them)",
			kp_kernel_release(), kp_feature_name(KP_FEAT_ATTACH_COOKIE),
			kp_feature_since(KP_FEAT_ATTACH_COOKIE));
	*out = m;
	return 0;
fail:
	kp_ms_close(m);
	return err;
}

int kp_ms_enable(struct kp_ms *m, bool on)
{
	kp_ms_bpf_set_enabled(m->bpf, on);
	if (m->act)
		return kp_act_enable(m->act, on);
	return 0;
}

int kp_ms_poll(struct kp_ms *m, int timeout_ms)
{
	int n = kp_ms_bpf_poll(m->bpf, timeout_ms);

	take_marks(m);
	if (m->err)
		return kp_fail(COMMON_ERR_NOMEM, m->err, "out of memory while recording");
	return n < 0 ? n : 0;
}

void kp_ms_get_stats(struct kp_ms *m, struct kp_ms_stats *st)
{
	uint64_t c[KP_MS_CNT_MAX];
	struct KperfActivityStats as = { 0 };

	memset(st, 0, sizeof(*st));
	kp_ms_bpf_counters(m->bpf, c);
	st->lost_ringbuf = c[KP_MS_CNT_DROPPED];
	st->lost_inflight = c[KP_MS_CNT_INFLIGHT_FULL];
	st->lost_sampled = c[KP_MS_CNT_SAMPLED_FULL];
	st->lost_stacks = c[KP_MS_CNT_CAP + KP_CAP_FAIL_FULL] +
			  c[KP_MS_CNT_CAP + KP_CAP_FAIL_CLASH] +
			  c[KP_MS_CNT_CAP + KP_CAP_FAIL_READ];
	if (m->act) {
		kp_act_stats(m->act, &as);
		st->lost_marks = as.dropped;
	}
	st->not_kept = m->not_kept;
	st->children = m->children;
	st->not_stopped = m->not_stopped + c[KP_MS_CNT_NOT_STOPPED];
	st->probes = kp_ms_bpf_nprobes(m->bpf);
	st->no_faults = m->no_faults;
	st->marks_unavailable = m->marks_unavailable;
}

int kp_ms_write(struct kp_ms *m, const char *path, struct kp_ms_stats *st)
{
	int err;

	/* what is still in the buffers first */
	err = kp_ms_poll(m, 0);
	if (err)
		return err;
	kp_ms_get_stats(m, st);
	return kp_ms_write_file(m, path, st);
}

const struct kp_ms_ev *kp_ms_events(const struct kp_ms *m, size_t *n)
{
	*n = m->nev;
	return m->ev;
}

const struct kp_ms_opts *kp_ms_options(const struct kp_ms *m)
{
	return &m->o;
}

const char *kp_ms_owner(const struct kp_ms *m)
{
	return m->plan.owner ? m->plan.owner : "";
}

void kp_ms_close(struct kp_ms *m)
{
	size_t i;

	if (!m)
		return;
	kp_act_close(m->act);
	kp_ms_bpf_close(m->bpf);
	kp_ms_plan_free(&m->plan);
	for (i = 1; i < m->nstr; i++)
		free(m->str[i]);
	free(m->str);
	for (i = 0; i < m->nstack_keys; i++)
		free(m->stack_keys[i]);
	free(m->stack_keys);
	kp_map_free(&m->str_idx);
	kp_map_free(&m->stack_idx);
	kp_map_free(&m->seen);
	free(m->ev);
	free(m->tgids);
	free(m);
}
