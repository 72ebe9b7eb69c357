/*
 * sys_cpu.c - parsers of the system-wide CPU and scheduler files: /proc/stat, cpuinfo,
 * loadavg, uptime, softirqs, schedstat, interrupts, irq/default_smp_affinity and
 * pressure/{cpu,io}.
 *
 * Entries follow libkperf's reading of each file. Where that reading put a kernel column
 * into the wrong field, the field gets what its name says instead (schedstat's cpu lines:
 * see parse_sched_cpu).
 */
#include <ctype.h>
#include <errno.h>
#include <string.h>

#include "proc.h"

int kp_proc_parse_stat(struct kp_proc_arena *a, char *text, size_t len, struct ProcData *out)
{
	struct kp_proc_vec v = { 0 };
	char *cur = text, *line;

	(void)len;
	while ((line = kp_proc_line(&cur))) {
		char *name = kp_proc_word(&line), *w[10] = { 0 };
		struct ProcStatEntry e = { 0 }, *slot;
		unsigned n;
		int err = 0;

		if (!name)
			continue;
		if (kp_proc_prefix(name, "cpu")) {
			e.lineType = PROC_STAT_LINE_CPU;
			kp_proc_words(&line, w, 10);
			e.user = kp_proc_ull(w[0]);
			e.nice = kp_proc_ull(w[1]);
			e.system = kp_proc_ull(w[2]);
			e.idle = kp_proc_ull(w[3]);
			e.ioWait = kp_proc_ull(w[4]);
			e.irq = kp_proc_ull(w[5]);
			e.softirq = kp_proc_ull(w[6]);
			e.steal = kp_proc_ull(w[7]);
			e.guest = kp_proc_ull(w[8]);
			e.guestNice = kp_proc_ull(w[9]);
		} else if (!strcmp(name, "intr")) {
			e.lineType = PROC_STAT_LINE_INTR;
			e.intrTotal = kp_proc_ull(kp_proc_word(&line));
			err = kp_proc_ull_words(a, line, &e.intrPerIrq, &n);
			e.numIntrPerIrq = n;
		} else if (!strcmp(name, "softirq")) {
			e.lineType = PROC_STAT_LINE_SOFTIRQ;
			e.softirqTotal = kp_proc_ull(kp_proc_word(&line));
			err = kp_proc_ull_words(a, line, &e.softirqPerType, &n);
			e.numSoftirqPerType = n;
		} else if (!strcmp(name, "ctxt")) {
			e.lineType = PROC_STAT_LINE_CTXT;
			e.ctxt = kp_proc_ull(kp_proc_word(&line));
		} else if (!strcmp(name, "btime")) {
			e.lineType = PROC_STAT_LINE_BTIME;
			e.btime = kp_proc_ull(kp_proc_word(&line));
		} else if (!strcmp(name, "processes")) {
			e.lineType = PROC_STAT_LINE_PROCESSES;
			e.processes = kp_proc_ull(kp_proc_word(&line));
		} else if (!strcmp(name, "procs_running")) {
			e.lineType = PROC_STAT_LINE_PROCS_RUNNING;
			e.procsRunning = kp_proc_ull(kp_proc_word(&line));
		} else if (!strcmp(name, "procs_blocked")) {
			e.lineType = PROC_STAT_LINE_PROCS_BLOCKED;
			e.procsBlocked = kp_proc_ull(kp_proc_word(&line));
		} else {
			continue;
		}
		e.cpuName = kp_proc_strdup(a, name);
		if (err || !e.cpuName || !(slot = kp_proc_push(a, &v, sizeof(*slot))))
			return -ENOMEM;
		*slot = e;
	}
	if (!v.n)
		return -ENODATA;
	out->stat = v.items;
	out->numEntries = v.n;
	return 0;
}

/* A block of "key : value" lines ended by a blank line, as one field list. */
int kp_proc_parse_cpuinfo(struct kp_proc_arena *a, char *text, size_t len, struct ProcData *out)
{
	struct kp_proc_vec v = { 0 }, fields;
	char *cur = text;
	int more;

	(void)len;
	while ((more = kp_proc_field_block(a, &cur, &fields)) > 0) {
		struct ProcCpuinfoEntry *e = kp_proc_push(a, &v, sizeof(*e));

		if (!e)
			return -ENOMEM;
		e->numFields = fields.n;
		e->fields = fields.items;
	}
	if (more < 0)
		return more;
	if (!v.n)
		return -ENODATA;
	out->cpuinfo = v.items;
	out->numEntries = v.n;
	return 0;
}

