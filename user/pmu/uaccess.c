/*
 * uaccess.c - COUNTING with enableUserAccess: the calling thread's counters read without a
 * system call.
 *
 * Each event is opened on the calling thread alone (pid 0, any CPU, no inherit) and its
 * first page mapped: while the event is on a hardware counter, the page says which one
 * (index), how wide it is and what to add (offset), under a sequence lock the kernel bumps
 * whenever it reschedules the event. PmuRead then reads the counter with one instruction
 * (arch.h). The conditions are libkperf's: pidList {0}, cpuList {-1}, COUNTING, no
 * evtAttr, and a system that lets user space read its counters.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "core/core.h"
#include "kperf/pcerrc.h"
#include "pmu.h"
#include "arch.h"

struct ua_counter {
	int fd;
	struct perf_event_mmap_page *page;
	struct kp_ua_value last;
};

struct kp_uaccess {
	struct ua_counter *c;
	int n;
	bool on;
	pid_t pid, tid; /* the thread the counters belong to */
	char comm[16];
	size_t page_size;
};

#define READ_ONCE(x) (*(const volatile __typeof__(x) *)&(x))
#define BARRIER() __asm__ volatile("" ::: "memory")

int kp_ua_read_page(const volatile struct perf_event_mmap_page *pc,
		    uint64_t (*pmc)(unsigned idx, void *ctx), uint64_t (*ts)(void *ctx), void *ctx,
		    struct kp_ua_value *v)
{
	uint64_t count, enabled, running, cyc = 0, offset = 0, cycles = 0, mask = ~0ULL;
	uint32_t seq, idx, mult = 0, shift = 0;
	bool time_short = false;

	if (!pc->cap_user_rdpmc)
		return -ENODEV;
	do {
		seq = pc->lock;
		BARRIER();
		enabled = pc->time_enabled;
		running = pc->time_running;
		/* the times stop at the last time the kernel updated the page; when the event
		 * ran only part of the time they are brought up to now with the time base */
		if (pc->cap_user_time && enabled != running) {
			cyc = ts(ctx);
			mult = pc->time_mult;
			shift = pc->time_shift;
			offset = pc->time_offset;
			time_short = pc->cap_user_time_short;
			if (time_short) {
				cycles = pc->time_cycles;
				mask = pc->time_mask;
			}
		}
		idx = pc->index;
		count = (uint64_t)pc->offset;
		if (idx) {
			unsigned width = pc->pmc_width;
			int64_t raw = (int64_t)pmc(idx - 1, ctx);

			/* the counter is <width> bits wide: sign-extend it, for offset is
			 * negative by what it held when the kernel put the event on it */
			if (width && width < 64) {
				raw = (int64_t)((uint64_t)raw << (64 - width));
				raw >>= 64 - width;
			}
			count += (uint64_t)raw;
		}
		BARRIER();
	} while (pc->lock != seq);
	if (!idx)
		return -EAGAIN; /* not on a counter: libkperf fails the read */
	if (enabled != running && mult) {
		uint64_t quot, rem, delta;

		if (time_short)
			cyc = cycles + ((cyc - cycles) & mask);
		quot = cyc >> shift;
		rem = cyc & (((uint64_t)1 << shift) - 1);
		delta = offset + quot * mult + ((rem * mult) >> shift);
		enabled += delta;
		running += delta; /* it is on a counter (idx != 0): it runs now */
	}
	v->count = count;
	v->enabled = enabled;
	v->running = running;
	return 0;
}

int kp_ua_check_x86(const char *sysfs)
{
	static const char *const pmus[] = { "cpu", "cpu_core" };
	char path[512];
	size_t i;
	long v;

	for (i = 0; i < KP_ARRAY_SIZE(pmus); i++) {
		snprintf(path, sizeof(path), "%s/bus/event_source/devices/%s/rdpmc", sysfs,
			 pmus[i]);
		if (kp_read_long(path, &v))
			continue;
		if (v == 0)
			return kp_fail(
				LIBPERF_ERR_CHECK_USER_ACCESS, -EPERM,
				"reading counters from user space is disabled: run 'echo 1 > "
				"%s'",
				path);
		return 0;
	}
	return kp_fail(LIBPERF_ERR_CHECK_USER_ACCESS, -EOPNOTSUPP,
		       "this machine has no core PMU whose counters user space may read (no "
		       "%s/bus/event_source/devices/cpu/rdpmc): enableUserAccess needs hardware "
		       "counters",
		       sysfs);
}

