/*
 * cmd_timeline.c - `kperf-bpf timeline`: one Chrome trace-event file of what a command or
 * some processes do: syscalls, CPU samples with stacks, mstx marks and ranges, per process
 * and thread, on one clock (KperfTimeline*, include/kperf/timeline.h).
 *
 *   kperf-bpf timeline [-a | -p PID,...] [-F HZ] [-d SECONDS] [--no-syscalls] [--no-samples]
 *                      [--no-markers] [--off-cpu] [--off-cpu-min US] [--memory]
 *                      [--mem-big BYTES] [--probe-file FILE]...
 *                      [-o FILE] [-- COMMAND ARGS...]
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <signal.h>
#include <unistd.h>

#include "cli.h"
#include "core/core.h"
#include "kperf/kperf.h"
#include "kperf/timeline.h"

struct timeline_opts {
	int *pids;
	int npids;
	unsigned freq;
	long duration_ms;
	bool all, no_syscalls, no_samples, no_markers, off_cpu, memory;
	unsigned long long mem_big;
	unsigned off_cpu_min_us;
	const char **probe_files;
	unsigned nprobe_files;
	const char *output;
	char **command;
};

static void usage(FILE *f)
{
	fputs("usage: kperf-bpf timeline [options] [-- COMMAND [ARGS...]]\n"
	      "\n"
	      "Write one Chrome trace-event JSON file (ui.perfetto.dev, chrome://tracing,\n"
	      "speedscope) of a command or of processes and their children: syscalls with\n"
	      "their return value and duration, CPU samples with their stacks, and the mstx\n"
	      "marks and ranges of libkperf-bpf, per process and thread, on one clock.\n"
	      "\n"
	      "  -p, --pid PID,...       these processes (and the children they fork)\n"
	      "  -a, --all-cpus          every process (those started later too; not\n"
	      "                          kperf-bpf's own syscalls), until -d or Ctrl-C\n"
	      "  -F, --freq HZ           CPU samples per second and thread (default 999)\n"
	      "  -d, --duration SECONDS  stop after this long\n"
	      "      --no-syscalls       leave out the syscalls\n"
	      "      --no-samples        leave out the CPU samples\n"
	      "      --no-markers        leave out the mstx marks and ranges\n"
	      "      --off-cpu           the slices threads spend off the CPU: \"blocked\"\n"
	      "                          (waiting for something) or \"preempted\" (waiting for\n"
	      "                          a CPU), with the user stack they left the CPU with\n"
	      "      --off-cpu-min US    with --off-cpu: leave out slices shorter than this\n"
	      "                          many microseconds (counted; default 50)\n"
	      "      --memory            the heap in use of each process as a counter track,\n"
	      "                          and its large allocations as instant events\n"
	      "      --mem-big BYTES     with --memory: what a large allocation is (default\n"
	      "                          1048576)\n"
	      "      --probe-file FILE   a file holding the mstx probes that kperf-bpf would\n"
	      "                          not find itself (libkperf-bpf.so elsewhere); repeatable\n"
	      "  -o, --output FILE       where to write the trace (default timeline.json;\n"
	      "                          - for standard output)\n"
	      "  -h, --help              this text\n",
	      f);
}

static int parse(int argc, char **argv, struct timeline_opts *o)
{
	enum {
		OPT_NO_SYSCALLS = 256,
		OPT_NO_SAMPLES,
		OPT_NO_MARKERS,
		OPT_OFF_CPU,
		OPT_OFF_CPU_MIN,
		OPT_MEMORY,
		OPT_MEM_BIG,
		OPT_PROBE
	};
	static const struct option longopts[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "all-cpus", no_argument, NULL, 'a' },
		{ "freq", required_argument, NULL, 'F' },
		{ "duration", required_argument, NULL, 'd' },
		{ "no-syscalls", no_argument, NULL, OPT_NO_SYSCALLS },
		{ "no-samples", no_argument, NULL, OPT_NO_SAMPLES },
		{ "no-markers", no_argument, NULL, OPT_NO_MARKERS },
		{ "off-cpu", no_argument, NULL, OPT_OFF_CPU },
		{ "off-cpu-min", required_argument, NULL, OPT_OFF_CPU_MIN },
		{ "memory", no_argument, NULL, OPT_MEMORY },
		{ "mem-big", required_argument, NULL, OPT_MEM_BIG },
		{ "probe-file", required_argument, NULL, OPT_PROBE },
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char **files;
	char *end;
	long v;
	int c;

	o->output = "timeline.json";
	optind = 1;
	while ((c = getopt_long(argc, argv, "+p:aF:d:o:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'p':
			if (kp_cli_opt_pids("timeline", optarg, &o->pids, &o->npids))
				return -1;
			break;
		case 'a':
			o->all = true;
			break;
		case 'F':
			errno = 0;
			v = strtol(optarg, &end, 10);
			if (*end || end == optarg || errno || v <= 0 || v > 100000) {
				fprintf(stderr,
					"kperf-bpf timeline: -F wants samples per second from 1 to "
					"100000, not '%s'\n",
					optarg);
				return -1;
			}
			o->freq = (unsigned)v;
			break;
		case 'd':
			if (kp_cli_opt_seconds("timeline", 'd', optarg, &o->duration_ms))
				return -1;
			break;
		case OPT_NO_SYSCALLS:
			o->no_syscalls = true;
			break;
		case OPT_NO_SAMPLES:
			o->no_samples = true;
			break;
		case OPT_NO_MARKERS:
			o->no_markers = true;
			break;
		case OPT_OFF_CPU:
			o->off_cpu = true;
			break;
		case OPT_MEMORY:
			o->memory = true;
			break;
		case OPT_MEM_BIG:
			errno = 0;
			v = strtol(optarg, &end, 10);
			if (*end || end == optarg || errno || v <= 0) {
				fprintf(stderr,
					"kperf-bpf timeline: --mem-big wants a size in bytes > 0, not "
					"'%s'\n",
					optarg);
				return -1;
			}
			o->mem_big = (unsigned long long)v;
			break;
		case OPT_OFF_CPU_MIN:
			errno = 0;
			v = strtol(optarg, &end, 10);
			if (*end || end == optarg || errno || v <= 0 || v > 60000000) {
				fprintf(stderr,
					"kperf-bpf timeline: --off-cpu-min wants microseconds from 1 "
					"to 60000000, not '%s'\n",
					optarg);
				return -1;
			}
			o->off_cpu_min_us = (unsigned)v;
			break;
		case OPT_PROBE:
			files = realloc(o->probe_files, (o->nprobe_files + 1) * sizeof(*files));
			if (!files) {
				fprintf(stderr, "kperf-bpf timeline: out of memory\n");
				return -1;
			}
			o->probe_files = files;
			o->probe_files[o->nprobe_files++] = optarg;
			break;
		case 'o':
			o->output = optarg;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			return -1;
		}
	}
	if (kp_cli_command("timeline", argc, argv, &o->command))
		return -1;
	if ((o->command != NULL) + (o->npids > 0) + o->all > 1) {
		fprintf(stderr, "kperf-bpf timeline: give one of -a, -p or a command, not %s\n",
			!o->all	 ? "-p and a command" :
			o->npids ? "-a and -p" :
				   "-a and a command");
		return -1;
	}
	if (!o->command && !o->npids && !o->all) {
		fprintf(stderr, "kperf-bpf timeline: give the processes (-p PID), a command "
				"to run (-- COMMAND) or -a (every process)\n");
		return -1;
	}
	if (o->all && o->memory) {
		fprintf(stderr, "kperf-bpf timeline: --memory follows given processes (-p or a "
				"command), not -a\n");
		return -1;
	}
	if (o->no_syscalls && o->no_samples && o->no_markers && !o->off_cpu && !o->memory) {
		fprintf(stderr, "kperf-bpf timeline: --no-syscalls, --no-samples and "
				"--no-markers leave nothing to record\n");
		return -1;
	}
	if (o->mem_big && !o->memory) {
		fprintf(stderr, "kperf-bpf timeline: --mem-big goes with --memory\n");
		return -1;
	}
	if (o->off_cpu_min_us && !o->off_cpu) {
		fprintf(stderr, "kperf-bpf timeline: --off-cpu-min goes with --off-cpu\n");
		return -1;
	}
	if (!strcmp(o->output, "-"))
		o->output = NULL;
	return 0;
}

/* the file a command name runs, looked up in $PATH as execvp does; NULL if not found */
static char *command_path(const char *name)
{
	const char *path = getenv("PATH"), *p, *q;
	char buf[PATH_MAX];

	if (strchr(name, '/'))
		return strdup(name);
	for (p = path ? path : "/usr/local/bin:/usr/bin:/bin"; *p; p = *q ? q + 1 : q) {
		q = strchrnul(p, ':');
		snprintf(buf, sizeof(buf), "%.*s/%s", (int)(q - p), q > p ? p : ".", name);
		if (access(buf, X_OK) == 0)
			return strdup(buf);
	}
	return NULL;
}

