/*
 * tp_raw.c - PmuGetField / PmuGetFieldExp on hand-built records of a synthetic event that
 * has every kind of field (integers of each size and signedness, a pointer, a char array,
 * __data_loc and __rel_loc strings, a __data_loc array, a byte array, a flexible array),
 * registered under ids no kernel event has. The real-record tests are in
 * tests/integration/tp_fields.c.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "kperf/pcerrc.h"
#include "kperf/kperf.h"
#include "tracefs/tracefs.h"

#define ID_ALL 65001
#define ID_FLEX 65002

static const char all_fmt[] = "name: allkinds\n"
			      "ID: 65001\n"
			      "format:\n"
			      "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
			      "\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
			      "\tfield:signed char s8;\toffset:3;\tsize:1;\tsigned:1;\n"
			      "\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n"
			      "\tfield:short s16;\toffset:8;\tsize:2;\tsigned:1;\n"
			      "\tfield:unsigned short u16;\toffset:10;\tsize:2;\tsigned:0;\n"
			      "\tfield:int s32;\toffset:12;\tsize:4;\tsigned:1;\n"
			      "\tfield:unsigned int u32;\toffset:16;\tsize:4;\tsigned:0;\n"
			      "\tfield:long s64;\toffset:24;\tsize:8;\tsigned:1;\n"
			      "\tfield:unsigned long u64;\toffset:32;\tsize:8;\tsigned:0;\n"
			      "\tfield:void * ptr;\toffset:40;\tsize:8;\tsigned:0;\n"
			      "\tfield:char comm[16];\toffset:48;\tsize:16;\tsigned:0;\n"
			      "\tfield:__data_loc char[] name;\toffset:64;\tsize:4;\tsigned:0;\n"
			      "\tfield:__rel_loc char[] rname;\toffset:68;\tsize:4;\tsigned:0;\n"
			      "\tfield:__data_loc u64[] stack;\toffset:72;\tsize:4;\tsigned:0;\n"
			      "\tfield:u8 mac[6];\toffset:76;\tsize:6;\tsigned:0;\n"
			      "\n"
			      "print fmt: \"\"\n";

static const char flex_fmt[] =
	"name: flexprint\n"
	"ID: 65002\n"
	"format:\n"
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
	"\tfield:unsigned long ip;\toffset:8;\tsize:8;\tsigned:0;\n"
	"\tfield:char buf[];\toffset:16;\tsize:0;\tsigned:0;\n";

#define REC_LEN 120

static void register_fmt(const char *text, const char *sys, const char *evt)
{
	struct kp_tp_format *fmt;

	cr_assert_eq(kp_tp_format_parse(text, strlen(text), &fmt), 0, "%s", Perror());
	free(fmt->event);
	fmt->system = strdup(sys);
	fmt->event = strdup(evt);
	cr_assert_eq(kp_tp_format_register(fmt), 0, "%s", Perror());
}

static void setup(void)
{
	register_fmt(all_fmt, "test", "allkinds");
	register_fmt(flex_fmt, "test", "flexprint");
}

static void put(unsigned char *rec, size_t off, const void *v, size_t n)
{
	memcpy(rec + off, v, n);
}

/* the reference record of ID_ALL */
static void build(unsigned char *rec)
{
	uint16_t type = ID_ALL, u16 = 65000;
	int8_t s8 = -5;
	int16_t s16 = -300;
	int32_t s32 = -70000, pid = 4242;
	uint32_t u32 = 4000000000u, loc;
	int64_t s64 = -5000000000000LL;
	uint64_t u64 = (1ULL << 63) + 5, ptr = 0xffff888012345678ULL, stack[3] = { 1, 2, 3 };
	static const unsigned char mac[6] = { 0xde, 0xad, 0xbe, 0xef, 0x00, 0x01 };

	memset(rec, 0, REC_LEN);
	put(rec, 0, &type, 2);
	put(rec, 3, &s8, 1);
	put(rec, 4, &pid, 4);
	put(rec, 8, &s16, 2);
	put(rec, 10, &u16, 2);
	put(rec, 12, &s32, 4);
	put(rec, 16, &u32, 4);
	put(rec, 24, &s64, 8);
	put(rec, 32, &u64, 8);
	put(rec, 40, &ptr, 8);
	memcpy(rec + 48, "worker-7", 9);
	memcpy(rec + 84, "hello", 6); /* name: 6 bytes at 84 */
	loc = 6u << 16 | 84;
	put(rec, 64, &loc, 4);
	memcpy(rec + 90, "rel", 4); /* rname: 4 bytes at 90, relative to 72 (its end) */
	loc = 4u << 16 | 18;
	put(rec, 68, &loc, 4);
	put(rec, 96, stack, 24); /* stack: 24 bytes at 96 */
	loc = 24u << 16 | 96;
	put(rec, 72, &loc, 4);
	put(rec, 76, mac, 6);
}

