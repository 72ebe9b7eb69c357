/*
 * metrics.c - the exposition of /metrics: Prometheus text format 0.0.4, or OpenMetrics 1.0
 * when the scraper asks for it (the same samples; OpenMetrics names a counter's family
 * without its _total suffix, has # UNIT lines and ends in # EOF).
 *
 * Families: kperf_syscall_duration_seconds (histogram, buckets at 2^10 .. 2^35 ns: the
 * in-kernel log2 slots, the lower ones merged into the first bucket), kperf_syscall_errors_total,
 * one counter per counted event (kperf_task_clock_seconds_total, kperf_context_switches_total,
 * kperf_page_faults_total, ...), and the agent's own health (kperf_agent_*).
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/resource.h>

#include "agent.h"

void agent_label_escape(const char *in, char *buf, size_t size)
{
	size_t o = 0;

	for (; *in && o + 3 < size; in++) {
		if (*in == '\\' || *in == '"') {
			buf[o++] = '\\';
			buf[o++] = *in;
		} else if (*in == '\n') {
			buf[o++] = '\\';
			buf[o++] = 'n';
		} else {
			buf[o++] = *in;
		}
	}
	buf[o] = 0;
}

static void family(FILE *f, bool om, const char *name, const char *type, const char *unit,
		   const char *help)
{
	char fam[128];
	size_t n = strlen(name);

	snprintf(fam, sizeof(fam), "%s", name);
	if (om && !strcmp(type, "counter") && n > 6 && !strcmp(name + n - 6, "_total"))
		fam[n - 6] = 0;
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", fam, help, fam, type);
	if (om && unit)
		fprintf(f, "# UNIT %s %s\n", fam, unit);
}

/* {cgroup="...",container_id=...,comm="...",syscall="..." without the closing brace, into
 * buf: made once per series and scrape, written on each of its 30 lines */
static void series_labels(char *buf, size_t size, const struct agent_metrics_view *v,
			  const struct agent_series *s)
{
	const struct agent_identity *id = &v->workloads[s->workload];
	const struct {
		const char *name, *val;
	} labels[] = {
		{ "cgroup", id->cgroup },   { "container_id", id->container_id },
		{ "pod_uid", id->pod_uid }, { "namespace", id->k8s_namespace },
		{ "pod", id->k8s_pod },	    { "container", id->k8s_container },
		{ "comm", s->comm },	    { "syscall", s->name },
	};
	char esc[600];
	size_t i, o = 1;
	bool first = true;

	buf[0] = '{';
	buf[1] = 0;
	for (i = 0; i < sizeof(labels) / sizeof(labels[0]) && o < size; i++) {
		int w;

		if (!labels[i].val[0] && i > 0 && i < 6)
			continue;
		agent_label_escape(labels[i].val, esc, sizeof(esc));
		w = snprintf(buf + o, size - o, "%s%s=\"%s\"", first ? "" : ",", labels[i].name,
			     esc);
		o += w > 0 ? (size_t)w : 0;
		first = false;
	}
}

/* <name><labels><rest><value>\n, without printf */
static void line(FILE *f, const char *name, const char *labels, const char *rest, uint64_t value)
{
	char num[24], *p = num + sizeof(num);

	*--p = 0;
	*--p = '\n';
	do {
		*--p = (char)('0' + value % 10);
		value /= 10;
	} while (value);
	fputs(name, f);
	fputs(labels, f);
	fputs(rest, f);
	fputs(p, f);
}

static void write_syscalls(FILE *f, const struct agent_metrics_view *v, bool om)
{
	static char le[AGENT_HIST_BUCKETS][32];
	char lbl[2400];
	size_t i;
	int b;

	if (!le[0][0])
		for (b = 0; b < AGENT_HIST_BUCKETS; b++)
			snprintf(le[b], sizeof(le[b]), ",le=\"%.9g\"} ",
				 (double)(1ULL << (AGENT_HIST_FIRST_BIT + b)) / 1e9);
	family(f, om, "kperf_syscall_duration_seconds", "histogram", "seconds",
	       "Time spent in system calls, by workload, command and syscall (in-kernel log2 "
	       "histogram).");
	for (i = 0; i < v->nseries; i++) {
		const struct agent_series *s = &v->series[i];
		uint64_t cum = 0;

		series_labels(lbl, sizeof(lbl), v, s);
		for (b = 0; b < AGENT_HIST_BUCKETS; b++) {
			cum += s->now.buckets[b];
			line(f, "kperf_syscall_duration_seconds_bucket", lbl, le[b], cum);
		}
		line(f, "kperf_syscall_duration_seconds_bucket", lbl, ",le=\"+Inf\"} ",
		     s->now.calls);
		fputs("kperf_syscall_duration_seconds_sum", f);
		fputs(lbl, f);
		fprintf(f, "} %.9f\n", (double)s->now.total_ns / 1e9);
		line(f, "kperf_syscall_duration_seconds_count", lbl, "} ", s->now.calls);
	}
	family(f, om, "kperf_syscall_errors_total", "counter", NULL,
	       "System calls that returned an error, by workload, command and syscall.");
	for (i = 0; i < v->nseries; i++) {
		const struct agent_series *s = &v->series[i];

		series_labels(lbl, sizeof(lbl), v, s);
		line(f, "kperf_syscall_errors_total", lbl, "} ", s->now.errors);
	}
}

