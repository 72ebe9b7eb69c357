/*
 * tp_format.c - the tracefs format parser: real formats (copied from a 6.18 kernel) parse
 * to the exact fields, every kind of malformed input is refused with
 * KPERF_ERR_INVALID_FORMAT and the wrong line, and thousands of random mutations of real
 * formats never crash it nor fail with another code.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "kperf/pcerrc.h"
#include "tracefs/tracefs.h"

static const char sched_switch_fmt[] =
	"name: sched_switch\n"
	"ID: 372\n"
	"format:\n"
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n"
	"\n"
	"\tfield:char prev_comm[16];\toffset:8;\tsize:16;\tsigned:0;\n"
	"\tfield:pid_t prev_pid;\toffset:24;\tsize:4;\tsigned:1;\n"
	"\tfield:int prev_prio;\toffset:28;\tsize:4;\tsigned:1;\n"
	"\tfield:long prev_state;\toffset:32;\tsize:8;\tsigned:1;\n"
	"\tfield:char next_comm[16];\toffset:40;\tsize:16;\tsigned:0;\n"
	"\tfield:pid_t next_pid;\toffset:56;\tsize:4;\tsigned:1;\n"
	"\tfield:int next_prio;\toffset:60;\tsize:4;\tsigned:1;\n"
	"\n"
	"print fmt: \"prev_comm=%s prev_pid=%d prev_prio=%d prev_state=%s%s ==> next_comm=%s "
	"next_pid=%d next_prio=%d\", REC->prev_comm, REC->prev_pid, REC->prev_prio, "
	"REC->prev_state & 0xff ? \"S\" : \"R\", \"\", REC->next_comm, REC->next_pid, "
	"REC->next_prio\n";

static const char exec_fmt[] =
	"name: sched_process_exec\n"
	"ID: 365\n"
	"format:\n"
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n"
	"\n"
	"\tfield:__data_loc char[] filename;\toffset:8;\tsize:4;\tsigned:0;\n"
	"\tfield:pid_t pid;\toffset:12;\tsize:4;\tsigned:1;\n"
	"\tfield:pid_t old_pid;\toffset:16;\tsize:4;\tsigned:1;\n"
	"\n"
	"print fmt: \"filename=%s pid=%d old_pid=%d\", __get_str(filename), REC->pid, "
	"REC->old_pid\n";

static const char openat_fmt[] =
	"name: sys_enter_openat\n"
	"ID: 782\n"
	"format:\n"
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n"
	"\n"
	"\tfield:int __syscall_nr;\toffset:8;\tsize:4;\tsigned:1;\n"
	"\tfield:int dfd;\toffset:16;\tsize:8;\tsigned:0;\n"
	"\tfield:const char * filename;\toffset:24;\tsize:8;\tsigned:0;\n"
	"\tfield:int flags;\toffset:32;\tsize:8;\tsigned:0;\n"
	"\tfield:umode_t mode;\toffset:40;\tsize:8;\tsigned:0;\n"
	"\n"
	"print fmt: \"dfd: 0x%08lx, filename: 0x%08lx\", ((unsigned long)(REC->dfd)), "
	"((unsigned long)(REC->filename))\n";

static const char print_fmt[] =
	"name: print\n"
	"ID: 5\n"
	"format:\n"
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\t"
	"signed:0;\n"
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n"
	"\n"
	"\tfield:unsigned long ip;\toffset:8;\tsize:8;\tsigned:0;\n"
	"\tfield:char buf[];\toffset:16;\tsize:0;\tsigned:0;\n"
	"\n"
	"print fmt: \"%ps: %s\", (void *)REC->ip, REC->buf\n";

static struct kp_tp_format *parse_ok(const char *text)
{
	struct kp_tp_format *fmt = NULL;
	int err;

	kp_clear();
	err = kp_tp_format_parse(text, strlen(text), &fmt);
	cr_assert_eq(err, 0, "parse failed: %s", Perror());
	cr_assert_not_null(fmt);
	return fmt;
}

static void expect_field(const struct kp_tp_format *fmt, const char *name, const char *type,
			 unsigned off, unsigned size, bool sign)
{
	const struct kp_tp_field *f = kp_tp_format_field(fmt, name);

	cr_assert_not_null(f, "no field %s", name);
	cr_expect_str_eq(f->type, type, "%s type", name);
	cr_expect_eq(f->offset, off, "%s offset %u", name, f->offset);
	cr_expect_eq(f->size, size, "%s size %u", name, f->size);
	cr_expect_eq(f->is_signed, sign, "%s signed", name);
	/* the public view handed out by PmuGetFieldExp mirrors it */
	cr_expect_str_eq(f->pub.fieldName, name);
	cr_expect_str_eq(f->pub.fieldStr, f->decl);
	cr_expect_eq(f->pub.offset, off);
	cr_expect_eq(f->pub.size, size);
	cr_expect_eq(f->pub.isSigned, (unsigned)sign);
}