static struct SampleRawData *new_rec(const unsigned char *rec, size_t len)
{
	struct SampleRawData *raw = kp_raw_data_new(rec, len);

	cr_assert_not_null(raw, "%s", Perror());
	return raw;
}

TestSuite(tp_raw, .init = setup);

Test(tp_raw, integers_of_every_size_and_sign)
{
	unsigned char rec[REC_LEN];
	struct SampleRawData *raw;
	int8_t s8 = 0;
	int16_t s16 = 0;
	uint16_t u16 = 0;
	int32_t s32 = 0, pid = 0;
	uint32_t u32 = 0;
	int64_t s64 = 0;
	uint64_t u64 = 0, ptr = 0;
	uint16_t type = 0;

	build(rec);
	raw = new_rec(rec, sizeof(rec));
	cr_expect_eq(PmuGetField(raw, "common_type", &type, sizeof(type)), 0, "%s", Perror());
	cr_expect_eq(type, ID_ALL);
	cr_expect_eq(PmuGetField(raw, "s8", &s8, sizeof(s8)), 0);
	cr_expect_eq(s8, -5);
	cr_expect_eq(PmuGetField(raw, "common_pid", &pid, sizeof(pid)), 0);
	cr_expect_eq(pid, 4242);
	cr_expect_eq(PmuGetField(raw, "s16", &s16, sizeof(s16)), 0);
	cr_expect_eq(s16, -300);
	cr_expect_eq(PmuGetField(raw, "u16", &u16, sizeof(u16)), 0);
	cr_expect_eq(u16, 65000);
	cr_expect_eq(PmuGetField(raw, "s32", &s32, sizeof(s32)), 0);
	cr_expect_eq(s32, -70000);
	cr_expect_eq(PmuGetField(raw, "u32", &u32, sizeof(u32)), 0);
	cr_expect_eq(u32, 4000000000u);
	cr_expect_eq(PmuGetField(raw, "s64", &s64, sizeof(s64)), 0);
	cr_expect_eq(s64, -5000000000000LL);
	cr_expect_eq(PmuGetField(raw, "u64", &u64, sizeof(u64)), 0);
	cr_expect_eq(u64, (1ULL << 63) + 5);
	cr_expect_eq(PmuGetField(raw, "ptr", &ptr, sizeof(ptr)), 0);
	cr_expect_eq(ptr, 0xffff888012345678ULL);
	cr_expect_eq(Perrorno(), SUCCESS);
	kp_raw_data_free(raw);
}

Test(tp_raw, bigger_buffer_gets_the_field_bytes_only)
{
	unsigned char rec[REC_LEN], buf[8];
	struct SampleRawData *raw;
	int32_t low;

	build(rec);
	raw = new_rec(rec, sizeof(rec));
	memset(buf, 0xaa, sizeof(buf));
	cr_assert_eq(PmuGetField(raw, "s32", buf, sizeof(buf)), 0);
	memcpy(&low, buf, 4);
	cr_expect_eq(low, -70000);
	/* documented: no sign extension, the rest of the buffer is not written */
	cr_expect_eq(buf[4], 0xaa);
	cr_expect_eq(buf[7], 0xaa);
	kp_raw_data_free(raw);
}

