/*
 * events.h - event names as users write them, turned into perf_event_attr:
 *   software      cpu-clock, task-clock, page-faults (faults), minor-faults, major-faults,
 *                 context-switches (cs), cpu-migrations (migrations), alignment-faults,
 *                 emulation-faults, dummy
 *   hardware      cycles (cpu-cycles), instructions, cache-references, cache-misses,
 *                 branch-instructions (branches), branch-misses, bus-cycles,
 *                 stalled-cycles-frontend, stalled-cycles-backend, ref-cycles
 *   cache         L1-dcache-load-misses, LLC-loads, dTLB-store-misses, ... (perf's names)
 *   raw           r1a2b (hex config of the core PMU)
 *   PMU           pmu/event/, pmu/event,term=value/ or pmu/term=value,.../ (sysfs events,
 *                 format files and the built-in terms config, config1, config2)
 *   tracepoint    system:event
 * with perf's modifiers after a colon: u (user only), k (kernel only), h, G, H, p (ignored).
 */
#ifndef KPERF_EVENTS_H
#define KPERF_EVENTS_H

#include <stdbool.h>
#include <linux/perf_event.h>

enum kp_event_kind {
	KP_EV_SOFTWARE,
	KP_EV_HARDWARE,
	KP_EV_HW_CACHE,
	KP_EV_RAW,
	KP_EV_PMU,
	KP_EV_TRACEPOINT,
};

struct kp_event {
	char *name; /* as given */
	enum kp_event_kind kind;
	struct perf_event_attr attr; /* type, config*, exclude_* filled; size set */
	char *pmu; /* KP_EV_PMU: the PMU's sysfs name */
	bool uncore; /* the PMU counts per package/die (has a cpumask) */
	int *cpus; /* uncore: the CPUs to open it on (its cpumask) */
	int ncpus;
	char *tp_system; /* KP_EV_TRACEPOINT */
	char *tp_event;
};

/*
 * Parse <name>. Errors, with libkperf's codes: LIBPERF_ERR_INVALID_EVENT (unknown name, bad
 * syntax, with close names suggested; -ENOENT or -EINVAL). A name this machine has no
 * hardware for returns -ENODEV, whatever its code: a pmu/event/ of a PMU that is not here
 * (LIBPERF_ERR_INVALID_EVENT), or, when <probe> is true, an event the kernel refuses to open
 * (the code of kp_perf_errno_code: LIBPERF_ERR_OPEN_INVALID_FILE for ENOENT, the VM without
 * hardware counters).
 */
int kp_event_parse(const char *name, bool probe, struct kp_event *ev);
void kp_event_free(struct kp_event *ev);

/* Try to open <attr> on this process (pid 0, any cpu) and close it: 0, or the -errno. */
int kp_event_probe_attr(const struct perf_event_attr *attr);

/* The tables behind the parser, for event lists: fills *names (static strings, the array
 * malloc'd) and returns the count. */
int kp_event_software_names(const char ***names);
int kp_event_hardware_names(const char ***names);
int kp_event_cache_names(const char ***names);

/* perf_event_open(2) */
int kp_perf_event_open(struct perf_event_attr *attr, pid_t pid, int cpu, int group_fd,
		       unsigned long flags);

#endif
