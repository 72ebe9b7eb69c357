/*
 * mstx.h - user markers and ranges, with the names and signatures of msPTI's mstx API, so
 * that code written for mstx compiles unchanged against libkperf-bpf on a CPU.
 *
 * Every call is a USDT probe (provider "kperf") guarded by a semaphore: while no collector
 * is attached, a marker costs a load and a branch and writes nothing anywhere; a range
 * start then returns 0 (as mstx does when no tool is loaded), and a range end of id 0 does
 * nothing. While kperf-bpf collects (kperf.mspti.MstxMonitor, `kperf-bpf timeline`,
 * KperfActivityOpen), each call is recorded with its time (CLOCK_MONOTONIC), process,
 * thread and cpu. A range may end on another thread than the one that started it; range
 * ids are unique in their process. `stream` is accepted and ignored on a CPU.
 *
 * Messages longer than KPERF_MSTX_MESSAGE_MAX bytes and domain names longer than
 * KPERF_MSTX_DOMAIN_MAX bytes are recorded cut to that length. Marks and ranges outside a
 * domain belong to the domain "default". Creating a domain twice gives the same handle; a
 * destroyed domain records nothing until it is created again.
 */
#ifndef KPERF_MSTX_H
#define KPERF_MSTX_H

#include <stdint.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(default)

#define KPERF_MSTX_MESSAGE_MAX 255 /* bytes of a message that are recorded (msPTI's limit) */
#define KPERF_MSTX_DOMAIN_MAX 63 /* bytes of a domain name that are recorded */

typedef uint64_t mstxRangeId;
typedef void *aclrtStream;

struct mstxDomainRegistration_st;
typedef struct mstxDomainRegistration_st mstxDomainRegistration_t;
typedef mstxDomainRegistration_t *mstxDomainHandle_t;

/* An instantaneous marker in the domain "default". */
void mstxMarkA(const char *message, aclrtStream stream);
/* The start of a range in the domain "default"; its id for mstxRangeEnd, 0 when nothing
 * collects. */
mstxRangeId mstxRangeStartA(const char *message, aclrtStream stream);
void mstxRangeEnd(mstxRangeId id);

/* A domain: a name that marks and ranges are filed under (NULL for a NULL or empty name). */
mstxDomainHandle_t mstxDomainCreateA(const char *name);
void mstxDomainDestroy(mstxDomainHandle_t domain);
void mstxDomainMarkA(mstxDomainHandle_t domain, const char *message, aclrtStream stream);
/* 0 when nothing collects, or for a handle that is not a live domain */
mstxRangeId mstxDomainRangeStartA(mstxDomainHandle_t domain, const char *message,
				  aclrtStream stream);
void mstxDomainRangeEnd(mstxDomainHandle_t domain, mstxRangeId id);

/* kperf-bpf's addition: say that the program uses [ptr, ptr + size) now. `kperf-bpf memscope`
 * records it as an ACCESS of the block ptr falls in (the use the inefficiency analyses look
 * at); untraced it is an empty function call. */
void kperf_mem_access(const void *ptr, size_t size);

#pragma GCC visibility pop
#ifdef __cplusplus
}
#endif
#endif
