/*
 * main.c - the kperf-bpf command: dispatch to a subcommand.
 *
 * Standard output is replaced by a stream that keeps the errno of its first failed write
 * (export/outfile.c): whatever a command prints there (a list, its help), a write that
 * fails ends in a message and exit status 1, not in a silently cut output and 0.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "export/export.h"
#include "kperf/pcerrc.h"

#define KPERF_BPF_VERSION "0.1.0"

struct command {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *help;
};

static const struct command commands[] = {
	{ "trace", cmd_trace, "syscall counts, errors and latency per process" },
	{ "stat", cmd_stat, "count events (perf stat)" },
	{ "record", cmd_record, "sample stacks and print the hottest functions (perf record)" },
	{ "timeline", cmd_timeline,
	  "one Chrome trace of syscalls, CPU samples and mstx markers (perfetto, speedscope)" },
	{ "agent", cmd_agent,
	  "serve Prometheus metrics and pprof profiles over HTTP (containers)" },
	{ "memscope", cmd_memscope,
	  "allocations, frees, use of memory and mstx marks (msMemScope's dump, analyzers)" },
	{ "list", cmd_list, "events, tracepoints and syscalls of this machine" },
	{ "features", cmd_features, "the kernel's BPF features and the programs that load here" },
};

static void usage(FILE *f)
{
	size_t i;

	fputs("usage: kperf-bpf COMMAND [OPTIONS]\n\ncommands:\n", f);
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].help);
	fputs("  version    print the version\n\n"
	      "`kperf-bpf COMMAND --help` describes a command.\n",
	      f);
}

static struct kp_out *std_out;

/* at exit, also after exit(0) of --help: the status must say when stdout lost text */
static void check_stdout(void)
{
	struct kp_out *o = std_out;

	std_out = NULL;
	if (kp_out_commit(o)) {
		fprintf(stderr, "kperf-bpf: %s\n", Perror());
		_exit(1);
	}
}

int main(int argc, char **argv)
{
	size_t i;

	kp_cli_start_clock();
	if (kp_out_open(NULL, &std_out) == 0) {
		stdout = kp_out_file(std_out);
		atexit(check_stdout);
	}
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "version") || !strcmp(argv[1], "--version")) {
		printf("kperf-bpf %s\n", KPERF_BPF_VERSION);
		return 0;
	}
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].run(argc - 1, argv + 1);
	fprintf(stderr, "kperf-bpf: unknown command '%s'\n\n", argv[1]);
	usage(stderr);
	return 2;
}
