/*
 * tp_format.c - libFuzzer target for the tracefs format parser and the field decoder:
 * `make fuzz` (clang -fsanitize=fuzzer,address,undefined).
 *
 * Input: a format file, then a 0xff byte, then a raw record. Every parse either succeeds
 * with a consistent format or fails with KPERF_ERR_INVALID_FORMAT; every field of a
 * parsed format is then decoded from the record into buffers of several sizes, which must
 * neither read outside the record nor write past the buffer (ASan), nor fail with a code
 * other than INVALID_PMU_DATA or BUFFER_TOO_SMALL.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "kperf/pcerrc.h"
#include "tracefs/tracefs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint32_t sizes[] = { 0, 1, 2, 4, 8, 16, 64, 4096 };
	const uint8_t *sep = memchr(data, 0xff, size);
	size_t text_len = sep ? (size_t)(sep - data) : size, rec_len, i, k;
	struct kp_tp_format *fmt;
	unsigned char *rec;

	kp_clear();
	if (kp_tp_format_parse((const char *)data, text_len, &fmt)) {
		if (Perrorno() != KPERF_ERR_INVALID_FORMAT)
			abort();
		return 0;
	}
	/* an exact-size copy of the record, so ASan sees a read one byte past it */
	rec_len = sep ? size - text_len - 1 : 0;
	rec = malloc(rec_len ? rec_len : 1);
	if (!rec)
		abort();
	if (rec_len)
		memcpy(rec, sep + 1, rec_len);
	for (i = 0; i < fmt->nfields; i++) {
		for (k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
			void *buf = malloc(sizes[k] ? sizes[k] : 1);
			int err;

			if (!buf)
				abort();
			err = kp_tp_field_decode(&fmt->fields[i], rec, rec_len, buf, sizes[k]);
			if (err && Perrorno() != LIBPERF_ERR_INVALID_PMU_DATA &&
			    Perrorno() != LIBPERF_ERR_INVALID_FIELD_ARGS)
				abort();
			free(buf);
		}
	}
	free(rec);
	kp_tp_format_free(fmt);
	return 0;
}
