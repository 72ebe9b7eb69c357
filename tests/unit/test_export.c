/*
 * test_export.c - profile exports from hand-built stacks: folded lines, the hottest
 * functions (self and total, recursion counted once), pprof read back both by protobuf-c
 * and by `go tool pprof`, and JSON.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <zlib.h>
#include <cjson/cJSON.h>

#include "export/export.h"
#include "gen/profile.pb-c.h"

static struct Symbol sym_main = { .addr = 0x401000,
				  .module = "/usr/bin/wl",
				  .symbolName = "main",
				  .mangleName = "main",
				  .fileName = "wl.c",
				  .lineNum = 10 };
static struct Symbol sym_work = { .addr = 0x401100,
				  .module = "/usr/bin/wl",
				  .symbolName = "work",
				  .mangleName = "work",
				  .fileName = "wl.c",
				  .lineNum = 20 };
static struct Symbol sym_hot = { .addr = 0x401200,
				 .module = "/usr/bin/wl",
				 .symbolName = "hot_loop",
				 .mangleName = "hot_loop",
				 .fileName = "wl.c",
				 .lineNum = 31 };
static struct Symbol sym_kern = { .addr = 0xffffffff81000000UL,
				  .module = "[kernel.kallsyms]",
				  .symbolName = "do_syscall_64",
				  .mangleName = "do_syscall_64",
				  .fileName = "" };
static struct Symbol sym_unknown = { .addr = 0x7f0000001234UL,
				     .codeMapAddr = 0x1234,
				     .module = "/lib/libx.so",
				     .symbolName = "[unknown]",
				     .mangleName = "",
				     .fileName = "" };

static struct Stack a3 = { .symbol = &sym_main }, a2 = { .symbol = &sym_work, .next = &a3 },
		    a1 = { .symbol = &sym_hot, .next = &a2 };
static struct Stack b2 = { .symbol = &sym_main }, b1 = { .symbol = &sym_work, .next = &b2 };
static struct Stack c2 = { .symbol = &sym_main }, c1 = { .symbol = &sym_kern, .next = &c2 };
/* recursion: work -> work -> main */
static struct Stack r3 = { .symbol = &sym_main }, r2 = { .symbol = &sym_work, .next = &r3 },
		    r1 = { .symbol = &sym_work, .next = &r2 };
static struct Stack u1 = { .symbol = &sym_unknown };

static struct PmuData recs[] = {
	{ .stack = &a1,
	  .evt = "cpu-clock",
	  .pid = 7,
	  .tid = 7,
	  .comm = "wl",
	  .count = 90,
	  .period = 90000000 },
	{ .stack = &b1,
	  .evt = "cpu-clock",
	  .pid = 7,
	  .tid = 8,
	  .comm = "wl",
	  .count = 10,
	  .period = 10000000 },
	{ .stack = &c1,
	  .evt = "cpu-clock",
	  .pid = 7,
	  .tid = 7,
	  .comm = "wl",
	  .count = 5,
	  .period = 5000000 },
	{ .stack = &r1,
	  .evt = "cpu-clock",
	  .pid = 7,
	  .tid = 7,
	  .comm = "wl",
	  .count = 4,
	  .period = 4000000 },
	{ .stack = &u1,
	  .evt = "cpu-clock",
	  .pid = 7,
	  .tid = 7,
	  .comm = "wl",
	  .count = 1,
	  .period = 1000000 },
};
#define NRECS 5

Test(export, folded_lines_root_first)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	cr_assert_eq(kp_export_folded(f, recs, NRECS), 5);
	fclose(f);
	cr_assert_str_eq(buf, "wl;main;work;hot_loop 90\n"
			      "wl;main;work 10\n"
			      "wl;main;do_syscall_64_[k] 5\n"
			      "wl;main;work;work 4\n"
			      "wl;libx.so+0x1234 1\n");
	free(buf);
}

Test(export, hottest_functions_self_and_total)
{
	struct kp_hot_list l;
	size_t i;

	cr_assert_eq(kp_hot_functions(recs, NRECS, &l), 0);
	cr_assert_eq(l.samples, 110);
	cr_assert_eq(l.n, 5);
	cr_assert_str_eq(l.fns[0].name, "hot_loop");
	cr_assert_eq(l.fns[0].self, 90);
	cr_assert_eq(l.fns[0].total, 90);
	cr_assert_str_eq(l.fns[0].file, "wl.c");
	cr_assert_eq(l.fns[0].line, 31);
	cr_assert_str_eq(l.fns[1].name, "work");
	cr_assert_eq(l.fns[1].self, 14);
	cr_assert_eq(l.fns[1].total, 104, "recursive frames count once per sample");
	for (i = 0; i < l.n; i++) {
		if (!strcmp(l.fns[i].name, "main")) {
			cr_assert_eq(l.fns[i].self, 0);
			cr_assert_eq(l.fns[i].total, 109);
		}
	}
	cr_assert_str_eq(l.fns[3].name, "libx.so+0x1234");
	cr_assert_str_eq(l.fns[4].name, "main", "self 0 sorts last");
	kp_hot_list_free(&l);
}

