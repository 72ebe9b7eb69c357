/*
 * core.h - what every module of libkperf-bpf shares: the per-thread error state, the
 * table of task handles, the registry of arrays handed to callers, and small helpers
 * about the running system (CPUs, processes, privileges, paths).
 *
 * Internal functions return 0 (or a count) on success and a negative errno on failure.
 * The one that knows what went wrong records it with kp_fail(), which also returns the
 * negative errno, so a failure carries a libkperf code and a sentence to the public API.
 */
#ifndef KPERF_CORE_H
#define KPERF_CORE_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define KP_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define KP_EXPORT __attribute__((visibility("default")))
#define KP_PRINTF(f, a) __attribute__((format(printf, f, a)))

/* ---- errors (error.c) ---- */

/* Record <code> and a message for this thread; returns <neg_errno> (< 0). */
int kp_fail(int code, int neg_errno, const char *fmt, ...) KP_PRINTF(3, 4);
/* Record a warning for this thread (the call still succeeds). */
void kp_warn(int code, const char *fmt, ...) KP_PRINTF(2, 3);
/* Forget error and warning: every public entry point starts with it. */
void kp_clear(void);
/* Forget the error only (a failure that was handled); warnings stay. */
void kp_clear_error(void);
/* Is an error recorded for this thread since kp_clear()? */
bool kp_failed(void);
/* Public boundary: make sure an error is recorded for <neg_errno> and return -1. */
int kp_public_fail(int neg_errno);
/* The failure recorded by a shared helper means, for the public call at hand, libkperf's
 * <code> (a pid missing for a record call, a cpu missing for a frequency): replace the code,
 * keep the message. Returns <neg_errno>. */
int kp_fail_recode(int code, int neg_errno);
/* The code libkperf gives a perf_event_open failure with errno <err> (positive or negative):
 * ENOENT (no PMU for the event: the VM without hardware counters) is
 * LIBPERF_ERR_OPEN_INVALID_FILE, EOPNOTSUPP LIBPERF_ERR_INVALID_EVENT, EINVAL
 * LIBPERF_ERR_DEVICE_INVAL, EACCES and EPERM LIBPERF_ERR_NO_PERMISSION, EBUSY
 * LIBPERF_ERR_DEVICE_BUSY, ESRCH LIBPERF_ERR_NO_PROC, EMFILE/ENFILE LIBPERF_ERR_TOO_MANY_FD,
 * anything else UNKNOWN_ERROR. */
int kp_perf_errno_code(int err);

/* ---- task handles (handle.c) ---- */

enum kp_handle_kind {
	KP_HANDLE_PMU = 1, /* PmuOpen */
	KP_HANDLE_TRACE = 2, /* PmuTraceOpen */
	KP_HANDLE_DEVICE = 3, /* PmuDeviceOpen (stored as PMU) */
	KP_HANDLE_UTRACE = 4, /* UTraceOpen */
	KP_HANDLE_ACTIVITY = 5, /* KperfActivityOpen */
	KP_HANDLE_TIMELINE = 6 /* KperfTimelineOpen */
};

struct kp_handle_ops {
	void (*destroy)(void *obj);
};

/* Store <obj>; returns the handle (> 0) or a negative errno. */
int kp_handle_add(enum kp_handle_kind kind, void *obj, const struct kp_handle_ops *ops);
/* Borrow the object of <pd>: NULL (and LIBPERF_ERR_INVALID_PD recorded) when <pd> is not an
 * open handle of <kind>. Every successful get is paired with kp_handle_put(obj). */
void *kp_handle_get(int pd, enum kp_handle_kind kind);
void kp_handle_put(void *obj);
/* Remove <pd>; its object is destroyed once the last borrower puts it back. */
int kp_handle_close(int pd, enum kp_handle_kind kind);

/* ---- arrays handed to callers (registry.c) ---- */

/* Remember that <ptr> was returned to a caller, with the function that frees it. */
int kp_registry_add(void *ptr, void (*release)(void *ptr));
/* Free <ptr> if it was returned and not yet freed; false otherwise (double free). */
bool kp_registry_release(void *ptr);
/* Is <ptr> a live returned array? */
bool kp_registry_has(const void *ptr);
/* Is <ptr> a live returned array that <release> frees (an array of that kind)? */
bool kp_registry_is(const void *ptr, void (*release)(void *ptr));

/* ---- the running system (sys.c) ---- */

/* Number of possible CPUs (ids are 0 .. n-1). */
int kp_cpu_possible(void);
/* Is <cpu> online? */
bool kp_cpu_online(int cpu);
/* Check a CPU list from a caller: every id possible and online, or -1 (any CPU, as in
 * libkperf); LIBPERF_ERR_INVALID_CPULIST otherwise. Returns 1 when the list holds -1, which
 * lifts the CPU restriction, else 0. */
