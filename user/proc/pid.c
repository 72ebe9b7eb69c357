/*
 * pid.c - parsers of one process's files: /proc/PID/stat, statm, status, io, smaps_rollup,
 * numa_maps, smaps, environ, cmdline, limits, stack, wchan, maps, comm, and the stat lines
 * of its threads (task/TID/stat).
 */
#include <ctype.h>
#include <errno.h>
#include <string.h>

#include "proc.h"

/* the task stat entry is the process stat entry under another name */
_Static_assert(sizeof(struct ProcPidStatEntry) == sizeof(struct ProcPidTaskStatEntry),
	       "ProcPidTaskStatEntry differs from ProcPidStatEntry");
_Static_assert(offsetof(struct ProcPidStatEntry, exitCode) ==
		       offsetof(struct ProcPidTaskStatEntry, exitCode),
	       "ProcPidTaskStatEntry differs from ProcPidStatEntry");

/* the fields after "pid (comm)" that proc(5) numbers 3 (state) to 52 (exit_code) */
#define STAT_WORDS 50

/*
 * "pid (comm) state ppid ...". comm may hold spaces and parentheses, so it runs from the
 * first '(' to the last ')'.
 */
int kp_proc_stat_line(struct kp_proc_arena *a, char *line, struct ProcPidStatEntry *e)
{
	char *open = strchr(line, '('), *close = strrchr(line, ')'), *w[STAT_WORDS] = { 0 };
	char *rest;

	if (!open || !close || close < open)
		return -ENODATA;
	e->comm = kp_proc_strndup(a, open + 1, (size_t)(close - open - 1));
	if (!e->comm)
		return -ENOMEM;
	*open = '\0';
	e->pid = kp_proc_int(line);
	rest = close + 1;
	kp_proc_words(&rest, w, STAT_WORDS);
	e->state = w[0] ? w[0][0] : '\0';
	e->ppid = kp_proc_int(w[1]);
	e->pgrp = kp_proc_int(w[2]);
	e->session = kp_proc_int(w[3]);
	e->ttyNr = kp_proc_int(w[4]);
	e->tpgid = kp_proc_int(w[5]);
	e->flags = kp_proc_ull(w[6]);
	e->minflt = kp_proc_ull(w[7]);
	e->cminflt = kp_proc_ull(w[8]);
	e->majflt = kp_proc_ull(w[9]);
	e->cmajflt = kp_proc_ull(w[10]);
	e->utime = kp_proc_ull(w[11]);
	e->stime = kp_proc_ull(w[12]);
	e->cutime = kp_proc_ll(w[13]);
	e->cstime = kp_proc_ll(w[14]);
	e->priority = kp_proc_int(w[15]);
	e->niceVal = kp_proc_int(w[16]);
	e->numThreads = kp_proc_int(w[17]);
	e->itrealvalue = kp_proc_ll(w[18]);
	e->starttime = kp_proc_ull(w[19]);
	e->vsize = kp_proc_ull(w[20]);
	e->rss = kp_proc_ll(w[21]);
	e->rsslim = kp_proc_ull(w[22]);
	e->startcode = kp_proc_ull(w[23]);
	e->endcode = kp_proc_ull(w[24]);
	e->startstack = kp_proc_ull(w[25]);
	e->kstkesp = kp_proc_ull(w[26]);
	e->kstkeip = kp_proc_ull(w[27]);
	e->signal = kp_proc_ull(w[28]);
	e->blocked = kp_proc_ull(w[29]);
	e->sigignore = kp_proc_ull(w[30]);
	e->sigcatch = kp_proc_ull(w[31]);
	e->wchan = kp_proc_ull(w[32]);
	e->nswap = kp_proc_ull(w[33]);
	e->cnswap = kp_proc_ull(w[34]);
	e->exitSignal = kp_proc_int(w[35]);
	e->processor = kp_proc_int(w[36]);
	e->rtPriority = (unsigned)kp_proc_ull(w[37]);
	e->policy = (unsigned)kp_proc_ull(w[38]);
	e->delayacctBlkioTicks = kp_proc_ull(w[39]);
	e->guestTime = kp_proc_ull(w[40]);
	e->cguestTime = kp_proc_ll(w[41]);
	e->startData = kp_proc_ull(w[42]);
	e->endData = kp_proc_ull(w[43]);
	e->startBrk = kp_proc_ull(w[44]);
	e->argStart = kp_proc_ull(w[45]);
	e->argEnd = kp_proc_ull(w[46]);
	e->envStart = kp_proc_ull(w[47]);
	e->envEnd = kp_proc_ull(w[48]);
	e->exitCode = kp_proc_int(w[49]);
	return 0;
}

