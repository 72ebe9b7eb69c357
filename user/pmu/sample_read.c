/*
 * sample_read.c - the second half of SAMPLING tasks (sampling.c has the first): the drain of
 * a generation's aggregation map into `agg`, the thread that drains the kernel's maps and
 * ring buffer while the task is enabled, and PmuRead,
 * which turns the drained aggregates and per-sample records into PmuData, resolving each
 * distinct stack once per read.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "core/core.h"
#include "core/pidns.h"
#include "kperf/pcerrc.h"
#include "stack/stack.h"
#include "sym/sym.h"
#include "topo/topo.h"
#include "pmu.h"
#include "stack_capture.h"

#define DRAIN_MS 1000
#ifndef ENOTSUPP
#define ENOTSUPP 524 /* kernel-internal, but bpf() returns it for unsupported batch ops */
#endif

/* ---- the aggregation map of a generation (`aggregate`) ---- */

/* add <val> to the pending aggregate of <key>; returns 1 when the key is new */
static int agg_add(struct kp_sampling *s, const struct kp_sample_key *key,
		   const struct kp_sample_val *val)
{
	bool created;
	struct kp_sample_ent *e = kp_sample_table_get(&s->agg, key, &created);

	if (!e)
		return kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
	if (created) {
		e->val = *val;
		return 1;
	}
	e->val.count += val->count;
	e->val.period += val->period;
	return 0;
}

static int take(struct kp_pmu *p, const struct kp_sample_key *key, const struct kp_sample_val *val)
{
	int added = agg_add(p->sampling, key, val);

	if (added > 0)
		kp_sampling_note_process(p, (int)key->tgid);
	return added < 0 ? added : 0;
}

/* kernels without batch operations (before 5.6): read every key, then delete them */
static int drain_map_by_key(struct kp_pmu *p, int fd)
{
	struct kp_sample_key key, next, *prev = NULL, *keys = NULL;
	struct kp_sample_val val;
	size_t n = 0, cap = 0, i;
	int err = 0;

	while (!err && bpf_map_get_next_key(fd, prev, &next) == 0) {
		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, &val))
			continue;
		err = take(p, &key, &val);
		if (!err && kp_grow((void **)&keys, &cap, n + 1, sizeof(*keys)) == 0)
			keys[n++] = key;
	}
	for (i = 0; i < n; i++)
		bpf_map_delete_elem(fd, &keys[i]);
	free(keys);
	return err;
}

int kp_sampling_drain_map(struct kp_pmu *p, int fd)
{
	enum { BATCH = 1024 };
	struct kp_sample_key *keys = malloc(BATCH * sizeof(*keys));
	struct kp_sample_val *vals = malloc(BATCH * sizeof(*vals));
	__u64 token = 0;
	bool first = true;
	int err = 0;
	__u32 i;

	if (!keys || !vals) {
		free(keys);
		free(vals);
		return kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
	}
	/* kernels before 5.6 (or KPERF_BPF_NO_BATCH=1) */
	if (!kp_have(KP_FEAT_BATCH_OPS)) {
		free(keys);
		free(vals);
		return drain_map_by_key(p, fd);
	}
	for (;;) {
		__u32 count = BATCH;
		int r = bpf_map_lookup_and_delete_batch(fd, first ? NULL : &token, &token, keys,
							vals, &count, NULL);

		if (r && first && (errno == EINVAL || errno == ENOTSUPP || errno == EOPNOTSUPP)) {
			err = drain_map_by_key(p, fd);
			break;
		}
		first = false;
		for (i = 0; i < count && !err; i++)
			err = take(p, &keys[i], &vals[i]);
		if (err || (r && errno == ENOENT))
			break; /* done: the last batch came with ENOENT */
		if (r) {
			err = kp_fail(LIBPERF_ERR_BPF_ACT_FAILED, -errno,
				      "cannot read the sample map: %s", strerror(errno));
			break;
		}
	}
	free(keys);
	free(vals);
	return err;
}