int kp_proc_parse_loadavg(struct kp_proc_arena *a, char *text, size_t len, struct ProcData *out)
{
	struct ProcLoadavgEntry *e;
	char *w[5] = { 0 }, *slash;

	(void)len;
	text = kp_proc_trim(text);
	if (!*text)
		return -ENODATA;
	e = kp_proc_alloc(a, sizeof(*e));
	if (!e)
		return -ENOMEM;
	kp_proc_words(&text, w, 5);
	e->load1 = kp_proc_double(w[0]);
	e->load5 = kp_proc_double(w[1]);
	e->load15 = kp_proc_double(w[2]);
	if (w[3] && (slash = strchr(w[3], '/'))) {
		*slash = '\0';
		e->runningProcs = (unsigned)kp_proc_int(w[3]);
		e->totalProcs = (unsigned)kp_proc_int(slash + 1);
	}
	e->lastPid = kp_proc_int(w[4]);
	out->loadavg = e;
	out->numEntries = 1;
	return 0;
}

int kp_proc_parse_uptime(struct kp_proc_arena *a, char *text, size_t len, struct ProcData *out)
{
	struct ProcUptimeEntry *e;
	char *w[2] = { 0 };

	(void)len;
	text = kp_proc_trim(text);
	if (!*text)
		return -ENODATA;
	e = kp_proc_alloc(a, sizeof(*e));
	if (!e)
		return -ENOMEM;
	kp_proc_words(&text, w, 2);
	e->total = kp_proc_double(w[0]);
	e->idle = kp_proc_double(w[1]);
	out->uptime = e;
	out->numEntries = 1;
	return 0;
}

/* "TYPE: n n n": the header line of CPU names has no ':' and is passed over. */
int kp_proc_parse_softirqs(struct kp_proc_arena *a, char *text, size_t len, struct ProcData *out)
{
	struct kp_proc_vec v = { 0 };
	char *cur = text, *line, *key, *value;

	(void)len;
	while ((line = kp_proc_line(&cur))) {
		struct ProcSoftirqsEntry *e;

		if (!kp_proc_colon(line, &key, &value))
			continue;
		e = kp_proc_push(a, &v, sizeof(*e));
		if (!e || !(e->type = kp_proc_strdup(a, key)) ||
		    kp_proc_ull_words(a, value, &e->perCpu, &e->numCpus))
			return -ENOMEM;
	}
	if (!v.n)
		return -ENODATA;
	out->softirqs = v.items;
	out->numEntries = v.n;
	return 0;
}

/* The number in a word such as "cpu12" or "domain0" (0 when it has none). */
static int trailing_id(const char *word)
{
	const char *d = strpbrk(word, "0123456789");

	return d ? kp_proc_int(d) : 0;
}

/*
 * "cpuN a 0 b c d e f g h" (schedstat versions 10 to 17): a is yld_count, then comes a
 * legacy column the kernel always prints as 0, then sched_count, sched_goidle, ttwu_count,
 * ttwu_local, rq_cpu_time, run_delay and pcount. libkperf reads the 0 as schedCount and
 * shifts every later field by one; each field here holds the counter it is named after.
 */
static void parse_sched_cpu(char *rest, struct ProcSchedstatEntry *e)
{
	char *w[9] = { 0 };

	kp_proc_words(&rest, w, 9);
	e->yldCount = kp_proc_ull(w[0]);
	e->schedCount = kp_proc_ull(w[2]);
	e->schedGoidle = kp_proc_ull(w[3]);
	e->ttwuCount = kp_proc_ull(w[4]);
	e->ttwuLocal = kp_proc_ull(w[5]);
	e->rqCpuTime = kp_proc_ull(w[6]);
	e->runDelay = kp_proc_ull(w[7]);
	e->pcount = kp_proc_ull(w[8]);
}

/* "domainN [NAME] MASK counters...": version 17 added the domain's name before the mask. */
static int parse_sched_domain(struct kp_proc_arena *a, char *name, char *rest, int version,
			      struct kp_proc_vec *domains)
{
	struct ProcSchedstatDomainEntry *d = kp_proc_push(a, domains, sizeof(*d));
	char *mask;

	if (!d)
		return -ENOMEM;
	d->domainId = trailing_id(name);
	if (version >= 17)
		kp_proc_word(&rest);
	mask = kp_proc_word(&rest);
	d->mask = kp_proc_strdup(a, mask);
	if (!d->mask || kp_proc_ull_words(a, rest, &d->values, &d->numValues))
		return -ENOMEM;
	return 0;
}