Test(tp_raw, buffer_too_small_writes_nothing)
{
	unsigned char rec[REC_LEN], buf[8];
	struct SampleRawData *raw;

	build(rec);
	raw = new_rec(rec, sizeof(rec));
	memset(buf, 0x55, sizeof(buf));
	cr_assert_eq(PmuGetField(raw, "s64", buf, 4), LIBPERF_ERR_INVALID_FIELD_ARGS);
	cr_expect_eq(Perrorno(), LIBPERF_ERR_INVALID_FIELD_ARGS);
	cr_expect_str_eq(Perror(), "field 's64' (long s64, 8 bytes in the format) needs a buffer "
				   "of 8 bytes; the buffer has 4");
	cr_expect_eq(buf[0], 0x55);
	cr_expect_eq(PmuGetField(raw, "u16", buf, 1), LIBPERF_ERR_INVALID_FIELD_ARGS);
	cr_expect_eq(Perrorno(), LIBPERF_ERR_INVALID_FIELD_ARGS);
	cr_expect_eq(PmuGetField(raw, "u16", buf, 0), LIBPERF_ERR_INVALID_FIELD_ARGS);
	cr_expect_eq(Perrorno(), LIBPERF_ERR_INVALID_FIELD_ARGS);
	/* a success clears the error */
	cr_expect_eq(PmuGetField(raw, "u16", buf, 2), 0);
	cr_expect_eq(Perrorno(), SUCCESS);
	kp_raw_data_free(raw);
}

Test(tp_raw, char_array_is_a_terminated_string)
{
	unsigned char rec[REC_LEN];
	struct SampleRawData *raw;
	char buf[32];

	build(rec);
	raw = new_rec(rec, sizeof(rec));
	memset(buf, 'x', sizeof(buf));
	cr_assert_eq(PmuGetField(raw, "comm", buf, sizeof(buf)), 0);
	cr_expect_str_eq(buf, "worker-7");
	cr_expect_eq(buf[9], 'x', "nothing written after the NUL");
	cr_expect_eq(PmuGetField(raw, "comm", buf, 9), 0, "exact fit");
	cr_expect_str_eq(buf, "worker-7");
	cr_expect_eq(PmuGetField(raw, "comm", buf, 8), LIBPERF_ERR_INVALID_FIELD_ARGS);
	cr_expect_eq(Perrorno(), LIBPERF_ERR_INVALID_FIELD_ARGS);
	cr_expect(strstr(Perror(), "needs a buffer of 9 bytes; the buffer has 8") != NULL, "%s",
		  Perror());
	kp_raw_data_free(raw);

	/* 16 characters without a NUL: 17 bytes are needed for the terminated copy */
	memcpy(rec + 48, "0123456789abcdef", 16);
	raw = new_rec(rec, sizeof(rec));
	cr_expect_eq(PmuGetField(raw, "comm", buf, 16), LIBPERF_ERR_INVALID_FIELD_ARGS);
	cr_expect_eq(Perrorno(), LIBPERF_ERR_INVALID_FIELD_ARGS);
	cr_expect_eq(PmuGetField(raw, "comm", buf, 17), 0);
	cr_expect_str_eq(buf, "0123456789abcdef");
	kp_raw_data_free(raw);
}

Test(tp_raw, data_loc_rel_loc_and_arrays)
{
	unsigned char rec[REC_LEN], mac[6];
	static const unsigned char want_mac[6] = { 0xde, 0xad, 0xbe, 0xef, 0x00, 0x01 };
	struct SampleRawData *raw;
	uint64_t stack[4] = { 9, 9, 9, 9 };
	char buf[32];

	build(rec);
	raw = new_rec(rec, sizeof(rec));
	cr_assert_eq(PmuGetField(raw, "name", buf, sizeof(buf)), 0, "%s", Perror());
	cr_expect_str_eq(buf, "hello");
	cr_expect_eq(PmuGetField(raw, "name", buf, 6), 0);
	cr_expect_eq(PmuGetField(raw, "name", buf, 5), LIBPERF_ERR_INVALID_FIELD_ARGS);
	cr_expect_eq(Perrorno(), LIBPERF_ERR_INVALID_FIELD_ARGS);
	cr_assert_eq(PmuGetField(raw, "rname", buf, sizeof(buf)), 0, "%s", Perror());
	cr_expect_str_eq(buf, "rel");
	cr_assert_eq(PmuGetField(raw, "stack", stack, sizeof(stack)), 0, "%s", Perror());
	cr_expect(stack[0] == 1 && stack[1] == 2 && stack[2] == 3);
	cr_expect_eq(stack[3], 9, "only the payload is written");
	cr_expect_eq(PmuGetField(raw, "stack", stack, 16), LIBPERF_ERR_INVALID_FIELD_ARGS);
	cr_expect_eq(Perrorno(), LIBPERF_ERR_INVALID_FIELD_ARGS);
	cr_expect(strstr(Perror(), "needs a buffer of 24 bytes") != NULL, "%s", Perror());
	cr_assert_eq(PmuGetField(raw, "mac", mac, sizeof(mac)), 0);
	cr_expect_arr_eq(mac, want_mac, 6);
	kp_raw_data_free(raw);
}