/* As libkperf, a stat file without "(comm)" still gives one entry, all zero. */
int kp_proc_parse_pid_stat(struct kp_proc_arena *a, char *text, size_t len, struct ProcData *out)
{
	struct ProcPidStatEntry *e;
	int err;

	(void)len;
	text = kp_proc_trim(text);
	if (!*text)
		return -ENODATA;
	e = kp_proc_alloc(a, sizeof(*e));
	if (!e)
		return -ENOMEM;
	err = kp_proc_stat_line(a, text, e);
	if (err == -ENOMEM || (err && !(e->comm = kp_proc_strdup(a, ""))))
		return -ENOMEM;
	out->pidStat = e;
	out->numEntries = 1;
	return 0;
}

int kp_proc_parse_pid_task_stat(struct kp_proc_arena *a, char *text, size_t len,
				struct ProcData *out)
{
	struct kp_proc_vec v = { 0 };
	char *cur = text, *line;

	(void)len;
	while ((line = kp_proc_line(&cur))) {
		struct ProcPidStatEntry e = { 0 };
		struct ProcPidTaskStatEntry *slot;
		int err = kp_proc_stat_line(a, line, &e);

		if (err == -ENODATA)
			continue;
		if (err || !(slot = kp_proc_push(a, &v, sizeof(*slot))))
			return -ENOMEM;
		memcpy(slot, &e, sizeof(*slot));
	}
	if (!v.n)
		return -ENODATA;
	out->pidTaskStat = v.items;
	out->numEntries = v.n;
	return 0;
}

int kp_proc_parse_pid_statm(struct kp_proc_arena *a, char *text, size_t len, struct ProcData *out)
{
	struct ProcPidStatmEntry *e;
	char *w[7] = { 0 };

	(void)len;
	text = kp_proc_trim(text);
	if (!*text)
		return -ENODATA;
	e = kp_proc_alloc(a, sizeof(*e));
	if (!e)
		return -ENOMEM;
	kp_proc_words(&text, w, 7);
	e->size = kp_proc_ull(w[0]);
	e->resident = kp_proc_ull(w[1]);
	e->shared = kp_proc_ull(w[2]);
	e->text = kp_proc_ull(w[3]);
	e->lib = kp_proc_ull(w[4]);
	e->data = kp_proc_ull(w[5]);
	e->dt = kp_proc_ull(w[6]);
	out->pidStatm = e;
	out->numEntries = 1;
	return 0;
}

/* Every "key: value" line (key not empty) of the text as one entry's fields. When
 * <rollup_header>, the "... [rollup]" line of smaps_rollup is kept as field "rollup". */
static int one_field_list(struct kp_proc_arena *a, char *text, bool rollup_header,
			  struct kp_proc_vec *fields)
{
	char *cur = text, *line, *key, *value;

	while ((line = kp_proc_line(&cur))) {
		line = kp_proc_trim(line);
		if (rollup_header && strstr(line, "[rollup]")) {
			if (kp_proc_push_field(a, fields, "rollup", line))
				return -ENOMEM;
			continue;
		}
		if (kp_proc_colon(line, &key, &value) && *key &&
		    kp_proc_push_field(a, fields, key, value))
			return -ENOMEM;
	}
	return fields->n ? 0 : -ENODATA;
}

int kp_proc_parse_pid_status(struct kp_proc_arena *a, char *text, size_t len, struct ProcData *out)
{
	struct kp_proc_vec fields = { 0 };
	struct ProcPidStatusEntry *e;
	int err;

	(void)len;
	err = one_field_list(a, text, false, &fields);
	if (err)
		return err;
	e = kp_proc_alloc(a, sizeof(*e));
	if (!e)
		return -ENOMEM;
	e->numFields = fields.n;
	e->fields = fields.items;
	out->pidStatus = e;
	out->numEntries = 1;
	return 0;
}

