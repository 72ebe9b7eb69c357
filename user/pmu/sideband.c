/*
 * sideband.c - what the symbol resolver needs to know while samples are taken: the
 * executable mappings, execs, forks and exits of processes (PERF_RECORD_MMAP2, COMM with
 * COMM_EXEC, FORK, EXIT), as perf record collects them.
 *
 * Without it, a process that execs after it was first seen, loads a library, or exits
 * before its samples are read would resolve to [unknown]. One dummy software event per
 * CPU, system-wide, delivers those records into a small perf ring buffer each; a drain
 * feeds them to the resolver (only for the target processes and their descendants when
 * there are targets). Lost records are counted. What it told the resolver about a process is
 * held until the process exited and the samples taken before its exit were read (the task's
 * read calls kp_sideband_forget_exited), or until the close: a system-wide profile under
 * process churn keeps the processes that live, not every one it ever saw.
 *
 * The records of all CPUs are applied in time order, not CPU after CPU: a process that execs
 * on one CPU and maps its libraries on another must see the exec (which drops its old
 * mappings) before the mappings, and a child's FORK before its mmaps. Each record carries its
 * time (sample_id_all, CLOCK_MONOTONIC); a drain reads every buffer, sorts what it read, and
 * applies the records older than the moment it started; younger ones wait for the next drain
 * (a record of another CPU may still be on its way), or are applied at once when tracking has
 * been disabled (nothing more can come).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <linux/perf_event.h>

#include "core/core.h"
#include "events/events.h"
#include "kperf/pcerrc.h"
#include "pmu.h"
#include "sym/sym.h"

#define SB_PAGES 64 /* 256 KiB of records per cpu */

struct sb_cpu {
	int fd;
	void *base; /* the metadata page, then the data pages */
	size_t data_size;
};

/* a record read from a buffer, waiting to be applied in time order */
struct sb_rec {
	uint64_t time;
	uint64_t seq; /* the order it was read in: keeps a CPU's records of equal time in order */
	size_t off; /* in the arena */
};

struct kp_sideband {
	struct sb_cpu *cpu;
	int ncpu;
	bool stopped; /* disabled: no record can come any more, apply everything */
	char *arena; /* the records waiting (whole, with their headers) */
	size_t arena_len, arena_cap;
	struct sb_rec *recs;
	size_t nrecs, recs_cap;
	uint64_t seq;
	struct kp_map procs; /* tgid -> 1: the processes of interest (NULL keys impossible) */
	bool all; /* no targets: every process */
	/* the processes it told the resolver about, each held (kp_pmu_sym_hold) until it exited
	 * and its samples were read (kp_sideband_forget_exited), or until the close: tgid -> 1,
	 * or NULL once released (the map is rebuilt when those pile up) */
	struct kp_map told;
	size_t ntold; /* held now */
	uint32_t *exited; /* held processes whose exit was applied */
	size_t nexited, exited_cap;
	uint64_t released; /* processes released after their exit */
	uint64_t lost;
	char *scratch; /* a record that wraps around the ring */
	size_t scratch_cap;
};

static bool wanted(struct kp_sideband *sb, uint32_t pid)
{
	/* the kernel gives pids of the opener's PID namespace: 0 is a process outside it
	 * (whose samples are pid -1, resolved without user symbols) */
	if (!pid)
		return false;
	return sb->all || kp_map_get(&sb->procs, (void *)(uintptr_t)pid);
}

static void want(struct kp_sideband *sb, uint32_t pid)
{
	struct kp_map_slot *s = kp_map_slot(&sb->procs, (void *)(uintptr_t)pid, NULL);

	if (s)
		s->val = (void *)1;
}

/* <pid>'s resolver state is held for this side band (it tells the resolver about it now) */
static void tell(struct kp_sideband *sb, uint32_t pid)
{
	struct kp_map_slot *s = kp_map_slot(&sb->told, (void *)(uintptr_t)pid, NULL);
	size_t i;

	if (!s)
		return;
	if (!s->val) {
		s->val = (void *)1;
		sb->ntold++;
		kp_pmu_sym_hold((int)pid);
	}
	/* a pid used again after an exit not yet released: the new process keeps it */
	for (i = 0; i < sb->nexited; i++)
		if (sb->exited[i] == pid)
			sb->exited[i--] = sb->exited[--sb->nexited];
}

