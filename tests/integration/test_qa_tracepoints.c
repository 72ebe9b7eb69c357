/*
 * test_qa_tracepoints.c - acceptance tests of issue 4 through the real collection path:
 * PmuOpen(SAMPLING) on tracepoints (the BPF program copies each raw record into the ring
 * buffer), then PmuGetField / PmuGetFieldExp on what PmuRead returns. The workload
 * (tests/workloads/tracepoints.c) execs a path the test chose, opens a file with known flags
 * and sleeps a known number of times, so every decoded field has a value known in advance.
 * Also PmuDumpData of a real CPU profile, read back line by line.
 */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <sys/syscall.h>

#include "core/core.h"
#include "kperf/kperf.h"
#include "testutil.h"

#define OPEN_FLAGS (O_WRONLY | O_APPEND | O_CLOEXEC | O_NOCTTY)
#define SLEEPS 20

struct run {
	struct PmuData *d;
	int n;
	pid_t pid;
	char out[256]; /* the workload's stdout */
	char path[PATH_MAX]; /* what was executed */
};

/* sample <evts> of the tracepoints workload (by pid, or on <cpu> when cpu >= 0) */
static struct run run_workload(char **evts, unsigned nevt, const char *sleeps, int cpu)
{
	struct run r = { 0 };
	char *argv[] = { r.path, "--sleeps", (char *)sleeps, NULL };
	struct PmuAttr a = { .evtList = evts, .numEvt = nevt, .period = 1 };
	struct tu_child c;
	int pids[1], cpus[1], pd;

	cr_assert_not_null(realpath(tu_path("workloads/tracepoints"), r.path));
	c = tu_exec_later(argv, cpu);
	r.pid = c.pid;
	if (cpu >= 0) {
		cpus[0] = cpu;
		a.cpuList = cpus;
		a.numCpu = 1;
	} else {
		pids[0] = c.pid;
		a.pidList = pids;
		a.numPid = 1;
	}
	pd = PmuOpen(SAMPLING, &a);
	cr_assert_gt(pd, 0, "PmuOpen: %d %s", Perrorno(), Perror());
	cr_assert_eq(PmuEnable(pd), 0, "%s", Perror());
	cr_assert_eq(tu_exec_finish(&c, r.out, sizeof(r.out)), 0, "workload: %s", r.out);
	cr_assert_eq(PmuDisable(pd), 0, "%s", Perror());
	r.n = PmuRead(pd, &r.d);
	cr_assert_geq(r.n, 0, "PmuRead: %s", Perror());
	cr_assert_neq(GetWarn(), KPERF_WARN_RECORDS_DROPPED, "%s", GetWarnMsg());
	PmuClose(pd);
	cr_assert_eq(tu_bpf_fds(), 0, "BPF objects left open after PmuClose");
	return r;
}

static int32_t get_i32(struct SampleRawData *raw, const char *field)
{
	int32_t v = 0;

	cr_assert_eq(PmuGetField(raw, field, &v, sizeof(v)), 0, "%s: %s", field, Perror());
	return v;
}

static uint64_t get_u64(struct SampleRawData *raw, const char *field)
{
	uint64_t v = 0;

	cr_assert_eq(PmuGetField(raw, field, &v, sizeof(v)), 0, "%s: %s", field, Perror());
	return v;
}

static void get_str(struct SampleRawData *raw, const char *field, char *buf, size_t size)
{
	cr_assert_eq(PmuGetField(raw, field, buf, (uint32_t)size), 0, "%s: %s", field, Perror());
}

/* what every record of a run must be: its event, the workload (pid filter), a topology */
static void assert_record(const struct PmuData *d, const char *evt, const struct run *r)
{
	cr_assert_str_eq(d->evt, evt);
	cr_assert_not_null(d->rawData, "a tracepoint record without rawData");
	cr_assert_eq(d->count, 1);
	cr_assert_gt(d->ts, 0);
	cr_assert_geq(d->cpu, 0);
	cr_assert_not_null(d->cpuTopo, "cpuTopo of cpu %d", d->cpu);
	cr_assert_eq(d->cpuTopo->coreId, d->cpu);
	cr_assert_eq(d->cpuTopo->numaId, 0, "this VM has one numa node");
	if (r) {
		cr_assert_eq(d->pid, r->pid);
		cr_assert_eq(d->tid, r->pid);
	}
}