int kp_ua_check_arm64(const char *sysctl, const char *release)
{
	unsigned major = 0, minor = 0;
	long v = 0;

	if (sscanf(release, "%u.%u", &major, &minor) != 2 || major < 6 || (major == 6 && minor < 6))
		return kp_fail(
			LIBPERF_ERR_CHECK_USER_ACCESS, -EOPNOTSUPP,
			"user access to PMUv3 counters needs Linux 6.6 or later (this is %s)",
			release);
	if (kp_read_long(sysctl, &v))
		return kp_fail(LIBPERF_ERR_CHECK_USER_ACCESS, -EOPNOTSUPP,
			       "%s is missing: this kernel or machine has no PMU user access",
			       sysctl);
	if (v != 1)
		return kp_fail(LIBPERF_ERR_CHECK_USER_ACCESS, -EPERM,
			       "run 'sysctl kernel.perf_user_access=1' to let user space read the "
			       "counters (%s is %ld)",
			       sysctl, v);
	return 0;
}

static int check_system(void)
{
	struct utsname u;

	switch (KP_UA_KIND) {
	case KP_UA_X86:
		return kp_ua_check_x86(kp_sysfs());
	case KP_UA_ARM64:
		if (uname(&u))
			return kp_fail(LIBPERF_ERR_CHECK_USER_ACCESS, -errno, "uname: %s",
				       strerror(errno));
		return kp_ua_check_arm64("/proc/sys/kernel/perf_user_access", u.release);
	default:
		return kp_fail(LIBPERF_ERR_CHECK_USER_ACCESS, -EOPNOTSUPP,
			       "enableUserAccess is implemented for x86_64 and arm64 only");
	}
}

int kp_uaccess_check(enum PmuTaskType type, const struct PmuAttr *a)
{
	if (!a->enableUserAccess)
		return 0;
	if (a->numPid != 1 || !a->pidList || a->pidList[0] != 0)
		return kp_fail(LIBPERF_ERR_CHECK_USER_ACCESS, -EINVAL,
			       "enableUserAccess counts the calling thread only: pidList must be "
			       "{0} (numPid 1)");
	if (a->numCpu != 1 || !a->cpuList || a->cpuList[0] != -1)
		return kp_fail(LIBPERF_ERR_CHECK_USER_ACCESS, -EINVAL,
			       "enableUserAccess counts on any CPU: cpuList must be {-1} (numCpu "
			       "1)");
	if (type != COUNTING)
		return kp_fail(LIBPERF_ERR_CHECK_USER_ACCESS, -EINVAL,
			       "enableUserAccess is for COUNTING only");
	if (a->evtAttr)
		return kp_fail(LIBPERF_ERR_CHECK_USER_ACCESS, -EINVAL,
			       "enableUserAccess does not take evtAttr (no event groups)");
	if (a->enableBpf)
		return kp_fail(LIBPERF_ERR_CHECK_USER_ACCESS, -EINVAL,
			       "enableUserAccess reads the calling thread's own counters: it does "
			       "not combine with enableBpf");
	return check_system();
}

static int open_failed(const char *name, int err)
{
	switch (-err) {
	case EACCES:
	case EPERM:
		return kp_fail(LIBPERF_ERR_NO_PERMISSION, err,
			       "not allowed to count '%s' on this thread: %s", name,
			       strerror(-err));
	case ENOENT:
	case EOPNOTSUPP:
	case ENODEV:
		return kp_fail(KPERF_ERR_PMU_NOT_PRESENT, err,
			       "event '%s' is not supported here (%s)", name, strerror(-err));
	case EMFILE:
	case ENFILE:
		return kp_fail(LIBPERF_ERR_TOO_MANY_FD, err, "too many open files opening '%s'",
			       name);
	default:
		return kp_fail(LIBPERF_ERR_INVALID_EVENT, err, "cannot open '%s': %s", name,
			       strerror(-err));
	}
}

