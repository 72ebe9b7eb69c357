/*
 * format.c - the parser of tracefs "format" files.
 *
 * A format file looks like
 *	name: sched_switch
 *	ID: 316
 *	format:
 *		field:unsigned short common_type;	offset:0;	size:2;	signed:0;
 *		...
 *		field:__data_loc char[] name;	offset:8;	size:4;	signed:0;
 *	print fmt: "..."
 * Everything a field line says is checked: a missing offset or size, a field that runs
 * past 64 KiB, an empty or repeated name, a missing ID, are refused rather than guessed,
 * because a wrong offset would silently decode garbage from every record.
 * "char buf[]; size:0" is a flexible array that runs to the end of the record.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "kperf/pcerrc.h"
#include "tracefs.h"

static void field_free(struct kp_tp_field *f)
{
	free(f->name);
	free(f->decl);
	free(f->type);
}

void kp_tp_format_free(struct kp_tp_format *fmt)
{
	size_t i;

	if (!fmt)
		return;
	for (i = 0; i < fmt->nfields; i++)
		field_free(&fmt->fields[i]);
	free(fmt->fields);
	free(fmt->system);
	free(fmt->event);
	free(fmt);
}

static char *dup_range(const char *s, size_t n)
{
	char *d = malloc(n + 1);

	if (d) {
		memcpy(d, s, n);
		d[n] = '\0';
	}
	return d;
}

/* "offset:8;" style attribute <key> in <line>; -1 when absent or not a number */
static long attr_value(const char *line, const char *key)
{
	const char *p = strstr(line, key);
	char *end;
	long v;

	if (!p)
		return -1;
	p += strlen(key);
	if (!isdigit((unsigned char)*p))
		return -1;
	errno = 0;
	v = strtol(p, &end, 10);
	if (errno || *end != ';' || v > INT_MAX)
		return -1;
	return v;
}

/* Is the element type of <type> plain char ("char[16]", "__data_loc char[]",
 * "const char[]")? Arrays of signed/unsigned char or u8 are bytes, not text. */
static bool is_char_type(const char *type)
{
	const char *p = type, *end;

	if (!strncmp(p, "__data_loc ", 11))
		p += 11;
	else if (!strncmp(p, "__rel_loc ", 10))
		p += 10;
	if (!strncmp(p, "const ", 6))
		p += 6;
	end = strchr(p, '[');
	if (!end)
		end = p + strlen(p);
	while (end > p && isspace((unsigned char)end[-1]))
		end--;
	return end - p == 4 && !strncmp(p, "char", 4);
}

/* "__data_loc char[]" yes, "char x[" no: a '[' left open means a cut declaration */
static bool brackets_balanced(const char *s, size_t n)
{
	int depth = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		if (s[i] == '[')
			depth++;
		else if (s[i] == ']' && --depth < 0)
			return false;
	}
	return depth == 0;
}

/*
 * Split a declaration such as "unsigned long args[6]" or "__data_loc char[] name" into the
 * name and the type. The name is the last identifier; an array suffix after it belongs to
 * the type ("char prev_comm[16]" -> type "char[16]", name "prev_comm").
 */
static int split_decl(const char *decl, struct kp_tp_field *f)
{
	size_t n = strlen(decl), name_end, name_start, tlen;
	const char *bracket = NULL;
	char *type;

	while (n && isspace((unsigned char)decl[n - 1]))
		n--;
	name_end = n;
	if (n && decl[n - 1] == ']') {
		/* find the '[' that opens the trailing array suffix */
		size_t i = n;

		while (i && decl[i - 1] != '[')
			i--;
		if (!i)
			return -EINVAL;
		bracket = decl + i - 1;
		name_end = i - 1;
		while (name_end && isspace((unsigned char)decl[name_end - 1]))
			name_end--;
	}
	name_start = name_end;
	while (name_start &&
	       (isalnum((unsigned char)decl[name_start - 1]) || decl[name_start - 1] == '_'))
		name_start--;
	if (name_start == name_end || isdigit((unsigned char)decl[name_start]) ||
	    !brackets_balanced(decl, name_start) ||
	    (bracket && !brackets_balanced(bracket, (size_t)(decl + n - bracket))))
		return -EINVAL;
	f->name = dup_range(decl + name_start, name_end - name_start);
	tlen = name_start;
	while (tlen && isspace((unsigned char)decl[tlen - 1]))
		tlen--;
	if (!tlen) {
		free(f->name);
		f->name = NULL;
		return -EINVAL;
	}
	type = malloc(tlen + (bracket ? (size_t)(decl + n - bracket) : 0) + 1);
	if (!type || !f->name) {
		free(type);
		free(f->name);
		f->name = NULL;
		return -ENOMEM;
	}
	memcpy(type, decl, tlen);
	type[tlen] = '\0';
	if (bracket) {
		strncat(type, bracket, (size_t)(decl + n - bracket));
		f->is_array = true;
	}
	f->type = type;
	f->decl = dup_range(decl, n);
	if (!f->decl)
		return -ENOMEM;
	f->data_loc = strncmp(decl, "__data_loc ", 11) == 0;
	f->rel_loc = strncmp(decl, "__rel_loc ", 10) == 0;
	if (f->data_loc || f->rel_loc)
		f->is_array = false;
	f->is_string = (f->is_array || f->data_loc || f->rel_loc) && is_char_type(f->type);
	f->is_common = strncmp(f->name, "common_", 7) == 0;
	return 0;
}

