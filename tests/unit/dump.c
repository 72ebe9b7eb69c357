/*
 * dump.c - PmuDumpData: the exact text of hand-built records (a 3-frame stack, with and
 * without DWARF lines), escaping, appending, reading the file back, and every error.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/core.h"
#include "kperf/pcerrc.h"
#include "kperf/kperf.h"

static struct Symbol syms[3] = {
	{ .addr = 0x401136,
	  .module = "/usr/bin/work",
	  .symbolName = "hot_loop",
	  .mangleName = "hot_loop",
	  .fileName = "/src/work.c",
	  .lineNum = 42,
	  .offset = 0x16 },
	{ .addr = 0x4011a0,
	  .module = "/usr/bin/work",
	  .symbolName = "main",
	  .mangleName = "main",
	  .fileName = "/src/work.c",
	  .lineNum = 77,
	  .offset = 0x30 },
	{ .addr = 0x7f0000029d90,
	  .module = "/lib/x86_64-linux-gnu/libc.so.6",
	  .symbolName = "__libc_start_call_main",
	  .mangleName = "__libc_start_call_main",
	  .fileName = "",
	  .lineNum = 0,
	  .offset = 0x80 },
};
static struct Stack stack[3];
static struct PmuData data[2];

static void setup(void)
{
	int i;

	for (i = 0; i < 3; i++) {
		stack[i].symbol = &syms[i];
		stack[i].next = i < 2 ? &stack[i + 1] : NULL;
		stack[i].prev = i > 0 ? &stack[i - 1] : NULL;
	}
	memset(data, 0, sizeof(data));
	data[0].stack = &stack[0];
	data[0].evt = "cpu-clock";
	data[0].pid = 1234;
	data[0].tid = 1235;
	data[0].cpu = 1;
	data[0].comm = "work";
	data[0].period = 1000000;
	data[0].count = 17;
	data[1].evt = "sched:sched_switch";
	data[1].pid = 99;
	data[1].tid = 99;
	data[1].cpu = -1;
	data[1].comm = "kworker/0:1";
	data[1].period = 1;
	data[1].count = 1;
}

TestSuite(dump, .init = setup);

static char *tmp_path(void)
{
	static char path[64];
	int fd;

	strcpy(path, "/tmp/kperf-dump-XXXXXX");
	fd = mkstemp(path);
	cr_assert_geq(fd, 0);
	close(fd);
	unlink(path);
	return path;
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = calloc(1, 65536);
	size_t n;

	cr_assert_not_null(f, "%s: %s", path, strerror(errno));
	n = fread(buf, 1, 65535, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

static const char without_dwarf[] =
	"work\t1234\t1235\t1\t1000000\tcpu-clock\t17\n"
	"\t0x401136\thot_loop+0x16\t/usr/bin/work\n"
	"\t0x4011a0\tmain+0x30\t/usr/bin/work\n"
	"\t0x7f0000029d90\t__libc_start_call_main+0x80\t/lib/x86_64-linux-gnu/libc.so.6\n"
	"kworker/0:1\t99\t99\t-1\t1\tsched:sched_switch\t1\n";

static const char with_dwarf[] =
	"work\t1234\t1235\t1\t1000000\tcpu-clock\t17\n"
	"\t0x401136\thot_loop+0x16\t/usr/bin/work\t/src/work.c:42\n"
	"\t0x4011a0\tmain+0x30\t/usr/bin/work\t/src/work.c:77\n"
	"\t0x7f0000029d90\t__libc_start_call_main+0x80\t/lib/x86_64-linux-gnu/libc.so.6\t??:0\n"
	"kworker/0:1\t99\t99\t-1\t1\tsched:sched_switch\t1\n";

Test(dump, exact_text_without_dwarf)
{
	char *path = tmp_path(), *text;
	struct stat st;
	mode_t mask;

	cr_assert_eq(PmuDumpData(data, 2, path, 0), 0, "%s", Perror());
	cr_expect_eq(Perrorno(), SUCCESS);
	text = slurp(path);
	cr_expect_str_eq(text, without_dwarf);
	cr_assert_eq(stat(path, &st), 0);
	mask = umask(022);
	umask(mask);
	cr_expect_eq(st.st_mode & 0777, 0644 & ~mask);
	free(text);
	unlink(path);
}

Test(dump, exact_text_with_dwarf_and_appends)
{
	char *path = tmp_path(), *text, both[2048];

	cr_assert_eq(PmuDumpData(data, 2, path, 1), 0, "%s", Perror());
	text = slurp(path);
	cr_expect_str_eq(text, with_dwarf);
	free(text);
	/* a second dump appends */
	cr_assert_eq(PmuDumpData(data, 1, path, 0), 0);
	snprintf(both, sizeof(both), "%s%.*s", with_dwarf,
		 (int)(strstr(without_dwarf, "kworker") - without_dwarf), without_dwarf);
	text = slurp(path);
	cr_expect_str_eq(text, both);
	free(text);
	unlink(path);
}