static void exited(struct kp_sideband *sb, uint32_t pid)
{
	if (!kp_grow((void **)&sb->exited, &sb->exited_cap, sb->nexited + 1, sizeof(*sb->exited)))
		sb->exited[sb->nexited++] = pid;
}

/* the map of those told without the released ones (kp_map has no removal) */
static void compact_told(struct kp_sideband *sb)
{
	if (sb->told.len < 2 * sb->ntold + 1024)
		return;
	kp_map_compact(&sb->told);
}

void kp_sideband_forget_exited(struct kp_sideband *sb, void (*fn)(void *ctx, int pid), void *ctx)
{
	struct kp_map_slot *s;
	size_t i;

	if (!sb)
		return;
	for (i = 0; i < sb->nexited; i++) {
		int pid = (int)sb->exited[i];

		if (fn)
			fn(ctx, pid);
		s = kp_map_slot(&sb->told, (void *)(uintptr_t)pid, NULL);
		if (s && s->val) {
			s->val = NULL;
			sb->ntold--;
			sb->released++;
			kp_pmu_sym_release(pid);
		}
	}
	sb->nexited = 0;
	compact_told(sb);
}

/* every process it told the resolver about released, exited or not (the task was disabled
 * and its samples read: what comes next is told again, from fresh mappings) */
void kp_sideband_forget_all(struct kp_sideband *sb, void (*fn)(void *ctx, int pid), void *ctx)
{
	size_t i;

	if (!sb)
		return;
	for (i = 0; i < sb->told.cap; i++) {
		struct kp_map_slot *s = &sb->told.slots[i];
		int pid = (int)(uintptr_t)s->key;

		if (!s->key || !s->val)
			continue;
		if (fn)
			fn(ctx, pid);
		s->val = NULL;
		sb->ntold--;
		sb->released++;
		kp_pmu_sym_release(pid);
	}
	sb->nexited = 0;
	kp_map_compact(&sb->told); /* an empty map: its slots go too */
}

uint64_t kp_sideband_released(const struct kp_sideband *sb)
{
	return sb ? sb->released : 0;
}

int kp_sideband_open(const int *cpus, int ncpus, const int *pids, int npids,
		     struct kp_sideband **out)
{
	struct perf_event_attr attr = {
		.size = sizeof(attr),
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_DUMMY,
		.disabled = 1,
		.mmap = 1,
		.mmap2 = 1,
		.comm = 1,
		.comm_exec = 1,
		.task = 1,
		.exclude_kernel = 1,
		/* each record ends with its time, on a clock drain() can read */
		.sample_id_all = 1,
		.sample_type = PERF_SAMPLE_TIME,
		.use_clockid = 1,
		.clockid = CLOCK_MONOTONIC,
		.watermark = 1,
		.wakeup_watermark = SB_PAGES * 4096 / 4,
	};
	size_t page = (size_t)getpagesize();
	struct kp_sideband *sb = calloc(1, sizeof(*sb));
	int i, err = 0;

	*out = NULL;
	if (!sb)
		return kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
	kp_map_init(&sb->procs, false);
	kp_map_init(&sb->told, false);
	sb->all = npids == 0;
	for (i = 0; i < npids; i++)
		want(sb, (uint32_t)pids[i]);
	sb->cpu = calloc((size_t)ncpus, sizeof(*sb->cpu));
	if (!sb->cpu) {
		kp_sideband_close(sb);
		return kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
	}
	for (i = 0; i < ncpus; i++)
		sb->cpu[i].fd = -1;
	sb->ncpu = ncpus;
	for (i = 0; i < ncpus && !err; i++) {
		struct sb_cpu *c = &sb->cpu[i];

		c->fd = kp_perf_event_open(&attr, -1, cpus[i], -1, PERF_FLAG_FD_CLOEXEC);
		if (c->fd < 0) {
			err = kp_fail(errno == EACCES || errno == EPERM ?
					      LIBPERF_ERR_NO_PERMISSION :
					      LIBPERF_ERR_INVALID_EVENT,
				      -errno,
				      "cannot follow mmaps on cpu %d for symbol resolution: %s",
				      cpus[i], strerror(errno));
			break;
		}
		c->data_size = SB_PAGES * page;
		c->base = mmap(NULL, page + c->data_size, PROT_READ | PROT_WRITE, MAP_SHARED, c->fd,
			       0);
		if (c->base == MAP_FAILED) {
			c->base = NULL;
			err = kp_fail(LIBPERF_ERR_FAIL_MMAP, -errno,
				      "cannot map the side-band buffer of cpu %d: %s", cpus[i],
				      strerror(errno));
		}
	}
	if (err) {
		kp_sideband_close(sb);
		return err;
	}
	*out = sb;
	return 0;
}