static int bad_line(int lineno, const char *why)
{
	return kp_fail(KPERF_ERR_INVALID_FORMAT, -EINVAL,
		       "malformed tracepoint format, line %d: %s", lineno, why);
}

static int parse_field_line(const char *line, int lineno, struct kp_tp_field *f)
{
	const char *decl = line + strlen("field:"), *semi;
	long off, size, sign;
	char *d;
	int err;

	while (isspace((unsigned char)*decl))
		decl++;
	semi = strchr(decl, ';');
	if (!semi)
		return bad_line(lineno, "field declaration without ';'");
	off = attr_value(semi, "offset:");
	size = attr_value(semi, "size:");
	sign = attr_value(semi, "signed:");
	if (off < 0 || size < 0)
		return bad_line(lineno, "field without a valid offset or size");
	if (off + size > KP_TP_MAX_RECORD)
		return bad_line(lineno, "field extends past 64 KiB");
	d = dup_range(decl, (size_t)(semi - decl));
	if (!d)
		return kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
	err = split_decl(d, f);
	free(d);
	if (err == -ENOMEM)
		return kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
	if (err)
		return bad_line(lineno, "field declaration has no name");
	f->offset = (unsigned)off;
	f->size = (unsigned)size;
	f->is_signed = sign > 0;
	if ((f->data_loc || f->rel_loc) && f->size != 4)
		return bad_line(lineno, "__data_loc field whose size is not 4");
	if (!f->size && !(f->is_array && strstr(f->type, "[]")))
		return bad_line(lineno, "field of size 0 that is not a flexible array");
	f->pub.fieldName = f->name;
	f->pub.fieldStr = f->decl;
	f->pub.offset = f->offset;
	f->pub.size = f->size;
	f->pub.isSigned = f->is_signed;
	return 0;
}

/* "ID: 316": digits only, and a value that fits the u16 common_type of the records */
static int parse_id(const char *p, unsigned *id)
{
	char *end;
	long v;

	while (isspace((unsigned char)*p))
		p++;
	if (!isdigit((unsigned char)*p))
		return -EINVAL;
	errno = 0;
	v = strtol(p, &end, 10);
	while (isspace((unsigned char)*end))
		end++;
	if (errno || *end || v <= 0 || v > 65535)
		return -EINVAL;
	*id = (unsigned)v;
	return 0;
}

