/*
 * syscall_unwind.c - syscall stacks unwound from .eh_frame tables (KperfTraceOpts.callGraph
 * KPERF_CALL_GRAPH_DWARF, the default with callStack), as sampling's are (pmu/
 * sample_unwind.c): the unwinder's maps of the syscall object sized before its load, the
 * targets' tables loaded after it (user/unwind), and the processes the BPF side asks for (new,
 * exec'ed, new code mapped) loaded every 10 ms by a thread of its own, so that a command just
 * exec'ed gets its tables within milliseconds. Stacks taken before that are frame pointers'.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "core/core.h"
#include "kperf/pcerrc.h"
#include "unwind/unwind.h"
#include "trace.h"

#define ROWS_CAP (1u << 20) /* 16 MiB of rows: libc, python3 and libstdc++ take 127 221 */
#define PROCS_TARGETED 1024 /* the targets and the processes they start */
#define PROCS_ALL 4096
#define POLL_MS 10

struct kp_sys_uw {
	struct kp_uw_loader *loader;
	pthread_mutex_t lock;
	pthread_t thread;
	bool thread_on;
	atomic_bool stop;
};

static struct bpf_map *map_of(struct bpf_object *obj, const char *name)
{
	return bpf_object__find_map_by_name(obj, name);
}

int kp_sys_uw_prepare(struct bpf_object *obj, bool on, unsigned ntgids)
{
	struct bpf_map *rows = map_of(obj, "kp_uw_rows"), *procs = map_of(obj, "kp_uw_procs");

	if (!rows || !procs)
		return kp_fail(LIBPERF_ERR_BPF_ACT_FAILED, -ENOENT,
			       "the syscall BPF object has no unwinder");
	bpf_map__set_max_entries(rows, on ? ROWS_CAP : 1);
	if (on)
		bpf_map__set_map_flags(rows, bpf_map__map_flags(rows) | BPF_F_MMAPABLE);
	bpf_map__set_max_entries(procs, on ? (ntgids > 0 ? PROCS_TARGETED : PROCS_ALL) : 1);
	if (on && kp_uw_set_task_layout(obj))
		return kp_fail(LIBPERF_ERR_BPF_ACT_FAILED, -ENOENT,
			       "the syscall BPF object has no kp_uw_task");
	return 0;
}

static void *loader_main(void *arg)
{
	struct kp_sys_uw *u = arg;
	struct timespec ts = { 0, POLL_MS * 1000000L };

	while (!atomic_load(&u->stop)) {
		pthread_mutex_lock(&u->lock);
		kp_uw_loader_poll(u->loader);
		pthread_mutex_unlock(&u->lock);
		nanosleep(&ts, NULL);
	}
	return NULL;
}

int kp_sys_uw_start(struct bpf_object *obj, const int *tgids, unsigned n, struct kp_sys_uw **out)
{
	struct kp_sys_uw *u = calloc(1, sizeof(*u));
	unsigned i;
	int err;

	*out = NULL;
	if (!u)
		return kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
	pthread_mutex_init(&u->lock, NULL);
	u->loader = kp_uw_loader_new(bpf_map__fd(map_of(obj, "kp_uw_rows")), ROWS_CAP,
				     bpf_map__fd(map_of(obj, "kp_uw_procs")),
				     bpf_map__fd(map_of(obj, "kp_uw_want")),
				     bpf_map__fd(map_of(obj, "kp_uw_counters")));
	if (!u->loader) {
		err = kp_fail(LIBPERF_ERR_FAIL_MMAP, -errno,
			      "cannot map the unwind table array: %s", strerror(errno));
		kp_sys_uw_stop(u);
		return err;
	}
	/* the targets now; their children, and anything when tracing every process, when the
	 * BPF side first asks */
	for (i = 0; i < n; i++)
		kp_uw_loader_add_pid(u->loader, tgids[i]);
	atomic_store(&u->stop, false);
	err = pthread_create(&u->thread, NULL, loader_main, u);
	if (err) {
		kp_sys_uw_stop(u);
		return kp_fail(UNKNOWN_ERROR, -err, "cannot start the unwind table loader: %s",
			       strerror(err));
	}
	u->thread_on = true;
	*out = u;
	return 0;
}

void kp_sys_uw_stop(struct kp_sys_uw *u)
{
	if (!u)
		return;
	if (u->thread_on) {
		atomic_store(&u->stop, true);
		pthread_join(u->thread, NULL);
	}
	kp_uw_loader_free(u->loader);
	pthread_mutex_destroy(&u->lock);
	free(u);
}