/* ---- the drain thread ---- */

static void *drainer_main(void *arg)
{
	struct kp_pmu *p = arg;
	struct kp_sampling *s = p->sampling;
	struct epoll_event ev[2];

	while (!atomic_load(&s->stop)) {
		epoll_wait(s->epoll_fd, ev, 2, DRAIN_MS);
		if (atomic_load(&s->stop))
			break;
		kp_sampling_drain(p);
	}
	return NULL;
}

int kp_sampling_start_drainer(struct kp_pmu *p)
{
	struct kp_sampling *s = p->sampling;
	struct epoll_event ev = { .events = EPOLLIN };
	int err;

	if (s->drainer_on)
		return 0;
	if (s->epoll_fd < 0) {
		s->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		s->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
		if (s->wake_fd < 0 || s->epoll_fd < 0)
			return kp_fail(UNKNOWN_ERROR, -errno, "cannot create the drain thread: %s",
				       strerror(errno));
		ev.data.fd = s->wake_fd;
		epoll_ctl(s->epoll_fd, EPOLL_CTL_ADD, s->wake_fd, &ev);
		if (s->rb) {
			ev.data.fd = ring_buffer__epoll_fd(s->rb);
			epoll_ctl(s->epoll_fd, EPOLL_CTL_ADD, ev.data.fd, &ev);
		}
	}
	atomic_store(&s->stop, false);
	err = pthread_create(&s->drainer, NULL, drainer_main, p);
	if (err)
		return kp_fail(UNKNOWN_ERROR, -err, "cannot start the drain thread: %s",
			       strerror(err));
	s->drainer_on = true;
	return 0;
}

void kp_sampling_stop_drainer(struct kp_sampling *s)
{
	uint64_t one = 1;

	if (!s->drainer_on)
		return;
	atomic_store(&s->stop, true);
	if (write(s->wake_fd, &one, sizeof(one)) < 0) {
		/* it stops at its next timeout anyway */
	}
	pthread_join(s->drainer, NULL);
	s->drainer_on = false;
	if (read(s->wake_fd, &one, sizeof(one)) < 0) {
		/* nothing written: fine */
	}
}

/* ---- read ---- */

static void counters(struct kp_sampling *s, uint64_t out[KP_SCNT_MAX])
{
	__u64 *vals = calloc((size_t)s->ncpus_possible, sizeof(*vals));
	__u32 k;
	int c;

	memset(out, 0, sizeof(uint64_t) * KP_SCNT_MAX);
	if (!vals)
		return;
	for (k = 0; k < KP_SCNT_MAX; k++) {
		if (bpf_map_lookup_elem(s->counters_fd, &k, vals))
			continue;
		for (c = 0; c < s->ncpus_possible; c++)
			out[k] += vals[c];
	}
	free(vals);
}

/* kernel frames then user frames, leaf first, as the resolver wants them */
static int stack_ips(struct kp_sampling *s, const struct kp_sample_key *k, uint64_t *ips)
{
	int n = 0;

	/* a perf event's kernel stack starts at the interrupted code: no BPF frames to cut */
	n += (int)kp_stack_read(s->stacks_fd, k->kstack_id, false, ips, KP_MAX_STACK);
	n += (int)kp_stack_read(s->stacks_fd, k->ustack_id, false, ips + n, KP_MAX_STACK);
	if (!n && k->ip)
		ips[n++] = k->ip;
	return n;
}

/* the resolved stack of a sample, once per distinct stack in a read: in the default mode
 * (one record per sample) most samples repeat a stack, and each lookup of its frames in the
 * stack map is a system call */
