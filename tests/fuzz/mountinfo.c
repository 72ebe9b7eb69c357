/*
 * mountinfo.c - libFuzzer target for the mountinfo line parser of the symbol resolver
 * (Symbol.mntPoint): `make fuzz`.
 *
 * Input: any bytes, split at newlines like /proc/PID/mountinfo. Each line is parsed into
 * buffers of several sizes, exactly as large as asked (ASan sees a byte written past them); a
 * parse either fails with -EINVAL or gives absolute root and mount point paths and a file
 * system type, all inside the buffer.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sym/sym.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(const char *line)
{
	static const size_t sizes[] = { 0, 1, 2, 8, 64, 4096 };
	struct sym_mnt_entry e;
	size_t i;

	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		char *buf = malloc(sizes[i] ? sizes[i] : 1);
		int r;

		if (!buf)
			abort();
		r = sym_mnt_parse(line, buf, sizes[i], &e);
		if (r && r != -EINVAL)
			abort();
		if (!r) {
			if (e.root[0] != '/' || e.mount_point[0] != '/' || !e.fstype)
				abort();
			if (e.root < buf || e.fstype + strlen(e.fstype) >= buf + sizes[i])
				abort();
		}
		free(buf);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1), *line, *next;

	if (!text)
		abort();
	memcpy(text, data, size);
	text[size] = '\0';
	for (line = text; line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		check(line);
	}
	free(text);
	return 0;
}
