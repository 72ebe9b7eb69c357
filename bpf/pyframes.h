/*
 * pyframes.h - CPython frames in user stacks, shared by bpf/pyframes.bpf.h and user/runtime:
 * where a process's interpreter keeps its state (kp_py_proc, one per Python process, written by
 * userspace from the interpreter's symbols and a per-version layout), how a Python frame sits
 * in a stack (a tagged word: the address of its code object), and what BPF copies once per code
 * object for userspace to name it even after the process exited (kp_py_code).
 * Fixed-width types only.
 */
#ifndef KPERF_BPF_PYFRAMES_H
#define KP_PY_MAX_THREADS 256 /* thread states looked at to find the sampled thread's */
#define KP_PY_MAX_WALK 128 /* interpreter frames of one activation (more: the rest skipped) */
#define KPERF_BPF_PYFRAMES_H

/* A Python frame in a stack: KP_PY_TAG | the code object's address (48 bits). Bits 63 and 62
 * are clear (the resolver keys addresses << 1 and restores them with an arithmetic shift), the
 * tag is above every user address (x86_64: 47 bits, arm64: 48) and below the kernel's. */
#define KP_PY_TAG 0x2000000000000000ULL
#define KP_PY_TAG_MASK 0xffff000000000000ULL
#define KP_PY_ADDR_MASK 0x0000ffffffffffffULL
/* what of a frame's code word is the code object's address: 3.14 keeps it as a _PyStackRef,
 * a pointer tagged in its low bits (Py_TAG_BITS: 3, free-threaded 1); objects are aligned to
 * 16 bytes, so 3.11 and 3.13's plain pointers are the same masked */
#define KP_PY_CODE_MASK 0x0000fffffffffff8ULL

#define KP_PY_NONE 0xffff /* a layout offset the version does not have */

/* offsets in bytes into the interpreter's structures (one version's layout) */
struct kp_py_layout {
	__u16 rt_interp_head; /* _PyRuntimeState.interpreters.head */
	__u16 is_threads_head; /* PyInterpreterState.threads.head */
	__u16 ts_next; /* PyThreadState.next */
	__u16 ts_native_tid; /* PyThreadState.native_thread_id */
	__u16 ts_cframe; /* PyThreadState.cframe (3.11, 3.12); KP_PY_NONE: 3.13+ */
	__u16 cur_frame; /* current_frame in _PyCFrame, or in PyThreadState without cframe */
	__u16 fr_code; /* _PyInterpreterFrame.f_code (3.13+: f_executable) */
	__u16 fr_previous; /* _PyInterpreterFrame.previous */
	__u16 fr_owner; /* _PyInterpreterFrame.owner */
	__u16 fr_is_entry; /* _PyInterpreterFrame.is_entry (3.11); KP_PY_NONE after */
	__u16 co_filename;
	__u16 co_qualname;
	__u16 co_firstlineno;
	__u16 str_ascii; /* sizeof(PyASCIIObject): where a compact ASCII string's bytes start */
	__u16 str_compact; /* sizeof(PyCompactUnicodeObject): a compact non-ASCII string's */
	__u16 str_state; /* PyASCIIObject.state: kind in bits 2-4, compact 5, ascii 6 */
	__u8 owner_cstack; /* the owner of an activation's entry frame (3.12-3.14: 3); 0xff: none */
	__u8 minor; /* the version (3.minor) */
	__u16 pad;
};

/* the value of kp_py_procs (key: the tgid as the caller sees it) */
struct kp_py_proc {
	__u64 runtime; /* the address of _PyRuntime in the process */
	/* the span of _PyEval_EvalFrameDefault's code (the walk calls the reader in it), and its
	 * parts: the symbol's range, and the part the compiler split off (0, 0: none; Debian's
	 * 3.14 keeps its interpreter loop there, python_split.c) */
	__u64 eval_lo, eval_hi;
	__u64 code_lo[2], code_hi[2];
	struct kp_py_layout l;
};

#define KP_PY_QUALNAME 96
#define KP_PY_FILENAME 160

/* kp_py_codes: what names a code object, copied once by BPF (key: tgid, code address) */
struct kp_py_code_key {
	__u32 tgid;
	__u32 pad;
	__u64 code;
};

struct kp_py_code {
	__u32 firstlineno;
	__u32 flags; /* KP_PY_CODE_* */
	char qualname[KP_PY_QUALNAME];
	char filename[KP_PY_FILENAME];
};

#define KP_PY_CODE_NAME_UNREADABLE 0x1 /* not a compact ASCII/Latin-1 string, or unreadable */
#define KP_PY_CODE_FILE_UNREADABLE 0x2

/* what the Python frame reader counts (kp_py_counters, per CPU) */
enum kp_py_counter {
	KP_PY_CNT_STACKS = 0, /* stacks of a Python process that reached the interpreter */
	KP_PY_CNT_FRAMES = 1, /* Python frames put in stacks */
	KP_PY_CNT_NO_TSTATE = 2, /* the sampled thread's thread state was not found */
	KP_PY_CNT_READ_FAULT = 3, /* a frame or code object could not be read */
	KP_PY_CNT_CODES = 4, /* code objects copied */
	KP_PY_CNT_CODES_FULL = 5, /* code objects not copied (kp_py_codes full) */
	KP_PY_CNT_MAX
};

#endif