/* the (offset, size, signed) of <field> in the tracefs format file, parsed here */
static bool format_field(const char *sys, const char *evt, const char *field, unsigned *off,
			 unsigned *size, unsigned *is_signed, char *decl, size_t decl_size)
{
	char path[PATH_MAX], line[512];
	bool found = false;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/kernel/tracing/events/%s/%s/format", sys, evt);
	f = fopen(path, "r");
	cr_assert_not_null(f, "%s", path);
	while (!found && fgets(line, sizeof(line), f)) {
		char *p = strstr(line, "field:"), *semi;

		if (!p || !(semi = strchr(p, ';')))
			continue;
		/* "field:DECL;" where DECL ends with the name (or name[N]) */
		*semi = '\0';
		if (!strstr(p, field))
			continue;
		{
			const char *name = strrchr(p, ' ');
			size_t n = strlen(field);

			if (!name || strncmp(name + 1, field, n) ||
			    (name[1 + n] && name[1 + n] != '['))
				continue;
		}
		snprintf(decl, decl_size, "%s", p + 6);
		cr_assert_eq(sscanf(semi + 1, " offset:%u; size:%u; signed:%u;", off, size,
				    is_signed),
			     3, "%s", semi + 1);
		found = true;
	}
	fclose(f);
	return found;
}

Test(qa_tp, exec_filename_is_the_path_executed)
{
	char *evts[] = { "sched:sched_process_exec" };
	struct run r = run_workload(evts, 1, "0", -1);
	char fname[PATH_MAX], small[8];
	struct SampleRawField *f;
	unsigned off, size, sgn;
	char decl[128];

	cr_assert_eq(r.n, 1, "%d exec records: one exec", r.n);
	assert_record(&r.d[0], "sched:sched_process_exec", &r);
	cr_assert_str_eq(r.d[0].comm, "tracepoints", "the comm after the exec");
	get_str(r.d[0].rawData, "filename", fname, sizeof(fname));
	cr_assert_str_eq(fname, r.path);
	cr_assert_eq(get_i32(r.d[0].rawData, "pid"), r.pid);
	cr_assert_eq(get_i32(r.d[0].rawData, "old_pid"), r.pid);
	cr_assert_eq(get_i32(r.d[0].rawData, "common_pid"), r.pid);
	/* exactly the path and its NUL fit; one byte less is refused, and nothing written */
	cr_assert_eq(PmuGetField(r.d[0].rawData, "filename", fname, (uint32_t)strlen(r.path) + 1),
		     0, "%s", Perror());
	memset(small, 'x', sizeof(small));
	cr_assert_eq(PmuGetField(r.d[0].rawData, "filename", small, 4),
		     LIBPERF_ERR_INVALID_FIELD_ARGS);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_INVALID_FIELD_ARGS);
	cr_assert(strstr(Perror(), "field 'filename'"), "%s", Perror());
	for (size_t i = 0; i < sizeof(small); i++)
		cr_assert_eq(small[i], 'x', "byte %zu written on a refused copy", i);

	f = PmuGetFieldExp(r.d[0].rawData, "filename");
	cr_assert_not_null(f, "%s", Perror());
	cr_assert(format_field("sched", "sched_process_exec", "filename", &off, &size, &sgn, decl,
			       sizeof(decl)));
	cr_assert_str_eq(f->fieldName, "filename");
	cr_assert_str_eq(f->fieldStr, decl);
	cr_assert_str_eq(f->fieldStr, "__data_loc char[] filename");
	cr_assert_eq(f->offset, off);
	cr_assert_eq(f->size, size);
	cr_assert_eq(f->isSigned, sgn);
	PmuDataFree(r.d);
}