static void write_counters(FILE *f, const struct agent_metrics_view *v, bool om)
{
	char help[160];
	size_t i;

	for (i = 0; i < v->ncounters; i++) {
		const struct agent_counter *k = &v->counters[i];
		bool secs = k->scale != 1;

		snprintf(help, sizeof(help), "The %s event of the processes the agent watches%s.",
			 k->event, secs ? ", in seconds" : "");
		family(f, om, k->metric, "counter", secs ? "seconds" : NULL, help);
		if (secs)
			fprintf(f, "%s %.9f\n", k->metric, (double)k->total * k->scale);
		else
			fprintf(f, "%s %llu\n", k->metric, (unsigned long long)k->total);
	}
}

static long rss_bytes(void)
{
	long pages = 0, rss = 0;
	FILE *f = fopen("/proc/self/statm", "re");

	if (!f)
		return 0;
	if (fscanf(f, "%ld %ld", &pages, &rss) != 2)
		rss = 0;
	fclose(f);
	return rss * sysconf(_SC_PAGESIZE);
}

static void write_health(FILE *f, const struct agent_metrics_view *v, bool om)
{
	const struct agent_health *h = v->health;
	struct rusage ru;
	double cpu = 0;

	family(f, om, "kperf_agent_events_lost_total", "counter", NULL,
	       "Events the agent could not count, by source (syscall_summary: calls the "
	       "in-kernel summary had no room for; profile: samples the profiles lost).");
	fprintf(f, "kperf_agent_events_lost_total{source=\"syscall_summary\"} %llu\n",
		(unsigned long long)h->summary_dropped);
	fprintf(f, "kperf_agent_events_lost_total{source=\"profile\"} %llu\n",
		(unsigned long long)h->profile_lost);
	family(f, om, "kperf_agent_cgroups_unresolved_total", "counter", NULL,
	       "Cgroups whose path the agent could not find: removed before it looked, or out of "
	       "its cgroup2 mount's sight (counted under cgroup=\"[exited]\").");
	fprintf(f, "kperf_agent_cgroups_unresolved_total %llu\n",
		(unsigned long long)h->exited_unresolved);
	family(f, om, "kperf_agent_workloads_overflow_total", "counter", NULL,
	       "Cgroups counted under cgroup=\"[other]\" because --max-workloads was reached.");
	fprintf(f, "kperf_agent_workloads_overflow_total %llu\n",
		(unsigned long long)h->series_refused);
	family(f, om, "kperf_agent_bpf_programs", "gauge", NULL,
	       "BPF programs the agent has loaded.");
	fprintf(f, "kperf_agent_bpf_programs %d\n", v->bpf_programs);
	family(f, om, "kperf_agent_syscall_fallback", "gauge", NULL,
	       "1 when the raw_syscalls fallback programs are in use.");
	fprintf(f, "kperf_agent_syscall_fallback %d\n", h->fallback ? 1 : 0);
	family(f, om, "kperf_agent_series", "gauge", NULL,
	       "Syscall series exposed (each a histogram and an error counter).");
	fprintf(f, "kperf_agent_series %zu\n", v->nseries);
	family(f, om, "kperf_agent_workloads", "gauge", NULL, "Workloads (cgroups) tracked.");
	fprintf(f, "kperf_agent_workloads %zu\n", v->nworkloads);
	family(f, om, "kperf_agent_cgroups", "gauge", NULL,
	       "Cgroups with rows in the kernel's syscall summary.");
	fprintf(f, "kperf_agent_cgroups %u\n", h->processes);
	family(f, om, "kperf_agent_resident_memory_bytes", "gauge", "bytes",
	       "Resident memory of the agent.");
	fprintf(f, "kperf_agent_resident_memory_bytes %ld\n", rss_bytes());
	if (getrusage(RUSAGE_SELF, &ru) == 0)
		cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
		      (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
	family(f, om, "kperf_agent_cpu_seconds_total", "counter", "seconds",
	       "CPU time the agent used (user and system).");
	fprintf(f, "kperf_agent_cpu_seconds_total %.6f\n", cpu);
}

int agent_metrics_write(FILE *f, const struct agent_metrics_view *v, bool om)
{
	if (v->nseries || v->health)
		write_syscalls(f, v, om);
	write_counters(f, v, om);
	write_health(f, v, om);
	if (om)
		fputs("# EOF\n", f);
	return ferror(f) ? -1 : 0;
}
