/*
 * mstx.h (internal) - the markers of include/kperf/mstx.h as collectors see them: the USDT
 * provider and probe names, their arguments, and where this copy of the probes lives.
 *
 * The probes (mstx.c), all of provider "kperf", each with its own semaphore:
 *   mark(id, domain, message)          mstxMarkA, mstxDomainMarkA
 *   range_start(id, domain, message)   mstxRangeStartA, mstxDomainRangeStartA
 *   range_end(id, domain)              mstxRangeEnd, mstxDomainRangeEnd
 * id is a u64 unique in the process (marks take one too), domain and message are pointers
 * to NUL-terminated strings in the process (domain NULL outside a domain: "default").
 */
#ifndef KPERF_MSTX_INTERNAL_H
#define KPERF_MSTX_INTERNAL_H

#include <stddef.h>

#define KP_MSTX_PROVIDER "kperf"
#define KP_MSTX_PROBE_MARK "mark"
#define KP_MSTX_PROBE_RANGE_START "range_start"
#define KP_MSTX_PROBE_RANGE_END "range_end"
#define KP_MSTX_DEFAULT_DOMAIN "default"

/* The file that holds the probes of this process's copy of the library (libkperf-bpf.so, or
 * the executable it is linked into) into <buf>; -ENOENT when it cannot be told. */
int kp_mstx_self_path(char *buf, size_t size);

#endif
