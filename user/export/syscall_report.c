/*
 * syscall_report.c - the syscall summary as a perf-trace-like table (with optional log2
 * histograms), as JSON or as CSV, and per-call records in the same three forms.
 *
 * JSON layout of a report:
 *   { "duration_s", "attach_ms", "dropped", "not_counted", "overflow", "alloc_failed",
 *     "no_memory", "fallback",
 *     "processes": [ { "pid", "comm", "calls", "errors", "total_ns",
 *        "syscalls": [ { "name", "nr", "calls", "errors", "total_ns", "min_ns", "max_ns",
 *                        "avg_ns", "p50_ns", "p99_ns",
 *                        "hist": [ { "from_ns", "to_ns", "count" } ] } ] } ] }
 * With --events, the document starts with "events": [ {...}, ... ] and the fields above
 * follow, so a long trace streams instead of waiting in memory.
 * CSV: one header, then rows whose first column says what they are: "event", "summary" (the
 * final summary) or "interval" (a periodic one, -i); summary and interval rows end with the
 * seconds of tracing they cover (elapsed_s), which tells one interval from the next, and
 * the latency histogram as one field: FROM_NS:COUNT pairs separated by ';', the "hist" of
 * the JSON. Pid 0 ("[map full]") rows hold, per syscall, the calls the summary map had no
 * room for ("overflow": their number). Calls whose row the kernel could not allocate at that
 * moment (-ENOMEM, the map not full) are counted in their process's row all the same
 * ("alloc_failed": their number), or, when the ring that brings them there was full too, in
 * pid 0 "[no memory]" rows ("no_memory"). After the rows of a summary or interval, an
 * "overflow" row holds in its calls column that number, "alloc_failed" and "no_memory" rows
 * theirs, a "not_counted" row the calls the summary is
 * missing (their start could not be stored), and a "dropped" row the per-call
 * records lost (ring buffer full), each only when not 0, so that a CSV reader can no more
 * overlook them than a reader of the table or the JSON.
 */
#include <inttypes.h>
#include <math.h>
#include <string.h>
#include <cjson/cJSON.h>

#include "export.h"

#define CSV_HEADER                                                                           \
	"kind,pid,tid,comm,cpu,syscall,nr,start_ns,ret,dur_ns,calls,errors,total_ns,min_ns," \
	"max_ns,avg_ns,p50_ns,p99_ns,elapsed_s,hist\n"

int kp_format_parse(const char *s)
{
	if (!s)
		return -1;
	if (!strcmp(s, "table"))
		return KP_FORMAT_TABLE;
	if (!strcmp(s, "json"))
		return KP_FORMAT_JSON;
	if (!strcmp(s, "csv"))
		return KP_FORMAT_CSV;
	return -1;
}

uint64_t kp_hist_quantile(const uint64_t *hist, int slots, uint64_t calls, double q, uint64_t min,
			  uint64_t max)
{
	double rank = q * (double)calls, seen = 0, lo, hi, v;
	int i;

	if (!calls)
		return 0;
	for (i = 0; i < slots; i++) {
		if (!hist[i])
			continue;
		if (seen + (double)hist[i] >= rank) {
			lo = i ? ldexp(1.0, i) : 0.0;
			hi = ldexp(1.0, i + 1);
			/* no call lies outside [min, max]: in the first and last slots that is
			 * narrower than the slot (20 calls of 1.10-1.15 ms in [1.05, 2.1) ms
			 * would otherwise all have a p50 at the max) */
			if (lo < (double)min)
				lo = (double)min;
			if (hi > (double)max)
				hi = (double)max;
			if (hi < lo)
				hi = lo;
			v = lo + (hi - lo) * ((rank - seen) / (double)hist[i]);
			if (v < (double)min)
				v = (double)min;
			if (v > (double)max)
				v = (double)max;
			return (uint64_t)v;
		}
		seen += (double)hist[i];
	}
	return max;
}

