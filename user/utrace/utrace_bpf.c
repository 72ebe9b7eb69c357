/*
 * utrace_bpf.c - the owner of utrace.skel.h: load the program, place its uprobes, flip it on
 * and off, drain its ring buffer, read its drop counter.
 *
 * Uprobes go through the kernel's uprobe PMU (perf_event_open of type "uprobe", which libbpf
 * uses when /sys/bus/event_source/devices/uprobe exists); libbpf would fall back to writing
 * tracefs uprobe_events without it, so that case is refused here instead.
 *
 * A hit names its probe's site through the attach cookie. Kernels before 5.15 have no
 * cookies (and libbpf 1.1 no other way for a uprobe to know where it is): there, each site
 * gets its own copy of the program, loaded with the site as a constant and sharing the
 * first copy's maps (ring buffer, filter, counters, the enabled flag), so that a hit is
 * attributed exactly even in a library loaded after the open or gone before the read.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "core/core.h"
#include "core/pidns.h"
#include "kperf/pcerrc.h"
#include "utrace.h"
#include "skel/utrace.skel.h"

#define UPROBE_PMU_TYPE "/sys/bus/event_source/devices/uprobe/type"

struct kp_ut_bpf {
	struct utrace_bpf *skel;
	struct bpf_link **links; /* one per (probe address, process) */
	size_t nlinks, cap;
	struct ring_buffer *rb;
	size_t ringbuf_bytes;
	bool use_cookie;
	struct utrace_bpf **copies; /* without cookies: the program's copy of site + 1 */
	size_t ncopies;
	kp_ut_event_fn on_event;
	void *ctx;
	int ncpus;
};

static pthread_once_t cookie_once = PTHREAD_ONCE_INIT;
static bool cookie_ok;

static void probe_cookie(void)
{
	cookie_ok = libbpf_probe_bpf_helper(BPF_PROG_TYPE_KPROBE, BPF_FUNC_get_attach_cookie,
					    NULL) == 1;
}

/* Can the program read its attach cookie (bpf_get_attach_cookie and the perf_event links that
 * carry cookies, both 5.15)? Probed once; $KPERF_BPF_NO_COOKIE=1 says no, to exercise the
 * fallback. (The kernels branch moves such probes to user/core: kp_have().) */
static bool have_attach_cookie(void)
{
	const char *off = secure_getenv("KPERF_BPF_NO_COOKIE");

	if (off && *off && strcmp(off, "0"))
		return false;
	pthread_once(&cookie_once, probe_cookie);
	return cookie_ok;
}

static int on_rb_sample(void *ctx, void *data, size_t size)
{
	struct kp_ut_bpf *b = ctx;

	if (size >= sizeof(struct kp_ut_event) && b->on_event)
		b->on_event(b->ctx, data);
	return 0;
}

static int populate(struct kp_ut_bpf *b, const struct kp_ut_bpf_opts *o)
{
	int fd = bpf_map__fd(b->skel->maps.targets);
	__u8 one = 1;
	unsigned i;
	__u32 key;

	for (i = 0; i < o->ntgids; i++) {
		key = (__u32)o->tgids[i];
		if (bpf_map_update_elem(fd, &key, &one, BPF_ANY))
			return kp_fail(UNKNOWN_ERROR, -errno,
				       "cannot add pid %u to the BPF filter: %s", key,
				       strerror(errno));
	}
	return 0;
}

int kp_ut_bpf_open(const struct kp_ut_bpf_opts *o, struct kp_ut_bpf **out)
{
	struct kp_ut_bpf *b;
	long type;
	int err;

	*out = NULL;
	if (kp_read_long(UPROBE_PMU_TYPE, &type))
		return kp_fail(LIBPERF_ERR_UTRACE_PROBE_REGISTER_FAILED, -ENOTSUP,
			       "this kernel has no uprobe PMU (%s is missing): kperf-bpf places "
			       "uprobes through it and never through tracefs uprobe_events",
			       UPROBE_PMU_TYPE);
	kp_bpf_log_init();
	kp_bpf_log_clear();
	b = calloc(1, sizeof(*b));
	if (!b)
		return kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
	b->on_event = o->on_event;
	b->ctx = o->ctx;
	b->ncpus = libbpf_num_possible_cpus();
	b->skel = utrace_bpf__open();
	if (!b->skel) {
		err = -errno;
		goto fail;
	}
	/* processes as the caller names them; no CO-RE here: offsets from the kernel's BTF */
	err = kp_pidns_bpf_config((struct kp_pidns_cfg *)&b->skel->rodata->kp_pidns, true);
	if (err)
		goto fail;
	b->skel->rodata->cfg.filter_pid = o->ntgids > 0;
	b->skel->rodata->cfg.fetch_g = o->fetch_g;
	b->use_cookie = have_attach_cookie();
	b->skel->rodata->cfg.use_cookie = b->use_cookie;
	/* without cookies this object only holds the maps: the sites' copies are the programs */
	if (!b->use_cookie)
		bpf_program__set_autoload(b->skel->progs.kp_utrace_hit, false);
	b->skel->rodata->cfg.wakeup_bytes = o->ringbuf_bytes / 4;
	bpf_map__set_max_entries(b->skel->maps.events, (__u32)o->ringbuf_bytes);
	bpf_map__set_max_entries(b->skel->maps.targets, o->ntgids ? o->ntgids : 1);
	err = utrace_bpf__load(b->skel);
	if (err)
		goto fail;
	err = populate(b, o);
	if (err)
		goto fail;
	b->ringbuf_bytes = o->ringbuf_bytes;
	b->rb = ring_buffer__new(bpf_map__fd(b->skel->maps.events), on_rb_sample, b, NULL);
	if (!b->rb) {
		err = kp_fail(LIBPERF_ERR_FAIL_MMAP, -errno,
			      "cannot map the %zu KiB ring buffer: %s", o->ringbuf_bytes >> 10,
			      strerror(errno));
		goto fail;
	}
	*out = b;
	return 0;
fail:
	if (!kp_failed())
		kp_bpf_load_error("user function tracing", err < 0 ? err : -EINVAL);
	kp_ut_bpf_close(b);
	return err < 0 ? err : -EINVAL;
}

