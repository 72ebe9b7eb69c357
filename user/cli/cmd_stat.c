/*
 * cmd_stat.c - `kperf-bpf stat`: count events like `perf stat`.
 *
 *   kperf-bpf stat [-e EVENTS] [-p PID,...|-C CPUS|-a] [-I MS] [-d SECONDS]
 *                  [--format table|json|csv] [-o FILE] [-- COMMAND ARGS...]
 * With a command, counting starts at its exec (enable_on_exec) and includes its threads
 * and children; without -p, -C or a command it counts system-wide until Ctrl-C or -d.
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

static const char *const default_events[] = {
	"task-clock", "context-switches", "cpu-migrations", "page-faults",
	"cycles",     "instructions",	  "branches",	    "branch-misses",
};

struct stat_opts {
	char **events;
	int nevents;
	int *pids;
	int npids;
	int *cpus;
	int ncpus;
	bool all;
	long interval_ms;
	long duration_ms;
	int format;
	const char *output;
	char **command;
};

static void usage(FILE *f)
{
	fputs("usage: kperf-bpf stat [options] [-- COMMAND [ARGS...]]\n"
	      "\n"
	      "Count events of a command, of processes, of CPUs, or of the whole system.\n"
	      "\n"
	      "  -e, --event EVENTS      comma-separated events (default: task-clock,\n"
	      "                          context-switches, cpu-migrations, page-faults, cycles,\n"
	      "                          instructions, branches, branch-misses)\n"
	      "  -p, --pid PID,...       count these processes (all threads, and their children)\n"
	      "  -C, --cpu CPUS          count on these cpus (e.g. 0-3)\n"
	      "  -a, --all-cpus          system-wide (the default without -p, -C or a command;\n"
	      "                          with a command: while it runs)\n"
	      "  -I, --interval-print MS print the counts every MS milliseconds\n"
	      "  -d, --duration SECONDS  stop after this long\n"
	      "  -o, --output FILE       write the report to FILE\n"
	      "      --format FMT        table (default), json or csv\n"
	      "  -h, --help              this text\n"
	      "\n"
	      "An event this machine has no PMU for is shown as <not supported>.\n",
	      f);
}

static int parse(int argc, char **argv, struct stat_opts *o)
{
	enum { OPT_FORMAT = 256 };
	static const struct option longopts[] = {
		{ "event", required_argument, NULL, 'e' },
		{ "pid", required_argument, NULL, 'p' },
		{ "cpu", required_argument, NULL, 'C' },
		{ "all-cpus", no_argument, NULL, 'a' },
		{ "interval-print", required_argument, NULL, 'I' },
		{ "duration", required_argument, NULL, 'd' },
		{ "output", required_argument, NULL, 'o' },
		{ "format", required_argument, NULL, OPT_FORMAT },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char *end;
	int c;

	o->format = KP_FORMAT_TABLE;
	optind = 1;
	while ((c = getopt_long(argc, argv, "+e:p:C:aI:d:o:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'e':
			free(o->events);
			o->nevents = kp_cli_split_events(optarg, &o->events);
			if (o->nevents <= 0) {
				fprintf(stderr,
					"kperf-bpf stat: -e wants events like task-clock,page-faults\n");
				return -1;
			}
			break;
		case 'p':
			if (kp_cli_opt_pids("stat", optarg, &o->pids, &o->npids))
				return -1;
			break;
		case 'C':
			if (kp_cli_opt_cpus("stat", optarg, &o->cpus, &o->ncpus))
				return -1;
			break;
		case 'a':
			o->all = true;
			break;
		case 'I':
			o->interval_ms = strtol(optarg, &end, 10);
			if (*end || o->interval_ms < 10) {
				fprintf(stderr, "kperf-bpf stat: -I wants milliseconds >= 10\n");
				return -1;
			}
			break;
		case 'd':
			if (kp_cli_opt_seconds("stat", 'd', optarg, &o->duration_ms))
				return -1;
			break;
		case 'o':
			o->output = optarg;
			break;
		case OPT_FORMAT:
			o->format = kp_format_parse(optarg);
			if (o->format < 0) {
				fprintf(stderr,
					"kperf-bpf stat: --format is table, json or csv, not '%s'\n",
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
	if (kp_cli_command("stat", argc, argv, &o->command))
		return -1;
	/* -a or -C with a command: count those CPUs for as long as the command runs (perf) */
	if ((o->npids > 0) + o->all > 1 || (o->npids && o->command)) {
		fprintf(stderr, "kperf-bpf stat: -p does not combine with -a or a command\n");
		return -1;
	}
	return 0;
}

