/*
 * cmd_record.c - `kperf-bpf record`: a CPU profile, aggregated by stack in the kernel; with
 * --off-cpu the time threads spend blocked instead, with --wall both in one unit (libkperf's
 * blocked sampling).
 *
 *   kperf-bpf record [-e EVENT] [-F HZ | -c PERIOD] [-g] [-p PID,... | -a | -C CPUS]
 *                    [--off-cpu | --wall] [-d SECONDS] [--dwarf [--no-inline] |
 *                    --no-symbols] [--top N] [-o FILE] [--format folded|pprof|json|dump|svg]
 *                    [-- COMMAND ARGS...]
 * It prints the hottest functions with their share when it ends, and writes the profile
 * in the chosen format (to FILE, or to stdout, the summary then going to stderr). As perf
 * record, it records every hit of a tracepoint unless -F or -c says otherwise.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "core/core.h"
#include "events/events.h"
#include "export/export.h"
#include "kperf/kperf.h"

enum out_format { OUT_NONE, OUT_FOLDED, OUT_PPROF, OUT_JSON, OUT_DUMP, OUT_SVG };

enum record_mode { MODE_CPU, MODE_OFF_CPU, MODE_WALL };

struct record_opts {
	char *event;
	bool event_set, rate_set;
	enum record_mode mode;
	unsigned freq, period;
	bool callstack;
	unsigned call_graph; /* KPERF_CALL_GRAPH_* */
	unsigned python_frames; /* KPERF_PY_FRAMES_* */
	bool unwind_stats; /* --unwind-stats */
	int *pids;
	int npids;
	int *cpus;
	int ncpus;
	bool all;
	long duration_ms;
	enum SymbolMode symbols;
	bool no_inline;
	int top;
	const char *output;
	enum out_format format;
	char **command;
};

static void usage(FILE *f)
{
	fputs("usage: kperf-bpf record [options] [-- COMMAND [ARGS...]]\n"
	      "\n"
	      "Sample a command, processes, CPUs or the whole system and print the hottest\n"
	      "functions; samples are counted per distinct stack in the kernel.\n"
	      "\n"
	      "  -e, --event EVENT       sampled event (default cpu-clock)\n"
	      "  -F, --freq HZ           samples per second (default 999; a tracepoint:\n"
	      "                          every hit, as -c 1)\n"
	      "  -c, --count PERIOD      a sample every PERIOD events instead of -F\n"
	      "  -g                      whole kernel and user stacks (default: top frame only)\n"
	      "      --call-graph MODE   -g, user stacks unwound by MODE: dwarf (the default:\n"
	      "                          from each file's .eh_frame, complete without frame\n"
	      "                          pointers) or fp (frame pointers only)\n"
	      "      --python MODE       -g dwarf, CPython 3.11 processes: on (the default: the\n"
	      "                          Python functions in place of the interpreter's\n"
	      "                          frames), interp (both), off (native frames only)\n"
	      "      --unwind-stats      how the user frames were found (.eh_frame rows,\n"
	      "                          .debug_frame, PLT stubs, frame pointers), on stderr\n"
	      "  -p, --pid PID,...       these processes (all threads, and their children)\n"
	      "  -a, --all-cpus          every process (the default without -p or a command;\n"
	      "                          with a command: while it runs)\n"
	      "  -C, --cpu CPUS          only these cpus\n"
	      "      --off-cpu           the time threads spend blocked, by stack (kernel and\n"
	      "                          user frames), instead of CPU samples; needs -p or a\n"
	      "                          command\n"
	      "      --wall              on-CPU samples and blocked time in one profile (ns)\n"
	      "  -d, --duration SECONDS  stop after this long\n"
	      "      --dwarf             source file and line of each frame (DWARF), and a\n"
	      "                          frame of its own for each inlined call\n"
	      "      --no-inline         with --dwarf: no frames for inlined calls\n"
	      "      --no-symbols        no symbol resolution (addresses only in pprof/json)\n"
	      "      --top N             functions in the summary (default 20)\n"
	      "  -o, --output FILE       write the profile to FILE\n"
	      "      --format FMT        folded, pprof (gzipped profile.proto), json, dump or svg\n"
	      "                          (an interactive flame graph; default: pprof for a FILE\n"
	      "                          ending in .pb.gz, svg for .svg, else folded)\n"
	      "  -h, --help              this text\n",
	      f);
}

