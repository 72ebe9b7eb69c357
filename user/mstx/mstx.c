/*
 * mstx.c - the mstx markers (include/kperf/mstx.h) as USDT probes with semaphores.
 *
 * Each probe has a semaphore in .probes that the kernel increments in a process while a
 * uprobe with a reference counter sits on the probe (libbpf's USDT attach sets it). Every
 * public call first loads its semaphore: 0, the common case, returns at once, so a marker
 * nobody collects costs a load and a branch and touches no shared state. Only a collected
 * call takes an id (one atomic add) and reaches the probe site, which is in a separate cold
 * function so that the fast path stays a few instructions long.
 *
 * The probes pass NULL as the domain of marks and ranges outside a domain ("default").
 *
 * Domains are a list that only grows (a handle stays valid memory forever, so a marker racing
 * mstxDomainDestroy, or a stale handle, never reads freed memory); destroying one sets a
 * flag, creating the same name again clears it.
 */
#define _SDT_HAS_SEMAPHORES 1

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/sdt.h>

/* The probe site stays sys/sdt.h's 1-byte nop. A 5-byte nop would let kernels from 6.17 on
 * turn a uprobe there into a call into a trampoline instead of a breakpoint trap, but on 6.18
 * a process that forks while a site is so optimized gives its child the call without the
 * trampoline: the child dies at its first marker. */
#include <unistd.h>

#include "kperf/mstx.h"
#include "mstx.h"

/* the semaphores sys/sdt.h names <provider>_<probe>_semaphore; the kernel writes them */
__extension__ unsigned short kperf_mark_semaphore __attribute__((unused))
__attribute__((section(".probes")));
__extension__ unsigned short kperf_range_start_semaphore __attribute__((unused))
__attribute__((section(".probes")));
__extension__ unsigned short kperf_range_end_semaphore __attribute__((unused))
__attribute__((section(".probes")));

#define KP_COLLECTED(sema) __builtin_expect(*(volatile unsigned short *)&(sema) != 0, 0)

struct mstxDomainRegistration_st {
	struct mstxDomainRegistration_st *_Atomic next;
	atomic_bool destroyed;
	char name[];
};

static struct mstxDomainRegistration_st *_Atomic domains;
static pthread_mutex_t domains_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_uint_fast64_t last_id;
/* the collector names the default domain itself: NULL is what the probes pass for it */
static const char *const default_domain = NULL;

static uint64_t take_id(void)
{
	return (uint64_t)atomic_fetch_add_explicit(&last_id, 1, memory_order_relaxed) + 1;
}

/* Is <d> a domain of this list, alive? The list is never shortened, so reading it needs no
 * lock. */
static bool domain_live(mstxDomainHandle_t d)
{
	struct mstxDomainRegistration_st *p;

	for (p = atomic_load_explicit(&domains, memory_order_acquire); p;
	     p = atomic_load_explicit(&p->next, memory_order_acquire))
		if (p == d)
			return !atomic_load_explicit(&p->destroyed, memory_order_relaxed);
	return false;
}

/* ---- the probe sites: reached only while a collector is attached ---- */

/* The collector copies the message out of this process without being able to take a page
 * fault: a string literal on a page nothing has read yet would come out empty. Reading it
 * here brings its pages in; the volatile reads are there so the compiler keeps them. */
static void touch(const char *s)
{
	const volatile char *p = s;
	size_t i;

	if (!s)
		return;
	for (i = 0; i <= KPERF_MSTX_MESSAGE_MAX && p[i]; i++)
		;
}

static __attribute__((noinline, cold)) void fire_mark(const char *domain, const char *message)
{
	uint64_t id = take_id();

	touch(message);
	STAP_PROBE3(kperf, mark, id, domain, message);
}

static __attribute__((noinline, cold)) mstxRangeId fire_range_start(const char *domain,
								    const char *message)
{
	uint64_t id = take_id();

	touch(message);
	STAP_PROBE3(kperf, range_start, id, domain, message);
	return id;
}

