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
#include <string.h>

#include "kperf/kperf.h"

enum kp_format {
	KP_FORMAT_TABLE,
	KP_FORMAT_JSON,
	KP_FORMAT_CSV,
};

/* ---- where reports go (outfile.c) ---- */

/*
 * An output: standard output (<path> NULL) or a file that is written under a temporary name
 * in its directory and renamed over <path> by kp_out_commit, so it appears complete or not at
 * all. A symlink at <path> in a sticky world-writable directory is refused; the file is
 * created 0644 at most. Every write through kp_out_file() is watched: the first failure is
 * kept with its errno. Each returns 0 or a negative errno with the error recorded ("cannot
 * write FILE: No space left on device").
 */
struct kp_out;
int kp_out_open(const char *path, struct kp_out **out);
FILE *kp_out_file(const struct kp_out *o);
/* "standard output" or the path as given */
const char *kp_out_name(const struct kp_out *o);
/* Flush; the first write error since the open, if any. */
int kp_out_check(struct kp_out *o);
/* Flush, sync and close; a file is renamed into place. Frees <o> (also on error, removing
 * the temporary file). NULL: nothing to do. */
int kp_out_commit(struct kp_out *o);
/* Close without publishing: a file's temporary is removed. Frees <o>; NULL is ignored. */
void kp_out_discard(struct kp_out *o);

/* Do two summary rows belong to the same process (pid 0: the same kind of row, by comm)? */
static inline bool kp_same_process(const struct PmuTraceSummary *a, const struct PmuTraceSummary *b)
{
	return a->pid == b->pid && (a->pid || !strcmp(a->comm, b->comm));
}

/* Parse "table", "json", "csv"; -1 when unknown. */
int kp_format_parse(const char *s);

/* What a syscall report says about the collection itself. */
struct kp_trace_meta {
	double duration_s; /* tracing time */
	double attach_ms; /* from the command's start to the programs attached */
	uint64_t dropped; /* per-call records lost */
	uint64_t not_counted; /* calls missing from the summary (start time not stored) */
	/* calls counted without their process, in the pid 0 rows (summary map full) */
	uint64_t overflow;
	/* calls whose row the kernel could not allocate at that moment (-ENOMEM, the map not
	 * full): in their process's row, but for no_memory of them, in the pid 0 rows of
	 * KPERF_TRACE_NOMEM_COMM (the ring that brings them to their rows was full) */
	uint64_t alloc_failed;
	uint64_t no_memory;
	bool fallback; /* raw_syscalls fallback in use */
	bool interval; /* an interval report (-i), not the final one */
};

/*
 * Estimate the <q> quantile (0..1) of a log2 latency histogram: find the slot that holds
 * it and interpolate linearly inside [2^i, 2^(i+1)) narrowed to [min, max].
 */
uint64_t kp_hist_quantile(const uint64_t *hist, int slots, uint64_t calls, double q, uint64_t min,
			  uint64_t max);

/* The summary rows (sorted by pid, then total time, as PmuTraceReadSummary returns them). */
void kp_report_syscalls(FILE *f, enum kp_format fmt, const struct PmuTraceSummary *s, int n,
			const struct kp_trace_meta *meta, bool hist);

/* One per-call record: a line (table), an object of the "events" array (json, with a
 * leading comma when !first), or a CSV row. */
void kp_report_event(FILE *f, enum kp_format fmt, const struct PmuTraceData *d,
		     const struct KperfTraceDataExt *x, int64_t t0_ns, bool first);
/* The CSV header line, once before any row (events, intervals and the summary share it). */
void kp_report_csv_header(FILE *f);
/* The same with a last column, "stack", for trace --stack. */
void kp_report_csv_header_stack(FILE *f);
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

/* ---- counters (count_report.c) ---- */

struct kp_count_row {
	const char *evt;
	uint64_t count;
	double running; /* fraction of the time the counter ran (scaled when < 1), -1 never */
	bool supported; /* false: "<not supported>" on this machine */
};

struct kp_count_meta {
	const char *target; /* "process 1234", "'cmd args'", "system wide", "CPUs 0-1" */
	double elapsed_s; /* since the counters started */
	double interval_t_s; /* > 0: an interval report at this time */
};

/* A perf-stat-like table (task-clock in msec with CPUs utilized, scaling percentage
 * when multiplexed), JSON, or CSV. */
void kp_report_counts(FILE *f, enum kp_format fmt, const struct kp_count_row *rows, int n,
		      const struct kp_count_meta *meta);

/* ---- syscalls by stack (stack_report.c) ---- */

/* The stack of a per-call record, after its line: table, its user frames one per line (after
 * the record's line); json, a ,"stack":[frames] member (before the record's closing brace);
 * csv, a last cell with the user frames root first, separated by ';'. */
void kp_report_event_stack(FILE *f, enum kp_format fmt, const struct Stack *s);
/* The summary by stack <ss> (sorted by total time): table, for each (process, syscall) row of
 * <s> its <top> stacks; json, a ,"stacks":[...] member with every stack's frames (kernel ones
 * marked); csv, a row of kind "stack" per stack, its frames in the last cell. */
void kp_report_syscall_stacks(FILE *f, enum kp_format fmt, const struct PmuTraceSummary *s, int n,
			      const struct KperfTraceStackSummary *ss, int nss, int top);
/* Folded lines "comm;root;...;leaf;syscall_[k] total_ns", and the flame graph of the same;
 * 0 or a negative errno. */
