/*
 * check.c - KperfTimelineCheck: whether this machine's kernel has what each source of a
 * timeline needs, asked before anything is loaded, so that a caller turning on "every
 * source" (kperf.profiler's profile_all) can leave out those the machine lacks, each with the
 * library's code and a sentence, instead of failing the whole open.
 *
 * The requirements are those the sources' owners check when they open (the ring buffer of
 * every source's records, the uprobe PMU of the markers and of the
 * allocator probes, the kernel BTF the CO-RE sampling and memory programs are built against,
 * perf events, tracefs), said the same way. What is not checked here: whether the caller may
 * load BPF (privileges, lockdown), which the open says.
 */
#include <errno.h>
#include <unistd.h>

#include "core/core.h"
#include "kperf/pcerrc.h"
#include "timeline.h"

#define UPROBE_PMU_TYPE "/sys/bus/event_source/devices/uprobe/type"

static int need_ringbuf(const char *source)
{
	if (kp_have(KP_FEAT_RINGBUF))
		return 0;
	return kp_fail(LIBPERF_ERR_KERNEL_NOT_SUPPORT, -ENOTSUP,
		       "%s: kernel %s has no %s (%s): this source needs Linux 5.8 or later", source,
		       kp_kernel_release(), kp_feature_name(KP_FEAT_RINGBUF),
		       kp_feature_since(KP_FEAT_RINGBUF));
}

static int need_uprobe_pmu(const char *source)
{
	long type;

	if (!kp_read_long(UPROBE_PMU_TYPE, &type))
		return 0;
	kp_clear_error();
	return kp_fail(LIBPERF_ERR_KERNEL_NOT_SUPPORT, -ENOTSUP,
		       "%s: this kernel has no uprobe PMU (%s is missing): kperf-bpf places "
		       "uprobes through it and never through tracefs",
		       source, UPROBE_PMU_TYPE);
}

static int need_btf(const char *source)
{
	if (kp_have(KP_FEAT_BTF))
		return 0;
	return kp_fail(LIBPERF_ERR_KERNEL_NOT_SUPPORT, -ENOTSUP,
		       "%s: kernel %s has no %s (%s; /sys/kernel/btf/vmlinux, or a file named by "
		       "KPERF_BPF_BTF): its programs are built against the kernel's types",
		       source, kp_kernel_release(), kp_feature_name(KP_FEAT_BTF),
		       kp_feature_since(KP_FEAT_BTF));
}

static int need_perf_events(const char *source)
{
	if (access("/proc/sys/kernel/perf_event_paranoid", F_OK) == 0)
		return 0;
	return kp_fail(LIBPERF_ERR_KERNEL_NOT_SUPPORT, -ENOTSUP,
		       "%s: this kernel has no perf events (CONFIG_PERF_EVENTS: "
		       "/proc/sys/kernel/perf_event_paranoid is missing)",
		       source);
}

static int need_tracefs(const char *source)
{
	if (kp_tracefs())
		return 0;
	return kp_fail(LIBPERF_ERR_KERNEL_NOT_SUPPORT, -ENOTSUP,
		       "%s: tracefs is not mounted and cannot be: the allocator's processes are "
		       "followed through its tracepoints",
		       source);
}

static int check_sources(const struct KperfTimelineOpts *o)
{
	int err = 0;

	if (!o->noSyscalls)
		err = need_ringbuf("syscalls");
	if (!err && !o->noMarkers)
		err = need_ringbuf("markers");
	if (!err && !o->noMarkers)
		err = need_uprobe_pmu("markers");
	if (!err && !o->noSamples)
		err = need_ringbuf("CPU samples"); /* the per-sample records */
	if (!err && !o->noSamples)
		err = need_perf_events("CPU samples");
	if (!err && !o->noSamples)
		err = need_btf("CPU samples");
	if (!err && o->offCpu)
		err = need_ringbuf("off-CPU slices");
	if (!err && o->memory)
		err = need_ringbuf("memory");
	if (!err && o->memory)
		err = need_uprobe_pmu("memory");
	if (!err && o->memory)
		err = need_btf("memory");
	if (!err && o->memory)
		err = need_tracefs("memory");
	return err;
}

int KperfTimelineCheck(const struct KperfTimelineOpts *opts)
{
	struct KperfTimelineOpts o;
	int err;

	kp_clear();
	err = kp_opts_copy(&o, sizeof(o), opts, opts ? opts->sz : 0, "KperfTimelineOpts");
	if (!err)
		err = check_sources(&o);
	return err ? kp_public_fail(err) : SUCCESS;
}