static __attribute__((noinline, cold)) void fire_range_end(const char *domain, mstxRangeId id)
{
	STAP_PROBE2(kperf, range_end, id, domain);
}

/* ---- the API ---- */

void mstxMarkA(const char *message, aclrtStream stream)
{
	(void)stream;
	if (KP_COLLECTED(kperf_mark_semaphore))
		fire_mark(default_domain, message);
}

mstxRangeId mstxRangeStartA(const char *message, aclrtStream stream)
{
	(void)stream;
	if (KP_COLLECTED(kperf_range_start_semaphore))
		return fire_range_start(default_domain, message);
	return 0;
}

void mstxRangeEnd(mstxRangeId id)
{
	if (KP_COLLECTED(kperf_range_end_semaphore) && id)
		fire_range_end(default_domain, id);
}

void mstxDomainMarkA(mstxDomainHandle_t domain, const char *message, aclrtStream stream)
{
	(void)stream;
	if (KP_COLLECTED(kperf_mark_semaphore) && domain_live(domain))
		fire_mark(domain->name, message);
}

mstxRangeId mstxDomainRangeStartA(mstxDomainHandle_t domain, const char *message,
				  aclrtStream stream)
{
	(void)stream;
	if (KP_COLLECTED(kperf_range_start_semaphore) && domain_live(domain))
		return fire_range_start(domain->name, message);
	return 0;
}

void mstxDomainRangeEnd(mstxDomainHandle_t domain, mstxRangeId id)
{
	/* a range started before its domain was destroyed still ends */
	if (KP_COLLECTED(kperf_range_end_semaphore) && id && domain_live(domain))
		fire_range_end(domain->name, id);
}

mstxDomainHandle_t mstxDomainCreateA(const char *name)
{
	struct mstxDomainRegistration_st *p;
	size_t len;

	if (!name || !*name)
		return NULL;
	len = strlen(name);
	pthread_mutex_lock(&domains_lock);
	for (p = atomic_load(&domains); p; p = atomic_load(&p->next))
		if (!strcmp(p->name, name))
			break;
	if (!p) {
		p = calloc(1, sizeof(*p) + len + 1);
		if (p) {
			memcpy(p->name, name, len + 1);
			atomic_store(&p->next, atomic_load(&domains));
			atomic_store_explicit(&domains, p, memory_order_release);
		}
	}
	if (p)
		atomic_store(&p->destroyed, false);
	pthread_mutex_unlock(&domains_lock);
	return p;
}

void mstxDomainDestroy(mstxDomainHandle_t domain)
{
	struct mstxDomainRegistration_st *p;

	for (p = atomic_load(&domains); p; p = atomic_load(&p->next))
		if (p == domain)
			atomic_store(&p->destroyed, true);
}

int kp_mstx_self_path(char *buf, size_t size)
{
	unsigned long phdr = getauxval(AT_PHDR), base;
	char real[PATH_MAX];
	Dl_info info;
	ssize_t n;

	if (!dladdr((void *)mstxMarkA, &info) || !info.dli_fbase)
		return -ENOENT;
	base = (unsigned long)info.dli_fbase;
	/* linked into the executable (its program headers sit right after its ELF header) */
	if (phdr >= base && phdr - base < 4096) {
		n = readlink("/proc/self/exe", real, sizeof(real) - 1);
		if (n <= 0)
			return -ENOENT;
		real[n] = '\0';
	} else if (!info.dli_fname || !realpath(info.dli_fname, real)) {
		return -ENOENT;
	}
	if (snprintf(buf, size, "%s", real) >= (int)size)
		return -ENAMETOOLONG;
	return 0;
}

/* the probe site of memscope's explicit access marker: a real call whose arguments are in the
 * argument registers at its entry, where the uprobe goes (never inlined, never folded) */
__attribute__((noinline)) void kperf_mem_access(const void *ptr, size_t size)
{
	__asm__ volatile("" : : "r"(ptr), "r"(size) : "memory");
}