Test(tp_raw, data_loc_string_without_nul_and_empty)
{
	unsigned char rec[REC_LEN];
	struct SampleRawData *raw;
	uint32_t loc;
	char buf[8];

	build(rec);
	memcpy(rec + 84, "abc", 3);
	loc = 3u << 16 | 84;
	memcpy(rec + 64, &loc, 4);
	raw = new_rec(rec, sizeof(rec));
	cr_expect_eq(PmuGetField(raw, "name", buf, 3), LIBPERF_ERR_INVALID_FIELD_ARGS);
	cr_expect_eq(PmuGetField(raw, "name", buf, 4), 0);
	cr_expect_str_eq(buf, "abc");
	kp_raw_data_free(raw);

	loc = 0u << 16 | 84;
	memcpy(rec + 64, &loc, 4);
	raw = new_rec(rec, sizeof(rec));
	buf[0] = 'x';
	cr_expect_eq(PmuGetField(raw, "name", buf, 1), 0);
	cr_expect_str_eq(buf, "");
	kp_raw_data_free(raw);
}

Test(tp_raw, data_loc_outside_the_record_is_refused)
{
	static const uint32_t bad_locs[] = {
		6u << 16 | 200, /* offset past the end */
		0xffffu << 16 | 84, /* length past the end */
		40u << 16 | 100, /* ends 20 bytes past */
		1u << 16 | 120, /* one byte past */
	};
	unsigned char rec[REC_LEN];
	struct SampleRawData *raw;
	char buf[128];
	size_t i;

	for (i = 0; i < sizeof(bad_locs) / sizeof(bad_locs[0]); i++) {
		build(rec);
		memcpy(rec + 64, &bad_locs[i], 4);
		raw = new_rec(rec, sizeof(rec));
		memset(buf, 0, sizeof(buf));
		cr_expect_eq(PmuGetField(raw, "name", buf, sizeof(buf)),
			     LIBPERF_ERR_INVALID_PMU_DATA, "loc %zu", i);
		cr_expect_eq(Perrorno(), LIBPERF_ERR_INVALID_PMU_DATA, "loc %zu", i);
		cr_expect(strstr(Perror(), "of a record of 120 bytes: the record is truncated or "
					   "corrupt") != NULL,
			  "%s", Perror());
		cr_expect_eq(buf[0], 0);
		kp_raw_data_free(raw);
	}
	build(rec);
	memcpy(rec + 64, &bad_locs[0], 4);
	raw = new_rec(rec, sizeof(rec));
	PmuGetField(raw, "name", buf, sizeof(buf));
	cr_expect_str_eq(Perror(), "field 'name' points at bytes 200-206 of a record of 120 "
				   "bytes: the record is truncated or corrupt");
	kp_raw_data_free(raw);

	/* __rel_loc counts from the end of its field (72): 72 + 48 + 4 > 120 */
	build(rec);
	memcpy(rec + 68, &(uint32_t){ 4u << 16 | 48 }, 4);
	raw = new_rec(rec, sizeof(rec));
	cr_expect_eq(PmuGetField(raw, "rname", buf, sizeof(buf)), LIBPERF_ERR_INVALID_PMU_DATA);
	cr_expect_str_eq(Perror(), "field 'rname' points at bytes 120-124 of a record of 120 "
				   "bytes: the record is truncated or corrupt");
	kp_raw_data_free(raw);
}