int kp_proc_parse_schedstat(struct kp_proc_arena *a, char *text, size_t len, struct ProcData *out)
{
	struct kp_proc_vec v = { 0 }, domains = { 0 };
	struct ProcSchedstatEntry *cpu = NULL;
	char *cur = text, *line;
	int version = 0;

	(void)len;
	while ((line = kp_proc_line(&cur))) {
		char *name = kp_proc_word(&line);

		if (!name)
			continue;
		if (!strcmp(name, "version")) {
			version = kp_proc_int(kp_proc_word(&line));
		} else if (kp_proc_prefix(name, "domain") && isdigit((unsigned char)name[6])) {
			/* a domain line belongs to the cpu line above it */
			if (cpu && parse_sched_domain(a, name, line, version, &domains))
				return -ENOMEM;
		} else if (kp_proc_prefix(name, "cpu") && isdigit((unsigned char)name[3])) {
			if (cpu) {
				cpu->domains = domains.items;
				cpu->numDomains = domains.n;
				domains = (struct kp_proc_vec){ 0 };
			}
			cpu = kp_proc_push(a, &v, sizeof(*cpu));
			if (!cpu)
				return -ENOMEM;
			cpu->cpuId = trailing_id(name);
			parse_sched_cpu(line, cpu);
		}
	}
	if (!v.n)
		return -ENODATA;
	cpu->domains = domains.items;
	cpu->numDomains = domains.n;
	out->schedstat = v.items;
	out->numEntries = v.n;
	return 0;
}

/* The first line names the CPU columns; each later line is "IRQ: counts... description". */
int kp_proc_parse_interrupts(struct kp_proc_arena *a, char *text, size_t len, struct ProcData *out)
{
	struct kp_proc_vec v = { 0 };
	char *cur = text, *line;
	unsigned ncpu = 0;
	bool header = true;

	(void)len;
	while ((line = kp_proc_line(&cur))) {
		struct ProcInterruptsEntry *e;
		char *irq, *colon;
		unsigned n, i;

		line = kp_proc_trim(line);
		if (!*line)
			continue;
		if (header) {
			ncpu = kp_proc_count_words(line);
			header = false;
			continue;
		}
		irq = kp_proc_word(&line);
		colon = strchr(irq, ':');
		if (colon)
			*colon = '\0';
		n = kp_proc_count_words(line);
		n = n < ncpu ? n : ncpu;
		e = kp_proc_push(a, &v, sizeof(*e));
		if (!e || !(e->irq = kp_proc_strdup(a, irq)))
			return -ENOMEM;
		if (n && !(e->perCpu = kp_proc_alloc(a, n * sizeof(*e->perCpu))))
			return -ENOMEM;
		for (i = 0; i < n; i++)
			e->perCpu[i] = kp_proc_ull(kp_proc_word(&line));
		e->numCpus = n;
		e->description = kp_proc_join(a, line);
		if (!e->description)
			return -ENOMEM;
	}
	if (!v.n)
		return -ENODATA;
	out->interrupts = v.items;
	out->numEntries = v.n;
	return 0;
}

int kp_proc_parse_irq_affinity(struct kp_proc_arena *a, char *text, size_t len,
			       struct ProcData *out)
{
	struct ProcIrqAffinityEntry *e = kp_proc_alloc(a, sizeof(*e));

	(void)len;
	if (!e || !(e->affinity = kp_proc_strdup(a, kp_proc_trim(text))))
		return -ENOMEM;
	out->irqAffinity = e;
	out->numEntries = 1;
	return 0;
}

/* "some avg10=0.00 avg60=0.00 avg300=0.00 total=0", then the same for "full". */
int kp_proc_parse_pressure(struct kp_proc_arena *a, char *text, size_t len, struct ProcData *out)
{
	struct kp_proc_vec v = { 0 };
	char *cur = text, *line;

	(void)len;
	while ((line = kp_proc_line(&cur))) {
		char *type = kp_proc_word(&line), *w;
		struct ProcPressureEntry *e;

		if (!type)
			continue;
		e = kp_proc_push(a, &v, sizeof(*e));
		if (!e || !(e->type = kp_proc_strdup(a, type)))
			return -ENOMEM;
		while ((w = kp_proc_word(&line))) {
			char *eq = strchr(w, '=');

			if (!eq)
				continue;
			*eq++ = '\0';
			if (!strcmp(w, "avg10"))
				e->avg10 = kp_proc_double(eq);
			else if (!strcmp(w, "avg60"))
				e->avg60 = kp_proc_double(eq);
			else if (!strcmp(w, "avg300"))
				e->avg300 = kp_proc_double(eq);
			else if (!strcmp(w, "total"))
				e->total = kp_proc_ull(eq);
		}
	}
	if (!v.n)
		return -ENODATA;
	out->pressure = v.items;
	out->numEntries = v.n;
	return 0;
}
