/*
 * cli.h - the kperf-bpf command: one file per subcommand (cmd_*.c), and what they share
 * (launching a command to trace, signals, argument parsing helpers).
 */
#ifndef KPERF_CLI_H
#define KPERF_CLI_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

int cmd_trace(int argc, char **argv);
int cmd_stat(int argc, char **argv);
int cmd_record(int argc, char **argv);
int cmd_list(int argc, char **argv);
int cmd_features(int argc, char **argv);
int cmd_timeline(int argc, char **argv);
int cmd_agent(int argc, char **argv);
int cmd_memscope(int argc, char **argv);

/* ---- launch.c ---- */

/* A command started stopped: it waits until kp_launch_go() before its execvp. */
struct kp_launch {
	pid_t pid;
	int go_fd; /* write end: one byte releases the child */
	int err_fd; /* read end: the child's errno if execvp failed, EOF if it succeeded */
};

int kp_launch_prepare(char **argv, struct kp_launch *l);
/* Release the child; returns 0 once it has exec'd, or the exec's -errno. */
int kp_launch_go(struct kp_launch *l);
/* Kill and reap a child that never got released. */
void kp_launch_abort(struct kp_launch *l);
/* End a released command that still runs when the collection is interrupted: SIGTERM, then
 * wait for it. 0 with its wait status, or -1 when a second signal stopped the wait. */
int kp_launch_stop(struct kp_launch *l, int *status);

/* ---- events.c: trace --events ---- */

/* per-call records the library keeps between two reads (KperfTraceOpts.maxStoredRecords) */
#define TRACE_STORE 16384

struct kp_evwin;
#define KP_EVWIN_RECORDS 32768 /* the reorder window of --events: 56 bytes each, 1.75 MiB */
/* Records printed to <out> in <format> (export.h's kp_format), in start order through a
 * fixed window. NULL when out of memory. */
struct kp_evwin *kp_evwin_new(FILE *out, int format);
/* Read what <pd> has (a few batches, or <until_empty>: all of it, after PmuTraceDisable)
 * into the window, printing what is old enough; the count read or a negative value. */
int kp_evwin_read(struct kp_evwin *w, int pd, bool until_empty);
/* Print what the window still holds. */
void kp_evwin_flush(struct kp_evwin *w);
/* Records printed after one that started later (they arrived when the window had passed). */
long kp_evwin_late(const struct kp_evwin *w);
void kp_evwin_free(struct kp_evwin *w);

/* ---- common.c ---- */

/* SIGINT/SIGTERM/SIGHUP set a flag (checked by the main loops) instead of killing us. */
void kp_cli_catch_signals(void);
bool kp_cli_interrupted(void);
/* "1.5" seconds -> ms; -1 when not a positive number */
long kp_cli_parse_seconds(const char *s);
/* Options several subcommands share, with one message style ("kperf-bpf CMD: -p wants
 * pids like 1234,5678, not 'x'"). Each returns 0, or -1 after printing why; a repeated
 * option replaces the earlier value. */
int kp_cli_opt_pids(const char *cmd, const char *arg, int **pids, int *n);
int kp_cli_opt_cpus(const char *cmd, const char *arg, int **cpus, int *n);
int kp_cli_opt_seconds(const char *cmd, char opt, const char *arg, long *ms);
/* an event list: like kp_cli_split, but a comma inside pmu/term=1,term=2/ does not split */
int kp_cli_split_events(const char *s, char ***out);
/* Replace thread ids by the ids of their processes (after the open: it reports bad ids). */
void kp_cli_pids_to_processes(int *pids, int n);
/* After getopt: the command to run (argv[optind...]) into *command, NULL when none; -1
 * after a message when "--" is followed by nothing. */
int kp_cli_command(const char *cmd, int argc, char **argv, char ***command);
/* Watch the -p processes (after the open checked them): NULL when n is 0; a note on stderr
 * when the kernel has no pidfd. -1 after a message. */
struct kp_pidwatch;
int kp_cli_watch_pids(const char *cmd, const int *pids, int n, struct kp_pidwatch **w);
/*
 * What ends a collection, checked once per tick: Ctrl-C or SIGTERM (a launched command is
 * then stopped too), the duration, the launched command's exit, or the exit of every
 * watched process (a pid reused by another process does not count). *launched turns false
 * once the command is reaped, its wait status in *status.
 */
bool kp_cli_collection_over(struct kp_launch *launch, bool *launched, int *status,
			    struct kp_pidwatch *watch, double start_ms, long duration_ms);
/* the exit code of a command from its wait status (128 + signal when killed) */
int kp_cli_exit_code(int status);
/* "1,2,3" -> ints; returns the count or -1 */
int kp_cli_parse_int_list(const char *s, int **out);
/* "a,b,c" -> strings (malloc'd, pointing into a copy of s); returns the count or -1 */
int kp_cli_split(const char *s, char ***out);
/* The warnings of the last library call on stderr, one "kperf-bpf CMD: warning: ..." line
 * each (a call may have several), but those containing <skip> (NULL: none), which the
 * caller said in its own words. */
void kp_cli_warnings(const char *cmd, const char *skip);
/* ms since the process started (CLOCK_MONOTONIC, from main()) */
double kp_cli_elapsed_ms(void);
void kp_cli_start_clock(void);

#endif
