/*
 * sink.c - the rows of a memscope recording into a file: CSV (RFC 4180 quoting, a header line
 * with msMemScope's column names) or a SQLite database (table memscope_dump, the same column
 * names, every column TEXT as in the CSV, ID and Timestamp(ns) and the ids INTEGER so that SQL
 * sorts and compares them as numbers). Either way the file appears complete or not at all:
 * the CSV through export's kp_out (a temporary file renamed at the end), the database written
 * to "<path>.tmp-PID" in one transaction and renamed.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sqlite3.h>

#include "core/core.h"
#include "export/export.h"
#include "kperf/pcerrc.h"
#include "memscope.h"

#define KP_MS_TABLE "memscope_dump"

struct kp_ms_sink {
	struct kp_out *csv;
	FILE *f;
	sqlite3 *db;
	sqlite3_stmt *ins;
	char *path, *tmp;
};

static bool ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);

	return a >= b && !strcmp(s + a - b, suffix);
}

static void csv_field(FILE *f, const char *s)
{
	if (!strpbrk(s, ",\"\n\r")) {
		fputs(s, f);
		return;
	}
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

static int db_fail(struct kp_ms_sink *s, const char *what)
{
	return kp_fail(LIBPERF_ERR_OPEN_INVALID_FILE, -EIO, "cannot %s the database %s: %s", what,
		       s->path, s->db ? sqlite3_errmsg(s->db) : "out of memory");
}

static int db_open(struct kp_ms_sink *s)
{
	char sql[1024];
	size_t i, len = 0;

	if (asprintf(&s->tmp, "%s.tmp-%d", s->path, (int)getpid()) < 0) {
		s->tmp = NULL;
		return kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
	}
	unlink(s->tmp);
	if (sqlite3_open(s->tmp, &s->db) != SQLITE_OK)
		return db_fail(s, "create");
	len += (size_t)snprintf(sql + len, sizeof(sql) - len, "CREATE TABLE " KP_MS_TABLE " (");
	for (i = 0; i < 12; i++)
		len += (size_t)snprintf(sql + len, sizeof(sql) - len, "%s\"%s\" %s", i ? ", " : "",
					kp_ms_columns[i], i == 0 || i == 4 ? "INTEGER" : "TEXT");
	snprintf(sql + len, sizeof(sql) - len, ")");
	if (sqlite3_exec(s->db, "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; BEGIN", NULL,
			 NULL, NULL) != SQLITE_OK ||
	    sqlite3_exec(s->db, sql, NULL, NULL, NULL) != SQLITE_OK)
		return db_fail(s, "write");
	len = (size_t)snprintf(sql, sizeof(sql), "INSERT INTO " KP_MS_TABLE " VALUES (");
	for (i = 0; i < 12; i++)
		len += (size_t)snprintf(sql + len, sizeof(sql) - len, "%s?", i ? ", " : "");
	snprintf(sql + len, sizeof(sql) - len, ")");
	if (sqlite3_prepare_v2(s->db, sql, -1, &s->ins, NULL) != SQLITE_OK)
		return db_fail(s, "write");
	return 0;
}

int kp_ms_sink_open(const char *path, struct kp_ms_sink **out)
{
	struct kp_ms_sink *s = calloc(1, sizeof(*s));
	size_t i;
	int err;

	*out = NULL;
	if (!s || !(s->path = strdup(path))) {
		free(s);
		return kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
	}
	if (ends_with(path, ".db")) {
		err = db_open(s);
		if (err) {
			kp_ms_sink_abort(s);
			return err;
		}
		*out = s;
		return 0;
	}
	err = kp_out_open(path, &s->csv);
	if (err) {
		kp_ms_sink_abort(s);
		return err;
	}
	s->f = kp_out_file(s->csv);
	for (i = 0; i < 12; i++) {
		if (i)
			fputc(',', s->f);
		csv_field(s->f, kp_ms_columns[i]);
	}
	fputc('\n', s->f);
	*out = s;
	return 0;
}

int kp_ms_sink_row(struct kp_ms_sink *s, const char *const cols[12])
{
	int i;

	if (s->db) {
		for (i = 0; i < 12; i++) {
			if (i == 0 || i == 4)
				sqlite3_bind_int64(s->ins, i + 1, strtoll(cols[i], NULL, 10));
			else
				sqlite3_bind_text(s->ins, i + 1, cols[i], -1, SQLITE_TRANSIENT);
		}
		if (sqlite3_step(s->ins) != SQLITE_DONE)
			return db_fail(s, "write");
		sqlite3_reset(s->ins);
		return 0;
	}
	for (i = 0; i < 12; i++) {
		if (i)
			fputc(',', s->f);
		csv_field(s->f, cols[i]);
	}
	fputc('\n', s->f);
	return 0;
}

int kp_ms_sink_close(struct kp_ms_sink *s)
{
	int err = 0;

	if (s->db) {
		sqlite3_finalize(s->ins);
		s->ins = NULL;
		if (sqlite3_exec(s->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
			err = db_fail(s, "write");
		if (sqlite3_close(s->db) != SQLITE_OK && !err)
			err = db_fail(s, "close");
		s->db = NULL;
		if (!err && rename(s->tmp, s->path))
			err = kp_fail(LIBPERF_ERR_OPEN_INVALID_FILE, -errno, "cannot write %s: %s",
				      s->path, strerror(errno));
		if (err)
			unlink(s->tmp);
	} else {
		err = kp_out_commit(s->csv);
		s->csv = NULL;
	}
	free(s->tmp);
	free(s->path);
	free(s);
	return err;
}

void kp_ms_sink_abort(struct kp_ms_sink *s)
{
	if (!s)
		return;
	if (s->db) {
		sqlite3_finalize(s->ins);
		sqlite3_close(s->db);
	}
	if (s->tmp)
		unlink(s->tmp);
	if (s->csv)
		kp_out_discard(s->csv);
	free(s->tmp);
	free(s->path);
	free(s);
}
