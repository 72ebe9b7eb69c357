/*
 * tracefs.h - tracepoint formats and raw tracepoint records.
 *
 *  format.c  parses events/<system>/<event>/format (offset, size, signedness, __data_loc);
 *  cache.c   keeps every parsed format for the library's lifetime, shared by all threads,
 *            found by name or by event id (the common_type that starts every raw record);
 *  raw.c     the raw records handed to callers in PmuData.rawData, and PmuGetField /
 *            PmuGetFieldExp that decode them.
 *
 * Contract for the code that produces raw records (sampling):
 *  - a record is the PERF_SAMPLE_RAW payload of a tracepoint (or the same bytes copied by a
 *    BPF program): it starts with the u16 common_type, the event id. Padding after the
 *    tracepoint's own bytes is allowed.
 *  - kp_raw_data_new(rec, len) copies it and returns the struct SampleRawData to store in
 *    PmuData.rawData. The length travels with it (in a header allocated in the same block),
 *    so every decode is bounds-checked against the bytes really received.
 *  - every PmuData that points at a record owns one reference: a copy of a PmuData
 *    (PmuAppendData) takes kp_raw_data_ref(), and freeing a PmuData array calls
 *    kp_raw_data_free() once per record it points at. The last free releases the bytes.
 *  - the library knows every live record: PmuGetField on a pointer it did not hand out, or
 *    one whose last reference was dropped, is refused (LIBPERF_ERR_INVALID_PMU_DATA)
 *    instead of decoding memory that is not a record.
 */
#ifndef KPERF_TRACEFS_H
#define KPERF_TRACEFS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kperf/kperf.h"

/* Largest tracepoint record: the kernel's trace entries fit in one page with their
 * __data_loc payloads, and a __data_loc offset is 16 bits. */
#define KP_TP_MAX_RECORD 65536

struct kp_tp_field {
	char *name; /* "prev_pid" */
	char *decl; /* the declaration as written: "pid_t prev_pid" */
	char *type; /* the type alone: "pid_t", "__data_loc char[]", "char[16]" */
	unsigned offset;
	unsigned size; /* 0: a flexible array ("char buf[]") that runs to the record's end */
	bool is_signed;
	bool data_loc; /* __data_loc: a u32 (len << 16 | offset) pointing to the payload */
	bool rel_loc; /* __rel_loc: like __data_loc, offset relative to the field's end */
	bool is_array; /* fixed or flexible array, e.g. char[16], char[] */
	bool is_string; /* char elements: decoded as a NUL-terminated string */
	bool is_common; /* common_type, common_pid, ... */
	/* the public description handed out by PmuGetFieldExp (points at name and decl) */
	struct SampleRawField pub;
};

struct kp_tp_format {
	char *system; /* NULL when parsed from text alone */
	char *event;
	unsigned id; /* the event id (PERF_TYPE_TRACEPOINT config, common_type of records) */
	struct kp_tp_field *fields;
	size_t nfields;
	unsigned fixed_size; /* end of the last fixed field */
};

/* ---- format.c ---- */

/* Parse the text of a format file. Malformed input (no ID, a field without offset or size,
 * a field past 64 KiB, a duplicate or nameless field, a NUL byte, ...) is refused with
 * KPERF_ERR_INVALID_FORMAT and the number of the wrong line; returns 0 or a negative errno. */
int kp_tp_format_parse(const char *text, size_t len, struct kp_tp_format **out);
/* Read and parse <tracefs>/events/<system>/<event>/format (not cached). */
int kp_tp_format_load(const char *system, const char *event, struct kp_tp_format **out);
void kp_tp_format_free(struct kp_tp_format *fmt);
/* The field called <name>, or NULL. */
const struct kp_tp_field *kp_tp_format_field(const struct kp_tp_format *fmt, const char *name);

/* ---- raw.c: decoding ---- */

/*
 * Copy field <f> of the record <rec> (<len> bytes) into <value> (vSize bytes), the way
 * PmuGetField does: integers and pointers as their bytes, strings NUL-terminated, arrays
 * and __data_loc payloads as bytes. Never reads outside <rec> nor writes past vSize:
 * LIBPERF_ERR_INVALID_PMU_DATA (-ERANGE) for a field or payload outside the record,
 * LIBPERF_ERR_INVALID_FIELD_ARGS (-ENOSPC).
 */
int kp_tp_field_decode(const struct kp_tp_field *f, const void *rec, size_t len, void *value,
		       uint32_t vSize);

/* ---- cache.c ---- */

/*
 * The format of <system>:<event>, parsed on first use. The pointer stays valid for the
 * library's lifetime and may be shared between threads (the format is never modified).
 */
int kp_tp_format_get(const char *system, const char *event, const struct kp_tp_format **out);
/*
 * The format of the event whose id is <id>. The id -> (system, event) map is built from
 * tracefs (events/<system>/<event>/id) the first time an id is not known, and built again
 * once for every id it still lacks (events created later: kprobes, modules).
 * LIBPERF_ERR_INVALID_EVENT when no tracepoint has that id.
 */
int kp_tp_format_by_id(unsigned id, const struct kp_tp_format **out);
/*
 * Add a format that does not come from this machine's tracefs (a recorded file, a test).
 * Takes ownership of <fmt> on success; -EEXIST (KPERF_ERR_INVALID_FORMAT) when a format
 * with its id is already known.
 */
int kp_tp_format_register(struct kp_tp_format *fmt);

/* ---- raw.c ---- */

/* Copy a raw record of <len> bytes (2 <= len <= KP_TP_MAX_RECORD); NULL on failure
 * (COMMON_ERR_NOMEM, or LIBPERF_ERR_INVALID_PMU_DATA for a bad length, recorded). */
struct SampleRawData *kp_raw_data_new(const void *rec, size_t len);
/* Another reference to a live record (returns <raw>), for a second PmuData pointing at it. */
struct SampleRawData *kp_raw_data_ref(struct SampleRawData *raw);
/* Drop one reference; the record is freed with its last one. NULL is ignored, and so is a
 * pointer that is not a live record (a double free). */
void kp_raw_data_free(struct SampleRawData *raw);
/* The length of a live record, or -1 when <raw> is not one. */
long kp_raw_data_len(const struct SampleRawData *raw);
/* The event id (common_type) of a live record, or -1. */
int kp_raw_data_event_id(const struct SampleRawData *raw);

#endif
