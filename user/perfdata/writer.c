/*
 * writer.c - PmuBeginWrite, PmuWriteData, PmuEndWrite: the perf.data file itself.
 *
 * A PmuFile is an opaque token, never a pointer and never reused, looked up in a locked
 * table: a token that PmuEndWrite ended (or that was never handed out) is refused with
 * LIBPERF_ERR_INVALID_PMU_FILE, not dereferenced. Each event of the PmuAttr becomes one
 * attribute with one id; samples carry it (PERF_SAMPLE_IDENTIFIER), so perf tells the events
 * apart, and HEADER_EVENT_DESC gives them the names of evtList.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "events/events.h"
#include "kperf/pcerrc.h"
#include "perfdata.h"
#include "pmu/pmu.h"
#include "sym/sym.h"

/* perf's file header; the file is in this machine's byte order, as perf record writes it */
struct pf_section {
	uint64_t offset, size;
};

struct pf_header {
	uint64_t magic; /* "PERFILE2" read as a little- or big-endian u64 */
	uint64_t size;
	uint64_t attr_size;
	struct pf_section attrs, data, event_types;
	uint64_t features[4];
};

struct pf_file_attr {
	struct perf_event_attr attr;
	struct pf_section ids;
};

#define PF_MAGIC 0x32454c4946524550ULL
#define PF_MAX_FRAMES 1024 /* a record's size is a u16: 8 KiB of frames is far below */

/* ---- buffers ---- */

void *kp_pf_buf_reserve(struct kp_pf_buf *b, size_t n)
{
	void *p;

	if (b->oom)
		return NULL;
	if (kp_grow((void **)&b->p, &b->cap, b->len + n, 1)) {
		b->oom = true;
		return NULL;
	}
	p = b->p + b->len;
	memset(p, 0, n);
	b->len += n;
	return p;
}

void kp_pf_buf_put(struct kp_pf_buf *b, const void *src, size_t n)
{
	void *p = kp_pf_buf_reserve(b, n);

	if (p && n)
		memcpy(p, src, n);
}

void kp_pf_buf_put_str(struct kp_pf_buf *b, const char *s, size_t align)
{
	size_t len = strlen(s) + 1, padded = (len + align - 1) / align * align;
	char *p = kp_pf_buf_reserve(b, padded);

	if (p)
		memcpy(p, s, len);
}

void kp_pf_buf_free(struct kp_pf_buf *b)
{
	free(b->p);
	memset(b, 0, sizeof(*b));
}

/* ---- the table of open files ---- */

struct pf_entry {
	uintptr_t token;
	struct kp_pf *f;
	int refs; /* the table's own, plus one per call using it */
	bool ended;
};

static pthread_mutex_t files_lock = PTHREAD_MUTEX_INITIALIZER;
static struct pf_entry *files;
static size_t nfiles, capfiles;
static uintptr_t last_token;

static void pf_free(struct kp_pf *f)
{
	int i;

	if (!f)
		return;
	if (f->fd >= 0)
		close(f->fd);
	for (i = 0; i < f->nevts; i++)
		free(f->evts[i].name);
	free(f->evts);
	free(f->path);
	kp_pf_side_free(&f->side);
	pthread_mutex_destroy(&f->lock);
	free(f);
}

static int invalid_file(PmuFile file)
{
	return kp_fail(LIBPERF_ERR_INVALID_PMU_FILE, -EBADF,
		       "invalid PmuFile %p: it was not returned by PmuBeginWrite, or PmuEndWrite "
		       "has ended it",
		       file);
}

/* borrow the file of <file>; with <end>, also take it out of the table */
static struct kp_pf *get(PmuFile file, bool end)
{
	struct kp_pf *f = NULL;
	size_t i;

	pthread_mutex_lock(&files_lock);
	for (i = 0; i < nfiles; i++) {
		if (files[i].token == (uintptr_t)file && !files[i].ended) {
			files[i].refs++;
			files[i].ended = end;
			f = files[i].f;
			break;
		}
	}
	pthread_mutex_unlock(&files_lock);
	if (!f)
		invalid_file(file);
	return f;
}

