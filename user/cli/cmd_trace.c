/*
 * cmd_trace.c - `kperf-bpf trace`: syscall latency per process, like `perf trace -s`, at
 * the cost of an in-kernel summary.
 *
 *   kperf-bpf trace [-p PID,...] [-C CPUS] [-e SYSCALL,...] [--cgroup PATH] [-d SECONDS]
 *                   [-i SECONDS] [--hist] [--events [--min-duration MS]] [-o FILE]
 *                   [--format table|json|csv|folded|svg] [--ringbuf-kb KB]
 *                   [--stack [--dwarf] [--stack-top N] [--stack-entries N]
 *                            [--call-graph dwarf|fp]] [-- COMMAND ARGS...]
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "core/core.h"
#include "export/export.h"
#include "kperf/kperf.h"

#define TICK_MS 100
#define STATUS_MS 250
#define MAX_MIN_DURATION_MS 1e10 /* about 115 days */
/* the formats of the summary by stack only, beside export.h's table, json and csv */
#define FORMAT_FOLDED 100
#define FORMAT_SVG 101
#define DEFAULT_STACK_TOP 5

struct trace_opts {
	int *pids;
	int npids;
	int *cpus;
	int ncpus;
	char **funcs;
	int nfuncs;
	const char *cgroup;
	long duration_ms;
	long interval_ms;
	bool hist;
	bool events;
	double min_duration_ms;
	const char *output;
	int format;
	unsigned ringbuf_kb;
	unsigned summary_entries;
	bool stack;
	bool dwarf;
	int stack_top;
	unsigned stack_entries;
	bool call_graph_set;
	unsigned call_graph; /* KPERF_CALL_GRAPH_* */
	char **command;
};

static void usage(FILE *f)
{
	fputs("usage: kperf-bpf trace [options] [-- COMMAND [ARGS...]]\n"
	      "\n"
	      "Trace syscalls and print, per process, calls, errors and latency (total, avg,\n"
	      "p50, p99, max), sorted by total time. Without -p or a command: every process.\n"
	      "\n"
	      "  -p, --pid PID,...        trace these processes (all their threads)\n"
	      "  -C, --cpu CPUS           only these cpus (e.g. 0-3,6)\n"
	      "  -e, --syscalls NAME,...  only these syscalls\n"
	      "      --cgroup PATH        only tasks in this cgroup v2 directory (and below)\n"
	      "  -d, --duration SECONDS   stop after this long\n"
	      "  -i, --interval SECONDS   print the summary every SECONDS (cumulative; not with\n"
	      "                           --events)\n"
	      "      --hist               add a log2 latency histogram per syscall\n"
	      "      --events             print every call (time, comm/tid, syscall, return, duration)\n"
	      "      --min-duration MS    with --events: only calls at least this long\n"
	      "  -o, --output FILE        write the report to FILE\n"
	      "      --format FMT         table (default), json or csv; with --stack also folded\n"
	      "                           (flamegraph.pl's input) or svg (a flame graph of the\n"
	      "                           latency by stack)\n"
	      "      --stack              take the call stack (user and kernel) at each call's\n"
	      "                           entry: the summary shows per syscall its top stacks by\n"
	      "                           total latency, counted in the kernel; --events records\n"
	      "                           carry their stack\n"
	      "      --dwarf              with --stack: source file and line of each frame\n"
	      "      --stack-top N        with --stack: stacks shown per process and syscall\n"
	      "                           (default 5; json, csv, folded and svg have them all)\n"
	      "      --stack-entries N    with --stack: distinct stacks kept (default 8192)\n"
	      "      --call-graph dwarf|fp  with --stack: user stacks unwound from the .eh_frame\n"
	      "                           tables (dwarf, the default: code built without frame\n"
	      "                           pointers, as libc) or by frame pointers only (fp)\n"
	      "      --ringbuf-kb KB      per-call ring buffer size (default 16384)\n"
	      "      --summary-entries N  (process, syscall) rows the in-kernel summary holds\n"
	      "                           at once (default 16384; an exited process's rows\n"
	      "                           leave it); calls beyond are counted per syscall,\n"
	      "                           under pid 0 [map full]\n"
	      "  -h, --help               this text\n"
	      "\n"
	      "With a COMMAND, it is started and traced with all its descendants from its exec on;\n"
	      "tracing ends when it exits, and its exit status is returned.\n",
	      f);
}

