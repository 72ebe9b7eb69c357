/*
 * perf_map.c - libFuzzer target for the perf map parser (/tmp/perf-PID.map, written by JIT
 * runtimes, i.e. by the traced program): `make fuzz`, and a short run in `make test`.
 *
 * Whatever the text, the symbols come out sorted by start, one per start, each a non-empty
 * range with a non-empty name inside the buffer; nothing is read past the text (ASan).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sym/sym.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sym_jit_sym *v;
	char *buf = malloc(size + 1);
	size_t n, i;

	if (!buf)
		abort();
	memcpy(buf, data, size);
	buf[size] = '\0';
	if (sym_parse_perf_map(buf, &v, &n))
		abort(); /* only -ENOMEM, which a fuzz run does not hit */
	for (i = 0; i < n; i++) {
		if (v[i].end <= v[i].start || !*v[i].name)
			abort();
		if (v[i].name < buf || v[i].name >= buf + size)
			abort();
		if (i && v[i - 1].start >= v[i].start)
			abort();
	}
	free(v);
	free(buf);
	return 0;
}
