/*
 * test_perfdata.c - the perf.data writer on hand-built records, read back by perf itself:
 * samples in the workload cpuburn (its real file, loaded at a made-up address) and in the
 * running kernel, with exact counts, threads, cpus, times, periods, symbols, event names,
 * build-ids and side-band records; then every error: bad arguments, a file that cannot be
 * created, /dev/full, a full tmpfs mid-way (the call fails and the file is cut back) and a
 * file size limit at the end (no file is left).
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <elfutils/libdwelf.h>

#include "core/core.h"
#include "kperf/kperf.h"
#include "pmu/pmu.h"
#include "testutil.h"

#define BIAS 0x555555554000ULL /* where the records say cpuburn was loaded */

static char cpuburn[4096];
static uint64_t v_hot, v_burn, v_main, k_syscall;
static char path[64];

/* the ELF address of <name> in <file>'s symbol table */
static uint64_t elf_sym(const char *file, const char *name)
{
	int fd = open(file, O_RDONLY);
	Elf_Scn *scn = NULL;
	uint64_t v = 0;
	Elf *elf;

	cr_assert_geq(fd, 0, "%s", file);
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	while ((scn = elf_nextscn(elf, scn)) && !v) {
		GElf_Shdr sh;
		Elf_Data *d;
		size_t i;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB)
			continue;
		d = elf_getdata(scn, NULL);
		for (i = 0; d && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym s;

			if (gelf_getsym(d, (int)i, &s) &&
			    !strcmp(elf_strptr(elf, sh.sh_link, s.st_name), name))
				v = s.st_value;
		}
	}
	elf_end(elf);
	close(fd);
	cr_assert_neq(v, 0, "no %s in %s", name, file);
	return v;
}

static char *build_id_hex(const char *file)
{
	static char hex[41];
	const unsigned char *id;
	int fd = open(file, O_RDONLY);
	ssize_t n, i;
	Elf *elf;

	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	n = dwelf_elf_gnu_build_id(elf, (const void **)&id);
	cr_assert_eq(n, 20);
	for (i = 0; i < n; i++)
		sprintf(hex + 2 * i, "%02x", id[i]);
	elf_end(elf);
	close(fd);
	return hex;
}