Test(qa_tp, sched_switch_out_of_a_known_workload)
{
	char *evts[] = { "sched:sched_switch" };
	struct run r = run_workload(evts, 1, "20", -1);
	char comm[16], big[64];
	int i, sleeps = 0, after_exec = 0;

	/* the pid filter keeps the hits where the workload is the task switching out */
	cr_assert_geq(r.n, SLEEPS, "%d switches", r.n);
	for (i = 0; i < r.n; i++) {
		struct SampleRawData *raw = r.d[i].rawData;

		assert_record(&r.d[i], "sched:sched_switch", &r);
		if (i)
			cr_assert_geq(r.d[i].ts, r.d[i - 1].ts, "records in time order");
		cr_assert_eq(get_i32(raw, "prev_pid"), r.pid);
		cr_assert_neq(get_i32(raw, "next_pid"), r.pid, "a task does not switch to itself");
		get_str(raw, "prev_comm", comm, sizeof(comm));
		cr_assert_str_eq(comm, r.d[i].comm, "prev_comm is the record's comm");
		if (strcmp(comm, "tracepoints"))
			continue; /* before the exec the child has the test's name */
		after_exec++;
		/* blocked in nanosleep: TASK_INTERRUPTIBLE (1); preemption is not a sleep */
		if (get_u64(raw, "prev_state") == 1)
			sleeps++;
	}
	cr_assert_eq(sleeps, SLEEPS, "%d voluntary switches of the workload", sleeps);
	cr_assert_geq(after_exec, SLEEPS);
	/* a char[16] into a bigger buffer: NUL-terminated, the rest untouched */
	memset(big, 'y', sizeof(big));
	get_str(r.d[r.n - 1].rawData, "prev_comm", big, sizeof(big));
	cr_assert_str_eq(big, "tracepoints");
	cr_assert_eq(big[strlen("tracepoints") + 1], 'y');
	PmuDataFree(r.d);
}

Test(qa_tp, sched_switch_in_on_one_cpu)
{
	char *evts[] = { "sched:sched_switch" };
	struct run r;
	char comm[16];
	int i, j, in = 0;

	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		cr_skip_test("needs 2 cpus");
	/* every switch of cpu 1, where the workload is pinned */
	r = run_workload(evts, 1, "20", 1);
	cr_assert_gt(r.n, 2 * SLEEPS, "%d switches on cpu 1", r.n);
	for (i = 0; i < r.n; i++) {
		assert_record(&r.d[i], "sched:sched_switch", NULL);
		cr_assert_eq(r.d[i].cpu, 1, "cpu filter");
		if (get_i32(r.d[i].rawData, "next_pid") != r.pid)
			continue;
		get_str(r.d[i].rawData, "next_comm", comm, sizeof(comm));
		if (strcmp(comm, "tracepoints"))
			continue;
		in++;
		/* the next switch of this cpu is the workload going out again */
		for (j = i + 1; j < r.n && r.d[j].ts < r.d[i].ts; j++)
			;
		cr_assert_lt(j, r.n, "switched in at record %d and never out", i);
		cr_assert_eq(get_i32(r.d[j].rawData, "prev_pid"), r.pid, "record %d", j);
		get_str(r.d[j].rawData, "prev_comm", comm, sizeof(comm));
		cr_assert_str_eq(comm, "tracepoints");
	}
	cr_assert_geq(in, SLEEPS, "switched in %d times after %d sleeps", in, SLEEPS);
	PmuDataFree(r.d);
}

