/*
 * test_export_inline.c - the profile exports with inline frames and compiler clones: the
 * inline frames are the resolver's own (KperfMapCodeFrames of the -O2 workload inline_cxx at
 * leaf()'s line: leaf, mid, top inlined into chain), the clones hand-built Symbols
 * (foo.isra.0 and foo.cold reported as foo).
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <zlib.h>
#include <cjson/cJSON.h>

#include "export/export.h"
#include "gen/profile.pb-c.h"
#include "kperf/kperf.h"
#include "symtest.h"

#define SRC KPERF_SRCDIR "/tests/workloads/inline_cxx.cpp"

static struct Symbol sym_main = { .addr = 0x1000,
				  .module = "/w/inline_cxx",
				  .symbolName = "main",
				  .mangleName = "main",
				  .fileName = "x.c",
				  .lineNum = 3 };
static struct Symbol sym_isra = { .addr = 0x2000,
				  .module = "/w/inline_cxx",
				  .symbolName = "foo.isra.0",
				  .mangleName = "foo.isra.0",
				  .fileName = "x.c",
				  .lineNum = 7 };
static struct Symbol sym_cold = { .addr = 0x3000,
				  .module = "/w/inline_cxx",
				  .symbolName = "foo.cold",
				  .mangleName = "foo.cold",
				  .fileName = "x.c",
				  .lineNum = 9 };

/* records: [leaf, mid, top, chain, main] x 6 samples, [foo.isra.0, main] x 2, [foo.cold,
 * main] x 1 */
static struct Stack tail_main = { .symbol = &sym_main };
static struct Stack isra = { .symbol = &sym_isra, .next = &tail_main };
static struct Stack cold = { .symbol = &sym_cold, .next = &tail_main };
static struct Stack inl[5];
static struct PmuData recs[3];

static void build(void)
{
	struct KperfSymOpts o = { sizeof(o), 1, 1 };
	char bin[PATH_MAX];
	unsigned long a;
	char cmd[PATH_MAX + 256], *out;
	const struct Stack *st;
	int i;

	snprintf(bin, sizeof(bin), "%s", tu_path("workloads/inline_cxx"));
	/* an address of leaf()'s line that no other line-table row shares */
	snprintf(cmd, sizeof(cmd),
		 "readelf --debug-dump=decodedline '%s' | awk '$1==\"inline_cxx.cpp\" {n[$3]++; "
		 "l[$3]=$2} END {for (a in n) if (n[a]==1 && l[a]==%d) print a}' | sort | head -1",
		 bin, src_line(SRC, "INL_LEAF"));
	out = tu_run(cmd, NULL);
	a = strtoul(out, NULL, 16);
	free(out);
	cr_assert_neq(a, 0);
	st = KperfMapCodeFrames(bin, a, &o);
	cr_assert_not_null(st, "%s", Perror());
	for (i = 0; i < 4; i++, st = st->next) {
		cr_assert_not_null(st);
		inl[i].symbol = st->symbol;
		inl[i].next = &inl[i + 1];
	}
	inl[4].symbol = &sym_main;
	recs[0] = (struct PmuData){
		.stack = inl, .evt = "cpu-clock", .comm = "wl", .count = 6, .period = 6000000
	};
	recs[1] = (struct PmuData){
		.stack = &isra, .evt = "cpu-clock", .comm = "wl", .count = 2, .period = 2000000
	};
	recs[2] = (struct PmuData){
		.stack = &cold, .evt = "cpu-clock", .comm = "wl", .count = 1, .period = 1000000
	};
}

Test(export_inline, folded_marks_inline_frames_and_groups_clones, .init = build)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	/* foo and its clone foo.cold read the same: one line (one per symbolized stack) */
	cr_assert_eq(kp_export_folded(f, recs, 3), 2);
	fclose(f);
	cr_assert_str_eq(buf, "wl;main;chain(unsigned_int);top_[i];mid_[i];leaf_[i] 6\n"
			      "wl;main;foo 3\n");
	free(buf);
}

