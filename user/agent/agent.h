/*
 * agent.h - `kperf-bpf agent`: the long-running mode for containers and Kubernetes. One
 * process serves Prometheus metrics (syscall latency histograms from the in-kernel summary,
 * counters, its own health) and pprof profiles over HTTP (libmicrohttpd).
 *
 *   config.c    options and the --config file (reloaded on SIGHUP)
 *   workload.c  a process's workload identity from its cgroup path (container id, pod UID,
 *               Kubernetes names from the kubelet's log layout)
 *   collect.c   the syscall summary (by cgroup) folded into a bounded table of series;
 *               counters
 *   metrics.c   the exposition: Prometheus text 0.0.4 or OpenMetrics 1.0
 *   profile.c   pprof CPU and off-CPU profiles on request
 *   http.c      the server: routes, limits, status codes
 *   privs.c     the capabilities the agent needs, checked before anything loads
 *   agent.c     start, signals (SIGTERM ends, SIGHUP reloads), stop
 */
#ifndef KPERF_AGENT_H
#define KPERF_AGENT_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#define AGENT_DEFAULT_LISTEN "127.0.0.1:9464"
#define AGENT_HIST_BUCKETS 26 /* le = 2^10 .. 2^35 ns, then +Inf */
#define AGENT_HIST_FIRST_BIT 10

/* ---- config.c ---- */

enum agent_target { TARGET_ALL, TARGET_CGROUP, TARGET_PIDS };

struct agent_config {
	char listen[128]; /* host:port; [v6]:port */
	enum agent_target target;
	char cgroup[512]; /* TARGET_CGROUP: a cgroup2 directory */
	int *pids; /* TARGET_PIDS */
	int npids;
	char *syscalls; /* comma list, NULL: every syscall; "none": no syscall metrics */
	char *counters; /* comma list of events, "none": no counters */
	unsigned profile_hz; /* sampling frequency of the pprof endpoints */
	unsigned max_profile_s; /* longest profile a request may ask for */
	unsigned cache_mb; /* what profiles keep for the next ones (symbols, unwind tables) */
	unsigned top_comm; /* per workload: command names with a label of their own */
	unsigned max_workloads; /* workloads with their own labels; the rest: cgroup="[other]" */
	unsigned grace_s; /* series of gone workloads live this long */
	unsigned interval_ms; /* how often the summary is folded (processes resolved) */
	unsigned max_connections;
	char kubelet_logs[256]; /* where the kubelet's pod logs are: names of pods */
	char cgroup_root[256]; /* --cgroup-root: "" the first cgroup2 mount */
	char *config_path; /* --config FILE */
};

/* Defaults into <c>. */
void agent_config_defaults(struct agent_config *c);
/* Parse argv (after "agent"); 0, 1 after --help was printed, or -1 after a message. */
int agent_config_parse(struct agent_config *c, int argc, char **argv);
/* Read <path> ("key = value" lines, keys as the long options) into <c>; 0 or -1 with a
 * message in <err>. */
int agent_config_file(struct agent_config *c, const char *path, char *err, size_t errsz);
void agent_config_free(struct agent_config *c);
/* Validate what the parsers cannot (bounds between options); 0 or -1 with a message. */
int agent_config_check(const struct agent_config *c, char *err, size_t errsz);

/* ---- workload.c ---- */

struct agent_identity {
	char cgroup[256]; /* the cgroup2 path, "/" rooted; "[other]", "[exited]" when unknown */
	char container_id[72];
	char pod_uid[40];
	char k8s_namespace[64];
	char k8s_pod[256];
	char k8s_container[64];
};

/* Fill <id> from a cgroup2 path as /proc/PID/cgroup's "0::" line gives it; the names of a
 * pod come from <logs_dir> (the kubelet's /var/log: pods/NS_POD_UID/CONTAINER/ and
 * containers/POD_NS_CONTAINER-ID.log), when it exists. */
void agent_identity_from_path(const char *path, const char *logs_dir, struct agent_identity *id);
/* The cgroup2 path of <pid> into buf; 0 or -errno (-ENOENT: gone). */
int agent_cgroup_of(pid_t pid, char *buf, size_t size);
/* The first cgroup2 mount point into buf; 0 or -errno. */
int agent_cgroup_root(char *buf, size_t size);
/* The paths (under <root>, "/" rooted, malloc'd; NULL when not found: removed, or out of this
 * mount's sight) of the cgroups with the <n> ids <ids> (sorted), by one walk of <root>;
 * returns the number found. */
size_t agent_cgroup_paths(const char *root, const uint64_t *ids, size_t n, char **paths);
/* 1 when cgroup <path> (under <root>) holds a process (or its descendants do), 0 when it is
 * empty or gone. */
int agent_cgroup_populated(const char *root, const char *path);
/* The start time of <pid> (clock ticks since boot, /proc/PID/stat field 22), 0 when gone. */
uint64_t agent_start_time(pid_t pid);

/* ---- collect.c ---- */

struct agent_stat {
	uint64_t calls, errors, total_ns;
	uint64_t buckets[AGENT_HIST_BUCKETS]; /* not cumulative: calls below each bound */
};