Test(qa_tp, sys_enter_openat_arguments)
{
	char *evts[] = { "syscalls:sys_enter_openat", "sched:sched_process_exec" };
	struct run r = run_workload(evts, 2, "0", -1);
	unsigned long long want_ptr = 0;
	int want_flags = 0, i, mine = 0, opens = 0, execs = 0;

	cr_assert_eq(sscanf(r.out, "filename=%llx flags=%d", &want_ptr, &want_flags), 2, "%s",
		     r.out);
	cr_assert_eq(want_flags, OPEN_FLAGS);
	for (i = 0; i < r.n; i++) {
		struct SampleRawData *raw = r.d[i].rawData;

		if (!strcmp(r.d[i].evt, "sched:sched_process_exec")) {
			execs++;
			continue;
		}
		assert_record(&r.d[i], "syscalls:sys_enter_openat", &r);
		opens++;
		cr_assert_eq(get_i32(raw, "__syscall_nr"), SYS_openat);
		if (get_u64(raw, "flags") != (uint64_t)OPEN_FLAGS)
			continue;
		mine++;
		cr_assert_eq(get_u64(raw, "filename"), (uint64_t)want_ptr);
		cr_assert_eq((int64_t)get_u64(raw, "dfd"), (int64_t)AT_FDCWD);
		cr_assert_eq(get_u64(raw, "mode"), 0);
	}
	cr_assert_eq(execs, 1);
	cr_assert_eq(mine, 1, "%d openat records with the workload's flags", mine);
	cr_assert_gt(opens, 1, "the dynamic loader's opens are recorded too");
	PmuDataFree(r.d);
}

Test(qa_tp, field_errors_on_real_records)
{
	char *evts[] = { "sched:sched_process_exec" };
	struct run r = run_workload(evts, 1, "0", -1);
	struct SampleRawData copy;
	struct SampleRawField *f;
	char buf[64];
	int32_t pid = 0;
	int8_t tiny = 0;

	cr_assert_eq(r.n, 1);
	cr_assert_eq(PmuGetField(r.d[0].rawData, "filenam", buf, sizeof(buf)),
		     LIBPERF_ERR_INVALID_FIELD_ARGS);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_INVALID_FIELD_ARGS);
	cr_assert(strstr(Perror(), "tracepoint sched:sched_process_exec has no field 'filenam' "
				   "(did you mean filename?)"),
		  "%s", Perror());
	cr_assert_null(PmuGetFieldExp(r.d[0].rawData, "nosuch"));
	cr_assert_eq(Perrorno(), LIBPERF_ERR_INVALID_FIELD_ARGS);
	cr_assert(strstr(Perror(), "its fields: filename, pid, old_pid"), "%s", Perror());
	cr_assert_eq(PmuGetField(r.d[0].rawData, "pid", &tiny, sizeof(tiny)),
		     LIBPERF_ERR_INVALID_FIELD_ARGS);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_INVALID_FIELD_ARGS);
	cr_assert_eq(tiny, 0, "a refused copy writes nothing");
	cr_assert_eq(PmuGetField(NULL, "pid", &pid, sizeof(pid)), LIBPERF_ERR_INVALID_FIELD_ARGS);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_INVALID_FIELD_ARGS);
	cr_assert_eq(PmuGetField(r.d[0].rawData, NULL, &pid, sizeof(pid)),
		     LIBPERF_ERR_INVALID_FIELD_ARGS);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_INVALID_FIELD_ARGS);
	cr_assert_eq(PmuGetField(r.d[0].rawData, "", &pid, sizeof(pid)),
		     LIBPERF_ERR_INVALID_FIELD_ARGS);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_INVALID_FIELD_ARGS);
	cr_assert_eq(PmuGetField(r.d[0].rawData, "pid", NULL, 4), LIBPERF_ERR_INVALID_FIELD_ARGS);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_INVALID_FIELD_ARGS);
	/* a caller's copy of the struct still points at the record: accepted */
	copy = *r.d[0].rawData;
	cr_assert_eq(PmuGetField(&copy, "pid", &pid, sizeof(pid)), 0, "%s", Perror());
	cr_assert_eq(pid, r.pid);
	/* a struct of the caller's that points at bytes the library never returned */
	copy.data = buf;
	cr_assert_eq(PmuGetField(&copy, "pid", &pid, sizeof(pid)), LIBPERF_ERR_INVALID_FIELD_ARGS);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_INVALID_FIELD_ARGS);
	/* success clears the error */
	f = PmuGetFieldExp(r.d[0].rawData, "pid");
	cr_assert_not_null(f);
	cr_assert_eq(Perrorno(), SUCCESS);
	cr_assert_eq(f->isSigned, 1);
	cr_assert_eq(f->size, 4);
	PmuDataFree(r.d);
}

