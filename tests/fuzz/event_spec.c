/*
 * event_spec.c - libFuzzer target for the event names users write (-e, PmuAttr.evtList):
 * `make fuzz`, and a short run in `make test`. The text is the user's: perf's names and
 * modifiers, raw codes, pmu/term=value,.../ (sysfs format files applied) and system:event.
 *
 * The parse succeeds with a perf_event_attr whose size is set and a copy of the name, or
 * fails with a negative errno and a message; nothing is read past the text (ASan), nothing
 * leaks (LeakSanitizer) on either path. Nothing is opened (no probe).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "events/events.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kp_event ev;
	char *buf = malloc(size + 1);
	int err;

	if (!buf)
		abort();
	memcpy(buf, data, size);
	buf[size] = '\0';
	err = kp_event_parse(buf, false, &ev);
	if (err > 0 || (err && !kp_failed()))
		abort();
	if (!err) {
		if (ev.attr.size != sizeof(ev.attr) || !ev.name || strcmp(ev.name, buf))
			abort();
		kp_event_free(&ev);
	}
	kp_clear();
	free(buf);
	return 0;
}