static void human_ns(char *buf, size_t size, uint64_t ns)
{
	if (ns < 1000)
		snprintf(buf, size, "%" PRIu64 "ns", ns);
	else if (ns < 1000000)
		snprintf(buf, size, "%" PRIu64 "us", ns / 1000);
	else if (ns < 1000000000)
		snprintf(buf, size, "%" PRIu64 "ms", ns / 1000000);
	else
		snprintf(buf, size, "%" PRIu64 "s", ns / 1000000000);
}

void kp_print_log2_hist(FILE *f, const uint64_t *hist, int slots, const char *unit,
			const char *indent)
{
	uint64_t peak = 0;
	int first = -1, last = -1, i, j, width = 40, bar;
	char lo[32], hi[32];

	for (i = 0; i < slots; i++) {
		if (!hist[i])
			continue;
		if (first < 0)
			first = i;
		last = i;
		if (hist[i] > peak)
			peak = hist[i];
	}
	if (first < 0)
		return;
	(void)unit;
	for (i = first; i <= last; i++) {
		human_ns(lo, sizeof(lo), i ? (uint64_t)1 << i : 0);
		human_ns(hi, sizeof(hi), (uint64_t)1 << (i + 1));
		bar = (int)((hist[i] * (uint64_t)width + peak - 1) / peak);
		fprintf(f, "%s[%6s, %6s) %10" PRIu64 " |", indent, lo, hi, hist[i]);
		for (j = 0; j < width; j++)
			fputc(j < bar ? '@' : ' ', f);
		fputs("|\n", f);
	}
}

static uint64_t avg_ns(const struct PmuTraceSummary *s)
{
	return s->calls ? s->totalNs / s->calls : 0;
}

static void table(FILE *f, const struct PmuTraceSummary *s, int n, const struct kp_trace_meta *m,
		  bool hist)
{
	int i = 0, j, k;

	if (m->interval)
		fprintf(f, "\n--- %.1f s ---\n", m->duration_s);
	if (!n)
		fprintf(f, "\n No syscalls were traced.\n");
	while (i < n) {
		uint64_t calls = 0, total = 0;

		for (j = i; j < n && kp_same_process(&s[j], &s[i]); j++) {
			calls += s[j].calls;
			total += s[j].totalNs;
		}
		fprintf(f, "\n %s (%d), %" PRIu64 " calls, %.3f ms in syscalls\n\n", s[i].comm,
			(int)s[i].pid, calls, (double)total / 1e6);
		fprintf(f, "   %-20s %10s %8s %12s %10s %10s %10s %10s\n", "syscall", "calls",
			"errors", "total (ms)", "avg (us)", "p50 (us)", "p99 (us)", "max (us)");
		fprintf(f, "   %-20s %10s %8s %12s %10s %10s %10s %10s\n", "--------------------",
			"----------", "--------", "------------", "----------", "----------",
			"----------", "----------");
		for (k = i; k < j; k++) {
			const struct PmuTraceSummary *r = &s[k];
			uint64_t p50 = kp_hist_quantile(r->hist, KPERF_HIST_SLOTS, r->calls, 0.50,
							r->minNs, r->maxNs);
			uint64_t p99 = kp_hist_quantile(r->hist, KPERF_HIST_SLOTS, r->calls, 0.99,
							r->minNs, r->maxNs);

			fprintf(f,
				"   %-20s %10" PRIu64 " %8" PRIu64
				" %12.3f %10.3f %10.3f %10.3f %10.3f\n",
				r->funcs, r->calls, r->errors, (double)r->totalNs / 1e6,
				(double)avg_ns(r) / 1e3, (double)p50 / 1e3, (double)p99 / 1e3,
				(double)r->maxNs / 1e3);
		}
		if (hist) {
			for (k = i; k < j; k++) {
				fprintf(f, "\n   %s: latency of %" PRIu64 " calls\n", s[k].funcs,
					s[k].calls);
				kp_print_log2_hist(f, s[k].hist, KPERF_HIST_SLOTS, "ns", "     ");
			}
		}
		i = j;
	}
	if (m->dropped || m->not_counted || m->overflow || m->alloc_failed || m->fallback)
		fputc('\n', f);
	if (m->overflow)
		fprintf(f,
			" WARNING: %" PRIu64 " calls are counted without their process (pid 0, "
			"%s): the summary map was full.\n",
			m->overflow, KPERF_TRACE_OVERFLOW_COMM);
	if (m->alloc_failed > m->no_memory)
		fprintf(f,
			" %" PRIu64 " calls found no memory for their row in the kernel at that "
			"moment (the map was not full): they are counted in their process's row.\n",
			m->alloc_failed - m->no_memory);
	if (m->no_memory)
		fprintf(f,
			" WARNING: %" PRIu64 " calls are counted without their process (pid 0, "
			"%s): the kernel could not allocate their rows at that moment.\n",
			m->no_memory, KPERF_TRACE_NOMEM_COMM);
	if (m->dropped)
		fprintf(f,
			" %" PRIu64 " per-call records were dropped (ring buffer full); "
			"the summary above is exact.\n",
			m->dropped);
	if (m->not_counted)
		fprintf(f,
			" WARNING: %" PRIu64 " calls are missing from the summary (their start "
			"could not be stored).\n",
			m->not_counted);
	if (m->fallback)
		fprintf(f, " (raw_syscalls fallback in use: the kernel has no usable BTF)\n");
}