int kp_check_cpus(const int *cpus, unsigned n);
/* Parse "0-3,5" into a sorted, de-duplicated list; returns the count or -EINVAL. */
int kp_parse_cpu_list(const char *s, int **cpus);
/* The thread group of <pid> (a pid or a tid) of a caller's pid list; LIBPERF_ERR_INVALID_PIDLIST
 * when it does not exist (libkperf checks pidList so). */
int kp_pid_tgid(pid_t pid);
/* Is <pid> running (exists and is not a zombie)? */
bool kp_pid_alive(pid_t pid);
/* /proc/<pid>/comm into <buf> (16 bytes is enough); "" when gone. */
void kp_pid_comm(pid_t pid, char *buf, size_t size);
/* Can this process load and attach BPF tracing programs? (CAP_BPF+CAP_PERFMON or
 * CAP_SYS_ADMIN); LIBPERF_ERR_NO_PERMISSION with the missing capability named. */
int kp_check_bpf_privileges(void);
/* Can this process open perf events on others / system-wide? (CAP_PERFMON, CAP_SYS_ADMIN or
 * perf_event_paranoid allows it). */
int kp_check_perf_privileges(bool system_wide);
/* The kernel's BTF: $KPERF_BPF_BTF if set, else /sys/kernel/btf/vmlinux; NULL if absent. */
const char *kp_btf_path(void);
/* The tracefs mount point, mounting it at /sys/kernel/tracing when needed; NULL if none. */
const char *kp_tracefs(void);
/* 0 when tracefs is there (mounted now if needed), which attaching a BPF program to a
 * tracepoint by name needs (libbpf reads its id there); else fails (LIBPERF_ERR_PATH_INACCESSIBLE)
 * saying that <what> needs tracepoint <tp>. A container's mount namespace often has none. */
int kp_tracefs_need(const char *what, const char *tp);
/* Fails with <code> saying that <what> needs tracefs, why kp_tracefs() could not mount it
 * (errno, as it left it) and what to do; call right after kp_tracefs() returned NULL. */
int kp_tracefs_fail(int code, const char *what);
/* The sysfs root: $KPERF_BPF_SYSFS (fixture trees in tests) or /sys. */
const char *kp_sysfs(void);
/* Open a cgroup v2 directory: an absolute path, or a path relative to the cgroup2 mount
 * (found in /proc/self/mounts: /sys/fs/cgroup, or /sys/fs/cgroup/unified on hybrid
 * systems). Returns the fd; LIBPERF_ERR_INVALID_CGROUP_LIST for an empty path, no cgroup v2
 * hierarchy or a directory that is not a cgroup, LIBPERF_ERR_OPEN_INVALID_FILE when the path
 * cannot be opened (the codes of libkperf's cgroupNameList checks). */
int kp_cgroup_open(const char *path);
/* Monotonic time in ns. */
uint64_t kp_now_ns(void);

/* ---- waiting for processes to exit (pidwatch.c) ---- */

/* Watch <pids> (processes, not threads) until they exit: through pidfds, which a reused pid
 * does not fool; without pidfd_open (Linux < 5.3), through the pid and its start time
 * (kp_pidwatch_fallback() then says so). -ENOMEM only. */
struct kp_pidwatch;
int kp_pidwatch_open(const int *pids, int n, struct kp_pidwatch **out);
/* Is any of them still running? (never blocks) */
bool kp_pidwatch_any_alive(struct kp_pidwatch *w);
bool kp_pidwatch_fallback(const struct kp_pidwatch *w);
void kp_pidwatch_free(struct kp_pidwatch *w);
/* tests: behave as on a kernel without pidfd_open */
void kp_pidwatch_test_no_pidfd(bool on);

/* ---- paths of other processes' file systems (rootpath.c) ---- */

/* open(2) of <path>, O_CLOEXEC added; a path under /proc/PID/root/ is resolved inside that
 * root: its symlinks (absolute ones included) and ".." cannot lead out of it (openat2
 * RESOLVE_IN_ROOT, or a component walk on kernels before 5.6). An fd or -errno. */
int kp_open_path(const char *path, int flags);
/* stat(2) of <path>, confined the same way. 0 or -errno. */
struct stat;
int kp_stat_path(const char *path, struct stat *st);
/* tests: resolve as on a kernel without openat2 */
void kp_rootpath_test_no_openat2(bool on);

/* ---- small helpers (util.c) ---- */

/* Read a whole small file into a NUL-terminated malloc'd buffer; -errno on failure, -EFBIG
 * beyond KP_READ_FILE_MAX bytes (no file we read is near it; a file someone made huge must
 * not take our memory). Opened by kp_open_path: /proc/PID/root/.. stays in that root. */