Test(tp_raw, truncated_record)
{
	unsigned char rec[REC_LEN];
	struct SampleRawData *raw;
	char buf[32];
	uint16_t u16;

	build(rec);
	raw = new_rec(rec, 50); /* comm (48..64) is cut */
	cr_expect_eq(PmuGetField(raw, "u16", &u16, sizeof(u16)), 0, "fields before the cut decode");
	cr_expect_eq(u16, 65000);
	cr_expect_eq(PmuGetField(raw, "comm", buf, sizeof(buf)), LIBPERF_ERR_INVALID_PMU_DATA);
	cr_expect_eq(Perrorno(), LIBPERF_ERR_INVALID_PMU_DATA);
	cr_expect_str_eq(Perror(), "field 'comm' points at bytes 48-64 of a record of 50 bytes: "
				   "the record is truncated or corrupt");
	cr_expect_eq(kp_raw_data_len(raw), 50);
	kp_raw_data_free(raw);
}

Test(tp_raw, flexible_array_runs_to_the_end)
{
	unsigned char rec[32];
	uint16_t type = ID_FLEX;
	struct SampleRawData *raw;
	char buf[32];

	memset(rec, 0, sizeof(rec));
	memcpy(rec, &type, 2);
	memcpy(rec + 16, "hi there", 9);
	raw = new_rec(rec, 25);
	cr_assert_eq(PmuGetField(raw, "buf", buf, sizeof(buf)), 0, "%s", Perror());
	cr_expect_str_eq(buf, "hi there");
	kp_raw_data_free(raw);
	raw = new_rec(rec, 20); /* cut inside the text: what is there, terminated */
	cr_assert_eq(PmuGetField(raw, "buf", buf, sizeof(buf)), 0);
	cr_expect_str_eq(buf, "hi t");
	kp_raw_data_free(raw);
}

Test(tp_raw, unknown_field_names_the_fields)
{
	unsigned char rec[REC_LEN];
	struct SampleRawData *raw;
	char buf[8];

	build(rec);
	raw = new_rec(rec, sizeof(rec));
	cr_expect_eq(PmuGetField(raw, "nam", buf, sizeof(buf)), LIBPERF_ERR_INVALID_FIELD_ARGS);
	cr_expect_eq(Perrorno(), LIBPERF_ERR_INVALID_FIELD_ARGS);
	cr_expect_str_eq(Perror(), "tracepoint test:allkinds has no field 'nam' (did you mean "
				   "name?) (its fields: s8, s16, u16, s32, u32, s64, u64, ptr, "
				   "comm, name, rname, stack, mac)");
	cr_expect_null(PmuGetFieldExp(raw, "nosuchfield_at_all"));
	cr_expect_eq(Perrorno(), LIBPERF_ERR_INVALID_FIELD_ARGS);
	cr_expect(strstr(Perror(), "did you mean") == NULL, "%s", Perror());
	kp_raw_data_free(raw);
}

Test(tp_raw, null_arguments)
{
	unsigned char rec[REC_LEN];
	struct SampleRawData *raw;
	char buf[8];

	build(rec);
	raw = new_rec(rec, sizeof(rec));
	cr_expect_eq(PmuGetField(NULL, "name", buf, sizeof(buf)), LIBPERF_ERR_INVALID_FIELD_ARGS);
	cr_expect_eq(Perrorno(), LIBPERF_ERR_INVALID_FIELD_ARGS);
	cr_expect(strstr(Perror(), "rawData is NULL") != NULL);
	cr_expect_eq(PmuGetField(raw, NULL, buf, sizeof(buf)), LIBPERF_ERR_INVALID_FIELD_ARGS);
	cr_expect_eq(Perrorno(), LIBPERF_ERR_INVALID_FIELD_ARGS);
	cr_expect_eq(PmuGetField(raw, "", buf, sizeof(buf)), LIBPERF_ERR_INVALID_FIELD_ARGS);
	cr_expect_eq(Perrorno(), LIBPERF_ERR_INVALID_FIELD_ARGS);
	cr_expect_eq(PmuGetField(raw, "name", NULL, 8), LIBPERF_ERR_INVALID_FIELD_ARGS);
	cr_expect_eq(Perrorno(), LIBPERF_ERR_INVALID_FIELD_ARGS);
	cr_expect_str_eq(Perror(), "value is NULL: pass a buffer for the field");
	cr_expect_null(PmuGetFieldExp(NULL, "name"));
	cr_expect_eq(Perrorno(), LIBPERF_ERR_INVALID_FIELD_ARGS);
	cr_expect_null(PmuGetFieldExp(raw, NULL));
	cr_expect_eq(Perrorno(), LIBPERF_ERR_INVALID_FIELD_ARGS);
	kp_raw_data_free(raw);
}