/* which of the events exist here: unknown names are an error, missing PMUs are not */
static int check_events(struct stat_opts *o, bool *supported)
{
	int i, err;

	for (i = 0; i < o->nevents; i++) {
		struct kp_event ev;

		kp_clear();
		err = kp_event_parse(o->events[i], true, &ev);
		supported[i] = err == 0;
		if (supported[i]) {
			kp_event_free(&ev);
		} else if (err != -ENODEV) {
			fprintf(stderr, "kperf-bpf stat: %s\n", Perror());
			return -1;
		}
	}
	return 0;
}

/* sum the records of each event into rows (in the order of the event list) */
static void fill_rows(const struct stat_opts *o, const bool *supported, struct PmuData *d, int n,
		      struct kp_count_row *rows)
{
	int i, j;

	for (i = 0; i < o->nevents; i++) {
		double run = 0;
		int runs = 0;

		rows[i] = (struct kp_count_row){ .evt = o->events[i],
						 .supported = supported[i],
						 .running = -1 };
		for (j = 0; j < n; j++) {
			if (strcmp(d[j].evt, o->events[i]))
				continue;
			rows[i].count += d[j].count;
			if (d[j].countPercent >= 0) {
				run += d[j].countPercent;
				runs++;
			}
		}
		if (runs)
			rows[i].running = run / runs;
	}
}

/* add an interval's rows to the totals; the running fraction is averaged over reads */
static void accumulate(struct kp_count_row *total, const struct kp_count_row *rows, int n,
		       int reads)
{
	int i;

	for (i = 0; i < n; i++) {
		total[i].evt = rows[i].evt;
		total[i].supported = rows[i].supported;
		total[i].count += rows[i].count;
		if (rows[i].running < 0)
			continue;
		total[i].running =
			total[i].running < 0 ?
				rows[i].running :
				(total[i].running * reads + rows[i].running) / (reads + 1);
	}
}

/* "'cmd arg1 arg2'" (cut to fit) */
static void describe_command(char *const *argv, char *buf, size_t size)
{
	size_t len = 1;
	int i;

	snprintf(buf, size, "'");
	for (i = 0; argv[i] && len + 1 < size; i++)
		len += (size_t)snprintf(buf + len, size - len, "%s%s", i ? " " : "", argv[i]);
	if (len + 1 >= size)
		snprintf(buf + size - 5, 5, "...'");
	else
		snprintf(buf + len, size - len, "'");
}

