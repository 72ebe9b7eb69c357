/*
 * features.c - the feature sections that follow the data of a perf.data file: a table of
 * (offset, size), one per feature bit set in the header, in bit order, then each feature.
 *
 * TRACING_DATA describes the tracepoint events (tracing.c). BUILD_ID is the one perf needs
 * to find the right files (it checks each file it opens against it, and looks in its
 * build-id cache by it); EVENT_DESC names the events as the PmuAttr did; the host
 * description (HOSTNAME, OSRELEASE, ARCH, NRCPUS) and SAMPLE_TIME are what perf report
 * --header shows.
 */
#include <errno.h>
#include <string.h>
#include <sys/utsname.h>

#include "kperf/pcerrc.h"
#include "perfdata.h"

#define NAME_ALIGN 64 /* perf pads strings and build-id file names to this */
#define BUILD_ID_SIZE_MISC (1U << 15) /* PERF_RECORD_MISC_BUILD_ID_SIZE: size in the record */
#define NFEAT 8

/* a perf_header_string: a u32 length, then the string padded with NULs */
static void put_string(struct kp_pf_buf *b, const char *s)
{
	size_t len = strlen(s) + 1;
	uint32_t padded = (uint32_t)((len + NAME_ALIGN - 1) / NAME_ALIGN * NAME_ALIGN);

	kp_pf_buf_put(b, &padded, sizeof(padded));
	kp_pf_buf_put_str(b, s, NAME_ALIGN);
}

static void put_build_id(const struct kp_pf_module *m, void *ctx)
{
	struct kp_pf_buf *b = ctx;
	struct {
		struct perf_event_header h;
		int32_t pid;
		uint8_t id[20];
		uint8_t size, res1;
		uint16_t res2;
	} __attribute__((packed)) r = { { 0, 0, 0 }, -1, { 0 }, 0, 0, 0 };
	size_t name = (strlen(m->path) + 1 + NAME_ALIGN - 1) / NAME_ALIGN * NAME_ALIGN;

	if (!m->build_id_len)
		return;
	/* pid -1: the host, as perf record writes it; the space tells kernel from user files */
	r.h.misc = (uint16_t)(BUILD_ID_SIZE_MISC |
			      (m->kernel ? PERF_RECORD_MISC_KERNEL : PERF_RECORD_MISC_USER));
	r.h.size = (uint16_t)(sizeof(r) + name);
	memcpy(r.id, m->build_id, m->build_id_len);
	r.size = (uint8_t)m->build_id_len;
	kp_pf_buf_put(b, &r, sizeof(r));
	kp_pf_buf_put_str(b, m->path, NAME_ALIGN);
}

static void put_event_desc(const struct kp_pf *f, struct kp_pf_buf *b)
{
	uint32_t nr = (uint32_t)f->nevts, size = sizeof(struct perf_event_attr), one = 1;
	int i;

	kp_pf_buf_put(b, &nr, sizeof(nr));
	kp_pf_buf_put(b, &size, sizeof(size));
	for (i = 0; i < f->nevts; i++) {
		kp_pf_buf_put(b, &f->evts[i].attr, sizeof(f->evts[i].attr));
		kp_pf_buf_put(b, &one, sizeof(one));
		put_string(b, f->evts[i].name);
		kp_pf_buf_put(b, &f->evts[i].id, sizeof(f->evts[i].id));
	}
}

static void put_nrcpus(struct kp_pf_buf *b)
{
	uint32_t v[2] = { 0, 0 }; /* available, then online: the order perf reads them in */
	int c, n = kp_cpu_possible();

	v[0] = (uint32_t)n;
	for (c = 0; c < n; c++)
		v[1] += kp_cpu_online(c);
	kp_pf_buf_put(b, v, sizeof(v));
}

int kp_pf_write_features(struct kp_pf *f, uint64_t features[4])
{
	struct {
		uint64_t offset, size;
	} table[NFEAT];
	static const int bits[NFEAT] = { KP_PF_FEAT_TRACING_DATA, KP_PF_FEAT_BUILD_ID,
					 KP_PF_FEAT_HOSTNAME,	  KP_PF_FEAT_OSRELEASE,
					 KP_PF_FEAT_ARCH,	  KP_PF_FEAT_NRCPUS,
					 KP_PF_FEAT_EVENT_DESC,	  KP_PF_FEAT_SAMPLE_TIME };
	uint64_t at = f->data_off + f->data_size, start;
	struct kp_pf_buf b = { 0 };
	struct utsname u;
	int i, n = 0, err;

	if (uname(&u))
		memset(&u, 0, sizeof(u));
	memset(features, 0, 4 * sizeof(uint64_t));
	/* the table first (filled in below), then the features in bit order */
	kp_pf_buf_reserve(&b, sizeof(table));
	for (i = 0; i < NFEAT; i++) {
		start = b.len;
		switch (bits[i]) {
		case KP_PF_FEAT_TRACING_DATA:
			if (!f->tracing.len)
				continue; /* no tracepoint events */
			kp_pf_buf_put(&b, f->tracing.p, f->tracing.len);
			break;
		case KP_PF_FEAT_BUILD_ID:
			kp_pf_side_each(&f->side, put_build_id, &b);
			break;
		case KP_PF_FEAT_HOSTNAME:
			put_string(&b, u.nodename);
			break;
		case KP_PF_FEAT_OSRELEASE:
			put_string(&b, u.release);
			break;
		case KP_PF_FEAT_ARCH:
			put_string(&b, u.machine);
			break;
		case KP_PF_FEAT_NRCPUS:
			put_nrcpus(&b);
			break;
		case KP_PF_FEAT_EVENT_DESC:
			put_event_desc(f, &b);
			break;
		case KP_PF_FEAT_SAMPLE_TIME:
			if (!f->nsamples)
				continue; /* no samples, no times */
			kp_pf_buf_put(&b, &f->first_ts, sizeof(f->first_ts));
			kp_pf_buf_put(&b, &f->last_ts, sizeof(f->last_ts));
			break;
		}
		table[n].offset = at + start;
		table[n].size = b.len - start;
		features[bits[i] / 64] |= 1ULL << (bits[i] % 64);
		n++;
	}
	if (b.oom) {
		kp_pf_buf_free(&b);
		return kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
	}
	/* the table holds one entry per bit set: move the features up over unused entries */
	memmove(b.p + (size_t)n * sizeof(table[0]), b.p + sizeof(table), b.len - sizeof(table));
	b.len -= (size_t)(NFEAT - n) * sizeof(table[0]);
	for (i = 0; i < n; i++)
		table[i].offset -= (uint64_t)(NFEAT - n) * sizeof(table[0]);
	memcpy(b.p, table, (size_t)n * sizeof(table[0]));
	err = kp_pf_pwrite(f, b.p, b.len, at);
	kp_pf_buf_free(&b);
	return err;
}
