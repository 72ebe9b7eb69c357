/*
 * cmd_memscope.c - `kperf-bpf memscope`: the memory events of a command or of processes
 * (allocator calls, use of the blocks, mstx marks) as msMemScope's dump, CSV or SQLite
 * (user/memscope); `kperf-bpf memscope analyze leaks|inefficient FILE ...` runs the Python
 * analyzers (msmemscope, also kperf.memscope) over such a file.
 *
 *   kperf-bpf memscope [-p PID,... | -- COMMAND ARGS...] [-o FILE.csv | -o FILE.db]
 *                      [--sample-bytes N] [--min-size N] [-g] [--prefix PFX] [-d SECONDS]
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "core/core.h"
#include "kperf/pcerrc.h"
#include "memscope/memscope.h"

struct ms_cli {
	int *pids;
	int npids;
	const char *output;
	uint64_t sample_bytes, min_size;
	bool stacks, no_markers, no_children;
	const char *prefix;
	long duration_ms;
	char **command;
};

static void usage(FILE *f)
{
	fputs("usage: kperf-bpf memscope [options] [-- COMMAND [ARGS...]]\n"
	      "       kperf-bpf memscope analyze leaks FILE --mstx-info TEXT [--start-index N]\n"
	      "       kperf-bpf memscope analyze inefficient FILE [--mem-size N] [--type T,...]\n"
	      "                                  [--idle-threshold N]\n"
	      "\n"
	      "Record the memory events of a command or of processes, as msMemScope's dump:\n"
	      "every malloc, calloc, realloc, free, posix_memalign, aligned_alloc, memalign,\n"
	      "valloc, pvalloc, mmap, munmap and brk call (BPF uprobes on the allocator the\n"
	      "program uses), the use of the blocks (first-touch page faults, read/write\n"
	      "buffers, kperf_mem_access), and the mstx marks, in time order.\n"
	      "\n"
	      "  -p, --pid PID,...       these processes (and the children they fork)\n"
	      "  -o, --output FILE       FILE.csv (default memscope.csv) or FILE.db (SQLite)\n"
	      "      --sample-bytes N    sample blocks by bytes, one every N bytes on average\n"
	      "                          (Poisson, as jemalloc/tcmalloc), sizes rescaled\n"
	      "      --min-size N        leave out blocks smaller than N bytes\n"
	      "  -g, --call-graph        the user stack of each allocation\n"
	      "      --prefix PFX        the allocator's symbols are PFXmalloc, PFXfree, ...\n"
	      "      --no-markers        leave out the mstx marks\n"
	      "      --no-children       not the children the processes fork (a followed\n"
	      "                          child is stopped from its start until its probes\n"
	      "                          are placed: SIGSTOP, then SIGCONT)\n"
	      "  -d, --duration SECONDS  stop after this long\n"
	      "  -h, --help              this text\n"
	      "\n"
	      "analyze runs the msmemscope analyzers (Python) over a recorded file; see\n"
	      "`kperf-bpf memscope analyze --help`.\n",
	      f);
}

/* a byte count: digits, optionally followed by k/K, m/M, g/G (binary) */
static int parse_bytes(const char *opt, const char *arg, uint64_t *out)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(arg, &end, 10);
	if (end != arg && !errno) {
		unsigned shift = *end == 'k' || *end == 'K' ? 10 :
				 *end == 'm' || *end == 'M' ? 20 :
				 *end == 'g' || *end == 'G' ? 30 :
							      0;

		if (shift)
			end++;
		if (!*end && arg[0] != '-' && v <= (UINT64_MAX >> shift)) {
			*out = (uint64_t)v << shift;
			return 0;
		}
	}
	fprintf(stderr,
		"kperf-bpf memscope: %s wants a number of bytes like 524288 or 512k, not '%s'\n",
		opt, arg);
	return -1;
}