static void put(struct kp_pf *f, bool end)
{
	struct kp_pf *dead = NULL;
	size_t i;

	pthread_mutex_lock(&files_lock);
	for (i = 0; i < nfiles; i++) {
		if (files[i].f != f)
			continue;
		files[i].refs -= end ? 2 : 1; /* PmuEndWrite also drops the table's reference */
		if (files[i].refs <= 0) {
			dead = f;
			files[i] = files[--nfiles];
		}
		break;
	}
	pthread_mutex_unlock(&files_lock);
	pf_free(dead);
}

static PmuFile add(struct kp_pf *f)
{
	PmuFile token = NULL;

	pthread_mutex_lock(&files_lock);
	if (!kp_grow((void **)&files, &capfiles, nfiles + 1, sizeof(*files))) {
		/* tokens look like aligned pointers to a program that prints them */
		last_token += 0x10;
		files[nfiles++] = (struct pf_entry){ .token = last_token, .f = f, .refs = 1 };
		token = (PmuFile)last_token;
	}
	pthread_mutex_unlock(&files_lock);
	return token;
}

/* ---- output ---- */

int kp_pf_pwrite(struct kp_pf *f, const void *buf, size_t len, uint64_t off)
{
	const char *p = buf;

	while (len) {
		ssize_t w = pwrite(f->fd, p, len, (off_t)off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return kp_fail(COMMON_ERR_WRITE, w < 0 ? -errno : -ENOSPC,
				       "cannot write %s: %s", f->path,
				       strerror(w < 0 ? errno : ENOSPC));
		p += w;
		len -= (size_t)w;
		off += (uint64_t)w;
	}
	return 0;
}

void kp_pf_put_sample_id(const struct kp_pf *f, struct kp_pf_buf *b, int pid, int tid,
			 uint64_t time, int cpu, uint64_t id)
{
	/* the fields of KP_PF_SAMPLE_TYPE that sample_id_all carries, in perf's order */
	struct {
		uint32_t pid, tid;
		uint64_t time;
		uint32_t cpu, res;
		uint64_t id;
	} s = { (uint32_t)pid, (uint32_t)tid, time, (uint32_t)cpu, 0, id };

	if (f->id_all)
		kp_pf_buf_put(b, &s, sizeof(s));
}

/* ---- PmuBeginWrite ---- */

static int check_attr(const struct PmuAttr *a)
{
	if (!a->numEvt || !a->evtList)
		return kp_fail(LIBPERF_ERR_NOT_SUPPORT_PMU_FILE, -EINVAL,
			       "the PmuAttr has no events (numEvt %u, evtList %s): a perf.data "
			       "file describes a SAMPLING task's events",
			       a->numEvt, a->evtList ? "set" : "NULL");
	if (!a->period)
		return kp_fail(LIBPERF_ERR_NOT_SUPPORT_PMU_FILE, -EINVAL,
			       "the PmuAttr's %s is 0: a perf.data file describes a SAMPLING "
			       "task, give the period or freq it sampled with",
			       a->useFreq ? "freq" : "period");
	if (a->numEvtAttr && !a->evtAttr)
		return kp_fail(LIBPERF_ERR_INVALID_EVTATTR, -EINVAL,
			       "evtAttr is NULL but numEvtAttr is %u", a->numEvtAttr);
	return 0;
}

/* the attribute perf is told the event was sampled with */
static int make_evt(struct kp_pf_evt *e, const struct PmuAttr *a, unsigned i)
{
	const struct EvtAttr *ea = i < a->numEvtAttr ? &a->evtAttr[i] : NULL;
	struct kp_event ev;
	int err;

	if (!a->evtList[i])
		return kp_fail(LIBPERF_ERR_INVALID_EVTLIST, -EINVAL, "evtList[%u] is NULL", i);
	err = kp_event_parse(a->evtList[i], false, &ev);
	if (err)
		return err;
	e->attr = ev.attr;
	kp_event_free(&ev);
	e->name = kp_strdup(a->evtList[i]);
	if (!e->name)
		return -ENOMEM;
	e->id = i + 1;
	e->attr.size = sizeof(e->attr);
	e->attr.sample_type = KP_PF_SAMPLE_TYPE;
	e->attr.exclude_user |= a->excludeUser | (ea ? ea->excludeUser : 0);
	e->attr.exclude_kernel |= a->excludeKernel | (ea ? ea->excludeKernel : 0);
	e->attr.exclude_guest |= a->excludeGuest;
	e->attr.exclude_host |= a->excludeHost;
	e->attr.sample_period = 0;
	e->attr.freq = 0;
	if (e->attr.type == PERF_TYPE_TRACEPOINT) {
		e->attr.sample_period = 1;
	} else if (ea && ea->period) {
		e->attr.sample_period = ea->period;
	} else if (a->useFreq) {
		e->attr.freq = 1;
		e->attr.sample_freq = a->freq;
	} else {
		e->attr.sample_period = a->period;
	}
	/* what perf record sets for the records it writes besides samples */
	e->attr.mmap = 1;
	e->attr.mmap2 = 1;
	e->attr.comm = 1;
	return 0;
}

/* the header (all zero: not a perf.data file yet), the event ids, the attributes */
static int write_start(struct kp_pf *f)
{
	struct kp_pf_buf b = { 0 };
	uint64_t ids_off = sizeof(struct pf_header);
	int i, err;

	kp_pf_buf_reserve(&b, sizeof(struct pf_header));
	for (i = 0; i < f->nevts; i++)
		kp_pf_buf_put(&b, &f->evts[i].id, sizeof(uint64_t));
	for (i = 0; i < f->nevts; i++) {
		struct pf_file_attr fa = { .attr = f->evts[i].attr,
					   .ids = { ids_off + (uint64_t)i * 8, 8 } };

		kp_pf_buf_put(&b, &fa, sizeof(fa));
	}
	if (b.oom)
		return kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
	err = kp_pf_pwrite(f, b.p, b.len, 0);
	f->data_off = b.len;
	kp_pf_buf_free(&b);
	return err;
}

static void discard(struct kp_pf *f)
{
	if (f->fd >= 0) {
		close(f->fd);
		f->fd = -1;
	}
	/* a file this call created is removed; one that existed was emptied by the O_TRUNC */
	if (f->created)
		unlink(f->path);
}

KP_EXPORT PmuFile PmuBeginWrite(const char *path, const struct PmuAttr *pattr, const int addIdHdr)
{
	struct kp_pf *f;
	struct stat st;
	PmuFile token;
	unsigned i;
	int err;

	kp_clear();
	if (!pattr)
		return kp_fail(LIBPERF_ERR_NULL_POINTER, -EINVAL, "PmuAttr cannot be NULL"), NULL;
	if (!path)
		return kp_fail(LIBPERF_ERR_NULL_POINTER, -EINVAL, "path cannot be NULL"), NULL;
	if (check_attr(pattr))
		return NULL;
	f = calloc(1, sizeof(*f));
	if (!f)
		return kp_public_fail(-ENOMEM), NULL;
	pthread_mutex_init(&f->lock, NULL);
	f->fd = -1;
	f->id_all = addIdHdr != 0;
	kp_map_init(&f->side.modules, true);
	kp_map_init(&f->side.written, true);
	f->path = kp_strdup(path);
	f->evts = calloc(pattr->numEvt, sizeof(*f->evts));
	err = f->path && f->evts ? 0 : -ENOMEM;
	for (i = 0; i < pattr->numEvt && !err; i++) {
		err = make_evt(&f->evts[i], pattr, i);
		f->evts[i].attr.sample_id_all = f->id_all;
		f->nevts += !err;
	}
	if (err)
		goto fail;
	f->created = stat(path, &st) != 0;
	f->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (f->fd < 0) {
		err = kp_fail(LIBPERF_ERR_OPEN_INVALID_FILE, -errno, "cannot create %s: %s", path,
			      strerror(errno));
		goto fail;
	}
	err = write_start(f);
	if (err) {
		discard(f);
		goto fail;
	}
	token = add(f);
	if (!token) {
		err = -ENOMEM;
		discard(f);
		goto fail;
	}
	return token;
fail:
	pf_free(f);
	kp_public_fail(err);
	return NULL;
}

/* ---- PmuWriteData ---- */

static uint64_t evt_id(const struct kp_pf *f, const char *evt)
{
	int i;

	for (i = 0; evt && i < f->nevts; i++)
		if (!strcmp(f->evts[i].name, evt))
			return f->evts[i].id;
	return 0;
}

/* the addresses of record <i>, leaf first: its stack's, or the callchain kept for a record
 * whose symbols are resolved later (RESOLVE_DELAY_*) */
static size_t record_ips(const struct PmuData *data, size_t i, uint64_t *ips, size_t cap)
{
	const struct kp_data_chain *c = kp_data_chain_of(data, i);
	const struct Stack *st;
	size_t n = 0, k;

	/* an inline frame (inlineFrames) shares its address with the frame after it: perf
	 * finds inlined calls itself, from the address */
	for (st = data[i].stack; st && n < cap; st = st->next)
		if (st->symbol && !kp_sym_is_inline(st->symbol))
			ips[n++] = st->symbol->addr;
	for (k = 0; !data[i].stack && c && k < c->n && n < cap; k++)
		if (c->ips[k] && c->ips[k] < KP_SYM_CONTEXT_MAX)
			ips[n++] = c->ips[k];
	return n;
}

static void put_sample(struct kp_pf_buf *b, const struct PmuData *data, size_t i, uint64_t id)
{
	uint64_t frames[PF_MAX_FRAMES + 2], ips[PF_MAX_FRAMES], ip = 0;
	const struct PmuData *d = &data[i];
	struct perf_event_header *h;
	size_t n = 0, start = b->len, nips, k;
	int ctx = 0; /* 1: kernel frames begun, 2: user frames begun */
	bool kernel_ip = false;
	struct {
		uint64_t identifier, ip;
		uint32_t pid, tid;
		uint64_t time;
		uint32_t cpu, res;
		uint64_t period, nr;
	} s;

	nips = record_ips(data, i, ips, PF_MAX_FRAMES);
	for (k = 0; k < nips; k++) {
		uint64_t a = ips[k];

		if (!n) {
			ip = a;
			kernel_ip = kp_pf_kernel_addr(a);
		}
		if (kp_pf_kernel_addr(a) && ctx == 0) {
			frames[n++] = (uint64_t)PERF_CONTEXT_KERNEL;
			ctx = 1;
		} else if (!kp_pf_kernel_addr(a) && ctx != 2) {
			frames[n++] = (uint64_t)PERF_CONTEXT_USER;
			ctx = 2;
		}
		frames[n++] = a;
	}
	h = kp_pf_buf_reserve(b, sizeof(*h));
	s = (typeof(s)){ .identifier = id,
			 .ip = ip,
			 .pid = (uint32_t)d->pid,
			 .tid = (uint32_t)d->tid,
			 .time = (uint64_t)d->ts,
			 .cpu = (uint32_t)d->cpu,
			 .period = d->period,
			 .nr = n };
	kp_pf_buf_put(b, &s, sizeof(s));
	kp_pf_buf_put(b, frames, n * sizeof(uint64_t));
	if (!h || b->oom)
		return;
	h = (struct perf_event_header *)(b->p + start);
	h->type = PERF_RECORD_SAMPLE;
	h->misc = kernel_ip ? PERF_RECORD_MISC_KERNEL : PERF_RECORD_MISC_USER;
	h->size = (uint16_t)(b->len - start);
}

static int check_data(const struct kp_pf *f, struct PmuData *data, int len, uint64_t *ids)
{
	long n;
	int i;

	if (len < 0)
		return kp_fail(LIBPERF_ERR_INVALID_PMU_DATA, -EINVAL,
			       "len is %d: give the number of records PmuRead returned", len);
	if (!data)
		return kp_fail(LIBPERF_ERR_INVALID_PMU_DATA, -EINVAL, "data is NULL but len is %d",
			       len);
	n = kp_data_len(data);
	if (n < 0)
		return kp_fail(LIBPERF_ERR_INVALID_PMU_DATA, -EINVAL,
			       "data was not returned by PmuRead (or was freed)");
	if (len > n)
		return kp_fail(LIBPERF_ERR_INVALID_PMU_DATA, -EINVAL,
			       "len is %d but data holds %ld records", len, n);
	for (i = 0; i < len; i++) {
		ids[i] = evt_id(f, data[i].evt);
		if (!ids[i])
			return kp_fail(LIBPERF_ERR_INVALID_PMU_DATA, -EINVAL,
				       "record %d is of event '%s', which is not in the PmuAttr "
				       "given to PmuBeginWrite",
				       i, data[i].evt ? data[i].evt : "(null)");
	}
	return 0;
}

static int write_data(struct kp_pf *f, struct PmuData *data, int len)
{
	struct kp_pf_buf b = { 0 };
	struct kp_map added;
	uint64_t *ids, end = f->data_off + f->data_size;
	int i, err;

	ids = calloc((size_t)len + 1, sizeof(*ids));
	if (!ids)
		return kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
	err = check_data(f, data, len, ids);
	if (err) {
		free(ids);
		return err;
	}
	kp_map_init(&added, true);
	err = kp_pf_side_build(f, data, ids, len, &b, &added);
	for (i = 0; i < len && !err; i++)
		put_sample(&b, data, (size_t)i, ids[i]);
	free(ids);
	if (!err && b.oom)
		err = kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
	if (!err)
		err = kp_pf_pwrite(f, b.p, b.len, end);
	if (err) {
		/* cut off what part of this call reached the file: it stays as it was */
		if (ftruncate(f->fd, (off_t)end)) {
			/* the next write overwrites it, and PmuEndWrite writes the real end */
		}
		kp_pf_side_abort(&added);
		kp_pf_buf_free(&b);
		return err;
	}
	kp_pf_side_commit(f, &added);
	f->data_size += b.len;
	for (i = 0; i < len; i++) {
		uint64_t ts = (uint64_t)data[i].ts;

		if (!f->nsamples || ts < f->first_ts)
			f->first_ts = ts;
		if (!f->nsamples || ts > f->last_ts)
			f->last_ts = ts;
		f->nsamples++;
	}
	kp_pf_buf_free(&b);
	return 0;
}

KP_EXPORT int PmuWriteData(PmuFile file, struct PmuData *data, int len)
{
	struct kp_pf *f;
	int err = 0;

	kp_clear();
	f = get(file, false);
	if (!f)
		return Perrorno();
	pthread_mutex_lock(&f->lock);
	if (len) /* 0 records: nothing to look at, as with an empty PmuRead */
		err = write_data(f, data, len);
	pthread_mutex_unlock(&f->lock);
	put(f, false);
	if (err) {
		kp_public_fail(err);
		return Perrorno();
	}
	return SUCCESS;
}

/* ---- PmuEndWrite ---- */

static int finish(struct kp_pf *f)
{
	struct pf_header h = { 0 };
	int err;

	h.magic = PF_MAGIC;
	h.size = sizeof(h);
	h.attr_size = sizeof(struct pf_file_attr);
	h.attrs.offset = sizeof(h) + (uint64_t)f->nevts * 8;
	h.attrs.size = (uint64_t)f->nevts * sizeof(struct pf_file_attr);
	h.data.offset = f->data_off;
	h.data.size = f->data_size;
	err = kp_pf_write_features(f, h.features);
	/* the header last: only a file whose every part was written gets perf's magic */
	if (!err)
		err = kp_pf_pwrite(f, &h, sizeof(h), 0);
	if (!err && close(f->fd))
		err = kp_fail(COMMON_ERR_WRITE, -errno, "cannot write %s: %s", f->path,
			      strerror(errno));
	else if (err)
		close(f->fd);
	f->fd = -1;
	if (err && f->created)
		unlink(f->path);
	return err;
}

KP_EXPORT void PmuEndWrite(PmuFile file)
{
	struct kp_pf *f;
	int err;

	kp_clear();
	f = get(file, true);
	if (!f)
		return;
	pthread_mutex_lock(&f->lock);
	err = f->fd >= 0 ? finish(f) : 0;
	pthread_mutex_unlock(&f->lock);
	put(f, true);
	if (err)
		kp_public_fail(err);
}