static uint64_t kallsyms(const char *name)
{
	char line[512], sym[256], t;
	unsigned long long a;
	FILE *f = fopen("/proc/kallsyms", "r");
	uint64_t v = 0;

	while (f && !v && fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx %c %255s", &a, &t, sym) == 3 && !strcmp(sym, name))
			v = a;
	if (f)
		fclose(f);
	cr_assert_neq(v, 0, "no %s in /proc/kallsyms", name);
	return v;
}

static void setup(void)
{
	int fd;

	snprintf(cpuburn, sizeof(cpuburn), "%s", tu_path("workloads/cpuburn"));
	cr_assert_not_null(realpath(tu_path("workloads/cpuburn"), cpuburn));
	v_hot = elf_sym(cpuburn, "hot_loop");
	v_burn = elf_sym(cpuburn, "burn");
	v_main = elf_sym(cpuburn, "main");
	k_syscall = kallsyms("do_syscall_64");
	strcpy(path, "/tmp/kperf-perfdata-XXXXXX");
	fd = mkstemp(path);
	cr_assert_geq(fd, 0);
	close(fd);
}

static void teardown(void)
{
	if (getenv("KEEP"))
		return;
	unlink(path);
}

TestSuite(perfdata, .init = setup, .fini = teardown);

/* a user symbol of cpuburn at <off> into the function at ELF address <v> */
static struct Symbol usym(uint64_t v, unsigned off, const char *name)
{
	return (struct Symbol){ .addr = BIAS + v + off,
				.module = cpuburn,
				.symbolName = (char *)name,
				.mangleName = (char *)name,
				.fileName = "",
				.offset = off,
				.codeMapAddr = v + off,
				.mntPoint = "" };
}

struct rec {
	const char *evt;
	int pid, tid, cpu;
	int64_t ts;
	uint64_t period;
	const char *comm;
	struct Stack *stack;
};

/* a PmuData array as PmuRead returns it */
static struct PmuData *build(const struct rec *r, int n)
{
	struct kp_data_builder *b = kp_data_builder_new();
	struct PmuData *out = NULL;
	int i;

	cr_assert_not_null(b);
	for (i = 0; i < n; i++) {
		struct PmuData d = { .stack = r[i].stack,
				     .evt = r[i].evt,
				     .ts = r[i].ts,
				     .pid = r[i].pid,
				     .tid = r[i].tid,
				     .cpu = r[i].cpu,
				     .comm = r[i].comm,
				     .period = r[i].period,
				     .count = 1,
				     .countPercent = -1 };

		cr_assert_eq(kp_data_builder_add(b, &d, 0), 0);
	}
	cr_assert_eq(kp_data_builder_finish(b, &out), n);
	return out;
}

/* hot_loop <- burn <- main; main alone; do_syscall_64 (kernel) <- main */
static struct Symbol s_hot, s_burn, s_main, s_main2, s_kern;
static struct Stack st_hot[3], st_main[1], st_kern[2];

static void link_stack(struct Stack *st, int n, struct Symbol **syms)
{
	int i;

	for (i = 0; i < n; i++) {
		st[i].symbol = syms[i];
		st[i].next = i + 1 < n ? &st[i + 1] : NULL;
		st[i].prev = i ? &st[i - 1] : NULL;
	}
}

static void make_stacks(void)
{
	struct Symbol *a[] = { &s_hot, &s_burn, &s_main }, *b[] = { &s_main2 },
		      *c[] = { &s_kern, &s_main };

	s_hot = usym(v_hot, 0x1a, "hot_loop");
	s_burn = usym(v_burn, 0x4b, "burn");
	s_main = usym(v_main, 0x20, "main");
	s_main2 = usym(v_main, 0x8, "main");
	s_kern = (struct Symbol){ .addr = k_syscall + 0x10,
				  .module = "[kernel.kallsyms]",
				  .symbolName = "do_syscall_64",
				  .codeMapAddr = k_syscall + 0x10,
				  .offset = 0x10 };
	link_stack(st_hot, 3, a);
	link_stack(st_main, 1, b);
	link_stack(st_kern, 2, c);
}

static struct PmuAttr attr_of(char **evts, unsigned n)
{
	return (struct PmuAttr){
		.evtList = evts, .numEvt = n, .freq = 999, .useFreq = 1, .callStack = 1
	};
}

static char *run(const char *fmt, ...)
{
	char cmd[8192];
	va_list ap;
	char *out;
	int st;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	out = tu_run(cmd, &st);
	cr_assert_not_null(out);
	cr_assert_eq(st, 0, "%s failed (%d):\n%s", cmd, st, out);
	return out;
}

static int count_lines(const char *text, const char *needle)
{
	int n = 0;

	for (; (text = strstr(text, needle)); text++)
		n++;
	return n;
}

/* 6 samples: 3 in hot_loop (2 threads, 2 cpus), 2 in main, 1 in the kernel */
static struct PmuData *six(void)
{
	struct rec r[] = {
		{ "cpu-clock", 4000, 4000, 0, 1000000000, 1000, "burner", st_hot },
		{ "cpu-clock", 4000, 4001, 1, 1000000500, 1000, "burner", st_hot },
		{ "cpu-clock", 4000, 4000, 0, 1000001000, 1000, "burner", st_hot },
		{ "cpu-clock", 4000, 4001, 1, 1000001500, 1000, "burner", st_main },
		{ "cpu-clock", 4000, 4000, 1, 1000002000, 1000, "burner", st_main },
		{ "cpu-clock", 4000, 4000, 0, 1000002500, 1000, "burner", st_kern },
	};

	make_stacks();
	return build(r, 6);
}

Test(perfdata, perf_script_reads_every_sample_back)
{
	char *evts[] = { "cpu-clock" };
	struct PmuAttr a = attr_of(evts, 1);
	struct PmuData *d = six();
	PmuFile f = PmuBeginWrite(path, &a, 0);
	char *out, *line;
	int i = 0;

	cr_assert_not_null(f, "%d %s", Perrorno(), Perror());
	cr_assert_eq(Perrorno(), SUCCESS);
	cr_assert_eq(PmuWriteData(f, d, 6), SUCCESS, "%s", Perror());
	PmuEndWrite(f);
	cr_assert_eq(Perrorno(), SUCCESS, "%s", Perror());
	out = run("perf script -i %s -F comm,pid,tid,cpu,time,period,event,ip,sym --ns "
		  "--max-stack 1 2>&1",
		  path);
	/* per sample, in time order as the records are: a line, then its leaf frame */
	for (line = strtok(out, "\n"); line; line = strtok(NULL, "\n")) {
		char comm[32], evt[32], sym[64];
		int pid, tid, cpu;
		unsigned long sec, nsec, period, ip;

		if (line[0] == '\t') {
			cr_assert_eq(sscanf(line, " %lx %63s", &ip, sym), 2, "'%s'", line);
			cr_assert_str_eq(sym,
					 i <= 3 ? "hot_loop" :
					 i <= 5 ? "main" :
						  "do_syscall_64",
					 "sample %d: '%s'", i, line);
			continue;
		}
		cr_assert_lt(i, 6, "'%s'", line);
		cr_assert_eq(sscanf(line, "%31s %d/%d [%d] %lu.%lu: %lu %31[^:]:", comm, &pid, &tid,
				    &cpu, &sec, &nsec, &period, evt),
			     8, "line %d: '%s'", i, line);
		cr_assert_str_eq(comm, "burner");
		cr_assert_eq(pid, d[i].pid);
		cr_assert_eq(tid, d[i].tid);
		cr_assert_eq(cpu, d[i].cpu);
		cr_assert_eq(sec * 1000000000UL + nsec, (unsigned long)d[i].ts);
		cr_assert_eq(period, 1000);
		cr_assert_str_eq(evt, "cpu-clock");
		i++;
	}
	cr_assert_eq(i, 6);
	free(out);
	PmuDataFree(d);
}

Test(perfdata, perf_report_weighs_symbols_and_follows_callchains)
{
	char *evts[] = { "cpu-clock" };
	struct PmuAttr a = attr_of(evts, 1);
	struct PmuData *d = six();
	PmuFile f = PmuBeginWrite(path, &a, 0);
	char *out;

	cr_assert_eq(PmuWriteData(f, d, 6), SUCCESS, "%s", Perror());
	PmuEndWrite(f);
	out = run("perf report -i %s --stdio --no-children --sort sym -g none 2>/dev/null "
		  "| grep -E '^ +[0-9.]+%%'",
		  path);
	cr_assert_str_eq(out, "    50.00%  [.] hot_loop\n"
			      "    33.33%  [.] main\n"
			      "    16.67%  [k] do_syscall_64\n");
	free(out);
	/* with callers: main is on every user stack, and the kernel sample's caller too */
	out = run("perf report -i %s --stdio --children --sort sym -g none 2>/dev/null "
		  "| grep -E '^ +[0-9.]+%%'",
		  path);
	cr_assert(strstr(out, "   100.00%    33.33%  [.] main\n"), "%s", out);
	cr_assert(strstr(out, "    50.00%    50.00%  [.] hot_loop\n"), "%s", out);
	cr_assert(strstr(out, "    50.00%     0.00%  [.] burn\n"), "%s", out);
	free(out);
	PmuDataFree(d);
}

Test(perfdata, build_ids_mappings_and_threads)
{
	char *evts[] = { "cpu-clock" };
	struct PmuAttr a = attr_of(evts, 1);
	struct PmuData *d = six();
	PmuFile f = PmuBeginWrite(path, &a, 0);
	char want[4200], *out;

	/* the same records twice: each mapping and thread name is written once */
	cr_assert_eq(PmuWriteData(f, d, 6), SUCCESS, "%s", Perror());
	cr_assert_eq(PmuWriteData(f, d, 6), SUCCESS, "%s", Perror());
	PmuEndWrite(f);
	out = run("perf buildid-list -i %s 2>&1", path);
	snprintf(want, sizeof(want), "%s %s\n", build_id_hex(cpuburn), cpuburn);
	cr_assert(strstr(out, want), "%s", out);
	cr_assert(strstr(out, " [kernel.kallsyms]\n"), "%s", out);
	cr_assert_eq(count_lines(out, "\n"), 2, "%s", out);
	free(out);
	out = run("perf script -i %s --show-mmap-events --show-task-events -F comm,tid 2>&1", path);
	snprintf(want, sizeof(want), "PERF_RECORD_MMAP2 4000/4000: [0x%llx(0x1000) @ 0x1000 ",
		 (unsigned long long)(BIAS + 0x1000));
	cr_assert_eq(count_lines(out, want), 1, "%s", out);
	cr_assert_eq(count_lines(out, "PERF_RECORD_MMAP2"), 1, "%s", out);
	cr_assert_eq(count_lines(out, "PERF_RECORD_MMAP -1/0: "), 1, "%s", out);
	cr_assert_eq(count_lines(out, "PERF_RECORD_COMM: burner:4000/4000"), 1, "%s", out);
	cr_assert_eq(count_lines(out, "PERF_RECORD_COMM: burner:4000/4001"), 1, "%s", out);
	free(out);
	out = run("perf script -i %s 2>&1 | grep -c cpu-clock", path);
	cr_assert_str_eq(out, "12\n");
	free(out);
	PmuDataFree(d);
}

Test(perfdata, events_keep_their_names_and_periods)
{
	char *evts[] = { "cpu-clock", "task-clock" };
	struct EvtAttr ea[2] = { { .groupId = -1 }, { .groupId = -1, .period = 5000 } };
	struct PmuAttr a = attr_of(evts, 2);
	struct rec r[3];
	struct PmuData *d;
	PmuFile f;
	char *out;

	make_stacks();
	r[0] = (struct rec){ "task-clock", 10, 10, 0, 100, 5000, "x", st_main };
	r[1] = (struct rec){ "cpu-clock", 10, 10, 0, 200, 1000, "x", st_hot };
	r[2] = (struct rec){ "task-clock", 10, 10, 1, 300, 5000, "x", st_hot };
	d = build(r, 3);
	a.evtAttr = ea;
	a.numEvtAttr = 2;
	f = PmuBeginWrite(path, &a, 1);
	cr_assert_not_null(f, "%s", Perror());
	cr_assert_eq(PmuWriteData(f, d, 3), SUCCESS, "%s", Perror());
	PmuEndWrite(f);
	out = run("perf script -i %s -F event,period 2>&1 | awk '{print $1, $2}'", path);
	cr_assert_str_eq(out, "5000 task-clock:\n1000 cpu-clock:\n5000 task-clock:\n");
	free(out);
	out = run("perf report -i %s --header-only 2>&1 | grep '^# event'", path);
	cr_assert(strstr(out, "# event : name = cpu-clock, , id = { 1 }, type = 1, size = 128, "
			      "{ sample_period, sample_freq } = 999, sample_type = "
			      "IP|TID|TIME|CALLCHAIN|CPU|PERIOD|IDENTIFIER"),
		  "%s", out);
	cr_assert(strstr(out, "# event : name = task-clock, , id = { 2 }, type = 1, size = 128, "
			      "config = 0x1, { sample_period, sample_freq } = 5000, sample_type"),
		  "%s", out);
	cr_assert(strstr(out, "sample_id_all = 1"), "%s", out);
	free(out);
	/* addIdHdr: the side-band records carry the time of the first sample */
	out = run("perf script -i %s --show-mmap-events -F time --ns 2>&1 | head -1", path);
	cr_assert(strstr(out, " 0.000000100: PERF_RECORD_MMAP2 10/10: [0x555555555000(0x1000) @ "
			      "0x1000 "),
		  "%s", out);
	free(out);
	PmuDataFree(d);
}

Test(perfdata, an_empty_file_is_still_a_perf_file)
{
	char *evts[] = { "cpu-clock" };
	struct PmuAttr a = attr_of(evts, 1);
	PmuFile f = PmuBeginWrite(path, &a, 0);
	char *out;

	cr_assert_not_null(f);
	cr_assert_eq(PmuWriteData(f, NULL, 0), SUCCESS);
	PmuEndWrite(f);
	cr_assert_eq(Perrorno(), SUCCESS);
	/* perf warns that the data section is empty, and reads it */
	out = run("perf script -i %s 2>/dev/null | wc -l", path);
	cr_assert_str_eq(out, "0\n");
	free(out);
	out = run("perf report -i %s --header-only 2>&1 | grep '^# event'", path);
	cr_assert(strstr(out, "# event : name = cpu-clock, , id = { 1 }"), "%s", out);
	free(out);
}

/* ---- errors ---- */

Test(perfdata, bad_arguments_of_begin)
{
	char *evts[] = { "cpu-clock" }, *bad[] = { "no-such-event" };
	struct PmuAttr a = attr_of(evts, 1);

	cr_assert_null(PmuBeginWrite(path, NULL, 0));
	cr_assert_eq(Perrorno(), LIBPERF_ERR_NULL_POINTER);
	cr_assert_str_eq(Perror(), "PmuAttr cannot be NULL");
	cr_assert_null(PmuBeginWrite(NULL, &a, 0));
	cr_assert_eq(Perrorno(), LIBPERF_ERR_NULL_POINTER);
	cr_assert_str_eq(Perror(), "path cannot be NULL");
	a.numEvt = 0;
	cr_assert_null(PmuBeginWrite(path, &a, 0));
	cr_assert_eq(Perrorno(), LIBPERF_ERR_NOT_SUPPORT_PMU_FILE);
	cr_assert_str_eq(Perror(), "the PmuAttr has no events (numEvt 0, evtList set): a perf.data "
				   "file describes a SAMPLING task's events");
	a = attr_of(evts, 1);
	a.freq = 0;
	cr_assert_null(PmuBeginWrite(path, &a, 0));
	cr_assert_eq(Perrorno(), LIBPERF_ERR_NOT_SUPPORT_PMU_FILE);
	cr_assert_str_eq(Perror(), "the PmuAttr's freq is 0: a perf.data file describes a "
				   "SAMPLING task, give the period or freq it sampled with");
	a = attr_of(bad, 1);
	cr_assert_null(PmuBeginWrite(path, &a, 0));
	cr_assert_eq(Perrorno(), LIBPERF_ERR_INVALID_EVENT);
	cr_assert(strstr(Perror(), "no-such-event"), "%s", Perror());
	a = attr_of(evts, 1);
	cr_assert_null(PmuBeginWrite("/nonexistent-dir/kperf/x.data", &a, 0));
	cr_assert_eq(Perrorno(), LIBPERF_ERR_OPEN_INVALID_FILE);
	cr_assert_str_eq(Perror(), "cannot create /nonexistent-dir/kperf/x.data: No such file or "
				   "directory");
}

Test(perfdata, dev_full_fails_at_once)
{
	char *evts[] = { "cpu-clock" };
	struct PmuAttr a = attr_of(evts, 1);

	cr_assert_null(PmuBeginWrite("/dev/full", &a, 0));
	cr_assert_eq(Perrorno(), COMMON_ERR_WRITE);
	cr_assert_str_eq(Perror(), "cannot write /dev/full: No space left on device");
}

Test(perfdata, bad_handles_and_data)
{
	char *evts[] = { "cpu-clock" };
	struct PmuAttr a = attr_of(evts, 1);
	struct PmuData *d = six(), fake[1] = { { .evt = "cpu-clock" } }, *other;
	struct rec r = { "task-clock", 1, 1, 0, 5, 1, "x", NULL };
	PmuFile f = PmuBeginWrite(path, &a, 0);

	cr_assert_not_null(f);
	cr_assert_eq(PmuWriteData(NULL, d, 6), LIBPERF_ERR_INVALID_PMU_FILE);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_INVALID_PMU_FILE);
	cr_assert_str_eq(Perror(), "invalid PmuFile (nil): it was not returned by PmuBeginWrite, "
				   "or PmuEndWrite has ended it");
	cr_assert_eq(PmuWriteData(f, d, -1), LIBPERF_ERR_INVALID_PMU_DATA);
	cr_assert_str_eq(Perror(), "len is -1: give the number of records PmuRead returned");
	cr_assert_eq(PmuWriteData(f, NULL, 2), LIBPERF_ERR_INVALID_PMU_DATA);
	cr_assert_str_eq(Perror(), "data is NULL but len is 2");
	cr_assert_eq(PmuWriteData(f, fake, 1), LIBPERF_ERR_INVALID_PMU_DATA);
	cr_assert_str_eq(Perror(), "data was not returned by PmuRead (or was freed)");
	cr_assert_eq(PmuWriteData(f, d + 1, 1), LIBPERF_ERR_INVALID_PMU_DATA);
	cr_assert_eq(PmuWriteData(f, d, 7), LIBPERF_ERR_INVALID_PMU_DATA);
	cr_assert_str_eq(Perror(), "len is 7 but data holds 6 records");
	other = build(&r, 1);
	cr_assert_eq(PmuWriteData(f, other, 1), LIBPERF_ERR_INVALID_PMU_DATA);
	cr_assert_str_eq(Perror(), "record 0 is of event 'task-clock', which is not in the PmuAttr "
				   "given to PmuBeginWrite");
	PmuDataFree(other);
	cr_assert_eq(PmuWriteData(f, other, 1), LIBPERF_ERR_INVALID_PMU_DATA);
	cr_assert_str_eq(Perror(), "data was not returned by PmuRead (or was freed)");
	/* none of the failures wrote anything */
	cr_assert_eq(PmuWriteData(f, d, 2), SUCCESS);
	cr_assert_eq(Perrorno(), SUCCESS);
	PmuEndWrite(f);
	cr_assert_eq(Perrorno(), SUCCESS);
	/* after the end, the handle is gone */
	cr_assert_eq(PmuWriteData(f, d, 2), LIBPERF_ERR_INVALID_PMU_FILE);
	PmuEndWrite(f);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_INVALID_PMU_FILE);
	PmuEndWrite((PmuFile)0x1234);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_INVALID_PMU_FILE);
	{
		char *out = run("perf script -i %s 2>&1 | grep -c cpu-clock", path);

		cr_assert_str_eq(out, "2\n");
		free(out);
	}
	PmuDataFree(d);
}