static int check_stack_opts(struct trace_opts *o);

static int parse(int argc, char **argv, struct trace_opts *o)
{
	enum {
		OPT_CGROUP = 256,
		OPT_HIST,
		OPT_EVENTS,
		OPT_MIN_DUR,
		OPT_FORMAT,
		OPT_RINGBUF,
		OPT_SUMMARY_ENTRIES,
		OPT_STACK,
		OPT_DWARF,
		OPT_STACK_TOP,
		OPT_STACK_ENTRIES,
		OPT_CALL_GRAPH
	};
	static const struct option longopts[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "cpu", required_argument, NULL, 'C' },
		{ "syscalls", required_argument, NULL, 'e' },
		{ "cgroup", required_argument, NULL, OPT_CGROUP },
		{ "duration", required_argument, NULL, 'd' },
		{ "interval", required_argument, NULL, 'i' },
		{ "hist", no_argument, NULL, OPT_HIST },
		{ "events", no_argument, NULL, OPT_EVENTS },
		{ "min-duration", required_argument, NULL, OPT_MIN_DUR },
		{ "output", required_argument, NULL, 'o' },
		{ "format", required_argument, NULL, OPT_FORMAT },
		{ "ringbuf-kb", required_argument, NULL, OPT_RINGBUF },
		{ "summary-entries", required_argument, NULL, OPT_SUMMARY_ENTRIES },
		{ "stack", no_argument, NULL, OPT_STACK },
		{ "dwarf", no_argument, NULL, OPT_DWARF },
		{ "stack-top", required_argument, NULL, OPT_STACK_TOP },
		{ "stack-entries", required_argument, NULL, OPT_STACK_ENTRIES },
		{ "call-graph", required_argument, NULL, OPT_CALL_GRAPH },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	unsigned long kb;
	char *end;
	int c;

	o->format = KP_FORMAT_TABLE;
	optind = 1;
	while ((c = getopt_long(argc, argv, "+p:C:e:d:i:o:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'p':
			if (kp_cli_opt_pids("trace", optarg, &o->pids, &o->npids))
				return -1;
			break;
		case 'C':
			if (kp_cli_opt_cpus("trace", optarg, &o->cpus, &o->ncpus))
				return -1;
			break;
		case 'e':
			free(o->funcs);
			o->nfuncs = kp_cli_split(optarg, &o->funcs);
			if (o->nfuncs <= 0) {
				fprintf(stderr,
					"kperf-bpf trace: -e wants syscall names like read,write, "
					"not '%s'\n",
					optarg);
				return -1;
			}
			break;
		case OPT_CGROUP:
			/* an empty path would mean "no cgroup": every process of the machine */
			if (!*optarg) {
				fprintf(stderr,
					"kperf-bpf trace: --cgroup wants a cgroup v2 directory\n");
				return -1;
			}
			o->cgroup = optarg;
			break;
		case 'd':
			if (kp_cli_opt_seconds("trace", 'd', optarg, &o->duration_ms))
				return -1;
			break;
		case 'i':
			o->interval_ms = kp_cli_parse_seconds(optarg);
			if (o->interval_ms <= 0) {
				fprintf(stderr, "kperf-bpf trace: -i wants seconds > 0, not '%s'\n",
					optarg);
				return -1;
			}
			break;
		case OPT_HIST:
			o->hist = true;
			break;
		case OPT_EVENTS:
			o->events = true;
			break;
		case OPT_MIN_DUR:
			o->min_duration_ms = strtod(optarg, &end);
			/* bounded: the ns value must fit minDurationNs (inf would not) */
			if (*end || end == optarg || !(o->min_duration_ms >= 0) ||
			    o->min_duration_ms > MAX_MIN_DURATION_MS) {
				fprintf(stderr,
					"kperf-bpf trace: --min-duration wants ms from 0 to %.0f, "
					"not '%s'\n",
					MAX_MIN_DURATION_MS, optarg);
				return -1;
			}
			break;
		case 'o':
			o->output = optarg;
			break;
		case OPT_FORMAT:
			o->format = !strcmp(optarg, "folded") ? FORMAT_FOLDED :
				    !strcmp(optarg, "svg")    ? FORMAT_SVG :
								kp_format_parse(optarg);
			if (o->format < 0) {
				fprintf(stderr,
					"kperf-bpf trace: --format is table, json, csv, folded or "
					"svg, not '%s'\n",
					optarg);
				return -1;
			}
			break;
		case OPT_STACK:
			o->stack = true;
			break;
		case OPT_DWARF:
			o->dwarf = true;
			break;
		case OPT_STACK_TOP:
			errno = 0;
			kb = strtoul(optarg, &end, 10);
			if (*end || end == optarg || optarg[0] == '-' || errno || !kb ||
			    kb > INT_MAX) {
				fprintf(stderr,
					"kperf-bpf trace: --stack-top wants a number of stacks (1 or "
					"more), not '%s'\n",
					optarg);
				return -1;
			}
			o->stack_top = (int)kb;
			break;
		case OPT_STACK_ENTRIES:
			errno = 0;
			kb = strtoul(optarg, &end, 10);
			if (*end || end == optarg || optarg[0] == '-' || errno || !kb ||
			    kb > UINT_MAX) {
				fprintf(stderr,
					"kperf-bpf trace: --stack-entries wants a number of stacks, "
					"not '%s'\n",
					optarg);
				return -1;
			}
			o->stack_entries = (unsigned)kb;
			break;
		case OPT_CALL_GRAPH:
			if (!strcmp(optarg, "dwarf")) {
				o->call_graph = KPERF_CALL_GRAPH_DWARF;
			} else if (!strcmp(optarg, "fp")) {
				o->call_graph = KPERF_CALL_GRAPH_FP;
			} else {
				fprintf(stderr,
					"kperf-bpf trace: --call-graph is dwarf or fp, not '%s'\n",
					optarg);
				return -1;
			}
			o->call_graph_set = true;
			break;
		case OPT_RINGBUF:
			errno = 0;
			kb = strtoul(optarg, &end, 10);
			/* strtoul takes "-1" and values that do not fit: refuse both */
			if (*end || end == optarg || optarg[0] == '-' || errno || !kb ||
			    kb > UINT_MAX) {
				fprintf(stderr,
					"kperf-bpf trace: --ringbuf-kb wants a size in KiB, not "
					"'%s'\n",
					optarg);
				return -1;
			}
			o->ringbuf_kb = (unsigned)kb;
			break;
		case OPT_SUMMARY_ENTRIES:
			errno = 0;
			kb = strtoul(optarg, &end, 10);
			if (*end || end == optarg || optarg[0] == '-' || errno || !kb ||
			    kb > UINT_MAX) {
				fprintf(stderr,
					"kperf-bpf trace: --summary-entries wants a number of rows, "
					"not '%s'\n",
					optarg);
				return -1;
			}
			o->summary_entries = (unsigned)kb;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			return -1;
		}
	}
	if (kp_cli_command("trace", argc, argv, &o->command))
		return -1;
	if (o->command && o->npids) {
		fprintf(stderr, "kperf-bpf trace: give either -p or a command, not both\n");
		return -1;
	}
	/* the events stream (a JSON array, CSV rows) has no place for a summary in between */
	if (o->interval_ms && o->events) {
		fprintf(stderr, "kperf-bpf trace: -i (a periodic summary) does not combine with "
				"--events; the summary follows the events at the end\n");
		return -1;
	}
	if (o->min_duration_ms > 0 && !o->events) {
		fprintf(stderr, "kperf-bpf trace: --min-duration only applies with --events\n");
		return -1;
	}
	return check_stack_opts(o);
}

static int check_stack_opts(struct trace_opts *o)
{
	const char *f = o->format == FORMAT_SVG ? "svg" : "folded";

	if (!o->stack && (o->dwarf || o->stack_top || o->stack_entries || o->call_graph_set)) {
		fprintf(stderr, "kperf-bpf trace: %s only applies with --stack\n",
			o->dwarf	 ? "--dwarf" :
			o->stack_top	 ? "--stack-top" :
			o->stack_entries ? "--stack-entries" :
					   "--call-graph");
		return -1;
	}
	if (!o->stack_top)
		o->stack_top = DEFAULT_STACK_TOP;
	if (o->format != FORMAT_FOLDED && o->format != FORMAT_SVG)
		return 0;
	if (!o->stack) {
		fprintf(stderr,
			"kperf-bpf trace: --format %s shows the latency by stack: add --stack\n",
			f);
		return -1;
	}
	if (o->events || o->interval_ms) {
		fprintf(stderr,
			"kperf-bpf trace: --format %s is the summary by stack at the end: not with "
			"%s (use table, json or csv)\n",
			f, o->events ? "--events" : "-i");
		return -1;
	}
	return 0;
}

static uint64_t total_calls(const struct PmuTraceSummary *s, int n)
{
	uint64_t c = 0;
	int i;

	for (i = 0; i < n; i++)
		c += s[i].calls;
	return c;
}

static void fill_meta(int pd, struct kp_trace_meta *m, double start_ms, double attach_ms)
{
	struct PmuTraceStats st;

	memset(m, 0, sizeof(*m));
	m->duration_s = (kp_cli_elapsed_ms() - start_ms) / 1e3;
	m->attach_ms = attach_ms;
	if (PmuTraceGetStats(pd, &st) == 0) {
		m->dropped = st.dropped;
		m->not_counted = st.summaryDropped;
		m->alloc_failed = st.summaryNoMemory;
		m->fallback = st.fallback;
	}
}

/* the calls of the summary by stack's overflow rows (pid 0) with comm <comm> */
static uint64_t stack_overflow(const struct KperfTraceStackSummary *ss, int nss, const char *comm)
{
	uint64_t calls = 0;
	int i;

	for (i = 0; i < nss; i++)
		if (!ss[i].pid && !strcmp(ss[i].comm, comm))
			calls += ss[i].calls;
	return calls;
}

/* the summary by stack, after the summary <s> (or alone: folded, svg) */
static void print_stacks(FILE *out, int pd, const struct trace_opts *o,
			 const struct PmuTraceSummary *s, int n, double duration_s, bool interval)
{
	struct KperfTraceStackSummary *ss = NULL;
	int nss = KperfTraceReadStackSummary(pd, &ss), err = 0;
	uint64_t full, nomem;

	if (nss < 0) {
		fprintf(stderr, "kperf-bpf trace: cannot read the summary by stack: %s\n",
			Perror());
		return;
	}
	full = stack_overflow(ss, nss, KPERF_TRACE_OVERFLOW_COMM);
	nomem = stack_overflow(ss, nss, KPERF_TRACE_NOMEM_COMM);
	/* said here from the rows in the CLI's words (its option), whatever the format */
	if (!interval && full)
		fprintf(stderr,
			"kperf-bpf trace: warning: %" PRIu64 " calls are counted in the summary by "
			"stack without their process and stack (pid 0, %s): its map was full "
			"(raise --summary-entries)\n",
			full, KPERF_TRACE_STACK_FULL);
	if (!interval && nomem)
		fprintf(stderr,
			"kperf-bpf trace: warning: %" PRIu64 " calls are counted in the summary by "
			"stack without their process and stack (pid 0, %s): the kernel could not "
			"allocate their rows at that moment and the ring that brings such calls to "
			"their rows was full\n",
			nomem, KPERF_TRACE_STACK_NOMEM);
	kp_cli_warnings("trace", !interval && full + nomem ? "in the summary by stack" : NULL);
	if (o->format == FORMAT_FOLDED)
		err = kp_report_stacks_folded(out, ss, nss);
	else if (o->format == FORMAT_SVG)
		err = kp_report_stacks_svg(out, ss, nss, duration_s);
	else
		kp_report_syscall_stacks(out, o->format, s, n, ss, nss, o->stack_top);
	if (err)
		fprintf(stderr, "kperf-bpf trace: %s\n", Perror());
	KperfTraceStackSummaryFree(ss);
}

static void print_summary(FILE *out, int pd, const struct trace_opts *o, bool interval,
			  double start_ms, double attach_ms)
{
	struct PmuTraceSummary *s = NULL;
	struct kp_trace_meta m;
	int n = PmuTraceReadSummary(pd, &s);

	if (n < 0) {
		fprintf(stderr, "kperf-bpf trace: cannot read the summary: %s\n", Perror());
		return;
	}
	fill_meta(pd, &m, start_ms, attach_ms);
	m.interval = interval;
	/* the calls of the pid 0 rows are counted: what else summaryDropped has is not */
	for (int i = 0; i < n; i++) {
		if (!s[i].pid && !strcmp(s[i].comm, KPERF_TRACE_OVERFLOW_COMM))
			m.overflow += s[i].calls;
		if (!s[i].pid && !strcmp(s[i].comm, KPERF_TRACE_NOMEM_COMM))
			m.no_memory += s[i].calls;
	}
	m.not_counted = m.not_counted > m.overflow + m.no_memory ?
				m.not_counted - m.overflow - m.no_memory :
				0;
	/* a transient shortage of kernel memory: nothing lost, but not to be hidden */
	if (!interval && m.alloc_failed > m.no_memory)
		fprintf(stderr,
			"kperf-bpf trace: note: %" PRIu64 " calls found no memory for their row in "
			"the kernel at that moment (the summary map was not full): they are counted "
			"in their process's row all the same\n",
			m.alloc_failed - m.no_memory);
	if (!interval && m.no_memory)
		fprintf(stderr,
			"kperf-bpf trace: warning: %" PRIu64 " calls are counted without their "
			"process (pid 0, %s): the kernel could not allocate their rows at that "
			"moment and the ring that brings such calls to their rows was full\n",
			m.no_memory, KPERF_TRACE_NOMEM_COMM);
	/* whatever the format and wherever the report goes: a human must not miss it */
	if (!interval && m.overflow)
		fprintf(stderr,
			"kperf-bpf trace: warning: %" PRIu64 " calls are counted without their "
			"process (pid 0, %s): the summary map was full (raise "
			"--summary-entries)\n",
			m.overflow, KPERF_TRACE_OVERFLOW_COMM);
	if (!interval && m.not_counted)
		fprintf(stderr,
			"kperf-bpf trace: warning: %" PRIu64 " calls are missing from the summary: "
			"their start times could not be stored\n",
			m.not_counted);
	if (o->format == FORMAT_FOLDED || o->format == FORMAT_SVG) {
		print_stacks(out, pd, o, s, n, m.duration_s, interval);
		PmuTraceSummaryFree(s);
		return;
	}
	if (o->format == KP_FORMAT_JSON && (interval || !o->events))
		fputc('{', out);
	kp_report_syscalls(out, o->format, s, n, &m, o->hist);
	if (o->stack)
		print_stacks(out, pd, o, s, n, m.duration_s, interval);
	if (o->format == KP_FORMAT_JSON)
		fputs("}\n", out);
	fflush(out);
	PmuTraceSummaryFree(s);
}

static void status_line(int pd, double start_ms)
{
	struct PmuTraceSummary *s = NULL;
	struct PmuTraceStats st = { 0 };
	int n = PmuTraceReadSummary(pd, &s);

	PmuTraceGetStats(pd, &st);
	fprintf(stderr, "\r\033[K[%7.1fs] %" PRIu64 " calls, %" PRIu64 " dropped",
		(kp_cli_elapsed_ms() - start_ms) / 1e3, n > 0 ? total_calls(s, n) : 0, st.dropped);
	PmuTraceSummaryFree(s);
}

/* a write to the report failed: say which file and why */
static void write_failed(void)
{
	fprintf(stderr, "kperf-bpf trace: %s\n", Perror());
}

int cmd_trace(int argc, char **argv)
{
	struct trace_opts o = { 0 };
	struct PmuTraceAttr attr = { 0 };
	struct KperfTraceOpts kopts = KPERF_OPTS(KperfTraceOpts);
	struct kp_launch launch = { .pid = -1, .go_fd = -1, .err_fd = -1 };
	struct kp_pidwatch *watch = NULL;
	struct kp_out *report = NULL;
	struct kp_evwin *window = NULL;
	bool launched = false, tty = isatty(2);
	double start_ms, attach_ms, last_status = 0, last_interval;
	int pd = -1, rc = 1, child_status = 0, err, child_pid;
	FILE *out;

	if (parse(argc, argv, &o))
		goto done;
	if (kp_out_open(o.output, &report)) {
		fprintf(stderr, "kperf-bpf trace: %s\n", Perror());
		goto done;
	}
	out = kp_out_file(report);
	kp_cli_catch_signals();
	if (o.command) {
		err = kp_launch_prepare(o.command, &launch);
		if (err) {
			fprintf(stderr, "kperf-bpf trace: cannot start %s: %s\n", o.command[0],
				strerror(-err));
			goto done;
		}
		child_pid = launch.pid;
		attr.pidList = &child_pid;
		attr.numPid = 1;
		kopts.fromExec = 1;
		kopts.includeNewFork = 1;
	} else {
		attr.pidList = o.pids;
		attr.numPid = (unsigned)o.npids;
	}
	attr.cpuList = o.cpus;
	attr.numCpu = (unsigned)o.ncpus;
	attr.funcs = (const char **)o.funcs;
	attr.numFuncs = (unsigned)o.nfuncs;
	kopts.cgroupPath = o.cgroup;
	kopts.summaryOnly = !o.events;
	kopts.minDurationNs = (uint64_t)(o.min_duration_ms * 1e6);
	kopts.ringBufferKb = o.ringbuf_kb;
	/* a bounded store, read in batches: memory does not grow with the rate of calls */
	kopts.maxStoredRecords = TRACE_STORE;
	kopts.summaryEntries = o.summary_entries;
	/* tracing everything: the tracer's own reads would feed the trace */
	kopts.excludeSelf = 1;
	attr.callStack = o.stack;
	attr.symbolMode = o.dwarf ? RESOLVE_ELF_DWARF : RESOLVE_ELF;
	kopts.stackEntries = o.stack_entries;
	kopts.callGraph = o.call_graph;

	pd = KperfTraceOpen(TRACE_SYS_CALL, &attr, &kopts);
	if (pd < 0) {
		fprintf(stderr, "kperf-bpf trace: %s\n", Perror());
		goto done;
	}
	kp_cli_pids_to_processes(o.pids, o.npids);
	kp_cli_warnings("trace", NULL);
	if (kp_cli_watch_pids("trace", o.pids, o.npids, &watch))
		goto done;
	if (PmuTraceEnable(pd)) {
		fprintf(stderr, "kperf-bpf trace: %s\n", Perror());
		goto done;
	}
	attach_ms = kp_cli_elapsed_ms();
	start_ms = last_interval = attach_ms;
	if (o.command) {
		err = kp_launch_go(&launch);
		if (err) {
			fprintf(stderr, "kperf-bpf trace: cannot run %s: %s\n", o.command[0],
				strerror(-err));
			rc = 127;
			launch.pid = -1;
			goto done;
		}
		launched = true;
	}
	if (o.events) {
		window = kp_evwin_new(out, o.format);
		if (!window) {
			fprintf(stderr, "kperf-bpf trace: out of memory\n");
			goto done;
		}
		if (o.format == KP_FORMAT_CSV && o.stack)
			kp_report_csv_header_stack(out);
		else
			kp_report_events_begin(out, o.format);
	} else if (o.format == KP_FORMAT_CSV) {
		/* once, before the first interval */
		if (o.stack)
			kp_report_csv_header_stack(out);
		else
			kp_report_csv_header(out);
	}

	for (;;) {
		struct timespec tick = { 0, TICK_MS * 1000000L };
		double now;

		nanosleep(&tick, NULL);
		now = kp_cli_elapsed_ms();
		if (o.events)
			kp_evwin_read(window, pd, false);
		if (o.interval_ms && now - last_interval >= (double)o.interval_ms) {
			last_interval = now;
			if (!o.events)
				print_summary(out, pd, &o, true, start_ms, attach_ms);
		}
		if (kp_out_check(report)) {
			/* nothing more can be reported: end like an interrupted collection */
			if (tty && !o.events)
				fputs("\r\033[K", stderr);
			write_failed();
			if (launched && kp_launch_stop(&launch, &child_status) == 0)
				launched = false;
			goto done;
		}
		if (tty && !o.events && now - last_status >= STATUS_MS) {
			last_status = now;
			status_line(pd, start_ms);
		}
		if (kp_cli_collection_over(&launch, &launched, &child_status, watch, start_ms,
					   o.duration_ms))
			break;
	}
	PmuTraceDisable(pd);
	if (tty && !o.events)
		fputs("\r\033[K", stderr);
	if (o.events) {
		kp_evwin_read(window, pd, true);
		kp_evwin_flush(window);
		kp_report_events_end(out, o.format);
		if (kp_evwin_late(window))
			fprintf(stderr,
				"kperf-bpf trace: %ld records arrived after the %d-record window had "
				"passed their start and are printed out of start order\n",
				kp_evwin_late(window), KP_EVWIN_RECORDS);
	}
	print_summary(out, pd, &o, false, start_ms, attach_ms);
	err = kp_out_commit(report);
	report = NULL;
	if (err) {
		write_failed();
		goto done;
	}
	if (o.format == KP_FORMAT_TABLE)
		fprintf(stderr, "\n tracing attached %.1f ms after start, ran %.2f s\n", attach_ms,
			(kp_cli_elapsed_ms() - start_ms) / 1e3);
	rc = 0;
	if (o.command && !launched) {
		rc = kp_cli_exit_code(child_status);
	} else if (launched) {
		/* -d ended the trace: the command does not outlive its tracer */
		fprintf(stderr, "kperf-bpf trace: %s (pid %d) was still running: stopped\n",
			o.command[0], launch.pid);
		kill(launch.pid, SIGTERM);
	}
done:
	/* a command never released (open or enable failed) */
	if (launch.pid > 0 && launch.go_fd >= 0)
		kp_launch_abort(&launch);
	if (pd >= 0)
		PmuTraceClose(pd);
	kp_out_discard(report);
	kp_evwin_free(window);
	kp_pidwatch_free(watch);
	free(o.pids);
	free(o.cpus);
	free(o.funcs);
	return rc;
}