static enum out_format parse_format(const char *s)
{
	if (!strcmp(s, "folded"))
		return OUT_FOLDED;
	if (!strcmp(s, "pprof"))
		return OUT_PPROF;
	if (!strcmp(s, "json"))
		return OUT_JSON;
	if (!strcmp(s, "dump"))
		return OUT_DUMP;
	if (!strcmp(s, "svg"))
		return OUT_SVG;
	return OUT_NONE;
}

/* perf record samples a tracepoint at every hit unless given a rate (-F, -c): its period
 * is 1 then, where libkperf (and a task of the library) takes one hit in 4000 */
static void default_rate(struct record_opts *o)
{
	struct kp_event ev;

	if (o->rate_set || kp_event_parse(o->event, false, &ev))
		return; /* an unknown event is PmuOpen's to report */
	if (ev.kind == KP_EV_TRACEPOINT) {
		o->freq = 0;
		o->period = 1;
	}
	kp_event_free(&ev);
}

/* --off-cpu and --wall: what they take and what they do not */
static int check_time_mode(struct record_opts *o)
{
	const char *name = o->mode == MODE_OFF_CPU ? "--off-cpu" : "--wall";

	if (o->event_set) {
		fprintf(stderr, "kperf-bpf record: %s records %s, not an event: drop -e %s\n", name,
			o->mode == MODE_OFF_CPU ? "the time threads spend blocked" :
						  "cpu-clock samples and the time blocked, in ns",
			o->event);
		return -1;
	}
	if (o->mode == MODE_OFF_CPU && o->rate_set) {
		fprintf(stderr, "kperf-bpf record: --off-cpu takes no sample rate (-F, -c): every "
				"block is counted\n");
		return -1;
	}
	if (o->all || o->ncpus || (!o->npids && !o->command)) {
		fprintf(stderr,
			"kperf-bpf record: %s follows processes and their threads: give -p PID or "
			"a command (not -a or -C)\n",
			name);
		return -1;
	}
	/* a blocked time without its stack says little: take whole stacks */
	o->callstack = true;
	o->event = o->mode == MODE_OFF_CPU ? "off-cpu" : "wall";
	return 0;
}

/* --unwind-stats: which method found the user frames of the stacks taken, and the tables */
static void print_unwind_stats(int pd)
{
	struct KperfUnwindStats u;

	if (KperfPmuGetUnwindStats(pd, &u))
		return;
	fprintf(stderr,
		"unwind: %llu user stacks from tables; frames: %llu .eh_frame, %llu .debug_frame, "
		"%llu plt, %llu fp (%llu through signal frames)\n"
		"unwind: by frame pointers: %llu stacks before their tables loaded, %llu without "
		"user registers; %llu cut at new code, %llu at the frame limit\n"
		"unwind: %llu tables, %llu rows, %llu KiB in the kernel, %llu process entries\n",
		u.stacks, u.framesEhFrame, u.framesDebugFrame, u.framesPlt, u.framesFp,
		u.framesSignal, u.stacksNotLoaded, u.stacksNoRegs, u.stacksUnknownMap,
		u.stacksTruncated, u.tables, u.rows, (u.rowBytes + 1023) / 1024, u.processes);
}

