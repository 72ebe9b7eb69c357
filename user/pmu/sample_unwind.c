/*
 * sample_unwind.c - sampling's user stacks unwound from .eh_frame tables (KperfPmuOpts
 * callGraph KPERF_CALL_GRAPH_DWARF, the default with callStack): the unwind maps of the
 * sampling object sized before its load, the target processes' tables loaded after it
 * (user/unwind), the processes the BPF side asks for (new, exec'ed, new code mapped) loaded by
 * the owner's thread (unwind/owner.c) and at each drain, a launched command held at its exec
 * and at its entry point while its tables load, and what could not be unwound reported.
 * CPython processes (KperfPmuOpts.pythonFrames): each loaded process is looked at by the
 * Python frame reader (runtime/python.h), whose code objects are drained with the samples.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "core/core.h"
#include "kperf/pcerrc.h"
#include "stack/stack.h"
#include "runtime/python.h"
#include "sym/sym.h"
#include "unwind/unwind.h"
#include "pmu.h"
#include "sample.h"
#include "stack_capture.h"

#define PROCS_TARGETED 1024 /* as unwind/owner.c sizes kp_uw_procs */
#define PROCS_ALL 4096
#define PY_THREADS 8192 /* threads whose PyThreadState is remembered */
#define PY_CODES 16384 /* code objects copied between two drains */

bool kp_sampling_unwinds(const struct kp_pmu *p)
{
	/* offCpuOnly: no sample to unwind (the blocked time's stacks are off-CPU's own) */
	return p->attr.callStack && !p->attr.excludeUser && !p->opts.offCpuOnly &&
	       p->opts.callGraph == KPERF_CALL_GRAPH_DWARF;
}

bool kp_sample_py_frames(const struct kp_pmu *p)
{
	return kp_sampling_unwinds(p) && p->opts.pythonFrames != KPERF_PY_FRAMES_OFF &&
	       kp_py_kernel_reads();
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
	struct bpf_program *exit_prog = bpf_object__find_program_by_name(obj, "kp_uw_exit");
	struct bpf_program *fork = bpf_object__find_program_by_name(obj, "kp_uw_fork");
	struct bpf_program *mmap_kprobe = bpf_object__find_program_by_name(obj, "kp_uw_mmap");
	struct bpf_program *mmap_sys = bpf_object__find_program_by_name(obj, "kp_uw_mmap_sys");
	bool kprobes = access("/sys/bus/event_source/devices/kprobe/type", F_OK) == 0 ||
		       access("/sys/kernel/tracing/kprobe_events", F_OK) == 0;

	if (!rows || !procs || !exec || !exit_prog || !fork)
		return kp_fail(LIBPERF_ERR_BPF_ACT_FAILED, -ENOENT,
			       "the sampling BPF object has no unwinder");
	if (p->opts.callGraph > KPERF_CALL_GRAPH_FP)
		return kp_fail(
			KPERF_ERR_INVALID_ATTR, -EINVAL,
			"callGraph is KPERF_CALL_GRAPH_DWARF (0) or KPERF_CALL_GRAPH_FP (1), "
			"not %u",
			p->opts.callGraph);
	if (p->opts.pythonFrames > KPERF_PY_FRAMES_OFF)
		return kp_fail(
			KPERF_ERR_INVALID_ATTR, -EINVAL,
			"pythonFrames is KPERF_PY_FRAMES_ON (0), _KEEP_INTERP (1) or _OFF (2), "
			"not %u",
			p->opts.pythonFrames);
	kp_uw_owner_size(obj, on, (unsigned)p->npids);
	on = kp_sample_py_frames(p);
	bpf_map__set_max_entries(map_of(obj, "kp_py_procs"),
				 on ? (p->npids > 0 ? PROCS_TARGETED : PROCS_ALL) : 1);
	bpf_map__set_max_entries(map_of(obj, "kp_py_threads"), on ? PY_THREADS : 1);
	bpf_map__set_max_entries(map_of(obj, "kp_py_codes"), on ? PY_CODES : 1);
	on = kp_sampling_unwinds(p);
	bpf_program__set_autoload(exec, on);
	bpf_program__set_autoload(exit_prog, on);
	/* a launched command's children are held at their exec as it is */
	bpf_program__set_autoload(fork, on && p->attr.enableOnExec && p->npids > 0);
	/* new code mapped: a kprobe where the kernel has kprobes, else the mmap system call's
	 * exit (a kernel built without kprobes). Both are loaded where kprobes exist: the
	 * kprobe's attach may still be refused (5.10 arm64: "Could not probe notrace function
	 * perf_event_mmap"), and then the system call's exit stands in */
	if (mmap_kprobe && mmap_sys) {
		bpf_program__set_autoload(mmap_kprobe, on && kprobes);
		bpf_program__set_autoload(mmap_sys, on);
	}
	return 0;
}

/* each process whose tables were just loaded, alive: the symbolizer notes where its root is
 * (a chroot'ed interpreter exits before its samples are resolved), the Python reader looks */
static void on_pid(void *ctx, int pid)
{
	kp_sym_note_root(pid);
	if (ctx)
		kp_py_add_pid(ctx, pid);
}

