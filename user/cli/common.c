/*
 * common.c - what every subcommand needs: signal flags, number and list parsing, and a
 * clock that starts with the process (to report how fast tracing was attached).
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

#include "cli.h"
#include "core/core.h"
#include "kperf/pcerrc.h"

static volatile sig_atomic_t interrupted;
static struct timespec t_start;

static void on_signal(int sig)
{
	(void)sig;
	interrupted = 1;
}

void kp_cli_catch_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

bool kp_cli_interrupted(void)
{
	return interrupted;
}

long kp_cli_parse_seconds(const char *s)
{
	char *end;
	double v;

	if (!s || !*s)
		return -1;
	errno = 0;
	v = strtod(s, &end);
	if (errno || *end || !(v > 0) || v > 1e7)
		return -1;
	return (long)(v * 1000.0 + 0.5);
}

/* "a,,b", ",a", "a,": an empty item is a mistake, not something to skip */
static bool empty_item(const char *s)
{
	size_t len = strlen(s);

	return !len || s[0] == ',' || s[len - 1] == ',' || strstr(s, ",,");
}

int kp_cli_split(const char *s, char ***out)
{
	char *copy, *p, **v = NULL, **nv;
	int n = 0;

	*out = NULL;
	if (!s || empty_item(s))
		return -1;
	/* one block: the pointer array then the copied text, freed with one free() */
	copy = strdup(s);
	if (!copy)
		return -1;
	for (p = strtok(copy, ","); p; p = strtok(NULL, ",")) {
		nv = realloc(v, (size_t)(n + 1) * sizeof(*v));
		if (!nv) {
			free(v);
			free(copy);
			return -1;
		}
		v = nv;
		v[n++] = p;
	}
	if (!n) {
		free(copy);
		return -1;
	}
	{
		size_t len = strlen(s) + 1, i;
		char **block = malloc((size_t)n * sizeof(*block) + len);

		if (!block) {
			free(v);
			free(copy);
			return -1;
		}
		memcpy((char *)(block + n), copy, len);
		for (i = 0; i < (size_t)n; i++)
			block[i] = (char *)(block + n) + (v[i] - copy);
		free(v);
		free(copy);
		*out = block;
	}
	return n;
}

int kp_cli_split_events(const char *s, char ***out)
{
	char *copy, *p;
	int slashes = 0, n;

	*out = NULL;
	if (!s || empty_item(s))
		return -1;
	/* turn the commas that separate events into a character events never hold */
	copy = strdup(s);
	if (!copy)
		return -1;
	for (p = copy; *p; p++) {
		if (*p == '/')
			slashes++;
		else if (*p == ',' && slashes % 2 == 0)
			*p = '\n';
	}
	n = 0;
	{
		char **parts = NULL, **np, *tok, *save = NULL;
		size_t len = strlen(copy) + 1;
		char **block;
		int i;

		for (tok = strtok_r(copy, "\n", &save); tok; tok = strtok_r(NULL, "\n", &save)) {
			np = realloc(parts, (size_t)(n + 1) * sizeof(*parts));
			if (!np) {
				free(parts);
				free(copy);
				return -1;
			}
			parts = np;
			parts[n++] = tok;
		}
		if (!n) {
			free(copy);
			return -1;
		}
		block = malloc((size_t)n * sizeof(*block) + len);
		if (!block) {
			free(parts);
			free(copy);
			return -1;
		}
		memcpy((char *)(block + n), copy, len);
		for (i = 0; i < n; i++)
			block[i] = (char *)(block + n) + (parts[i] - copy);
		free(parts);
		free(copy);
		*out = block;
	}
	return n;
}

int kp_cli_opt_pids(const char *cmd, const char *arg, int **pids, int *n)
{
	int i;

	free(*pids);
	*n = kp_cli_parse_int_list(arg, pids);
	/* the library takes pid 0 as itself (libkperf does): on a command line it is a mistake */
	for (i = 0; i < *n; i++) {
		if ((*pids)[i] <= 0) {
			fprintf(stderr, "kperf-bpf %s: pid %d is not valid: pids are positive\n",
				cmd, (*pids)[i]);
			return -1;
		}
	}
	if (*n > 0)
		return 0;
	fprintf(stderr, "kperf-bpf %s: -p wants pids like 1234,5678, not '%s'\n", cmd, arg);
	return -1;
}

