/*
 * proc_maps.c - libFuzzer target for the /proc/PID/maps parser: `make fuzz`, and a short run
 * in `make test`. The kernel writes that file, but the paths in it are whatever names the
 * process gave its files (spaces, newlines, " (deleted)").
 *
 * The parse succeeds with mappings sorted and disjoint, each non-empty with an interned
 * path, or fails with -EINVAL (not sorted); nothing is read past the text (ASan).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sym/sym.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sym_map *v = NULL;
	char *buf = malloc(size + 1);
	size_t n = 0, i;
	int err;

	if (!buf)
		abort();
	memcpy(buf, data, size);
	buf[size] = '\0';
	err = sym_parse_maps(buf, &v, &n);
	if (err && err != -EINVAL)
		abort();
	for (i = 0; !err && i < n; i++) {
		if (v[i].end <= v[i].start || !v[i].path || v[i].kind > SYM_MAP_SPECIAL)
			abort();
		if (i && v[i].start < v[i - 1].end)
			abort();
	}
	free(v);
	free(buf);
	/* the interned paths would pile up over millions of runs */
	sym_intern_free();
	return 0;
}
