/*
 * utrace.h - user function entry/return tracing (UTraceOpen and the rest of libkperf's UTrace
 * API): where the functions asked for start and return in their ELF files (elf_scan.c), which
 * files the traced processes map and which probe an address hit in them (maps.c, plan.c),
 * the BPF program that records the hits (utrace_bpf.c, the only owner of utrace.skel.h), and
 * the public calls (api.c).
 *
 * A probe goes at each function's entry and at each of its return instructions, as libkperf
 * places them: a return record carries the address of the return instruction that ran, and a
 * function's frame is never touched (uretprobes rewrite return addresses, which Go's stack
 * copying does not survive).
 */
#ifndef KPERF_UTRACE_H
#define KPERF_UTRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/types.h>

#include "kperf/pmu.h"
#include "utrace_event.h"

/* ---- elf_scan.c: functions of one ELF file ---- */

struct kp_ut_func {
	bool found;
	uint64_t vaddr; /* ELF virtual address of the entry */
	uint64_t entry; /* file offset of the entry: where its uprobe goes */
	uint64_t *rets; /* file offsets of its return instructions (malloc'd) */
	unsigned nrets;
};

/*
 * Look <names> up in the ELF file <path>, by libkperf's rules: defined STT_FUNC symbols of
 * .symtab and .dynsym, a name matching the raw (mangled) name, else the demangled name, else
 * the demangled name without its parameter list, else the name without a compiler clone suffix
 * (".constprop.0", ".isra.0"; never ".cold" or ".part", which are pieces of a function); the
 * best match wins, the first one among equals. out[i] tells about names[i]. The return
 * instructions are found by disassembling [entry, entry + st_size) (capstone), stopping at the
 * first byte that does not decode, so that a probe never lands inside an instruction.
 * Returns 0, or a negative errno with a reason in <why> when the file cannot be used at all
 * (missing, not ELF, not 64-bit, another machine's, no symbols).
 */
int kp_ut_elf_scan(const char *path, const char *const *names, unsigned n, struct kp_ut_func *out,
		   char *why, size_t whylen);
void kp_ut_funcs_free(struct kp_ut_func *f, unsigned n);

/* ---- maps.c: a process's mappings ---- */

struct kp_ut_map {
	uint64_t start, end, pgoff;
	dev_t dev;
	uint64_t ino;
	bool exec;
	char *path; /* as the process names it; NULL for anonymous memory */
};

/* /proc/<pid>/maps; -errno (-ENOENT when the process is gone) */
int kp_ut_maps_read(pid_t pid, struct kp_ut_map **maps, size_t *n);
void kp_ut_maps_free(struct kp_ut_map *maps, size_t n);

/* ---- plan.c: what to probe ---- */

/* a function a probe reports: the name as the caller wrote it, at its entry or a return */
struct kp_ut_role {
	const char *func;
	bool is_ret;
};

/* one file to probe */
struct kp_ut_module {
	char *path; /* as the traced processes name it */
	char *open_path; /* the same file, opened from here (/proc/PID/root/... for a library
			  * found by name in a process, which may live in another mount namespace) */
	dev_t dev;
	ino_t ino;
	bool all_targets; /* given as a path: probed in every traced process */
	int *tgids; /* else the processes it was found in by name */
	unsigned ntgids;
};

/* one probe address of a module: one uprobe per traced process */
struct kp_ut_site {
	unsigned module;
	uint64_t off; /* file offset */
	struct kp_ut_role *roles; /* entries first */
	unsigned nroles;
};

struct kp_ut_plan {
	int *tgids; /* the traced processes, sorted, distinct */
	unsigned ntgids;
	struct kp_ut_module *modules;
	unsigned nmodules;
	struct kp_ut_site *sites; /* sorted by (module, off) */
	size_t nsites;
	char **names; /* the function names the roles point to */
	size_t nnames;
};

/*
 * Resolve the caller's native symbol sources against the files the targets <tgids> run.
 * moduleName is a path (opened as given, relative to the working directory as libkperf does);
 * a bare name that is no file here is looked for among the files the targets map (basename
 * equal, or the name followed by '.': "libc.so" finds libc.so.6). What cannot be resolved is
 * reported as a LIBPERF_WARN_UTRACE_ELF_SCAN_FAILED warning; when nothing can, the call fails
 * with LIBPERF_ERR_UTRACE_ELF_SCAN_FAILED (and the warning).
 */
int kp_ut_plan_build(const struct SymbolSource *const *src, unsigned n, const int *tgids,
		     unsigned ntgids, struct kp_ut_plan **out);
void kp_ut_plan_free(struct kp_ut_plan *p);

/* (tgid, address) -> the site probed there, from the process's mappings (read again when an
 * address is unknown: a library loaded after the probes were placed) */
struct kp_ut_resolver;

int kp_ut_resolver_new(const struct kp_ut_plan *p, struct kp_ut_resolver **out);
/* The site at <ip> in <tgid>, and the module's path as that process maps it (valid until
 * kp_ut_resolver_free); NULL when no probe of the plan is there. <refresh>: read the
 * mappings again when the address is unknown (at most every 20 ms per process). */
const struct kp_ut_site *kp_ut_resolve(struct kp_ut_resolver *r, uint32_t tgid, uint64_t ip,
				       bool refresh, const char **path);
void kp_ut_resolver_free(struct kp_ut_resolver *r);

/* ---- utrace_bpf.c: the BPF program ---- */

struct kp_ut_bpf;

typedef void (*kp_ut_event_fn)(void *ctx, const struct kp_ut_event *e);

struct kp_ut_bpf_opts {
	const int *tgids; /* processes to record (the BPF filter) */
	unsigned ntgids;
	bool fetch_g;
	size_t ringbuf_bytes; /* a power of two, multiple of the page size */
	kp_ut_event_fn on_event; /* called from kp_ut_bpf_consume() */
	void *ctx;
};

/* Load the program (not attached, not enabled). */
int kp_ut_bpf_open(const struct kp_ut_bpf_opts *o, struct kp_ut_bpf **out);
/* Place one uprobe at file offset <off> of <path> for process <tgid>, through the kernel's
 * uprobe PMU (never tracefs), with <cookie> (the site + 1) as attach cookie when the kernel
 * has cookies. */
int kp_ut_bpf_attach(struct kp_ut_bpf *b, const char *path, uint64_t off, int tgid,
		     uint32_t cookie);
/* Do the records carry the site (kp_ut_event.site)? */
bool kp_ut_bpf_uses_cookies(const struct kp_ut_bpf *b);
unsigned kp_ut_bpf_nprobes(const struct kp_ut_bpf *b);
void kp_ut_bpf_set_enabled(struct kp_ut_bpf *b, bool on);
/* The ring buffer's epoll fd, to wait for data. */
int kp_ut_bpf_epoll_fd(struct kp_ut_bpf *b);
/* Deliver every waiting record to on_event; callers serialise. */
int kp_ut_bpf_consume(struct kp_ut_bpf *b);
/* Hits lost because the ring buffer was full, summed over CPUs. */
uint64_t kp_ut_bpf_dropped(struct kp_ut_bpf *b);
size_t kp_ut_bpf_ringbuf_bytes(const struct kp_ut_bpf *b);
/* Detach every probe and unload. */
void kp_ut_bpf_close(struct kp_ut_bpf *b);

#endif