Test(tp_format, sched_switch_fields)
{
	struct kp_tp_format *fmt = parse_ok(sched_switch_fmt);
	const struct kp_tp_field *f;

	cr_expect_eq(fmt->id, 372);
	cr_expect_str_eq(fmt->event, "sched_switch");
	cr_expect_null(fmt->system);
	cr_expect_eq(fmt->nfields, 11);
	cr_expect_eq(fmt->fixed_size, 64);
	expect_field(fmt, "common_type", "unsigned short", 0, 2, false);
	expect_field(fmt, "common_pid", "int", 4, 4, true);
	expect_field(fmt, "prev_comm", "char[16]", 8, 16, false);
	expect_field(fmt, "prev_pid", "pid_t", 24, 4, true);
	expect_field(fmt, "prev_state", "long", 32, 8, true);
	expect_field(fmt, "next_comm", "char[16]", 40, 16, false);
	expect_field(fmt, "next_pid", "pid_t", 56, 4, true);
	expect_field(fmt, "next_prio", "int", 60, 4, true);
	f = kp_tp_format_field(fmt, "prev_comm");
	cr_expect(f->is_array && f->is_string && !f->data_loc && !f->is_common);
	cr_expect_str_eq(f->decl, "char prev_comm[16]");
	cr_expect(kp_tp_format_field(fmt, "common_pid")->is_common);
	cr_expect(!kp_tp_format_field(fmt, "prev_pid")->is_string);
	cr_expect_null(kp_tp_format_field(fmt, "prev_com"));
	cr_expect_null(kp_tp_format_field(fmt, NULL));
	kp_tp_format_free(fmt);
}

Test(tp_format, data_loc_pointer_and_flexible_array)
{
	struct kp_tp_format *fmt = parse_ok(exec_fmt);
	const struct kp_tp_field *f = kp_tp_format_field(fmt, "filename");

	expect_field(fmt, "filename", "__data_loc char[]", 8, 4, false);
	cr_expect(f->data_loc && f->is_string && !f->is_array && !f->rel_loc);
	cr_expect_str_eq(f->decl, "__data_loc char[] filename");
	expect_field(fmt, "old_pid", "pid_t", 16, 4, true);
	kp_tp_format_free(fmt);

	fmt = parse_ok(openat_fmt);
	expect_field(fmt, "filename", "const char *", 24, 8, false);
	cr_expect(!kp_tp_format_field(fmt, "filename")->is_string);
	expect_field(fmt, "dfd", "int", 16, 8, false);
	expect_field(fmt, "__syscall_nr", "int", 8, 4, true);
	kp_tp_format_free(fmt);

	fmt = parse_ok(print_fmt);
	f = kp_tp_format_field(fmt, "buf");
	expect_field(fmt, "buf", "char[]", 16, 0, false);
	cr_expect(f->is_array && f->is_string);
	kp_tp_format_free(fmt);
}