int kp_proc_parse_pid_smaps_rollup(struct kp_proc_arena *a, char *text, size_t len,
				   struct ProcData *out)
{
	struct kp_proc_vec fields = { 0 };
	struct ProcPidSmapsRollupEntry *e;
	int err;

	(void)len;
	err = one_field_list(a, text, true, &fields);
	if (err)
		return err;
	e = kp_proc_alloc(a, sizeof(*e));
	if (!e)
		return -ENOMEM;
	e->numFields = fields.n;
	e->fields = fields.items;
	out->pidSmapsRollup = e;
	out->numEntries = 1;
	return 0;
}

int kp_proc_parse_pid_io(struct kp_proc_arena *a, char *text, size_t len, struct ProcData *out)
{
	struct ProcPidIoEntry *e = kp_proc_alloc(a, sizeof(*e));
	char *cur = text, *line, *key, *value;

	(void)len;
	if (!e)
		return -ENOMEM;
	while ((line = kp_proc_line(&cur))) {
		if (!kp_proc_colon(line, &key, &value))
			continue;
		if (!strcmp(key, "rchar"))
			e->rchar = kp_proc_ull(value);
		else if (!strcmp(key, "wchar"))
			e->wchar = kp_proc_ull(value);
		else if (!strcmp(key, "syscr"))
			e->syscr = kp_proc_ull(value);
		else if (!strcmp(key, "syscw"))
			e->syscw = kp_proc_ull(value);
		else if (!strcmp(key, "read_bytes"))
			e->readBytes = kp_proc_ull(value);
		else if (!strcmp(key, "write_bytes"))
			e->writeBytes = kp_proc_ull(value);
		else if (!strcmp(key, "cancelled_write_bytes"))
			e->cancelledWriteBytes = kp_proc_ull(value);
	}
	out->pidIo = e;
	out->numEntries = 1;
	return 0;
}

/* "7f00a000 default file=/usr/lib/x.so mapped=3 N0=3": key=value words, others "flag". */
int kp_proc_parse_pid_numa_maps(struct kp_proc_arena *a, char *text, size_t len,
				struct ProcData *out)
{
	struct kp_proc_vec v = { 0 };
	char *cur = text, *line;

	(void)len;
	while ((line = kp_proc_line(&cur))) {
		struct kp_proc_vec fields = { 0 };
		struct ProcPidNumaMapsEntry *e;
		char *addr = kp_proc_word(&line), *w;

		if (!addr)
			continue;
		while ((w = kp_proc_word(&line))) {
			char *eq = strchr(w, '=');
			int err;

			if (eq) {
				*eq = '\0';
				err = kp_proc_push_field(a, &fields, w, eq + 1);
			} else {
				err = kp_proc_push_field(a, &fields, "flag", w);
			}
			if (err)
				return err;
		}
		e = kp_proc_push(a, &v, sizeof(*e));
		if (!e || !(e->address = kp_proc_strdup(a, addr)))
			return -ENOMEM;
		e->numFields = fields.n;
		e->fields = fields.items;
	}
	if (!v.n)
		return -ENODATA;
	out->pidNumaMaps = v.items;
	out->numEntries = v.n;
	return 0;
}

/* A maps line opens a mapping: hex digits, '-', a hex digit. */
static bool is_mapping_line(const char *s)
{
	const char *p = s;

	while (isxdigit((unsigned char)*p))
		p++;
	return p > s && *p == '-' && isxdigit((unsigned char)p[1]);
}

