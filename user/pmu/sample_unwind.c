/*
 * sample_unwind.c - sampling's user stacks unwound from .eh_frame tables (KperfPmuOpts
 * callGraph KPERF_CALL_GRAPH_DWARF, the default with callStack): the unwind maps of the
 * sampling object sized before its load, the target processes' tables loaded after it
 * (user/unwind), the processes the BPF side asks for (new, exec'ed, new code mapped) loaded at
 * each drain, and what could not be unwound reported.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "core/core.h"
#include "kperf/pcerrc.h"
#include "stack/stack.h"
#include "runtime/python.h"
#include "unwind/unwind.h"
#include "pmu.h"
#include "sample.h"
#include "stack_capture.h"

#define ROWS_CAP (1u << 20) /* 16 MiB of rows: libc, python3 and libstdc++ take 127 221 */
#define PROCS_TARGETED 1024 /* the targets and the processes they start */
#define PROCS_ALL 4096
#define POLL_MS 10
#define PY_THREADS 8192 /* threads whose PyThreadState is remembered */
#define PY_CODES 16384 /* code objects copied between two drains */

bool kp_sampling_unwinds(const struct kp_pmu *p)
{
	return p->attr.callStack && !p->attr.excludeUser &&
	       p->opts.callGraph == KPERF_CALL_GRAPH_DWARF;
}

static struct bpf_map *map_of(struct bpf_object *obj, const char *name)
{
	return bpf_object__find_map_by_name(obj, name);
}

int kp_sample_unwind_prepare(struct kp_pmu *p, struct bpf_object *obj)
{
	bool on = kp_sampling_unwinds(p);
	struct bpf_map *rows = map_of(obj, "kp_uw_rows"), *procs = map_of(obj, "kp_uw_procs");
	struct bpf_program *exec = bpf_object__find_program_by_name(obj, "kp_uw_exec");
	struct bpf_program *mmap_kprobe = bpf_object__find_program_by_name(obj, "kp_uw_mmap");
	struct bpf_program *mmap_sys = bpf_object__find_program_by_name(obj, "kp_uw_mmap_sys");
	bool kprobes = access("/sys/bus/event_source/devices/kprobe/type", F_OK) == 0 ||
		       access("/sys/kernel/tracing/kprobe_events", F_OK) == 0;

	if (!rows || !procs || !exec)
		return kp_fail(LIBPERF_ERR_BPF_ACT_FAILED, -ENOENT,
			       "the sampling BPF object has no unwinder");
	if (p->opts.callGraph > KPERF_CALL_GRAPH_FP)
		return kp_fail(
			KPERF_ERR_INVALID_ATTR, -EINVAL,
			"callGraph is KPERF_CALL_GRAPH_DWARF (0) or KPERF_CALL_GRAPH_FP (1), "
			"not %u",
			p->opts.callGraph);
	bpf_map__set_max_entries(rows, on ? ROWS_CAP : 1);
	if (on)
		bpf_map__set_map_flags(rows, bpf_map__map_flags(rows) | BPF_F_MMAPABLE);
	bpf_map__set_max_entries(procs, on ? (p->npids > 0 ? PROCS_TARGETED : PROCS_ALL) : 1);
	on = on && p->opts.pythonFrames != KPERF_PY_FRAMES_OFF;
	if (p->opts.pythonFrames > KPERF_PY_FRAMES_OFF)
		return kp_fail(
			KPERF_ERR_INVALID_ATTR, -EINVAL,
			"pythonFrames is KPERF_PY_FRAMES_ON (0), _KEEP_INTERP (1) or _OFF (2), "
			"not %u",
			p->opts.pythonFrames);
	bpf_map__set_max_entries(map_of(obj, "kp_py_procs"),
				 on ? (p->npids > 0 ? PROCS_TARGETED : PROCS_ALL) : 1);
	bpf_map__set_max_entries(map_of(obj, "kp_py_threads"), on ? PY_THREADS : 1);
	bpf_map__set_max_entries(map_of(obj, "kp_py_codes"), on ? PY_CODES : 1);
	bpf_program__set_autoload(exec, on);
	/* new code mapped: a kprobe where the kernel has kprobes, else the mmap system call's
	 * exit (a kernel built without kprobes) */
	if (mmap_kprobe && mmap_sys) {
		bpf_program__set_autoload(mmap_kprobe, on && kprobes);
		bpf_program__set_autoload(mmap_sys, on && !kprobes);
	}
	return 0;
}

static void py_on_pid(void *ctx, int pid)
{
	kp_py_add_pid(ctx, pid);
}

/* the processes the BPF side asks for, every POLL_MS: a command just exec'ed gets its tables
 * within milliseconds, not at the next drain a second later */
static void *poller_main(void *arg)
{
	struct kp_sampling *s = arg;
	struct timespec ts = { 0, POLL_MS * 1000000L };

	while (!atomic_load(&s->uw_stop)) {
		pthread_mutex_lock(&s->uw_lock);
		kp_uw_loader_poll(s->uw);
		pthread_mutex_unlock(&s->uw_lock);
		nanosleep(&ts, NULL);
	}
	return NULL;
}