static int memo_stack(struct kp_pmu *p, const struct kp_sample_key *k, struct Stack **out)
{
	struct kp_sample_key key = { .tgid = k->tgid,
				     .kstack_id = k->kstack_id,
				     .ustack_id = k->ustack_id };
	uint64_t ips[2 * KP_MAX_STACK];
	struct kp_sample_ent *e;
	bool created;
	int n;

	/* the ip tells samples apart only when there is no stack */
	key.ip = !k->kstack_id && !k->ustack_id ? k->ip : 0;
	e = kp_sample_table_get(&p->sampling->memo, &key, &created);
	if (!e)
		return kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
	if (created) {
		n = stack_ips(p->sampling, k, ips);
		/* a failure leaves the records of this stack without one (and says so), not
		 * the read failed */
		/* a JVM whose JIT code is sampled is asked for its perf map */
		if (n &&
		    kp_sym_resolve_stack((pid_t)k->tgid, ips, (unsigned)n,
					 kp_sampling_sym_flags(p) | KP_SYM_ASK_JIT, &e->stack)) {
			kp_warn(KPERF_WARN_SYM_INCOMPLETE, "a stack of pid %u was not resolved: %s",
				k->tgid, Perror());
			kp_clear_error();
			e->stack = NULL;
		}
	}
	*out = e->stack;
	return 0;
}

static int add_record(struct kp_pmu *p, struct kp_data_builder *b, const struct kp_sample_key *k,
		      const struct kp_sample_val *v, int64_t ts, const void *raw, size_t raw_len)
{
	struct SampleRawData rd = { (char *)raw };
	struct PmuData d = { 0 };
	struct CpuTopology topo;
	char comm[KP_SAMPLE_COMM + 1];
	unsigned evt = k->evt & KP_EVT_INDEX_MASK, cgroup = k->evt >> KP_EVT_CGROUP_SHIFT;
	int err;

	memcpy(comm, v->comm, KP_SAMPLE_COMM);
	comm[KP_SAMPLE_COMM] = '\0';
	d.evt = p->events[evt].name;
	d.ts = ts;
	d.pid = (pid_t)k->tgid;
	d.tid = (int)k->tid;
	d.cpu = (int)k->cpu;
	d.groupId = p->group_ids[evt];
	if (p->ncgroups && cgroup < (unsigned)p->ncgroups)
		d.cgroupName = p->cgroup_names[cgroup];
	d.comm = kp_pidns_comm(k->tgid, comm);
	d.period = v->period;
	d.count = v->count;
	d.countPercent = -1;
	if (kp_topo_cpu(d.cpu, &topo) == 0)
		d.cpuTopo = &topo;
	else
		kp_clear_error();
	if (raw_len)
		d.rawData = &rd;
	if (kp_sampling_resolving(p) && kp_sampling_delayed(p)) {
		uint64_t ips[2 * KP_MAX_STACK];
		int n = stack_ips(p->sampling, k, ips);

		return kp_data_builder_add_chain(b, &d, raw_len, ips, (unsigned)n,
						 kp_sampling_sym_flags(p));
	}
	if (kp_sampling_resolving(p)) {
		err = memo_stack(p, k, &d.stack);
		if (err)
			return err;
	}
	return kp_data_builder_add(b, &d, raw_len);
}

static void warn_losses(struct kp_pmu *p)
{
	struct kp_sampling *s = p->sampling;
	uint64_t c[KP_SCNT_MAX], lost;

	counters(s, c);
	lost = c[KP_SCNT_MAP_FULL] + c[KP_SCNT_RB_DROPPED];
	if (lost > s->dropped_warned) {
		kp_warn(KPERF_WARN_RECORDS_DROPPED,
			"%llu samples or records were lost (%llu: aggregation map full, %llu: ring "
			"buffer full); raise ringBufferKb or read more often",
			(unsigned long long)(lost - s->dropped_warned),
			(unsigned long long)c[KP_SCNT_MAP_FULL],
			(unsigned long long)c[KP_SCNT_RB_DROPPED]);
		s->dropped_warned = lost;
	}
	lost = c[KP_SCNT_CAP + KP_CAP_FAIL_FULL] + c[KP_SCNT_CAP + KP_CAP_FAIL_CLASH];
	if (lost > s->stacks_lost_warned) {
		kp_warn(KPERF_WARN_RECORDS_DROPPED,
			"%llu stacks were not kept (%llu: the stack map is full, %llu: ids clashed); "
			"those samples lack those frames",
			(unsigned long long)(lost - s->stacks_lost_warned),
			(unsigned long long)c[KP_SCNT_CAP + KP_CAP_FAIL_FULL],
			(unsigned long long)c[KP_SCNT_CAP + KP_CAP_FAIL_CLASH]);
		s->stacks_lost_warned = lost;
	}
	kp_sample_unwind_warn(p);
}