/* many records with deep stacks: about <n> * 300 bytes */
static struct PmuData *many(int n)
{
	struct rec *r = calloc((size_t)n, sizeof(*r));
	struct PmuData *d;
	int i;

	make_stacks();
	for (i = 0; i < n; i++)
		r[i] = (struct rec){ "cpu-clock", 77, 77, 0, 1000 + i, 1, "filler", st_hot };
	d = build(r, n);
	free(r);
	return d;
}

Test(perfdata, full_disk_fails_the_write_and_leaves_the_file_as_it_was)
{
	char *evts[] = { "cpu-clock" };
	struct PmuAttr a = attr_of(evts, 1);
	char dir[64] = "/tmp/kperf-tmpfs-XXXXXX", file[128], want[256], *out;
	struct PmuData *small = many(100), *big = many(20000);
	struct stat before, after;
	PmuFile f;

	/* a private mount namespace: the tmpfs is this test's alone */
	cr_assert_eq(unshare(CLONE_NEWNS), 0, "%s", strerror(errno));
	cr_assert_eq(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL), 0);
	cr_assert_not_null(mkdtemp(dir));
	cr_assert_eq(mount("tmpfs", dir, "tmpfs", 0, "size=256k"), 0, "%s", strerror(errno));
	snprintf(file, sizeof(file), "%s/x.data", dir);
	f = PmuBeginWrite(file, &a, 0);
	cr_assert_not_null(f, "%s", Perror());
	cr_assert_eq(PmuWriteData(f, small, 100), SUCCESS, "%s", Perror());
	cr_assert_eq(stat(file, &before), 0);
	cr_assert_eq(PmuWriteData(f, big, 20000), COMMON_ERR_WRITE);
	cr_assert_eq(Perrorno(), COMMON_ERR_WRITE);
	snprintf(want, sizeof(want), "cannot write %s: No space left on device", file);
	cr_assert_str_eq(Perror(), want);
	cr_assert_eq(stat(file, &after), 0);
	cr_assert_eq(after.st_size, before.st_size, "cut back to %ld, is %ld", (long)before.st_size,
		     (long)after.st_size);
	/* what was written before stays a complete file */
	PmuEndWrite(f);
	cr_assert_eq(Perrorno(), SUCCESS, "%s", Perror());
	out = run("perf script -i %s 2>&1 | grep -c cpu-clock", file);
	cr_assert_str_eq(out, "100\n");
	free(out);
	umount2(dir, MNT_DETACH);
	rmdir(dir);
	PmuDataFree(small);
	PmuDataFree(big);
}