int cmd_stat(int argc, char **argv)
{
	struct stat_opts o = { 0 };
	struct kp_launch launch = { .pid = -1, .go_fd = -1, .err_fd = -1 };
	struct PmuAttr attr = { 0 };
	struct kp_count_row *rows = NULL, *totals = NULL;
	struct kp_count_meta meta = { 0 };
	struct PmuData *d = NULL;
	struct kp_pidwatch *watch = NULL;
	struct kp_out *report = NULL;
	bool *supported = NULL, launched = false;
	char **open_evts = NULL, target[256];
	int pd = -1, rc = 1, nopen = 0, i, n, status = 0, child_pid, err, reads = 0;
	double start_ms, last_ms;
	FILE *out;

	if (parse(argc, argv, &o))
		goto done;
	if (!o.nevents) {
		o.nevents = (int)(sizeof(default_events) / sizeof(default_events[0]));
		o.events = malloc(sizeof(default_events));
		if (!o.events)
			goto done;
		memcpy(o.events, default_events, sizeof(default_events));
	}
	supported = calloc((size_t)o.nevents, sizeof(*supported));
	rows = calloc((size_t)o.nevents, sizeof(*rows));
	totals = calloc((size_t)o.nevents, sizeof(*totals));
	open_evts = calloc((size_t)o.nevents, sizeof(*open_evts));
	if (!supported || !rows || !totals || !open_evts || check_events(&o, supported))
		goto done;
	for (i = 0; i < o.nevents; i++)
		totals[i].running = -1;
	for (i = 0; i < o.nevents; i++)
		if (supported[i])
			open_evts[nopen++] = o.events[i];
	if (!nopen) {
		fprintf(stderr,
			"kperf-bpf stat: none of the events is supported on this machine\n");
		goto done;
	}
	if (kp_out_open(o.output, &report)) {
		fprintf(stderr, "kperf-bpf stat: %s\n", Perror());
		goto done;
	}
	out = kp_out_file(report);
	kp_cli_catch_signals();
	attr.evtList = open_evts;
	attr.numEvt = (unsigned)nopen;
	attr.cpuList = o.cpus;
	attr.numCpu = (unsigned)o.ncpus;
	if (o.command) {
		err = kp_launch_prepare(o.command, &launch);
		if (err) {
			fprintf(stderr, "kperf-bpf stat: cannot start %s: %s\n", o.command[0],
				strerror(-err));
			goto done;
		}
		describe_command(o.command, target, sizeof(target));
		if (o.all || o.ncpus) {
			size_t len = strlen(target);

			snprintf(target + len, sizeof(target) - len, " (%s while it ran)",
				 o.ncpus ? "the given CPUs" : "system wide");
		} else {
			child_pid = launch.pid;
			attr.pidList = &child_pid;
			attr.numPid = 1;
			attr.enableOnExec = 1;
		}
	} else if (o.npids) {
		attr.pidList = o.pids;
		attr.numPid = (unsigned)o.npids;
		snprintf(target, sizeof(target), "process %d%s", o.pids[0],
			 o.npids > 1 ? " ..." : "");
	} else {
		snprintf(target, sizeof(target), "%s", o.ncpus ? "the given CPUs" : "system wide");
	}
	meta.target = target;

	pd = PmuOpen(COUNTING, &attr);
	if (pd < 0) {
		fprintf(stderr, "kperf-bpf stat: %s\n", Perror());
		goto done;
	}
	kp_cli_pids_to_processes(o.pids, o.npids);
	if (kp_cli_watch_pids("stat", o.pids, o.npids, &watch))
		goto done;
	if (PmuEnable(pd)) {
		fprintf(stderr, "kperf-bpf stat: %s\n", Perror());
		goto done;
	}
	start_ms = last_ms = kp_cli_elapsed_ms();
	if (o.command) {
		err = kp_launch_go(&launch);
		if (err) {
			fprintf(stderr, "kperf-bpf stat: cannot run %s: %s\n", o.command[0],
				strerror(-err));
			rc = 127;
			launch.pid = -1;
			goto done;
		}
		launched = true;
	}
	for (;;) {
		struct timespec tick = { 0, 20 * 1000000L };
		double now;

		nanosleep(&tick, NULL);
		now = kp_cli_elapsed_ms();
		if (o.interval_ms && now - last_ms >= (double)o.interval_ms) {
			last_ms = now;
			n = PmuRead(pd, &d);
			if (n >= 0) {
				fill_rows(&o, supported, d, n, rows);
				meta.interval_t_s = (now - start_ms) / 1e3;
				kp_report_counts(out, o.format, rows, o.nevents, &meta);
				accumulate(totals, rows, o.nevents, reads++);
				PmuDataFree(d);
			}
			if (kp_out_check(report)) {
				fprintf(stderr, "kperf-bpf stat: %s\n", Perror());
				if (launched && kp_launch_stop(&launch, &status) == 0)
					launched = false;
				goto done;
			}
		}
		if (kp_cli_collection_over(&launch, &launched, &status, watch, start_ms,
					   o.duration_ms))
			break;
	}
	PmuDisable(pd);
	n = PmuRead(pd, &d);
	if (n < 0) {
		fprintf(stderr, "kperf-bpf stat: %s\n", Perror());
		goto done;
	}
	fill_rows(&o, supported, d, n, rows);
	PmuDataFree(d);
	accumulate(totals, rows, o.nevents, reads++);
	meta.interval_t_s = 0;
	meta.elapsed_s = (kp_cli_elapsed_ms() - start_ms) / 1e3;
	if (!o.interval_ms || o.format == KP_FORMAT_TABLE)
		kp_report_counts(out, o.format, totals, o.nevents, &meta);
	err = kp_out_commit(report);
	report = NULL;
	if (err) {
		fprintf(stderr, "kperf-bpf stat: %s\n", Perror());
		goto done;
	}
	rc = 0;
	if (o.command && !launched)
		rc = kp_cli_exit_code(status);
done:
	if (o.command && pd < 0 && launch.pid > 0)
		kp_launch_abort(&launch);
	if (pd >= 0)
		PmuClose(pd);
	kp_out_discard(report);
	kp_pidwatch_free(watch);
	free(rows);
	free(totals);
	free(supported);
	free(open_evts);
	free(o.events);
	free(o.pids);
	free(o.cpus);
	return rc;
}