int kp_sideband_enable(struct kp_sideband *sb, bool on)
{
	int i;

	for (i = 0; sb && i < sb->ncpu; i++)
		if (ioctl(sb->cpu[i].fd, on ? PERF_EVENT_IOC_ENABLE : PERF_EVENT_IOC_DISABLE, 0))
			return -errno;
	if (sb)
		sb->stopped = !on;
	return 0;
}

/* the record layouts this file reads (after struct perf_event_header) */
struct sb_mmap2 {
	uint32_t pid, tid;
	uint64_t addr, len, pgoff;
	uint32_t maj, min;
	uint64_t ino, ino_generation;
	uint32_t prot, flags;
	char filename[];
};

struct sb_comm {
	uint32_t pid, tid;
	char comm[];
};

struct sb_fork {
	uint32_t pid, ppid, tid, ptid;
	uint64_t time;
};

struct sb_lost {
	uint64_t id, lost;
};

static void handle(struct kp_sideband *sb, const struct perf_event_header *h)
{
	const void *body = h + 1;
	size_t len = h->size - sizeof(*h);

	switch (h->type) {
	case PERF_RECORD_MMAP2: {
		const struct sb_mmap2 *m = body;

		if (len <= sizeof(*m) || !wanted(sb, m->pid))
			break;
		tell(sb, m->pid);
		if (h->misc & PERF_RECORD_MISC_MMAP_BUILD_ID)
			kp_sym_add_mapping(m->pid, m->addr, m->addr + m->len, m->pgoff,
					   m->filename);
		else
			kp_sym_add_mapping_id(m->pid, m->addr, m->addr + m->len, m->pgoff,
					      m->filename, m->maj, m->min, m->ino);
		break;
	}
	case PERF_RECORD_COMM: {
		const struct sb_comm *c = body;

		if (len >= sizeof(*c) && (h->misc & PERF_RECORD_MISC_COMM_EXEC) &&
		    c->pid == c->tid && wanted(sb, c->pid)) {
			tell(sb, c->pid);
			kp_sym_exec(c->pid, c->comm);
		}
		break;
	}
	case PERF_RECORD_FORK: {
		const struct sb_fork *f = body;

		if (len < sizeof(*f) || f->pid == f->ppid || !f->pid || !wanted(sb, f->ppid))
			break;
		if (!sb->all)
			want(sb, f->pid); /* the children of targets are targets */
		tell(sb, f->pid);
		kp_sym_fork(f->ppid, f->pid);
		break;
	}
	case PERF_RECORD_EXIT: {
		const struct sb_fork *f = body;
		struct kp_map_slot *slot;

		if (len < sizeof(*f) || f->pid != f->tid || !wanted(sb, f->pid))
			break;
		/* its state goes once the samples taken before are read */
		exited(sb, f->pid);
		if (sb->all)
			break;
		/* a target that exited is no target any more: a process that gets its pid
		 * later must not replace its mappings (its samples resolve after the exit) */
		slot = kp_map_slot(&sb->procs, (void *)(uintptr_t)f->pid, NULL);
		if (slot)
			slot->val = NULL;
		break;
	}
	case PERF_RECORD_LOST:
		if (len >= sizeof(struct sb_lost))
			sb->lost += ((const struct sb_lost *)body)->lost;
		break;
	default:
		break;
	}
}

/* keep a copy of record <h> (<size> bytes) to apply it in time order */
static void keep(struct kp_sideband *sb, const void *h, size_t size)
{
	struct sb_rec *r;

	/* the time is the record's last 8 bytes (sample_id_all with PERF_SAMPLE_TIME only) */
	if (size < sizeof(struct perf_event_header) + sizeof(uint64_t) ||
	    kp_grow((void **)&sb->arena, &sb->arena_cap, sb->arena_len + size, 1) ||
	    kp_grow((void **)&sb->recs, &sb->recs_cap, sb->nrecs + 1, sizeof(*sb->recs)))
		return;
	r = &sb->recs[sb->nrecs++];
	r->off = sb->arena_len;
	r->seq = sb->seq++;
	memcpy(sb->arena + sb->arena_len, h, size);
	memcpy(&r->time, (const char *)h + size - sizeof(uint64_t), sizeof(r->time));
	sb->arena_len += size;
}