int kp_report_stacks_folded(FILE *f, const struct KperfTraceStackSummary *ss, int nss);
int kp_report_stacks_svg(FILE *f, const struct KperfTraceStackSummary *ss, int nss,
			 double duration_s);

/* ---- profiles: sampled PmuData with stacks (profile.c) ---- */

/* What a profile's values are: sample counts, or times in ns (the periods: off-CPU and wall
 * profiles, where samples of cpu-clock and blocked time share the unit) */
enum kp_weight {
	KP_WEIGHT_SAMPLES,
	KP_WEIGHT_TIME,
};

/* the records of time off the CPU in a profile (libkperf's blockedSample names them so) */
#define KP_BLOCKED_EVT "context-switches"

struct kp_profile_meta {
	const char *event; /* the sampled event: "cpu-clock" */
	double duration_s; /* collection time */
	uint64_t start_ns; /* wall clock of the start (pprof time_nanos), 0 if unknown */
	enum kp_weight weight; /* folded, svg, hottest functions: what the values are */
	bool mark_blocked; /* folded, svg: blocked records end in an "[off-cpu]" frame */
	const char *title; /* svg: the graph's title (NULL: from the event) */
};

/* The value of record <d> in a profile weighted by <w>. */
static inline uint64_t kp_profile_value(const struct PmuData *d, enum kp_weight w)
{
	return w == KP_WEIGHT_TIME ? d->period : d->count;
}

/* A frame's name as the reports print it: the symbol, or module+offset / the address when
 * the symbol is unknown; kernel frames end in "_[k]" in folded output. */
void kp_frame_label(const struct Symbol *s, char *buf, size_t size);

/* Folded stacks (one line per distinct stack: "comm;root;...;leaf count"), the input of
 * flamegraph.pl and speedscope. Returns the number of lines. */
int kp_export_folded(FILE *f, const struct PmuData *d, int n);
/* The same with <m>'s weight (the line ends in the value) and blocked marks. */
int kp_export_folded_by(FILE *f, const struct PmuData *d, int n, const struct kp_profile_meta *m);
/* An interactive flame graph (flame.c): each record's stack above its comm, weighted as <m>
 * says. Returns 0 or a negative errno (the error recorded; a failed write of <f> is for its
 * owner to find). */
int kp_export_svg(FILE *f, const struct PmuData *d, int n, const struct kp_profile_meta *m);
/* pprof: a gzipped profile.proto written to <f>, readable by `go tool pprof`. Returns 0 or
 * a negative errno (the error recorded; a failed write of <f> is for its owner to find). */
int kp_export_pprof(FILE *f, const struct PmuData *d, int n, const struct kp_profile_meta *m);
/* JSON: { "event", "duration_s", "samples": [ { "pid", "tid", "cpu", "comm", "count",
 * "period", "stack": [ { "addr", "symbol", "module", "offset", "file", "line" } ] } ] } */
int kp_export_profile_json(FILE *f, const struct PmuData *d, int n,
			   const struct kp_profile_meta *m);

/* The hottest functions: self samples (leaf frame) and total samples (anywhere on the
 * stack, once per sample even when recursive), like `perf report --children`. */
struct kp_hot_fn {
	const char *name; /* the base name ("name (inlined)" for an inline frame), or
			   * module+offset (owned by the list) */
	const char *module; /* points into the PmuData */
	const char *file; /* source file of its hottest self address, "" when unknown */
	unsigned line;
	uint64_t self, total;
};

struct kp_hot_list {
	struct kp_hot_fn *fns; /* sorted by self, then total */
	size_t n;
	uint64_t samples; /* all samples of the profile (its time in ns: KP_WEIGHT_TIME) */
	enum kp_weight weight;
	char **labels; /* the names and map keys built (freed with the list) */
	size_t nlabels;
};

/* Valid while <d> is. Returns 0 or a negative errno. */
int kp_hot_functions(const struct PmuData *d, int n, struct kp_hot_list *out);
/* The same with the values weighted by <w> (l->weight says which: the report prints times) */
int kp_hot_functions_by(const struct PmuData *d, int n, enum kp_weight w, struct kp_hot_list *out);
void kp_hot_list_free(struct kp_hot_list *l);
/* The <top> lines of a `perf report`-like summary. */
void kp_report_hottest(FILE *f, const struct kp_hot_list *l, int top);

/* ---- flame graphs (flame.c) ---- */

enum kp_frame_kind {
	KP_FRAME_ROOT, /* "all" */
	KP_FRAME_PROCESS, /* a comm */
	KP_FRAME_USER,
	KP_FRAME_KERNEL,
	KP_FRAME_BLOCKED, /* time off the cpu ("[off-cpu]") */
	KP_FRAME_INLINE, /* a user function inlined into the frame below it */
};

struct kp_flame_frame {
	const char *name;
	enum kp_frame_kind kind;
};

struct kp_flame_meta {
	const char *title;
	const char *subtitle;
	const char *unit; /* of the values: "samples", "calls", or "ns" (shown as ms) */
};

struct kp_flame;

/* An empty graph (NULL when out of memory, the error recorded). */
struct kp_flame *kp_flame_new(void);
/* Add <value> along <frames> (root first, n of them); <blocked>: it is time off the cpu. */
int kp_flame_add(struct kp_flame *f, const struct kp_flame_frame *frames, unsigned n,
		 uint64_t value, bool blocked);
uint64_t kp_flame_total(const struct kp_flame *f);
/* The SVG; 0 or -EIO when <out> failed. */
int kp_flame_svg(FILE *out, const struct kp_flame *f, const struct kp_flame_meta *m);
void kp_flame_free(struct kp_flame *f);

#endif
