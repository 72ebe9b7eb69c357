/*
 * python.h - CPython processes for the BPF frame reader (bpf/pyframes.bpf.h): which processes
 * run CPython, where their interpreter's state is (the _PyRuntime and _PyEval_EvalFrameDefault
 * symbols of the executable or libpython, the version's layout), and the code objects BPF
 * copied, handed to the symbol resolver. A process that cannot be read (a version whose layout
 * is not known, an interpreter without the symbols) gets native frames only, and the reason is
 * noted once for the caller to say.
 */
#ifndef KPERF_RUNTIME_PYTHON_H
#define KPERF_RUNTIME_PYTHON_H

#include <linux/types.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pyframes.h"

struct kp_py;
struct Elf;

/* Does this kernel's verifier take the frame reader (bpf/pyframes.bpf.h)? Its objects read
 * Python frames (kp_py_max_threads and kp_py_max_walk at their bounds) only where it does. */
bool kp_py_kernel_reads(void);

/* over the maps kp_py_procs, kp_py_codes and kp_py_counters of a loaded object (fds);
 * NULL on ENOMEM */
struct kp_py *kp_py_new(int procs_fd, int codes_fd, int counters_fd);
void kp_py_free(struct kp_py *py);

/* Look at process <pid> (as the caller sees it) again: a CPython it can read gets its entry,
 * anything else none. 1 when it is read as Python, 0 when not, -errno. */
int kp_py_add_pid(struct kp_py *py, int pid);

/* The code objects BPF copied since the last call, handed to the resolver (and removed from
 * the map): how many. */
int kp_py_drain_codes(struct kp_py *py);

/* The next reason noted (once per interpreter file and reason) that a process gets native
 * frames only, NULL when none is left; valid until the next call. */
const char *kp_py_next_note(struct kp_py *py);

/* the BPF side's counters (enum kp_py_counter), summed over the CPUs */
void kp_py_counters(const struct kp_py *py, uint64_t out[KP_PY_CNT_MAX]);

/* The layout of CPython 3.<minor> from the table (3.11): false when not there. */
bool kp_py_layout_of(unsigned minor, struct kp_py_layout *out);

/* How many bytes of _Py_DebugOffsets (the start of _PyRuntime) version 3.<minor> is read
 * from; 0 when its layout is not read that way (python_debug.c: 3.13, 3.14). */
size_t kp_py_debug_offsets_size(unsigned minor);

/* The layout of Python <major>.<minor> from its _Py_DebugOffsets <rec> (<len> bytes, read from
 * the process or its file): 0, or -errno with the reason in <why> (a clause that follows
 * "the interpreter ..."). */
int kp_py_layout_from_debug(const void *rec, size_t len, unsigned major, unsigned minor,
			    struct kp_py_layout *out, char *why, size_t why_len);

/* _PyEval_EvalFrameDefault (ELF address <eval>, <size> bytes) split by the compiler: the ELF
 * range [lo, hi) of the part with no symbol that holds the interpreter loop
 * (python_split.c); false when the function is whole (or its part is not found). */
bool kp_py_eval_split(struct Elf *elf, uint64_t eval, uint64_t size, uint64_t *lo, uint64_t *hi);

#endif