Test(perfdata, a_failed_end_leaves_no_file)
{
	char *evts[] = { "cpu-clock" };
	struct PmuAttr a = attr_of(evts, 1);
	struct PmuData *d = six();
	struct rlimit rl;
	struct stat st;
	char want[256];
	PmuFile f;

	unlink(path); /* PmuBeginWrite creates it */
	f = PmuBeginWrite(path, &a, 0);
	cr_assert_not_null(f);
	cr_assert_eq(PmuWriteData(f, d, 6), SUCCESS, "%s", Perror());
	/* the features do not fit under the limit any more */
	cr_assert_eq(stat(path, &st), 0);
	signal(SIGXFSZ, SIG_IGN);
	rl.rlim_cur = rl.rlim_max = (rlim_t)st.st_size + 16;
	cr_assert_eq(setrlimit(RLIMIT_FSIZE, &rl), 0);
	PmuEndWrite(f);
	cr_assert_eq(Perrorno(), COMMON_ERR_WRITE);
	snprintf(want, sizeof(want), "cannot write %s: File too large", path);
	cr_assert_str_eq(Perror(), want);
	cr_assert_neq(stat(path, &st), 0, "the incomplete file is still there");
	PmuDataFree(d);
}

/* a function of this test binary, for a frame the resolver left without a file */
__attribute__((noinline)) int kp_test_unresolved_frame(int x)
{
	return x * 3 + 1;
}