int cmd_timeline(int argc, char **argv)
{
	struct timeline_opts o = { 0 };
	struct KperfTimelineOpts to = KPERF_OPTS(KperfTimelineOpts);
	struct KperfTimelineStats st;
	struct kp_launch launch = { .pid = -1, .go_fd = -1, .err_fd = -1 };
	struct kp_pidwatch *watch = NULL;
	bool launched = false;
	char *cmd_path = NULL;
	int td = -1, rc = 1, status = 0, child_pid, err;
	double start_ms;

	if (parse(argc, argv, &o))
		goto done;
	kp_cli_catch_signals();
	if (o.command) {
		cmd_path = command_path(o.command[0]);
		err = kp_launch_prepare(o.command, &launch);
		if (err) {
			fprintf(stderr, "kperf-bpf timeline: cannot start %s: %s\n", o.command[0],
				strerror(-err));
			goto done;
		}
		child_pid = launch.pid;
		to.pidList = &child_pid;
		to.numPid = 1;
		to.fromExec = 1;
		to.command = cmd_path;
	} else {
		to.pidList = o.pids;
		to.numPid = (unsigned)o.npids;
	}
	to.allPids = o.all;
	to.freq = o.freq;
	to.noSyscalls = o.no_syscalls;
	to.noSamples = o.no_samples;
	to.noMarkers = o.no_markers;
	to.offCpu = o.off_cpu;
	to.offCpuMinUs = o.off_cpu_min_us;
	to.memory = o.memory;
	to.memBigBytes = o.mem_big;
	to.probeFiles = o.probe_files;
	to.numProbeFiles = o.nprobe_files;
	td = KperfTimelineOpen(&to);
	if (td < 0) {
		fprintf(stderr, "kperf-bpf timeline: %s\n", Perror());
		goto done;
	}
	kp_cli_warnings("timeline", NULL);
	kp_cli_pids_to_processes(o.pids, o.npids);
	if (kp_cli_watch_pids("timeline", o.pids, o.npids, &watch))
		goto done;
	if (KperfTimelineEnable(td)) {
		fprintf(stderr, "kperf-bpf timeline: %s\n", Perror());
		goto done;
	}
	start_ms = kp_cli_elapsed_ms();
	if (o.all)
		fprintf(stderr, "kperf-bpf timeline: collecting every process; %s to stop\n",
			o.duration_ms ? "-d or Ctrl-C" : "Ctrl-C");
	if (o.command) {
		err = kp_launch_go(&launch);
		if (err) {
			fprintf(stderr, "kperf-bpf timeline: cannot run %s: %s\n", o.command[0],
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
	KperfTimelineDisable(td);
	if (KperfTimelineWrite(td, o.output)) {
		fprintf(stderr, "kperf-bpf timeline: %s\n", Perror());
		goto done;
	}
	if (KperfTimelineGetStats(td, &st) == 0) {
		fprintf(stderr,
			" %s: %" PRIu64 " syscalls, %" PRIu64 " samples, %" PRIu64
			" marks, %" PRIu64 " ranges",
			o.output ? o.output : "standard output", st.syscalls, st.samples, st.marks,
			st.ranges);
		if (st.openRanges)
			fprintf(stderr, " (%" PRIu64 " not ended)", st.openRanges);
		if (o.memory)
			fprintf(stderr, ", %" PRIu64 " heap changes, %" PRIu64 " large allocations",
				st.heapChanges, st.largeAllocs);
		if (o.off_cpu)
			fprintf(stderr,
				", %" PRIu64 " off-CPU slices (%" PRIu64 " shorter left out)",
				st.offCpuSlices, st.offCpuShort);
		fprintf(stderr, ", %.2f s\n", (kp_cli_elapsed_ms() - start_ms) / 1e3);
		if (st.dropped || st.notKept)
			fprintf(stderr,
				"kperf-bpf timeline: warning: %" PRIu64 " records lost in the "
				"kernel (ring buffers full), %" PRIu64 " events over the limit\n",
				st.dropped, st.notKept);
	}
	rc = 0;
	if (o.command && !launched) {
		rc = kp_cli_exit_code(status);
	} else if (launched) {
		fprintf(stderr, "kperf-bpf timeline: %s (pid %d) was still running: stopped\n",
			o.command[0], launch.pid);
		kill(launch.pid, SIGTERM);
	}
done:
	if (launch.pid > 0 && launch.go_fd >= 0)
		kp_launch_abort(&launch);
	if (td >= 0)
		KperfTimelineClose(td);
	kp_pidwatch_free(watch);
	free(cmd_path);
	free(o.pids);
	free(o.probe_files);
	return rc;
}