static cJSON *hist_json(const uint64_t *hist)
{
	cJSON *a = cJSON_CreateArray();
	int i;

	for (i = 0; i < KPERF_HIST_SLOTS; i++) {
		cJSON *o;

		if (!hist[i])
			continue;
		o = cJSON_CreateObject();
		cJSON_AddNumberToObject(o, "from_ns", i ? ldexp(1.0, i) : 0);
		cJSON_AddNumberToObject(o, "to_ns", ldexp(1.0, i + 1) - 1);
		cJSON_AddNumberToObject(o, "count", (double)hist[i]);
		cJSON_AddItemToArray(a, o);
	}
	return a;
}

/* the report's fields, without the enclosing braces */
static char *json_body(const struct PmuTraceSummary *s, int n, const struct kp_trace_meta *m)
{
	cJSON *root = cJSON_CreateObject(), *procs = cJSON_AddArrayToObject(root, "processes");
	cJSON *proc = NULL, *calls_arr = NULL;
	uint64_t pcalls = 0, perrors = 0, ptotal = 0;
	char *text;
	int i;

	cJSON_AddNumberToObject(root, "duration_s", m->duration_s);
	cJSON_AddNumberToObject(root, "attach_ms", m->attach_ms);
	cJSON_AddNumberToObject(root, "dropped", (double)m->dropped);
	cJSON_AddNumberToObject(root, "not_counted", (double)m->not_counted);
	cJSON_AddNumberToObject(root, "overflow", (double)m->overflow);
	cJSON_AddNumberToObject(root, "alloc_failed", (double)m->alloc_failed);
	cJSON_AddNumberToObject(root, "no_memory", (double)m->no_memory);
	cJSON_AddBoolToObject(root, "fallback", m->fallback);
	for (i = 0; i < n; i++) {
		const struct PmuTraceSummary *r = &s[i];
		cJSON *o;

		if (!proc || !kp_same_process(&s[i - 1], r)) {
			if (proc) {
				cJSON_AddNumberToObject(proc, "calls", (double)pcalls);
				cJSON_AddNumberToObject(proc, "errors", (double)perrors);
				cJSON_AddNumberToObject(proc, "total_ns", (double)ptotal);
			}
			pcalls = perrors = ptotal = 0;
			proc = cJSON_CreateObject();
			cJSON_AddNumberToObject(proc, "pid", r->pid);
			cJSON_AddStringToObject(proc, "comm", r->comm);
			calls_arr = cJSON_AddArrayToObject(proc, "syscalls");
			cJSON_AddItemToArray(procs, proc);
		}
		pcalls += r->calls;
		perrors += r->errors;
		ptotal += r->totalNs;
		o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "name", r->funcs);
		cJSON_AddNumberToObject(o, "nr", r->nr);
		cJSON_AddNumberToObject(o, "calls", (double)r->calls);
		cJSON_AddNumberToObject(o, "errors", (double)r->errors);
		cJSON_AddNumberToObject(o, "total_ns", (double)r->totalNs);
		cJSON_AddNumberToObject(o, "min_ns", (double)r->minNs);
		cJSON_AddNumberToObject(o, "max_ns", (double)r->maxNs);
		cJSON_AddNumberToObject(o, "avg_ns", (double)avg_ns(r));
		cJSON_AddNumberToObject(o, "p50_ns",
					(double)kp_hist_quantile(r->hist, KPERF_HIST_SLOTS,
								 r->calls, 0.5, r->minNs,
								 r->maxNs));
		cJSON_AddNumberToObject(o, "p99_ns",
					(double)kp_hist_quantile(r->hist, KPERF_HIST_SLOTS,
								 r->calls, 0.99, r->minNs,
								 r->maxNs));
		cJSON_AddItemToObject(o, "hist", hist_json(r->hist));
		cJSON_AddItemToArray(calls_arr, o);
	}
	if (proc) {
		cJSON_AddNumberToObject(proc, "calls", (double)pcalls);
		cJSON_AddNumberToObject(proc, "errors", (double)perrors);
		cJSON_AddNumberToObject(proc, "total_ns", (double)ptotal);
	}
	text = cJSON_PrintUnformatted(root);
	cJSON_Delete(root);
	return text;
}

