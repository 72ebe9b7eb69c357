/*
 * pidns.h - the one notion of "the pid the user sees" (pidns.c): kperf-bpf's caller may run
 * in a PID namespace (a container without hostPID, a sidecar); every pid the library takes
 * (pid lists, launched commands) and gives back (PmuData, PmuTraceData, summaries, UTrace
 * records) is a pid of that namespace, and /proc must be that namespace's (symbols and maps
 * are read there). BPF programs get the namespace through bpf/pidns_cfg.h and speak its pids
 * (bpf/pidns.bpf.h); a task the caller cannot see is KP_PID_OUTSIDE there, -1 here.
 */
#ifndef KPERF_CORE_PIDNS_H
#define KPERF_CORE_PIDNS_H

#include <stdbool.h>
#include <stdint.h>
#include <linux/types.h>

#include "pidns_cfg.h" /* bpf/: the configuration BPF objects take */

/* the comm reported for what the caller's namespace does not contain (pid and tid -1) */
#define KP_PIDNS_OUTSIDE_COMM "[outside namespace]"

/* Is the caller in the initial PID namespace (pids are the kernel's own)? Also true when the
 * namespace cannot be told (no /proc, a kernel without PID namespaces). */
bool kp_pidns_is_host(void);
/* Is /proc the caller's namespace's? 0, or LIBPERF_ERR_INVALID_PID (recorded) saying that
 * /proc belongs to another PID namespace and what to do: its pids would name other
 * processes than the ones perf_event_open and the BPF programs see. */
int kp_pidns_check_proc(void);
/* The configuration of a BPF object's `kp_pidns` (bpf/pidns.bpf.h). <offsets>: the object is
 * built without CO-RE, so the offsets of the kernel structs come from the kernel's BTF here
 * (have_offsets stays 0 without BTF: such an object then sees only the caller's own
 * namespace). Fails as kp_pidns_check_proc. */
int kp_pidns_bpf_config(struct kp_pidns_cfg *cfg, bool offsets);
/* Can the objects without CO-RE walk to tasks below the caller's namespace (the kernel has
 * BTF to find the offsets in)? Always true in the initial namespace. */
bool kp_pidns_have_offsets(void);
/* "pid:[4026532123]": the caller's namespace, for messages ("" when unknown) */
const char *kp_pidns_name(void);
/* <comm>, or KP_PIDNS_OUTSIDE_COMM for a process (tgid from BPF) the caller cannot see */
const char *kp_pidns_comm(uint32_t tgid, const char *comm);

#endif