static void read_cpu(struct kp_sideband *sb, struct sb_cpu *c)
{
	struct perf_event_mmap_page *meta = c->base;
	char *data = (char *)c->base + getpagesize();
	uint64_t head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = meta->data_tail;

	while (tail < head) {
		struct perf_event_header hdr;
		size_t off = tail % c->data_size, first;

		/* the header itself may wrap */
		first = c->data_size - off;
		if (first >= sizeof(hdr)) {
			memcpy(&hdr, data + off, sizeof(hdr));
		} else {
			memcpy(&hdr, data + off, first);
			memcpy((char *)&hdr + first, data, sizeof(hdr) - first);
		}
		if (hdr.size < sizeof(hdr) || hdr.size > head - tail)
			break; /* corrupt: stop here rather than read garbage */
		if (first >= hdr.size) {
			keep(sb, data + off, hdr.size);
		} else if (!kp_grow((void **)&sb->scratch, &sb->scratch_cap, hdr.size, 1)) {
			memcpy(sb->scratch, data + off, first);
			memcpy(sb->scratch + first, data, hdr.size - first);
			keep(sb, sb->scratch, hdr.size);
		}
		tail += hdr.size;
	}
	__atomic_store_n(&meta->data_tail, tail, __ATOMIC_RELEASE);
}

static int by_time(const void *a, const void *b)
{
	const struct sb_rec *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

void kp_sideband_drain(struct kp_sideband *sb)
{
	struct timespec ts;
	uint64_t before;
	size_t i, n, len;
	int c;

	if (!sb)
		return;
	/* a record stamped before this moment is in its buffer now (or within the
	 * microseconds the kernel takes to write it) */
	clock_gettime(CLOCK_MONOTONIC, &ts);
	before = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	for (c = 0; c < sb->ncpu; c++)
		if (sb->cpu[c].base)
			read_cpu(sb, &sb->cpu[c]);
	if (sb->nrecs > 1) /* none read yet: recs is still NULL, which qsort may not take */
		qsort(sb->recs, sb->nrecs, sizeof(*sb->recs), by_time);
	for (n = 0; n < sb->nrecs && (sb->stopped || sb->recs[n].time < before); n++)
		handle(sb, (const void *)(sb->arena + sb->recs[n].off));
	/* the younger records wait, copied in their order to a fresh arena (in place, a
	 * record could overwrite one not moved yet) */
	len = 0;
	if (n < sb->nrecs) {
		char *fresh = malloc(sb->arena_cap);

		if (!fresh) {
			n = sb->nrecs; /* out of memory: drop them rather than apply them twice */
		} else {
			for (i = n; i < sb->nrecs; i++) {
				const struct perf_event_header *h =
					(const void *)(sb->arena + sb->recs[i].off);

				memcpy(fresh + len, h, h->size);
				sb->recs[i - n] = sb->recs[i];
				sb->recs[i - n].off = len;
				len += h->size;
			}
			free(sb->arena);
			sb->arena = fresh;
		}
	}
	sb->nrecs -= n;
	sb->arena_len = len;
}

uint64_t kp_sideband_lost(const struct kp_sideband *sb)
{
	return sb ? sb->lost : 0;
}

void kp_sideband_close(struct kp_sideband *sb)
{
	size_t page = (size_t)getpagesize();
	int i;

	if (!sb)
		return;
	for (i = 0; i < sb->ncpu; i++) {
		if (sb->cpu[i].base)
			munmap(sb->cpu[i].base, page + sb->cpu[i].data_size);
		if (sb->cpu[i].fd >= 0)
			close(sb->cpu[i].fd);
	}
	free(sb->cpu);
	free(sb->scratch);
	free(sb->arena);
	free(sb->recs);
	kp_map_free(&sb->procs);
	for (i = 0; i < (int)sb->told.cap; i++)
		if (sb->told.slots[i].key && sb->told.slots[i].val)
			kp_pmu_sym_release((int)(uintptr_t)sb->told.slots[i].key);
	kp_map_free(&sb->told);
	free(sb->exited);
	free(sb);
}