/* every field of sched_switch described as the format file says */
Test(qa_tp, field_exp_matches_the_format_file)
{
	static const char *const fields[] = { "common_type", "common_pid", "prev_comm",
					      "prev_pid",    "prev_prio",  "prev_state",
					      "next_comm",   "next_pid",   "next_prio" };
	char *evts[] = { "sched:sched_switch" };
	struct run r = run_workload(evts, 1, "1", -1);
	unsigned i, off, size, sgn;
	char decl[128];

	cr_assert_gt(r.n, 0);
	for (i = 0; i < KP_ARRAY_SIZE(fields); i++) {
		struct SampleRawField *f = PmuGetFieldExp(r.d[0].rawData, fields[i]);

		cr_assert_not_null(f, "%s: %s", fields[i], Perror());
		cr_assert(format_field("sched", "sched_switch", fields[i], &off, &size, &sgn, decl,
				       sizeof(decl)),
			  "%s not in the format file", fields[i]);
		cr_assert_str_eq(f->fieldName, fields[i]);
		cr_assert_str_eq(f->fieldStr, decl, "%s", fields[i]);
		cr_assert_eq(f->offset, off, "%s", fields[i]);
		cr_assert_eq(f->size, size, "%s", fields[i]);
		cr_assert_eq(f->isSigned, sgn, "%s", fields[i]);
		/* the same description every time (parsed once, cached) */
		cr_assert_eq(PmuGetFieldExp(r.d[r.n - 1].rawData, fields[i]), f);
	}
	PmuDataFree(r.d);
}

Test(qa_tp, bad_tracepoint_names)
{
	static const char *const bad[] = { "sched:no_such_event", "nosys:foo", "sched:" };
	static const char *const msg[] = {
		"tracepoint sched:no_such_event does not exist",
		"tracepoint nosys:foo does not exist",
		"'sched:' is not a valid tracepoint name",
	};
	unsigned i;

	for (i = 0; i < KP_ARRAY_SIZE(bad); i++) {
		char *evts[] = { (char *)bad[i] };
		struct PmuAttr a = { .evtList = evts, .numEvt = 1, .period = 1 };

		cr_assert_eq(PmuOpen(SAMPLING, &a), -1, "%s", bad[i]);
		cr_assert_eq(Perrorno(), LIBPERF_ERR_INVALID_EVENT, "%s", bad[i]);
		cr_assert(strstr(Perror(), msg[i]), "%s", Perror());
	}
	cr_assert_eq(tu_bpf_fds(), 0);
}

/* ---- PmuDumpData of a real profile, read back ---- */

struct line {
	char *f[8];
	int n;
};

static struct line split_tabs(char *s)
{
	struct line l = { 0 };
	char *save = NULL, *t;

	for (t = strtok_r(s, "\t", &save); t && l.n < 8; t = strtok_r(NULL, "\t", &save))
		l.f[l.n++] = t;
	return l;
}