int kp_cli_opt_cpus(const char *cmd, const char *arg, int **cpus, int *n)
{
	free(*cpus);
	*cpus = NULL;
	*n = empty_item(arg) ? -1 : kp_parse_cpu_list(arg, cpus);
	if (*n > 0)
		return 0;
	fprintf(stderr, "kperf-bpf %s: -C wants cpus like 0-3,6, not '%s'\n", cmd, arg);
	return -1;
}

int kp_cli_opt_seconds(const char *cmd, char opt, const char *arg, long *ms)
{
	*ms = kp_cli_parse_seconds(arg);
	if (*ms > 0)
		return 0;
	fprintf(stderr, "kperf-bpf %s: -%c wants seconds > 0, not '%s'\n", cmd, opt, arg);
	return -1;
}

int kp_cli_parse_int_list(const char *s, int **out)
{
	char **parts, *end;
	int n, i, *v;
	long x;

	*out = NULL;
	n = kp_cli_split(s, &parts);
	if (n <= 0)
		return -1;
	v = calloc((size_t)n, sizeof(*v));
	if (!v) {
		free(parts);
		return -1;
	}
	for (i = 0; i < n; i++) {
		errno = 0;
		x = strtol(parts[i], &end, 10);
		if (errno || *end || end == parts[i] || x < -2147483647L || x > 2147483647L) {
			free(parts);
			free(v);
			return -1;
		}
		v[i] = (int)x;
	}
	free(parts);
	*out = v;
	return n;
}

void kp_cli_start_clock(void)
{
	clock_gettime(CLOCK_MONOTONIC, &t_start);
}

void kp_cli_warnings(const char *cmd, const char *skip)
{
	const char *p = GetWarnMsg(), *nl;

	if (!GetWarn())
		return;
	for (; *p; p = *nl ? nl + 1 : nl) {
		int len;

		nl = strchr(p, '\n');
		if (!nl)
			nl = p + strlen(p);
		len = (int)(nl - p);
		if (skip && memmem(p, (size_t)len, skip, strlen(skip)))
			continue;
		fprintf(stderr, "kperf-bpf %s: warning: %.*s\n", cmd, len, p);
	}
}

double kp_cli_elapsed_ms(void)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - t_start.tv_sec) * 1e3 +
	       (double)(now.tv_nsec - t_start.tv_nsec) / 1e6;
}

void kp_cli_pids_to_processes(int *pids, int n)
{
	int i, tgid;

	/* a thread id stands for its whole process (the library collects the process): the
	 * collection must last as long as the process, not that one thread */
	for (i = 0; i < n; i++) {
		tgid = kp_pid_tgid(pids[i]);
		if (tgid > 0)
			pids[i] = tgid;
	}
}

int kp_cli_command(const char *cmd, int argc, char **argv, char ***command)
{
	*command = NULL;
	if (optind < argc) {
		*command = argv + optind;
		return 0;
	}
	/* "--" ended the options (and was not the argument of one): a command must follow */
	if (optind > 1 && !strcmp(argv[optind - 1], "--") && optarg != argv[optind - 1]) {
		fprintf(stderr, "kperf-bpf %s: '--' must be followed by a command to run\n", cmd);
		return -1;
	}
	return 0;
}

int kp_cli_watch_pids(const char *cmd, const int *pids, int n, struct kp_pidwatch **w)
{
	*w = NULL;
	if (!n)
		return 0;
	if (kp_pidwatch_open(pids, n, w)) {
		fprintf(stderr, "kperf-bpf %s: out of memory\n", cmd);
		return -1;
	}
	if (kp_pidwatch_fallback(*w))
		fprintf(stderr,
			"kperf-bpf %s: note: this kernel has no pidfd_open (Linux 5.3): the end "
			"of the processes is told by their pid and start time\n",
			cmd);
	return 0;
}

bool kp_cli_collection_over(struct kp_launch *launch, bool *launched, int *status,
			    struct kp_pidwatch *watch, double start_ms, long duration_ms)
{
	if (kp_cli_interrupted()) {
		/* still collecting: the command's last moments are in the data */
		if (*launched && kp_launch_stop(launch, status) == 0)
			*launched = false;
		return true;
	}
	if (duration_ms && kp_cli_elapsed_ms() - start_ms >= (double)duration_ms)
		return true;
	if (*launched && waitpid(launch->pid, status, WNOHANG) == launch->pid) {
		*launched = false;
		return true;
	}
	if (watch)
		return !kp_pidwatch_any_alive(watch);
	return false;
}

int kp_cli_exit_code(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return 1;
}