Test(tp_format, rel_loc_and_byte_arrays)
{
	static const char text[] = "ID: 9\nformat:\n"
				   "field:unsigned short common_type; offset:0; size:2; signed:0;\n"
				   "field:__rel_loc char[] name; offset:4; size:4; signed:0;\n"
				   "field:__data_loc u8[] bytes; offset:8; size:4; signed:0;\n"
				   "field:u8 mac[6]; offset:12; size:6; signed:0;\n"
				   "field:const char msg[8]; offset:18; size:8; signed:0;\n";
	struct kp_tp_format *fmt = parse_ok(text);
	const struct kp_tp_field *f;

	cr_expect_eq(fmt->id, 9);
	cr_expect_null(fmt->event);
	f = kp_tp_format_field(fmt, "name");
	cr_expect(f->rel_loc && !f->data_loc && f->is_string);
	f = kp_tp_format_field(fmt, "bytes");
	cr_expect(f->data_loc && !f->is_string);
	f = kp_tp_format_field(fmt, "mac");
	cr_expect(f->is_array && !f->is_string);
	cr_expect_str_eq(f->type, "u8[6]");
	f = kp_tp_format_field(fmt, "msg");
	cr_expect(f->is_array && f->is_string);
	kp_tp_format_free(fmt);
}

struct bad_case {
	const char *text;
	const char *why; /* a part of the message */
};

#define HDR "ID: 7\nformat:\n"
#define CT "field:unsigned short common_type; offset:0; size:2; signed:0;\n"

static const struct bad_case bad_cases[] = {
	{ "", "no fields" },
	{ "name: x\nID: 7\nformat:\nprint fmt: \"\"\n", "no fields" },
	{ "format:\n" CT, "no ID line" },
	{ "ID: abc\nformat:\n" CT, "line 1: the ID is not a number" },
	{ "ID: 0\nformat:\n" CT, "line 1: the ID" },
	{ "ID: 70000\nformat:\n" CT, "line 1: the ID" },
	{ "ID: 12abc\nformat:\n" CT, "line 1: the ID" },
	{ "ID: -5\nformat:\n" CT, "line 1: the ID" },
	{ "ID: 7\nID: 8\nformat:\n" CT, "line 2: a second ID line" },
	{ "ID: 7\n" CT, "line 2: field before the 'format:' line" },
	{ HDR "field:int x offset:0 size:4\n", "line 3: field declaration without ';'" },
	{ HDR "field:int x offset:0; size:4;\n", "line 3: field without a valid offset" },
	{ HDR "field:int x; size:4; signed:1;\n", "line 3: field without a valid offset or size" },
	{ HDR "field:int x; offset:0; signed:1;\n", "line 3: field without a valid offset" },
	{ HDR "field:int x; offset:-1; size:4;\n", "line 3: field without a valid offset" },
	{ HDR "field:int x; offset:8x; size:4;\n", "line 3: field without a valid offset" },
	{ HDR "field:int x; offset:99999999999; size:4;\n", "line 3: field without a valid" },
	{ HDR "field:int x; offset:65534; size:4;\n", "line 3: field extends past 64 KiB" },
	{ HDR "field:int; offset:0; size:4;\n", "line 3: field declaration has no name" },
	{ HDR "field:x; offset:0; size:4;\n", "line 3: field declaration has no name" },
	{ HDR "field:; offset:0; size:4;\n", "line 3: field declaration has no name" },
	{ HDR "field:char [16]; offset:0; size:16;\n", "line 3: field declaration has no name" },
	{ HDR "field:char x[16; offset:0; size:16;\n", "line 3: field declaration has no name" },
	{ HDR "field:__data_loc char[] s; offset:0; size:8;\n",
	  "line 3: __data_loc field whose size is not 4" },
	{ HDR "field:int x; offset:0; size:0;\n",
	  "line 3: field of size 0 that is not a flexible array" },
	{ HDR "field:char x[4]; offset:0; size:0;\n", "line 3: field of size 0" },
	{ HDR CT "field:int common_type; offset:4; size:4;\n", "line 4: a second field" },
};

Test(tp_format, bad_inputs_are_refused_with_the_line)
{
	size_t i;

	for (i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++) {
		struct kp_tp_format *fmt = (void *)1;
		int err;

		kp_clear();
		err = kp_tp_format_parse(bad_cases[i].text, strlen(bad_cases[i].text), &fmt);
		cr_expect_eq(err, -EINVAL, "case %zu: err %d", i, err);
		cr_expect_null(fmt, "case %zu", i);
		cr_expect_eq(Perrorno(), KPERF_ERR_INVALID_FORMAT, "case %zu: code %d", i,
			     Perrorno());
		cr_expect(strstr(Perror(), bad_cases[i].why) != NULL, "case %zu: '%s' lacks '%s'",
			  i, Perror(), bad_cases[i].why);
		cr_expect(strstr(Perror(), "malformed tracepoint format") != NULL, "case %zu", i);
	}
}