static void unsee(void *ctx, int tgid)
{
	struct kp_sampling *s = ctx;
	size_t i;

	for (i = 0; i < s->nseen; i++)
		if (s->seen[i] == tgid) {
			s->seen[i] = s->seen[--s->nseen];
			kp_pmu_sym_release(tgid);
			return;
		}
}

/* After a read (under the lock): the processes that exited before its drain have had their
 * samples resolved; their resolver state goes (a system-wide profile under process churn
 * would keep every process it ever saw until it closes). */
static void release_exited(struct kp_pmu *p)
{
	struct kp_sampling *s = p->sampling;

	kp_sideband_forget_exited(s->sideband, unsee, s);
}

/* After a read of a disabled task (under the lock): every sample taken so far was read, so
 * nothing needs the processes' resolver state nor the stacks in the kernel's map any more.
 * The processes go now (a task enabled again, e.g. the agent's next pull profile on the same
 * loaded programs, reads them again from their mappings of then, as at an open: between
 * collections it holds nothing of those before); the stacks at the next enable, if any
 * (kp_sampling_enable: a task read then closed does not pay for it). */
static void release_all(struct kp_pmu *p)
{
	struct kp_sampling *s = p->sampling;

	s->stacks_read = true;
	kp_sideband_forget_all(s->sideband, unsee, s);
	while (s->nseen)
		kp_pmu_sym_release(s->seen[--s->nseen]);
}

int kp_sampling_read(struct kp_pmu *p, struct PmuData **out)
{
	struct kp_sampling *s = p->sampling;
	struct kp_data_builder *b;
	int64_t now = (int64_t)kp_now_ns();
	size_t i;
	int err;

	pthread_mutex_lock(&s->lock);
	err = kp_sampling_drain_locked(p);
	b = err ? NULL : kp_data_builder_new();
	if (!b) {
		pthread_mutex_unlock(&s->lock);
		return err ? err : kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
	}
	for (i = 0; i < s->agg.n && !err; i++)
		err = add_record(p, b, &s->agg.e[i].key, &s->agg.e[i].val, now, NULL, 0);
	for (i = 0; i < s->nrecs && !err; i++) {
		const struct kp_sample_rec *r = s->recs[i];
		struct kp_sample_key k = { .tgid = r->tgid,
					   .tid = r->tid,
					   .cpu = r->cpu,
					   .evt = r->evt,
					   .kstack_id = r->kstack_id,
					   .ip = r->ip,
					   .ustack_id = r->ustack_id };
		struct kp_sample_val v = { .count = 1, .period = r->period };

		memcpy(v.comm, r->comm, sizeof(v.comm));
		err = add_record(p, b, &k, &v, (int64_t)r->ts, r + 1, r->raw_size);
	}
	if (!err)
		err = kp_blocked_read(p, b);
	kp_sample_table_clear(&s->memo);
	if (err) {
		pthread_mutex_unlock(&s->lock);
		kp_data_builder_free(b);
		return err;
	}
	kp_sampling_forget_pending(s);
	warn_losses(p);
	pthread_mutex_unlock(&s->lock);
	err = kp_data_builder_finish(b, out);
	/* after the array pinned the processes its delayed records need */
	pthread_mutex_lock(&s->lock);
	if (s->drainer_on)
		release_exited(p);
	else
		release_all(p);
	pthread_mutex_unlock(&s->lock);
	if (err > 0)
		kp_blocked_scale(p, *out, err);
	return err;
}