Test(perfdata, frames_without_a_file_use_the_maps_of_a_live_process)
{
	char *evts[] = { "cpu-clock" };
	struct PmuAttr a = attr_of(evts, 1);
	struct Symbol s = { .addr = (unsigned long)(uintptr_t)&kp_test_unresolved_frame + 4 };
	struct Stack st = { .symbol = &s };
	struct rec r = { "cpu-clock", getpid(), getpid(), 0, 42, 1, "self", &st };
	struct PmuData *d = build(&r, 1);
	PmuFile f = PmuBeginWrite(path, &a, 0);
	char *out;

	cr_assert_eq(kp_test_unresolved_frame(1), 4);
	cr_assert_eq(PmuWriteData(f, d, 1), SUCCESS, "%s", Perror());
	PmuEndWrite(f);
	out = run("perf script -i %s -F ip,sym --max-stack 1 2>/dev/null | awk 'NF {print $2}'",
		  path);
	cr_assert_str_eq(out, "kp_test_unresolved_frame\n");
	free(out);
	PmuDataFree(d);
}

/* tracepoints of two systems beside a software event: perf finds each tracepoint's format in
 * the file (HEADER_TRACING_DATA) by its id, or refuses the whole file */
Test(perfdata, tracepoints_are_described_to_perf)
{
	char *evts[] = { "sched:sched_switch", "cpu-clock", "syscalls:sys_enter_getppid",
			 "sched:sched_process_exec" };
	struct PmuAttr a = attr_of(evts, 4);
	struct rec r[4];
	struct PmuData *d;
	PmuFile f;
	char *out;

	a.callStack = 0;
	r[0] = (struct rec){ "sched:sched_switch", 10, 10, 0, 100, 7, "x", NULL };
	r[1] = (struct rec){ "cpu-clock", 10, 10, 0, 200, 1000, "x", NULL };
	r[2] = (struct rec){ "syscalls:sys_enter_getppid", 10, 11, 1, 300, 4000, "x", NULL };
	r[3] = (struct rec){ "sched:sched_process_exec", 10, 10, 1, 400, 1, "x", NULL };
	d = build(r, 4);
	f = PmuBeginWrite(path, &a, 0);
	cr_assert_not_null(f, "%s", Perror());
	cr_assert_eq(PmuWriteData(f, d, 4), SUCCESS, "%s", Perror());
	PmuEndWrite(f);
	cr_assert_eq(Perrorno(), SUCCESS, "%s", Perror());
	out = run("perf script -i %s -F event,period 2>&1 | awk '{print $1, $2}'", path);
	cr_assert_str_eq(out, "7 sched:sched_switch:\n1000 cpu-clock:\n"
			      "4000 syscalls:sys_enter_getppid:\n1 sched:sched_process_exec:\n");
	free(out);
	out = run("perf report -i %s --header-only 2>&1 | grep -c '^# event : name = [a-z]*:'",
		  path);
	cr_assert_str_eq(out, "3\n");
	free(out);
	PmuDataFree(d);
}