Test(tp_raw, foreign_and_freed_records_are_refused)
{
	unsigned char rec[REC_LEN];
	struct SampleRawData *raw, fake = { (char *)rec }, copy;
	uint16_t u16 = 0;

	build(rec);
	/* libkperf: data it cannot associate with an event is LIBPERF_ERR_INVALID_FIELD_ARGS */
	cr_expect_eq(PmuGetField(&fake, "u16", &u16, sizeof(u16)), LIBPERF_ERR_INVALID_FIELD_ARGS);
	cr_expect_eq(Perrorno(), LIBPERF_ERR_INVALID_FIELD_ARGS);
	cr_expect_str_eq(Perror(), "rawData is not a live record of this library (not from "
				   "PmuRead, or its PmuData was already freed)");
	cr_expect_eq(kp_raw_data_len(&fake), -1);

	raw = new_rec(rec, sizeof(rec));
	/* a caller that copied the struct still reaches the record through its data pointer */
	copy = *raw;
	cr_expect_eq(PmuGetField(&copy, "u16", &u16, sizeof(u16)), 0, "%s", Perror());
	cr_expect_eq(u16, 65000);
	/* two owners: the record lives until both let go */
	cr_assert_eq(kp_raw_data_ref(raw), raw);
	kp_raw_data_free(raw);
	cr_expect_eq(PmuGetField(raw, "u16", &u16, sizeof(u16)), 0);
	cr_expect_eq(kp_raw_data_event_id(raw), ID_ALL);
	kp_raw_data_free(raw);
	cr_expect_eq(kp_raw_data_len(raw), -1);
	cr_expect_eq(kp_raw_data_event_id(raw), -1);
	cr_expect_null(kp_raw_data_ref(raw));
	kp_raw_data_free(raw); /* a double free is ignored */
	kp_raw_data_free(NULL);
}

Test(tp_raw, record_length_limits)
{
	unsigned char rec[4] = { 0 };

	kp_clear();
	cr_expect_null(kp_raw_data_new(rec, 1));
	cr_expect_eq(Perrorno(), LIBPERF_ERR_INVALID_PMU_DATA);
	cr_expect_str_eq(Perror(), "a raw tracepoint record of 1 bytes (2 to 65536 expected)");
	cr_expect_null(kp_raw_data_new(NULL, 4));
	cr_expect_null(kp_raw_data_new(rec, 65537));
	cr_expect_eq(Perrorno(), LIBPERF_ERR_INVALID_PMU_DATA);
}

Test(tp_raw, field_description_belongs_to_the_library)
{
	unsigned char rec[REC_LEN];
	struct SampleRawData *raw;
	struct SampleRawField *f, *g;

	build(rec);
	raw = new_rec(rec, sizeof(rec));
	f = PmuGetFieldExp(raw, "name");
	cr_assert_not_null(f, "%s", Perror());
	cr_expect_str_eq(f->fieldName, "name");
	cr_expect_str_eq(f->fieldStr, "__data_loc char[] name");
	cr_expect_eq(f->offset, 64);
	cr_expect_eq(f->size, 4);
	cr_expect_eq(f->isSigned, 0);
	f = PmuGetFieldExp(raw, "s64");
	cr_assert_not_null(f);
	cr_expect_str_eq(f->fieldStr, "long s64");
	cr_expect_eq(f->offset, 24);
	cr_expect_eq(f->size, 8);
	cr_expect_eq(f->isSigned, 1);
	g = PmuGetFieldExp(raw, "s64");
	cr_expect_eq(f, g, "the same description every time");
	kp_raw_data_free(raw);
	/* still valid after the record is gone */
	cr_expect_str_eq(g->fieldName, "s64");
}