/* 5.10's regmap:regcache_sync declares 'type' twice (a string, then an int): the event is
 * still usable, and a lookup finds the first declaration */
Test(tp_format, duplicate_event_field_keeps_the_first)
{
	static const char text[] = HDR CT
		"field:__data_loc char[] type; offset:4; size:4; "
		"signed:0;\nfield:int type; offset:8; size:4; signed:1;\n";
	const struct kp_tp_field *f;
	struct kp_tp_format *fmt;

	kp_clear();
	cr_assert_eq(kp_tp_format_parse(text, sizeof(text) - 1, &fmt), 0, "%s", Perror());
	cr_expect_eq(fmt->nfields, 3);
	f = kp_tp_format_field(fmt, "type");
	cr_assert_not_null(f);
	cr_expect_eq(f->offset, 4);
	cr_expect_eq(f->size, 4);
	cr_expect_eq(fmt->fixed_size, 12);
	kp_tp_format_free(fmt);
}

Test(tp_format, nul_byte_and_null_text)
{
	char text[sizeof(sched_switch_fmt)];
	struct kp_tp_format *fmt;

	memcpy(text, sched_switch_fmt, sizeof(text));
	text[40] = '\0'; /* inside line 3 */
	kp_clear();
	cr_assert_eq(kp_tp_format_parse(text, sizeof(text) - 1, &fmt), -EINVAL);
	cr_expect_eq(Perrorno(), KPERF_ERR_INVALID_FORMAT);
	cr_expect(strstr(Perror(), "NUL byte") != NULL, "%s", Perror());
	kp_clear();
	cr_assert_eq(kp_tp_format_parse(NULL, 10, &fmt), -EINVAL);
	cr_expect_eq(Perrorno(), KPERF_ERR_INVALID_FORMAT);
	cr_expect_null(fmt);
}

Test(tp_format, text_without_final_newline_and_leading_spaces)
{
	static const char text[] =
		"ID:   42  \nformat:\nfield:  int   x ;offset:0;size:4;signed:1;";
	struct kp_tp_format *fmt = parse_ok(text);

	cr_expect_eq(fmt->id, 42);
	expect_field(fmt, "x", "int", 0, 4, true);
	kp_tp_format_free(fmt);
}

/* ---- fuzz: random mutations of real formats ---- */

static uint64_t rng_state;

static uint64_t rnd(void)
{
	/* xorshift64*: reproducible from the seed printed on failure */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 2685821657736338717ULL;
}

static const char *const interesting[] = {
	"field:",
	";",
	"offset:",
	"size:",
	"signed:",
	"__data_loc ",
	"__rel_loc ",
	"[",
	"]",
	"[]",
	"\n",
	"\t",
	" ",
	"0",
	"65535",
	"65536",
	"-1",
	"4294967296",
	"99999999999999999999",
	"ID: ",
	"format:\n",
	"print fmt:",
	"char ",
	"\0",
};

