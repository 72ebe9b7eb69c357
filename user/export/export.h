/*
 * export.h - turning collected data into something to read or to feed other tools:
 * human tables with log2 histograms, JSON (cJSON), CSV; later folded stacks, pprof,
 * Chrome trace events and Prometheus text.
 */
#ifndef KPERF_EXPORT_H
#define KPERF_EXPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "kperf/pmu.h"

enum kp_format {
	KP_FORMAT_TABLE,
	KP_FORMAT_JSON,
	KP_FORMAT_CSV,
};

/* Parse "table", "json", "csv"; -1 when unknown. */
int kp_format_parse(const char *s);

/* What a syscall report says about the collection itself. */
struct kp_trace_meta {
	double duration_s;      /* tracing time */
	double attach_ms;       /* from the command's start to the programs attached */
	uint64_t dropped;       /* per-call records lost */
	uint64_t not_counted;   /* calls missing from the summary (map full) */
	bool fallback;          /* raw_syscalls fallback in use */
	bool interval;          /* an interval report (-i), not the final one */
};

/*
 * Estimate the <q> quantile (0..1) of a log2 latency histogram: find the slot that holds
 * it and interpolate linearly inside [2^i, 2^(i+1)), clamped to [min, max].
 */
uint64_t kp_hist_quantile(const uint64_t *hist, int slots, uint64_t calls, double q,
			  uint64_t min, uint64_t max);

/* The summary rows (sorted by pid, then total time, as PmuTraceReadSummary returns them). */
void kp_report_syscalls(FILE *f, enum kp_format fmt, const struct PmuTraceSummary *s, int n,
			const struct kp_trace_meta *meta, bool hist);

/* One per-call record: a line (table), an object of the "events" array (json, with a
 * leading comma when !first), or a CSV row. */
void kp_report_event(FILE *f, enum kp_format fmt, const struct PmuTraceData *d, int64_t t0_ns,
		     bool first);
/* What goes before the first and after the last event in JSON and CSV. */
void kp_report_events_begin(FILE *f, enum kp_format fmt);
void kp_report_events_end(FILE *f, enum kp_format fmt);

/*
 * The PmuDumpData text format (dump.c describes it): one tab-separated line per record
 * (comm, pid, tid, cpu, period, evt, count), then one line per stack frame, starting with a
 * tab (0xaddr, symbol+0xoffset, module, and file:line when <dwarf>). Returns 0, -EIO when
 * <f> failed, or LIBPERF_ERR_INVALID_PMU_DATA for a stack list that loops.
 */
int kp_dump_write(FILE *f, const struct PmuData *data, unsigned n, bool dwarf);

/* Print a log2 histogram of <slots> counts (slot i: [2^i, 2^(i+1)) <unit>). */
void kp_print_log2_hist(FILE *f, const uint64_t *hist, int slots, const char *unit,
			const char *indent);

#endif