int kp_uaccess_open(struct kp_pmu *p)
{
	struct kp_uaccess *u;
	int i;

	u = p->uaccess = calloc(1, sizeof(*u));
	if (!u || !(u->c = calloc((size_t)p->nevents, sizeof(*u->c))))
		return kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
	u->pid = getpid();
	u->tid = gettid();
	u->page_size = (size_t)getpagesize();
	kp_pid_comm(u->tid, u->comm, sizeof(u->comm));
	for (i = 0; i < p->nevents; i++)
		u->c[i].fd = -1;
	for (i = 0; i < p->nevents; i++) {
		struct perf_event_attr attr = p->events[i].attr;
		struct ua_counter *c = &u->c[i];
		void *page;

		attr.config1 |= KP_UA_CONFIG1;
		attr.disabled = 1;
		attr.inherit = 0;
		attr.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
		attr.exclude_user |= p->attr.excludeUser;
		attr.exclude_kernel |= p->attr.excludeKernel;
		attr.exclude_guest |= p->attr.excludeGuest;
		attr.exclude_host |= p->attr.excludeHost;
		c->fd = kp_perf_event_open(&attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
		if (c->fd < 0)
			return open_failed(p->events[i].name, -errno);
		u->n = i + 1;
		page = mmap(NULL, u->page_size, PROT_READ, MAP_SHARED, c->fd, 0);
		if (page == MAP_FAILED)
			return kp_fail(LIBPERF_ERR_FAIL_MMAP, -errno,
				       "cannot map the counter page of '%s': %s", p->events[i].name,
				       strerror(errno));
		c->page = page;
	}
	return 0;
}

int kp_uaccess_enable(struct kp_pmu *p)
{
	struct kp_uaccess *u = p->uaccess;
	int i;

	for (i = 0; i < u->n; i++)
		if (ioctl(u->c[i].fd, PERF_EVENT_IOC_ENABLE, 0))
			return kp_fail(LIBPERF_ERR_FAILED_PMU_ENABLE, -errno,
				       "cannot enable '%s': %s", p->events[i].name,
				       strerror(errno));
	u->on = true;
	/* enabled on this thread, each event is on a counter now, or never will be */
	for (i = 0; i < u->n; i++) {
		if (READ_ONCE(u->c[i].page->index) == 0) {
			kp_uaccess_disable(p);
			return kp_fail(LIBPERF_ERR_COUNTER_INDEX_IS_ZERO, -EBUSY,
				       "'%s' has no hardware counter (its mmap page's index is 0): "
				       "a software event cannot be read from user space, or every "
				       "counter is taken",
				       p->events[i].name);
		}
	}
	return 0;
}

int kp_uaccess_disable(struct kp_pmu *p)
{
	struct kp_uaccess *u = p->uaccess;
	int i, err = 0;

	for (i = 0; i < u->n; i++)
		if (ioctl(u->c[i].fd, PERF_EVENT_IOC_DISABLE, 0) && !err)
			err = kp_fail(LIBPERF_ERR_FAILED_PMU_DISABLE, -errno,
				      "cannot disable '%s': %s", p->events[i].name,
				      strerror(errno));
	u->on = false;
	return err;
}

static uint64_t arch_pmc(unsigned idx, void *ctx)
{
	(void)ctx;
	return kp_ua_arch_pmc(idx);
}

static uint64_t arch_ts(void *ctx)
{
	(void)ctx;
	return kp_ua_arch_ts();
}

/* one counter's value now: from the register on its own thread while enabled, else (or
 * from another thread, where its register holds someone else's count) with read(2) */
static int read_one(struct kp_uaccess *u, struct ua_counter *c, const char *name,
		    struct kp_ua_value *v)
{
	uint64_t buf[3];
	int err;

	if (u->on && gettid() == u->tid) {
		err = kp_ua_read_page(c->page, arch_pmc, arch_ts, NULL, v);
		if (err == -ENODEV)
			return kp_fail(LIBPERF_ERR_ENABLE_USER_ACCESS_FAILED, err,
				       "the kernel does not let user space read '%s' "
				       "(cap_user_rdpmc is 0)",
				       name);
		if (err)
			return kp_fail(LIBPERF_ERR_ALLOCATE_REGISTER_FAILED, err,
				       "'%s' is not on a hardware counter now (index 0)", name);
		return 0;
	}
	if (read(c->fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf))
		return kp_fail(UNKNOWN_ERROR, -EIO, "cannot read '%s': %s", name, strerror(errno));
	v->count = buf[0];
	v->enabled = buf[1];
	v->running = buf[2];
	return 0;
}

int kp_uaccess_read(struct kp_pmu *p, struct PmuData **out)
{
	struct kp_uaccess *u = p->uaccess;
	struct kp_data_builder *b = kp_data_builder_new();
	int64_t ts = (int64_t)kp_now_ns();
	int i, err = 0;

	if (!b)
		return kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
	for (i = 0; i < u->n && !err; i++) {
		struct ua_counter *c = &u->c[i];
		struct PmuData d = { 0 };
		struct kp_ua_value v;

		err = read_one(u, c, p->events[i].name, &v);
		if (err)
			break;
		d.evt = p->events[i].name;
		d.ts = ts;
		d.pid = u->pid;
		d.tid = u->tid;
		d.cpu = -1;
		d.groupId = -1;
		d.comm = u->comm;
		d.count = kp_count_scale(v.count - c->last.count, v.enabled - c->last.enabled,
					 v.running - c->last.running, &d.countPercent);
		c->last = v;
		err = kp_data_builder_add(b, &d, 0);
	}
	if (err) {
		kp_data_builder_free(b);
		return err;
	}
	return kp_data_builder_finish(b, out);
}

void kp_uaccess_close(struct kp_pmu *p)
{
	struct kp_uaccess *u = p->uaccess;
	int i;

	if (!u)
		return;
	for (i = 0; i < u->n; i++) {
		if (u->c[i].page)
			munmap(u->c[i].page, u->page_size);
		close(u->c[i].fd);
	}
	free(u->c);
	free(u);
	p->uaccess = NULL;
}