static Perftools__Profiles__Profile *read_pprof(const char *path)
{
	static unsigned char buf[1 << 20];
	gzFile gz = gzopen(path, "rb");
	int n;

	cr_assert_not_null(gz);
	n = gzread(gz, buf, sizeof(buf));
	gzclose(gz);
	cr_assert_gt(n, 0);
	return perftools__profiles__profile__unpack(NULL, (size_t)n, buf);
}

static const char *str(const Perftools__Profiles__Profile *p, int64_t i)
{
	return p->string_table[i];
}

/* kp_export_pprof into <path> through an output file, as `record -o` does */
static int pprof_to(const char *path, const struct kp_profile_meta *m)
{
	struct kp_out *o;
	int err = kp_out_open(path, &o);

	if (err)
		return err;
	err = kp_export_pprof(kp_out_file(o), recs, NRECS, m);
	if (err) {
		kp_out_discard(o);
		return err;
	}
	return kp_out_commit(o);
}

Test(export, pprof_round_trip)
{
	struct kp_profile_meta m = { .event = "cpu-clock", .duration_s = 2.0 };
	char path[] = "/tmp/kperf-test-XXXXXX";
	Perftools__Profiles__Profile *p;
	size_t i;
	int fd = mkstemp(path);

	close(fd);
	cr_assert_eq(pprof_to(path, &m), 0);
	p = read_pprof(path);
	cr_assert_not_null(p);
	cr_assert_str_eq(p->string_table[0], "");
	cr_assert_eq(p->n_sample_type, 2);
	cr_assert_str_eq(str(p, p->sample_type[1]->type), "cpu");
	cr_assert_str_eq(str(p, p->sample_type[1]->unit), "nanoseconds");
	cr_assert_eq(p->n_sample, NRECS);
	cr_assert_eq(p->n_function, 5, "main, work, hot_loop, do_syscall_64, libx.so+0x1234");
	cr_assert_eq(p->n_location, 5, "one per distinct address");
	cr_assert_eq(p->n_mapping, 3);
	cr_assert_eq(p->sample[0]->n_location_id, 3);
	cr_assert_eq(p->sample[0]->value[0], 90);
	cr_assert_eq(p->sample[0]->value[1], 90000000);
	cr_assert_eq(p->duration_nanos, 2000000000);
	cr_assert_eq(p->period, 1000000);
	for (i = 0; i < p->n_location; i++) {
		if (p->location[i]->address == sym_hot.addr) {
			uint64_t fid = p->location[i]->line[0]->function_id;

			cr_assert_eq(p->location[i]->line[0]->line, 31);
			cr_assert_str_eq(str(p, p->function[fid - 1]->name), "hot_loop");
			cr_assert_str_eq(str(p, p->function[fid - 1]->filename), "wl.c");
		}
	}
	perftools__profiles__profile__free_unpacked(p, NULL);
	unlink(path);
}

Test(export, go_tool_pprof_reads_it)
{
	struct kp_profile_meta m = { .event = "cpu-clock", .duration_s = 1.0 };
	char path[] = "/tmp/kperf-test-XXXXXX", cmd[512], out[8192] = "";
	size_t n;
	FILE *f;
	int fd = mkstemp(path);

	if (system("command -v go >/dev/null 2>&1"))
		cr_skip_test("go is not installed (apt-get install golang-go)");
	close(fd);
	cr_assert_eq(pprof_to(path, &m), 0);
	snprintf(cmd, sizeof(cmd),
		 "HOME=/tmp GOCACHE=/tmp/kperf-gocache go tool pprof -top -nodecount=10 %s 2>&1",
		 path);
	f = popen(cmd, "r");
	n = fread(out, 1, sizeof(out) - 1, f);
	out[n] = '\0';
	cr_assert_eq(pclose(f), 0, "%s", out);
	/* hot_loop has 90 of the 110 ms flat */
	cr_assert(strstr(out, "90ms 81.82%") && strstr(out, "hot_loop"), "%s", out);
	unlink(path);
}

Test(export, pprof_unwritable_path)
{
	cr_assert_lt(pprof_to("/nonexistent/dir/x.pb.gz", NULL), 0);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_PATH_INACCESSIBLE);
	cr_assert_str_eq(Perror(),
			 "cannot write /nonexistent/dir/x.pb.gz: No such file or directory");
	cr_assert_lt(pprof_to("/dev/full", NULL), 0);
	cr_assert_eq(Perrorno(), COMMON_ERR_WRITE);
	cr_assert_str_eq(Perror(), "cannot write /dev/full: No space left on device");
}

Test(export, profile_json)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct kp_profile_meta m = { .event = "cpu-clock" };
	cJSON *root, *s0, *fr;

	cr_assert_eq(kp_export_profile_json(f, recs, NRECS, &m), 0);
	fclose(f);
	root = cJSON_Parse(buf);
	cr_assert_not_null(root);
	s0 = cJSON_GetArrayItem(cJSON_GetObjectItem(root, "samples"), 0);
	cr_assert_eq(cJSON_GetObjectItem(s0, "count")->valueint, 90);
	fr = cJSON_GetArrayItem(cJSON_GetObjectItem(s0, "stack"), 0);
	cr_assert_str_eq(cJSON_GetObjectItem(fr, "symbol")->valuestring, "hot_loop");
	cr_assert_eq(cJSON_GetObjectItem(fr, "line")->valueint, 31);
	cJSON_Delete(root);
	free(buf);
}