int kp_sample_unwind_start(struct kp_pmu *p, struct bpf_object *obj)
{
	struct kp_sampling *s = p->sampling;
	struct bpf_program *mmap_prog;
	int err;

	if (!kp_sampling_unwinds(p))
		return 0;
	if (p->opts.pythonFrames != KPERF_PY_FRAMES_OFF && !kp_sample_py_frames(p))
		kp_warn(KPERF_WARN_SYM_INCOMPLETE,
			"Python frames are read on Linux 6.12 and later (the verifiers of 5.10 and "
			"6.1 refuse the frame reader; %s is not proven yet): CPython processes get "
			"native frames only",
			kp_kernel_release());
	if (kp_sample_py_frames(p)) {
		s->py = kp_py_new(bpf_map__fd(map_of(obj, "kp_py_procs")),
				  bpf_map__fd(map_of(obj, "kp_py_codes")),
				  bpf_map__fd(map_of(obj, "kp_py_counters")));
		if (!s->py)
			return kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
	}
	err = kp_tracefs_need("unwinding the user stacks of processes", "sched:sched_process_exec");
	if (err)
		return err;
	s->uw_exec_link = bpf_program__attach(bpf_object__find_program_by_name(obj, "kp_uw_exec"));
	if (!s->uw_exec_link)
		return kp_fail(LIBPERF_ERR_BPF_ACT_FAILED, -errno,
			       "cannot follow the processes' execs: %s", strerror(errno));
	s->uw_exit_link = bpf_program__attach(bpf_object__find_program_by_name(obj, "kp_uw_exit"));
	if (!s->uw_exit_link)
		return kp_fail(LIBPERF_ERR_BPF_ACT_FAILED, -errno,
			       "cannot follow the processes' exits: %s", strerror(errno));
	if (bpf_program__autoload(bpf_object__find_program_by_name(obj, "kp_uw_fork"))) {
		s->uw_fork_link =
			bpf_program__attach(bpf_object__find_program_by_name(obj, "kp_uw_fork"));
		if (!s->uw_fork_link)
			return kp_fail(LIBPERF_ERR_BPF_ACT_FAILED, -errno,
				       "cannot follow the held command's forks: %s",
				       strerror(errno));
	}
	/* new code mapped: the kprobe, else the mmap system call's exit; where neither
	 * attaches, the first sample in the new code asks for its table (counted) */
	mmap_prog = bpf_object__find_program_by_name(obj, "kp_uw_mmap");
	if (mmap_prog && bpf_program__autoload(mmap_prog))
		s->uw_mmap_link = bpf_program__attach(mmap_prog);
	mmap_prog = bpf_object__find_program_by_name(obj, "kp_uw_mmap_sys");
	if (!s->uw_mmap_link && mmap_prog && bpf_program__autoload(mmap_prog))
		s->uw_mmap_link = bpf_program__attach(mmap_prog);
	/* the targets now (a launched command: held at its exec and its entry point while its
	 * tables load); their children and anything system-wide when first sampled */
	err = kp_uw_owner_start_hooked(obj, p->pids, (unsigned)p->npids, p->attr.enableOnExec,
				       on_pid, s->py, &s->uw);
	if (err)
		return kp_fail(LIBPERF_ERR_FAIL_MMAP, err, "cannot load the unwind tables: %s",
			       strerror(-err));
	return 0;
}

void kp_sample_unwind_poll(struct kp_pmu *p)
{
	struct kp_sampling *s = p->sampling;

	kp_uw_owner_poll(s->uw);
}

void kp_sample_unwind_rearm(struct kp_pmu *p)
{
	kp_uw_owner_reclaim(p->sampling->uw);
}

void kp_sample_unwind_close(struct kp_sampling *s)
{
	kp_uw_owner_stop(s->uw);
	s->uw = NULL;
	bpf_link__destroy(s->uw_exec_link);
	s->uw_exec_link = NULL;
	bpf_link__destroy(s->uw_exit_link);
	s->uw_exit_link = NULL;
	bpf_link__destroy(s->uw_mmap_link);
	s->uw_mmap_link = NULL;
	bpf_link__destroy(s->uw_fork_link);
	s->uw_fork_link = NULL;
	kp_py_free(s->py); /* after the owner's thread, which called into it */
	s->py = NULL;
}

static void drain_codes(void *py)
{
	kp_py_drain_codes(py);
}

void kp_sample_unwind_py_codes(struct kp_pmu *p)
{
	struct kp_sampling *s = p->sampling;

	if (s->py)
		kp_uw_owner_locked(s->uw, drain_codes, s->py);
}

struct py_note {
	struct kp_py *py;
	char text[600];
};

static void take_note(void *arg)
{
	struct py_note *n = arg;
	const char *note = kp_py_next_note(n->py);

	if (note)
		snprintf(n->text, sizeof(n->text), "%s", note);
}

/* what could not be unwound from tables, once per new loss */
void kp_sample_unwind_warn(struct kp_pmu *p)
{
	struct kp_sampling *s = p->sampling;
	struct kp_uw_load_stats st;
	struct py_note note = { .py = s->py };
	uint64_t late;

	if (!s->uw)
		return;
	kp_uw_owner_stats(s->uw, &st);
	if (s->py)
		kp_uw_owner_locked(s->uw, take_note, &note);
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
	if (note.text[0])
		kp_warn(KPERF_WARN_SYM_INCOMPLETE, "%s", note.text);
}

void kp_sample_unwind_stats(struct kp_pmu *p, struct kp_uw_load_stats *s)
{
	struct kp_uw_load_stats st;

	if (!p->sampling || !p->sampling->uw)
		return;
	kp_uw_owner_stats(p->sampling->uw, &st);
	kp_uw_load_stats_add(s, &st);
}