Test(perfdata, a_callchain_resolved_later_is_written_with_its_mappings)
{
	char *evts[] = { "cpu-clock" };
	struct PmuAttr a = attr_of(evts, 1);
	uint64_t ips[2] = { (uint64_t)(uintptr_t)&kp_test_unresolved_frame + 4, 0 };
	struct PmuData rec = { .evt = "cpu-clock",
			       .ts = 7,
			       .pid = getpid(),
			       .tid = getpid(),
			       .comm = "self",
			       .period = 1 };
	struct kp_data_builder *b = kp_data_builder_new();
	struct PmuData *d = NULL;
	PmuFile f;
	char *out;

	/* what PmuRead returns under RESOLVE_DELAY_ELF: no stack yet, the callchain kept */
	ips[1] = (uint64_t)(uintptr_t)&setup;
	cr_assert_eq(kp_data_builder_add_chain(b, &rec, 0, ips, 2, 0), 0);
	cr_assert_eq(kp_data_builder_finish(b, &d), 1);
	cr_assert_null(d[0].stack);
	f = PmuBeginWrite(path, &a, 0);
	cr_assert_eq(PmuWriteData(f, d, 1), SUCCESS, "%s", Perror());
	PmuEndWrite(f);
	out = run("perf script -i %s -F ip,sym 2>/dev/null | awk 'NF {print $2}'", path);
	cr_assert_str_eq(out, "kp_test_unresolved_frame\nsetup\n");
	free(out);
	PmuDataFree(d);
}