int kp_sample_unwind_start(struct kp_pmu *p, struct bpf_object *obj)
{
	struct kp_sampling *s = p->sampling;
	struct bpf_program *mmap_prog;
	int i, err;

	if (!kp_sampling_unwinds(p))
		return 0;
	s->uw = kp_uw_loader_new(bpf_map__fd(map_of(obj, "kp_uw_rows")), ROWS_CAP,
				 bpf_map__fd(map_of(obj, "kp_uw_procs")),
				 bpf_map__fd(map_of(obj, "kp_uw_want")),
				 bpf_map__fd(map_of(obj, "kp_uw_counters")));
	if (!s->uw)
		return kp_fail(LIBPERF_ERR_FAIL_MMAP, -errno,
			       "cannot map the unwind table array: %s", strerror(errno));
	if (p->opts.pythonFrames != KPERF_PY_FRAMES_OFF) {
		s->py = kp_py_new(bpf_map__fd(map_of(obj, "kp_py_procs")),
				  bpf_map__fd(map_of(obj, "kp_py_codes")),
				  bpf_map__fd(map_of(obj, "kp_py_counters")));
		if (!s->py)
			return kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
		kp_uw_loader_on_pid(s->uw, py_on_pid, s->py);
	}
	err = kp_tracefs_need("unwinding the user stacks of processes", "sched:sched_process_exec");
	if (err)
		return err;
	s->uw_exec_link = bpf_program__attach(bpf_object__find_program_by_name(obj, "kp_uw_exec"));
	if (!s->uw_exec_link)
		return kp_fail(LIBPERF_ERR_BPF_ACT_FAILED, -errno,
			       "cannot follow the processes' execs: %s", strerror(errno));
	/* new code mapped; where neither attaches, the first sample in it asks (counted) */
	mmap_prog = bpf_object__find_program_by_name(obj, "kp_uw_mmap");
	if (!bpf_program__autoload(mmap_prog))
		mmap_prog = bpf_object__find_program_by_name(obj, "kp_uw_mmap_sys");
	s->uw_mmap_link = bpf_program__attach(mmap_prog);
	/* the targets now; their children and anything system-wide when first sampled */
	for (i = 0; i < p->npids; i++)
		kp_uw_loader_add_pid(s->uw, p->pids[i]);
	pthread_mutex_init(&s->uw_lock, NULL);
	atomic_store(&s->uw_stop, false);
	err = pthread_create(&s->uw_poller, NULL, poller_main, s);
	if (err)
		return kp_fail(UNKNOWN_ERROR, -err, "cannot start the unwind table loader: %s",
			       strerror(err));
	s->uw_poller_on = true;
	return 0;
}

void kp_sample_unwind_poll(struct kp_pmu *p)
{
	struct kp_sampling *s = p->sampling;

	if (!s->uw)
		return;
	pthread_mutex_lock(&s->uw_lock);
	kp_uw_loader_poll(s->uw);
	pthread_mutex_unlock(&s->uw_lock);
}

void kp_sample_unwind_close(struct kp_sampling *s)
{
	if (s->uw_poller_on) {
		atomic_store(&s->uw_stop, true);
		pthread_join(s->uw_poller, NULL);
		s->uw_poller_on = false;
	}
	bpf_link__destroy(s->uw_exec_link);
	s->uw_exec_link = NULL;
	bpf_link__destroy(s->uw_mmap_link);
	s->uw_mmap_link = NULL;
	kp_uw_loader_free(s->uw);
	s->uw = NULL;
	kp_py_free(s->py);
	s->py = NULL;
}

void kp_sample_unwind_py_codes(struct kp_pmu *p)
{
	struct kp_sampling *s = p->sampling;

	if (!s->py)
		return;
	pthread_mutex_lock(&s->uw_lock);
	kp_py_drain_codes(s->py);
	pthread_mutex_unlock(&s->uw_lock);
}

/* what could not be unwound from tables, once per new loss */
void kp_sample_unwind_warn(struct kp_pmu *p)
{
	struct kp_sampling *s = p->sampling;
	struct kp_uw_load_stats st;
	const char *note;
	char py_note[600] = "";
	uint64_t late;

	if (!s->uw)
		return;
	pthread_mutex_lock(&s->uw_lock);
	kp_uw_loader_stats(s->uw, &st);
	note = s->py ? kp_py_next_note(s->py) : NULL;
	if (note)
		snprintf(py_note, sizeof(py_note), "%s", note);
	pthread_mutex_unlock(&s->uw_lock);
	late = st.counters[KP_UW_CNT_NO_PROC] + st.counters[KP_UW_CNT_UNKNOWN_MAP];
	if (late > s->uw_late_warned) {
		kp_warn(KPERF_WARN_SYM_INCOMPLETE,
			"%llu user stacks were taken before their process's unwind tables were "
			"loaded (%llu: a process not loaded yet, by frame pointers; %llu: stopped at "
			"code mapped since, their frames so far kept)",
			(unsigned long long)(late - s->uw_late_warned),
			(unsigned long long)st.counters[KP_UW_CNT_NO_PROC],
			(unsigned long long)st.counters[KP_UW_CNT_UNKNOWN_MAP]);
		s->uw_late_warned = late;
	}
	if (st.tables_full > s->uw_full_warned) {
		kp_warn(KPERF_WARN_SYM_INCOMPLETE,
			"%llu unwind tables did not fit in the %llu rows of the table array: their "
			"code unwinds by frame pointers",
			(unsigned long long)(st.tables_full - s->uw_full_warned),
			(unsigned long long)st.rows_cap);
		s->uw_full_warned = st.tables_full;
	}
	/* last: the reason a Python process has native frames only, said once */
	if (py_note[0])
		kp_warn(KPERF_WARN_SYM_INCOMPLETE, "%s", py_note);
}