int kp_proc_parse_pid_smaps(struct kp_proc_arena *a, char *text, size_t len, struct ProcData *out)
{
	struct kp_proc_vec v = { 0 }, fields = { 0 };
	struct ProcPidSmapsEntry *e = NULL;
	char *cur = text, *line, *key, *value;

	(void)len;
	while ((line = kp_proc_line(&cur))) {
		line = kp_proc_trim(line);
		if (!*line)
			continue;
		if (is_mapping_line(line)) {
			if (e) {
				e->numFields = fields.n;
				e->fields = fields.items;
				fields = (struct kp_proc_vec){ 0 };
			}
			e = kp_proc_push(a, &v, sizeof(*e));
			if (!e || !(e->mapping = kp_proc_strdup(a, line)))
				return -ENOMEM;
			continue;
		}
		if (e && kp_proc_colon(line, &key, &value) &&
		    kp_proc_push_field(a, &fields, key, value))
			return -ENOMEM;
	}
	if (!e)
		return -ENODATA;
	e->numFields = fields.n;
	e->fields = fields.items;
	out->pidSmaps = v.items;
	out->numEntries = v.n;
	return 0;
}

/* NUL-separated NAME=value strings; one without '=' is a name with value "". */
int kp_proc_parse_pid_environ(struct kp_proc_arena *a, char *text, size_t len, struct ProcData *out)
{
	struct kp_proc_vec v = { 0 };
	char *cur = text, *line;
	size_t i;

	for (i = 0; i < len; i++)
		if (!text[i])
			text[i] = '\n';
	while ((line = kp_proc_line(&cur))) {
		struct ProcPidEnvironEntry *e;
		char *eq;

		line = kp_proc_trim(line);
		if (!*line)
			continue;
		eq = strchr(line, '=');
		if (eq)
			*eq++ = '\0';
		e = kp_proc_push(a, &v, sizeof(*e));
		if (!e || !(e->name = kp_proc_strdup(a, line)) ||
		    !(e->value = kp_proc_strdup(a, eq)))
			return -ENOMEM;
	}
	if (!v.n)
		return -ENODATA;
	out->pidEnviron = v.items;
	out->numEntries = v.n;
	return 0;
}

/* The arguments, NUL-separated in the file, joined by spaces. */
int kp_proc_parse_pid_cmdline(struct kp_proc_arena *a, char *text, size_t len, struct ProcData *out)
{
	struct ProcPidCmdlineEntry *e = kp_proc_alloc(a, sizeof(*e));
	size_t i;

	for (i = 0; i < len; i++)
		if (!text[i])
			text[i] = ' ';
	if (!e || !(e->cmdline = kp_proc_strdup(a, kp_proc_trim(text))))
		return -ENOMEM;
	out->pidCmdline = e;
	out->numEntries = 1;
	return 0;
}

int kp_proc_parse_pid_wchan(struct kp_proc_arena *a, char *text, size_t len, struct ProcData *out)
{
	struct ProcPidWchanEntry *e = kp_proc_alloc(a, sizeof(*e));

	(void)len;
	if (!e || !(e->wchan = kp_proc_strdup(a, kp_proc_trim(text))))
		return -ENOMEM;
	out->pidWchan = e;
	out->numEntries = 1;
	return 0;
}

int kp_proc_parse_pid_comm(struct kp_proc_arena *a, char *text, size_t len, struct ProcData *out)
{
	struct ProcPidCommEntry *e = kp_proc_alloc(a, sizeof(*e));

	(void)len;
	if (!e || !(e->comm = kp_proc_strdup(a, kp_proc_trim(text))))
		return -ENOMEM;
	out->pidComm = e;
	out->numEntries = 1;
	return 0;
}

static bool is_limit_unit(const char *w)
{
	static const char *const units[] = { "seconds", "bytes", "processes", "files", "locks",
					     "signals", "us",	 "ms",	      "kB",    "MB" };
	size_t i;

	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (!strcmp(w, units[i]))
			return true;
	return false;
}

/* The words <w>[0..n) joined by single spaces. */
static char *join_words(struct kp_proc_arena *a, char **w, unsigned n)
{
	size_t len = 0, at = 0;
	unsigned i;
	char *s;

	for (i = 0; i < n; i++)
		len += strlen(w[i]) + 1;
	s = kp_proc_alloc(a, len + 1);
	if (!s)
		return NULL;
	for (i = 0; i < n; i++) {
		if (i)
			s[at++] = ' ';
		memcpy(s + at, w[i], strlen(w[i]));
		at += strlen(w[i]);
	}
	s[at] = '\0';
	return s;
}