Test(dump, text_is_escaped_and_nulls_are_empty)
{
	struct Symbol odd = { .addr = 0x10,
			      .module = NULL,
			      .symbolName = NULL,
			      .fileName = NULL,
			      .lineNum = 3,
			      .offset = 0 };
	struct Stack s2 = { .symbol = NULL }, s1 = { .symbol = &odd, .next = &s2 };
	struct PmuData d;
	char *path = tmp_path(), *text;

	memset(&d, 0, sizeof(d));
	d.comm = "we\tird\\na\nme\x01";
	d.evt = NULL;
	d.pid = 7;
	d.tid = 8;
	d.cpu = 0;
	d.stack = &s1;
	cr_assert_eq(PmuDumpData(&d, 1, path, 1), 0, "%s", Perror());
	text = slurp(path);
	/* the frame without a symbol (s2) has nothing to say and is left out */
	cr_expect_str_eq(text, "we\\tird\\\\na\\nme\\x01\t7\t8\t0\t0\t\t0\n"
			       "\t0x10\t[unknown]+0x0\t\t??:3\n");
	free(text);
	unlink(path);
}

/* ---- read the format back, as a script would ---- */

static char *unescape(const char *s, size_t n)
{
	char *out = malloc(n + 1), *o = out;
	size_t i;

	for (i = 0; i < n; i++) {
		if (s[i] != '\\' || i + 1 == n) {
			*o++ = s[i];
			continue;
		}
		i++;
		switch (s[i]) {
		case 't':
			*o++ = '\t';
			break;
		case 'n':
			*o++ = '\n';
			break;
		case 'r':
			*o++ = '\r';
			break;
		case 'x': {
			char hex[3] = { s[i + 1], s[i + 2], 0 };

			*o++ = (char)strtol(hex, NULL, 16);
			i += 2;
			break;
		}
		default:
			*o++ = s[i];
		}
	}
	*o = '\0';
	return out;
}

/* split <line> at tabs into at most <max> unescaped fields */
static int split(const char *line, char **f, int max)
{
	int n = 0;
	const char *p = line, *tab;

	while (n < max) {
		tab = strchr(p, '\t');
		f[n++] = unescape(p, tab ? (size_t)(tab - p) : strlen(p));
		if (!tab)
			break;
		p = tab + 1;
	}
	return n;
}

Test(dump, read_back)
{
	char *path = tmp_path(), *text, *line, *save = NULL, *f[8];
	int records = 0, frames = 0, n, i;

	data[0].comm = "Web Content\t2";
	syms[1].symbolName = "operator+(A const&, B)";
	cr_assert_eq(PmuDumpData(data, 2, path, 1), 0, "%s", Perror());
	text = slurp(path);
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		n = split(line, f, 8);
		if (line[0] != '\t') {
			const struct PmuData *d = &data[records++];

			cr_assert_eq(n, 7);
			cr_expect_str_eq(f[0], d->comm);
			cr_expect_eq(atoi(f[1]), d->pid);
			cr_expect_eq(atoi(f[2]), d->tid);
			cr_expect_eq(atoi(f[3]), d->cpu);
			cr_expect_eq(strtoull(f[4], NULL, 10), d->period);
			cr_expect_str_eq(f[5], d->evt);
			cr_expect_eq(strtoull(f[6], NULL, 10), d->count);
		} else {
			const struct Symbol *s = &syms[frames++];
			char *plus;

			cr_assert_eq(n, 5);
			cr_expect_str_eq(f[0], "");
			cr_expect_eq(strtoul(f[1], NULL, 16), s->addr);
			plus = strrchr(f[2], '+'); /* the last '+': C++ names have their own */
			cr_assert_not_null(plus);
			*plus = '\0';
			cr_expect_str_eq(f[2], s->symbolName);
			cr_expect_eq(strtoul(plus + 1, NULL, 16), s->offset);
			cr_expect_str_eq(f[3], s->module);
			cr_expect_eq(strtoul(strrchr(f[4], ':') + 1, NULL, 10), s->lineNum);
		}
		for (i = 0; i < n; i++)
			free(f[i]);
	}
	cr_expect_eq(records, 2);
	cr_expect_eq(frames, 3);
	free(text);
	unlink(path);
}