/* one mutation of <buf> (len in/out, capacity cap) */
static void mutate(char *buf, size_t *len, size_t cap)
{
	size_t pos = *len ? rnd() % *len : 0, n;
	const char *ins;

	switch (rnd() % 6) {
	case 0: /* flip a byte */
		if (*len)
			buf[pos] = (char)(rnd() & 0xff);
		break;
	case 1: /* delete a run */
		n = rnd() % 16;
		if (pos + n > *len)
			n = *len - pos;
		memmove(buf + pos, buf + pos + n, *len - pos - n);
		*len -= n;
		break;
	case 2: /* insert a token */
		ins = interesting[rnd() % (sizeof(interesting) / sizeof(interesting[0]))];
		n = *ins ? strlen(ins) : 1;
		if (*len + n <= cap) {
			memmove(buf + pos + n, buf + pos, *len - pos);
			memcpy(buf + pos, ins, n);
			*len += n;
		}
		break;
	case 3: /* replace a digit run by a number of any size */
		while (pos < *len && (buf[pos] < '0' || buf[pos] > '9'))
			pos++;
		if (pos < *len) {
			char num[24];
			size_t end = pos, nl;

			while (end < *len && buf[end] >= '0' && buf[end] <= '9')
				end++;
			nl = (size_t)snprintf(num, sizeof(num), "%llu",
					      (unsigned long long)(rnd() >> (rnd() % 64)));
			if (*len - (end - pos) + nl <= cap) {
				memmove(buf + pos + nl, buf + end, *len - end);
				memcpy(buf + pos, num, nl);
				*len = *len - (end - pos) + nl;
			}
		}
		break;
	case 4: /* duplicate a line */
		if (*len) {
			size_t s = pos, e = pos;

			while (s && buf[s - 1] != '\n')
				s--;
			while (e < *len && buf[e] != '\n')
				e++;
			if (e < *len)
				e++;
			if (*len + (e - s) <= cap) {
				memmove(buf + e + (e - s), buf + e, *len - e);
				memcpy(buf + e, buf + s, e - s);
				*len += e - s;
			}
		}
		break;
	default: /* truncate */
		*len = pos;
		break;
	}
}

static void check_invariants(const struct kp_tp_format *fmt, uint64_t seed, int it)
{
	size_t i, j;

	cr_assert(fmt->id >= 1 && fmt->id <= 65535, "seed %llu it %d: id %u",
		  (unsigned long long)seed, it, fmt->id);
	cr_assert(fmt->nfields > 0);
	for (i = 0; i < fmt->nfields; i++) {
		const struct kp_tp_field *f = &fmt->fields[i];

		cr_assert(f->name && *f->name && f->type && *f->type && f->decl);
		cr_assert((size_t)f->offset + f->size <= KP_TP_MAX_RECORD);
		cr_assert(!(f->data_loc || f->rel_loc) || f->size == 4);
		cr_assert(f->size || f->is_array);
		cr_assert(f->offset + f->size <= fmt->fixed_size);
		/* a duplicate is accepted for the event's own fields (5.10 has one), never for
		 * the common header */
		for (j = 0; j < i && !strncmp(f->name, "common_", 7); j++)
			cr_assert(strcmp(f->name, fmt->fields[j].name), "duplicate %s", f->name);
	}
}

Test(tp_format, fuzz_mutations_of_real_formats)
{
	static const char *const seeds[] = { sched_switch_fmt, exec_fmt, openat_fmt, print_fmt };
	const char *env = getenv("KPERF_FUZZ_SEED");
	uint64_t seed = env ? strtoull(env, NULL, 0) : 0x6b70657266ULL;
	size_t cap = 8192, len;
	char *buf = malloc(cap);
	int it, ok = 0, refused = 0, m, nmut;

	cr_assert_not_null(buf);
	rng_state = seed;
	for (it = 0; it < 20000; it++) {
		const char *src = seeds[it % 4];
		struct kp_tp_format *fmt;
		int err;

		len = strlen(src);
		memcpy(buf, src, len);
		nmut = 1 + (int)(rnd() % 8);
		for (m = 0; m < nmut; m++)
			mutate(buf, &len, cap);
		kp_clear();
		err = kp_tp_format_parse(buf, len, &fmt);
		if (err) {
			cr_assert_eq(err, -EINVAL, "seed %llu it %d: err %d",
				     (unsigned long long)seed, it, err);
			cr_assert_eq(Perrorno(), KPERF_ERR_INVALID_FORMAT,
				     "seed %llu it %d: code %d (%s)", (unsigned long long)seed, it,
				     Perrorno(), Perror());
			cr_assert_null(fmt);
			refused++;
		} else {
			check_invariants(fmt, seed, it);
			kp_tp_format_free(fmt);
			ok++;
		}
	}
	free(buf);
	/* both outcomes must have been exercised, or the mutations are too weak/strong */
	cr_expect_gt(ok, 1000, "only %d mutants parsed", ok);
	cr_expect_gt(refused, 1000, "only %d mutants refused", refused);
}
