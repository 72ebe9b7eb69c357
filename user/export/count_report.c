/*
 * count_report.c - counter values as `perf stat` prints them, or as JSON / CSV.
 *
 * JSON: { "target", "elapsed_s", ["interval_s"], "events": [ { "event", "count",
 *         "running_pct", "supported" } ] }   (one document per line with -I)
 * CSV:  [interval_s,]event,count,unit,running_pct   (count empty when not supported)
 */
#include <inttypes.h>
#include <string.h>
#include <cjson/cJSON.h>

#include "export.h"

static bool is_clock(const char *evt)
{
	return !strncmp(evt, "task-clock", 10) || !strncmp(evt, "cpu-clock", 9);
}

/* 1234567 -> "1,234,567" */
static void thousands(char *buf, size_t size, uint64_t v)
{
	char digits[32];
	size_t n, i, o = 0;

	snprintf(digits, sizeof(digits), "%" PRIu64, v);
	n = strlen(digits);
	for (i = 0; i < n && o + 2 < size; i++) {
		if (i && (n - i) % 3 == 0)
			buf[o++] = ',';
		buf[o++] = digits[i];
	}
	buf[o] = '\0';
}

static void table(FILE *f, const struct kp_count_row *r, int n, const struct kp_count_meta *m)
{
	char num[64], pct[32];
	int i;

	if (m->interval_t_s <= 0)
		fprintf(f, "\n Performance counter stats for %s:\n\n", m->target);
	for (i = 0; i < n; i++) {
		const char *prefix = "";
		char line[160] = "";

		if (m->interval_t_s > 0) {
			snprintf(line, sizeof(line), "%12.3f ", m->interval_t_s);
			prefix = line;
		}
		if (!r[i].supported) {
			fprintf(f, "%s%20s      %-28s\n", prefix, "<not supported>", r[i].evt);
			continue;
		}
		pct[0] = '\0';
		if (r[i].running >= 0 && r[i].running < 0.9995)
			snprintf(pct, sizeof(pct), "  (%.2f%%)", r[i].running * 100);
		if (is_clock(r[i].evt)) {
			double ms = (double)r[i].count / 1e6;
			double span = m->interval_t_s > 0 ? 0 : m->elapsed_s;

			fprintf(f, "%s%20.2f msec %-28s", prefix, ms, r[i].evt);
			if (span > 0)
				fprintf(f, " #  %8.3f CPUs utilized", ms / 1e3 / span);
			fprintf(f, "%s\n", pct);
		} else {
			thousands(num, sizeof(num), r[i].count);
			fprintf(f, "%s%20s      %-28s%s\n", prefix, num, r[i].evt, pct);
		}
	}
	if (m->interval_t_s <= 0)
		fprintf(f, "\n %14.6f seconds time elapsed\n\n", m->elapsed_s);
}

static void json(FILE *f, const struct kp_count_row *r, int n, const struct kp_count_meta *m)
{
	cJSON *root = cJSON_CreateObject(), *arr;
	char *text;
	int i;

	cJSON_AddStringToObject(root, "target", m->target);
	cJSON_AddNumberToObject(root, "elapsed_s", m->elapsed_s);
	if (m->interval_t_s > 0)
		cJSON_AddNumberToObject(root, "interval_s", m->interval_t_s);
	arr = cJSON_AddArrayToObject(root, "events");
	for (i = 0; i < n; i++) {
		cJSON *o = cJSON_CreateObject();

		cJSON_AddStringToObject(o, "event", r[i].evt);
		cJSON_AddBoolToObject(o, "supported", r[i].supported);
		if (r[i].supported) {
			cJSON_AddNumberToObject(o, "count", (double)r[i].count);
			cJSON_AddNumberToObject(o, "running_pct",
						r[i].running < 0 ? 0 : r[i].running * 100);
		}
		cJSON_AddItemToArray(arr, o);
	}
	text = cJSON_PrintUnformatted(root);
	if (text) {
		fprintf(f, "%s\n", text);
		cJSON_free(text);
	}
	cJSON_Delete(root);
}

static void csv(FILE *f, const struct kp_count_row *r, int n, const struct kp_count_meta *m)
{
	int i;

	for (i = 0; i < n; i++) {
		if (m->interval_t_s > 0)
			fprintf(f, "%.3f,", m->interval_t_s);
		if (!r[i].supported) {
			fprintf(f, "%s,,,\n", r[i].evt);
			continue;
		}
		fprintf(f, "%s,%" PRIu64 ",%s,%.2f\n", r[i].evt, r[i].count,
			is_clock(r[i].evt) ? "ns" : "", r[i].running < 0 ? 0 : r[i].running * 100);
	}
}

void kp_report_counts(FILE *f, enum kp_format fmt, const struct kp_count_row *rows, int n,
		      const struct kp_count_meta *meta)
{
	switch (fmt) {
	case KP_FORMAT_TABLE:
		table(f, rows, n, meta);
		break;
	case KP_FORMAT_JSON:
		json(f, rows, n, meta);
		break;
	case KP_FORMAT_CSV:
		csv(f, rows, n, meta);
		break;
	}
	fflush(f);
}