Test(tp_raw, register_twice_is_refused)
{
	struct kp_tp_format *fmt;

	cr_assert_eq(kp_tp_format_parse(all_fmt, strlen(all_fmt), &fmt), 0);
	kp_clear();
	cr_expect_eq(kp_tp_format_register(fmt), -EEXIST);
	cr_expect_eq(Perrorno(), KPERF_ERR_INVALID_FORMAT);
	cr_expect_str_eq(Perror(), "a tracepoint format with id 65001 is already known");
	kp_tp_format_free(fmt);
	cr_expect_eq(kp_tp_format_register(NULL), -EINVAL);
}

/* ---- many threads decoding, creating and freeing at once (races show under ASan) ---- */

static struct SampleRawData *shared;

static void *worker(void *arg)
{
	unsigned char rec[REC_LEN];
	char buf[32];
	int i, bad = 0;

	(void)arg;
	build(rec);
	for (i = 0; i < 5000; i++) {
		struct SampleRawData *mine = kp_raw_data_new(rec, sizeof(rec));
		struct SampleRawData *again;

		if (!mine)
			return (void *)1;
		again = kp_raw_data_ref(shared);
		bad += PmuGetField(shared, "name", buf, sizeof(buf)) != 0 || strcmp(buf, "hello");
		bad += PmuGetField(mine, "comm", buf, sizeof(buf)) != 0 || strcmp(buf, "worker-7");
		kp_raw_data_free(again);
		kp_raw_data_free(mine);
	}
	return (void *)(intptr_t)bad;
}

Test(tp_raw, concurrent_use)
{
	unsigned char rec[REC_LEN];
	pthread_t t[4];
	void *ret;
	int i;

	build(rec);
	shared = new_rec(rec, sizeof(rec));
	for (i = 0; i < 4; i++)
		cr_assert_eq(pthread_create(&t[i], NULL, worker, NULL), 0);
	for (i = 0; i < 4; i++) {
		pthread_join(t[i], &ret);
		cr_expect_null(ret, "thread %d: %ld failures", i, (long)(intptr_t)ret);
	}
	cr_expect_eq(kp_raw_data_len(shared), REC_LEN);
	kp_raw_data_free(shared);
	cr_expect_eq(kp_raw_data_len(shared), -1);
}

/* ---- random records: every decode succeeds or fails cleanly, never reads outside ---- */

Test(tp_raw, fuzz_decode_random_records)
{
	static const char *const fields[] = { "s8",   "s16",  "u32",   "s64",	"ptr",
					      "comm", "name", "rname", "stack", "mac" };
	uint64_t x = 0x1234567;
	unsigned char rec[REC_LEN];
	char buf[80];
	int it, ok = 0, refused = 0;
	size_t k;

	for (it = 0; it < 20000; it++) {
		struct SampleRawData *raw;
		size_t len;
		uint16_t type = ID_ALL;

		for (k = 0; k < REC_LEN; k++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			rec[k] = (unsigned char)x;
		}
		memcpy(rec, &type, 2);
		len = 2 + (size_t)(x % (REC_LEN - 1));
		/* an exact-size copy: ASan sees any byte read past <len> */
		raw = new_rec(rec, len);
		for (k = 0; k < sizeof(fields) / sizeof(fields[0]); k++) {
			int r = PmuGetField(raw, fields[k], buf, (uint32_t)(x >> 8) % sizeof(buf));

			if (!r) {
				ok++;
			} else {
				cr_assert_eq(r, Perrorno());
				cr_assert(Perrorno() == LIBPERF_ERR_INVALID_PMU_DATA ||
						  Perrorno() == LIBPERF_ERR_INVALID_FIELD_ARGS,
					  "it %d field %s: %d %s", it, fields[k], Perrorno(),
					  Perror());
				refused++;
			}
		}
		kp_raw_data_free(raw);
	}
	cr_expect_gt(ok, 10000);
	cr_expect_gt(refused, 10000);
}