/* The copy of the program for site <cookie> - 1, loaded on first use: the same read-only
 * configuration but the site, and the first copy's maps. */
static int site_copy(struct kp_ut_bpf *b, uint32_t cookie, struct bpf_program **prog)
{
	struct utrace_bpf *c;
	int err;

	if (kp_grow((void **)&b->copies, &b->ncopies, (size_t)cookie + 1, sizeof(*b->copies)))
		return kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
	if (!b->copies[cookie]) {
		c = utrace_bpf__open();
		if (!c)
			return -errno;
		*c->rodata = *b->skel->rodata;
		c->rodata->cfg.site = cookie;
		err = bpf_map__reuse_fd(c->maps.events, bpf_map__fd(b->skel->maps.events));
		if (!err)
			err = bpf_map__reuse_fd(c->maps.targets,
						bpf_map__fd(b->skel->maps.targets));
		if (!err)
			err = bpf_map__reuse_fd(c->maps.counters,
						bpf_map__fd(b->skel->maps.counters));
		if (!err)
			err = bpf_map__reuse_fd(c->maps.bss, bpf_map__fd(b->skel->maps.bss));
		if (!err)
			err = utrace_bpf__load(c);
		if (err) {
			utrace_bpf__destroy(c);
			return err < 0 ? err : -EINVAL;
		}
		b->copies[cookie] = c;
	}
	*prog = b->copies[cookie]->progs.kp_utrace_hit;
	return 0;
}

int kp_ut_bpf_attach(struct kp_ut_bpf *b, const char *path, uint64_t off, int tgid, uint32_t cookie)
{
	LIBBPF_OPTS(bpf_uprobe_opts, uo, .retprobe = false,
		    .bpf_cookie = b->use_cookie ? cookie : 0);
	struct bpf_program *prog = b->skel->progs.kp_utrace_hit;
	struct bpf_link *l;
	int err;

	if (kp_grow((void **)&b->links, &b->cap, b->nlinks + 1, sizeof(*b->links)))
		return kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
	if (!b->use_cookie && cookie) {
		err = site_copy(b, cookie, &prog);
		if (err)
			return kp_bpf_load_error("user function tracing", err);
	}
	l = bpf_program__attach_uprobe_opts(prog, tgid, path, (size_t)off, &uo);
	if (!l)
		return -errno;
	b->links[b->nlinks++] = l;
	return 0;
}

bool kp_ut_bpf_uses_cookies(const struct kp_ut_bpf *b)
{
	return b->use_cookie;
}

unsigned kp_ut_bpf_nprobes(const struct kp_ut_bpf *b)
{
	return (unsigned)b->nlinks;
}

void kp_ut_bpf_set_enabled(struct kp_ut_bpf *b, bool on)
{
	/* the program reads it on every hit; a store to the mapped .bss is all it takes */
	__atomic_store_n(&b->skel->bss->enabled, on ? 1U : 0U, __ATOMIC_SEQ_CST);
}

int kp_ut_bpf_epoll_fd(struct kp_ut_bpf *b)
{
	return ring_buffer__epoll_fd(b->rb);
}

int kp_ut_bpf_consume(struct kp_ut_bpf *b)
{
	return ring_buffer__consume(b->rb);
}

uint64_t kp_ut_bpf_dropped(struct kp_ut_bpf *b)
{
	__u64 *vals = calloc((size_t)b->ncpus, sizeof(*vals));
	__u32 key = KP_UT_CNT_DROPPED;
	uint64_t sum = 0;
	int c;

	if (!vals)
		return 0;
	if (!bpf_map_lookup_elem(bpf_map__fd(b->skel->maps.counters), &key, vals))
		for (c = 0; c < b->ncpus; c++)
			sum += vals[c];
	free(vals);
	return sum;
}

size_t kp_ut_bpf_ringbuf_bytes(const struct kp_ut_bpf *b)
{
	return b->ringbuf_bytes;
}

void kp_ut_bpf_close(struct kp_ut_bpf *b)
{
	size_t i;

	if (!b)
		return;
	for (i = 0; i < b->nlinks; i++)
		bpf_link__destroy(b->links[i]);
	free(b->links);
	for (i = 0; i < b->ncopies; i++)
		utrace_bpf__destroy(b->copies[i]);
	free(b->copies);
	ring_buffer__free(b->rb);
	utrace_bpf__destroy(b->skel);
	free(b);
}