/*
 * After the header line: "Max open files  1024  4096  files"; the name has spaces, so the
 * line is read from its end: units (when the last word is a known unit), hard, soft, and
 * the words before them are the name.
 */
int kp_proc_parse_pid_limits(struct kp_proc_arena *a, char *text, size_t len, struct ProcData *out)
{
	struct kp_proc_vec v = { 0 };
	char *cur = text, *line;
	bool header = true;

	(void)len;
	while ((line = kp_proc_line(&cur))) {
		unsigned n = kp_proc_count_words(line), tail;
		struct ProcPidLimitsEntry *e;
		char **w;

		if (!n)
			continue;
		if (header) {
			header = false;
			continue;
		}
		if (n < 3)
			continue;
		w = kp_proc_alloc(a, n * sizeof(*w));
		if (!w)
			return -ENOMEM;
		kp_proc_words(&line, w, n);
		tail = n >= 4 && is_limit_unit(w[n - 1]) ? 3 : 2;
		e = kp_proc_push(a, &v, sizeof(*e));
		if (!e || !(e->limit = join_words(a, w, n - tail)) ||
		    !(e->soft = kp_proc_strdup(a, w[n - tail])) ||
		    !(e->hard = kp_proc_strdup(a, w[n - tail + 1])) ||
		    !(e->units = kp_proc_strdup(a, tail == 3 ? w[n - 1] : NULL)))
			return -ENOMEM;
	}
	if (!v.n)
		return -ENODATA;
	out->pidLimits = v.items;
	out->numEntries = v.n;
	return 0;
}

/* "[<0>] func+0x1/0x2": frames without an offset (no '+') are left out, as in libkperf. An
 * empty stack is a valid answer: no entries. */
int kp_proc_parse_pid_stack(struct kp_proc_arena *a, char *text, size_t len, struct ProcData *out)
{
	struct kp_proc_vec v = { 0 };
	char *cur = text, *line;

	(void)len;
	while ((line = kp_proc_line(&cur))) {
		char *open = strstr(line, "[<"), *close = strstr(line, ">]"), *sym;
		struct ProcPidStackEntry *e;

		if (!open || !close || close <= open)
			continue;
		sym = kp_proc_trim(close + 2);
		if (!*sym || !strchr(sym, '+'))
			continue;
		e = kp_proc_push(a, &v, sizeof(*e));
		if (!e ||
		    !(e->address = kp_proc_strndup(a, open + 2, (size_t)(close - open - 2))) ||
		    !(e->symbol = kp_proc_strdup(a, sym)))
			return -ENOMEM;
	}
	out->pidStack = v.items;
	out->numEntries = v.n;
	return 0;
}

/* "start-end perms offset dev inode [pathname]"; a pathname with spaces is kept whole
 * (runs of spaces inside it become one, as in libkperf). */
int kp_proc_parse_pid_maps(struct kp_proc_arena *a, char *text, size_t len, struct ProcData *out)
{
	struct kp_proc_vec v = { 0 };
	char *cur = text, *line;

	(void)len;
	while ((line = kp_proc_line(&cur))) {
		struct ProcPidMapsEntry *e;
		char *w[5] = { 0 }, *end = NULL, *dash;

		if (!kp_proc_words(&line, w, 5))
			continue;
		dash = strchr(w[0], '-');
		if (dash) {
			*dash = '\0';
			end = dash + 1;
		}
		e = kp_proc_push(a, &v, sizeof(*e));
		if (!e || !(e->start = kp_proc_strdup(a, w[0])) ||
		    !(e->end = kp_proc_strdup(a, end)) || !(e->perms = kp_proc_strdup(a, w[1])) ||
		    !(e->offset = kp_proc_strdup(a, w[2])) || !(e->dev = kp_proc_strdup(a, w[3])) ||
		    !(e->inode = kp_proc_strdup(a, w[4])) || !(e->pathname = kp_proc_join(a, line)))
			return -ENOMEM;
	}
	if (!v.n)
		return -ENODATA;
	out->pidMaps = v.items;
	out->numEntries = v.n;
	return 0;
}