/* a JSON string: quotes, backslashes and control characters escaped */
static void json_str(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");

	fputc('"', f);
	for (; *p; p++) {
		if (*p == '"' || *p == '\\') {
			fputc('\\', f);
			fputc(*p, f);
		} else if (*p < 0x20 || *p == 0x7f) {
			fprintf(f, "\\u%04x", *p);
		} else {
			fputc(*p, f);
		}
	}
	fputc('"', f);
}

static void csv_str(FILE *f, const char *s)
{
	/* comm may hold commas or quotes: quote it, doubling quotes */
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

/* the histogram as one CSV field, like JSON's "hist": FROM_NS:COUNT of each slot that has
 * calls, separated by ';' (slot i holds [FROM_NS, 2 * FROM_NS), FROM_NS = 2^i, 0 for i = 0) */
static void csv_hist(FILE *f, const uint64_t *hist)
{
	bool first = true;
	int i;

	for (i = 0; i < KPERF_HIST_SLOTS; i++) {
		if (!hist[i])
			continue;
		fprintf(f, "%s%" PRIu64 ":%" PRIu64, first ? "" : ";", i ? (uint64_t)1 << i : 0,
			hist[i]);
		first = false;
	}
	fputc('\n', f);
}

void kp_report_syscalls(FILE *f, enum kp_format fmt, const struct PmuTraceSummary *s, int n,
			const struct kp_trace_meta *meta, bool hist)
{
	char *body;
	int i;

	switch (fmt) {
	case KP_FORMAT_TABLE:
		table(f, s, n, meta, hist);
		break;
	case KP_FORMAT_JSON:
		body = json_body(s, n, meta);
		if (body) {
			/* strip the outer braces: the caller may have opened the object */
			size_t len = strlen(body);

			body[len - 1] = '\0';
			fputs(body + 1, f);
			cJSON_free(body);
		}
		break;
	case KP_FORMAT_CSV:
		for (i = 0; i < n; i++) {
			const struct PmuTraceSummary *r = &s[i];

			fprintf(f, "%s,%d,,", meta->interval ? "interval" : "summary", (int)r->pid);
			csv_str(f, r->comm);
			fprintf(f,
				",,%s,%d,,,,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
				",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%.3f,",
				r->funcs, r->nr, r->calls, r->errors, r->totalNs, r->minNs,
				r->maxNs, avg_ns(r),
				kp_hist_quantile(r->hist, KPERF_HIST_SLOTS, r->calls, 0.5, r->minNs,
						 r->maxNs),
				kp_hist_quantile(r->hist, KPERF_HIST_SLOTS, r->calls, 0.99,
						 r->minNs, r->maxNs),
				meta->duration_s);
			csv_hist(f, r->hist);
		}
		if (meta->overflow)
			fprintf(f, "overflow,,,,,,,,,,%" PRIu64 ",,,,,,,,%.3f,\n", meta->overflow,
				meta->duration_s);
		if (meta->alloc_failed)
			fprintf(f, "alloc_failed,,,,,,,,,,%" PRIu64 ",,,,,,,,%.3f,\n",
				meta->alloc_failed, meta->duration_s);
		if (meta->no_memory)
			fprintf(f, "no_memory,,,,,,,,,,%" PRIu64 ",,,,,,,,%.3f,\n", meta->no_memory,
				meta->duration_s);
		if (meta->not_counted)
			fprintf(f, "not_counted,,,,,,,,,,%" PRIu64 ",,,,,,,,%.3f,\n",
				meta->not_counted, meta->duration_s);
		if (meta->dropped)
			fprintf(f, "dropped,,,,,,,,,,%" PRIu64 ",,,,,,,,%.3f,\n", meta->dropped,
				meta->duration_s);
		break;
	}
}

void kp_report_csv_header(FILE *f)
{
	fputs(CSV_HEADER, f);
}

void kp_report_csv_header_stack(FILE *f)
{
	/* one more column: the rows with a stack (events, "stack" rows) fill it */
	fprintf(f, "%.*s,stack\n", (int)strlen(CSV_HEADER) - 1, CSV_HEADER);
}

void kp_report_events_begin(FILE *f, enum kp_format fmt)
{
	if (fmt == KP_FORMAT_JSON)
		fputs("{\"events\":[", f);
	else if (fmt == KP_FORMAT_CSV)
		kp_report_csv_header(f);
}

void kp_report_events_end(FILE *f, enum kp_format fmt)
{
	if (fmt == KP_FORMAT_JSON)
		fputs("],", f);
}

void kp_report_event(FILE *f, enum kp_format fmt, const struct PmuTraceData *d,
		     const struct KperfTraceDataExt *x, int64_t t0_ns, bool first)
{
	switch (fmt) {
	case KP_FORMAT_TABLE:
		fprintf(f, "%12.3f %16s/%-7d %s() = %" PRId64 " %12.3f us\n",
			(double)(d->startTs - t0_ns) / 1e6, d->comm, d->tid, d->funcs, x->ret,
			d->elapsedTime * 1e3);
		if (d->stack)
			kp_report_event_stack(f, fmt, d->stack);
		break;
	case KP_FORMAT_JSON:
		/* by hand, not through cJSON: a flood of calls is printed as fast as it comes */
		fprintf(f, "%s{\"start_ns\":%" PRId64 ",\"pid\":%d,\"tid\":%d,\"cpu\":%d,\"comm\":",
			first ? "" : ",", d->startTs, (int)d->pid, d->tid, d->cpu);
		json_str(f, d->comm);
		fputs(",\"syscall\":", f);
		json_str(f, d->funcs);
		fprintf(f, ",\"nr\":%d,\"ret\":%" PRId64 ",\"dur_ns\":%.0f", x->nr, x->ret,
			round(d->elapsedTime * 1e6));
		if (d->stack)
			kp_report_event_stack(f, fmt, d->stack);
		fputc('}', f);
		break;
	case KP_FORMAT_CSV:
		fprintf(f, "event,%d,%d,", (int)d->pid, d->tid);
		csv_str(f, d->comm);
		fprintf(f, ",%d,%s,%d,%" PRId64 ",%" PRId64 ",%.0f,,,,,,,,,,", d->cpu, d->funcs,
			x->nr, d->startTs, x->ret, d->elapsedTime * 1e6);
		if (d->stack) /* the "stack" column of kp_report_csv_header_stack */
			kp_report_event_stack(f, fmt, d->stack);
		fputc('\n', f);
		break;
	}
}