struct agent_series {
	int workload; /* index in the workload table */
	char comm[16]; /* "other": the names beyond the top K */
	int nr;
	char name[24]; /* the syscall's */
	uint64_t last_calls; /* now.calls when it last changed */
	double last_change; /* monotonic s */
	struct agent_stat retired; /* what processes that are gone left */
	struct agent_stat now; /* retired + the live processes, at the last fold */
};

struct agent_counter {
	char event[64];
	char metric[96]; /* kperf_..._total */
	double scale; /* task-clock: ns -> s */
	uint64_t total;
};

struct agent_health {
	uint64_t summary_dropped; /* calls the summary map had no room for */
	uint64_t exited_unresolved; /* cgroups whose path was not found ([exited]) */
	uint64_t profile_lost; /* samples lost by the profiles */
	uint64_t series_refused; /* folds that went to the [other] series: bounds reached */
	unsigned processes; /* cgroups with rows in the kernel's summary */
	bool fallback; /* raw_syscalls programs */
};

struct agent_collector;

/* Open and attach what <c> asks for; 0 or -1 with a message in err. */
int agent_collect_open(const struct agent_config *c, struct agent_collector **out, char *err,
		       size_t errsz);
/* Fold the kernel's summary into the series: resolve new processes, retire gone ones. */
int agent_collect_fold(struct agent_collector *col);
/* Apply a reloaded configuration's bounds (top_comm, max_workloads, grace). */
void agent_collect_reconfigure(struct agent_collector *col, const struct agent_config *c);
/* Render everything to <f> (fold first). <openmetrics>: OpenMetrics 1.0 text. */
int agent_collect_render(struct agent_collector *col, FILE *f, bool openmetrics);
/* The number of syscall series (each a histogram and an error counter). */
size_t agent_collect_series(struct agent_collector *col);
void agent_collect_close(struct agent_collector *col);

/* ---- metrics.c ---- */

struct agent_metrics_view {
	const struct agent_series *series;
	size_t nseries;
	const struct agent_identity *workloads; /* indexed by agent_series.workload */
	const struct agent_counter *counters;
	size_t ncounters;
	const struct agent_health *health;
	size_t nworkloads;
	int bpf_programs;
};

/* Write the exposition; returns 0 or -1 when the stream failed. */
int agent_metrics_write(FILE *f, const struct agent_metrics_view *v, bool openmetrics);
/* Prometheus label value escaping into buf (always terminated). */
void agent_label_escape(const char *in, char *buf, size_t size);

/* ---- profile.c ---- */

enum agent_profile_kind { PROFILE_CPU, PROFILE_OFFCPU };

/* The CPU profiles' sampling task, opened by the first and kept (its programs loaded and
 * attached, its events disabled) for the next ones, which only enable it again: a pull
 * profile every few seconds (Parca, Pyroscope) would otherwise load and verify the programs
 * each time. Under the agent's profile_lock. */
struct agent_profiler {
	int pd; /* -1: none open */
	unsigned hz; /* the --profile-hz it was opened with (a reload may change it) */
};

/* Sample for <seconds> (ending early when *stop turns true), then a gzipped pprof in
 * *buf, *len (malloc'd). 0, or an HTTP status with a message in err. */
int agent_profile_take(struct agent_profiler *pr, const struct agent_config *c,
		       enum agent_profile_kind kind, unsigned seconds, volatile bool *stop,
		       char **buf, size_t *len, uint64_t *lost, char *err, size_t errsz);
/* The stacks of each kind (and counted rows) the profiles' maps hold, preallocated kernel
 * memory charged to the agent (a stack is about 1 KiB): room for every sample of the longest
 * profile, --profile-hz x --max-profile-seconds x the online CPUs, as a power of two within
 * [AGENT_STACKS_MIN, AGENT_STACKS_MAX], the library's default (16384 of each kind) the most:
 * at the defaults, 99 Hz and 60 s, that is 2 CPUs' worth; --profile-hz 19 on 2 CPUs: 4096 */
#define AGENT_STACKS_MIN 1024
#define AGENT_STACKS_MAX 16384
unsigned agent_profile_stacks(const struct agent_config *c);
/* Close what <pr> keeps open. */
void agent_profiler_close(struct agent_profiler *pr);

/* ---- http.c ---- */

struct agent;

struct agent_http;
int agent_http_start(struct agent *a, const char *listen, unsigned max_conn,
		     struct agent_http **out, char *err, size_t errsz);
/* the port bound (a --listen with port 0 gets one from the kernel) */
unsigned agent_http_port(struct agent_http *h);
void agent_http_stop(struct agent_http *h);

/* ---- privs.c ---- */

/* 0 when the effective set holds what the agent needs, else -1 with the missing
 * capability named in err. Warnings (what is missing for other containers' symbols) go
 * to <warn> when not NULL. */
int agent_check_privileges(char *err, size_t errsz, FILE *warn);

/* ---- agent.c ---- */

struct agent {
	struct agent_config cfg;
	pthread_mutex_t lock; /* the collector and cfg */
	struct agent_collector *col;
	volatile bool ready;
	volatile bool stopping;
	pthread_mutex_t profile_lock; /* one profile at a time; the profiler */
	struct agent_profiler profiler;
	uint64_t profile_lost;
};

/* Run until SIGTERM/SIGINT; returns the exit status. */
int agent_run(struct agent_config *c);

#endif