int kp_tp_format_parse(const char *text, size_t len, struct kp_tp_format **out)
{
	struct kp_tp_format *fmt;
	size_t cap = 0, pos = 0;
	bool in_format = false, seen_id = false;
	int lineno = 0, err = 0;

	*out = NULL;
	if (!text)
		return kp_fail(KPERF_ERR_INVALID_FORMAT, -EINVAL, "empty tracepoint format");
	fmt = calloc(1, sizeof(*fmt));
	if (!fmt)
		return kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
	while (pos < len && !err) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t llen = nl ? (size_t)(nl - (text + pos)) : len - pos;
		char *line = dup_range(text + pos, llen), *p;

		pos += llen + 1;
		lineno++;
		if (!line) {
			err = kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
			break;
		}
		if (memchr(line, '\0', llen)) {
			err = bad_line(lineno, "NUL byte in the text");
			free(line);
			break;
		}
		for (p = line; isspace((unsigned char)*p); p++)
			;
		if (!strncmp(p, "name:", 5)) {
			for (p += 5; isspace((unsigned char)*p); p++)
				;
			free(fmt->event);
			fmt->event = strdup(p);
			if (!fmt->event)
				err = kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
		} else if (!strncmp(p, "ID:", 3)) {
			if (seen_id)
				err = bad_line(lineno, "a second ID line");
			else if (parse_id(p + 3, &fmt->id))
				err = bad_line(lineno,
					       "the ID is not a number between 1 and 65535");
			seen_id = true;
		} else if (!strncmp(p, "format:", 7)) {
			in_format = true;
		} else if (!strncmp(p, "field:", 6)) {
			struct kp_tp_field *f;

			if (!in_format) {
				err = bad_line(lineno, "field before the 'format:' line");
			} else if (kp_grow((void **)&fmt->fields, &cap, fmt->nfields + 1,
					   sizeof(*fmt->fields))) {
				err = kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
			} else {
				f = &fmt->fields[fmt->nfields];
				memset(f, 0, sizeof(*f));
				err = parse_field_line(p, lineno, f);
				/* a second common_* field would make records unreadable; a second
				 * field of the event's own is a kernel bug that exists (5.10's
				 * regmap:regcache_sync has two 'type'): lookups find the first */
				if (!err && !strncmp(f->name, "common_", 7) &&
				    kp_tp_format_field(fmt, f->name))
					err = bad_line(lineno, "a second field with the same name");
				if (err)
					field_free(f);
				else
					fmt->nfields++;
				if (!err && f->offset + f->size > fmt->fixed_size)
					fmt->fixed_size = f->offset + f->size;
			}
		} else if (!strncmp(p, "print fmt:", 10)) {
			in_format = false;
		}
		free(line);
	}
	if (!err && !fmt->nfields)
		err = kp_fail(KPERF_ERR_INVALID_FORMAT, -EINVAL,
			      "malformed tracepoint format: no fields");
	if (!err && !seen_id)
		err = kp_fail(KPERF_ERR_INVALID_FORMAT, -EINVAL,
			      "malformed tracepoint format: no ID line");

	if (err) {
		kp_tp_format_free(fmt);
		return err;
	}
	*out = fmt;
	return 0;
}

static bool valid_name(const char *s)
{
	if (!s || !*s || strlen(s) > 128)
		return false;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && *s != '_' && *s != '-' && *s != '.')
			return false;
	return true;
}

int kp_tp_format_load(const char *system, const char *event, struct kp_tp_format **out)
{
	const char *tfs;
	char path[PATH_MAX], *text;
	size_t len;
	int err;

	*out = NULL;
	if (!valid_name(system) || !valid_name(event))
		return kp_fail(LIBPERF_ERR_INVALID_EVENT, -EINVAL,
			       "'%s:%s' is not a valid tracepoint name", system ? system : "",
			       event ? event : "");
	tfs = kp_tracefs();
	if (!tfs)
		return kp_tracefs_fail(LIBPERF_ERR_INVALID_EVENT,
				       "a tracepoint event (its id and fields)");
	snprintf(path, sizeof(path), "%s/events/%s/%s/format", tfs, system, event);
	err = kp_read_file(path, &text, &len);
	if (err == -ENOENT)
		return kp_fail(LIBPERF_ERR_INVALID_EVENT, err,
			       "tracepoint %s:%s does not exist (see %s/available_events)", system,
			       event, tfs);
	if (err)
		return kp_fail(LIBPERF_ERR_PATH_INACCESSIBLE, err, "cannot read %s: %s", path,
			       strerror(-err));
	err = kp_tp_format_parse(text, len, out);
	free(text);
	if (err && err != -ENOMEM) {
		char msg[1024];

		snprintf(msg, sizeof(msg), "%s", Perror());
		return kp_fail(KPERF_ERR_INVALID_FORMAT, err, "%s: %s", path, msg);
	}
	if (!err) {
		free((*out)->system);
		(*out)->system = strdup(system);
		if (!(*out)->event)
			(*out)->event = strdup(event);
		if (!(*out)->system || !(*out)->event) {
			kp_tp_format_free(*out);
			*out = NULL;
			return kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
		}
	}
	return err;
}

const struct kp_tp_field *kp_tp_format_field(const struct kp_tp_format *fmt, const char *name)
{
	size_t i;

	if (!fmt || !name)
		return NULL;
	for (i = 0; i < fmt->nfields; i++)
		if (!strcmp(fmt->fields[i].name, name))
			return &fmt->fields[i];
	return NULL;
}
