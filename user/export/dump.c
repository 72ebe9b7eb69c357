/*
 * dump.c - PmuDumpData: PmuData records appended to a text file that scripts can read back
 * (the Python package's kperf.dump, `kperf-bpf record --format dump`).
 *
 * libkperf separates fields with spaces, which a comm ("Web Content"), a C++ symbol
 * ("foo(int, char)") or a path can contain; this format uses tabs and escapes text, so
 * every line splits unambiguously. The format (version 1):
 *
 *   record  COMM \t PID \t TID \t CPU \t PERIOD \t EVT \t COUNT \n
 *   frame   \t 0xADDR \t SYMBOL+0xOFFSET \t MODULE [\t FILE:LINE] \n
 *
 * A frame line starts with a tab; frames follow their record, leaf first (PmuData.stack,
 * then ->next towards the caller). FILE:LINE is written only when dumpDwf is set ("??:0"
 * when the frame has no line information). Numbers are decimal except ADDR and OFFSET
 * (lower-case hex). Text (COMM, EVT, SYMBOL, MODULE, FILE) is escaped: backslash as \\,
 * tab as \t, newline as \n, carriage return as \r, other control bytes as \xHH; a NULL
 * string is an empty field, a NULL symbol name is "[unknown]". SYMBOL+0xOFFSET splits at
 * its last '+'. Readers must ignore fields after the last one they know (later versions
 * may add some).
 *
 * The file is opened with O_APPEND and created (0644) if missing. If writing fails half
 * way (disk full, a looping stack), a regular file is cut back to its previous size: a dump
 * is all or nothing.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/core.h"
#include "export.h"
#include "kperf/pcerrc.h"
#include "kperf/kperf.h"
#include "pmu/pmu.h"

static void put_text(FILE *f, const char *s)
{
	const unsigned char *p;

	if (!s)
		return;
	for (p = (const unsigned char *)s; *p; p++) {
		switch (*p) {
		case '\\':
			fputs("\\\\", f);
			break;
		case '\t':
			fputs("\\t", f);
			break;
		case '\n':
			fputs("\\n", f);
			break;
		case '\r':
			fputs("\\r", f);
			break;
		default:
			if (*p < 0x20 || *p == 0x7f)
				fprintf(f, "\\x%02x", *p);
			else
				fputc(*p, f);
		}
	}
}

/* Floyd: a stack list whose ->next loops would never end */
static bool stack_cycles(const struct Stack *s)
{
	const struct Stack *fast = s;

	while (fast && fast->next) {
		s = s->next;
		fast = fast->next->next;
		if (s == fast)
			return true;
	}
	return false;
}

int kp_dump_write(FILE *f, const struct PmuData *data, unsigned n, bool dwarf)
{
	const struct Stack *st;
	unsigned i;

	for (i = 0; i < n; i++) {
		const struct PmuData *d = &data[i];

		if (stack_cycles(d->stack))
			return kp_fail(LIBPERF_ERR_INVALID_PMU_DATA, -EINVAL,
				       "record %u: its call stack loops (stack->next comes back to "
				       "an earlier frame)",
				       i);
		put_text(f, d->comm);
		fprintf(f, "\t%d\t%d\t%d\t%" PRIu64 "\t", (int)d->pid, d->tid, d->cpu, d->period);
		put_text(f, d->evt);
		fprintf(f, "\t%" PRIu64 "\n", d->count);
		for (st = d->stack; st; st = st->next) {
			const struct Symbol *sym = st->symbol;

			if (!sym)
				continue; /* nothing to say about a frame without a symbol */
			fprintf(f, "\t0x%lx\t", sym->addr);
			put_text(f, sym->symbolName ? sym->symbolName : "[unknown]");
			fprintf(f, "+0x%lx\t", sym->offset);
			put_text(f, sym->module);
			if (dwarf) {
				fputc('\t', f);
				if (sym->fileName && *sym->fileName)
					put_text(f, sym->fileName);
				else
					fputs("??", f);
				fprintf(f, ":%u", sym->lineNum);
			}
			fputc('\n', f);
		}
	}
	return ferror(f) ? -EIO : 0;
}

KP_EXPORT int PmuDumpData(struct PmuData *pmuData, unsigned len, char *filepath, int dumpDwf)
{
	struct stat st;
	off_t before;
	FILE *f;
	int fd, err;

	kp_clear();
	/* libkperf's order: the path, the file, then the data */
	if (!filepath)
		return kp_public_fail(
			kp_fail(LIBPERF_ERR_NULL_POINTER, -EINVAL,
				"filepath is NULL: give the file to dump the data to"));
	if (!*filepath)
		return kp_public_fail(
			kp_fail(LIBPERF_ERR_PATH_INACCESSIBLE, -ENOENT,
				"filepath is empty: give the file to dump the data to"));
	if (!pmuData && len)
		return kp_public_fail(kp_fail(LIBPERF_ERR_NULL_POINTER, -EINVAL,
					      "pmuData is NULL but len is %u", len));
	/* before the file is touched: a length past the array's end would read beyond it */
	err = kp_data_check(pmuData, len, "PmuDumpData");
	if (err)
		return kp_public_fail(err);
	fd = open(filepath, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		return kp_public_fail(kp_fail(LIBPERF_ERR_PATH_INACCESSIBLE, -errno,
					      "cannot open %s for appending: %s", filepath,
					      strerror(errno)));
	/* a FIFO or a terminal cannot be cut back: only a regular file is */
	before = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ? st.st_size : -1;
	f = fdopen(fd, "a");
	if (!f) {
		err = -errno;
		close(fd);
		return kp_public_fail(kp_fail(COMMON_ERR_NOMEM, err, "out of memory"));
	}
	err = kp_dump_write(f, pmuData, len, dumpDwf != 0);
	if (fflush(f) == EOF && (!err || err == -EIO))
		err = errno ? -errno : -EIO;
	if (err && !kp_failed()) {
		char msg[512];

		snprintf(msg, sizeof(msg), "writing %s failed: %s", filepath, strerror(-err));
		kp_fail(COMMON_ERR_WRITE, err, "%s", msg);
	}
	if (err && before >= 0 && ftruncate(fd, before))
		kp_fail(COMMON_ERR_WRITE, err,
			"writing %s failed (%s) and it could not be cut back to its previous "
			"%lld bytes",
			filepath, strerror(-err), (long long)before);
	if (fclose(f) == EOF && !err)
		err = kp_fail(COMMON_ERR_WRITE, -errno, "closing %s failed: %s", filepath,
			      strerror(errno));
	return err ? kp_public_fail(err) : SUCCESS;
}
