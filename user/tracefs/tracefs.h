/*
 * tracefs.h - tracepoint formats: parse events/<system>/<event>/format once, describe its
 * fields (offset, size, signedness, __data_loc) and decode them from raw records.
 */
#ifndef KPERF_TRACEFS_H
#define KPERF_TRACEFS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct kp_tp_field {
	char *name; /* "prev_pid" */
	char *decl; /* the declaration as written: "pid_t prev_pid" */
	char *type; /* the type alone: "pid_t", "__data_loc char[]", "char[16]" */
	unsigned offset;
	unsigned size;
	bool is_signed;
	bool data_loc; /* __data_loc: a u32 (len << 16 | offset) pointing to the payload */
	bool rel_loc; /* __rel_loc: like __data_loc, offset relative to the field's end */
	bool is_array; /* fixed array, e.g. char[16] */
	bool is_common; /* common_type, common_pid, ... */
};

struct kp_tp_format {
	char *system;
	char *event;
	unsigned id; /* the event id (PERF_TYPE_TRACEPOINT config) */
	struct kp_tp_field *fields;
	size_t nfields;
	unsigned fixed_size; /* end of the last fixed field */
};

/* Parse the text of a format file. Malformed input is refused (LIBPERF_ERR_INVALID_FORMAT)
 * with the line that is wrong; returns 0 or a negative errno. */
int kp_tp_format_parse(const char *text, size_t len, struct kp_tp_format **out);
/* Read and parse <tracefs>/events/<system>/<event>/format (not cached). */
int kp_tp_format_load(const char *system, const char *event, struct kp_tp_format **out);
void kp_tp_format_free(struct kp_tp_format *fmt);
/* The field called <name>, or NULL. */
const struct kp_tp_field *kp_tp_format_field(const struct kp_tp_format *fmt, const char *name);

#endif