Test(export_inline, summary_names, .init = build)
{
	struct kp_hot_list l;
	size_t i;
	int seen = 0;

	cr_assert_eq(kp_hot_functions(recs, 3, &l), 0);
	for (i = 0; i < l.n; i++) {
		const struct kp_hot_fn *h = &l.fns[i];

		if (!strcmp(h->name, "leaf (inlined)")) {
			cr_assert_eq(h->self, 6);
			cr_assert_eq(h->line, (unsigned)src_line(SRC, "INL_LEAF"));
			seen++;
		} else if (!strcmp(h->name, "foo")) {
			cr_assert_eq(h->self, 3, "foo.isra.0 and foo.cold are foo");
			seen++;
		} else if (!strcmp(h->name, "chain(unsigned int)")) {
			cr_assert_eq(h->self, 0);
			cr_assert_eq(h->total, 6);
			seen++;
		}
	}
	cr_assert_eq(seen, 3);
	cr_assert_eq(l.n, 6, "leaf, mid, top (inlined), chain, foo, main");
	kp_hot_list_free(&l);
}

Test(export_inline, pprof_one_location_several_lines, .init = build)
{
	static const char *const names[] = { "leaf", "mid", "top", "chain(unsigned int)" };
	const char *const marks[] = { "INL_LEAF", "INL_MID_CALL", "INL_TOP_CALL",
				      "INL_CHAIN_CALL" };
	char path[] = "/tmp/kperf-test-XXXXXX";
	struct kp_profile_meta m = { .event = "cpu-clock", .duration_s = 1.0 };
	Perftools__Profiles__Profile *p;
	unsigned char buf[1 << 16];
	FILE *f;
	gzFile gz;
	size_t i;
	int fd = mkstemp(path), n;

	f = fdopen(fd, "w");
	cr_assert_eq(kp_export_pprof(f, recs, 3, &m), 0);
	fclose(f);
	gz = gzopen(path, "rb");
	n = gzread(gz, buf, sizeof(buf));
	gzclose(gz);
	unlink(path);
	p = perftools__profiles__profile__unpack(NULL, (size_t)n, buf);
	cr_assert_not_null(p);
	cr_assert_eq(p->sample[0]->n_location_id, 2, "the address's frames are one Location");
	{
		const Perftools__Profiles__Location *loc =
			p->location[p->sample[0]->location_id[0] - 1];

		cr_assert_eq(loc->n_line, 4);
		cr_assert_eq(loc->address, inl[0].symbol->addr);
		for (i = 0; i < 4; i++) {
			const Perftools__Profiles__Function *fn =
				p->function[loc->line[i]->function_id - 1];

			cr_assert_str_eq(p->string_table[fn->name], names[i]);
			cr_assert_eq(loc->line[i]->line, src_line(SRC, marks[i]), "%s", names[i]);
		}
	}
	/* clones: one function "foo", its system name the raw one */
	for (i = 0; i < p->n_function; i++)
		cr_assert_str_neq(p->string_table[p->function[i]->name], "foo.isra.0");
	perftools__profiles__profile__free_unpacked(p, NULL);
}

Test(export_inline, json_says_inlined, .init = build)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct kp_profile_meta m = { .event = "cpu-clock" };
	cJSON *root, *stack, *fr;
	int i = 0;

	cr_assert_eq(kp_export_profile_json(f, recs, 3, &m), 0);
	fclose(f);
	root = cJSON_Parse(buf);
	stack = cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(root, "samples"), 0),
				    "stack");
	cJSON_ArrayForEach(fr, stack)
	{
		cr_assert_eq(cJSON_IsTrue(cJSON_GetObjectItem(fr, "inlined")), i < 3, "frame %d",
			     i);
		i++;
	}
	cr_assert_eq(i, 5);
	cJSON_Delete(root);
	free(buf);
}

/* the flame graph: the three inlined functions drawn as such (kind "i", "(inlined;" in their
 * tooltip), chain and main as plain user frames */
Test(export_inline, svg_marks_inline_frames, .init = build)
{
	static const char *const names[] = { "leaf", "mid", "top", "chain(unsigned int)", "main" };
	char *buf = NULL, want[128];
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct kp_profile_meta m = { .event = "cpu-clock" };
	unsigned i;

	cr_assert_eq(kp_export_svg(f, recs, 3, &m), 0);
	fclose(f);
	for (i = 0; i < 5; i++) {
		snprintf(want, sizeof(want), "data-k=\"%c\"><title>%s (%s", i < 3 ? 'i' : 'u',
			 names[i], i < 3 ? "inlined; 6 samples" : "");
		cr_assert(strstr(buf, want), "%s not in the SVG", want);
	}
	cr_assert_null(strstr(buf, "data-k=\"i\"><title>main"));
	free(buf);
}