static int parse(int argc, char **argv, struct record_opts *o)
{
	enum {
		OPT_DWARF = 256,
		OPT_NOSYM,
		OPT_TOP,
		OPT_FORMAT,
		OPT_NOINLINE,
		OPT_OFFCPU,
		OPT_WALL,
		OPT_CALL_GRAPH,
		OPT_PYTHON,
		OPT_UNWIND_STATS
	};
	static const struct option longopts[] = {
		{ "event", required_argument, NULL, 'e' },
		{ "freq", required_argument, NULL, 'F' },
		{ "count", required_argument, NULL, 'c' },
		{ "call-graph", required_argument, NULL, OPT_CALL_GRAPH },
		{ "python", required_argument, NULL, OPT_PYTHON },
		{ "pid", required_argument, NULL, 'p' },
		{ "all-cpus", no_argument, NULL, 'a' },
		{ "cpu", required_argument, NULL, 'C' },
		{ "duration", required_argument, NULL, 'd' },
		{ "dwarf", no_argument, NULL, OPT_DWARF },
		{ "no-inline", no_argument, NULL, OPT_NOINLINE },
		{ "no-symbols", no_argument, NULL, OPT_NOSYM },
		{ "top", required_argument, NULL, OPT_TOP },
		{ "output", required_argument, NULL, 'o' },
		{ "format", required_argument, NULL, OPT_FORMAT },
		{ "off-cpu", no_argument, NULL, OPT_OFFCPU },
		{ "wall", no_argument, NULL, OPT_WALL },
		{ "unwind-stats", no_argument, NULL, OPT_UNWIND_STATS },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char *end;
	long v;
	int c;

	o->event = "cpu-clock";
	o->freq = 999;
	o->symbols = RESOLVE_ELF;
	o->top = 20;
	optind = 1;
	while ((c = getopt_long(argc, argv, "+e:F:c:gp:aC:d:o:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'e':
			o->event = optarg;
			o->event_set = true;
			break;
		case OPT_OFFCPU:
		case OPT_WALL:
			if (o->mode != MODE_CPU) {
				fprintf(stderr, "kperf-bpf record: --off-cpu and --wall are two "
						"profiles: choose one\n");
				return -1;
			}
			o->mode = c == OPT_OFFCPU ? MODE_OFF_CPU : MODE_WALL;
			break;
		case 'F':
		case 'c':
			v = strtol(optarg, &end, 10);
			if (*end || v <= 0 || v > 0x7fffffff) {
				fprintf(stderr, "kperf-bpf record: -%c wants a positive number\n",
					c);
				return -1;
			}
			o->rate_set = true;
			if (c == 'F') {
				o->freq = (unsigned)v;
				o->period = 0;
			} else {
				o->period = (unsigned)v;
				o->freq = 0;
			}
			break;
		case 'g':
			o->callstack = true;
			break;
		case OPT_PYTHON:
			if (!strcmp(optarg, "on")) {
				o->python_frames = KPERF_PY_FRAMES_ON;
			} else if (!strcmp(optarg, "interp")) {
				o->python_frames = KPERF_PY_FRAMES_KEEP_INTERP;
			} else if (!strcmp(optarg, "off")) {
				o->python_frames = KPERF_PY_FRAMES_OFF;
			} else {
				fprintf(stderr,
					"kperf-bpf record: --python is on, interp or off, not '%s'\n",
					optarg);
				return -1;
			}
			break;
		case OPT_UNWIND_STATS:
			o->unwind_stats = true;
			break;
		case OPT_CALL_GRAPH:
			if (!strcmp(optarg, "dwarf")) {
				o->call_graph = KPERF_CALL_GRAPH_DWARF;
			} else if (!strcmp(optarg, "fp")) {
				o->call_graph = KPERF_CALL_GRAPH_FP;
			} else {
				fprintf(stderr,
					"kperf-bpf record: --call-graph is dwarf or fp, not "
					"'%s'\n",
					optarg);
				return -1;
			}
			o->callstack = true;
			break;
		case 'p':
			if (kp_cli_opt_pids("record", optarg, &o->pids, &o->npids))
				return -1;
			break;
		case 'a':
			o->all = true;
			break;
		case 'C':
			if (kp_cli_opt_cpus("record", optarg, &o->cpus, &o->ncpus))
				return -1;
			break;
		case 'd':
			if (kp_cli_opt_seconds("record", 'd', optarg, &o->duration_ms))
				return -1;
			break;
		case OPT_DWARF:
			o->symbols = RESOLVE_ELF_DWARF;
			break;
		case OPT_NOSYM:
			o->symbols = NO_SYMBOL_RESOLVE;
			break;
		case OPT_NOINLINE:
			o->no_inline = true;
			break;
		case OPT_TOP:
			o->top = atoi(optarg);
			if (o->top <= 0) {
				fprintf(stderr, "kperf-bpf record: --top wants a number > 0\n");
				return -1;
			}
			break;
		case 'o':
			o->output = optarg;
			break;
		case OPT_FORMAT:
			o->format = parse_format(optarg);
			if (o->format == OUT_NONE) {
				fprintf(stderr,
					"kperf-bpf record: --format is folded, pprof, json, dump "
					"or svg, not '%s'\n",
					optarg);
				return -1;
			}
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			return -1;
		}
	}
	if (kp_cli_command("record", argc, argv, &o->command))
		return -1;
	if (o->no_inline && o->symbols != RESOLVE_ELF_DWARF) {
		fprintf(stderr, "kperf-bpf record: --no-inline goes with --dwarf (inlined calls "
				"are known from DWARF only)\n");
		return -1;
	}
	/* -a or -C with a command: sample those CPUs for as long as the command runs (perf) */
	if ((o->npids > 0) + o->all > 1 || (o->npids && o->command)) {
		fprintf(stderr, "kperf-bpf record: -p does not combine with -a or a command\n");
		return -1;
	}
	if (o->mode != MODE_CPU && check_time_mode(o))
		return -1;
	if (o->output && o->format == OUT_NONE) {
		size_t len = strlen(o->output);

		o->format = len > 6 && !strcmp(o->output + len - 6, ".pb.gz") ? OUT_PPROF :
			    len > 4 && !strcmp(o->output + len - 4, ".svg")   ? OUT_SVG :
										OUT_FOLDED;
	}
	if (o->format == OUT_PPROF && !o->output) {
		fprintf(stderr, "kperf-bpf record: pprof is binary: give -o FILE\n");
		return -1;
	}
	if (o->format == OUT_DUMP && !o->output) {
		fprintf(stderr, "kperf-bpf record: dump writes a file: give -o FILE\n");
		return -1;
	}
	default_rate(o);
	return 0;
}

/* the profile in the chosen format; 0, or -1 with the error recorded (a failed write of
 * <out> is found by its commit) */
static int write_profile(const struct record_opts *o, struct kp_out *out, struct PmuData *d, int n,
			 const struct kp_profile_meta *m)
{
	FILE *f;

	if (o->format == OUT_NONE)
		return 0;
	f = kp_out_file(out);
	switch (o->format) {
	case OUT_NONE:
		return 0;
	case OUT_PPROF:
		return kp_export_pprof(f, d, n, m) ? -1 : 0;
	case OUT_DUMP:
		return kp_dump_write(f, d, (unsigned)n, o->symbols == RESOLVE_ELF_DWARF) ? -1 : 0;
	case OUT_JSON:
		return kp_export_profile_json(f, d, n, m) ? -1 : 0;
	case OUT_FOLDED:
		kp_export_folded_by(f, d, n, m);
		return 0;
	case OUT_SVG:
		return kp_export_svg(f, d, n, m) ? -1 : 0;
	}
	return 0;
}

int cmd_record(int argc, char **argv)
{
	struct record_opts o = { 0 };
	struct kp_launch launch = { .pid = -1, .go_fd = -1, .err_fd = -1 };
	struct PmuAttr attr = { 0 };
	struct kp_profile_meta meta = { 0 };
	struct KperfPmuOpts popts = KPERF_OPTS(KperfPmuOpts, .aggregate = 1);
	struct kp_hot_list hot = { 0 };
	struct kp_pidwatch *watch = NULL;
	struct kp_out *prof = NULL, *summary = NULL;
	struct PmuData *d = NULL;
	bool launched = false;
	char *evts[1];
	int pd = -1, rc = 1, n, status = 0, child_pid, err;
	double start_ms;
	struct timespec wall;

	if (parse(argc, argv, &o))
		goto done;
	/* the profile to -o or to stdout; the summary to stdout, or to stderr when stdout has
	 * the profile. Opened first: a path that cannot be written fails before the sampling */
	if ((o.format != OUT_NONE && kp_out_open(o.output, &prof)) ||
	    ((o.format == OUT_NONE || o.output) && kp_out_open(NULL, &summary))) {
		fprintf(stderr, "kperf-bpf record: %s\n", Perror());
		goto done;
	}
	kp_cli_catch_signals();
	evts[0] = o.event;
	if (o.mode == MODE_CPU) {
		attr.evtList = evts;
		attr.numEvt = 1;
	} else {
		attr.blockedSample = 1;
		popts.offCpuOnly = o.mode == MODE_OFF_CPU;
		popts.blockedKernelStack = 1;
		meta.weight = KP_WEIGHT_TIME;
		meta.mark_blocked = o.mode == MODE_WALL;
	}
	attr.useFreq = o.freq > 0;
	if (o.freq)
		attr.freq = o.freq;
	else
		attr.period = o.period;
	attr.callStack = o.callstack;
	popts.callGraph = o.call_graph;
	popts.pythonFrames = o.python_frames;
	attr.symbolMode = o.symbols;
	attr.cpuList = o.cpus;
	attr.numCpu = (unsigned)o.ncpus;
	if (o.command) {
		err = kp_launch_prepare(o.command, &launch);
		if (err) {
			fprintf(stderr, "kperf-bpf record: cannot start %s: %s\n", o.command[0],
				strerror(-err));
			goto done;
		}
		if (!o.all && !o.ncpus) {
			child_pid = launch.pid;
			attr.pidList = &child_pid;
			attr.numPid = 1;
			attr.enableOnExec = 1;
		}
	} else {
		kp_cli_pids_to_processes(o.pids, o.npids);
		attr.pidList = o.pids;
		attr.numPid = (unsigned)o.npids;
	}
	/* samples counted per distinct stack in the kernel: a read costs the number of stacks;
	 * inlined calls are frames of their own when lines are read (perf report --inline) */
	popts.inlineFrames = o.symbols == RESOLVE_ELF_DWARF && !o.no_inline;
	pd = KperfOpen(SAMPLING, &attr, &popts);
	if (pd < 0) {
		fprintf(stderr, "kperf-bpf record: %s\n", Perror());
		goto done;
	}
	if (kp_cli_watch_pids("record", o.pids, o.npids, &watch))
		goto done;
	if (PmuEnable(pd)) {
		fprintf(stderr, "kperf-bpf record: %s\n", Perror());
		goto done;
	}
	clock_gettime(CLOCK_REALTIME, &wall);
	meta.start_ns = (uint64_t)wall.tv_sec * 1000000000ULL + (uint64_t)wall.tv_nsec;
	start_ms = kp_cli_elapsed_ms();
	if (o.command) {
		err = kp_launch_go(&launch);
		if (err) {
			fprintf(stderr, "kperf-bpf record: cannot run %s: %s\n", o.command[0],
				strerror(-err));
			rc = 127;
			launch.pid = -1;
			goto done;
		}
		launched = true;
	}
	for (;;) {
		struct timespec tick = { 0, 50 * 1000000L };

		nanosleep(&tick, NULL);
		if (kp_cli_collection_over(&launch, &launched, &status, watch, start_ms,
					   o.duration_ms))
			break;
	}
	PmuDisable(pd);
	meta.duration_s = (kp_cli_elapsed_ms() - start_ms) / 1e3;
	meta.event = o.event;
	n = PmuRead(pd, &d);
	if (n < 0) {
		fprintf(stderr, "kperf-bpf record: %s\n", Perror());
		goto done;
	}
	kp_cli_warnings("record", NULL);
	if (write_profile(&o, prof, d, n, &meta)) {
		if (Perrorno())
			fprintf(stderr, "kperf-bpf record: %s\n", Perror());
		goto done;
	}
	err = kp_out_commit(prof);
	prof = NULL;
	if (err) {
		fprintf(stderr, "kperf-bpf record: %s\n", Perror());
		goto done;
	}
	if (kp_hot_functions_by(d, n, meta.weight, &hot) == 0) {
		FILE *rep = summary ? kp_out_file(summary) : stderr;

		kp_report_hottest(rep, &hot, o.top);
		fprintf(rep, "\n %s, %.2f s%s%s\n", o.event, meta.duration_s,
			o.output ? ", profile written to " : "", o.output ? o.output : "");
		kp_hot_list_free(&hot);
	}
	err = kp_out_commit(summary);
	summary = NULL;
	if (err) {
		fprintf(stderr, "kperf-bpf record: %s\n", Perror());
		goto done;
	}
	if (o.unwind_stats)
		print_unwind_stats(pd);
	rc = 0;
	if (o.command && !launched)
		rc = kp_cli_exit_code(status);
done:
	if (o.command && pd < 0 && launch.pid > 0)
		kp_launch_abort(&launch);
	PmuDataFree(d);
	if (pd >= 0)
		PmuClose(pd);
	kp_out_discard(prof);
	kp_out_discard(summary);
	kp_pidwatch_free(watch);
	free(o.pids);
	free(o.cpus);
	return rc;
}
