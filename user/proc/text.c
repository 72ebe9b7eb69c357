/*
 * text.c - cutting /proc text into lines, words and "key: value" pairs in place, and
 * reading numbers the way the parsers agree on.
 *
 * /proc files are columns separated by runs of spaces or tabs. Numbers are read from their
 * leading digits; a field that is missing, not a number, or too large for its type reads
 * as 0, so one odd value never costs the rest of the file.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "proc.h"

static bool is_blank(char c)
{
	return c == ' ' || c == '\t';
}

char *kp_proc_line(char **cur)
{
	char *s = *cur, *nl;

	if (!s || !*s)
		return NULL;
	nl = strchr(s, '\n');
	if (nl) {
		*nl = '\0';
		*cur = nl + 1;
	} else {
		*cur = s + strlen(s);
	}
	return s;
}

char *kp_proc_trim(char *s)
{
	char *end;

	while (isspace((unsigned char)*s))
		s++;
	end = s + strlen(s);
	while (end > s && isspace((unsigned char)end[-1]))
		end--;
	*end = '\0';
	return s;
}

char *kp_proc_word(char **cur)
{
	char *s = *cur, *w;

	while (is_blank(*s))
		s++;
	if (!*s) {
		*cur = s;
		return NULL;
	}
	w = s;
	while (*s && !is_blank(*s))
		s++;
	if (*s)
		*s++ = '\0';
	*cur = s;
	return w;
}

unsigned kp_proc_words(char **cur, char **w, unsigned max)
{
	unsigned n = 0;
	char *word;

	while (n < max && (word = kp_proc_word(cur)))
		w[n++] = word;
	return n;
}

unsigned kp_proc_count_words(const char *s)
{
	unsigned n = 0;

	for (;;) {
		while (is_blank(*s))
			s++;
		if (!*s)
			return n;
		n++;
		while (*s && !is_blank(*s))
			s++;
	}
}

char *kp_proc_join(struct kp_proc_arena *a, const char *s)
{
	char *out = kp_proc_alloc(a, strlen(s) + 1), *o = out;

	if (!out)
		return NULL;
	for (;;) {
		while (is_blank(*s))
			s++;
		if (!*s)
			break;
		if (o != out)
			*o++ = ' ';
		while (*s && !is_blank(*s))
			*o++ = *s++;
	}
	*o = '\0';
	return out;
}

int kp_proc_ull_words(struct kp_proc_arena *a, char *s, unsigned long long **arr, unsigned *n)
{
	unsigned count = kp_proc_count_words(s), i;
	unsigned long long *v = NULL;

	if (count) {
		v = kp_proc_alloc(a, (size_t)count * sizeof(*v));
		if (!v)
			return -ENOMEM;
		for (i = 0; i < count; i++)
			v[i] = kp_proc_ull(kp_proc_word(&s));
	}
	*arr = v;
	*n = count;
	return 0;
}

int kp_proc_field_block(struct kp_proc_arena *a, char **cur, struct kp_proc_vec *fields)
{
	char *line, *key, *value;

	*fields = (struct kp_proc_vec){ 0 };
	while ((line = kp_proc_line(cur))) {
		if (!*kp_proc_trim(line)) {
			if (fields->n)
				return 1;
			continue;
		}
		if (kp_proc_colon(line, &key, &value) && kp_proc_push_field(a, fields, key, value))
			return -ENOMEM;
	}
	return fields->n ? 1 : 0;
}

bool kp_proc_colon(char *line, char **key, char **value)
{
	char *c = strchr(line, ':');

	if (!c)
		return false;
	*c = '\0';
	*key = kp_proc_trim(line);
	*value = kp_proc_trim(c + 1);
	return true;
}

bool kp_proc_prefix(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

unsigned long long kp_proc_ull(const char *s)
{
	unsigned long long v;
	char *end;

	if (!s)
		return 0;
	errno = 0;
	v = strtoull(s, &end, 10);
	return end == s || errno ? 0 : v;
}

long long kp_proc_ll(const char *s)
{
	long long v;
	char *end;

	if (!s)
		return 0;
	errno = 0;
	v = strtoll(s, &end, 10);
	return end == s || errno ? 0 : v;
}

int kp_proc_int(const char *s)
{
	long v;
	char *end;

	if (!s)
		return 0;
	errno = 0;
	v = strtol(s, &end, 10);
	if (end == s || errno || v < INT_MIN || v > INT_MAX)
		return 0;
	return (int)v;
}

double kp_proc_double(const char *s)
{
	double v;
	char *end;

	if (!s)
		return 0.0;
	errno = 0;
	v = strtod(s, &end);
	return end == s || errno ? 0.0 : v;
}
