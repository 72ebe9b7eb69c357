/*
 * python_debug.c - a CPython 3.13 or 3.14 interpreter's layout read from the interpreter itself:
 * since 3.13 its runtime state (_PyRuntime) starts with _Py_DebugOffsets, a record of where its
 * interpreter, thread, frame, code and str structures keep their fields, written for
 * debuggers and profilers. Its first word is the cookie "xdebugpy", then the version
 * (PY_VERSION_HEX), a free-threaded flag, then groups of 64-bit words, each group starting
 * with the size of its structure. The groups' order and length are those of the version's
 * header (Include/internal/pycore_runtime.h of 3.13.x, pycore_debug_offsets.h of 3.14.x: one
 * shape per minor version below); the offsets inside are the build's own, so a build with other
 * sizes (a debug build, other compile options) is read right. A version whose shape is not here
 * (3.15+) is not read.
 */
#include <errno.h>
#include <linux/types.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "python.h"

/* where one minor version's record keeps what the reader needs: word indexes (8 bytes each) */
struct shape {
	unsigned minor, words;
	unsigned rt_size, rt_interp_head;
	unsigned is_size, is_threads_head;
	unsigned ts_size, ts_next, ts_current_frame, ts_native_tid;
	unsigned fr_size, fr_previous, fr_executable, fr_owner;
	unsigned co_size, co_filename, co_qualname, co_firstlineno;
	unsigned str_size, str_state, str_ascii_size;
};

#define W_VERSION 1
#define W_FREE_THREADED 2

static const struct shape shapes[] = {
	{
		/* 3.13 (3.13.5's header): interpreter_state 13 words, thread_state 9,
		 * interpreter_frame 6, code_object 10; the record ends with the gc group */
		.minor = 13,	     .words = 73,	.rt_size = 3,
		.rt_interp_head = 5, .is_size = 6,	.is_threads_head = 9,
		.ts_size = 19,	     .ts_next = 21,	.ts_current_frame = 23,
		.ts_native_tid = 25, .fr_size = 28,	.fr_previous = 29,
		.fr_executable = 30, .fr_owner = 33,	.co_size = 34,
		.co_filename = 35,   .co_qualname = 37, .co_firstlineno = 39,
		.str_size = 67,	     .str_state = 68,	.str_ascii_size = 70,
	},
	{
		/* 3.14 (3.14.8's header, Debian forky): interpreter_state 16 words (threads_main,
		 * code_object_generation, tlbc_generation), interpreter_frame 8 (stackpointer,
		 * tlbc_index), code_object 11 (co_tlbc), a set group before dict; after gc the
		 * gen_object, llist_node and debugger_support groups */
		.minor = 14,	     .words = 95,	.rt_size = 3,
		.rt_interp_head = 5, .is_size = 6,	.is_threads_head = 9,
		.ts_size = 22,	     .ts_next = 24,	.ts_current_frame = 26,
		.ts_native_tid = 28, .fr_size = 31,	.fr_previous = 32,
		.fr_executable = 33, .fr_owner = 36,	.co_size = 39,
		.co_filename = 40,   .co_qualname = 42, .co_firstlineno = 44,
		.str_size = 77,	     .str_state = 78,	.str_ascii_size = 80,
	},
};

/* the owner of the frame each _PyEval_EvalFrameDefault activation pushes first: 3.13's
 * FRAME_OWNED_BY_CSTACK (pycore_frame.h, 3.13.5), 3.14's FRAME_OWNED_BY_INTERPRETER
 * (pycore_interpframe_structs.h, 3.14.8; its FRAME_OWNED_BY_CSTACK is 4 and not what
 * ceval.c's entry frame is given): 3 both */
#define OWNED_BY_ENTRY 3
/* PyCompactUnicodeObject: a PyASCIIObject, then utf8_length and utf8 (3.12-3.14) */
#define COMPACT_AFTER_ASCII 16

static const struct shape *shape_of(unsigned minor)
{
	size_t i;

	for (i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++)
		if (shapes[i].minor == minor)
			return &shapes[i];
	return NULL;
}

size_t kp_py_debug_offsets_size(unsigned minor)
{
	const struct shape *sh = shape_of(minor);

	return sh ? (size_t)sh->words * 8 : 0;
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
	const struct shape *sh = major == 3 ? shape_of(minor) : NULL;
	const unsigned char *buf = rec;
	struct kp_py_layout l = { 0 };
	uint64_t version;
	bool ok;

	if (!sh || len < (size_t)sh->words * 8) {
		snprintf(why, why_len, "no _Py_DebugOffsets reader for Python %u.%u", major, minor);
		return -ENOTSUP;
	}
	if (memcmp(buf, "xdebugpy", 8)) {
		snprintf(why, why_len,
			 "its _PyRuntime does not start with _Py_DebugOffsets (no \"xdebugpy\" "
			 "cookie)");
		return -EINVAL;
	}
	version = word(buf, W_VERSION);
	if ((version >> 24) != major || ((version >> 16) & 0xff) != minor) {
		snprintf(why, why_len,
			 "its _Py_DebugOffsets are those of version %u.%u, the file says %u.%u",
			 (unsigned)(version >> 24), (unsigned)((version >> 16) & 0xff), major,
			 minor);
		return -EINVAL;
	}
	if (word(buf, W_FREE_THREADED)) {
		snprintf(why, why_len,
			 "it is a free-threaded build (not read: its objects differ, and no "
			 "Debian suite has one to verify a reader on)");
		return -ENOTSUP;
	}
	ok = field(buf, sh->rt_size, sh->rt_interp_head, &l.rt_interp_head) &&
	     field(buf, sh->is_size, sh->is_threads_head, &l.is_threads_head) &&
	     field(buf, sh->ts_size, sh->ts_next, &l.ts_next) &&
	     field(buf, sh->ts_size, sh->ts_native_tid, &l.ts_native_tid) &&
	     field(buf, sh->ts_size, sh->ts_current_frame, &l.cur_frame) &&
	     field(buf, sh->fr_size, sh->fr_executable, &l.fr_code) &&
	     field(buf, sh->fr_size, sh->fr_previous, &l.fr_previous) &&
	     field(buf, sh->fr_size, sh->fr_owner, &l.fr_owner) &&
	     field(buf, sh->co_size, sh->co_filename, &l.co_filename) &&
	     field(buf, sh->co_size, sh->co_qualname, &l.co_qualname) &&
	     field(buf, sh->co_size, sh->co_firstlineno, &l.co_firstlineno) &&
	     field(buf, sh->str_size, sh->str_state, &l.str_state) &&
	     word(buf, sh->str_ascii_size) > 0 && word(buf, sh->str_ascii_size) < 0x1000;
	if (!ok) {
		snprintf(why, why_len,
			 "its _Py_DebugOffsets hold an offset outside its structure (not the shape "
			 "of 3.%u's)",
			 minor);
		return -EINVAL;
	}
	l.str_ascii = (__u16)word(buf, sh->str_ascii_size);
	l.str_compact = (__u16)(l.str_ascii + COMPACT_AFTER_ASCII);
	l.ts_cframe = KP_PY_NONE; /* 3.13+: the current frame is in the thread state */
	l.fr_is_entry = KP_PY_NONE; /* 3.12+: an activation starts at its C-stack frame */
	l.owner_cstack = OWNED_BY_ENTRY;
	l.minor = (__u8)minor;
	*out = l;
	return 0;
}