Test(qa_dump, real_profile_read_back)
{
	char *argv[] = { "cpuburn", "--ms", "300", "--wait", NULL };
	char *evts[] = { "cpu-clock" };
	char path[64], *text, *line, *save = NULL;
	struct PmuAttr a = { .evtList = evts,
			     .numEvt = 1,
			     .useFreq = 1,
			     .freq = 999,
			     .callStack = 1,
			     .symbolMode = RESOLVE_ELF_DWARF };
	struct tu_proc w = tu_spawn_v(argv, 0);
	struct PmuData *d;
	const struct Stack *st = NULL;
	int pids[1], pd, n, rec = -1, frames = 0, hot = 0, total_frames = 0, i;
	size_t len;

	cr_assert_gt(w.pid, 0);
	pids[0] = w.pid;
	a.pidList = pids;
	a.numPid = 1;
	pd = PmuOpen(SAMPLING, &a);
	cr_assert_gt(pd, 0, "%s", Perror());
	cr_assert_eq(PmuEnable(pd), 0);
	tu_go(&w);
	cr_assert_eq(tu_wait(&w), 0);
	PmuDisable(pd);
	n = PmuRead(pd, &d);
	PmuClose(pd);
	cr_assert_gt(n, 0, "%s", Perror());
	for (i = 0; i < n; i++)
		for (st = d[i].stack; st; st = st->next)
			total_frames += st->symbol != NULL;

	snprintf(path, sizeof(path), "/tmp/kperf-qa-dump-%d.txt", getpid());
	unlink(path);
	cr_assert_eq(PmuDumpData(d, (unsigned)n, path, 1), 0, "%s", Perror());
	cr_assert_eq(kp_read_file(path, &text, &len), 0);
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		bool frame = line[0] == '\t';
		struct line l = split_tabs(line);

		if (!frame) {
			/* comm pid tid cpu period evt count: the next record, exactly */
			if (rec >= 0)
				cr_assert_null(st, "record %d: fewer frames in the file", rec);
			rec++;
			cr_assert_lt(rec, n, "more records in the file than in the data");
			cr_assert_eq(l.n, 7, "record line: %d fields", l.n);
			cr_assert_str_eq(l.f[0], d[rec].comm);
			cr_assert_eq(atoi(l.f[1]), d[rec].pid);
			cr_assert_eq(atoi(l.f[2]), d[rec].tid);
			cr_assert_eq(atoi(l.f[3]), d[rec].cpu);
			cr_assert_eq(strtoull(l.f[4], NULL, 10), d[rec].period);
			cr_assert_str_eq(l.f[5], "cpu-clock");
			cr_assert_eq(strtoull(l.f[6], NULL, 10), d[rec].count);
			st = d[rec].stack;
			continue;
		}
		/* 0xADDR SYMBOL+0xOFF MODULE FILE:LINE: the record's next frame with a symbol */
		while (st && !st->symbol)
			st = st->next;
		cr_assert_not_null(st, "record %d: more frames in the file", rec);
		cr_assert_eq(l.n, 4, "frame line: %d fields", l.n);
		cr_assert_eq(strtoul(l.f[0], NULL, 16), st->symbol->addr);
		{
			char want[1024];

			snprintf(want, sizeof(want), "%s+0x%lx",
				 st->symbol->symbolName ? st->symbol->symbolName : "[unknown]",
				 st->symbol->offset);
			cr_assert_str_eq(l.f[1], want);
			cr_assert_str_eq(l.f[2], st->symbol->module ? st->symbol->module : "");
			snprintf(want, sizeof(want), "%s:%u",
				 st->symbol->fileName && *st->symbol->fileName ?
					 st->symbol->fileName :
					 "??",
				 st->symbol->lineNum);
			cr_assert_str_eq(l.f[3], want);
		}
		if (!strncmp(l.f[1], "hot_loop+0x", 11) && strstr(l.f[3], "cpuburn.c:"))
			hot++;
		frames++;
		st = st->next;
	}
	cr_assert_eq(rec, n - 1, "%d records in the file, %d in the data", rec + 1, n);
	cr_assert_eq(frames, total_frames);
	cr_assert_gt(hot, 0, "no hot_loop frame with its source file");
	free(text);

	/* appended, not replaced: twice the lines */
	cr_assert_eq(PmuDumpData(d, (unsigned)n, path, 1), 0, "%s", Perror());
	{
		size_t len2;

		cr_assert_eq(kp_read_file(path, &text, &len2), 0);
		cr_assert_eq(len2, 2 * len);
		free(text);
	}
	unlink(path);
	PmuDataFree(d);
}