/* ---- errors ---- */

Test(dump, null_data_and_path)
{
	char *path = tmp_path();

	/* libkperf's codes: NULL pointers LIBPERF_ERR_NULL_POINTER, a path that cannot be
	 * opened (the empty one) LIBPERF_ERR_PATH_INACCESSIBLE; the path is checked first */
	cr_expect_eq(PmuDumpData(NULL, 3, path, 0), -1);
	cr_expect_eq(Perrorno(), LIBPERF_ERR_NULL_POINTER);
	cr_expect_str_eq(Perror(), "pmuData is NULL but len is 3");
	cr_expect_neq(access(path, F_OK), 0, "nothing created");
	cr_expect_eq(PmuDumpData(data, 2, NULL, 0), -1);
	cr_expect_eq(Perrorno(), LIBPERF_ERR_NULL_POINTER);
	cr_expect_str_eq(Perror(), "filepath is NULL: give the file to dump the data to");
	cr_expect_eq(PmuDumpData(NULL, 3, NULL, 0), -1);
	cr_expect_str_eq(Perror(), "filepath is NULL: give the file to dump the data to");
	cr_expect_eq(PmuDumpData(data, 2, "", 0), -1);
	cr_expect_eq(Perrorno(), LIBPERF_ERR_PATH_INACCESSIBLE);
	cr_expect_str_eq(Perror(), "filepath is empty: give the file to dump the data to");
	/* nothing to write: the file is created empty */
	cr_expect_eq(PmuDumpData(NULL, 0, path, 0), 0, "%s", Perror());
	cr_expect_eq(access(path, F_OK), 0);
	unlink(path);
}

Test(dump, unwritable_paths)
{
	cr_expect_eq(PmuDumpData(data, 2, "/nonexistent-dir/kperf/out.txt", 0), -1);
	cr_expect_eq(Perrorno(), LIBPERF_ERR_PATH_INACCESSIBLE);
	cr_expect_str_eq(Perror(), "cannot open /nonexistent-dir/kperf/out.txt for appending: No "
				   "such file or directory");
	cr_expect_eq(PmuDumpData(data, 2, "/tmp", 0), -1);
	cr_expect_eq(Perrorno(), LIBPERF_ERR_PATH_INACCESSIBLE);
	cr_expect(strstr(Perror(), "Is a directory") != NULL, "%s", Perror());
}

Test(dump, full_disk_is_a_write_error)
{
	cr_expect_eq(PmuDumpData(data, 2, "/dev/full", 1), -1);
	cr_expect_eq(Perrorno(), COMMON_ERR_WRITE);
	cr_expect_str_eq(Perror(), "writing /dev/full failed: No space left on device");
}

Test(dump, looping_stack_leaves_the_file_as_it_was)
{
	char *path = tmp_path(), *text;

	cr_assert_eq(PmuDumpData(data, 1, path, 0), 0);
	stack[2].next = &stack[1]; /* 0 -> 1 -> 2 -> 1 -> ... */
	cr_expect_eq(PmuDumpData(data, 2, path, 0), -1);
	cr_expect_eq(Perrorno(), LIBPERF_ERR_INVALID_PMU_DATA);
	cr_expect_str_eq(Perror(), "record 0: its call stack loops (stack->next comes back to an "
				   "earlier frame)");
	data[1].stack = &stack[0];
	stack[2].next = NULL;
	stack[0].next = &stack[0]; /* a frame pointing at itself, in the second record */
	data[0].stack = NULL;
	cr_expect_eq(PmuDumpData(data, 2, path, 0), -1);
	cr_expect(strstr(Perror(), "record 1: its call stack loops") != NULL, "%s", Perror());
	text = slurp(path);
	/* the first record of the second call was written, then cut away again */
	cr_expect_eq(strlen(text), (size_t)(strstr(without_dwarf, "kworker") - without_dwarf));
	free(text);
	unlink(path);
}
