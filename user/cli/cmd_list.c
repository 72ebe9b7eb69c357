/*
 * cmd_list.c - `kperf-bpf list`: the events and syscalls this machine has, one per line, so
 * that the output can be grepped and fed back to `-e`.
 *
 *   kperf-bpf list [core|uncore|trace|syscall|all] [FILTER]
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "kperf/kperf.h"

static void usage(FILE *f)
{
	fputs("usage: kperf-bpf list [core|uncore|trace|syscall|all] [FILTER]\n"
	      "\n"
	      "Print the events this machine can open, one per line (names as -e takes them):\n"
	      "  core     software, hardware and cache events, and the core PMU's events\n"
	      "           (each probed once: a VM without a PMU has no 'cycles')\n"
	      "  uncore   events of per-socket PMUs (those with a cpumask), as pmu/event/\n"
	      "  trace    tracepoints, as system:event\n"
	      "  syscall  syscalls of the running kernel (for `kperf-bpf trace -e`)\n"
	      "  all      core, uncore and trace (the default)\n"
	      "FILTER keeps the names that contain it (case-insensitive). The exit status is 1\n"
	      "when a FILTER matched nothing, or the list could not be read.\n",
	      f);
}

static const struct {
	const char *name;
	int type; /* enum PmuEventType, or -1 for syscalls */
} kinds[] = {
	{ "core", CORE_EVENT }, { "uncore", UNCORE_EVENT }, { "trace", TRACE_EVENT },
	{ "syscall", -1 },	{ "syscalls", -1 },	    { "all", ALL_EVENT },
};

static unsigned print_matching(const char **names, unsigned n, const char *filter)
{
	unsigned i, printed = 0;

	for (i = 0; i < n; i++) {
		if (filter && !strcasestr(names[i], filter))
			continue;
		puts(names[i]);
		printed++;
	}
	return printed;
}

/* one kind; returns the number printed or -1 after printing why it failed */
static long list_kind(int type, const char *filter)
{
	const char **names;
	unsigned n = 0;
	long printed;

	if (type < 0)
		names = PmuSysCallFuncList(&n);
	else
		names = PmuEventList((enum PmuEventType)type, &n);
	if (!names) {
		fprintf(stderr, "kperf-bpf list: %s\n", Perror());
		return -1;
	}
	printed = print_matching(names, n, filter);
	if (type >= 0)
		PmuEventListFree(); /* the process is about to exit: leave nothing behind */
	return printed;
}

int cmd_list(int argc, char **argv)
{
	const char *filter = NULL;
	int type = ALL_EVENT, argi = 1;
	long printed = 0, n;
	size_t i;

	if (argc > 1 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		usage(stdout);
		return 0;
	}
	if (argc > argi) {
		for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
			if (!strcmp(argv[argi], kinds[i].name)) {
				type = kinds[i].type;
				argi++;
				break;
			}
		}
	}
	if (argc > argi)
		filter = argv[argi++];
	if (argc > argi) {
		fprintf(stderr, "kperf-bpf list: unexpected argument '%s'\n\n", argv[argi]);
		usage(stderr);
		return 2;
	}
	if (type == ALL_EVENT) {
		/* kind by kind, so that a machine without tracefs still lists its PMU events */
		static const int parts[] = { CORE_EVENT, UNCORE_EVENT, TRACE_EVENT };
		bool failed = false;

		for (i = 0; i < sizeof(parts) / sizeof(parts[0]); i++) {
			n = list_kind(parts[i], filter);
			if (n < 0)
				failed = true;
			else
				printed += n;
		}
		if (failed && !printed)
			return 1;
	} else {
		printed = list_kind(type, filter);
		if (printed < 0)
			return 1;
	}
	if (!printed && filter) {
		fprintf(stderr, "kperf-bpf list: no name contains '%s'\n", filter);
		return 1;
	}
	if (!printed)
		fputs("kperf-bpf list: this machine has none\n", stderr);
	return 0;
}
