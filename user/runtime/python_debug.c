/*
 * python_debug.c - a CPython 3.13 interpreter's layout read from the interpreter itself: 3.13
 * starts its runtime state (_PyRuntime) with _Py_DebugOffsets, a record of where its
 * interpreter, thread, frame, code and str structures keep their fields, written for
 * debuggers and profilers. Its first word is the cookie "xdebugpy", then the version
 * (PY_VERSION_HEX), a free-threaded flag, then groups of 64-bit words, each group starting
 * with the size of its structure. The groups' order and length are those of the version's
 * header (Include/internal/pycore_runtime.h of 3.13.x); the offsets inside are the build's
 * own, so a build with other sizes (a debug build, other compile options) is read right. The
 * record's shape changes between minor versions: only 3.13's is known here (3.14 has more
 * fields and tags its frames' code pointers).
 */
#include <errno.h>
#include <linux/types.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "python.h"

/* word indexes into 3.13's _Py_DebugOffsets (each word 8 bytes) */
enum {
	W313_VERSION = 1,
	W313_FREE_THREADED = 2,
	W313_RT_SIZE = 3,
	W313_RT_INTERP_HEAD = 5,
	W313_IS_SIZE = 6, /* 13 words */
	W313_IS_THREADS_HEAD = 9,
	W313_TS_SIZE = 19, /* 9 words */
	W313_TS_NEXT = 21,
	W313_TS_CURRENT_FRAME = 23,
	W313_TS_NATIVE_TID = 25,
	W313_FR_SIZE = 28, /* 6 words */
	W313_FR_PREVIOUS = 29,
	W313_FR_EXECUTABLE = 30,
	W313_FR_OWNER = 33,
	W313_CO_SIZE = 34, /* 10 words */
	W313_CO_FILENAME = 35,
	W313_CO_QUALNAME = 37,
	W313_CO_FIRSTLINENO = 39,
	W313_STR_SIZE = 67, /* 4 words */
	W313_STR_STATE = 68,
	W313_STR_ASCII_SIZE = 70,
	W313_WORDS = 73, /* the record ends with the gc group, 2 words */
};

/* 3.12+: the owner of the frame each _PyEval_EvalFrameDefault activation pushes first
 * (FRAME_OWNED_BY_CSTACK of pycore_frame.h; 3.13.5's header checked) */
#define OWNED_BY_CSTACK 3
/* PyCompactUnicodeObject: a PyASCIIObject, then utf8_length and utf8 (3.12-3.14) */
#define COMPACT_AFTER_ASCII 16

size_t kp_py_debug_offsets_size(unsigned minor)
{
	return minor == 13 ? W313_WORDS * 8 : 0;
}

static uint64_t word(const unsigned char *buf, unsigned i)
{
	uint64_t v;

	memcpy(&v, buf + (size_t)i * 8, sizeof(v));
	return v;
}

/* word <field> of the group at <group>, an offset inside that group's structure: false when it
 * is not (the record is not the shape this file reads) or does not fit the layout's u16 */
static bool field(const unsigned char *buf, unsigned group, unsigned fld, __u16 *out)
{
	uint64_t size = word(buf, group), off = word(buf, fld);

	if (size == 0 || size > 0x100000 || off >= size || off > 0xfff0)
		return false;
	*out = (__u16)off;
	return true;
}

int kp_py_layout_from_debug(const void *rec, size_t len, unsigned major, unsigned minor,
			    struct kp_py_layout *out, char *why, size_t why_len)
{
	const unsigned char *buf = rec;
	struct kp_py_layout l = { 0 };
	uint64_t version;
	bool ok;

	if (major != 3 || minor != 13 || len < kp_py_debug_offsets_size(minor)) {
		snprintf(why, why_len, "no _Py_DebugOffsets reader for Python %u.%u", major, minor);
		return -ENOTSUP;
	}
	if (memcmp(buf, "xdebugpy", 8)) {
		snprintf(why, why_len,
			 "its _PyRuntime does not start with _Py_DebugOffsets (no \"xdebugpy\" "
			 "cookie)");
		return -EINVAL;
	}
	version = word(buf, W313_VERSION);
	if ((version >> 24) != major || ((version >> 16) & 0xff) != minor) {
		snprintf(why, why_len,
			 "its _Py_DebugOffsets are those of version %u.%u, the file says %u.%u",
			 (unsigned)(version >> 24), (unsigned)((version >> 16) & 0xff), major,
			 minor);
		return -EINVAL;
	}
	if (word(buf, W313_FREE_THREADED)) {
		snprintf(why, why_len,
			 "it is a free-threaded build (not read: its objects differ and it was "
			 "never tried)");
		return -ENOTSUP;
	}
	ok = field(buf, W313_RT_SIZE, W313_RT_INTERP_HEAD, &l.rt_interp_head) &&
	     field(buf, W313_IS_SIZE, W313_IS_THREADS_HEAD, &l.is_threads_head) &&
	     field(buf, W313_TS_SIZE, W313_TS_NEXT, &l.ts_next) &&
	     field(buf, W313_TS_SIZE, W313_TS_NATIVE_TID, &l.ts_native_tid) &&
	     field(buf, W313_TS_SIZE, W313_TS_CURRENT_FRAME, &l.cur_frame) &&
	     field(buf, W313_FR_SIZE, W313_FR_EXECUTABLE, &l.fr_code) &&
	     field(buf, W313_FR_SIZE, W313_FR_PREVIOUS, &l.fr_previous) &&
	     field(buf, W313_FR_SIZE, W313_FR_OWNER, &l.fr_owner) &&
	     field(buf, W313_CO_SIZE, W313_CO_FILENAME, &l.co_filename) &&
	     field(buf, W313_CO_SIZE, W313_CO_QUALNAME, &l.co_qualname) &&
	     field(buf, W313_CO_SIZE, W313_CO_FIRSTLINENO, &l.co_firstlineno) &&
	     field(buf, W313_STR_SIZE, W313_STR_STATE, &l.str_state) &&
	     word(buf, W313_STR_ASCII_SIZE) > 0 && word(buf, W313_STR_ASCII_SIZE) < 0x1000;
	if (!ok) {
		snprintf(why, why_len,
			 "its _Py_DebugOffsets hold an offset outside its structure (not the shape "
			 "of 3.13's)");
		return -EINVAL;
	}
	l.str_ascii = (__u16)word(buf, W313_STR_ASCII_SIZE);
	l.str_compact = (__u16)(l.str_ascii + COMPACT_AFTER_ASCII);
	l.ts_cframe = KP_PY_NONE; /* 3.13: the current frame is in the thread state */
	l.fr_is_entry = KP_PY_NONE; /* 3.12+: an activation starts at its C-stack frame */
	l.owner_cstack = OWNED_BY_CSTACK;
	l.minor = (__u8)minor;
	*out = l;
	return 0;
}