static int parse(int argc, char **argv, struct ms_cli *o)
{
	enum { OPT_SAMPLE = 256, OPT_MIN, OPT_PREFIX, OPT_NO_MARKERS, OPT_NO_CHILDREN };
	static const struct option longopts[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "output", required_argument, NULL, 'o' },
		{ "sample-bytes", required_argument, NULL, OPT_SAMPLE },
		{ "min-size", required_argument, NULL, OPT_MIN },
		{ "call-graph", no_argument, NULL, 'g' },
		{ "prefix", required_argument, NULL, OPT_PREFIX },
		{ "no-markers", no_argument, NULL, OPT_NO_MARKERS },
		{ "no-children", no_argument, NULL, OPT_NO_CHILDREN },
		{ "duration", required_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	o->output = "memscope.csv";
	optind = 1;
	while ((c = getopt_long(argc, argv, "+p:o:gd:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'p':
			if (kp_cli_opt_pids("memscope", optarg, &o->pids, &o->npids))
				return -1;
			break;
		case 'o':
			o->output = optarg;
			break;
		case OPT_SAMPLE:
			if (parse_bytes("--sample-bytes", optarg, &o->sample_bytes))
				return -1;
			if (!o->sample_bytes) {
				fprintf(stderr,
					"kperf-bpf memscope: --sample-bytes must be at least "
					"1 (leave it out to record every call)\n");
				return -1;
			}
			break;
		case OPT_MIN:
			if (parse_bytes("--min-size", optarg, &o->min_size))
				return -1;
			break;
		case 'g':
			o->stacks = true;
			break;
		case OPT_PREFIX:
			o->prefix = optarg;
			break;
		case OPT_NO_CHILDREN:
			o->no_children = true;
			break;
		case OPT_NO_MARKERS:
			o->no_markers = true;
			break;
		case 'd':
			if (kp_cli_opt_seconds("memscope", 'd', optarg, &o->duration_ms))
				return -1;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			return -1;
		}
	}
	if (kp_cli_command("memscope", argc, argv, &o->command))
		return -1;
	if (o->command && o->npids) {
		fprintf(stderr, "kperf-bpf memscope: give either -p or a command, not both\n");
		return -1;
	}
	if (!o->command && !o->npids) {
		fprintf(stderr, "kperf-bpf memscope: give the processes (-p PID) or a command to "
				"run (-- COMMAND)\n");
		return -1;
	}
	return 0;
}

/* the file a command name runs, looked up in $PATH as execvp does; NULL if not found */
static char *command_path(const char *name)
{
	const char *path = getenv("PATH"), *p, *q;
	char buf[PATH_MAX];

	if (strchr(name, '/'))
		return access(name, F_OK) == 0 ? strdup(name) : NULL;
	for (p = path ? path : "/usr/local/bin:/usr/bin:/bin"; *p; p = *q ? q + 1 : q) {
		q = strchrnul(p, ':');
		snprintf(buf, sizeof(buf), "%.*s/%s", (int)(q - p), q > p ? p : ".", name);
		if (access(buf, X_OK) == 0)
			return strdup(buf);
	}
	return NULL;
}

/* `memscope analyze ...`: python3 -m msmemscope analyze ..., with the package next to
 * this program (the build tree: build/bin/../../python) when it is there */
static int analyze(int argc, char **argv)
{
	char self[PATH_MAX], dir[PATH_MAX + 32], env[2 * PATH_MAX + 64];
	const char *py = getenv("KPERF_PYTHON"), *old = getenv("PYTHONPATH");
	char **args = calloc((size_t)argc + 4, sizeof(*args));
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	int i;

	if (!args) {
		fprintf(stderr, "kperf-bpf memscope: out of memory\n");
		return 1;
	}
	if (n > 0) {
		char *slash;

		self[n] = '\0';
		slash = strrchr(self, '/');
		if (slash)
			*slash = '\0';
		snprintf(dir, sizeof(dir), "%s/../../python", self);
		snprintf(env, sizeof(env), "%s/msmemscope/__init__.py", dir);
		if (access(env, R_OK) == 0) {
			snprintf(env, sizeof(env), "%s%s%s", dir, old ? ":" : "", old ? old : "");
			setenv("PYTHONPATH", env, 1);
		}
	}
	py = py && *py ? py : "python3";
	args[0] = (char *)py;
	args[1] = "-m";
	args[2] = "msmemscope";
	for (i = 0; i < argc; i++)
		args[3 + i] = argv[i];
	fflush(stdout);
	execvp(py, args);
	fprintf(stderr, "kperf-bpf memscope: cannot run %s for the analyzers: %s\n", py,
		strerror(errno));
	free(args);
	return 127;
}

static void print_summary(const char *out, const struct kp_ms_stats *st, double secs)
{
	uint64_t lost = st->lost_ringbuf + st->lost_inflight + st->lost_sampled + st->lost_marks +
			st->not_kept;

	fprintf(stderr,
		" %s: %" PRIu64 " allocations, %" PRIu64 " frees, %" PRIu64 " accesses, %" PRIu64
		" marks, %.2f s\n",
		out, st->allocs, st->frees, st->accesses, st->marks, secs);
	if (lost || st->lost_stacks)
		fprintf(stderr,
			"kperf-bpf memscope: warning: events lost (written in the file's last row): "
			"%" PRIu64 " ring buffer full, %" PRIu64 " calls not followed, %" PRIu64
			" sampled blocks not remembered, %" PRIu64 " marks, %" PRIu64
			" over the limit; %" PRIu64 " stacks not kept\n",
			st->lost_ringbuf, st->lost_inflight, st->lost_sampled, st->lost_marks,
			st->not_kept, st->lost_stacks);
	if (st->not_stopped)
		fprintf(stderr,
			"kperf-bpf memscope: warning: %" PRIu64 " of %" PRIu64 " children followed "
			"ran before their probes were placed: their first calls are missing\n",
			st->not_stopped, st->children);
	if (st->no_faults)
		fprintf(stderr, "kperf-bpf memscope: warning: no exceptions:page_fault_user "
				"tracepoint here: page faults are not counted as use\n");
}

int cmd_memscope(int argc, char **argv)
{
	struct ms_cli o = { 0 };
	struct kp_ms_opts mo = { 0 };
	struct kp_ms_stats st;
	struct kp_launch launch = { .pid = -1, .go_fd = -1, .err_fd = -1 };
	struct kp_pidwatch *watch = NULL;
	struct kp_ms *m = NULL;
	bool launched = false;
	char *cmd_path = NULL;
	int rc = 1, status = 0, child_pid, err;
	double start_ms;

	if (argc > 1 && !strcmp(argv[1], "analyze"))
		return analyze(argc - 2, argv + 2);
	if (parse(argc, argv, &o))
		goto done;
	kp_cli_catch_signals();
	if (o.command) {
		cmd_path = command_path(o.command[0]);
		if (!cmd_path) {
			fprintf(stderr, "kperf-bpf memscope: cannot run %s: no such program\n",
				o.command[0]);
			rc = 127;
			goto done;
		}
		err = kp_launch_prepare(o.command, &launch);
		if (err) {
			fprintf(stderr, "kperf-bpf memscope: cannot start %s: %s\n", o.command[0],
				strerror(-err));
			goto done;
		}
		child_pid = launch.pid;
		mo.pids = &child_pid;
		mo.npids = 1;
		mo.from_exec = true;
		mo.command = cmd_path;
	} else {
		mo.pids = o.pids;
		mo.npids = (unsigned)o.npids;
	}
	mo.sample_bytes = o.sample_bytes;
	mo.min_size = o.min_size;
	mo.stacks = o.stacks;
	mo.prefix = o.prefix;
	mo.no_markers = o.no_markers;
	mo.follow = !o.no_children;
	if (kp_ms_open(&mo, &m)) {
		fprintf(stderr, "kperf-bpf memscope: %s\n", Perror());
		goto done;
	}
	kp_cli_warnings("memscope", NULL);
	kp_cli_pids_to_processes(o.pids, o.npids);
	if (kp_cli_watch_pids("memscope", o.pids, o.npids, &watch))
		goto done;
	if (kp_ms_enable(m, true)) {
		fprintf(stderr, "kperf-bpf memscope: %s\n", Perror());
		goto done;
	}
	start_ms = kp_cli_elapsed_ms();
	if (!o.command) {
		struct kp_ms_stats st0;
		int i;

		kp_ms_get_stats(m, &st0);
		fprintf(stderr, "kperf-bpf memscope: recording process%s", o.npids > 1 ? "es" : "");
		for (i = 0; i < o.npids; i++)
			fprintf(stderr, "%s%d", i ? "," : " ", o.pids[i]);
		fprintf(stderr, ": %u probes in %s; Ctrl-C to stop\n", st0.probes, kp_ms_owner(m));
	}
	if (o.command) {
		err = kp_launch_go(&launch);
		if (err) {
			fprintf(stderr, "kperf-bpf memscope: cannot run %s: %s\n", o.command[0],
				strerror(-err));
			rc = 127;
			launch.pid = -1;
			goto done;
		}
		launched = true;
	}
	for (;;) {
		if (kp_ms_poll(m, 50)) {
			fprintf(stderr, "kperf-bpf memscope: %s\n", Perror());
			goto done;
		}
		if (kp_cli_collection_over(&launch, &launched, &status, watch, start_ms,
					   o.duration_ms))
			break;
	}
	kp_ms_enable(m, false);
	if (kp_ms_write(m, o.output, &st)) {
		fprintf(stderr, "kperf-bpf memscope: %s\n", Perror());
		goto done;
	}
	print_summary(o.output, &st, (kp_cli_elapsed_ms() - start_ms) / 1e3);
	rc = 0;
	if (o.command && !launched) {
		rc = kp_cli_exit_code(status);
	} else if (launched) {
		fprintf(stderr, "kperf-bpf memscope: %s (pid %d) was still running: stopped\n",
			o.command[0], launch.pid);
		kp_launch_stop(&launch, &status);
	}
done:
	if (launch.pid > 0 && launch.go_fd >= 0)
		kp_launch_abort(&launch);
	kp_ms_close(m);
	kp_pidwatch_free(watch);
	free(cmd_path);
	free(o.pids);
	return rc;
}