#define KP_READ_FILE_MAX (64u << 20)
int kp_read_file(const char *path, char **buf, size_t *len);
int kp_read_file_max(const char *path, char **buf, size_t *len, size_t max);
/* Read one integer from a file (sysfs style). */
int kp_read_long(const char *path, long *val);
/* Damerau-less Levenshtein distance, for "did you mean" suggestions. */
int kp_edit_distance(const char *a, const char *b);
/* strdup that records COMMON_ERR_NOMEM on failure */
char *kp_strdup(const char *s);
/* Copy a caller's options struct (kperf.h: leading size_t sz) of <src_sz> bytes into <dst>
 * of <dst_sz> bytes: fields the caller's version does not have read as 0, and bytes of a
 * newer caller beyond <dst_sz> must be 0 (KPERF_ERR_INVALID_ATTR names <what> otherwise).
 * src NULL: all zero. */
int kp_opts_copy(void *dst, size_t dst_sz, const void *src, size_t src_sz, const char *what);
/* Grow *arr (of *cap elements of <elem> bytes) so that it holds at least <need>. */
int kp_grow(void **arr, size_t *cap, size_t need, size_t elem);

/* ---- a hash map (map.c) ---- */

/* Open addressing; keys are pointers compared by address, or strings compared by content.
 * The map stores the key pointer it was given: the caller keeps it alive (and may swap it
 * for an equal copy through the slot). */
struct kp_map_slot {
	const void *key;
	void *val;
};

struct kp_map {
	struct kp_map_slot *slots;
	size_t cap, len;
	bool strings;
};

void kp_map_init(struct kp_map *m, bool string_keys);
/* The slot of <key>, inserted with val NULL when absent (*created tells); NULL on OOM. */
struct kp_map_slot *kp_map_slot(struct kp_map *m, const void *key, bool *created);
/* The value of <key>, NULL when absent. */
void *kp_map_get(const struct kp_map *m, const void *key);
void kp_map_free(struct kp_map *m);
/* The map rebuilt without the slots whose value is NULL (kp_map has no removal: a map of
 * pids that come and go keeps a slot for each otherwise); on OOM it stays as it was. */
void kp_map_compact(struct kp_map *m);

/* ---- libbpf glue (bpf_log.c) ---- */

/* Route libbpf's messages into a per-thread buffer (printed to stderr only when
 * KPERF_BPF_DEBUG is set), so that a failed load can quote the verifier. Idempotent. */
void kp_bpf_log_init(void);
/* The last lines libbpf printed on this thread since kp_bpf_log_clear(), "" if none. */
const char *kp_bpf_log_tail(void);
void kp_bpf_log_clear(void);
/* The program the verifier rejected since kp_bpf_log_clear() ("" if none), and the last
 * lines of its verifier log. */
const char *kp_bpf_rejected_prog(void);
const char *kp_bpf_rejected_log(void);
/* Record why loading the BPF programs of <what> ("syscall tracing", ...) failed with <err>,
 * for the user: a verifier rejection (kernel, program, last lines of the log, where to
 * report it), a permission problem, or whatever else libbpf said. Returns <err>. */
int kp_bpf_load_error(const char *what, int err);

/* ---- BPF features of the running kernel (features.c) ---- */

enum kp_feature {
	KP_FEAT_BTF, /* kernel BTF: CO-RE relocations, tp_btf programs */
	KP_FEAT_RINGBUF, /* BPF_MAP_TYPE_RINGBUF (KPERF_BPF_NO_RINGBUF=1: off) */
	KP_FEAT_BATCH_OPS, /* bpf_map_lookup_and_delete_batch (KPERF_BPF_NO_BATCH=1: off) */
	KP_FEAT_TASK_STORAGE, /* task storage from tracing programs, bpf_get_current_task_btf */
	KP_FEAT_ATTACH_COOKIE, /* bpf_get_attach_cookie (KPERF_BPF_NO_COOKIE=1: off) */
	KP_FEAT_FUNC_IP, /* bpf_get_func_ip in kprobes */
	KP_FEAT_BPF_LOOP, /* bpf_loop */
	KP_FEAT_TASK_PT_REGS, /* bpf_task_pt_regs */
	KP_FEAT_MAX
};

/* Does the running kernel have <f>? Probed once per process, on first use. */
bool kp_have(enum kp_feature f);
/* What <f> is, and the first kernel that has it (for messages and `kperf-bpf features`). */
const char *kp_feature_name(enum kp_feature f);
const char *kp_feature_since(enum kp_feature f);
/* uname -r */
const char *kp_kernel_release(void);
/* The kernel's lockdown mode ("none", "integrity", "confidentiality") into <buf>; -ENOENT
 * when securityfs does not say. */
int kp_lockdown_mode(char *buf, size_t size);
/* Everything that can be checked before loading BPF: privileges (kp_check_bpf_privileges)
 * and a lockdown that forbids what kperf-bpf's programs do. LIBPERF_ERR_NO_PERMISSION. */
int kp_check_bpf_load(void);

#endif
