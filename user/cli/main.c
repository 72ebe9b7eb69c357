/*
 * main.c - the kperf-bpf command: dispatch to a subcommand.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"

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

int main(int argc, char **argv)
{
	size_t i;

	kp_cli_start_clock();
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
