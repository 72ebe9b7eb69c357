/*
 * python_layout.c - where CPython keeps what the BPF frame reader reads, per version
 * (struct kp_py_layout, bpf/pyframes.h). The numbers are offsetof() of the version's own
 * headers (Py_BUILD_CORE internal ones) on a 64-bit build, as scripts/python_offsets.sh prints
 * them for the Python it is given. A version not here gets native frames only, said once.
 */
#include <linux/types.h>
#include <stdbool.h>
#include <stddef.h>

#include "python.h"

static const struct kp_py_layout layouts[] = {
	{
		/* 3.11 (Debian 12's 3.11.2; x86_64 and arm64 alike: LP64, no padding changes) */
		.minor = 11,
		.rt_interp_head = 40,
		.is_threads_head = 16,
		.ts_next = 8,
		.ts_native_tid = 160,
		.ts_cframe = 56,
		.cur_frame = 8,
		.fr_code = 32,
		.fr_previous = 48,
		.fr_owner = 69,
		.fr_is_entry = 68,
		.co_filename = 112,
		.co_qualname = 128,
		.co_firstlineno = 72,
		.str_ascii = 48,
		.str_compact = 72,
		.str_state = 32,
		.owner_cstack = 0xff,
	},
};

bool kp_py_layout_of(unsigned minor, struct kp_py_layout *out)
{
	size_t i;

	for (i = 0; i < sizeof(layouts) / sizeof(layouts[0]); i++)
		if (layouts[i].minor == minor) {
			*out = layouts[i];
			return true;
		}
	return false;
}
