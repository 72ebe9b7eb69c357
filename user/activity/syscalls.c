/*
 * syscalls.c - KERNEL and HCCL activity: a process's syscalls, and among them its socket and
 * pipe I/O, from the trace module's syscall programs (per-call records), not from programs
 * of its own.
 *
 * HCCL takes the send/recv families (always sockets) and read/write/readv/writev when the
 * descriptor is a socket or a pipe. What a descriptor is gets looked up in the kernel when the
 * call enters (the trace module's fd classification); the raw_syscalls fallback (kernels
 * before 5.11) cannot, and there the descriptor is looked up in /proc/PID/fd when the record
 * is read, which misses descriptors closed meanwhile.
 *
 * Left out: the uprobe and uretprobe syscalls, which an optimized uprobe (x86_64, 6.17+)
 * enters on its own: a collected marker would otherwise appear as a syscall around itself.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "activity.h"
#include "core/core.h"
#include "core/pidns.h"
#include "kperf/pcerrc.h"
#include "trace/trace.h"

static const char *const hccl_names[] = {
	"read",	   "write",   "readv",	  "writev",   "sendto", "recvfrom",
	"sendmsg", "recvmsg", "sendmmsg", "recvmmsg", "send",	"recv",
};

struct kp_act_sys {
	struct kp_sys_bpf *bpf;
	struct kp_act_sink *sink;
	bool kernel, hccl;
	int nrs[KP_ARRAY_SIZE(hccl_names)];
	unsigned nnrs;
	int nr_read, nr_write, nr_readv, nr_writev; /* -1 where the kernel has none */
	int nr_sendmmsg, nr_recvmmsg;
	int nr_uprobe, nr_uretprobe; /* entered by optimized uprobes (6.17+): not the program's */
};

static int lookup(const char *name)
{
	int nr = kp_syscall_lookup(name);

	if (nr < 0)
		kp_clear_error(); /* not on this architecture (send, recv): not an error */
	return nr;
}

static bool is_rw(const struct kp_act_sys *s, int nr)
{
	return nr >= 0 &&
	       (nr == s->nr_read || nr == s->nr_write || nr == s->nr_readv || nr == s->nr_writev);
}

static bool is_hccl(const struct kp_act_sys *s, int nr)
{
	unsigned i;

	for (i = 0; i < s->nnrs; i++)
		if (s->nrs[i] == nr)
			return true;
	return false;
}

/* the channel of an HCCL call: what the kernel said, else what /proc says now */
static bool channel(const struct kp_act_sys *s, const struct kp_sys_event *e, char *buf,
		    size_t size)
{
	char path[64], link[64];
	ssize_t n;

	if (e->fd_kind == KP_FD_SOCKET || e->fd_kind == KP_FD_PIPE) {
		snprintf(buf, size, "%s:[%llu]", e->fd_kind == KP_FD_SOCKET ? "socket" : "pipe",
			 (unsigned long long)e->fd_ino);
		return true;
	}
	if (e->fd_kind == KP_FD_OTHER)
		return false;
	/* the fallback: no classification in the kernel */
	snprintf(path, sizeof(path), "/proc/%u/fd/%d", e->tgid, e->fd);
	n = readlink(path, link, sizeof(link) - 1);
	if (n > 0) {
		link[n] = '\0';
		if (!strncmp(link, "socket:[", 8) || !strncmp(link, "pipe:[", 6)) {
			/* "socket:[INODE]" fits: an inode has at most 20 digits */
			memcpy(buf, link, (size_t)n < size ? (size_t)n + 1 : size);
			buf[size - 1] = '\0';
			return true;
		}
		return false;
	}
	if (is_rw(s, (int)e->nr))
		return false; /* closed meanwhile: cannot tell */
	snprintf(buf, size, "socket");
	return true;
}

static int on_event(void *ctx, const struct kp_sys_event *e)
{
	struct kp_act_sys *s = ctx;
	struct kp_act_rec rec;
	const char *name = kp_syscall_name((int)e->nr);
	int err = 0;

	/* an optimized uprobe (a marker being collected) enters the kernel through these: the
	 * collector's cost, not work the program asked for */
	if ((int)e->nr == s->nr_uprobe || (int)e->nr == s->nr_uretprobe)
		return 0;
	if (s->kernel && !s->hccl && kp_act_sink_direct_sys(s->sink, e, &err))
		return err;
	memset(&rec, 0, sizeof(rec));
	rec.r.start = e->start_ns;
	rec.r.end = e->start_ns + e->dur_ns;
	rec.r.pid = (int)e->tgid;
	rec.r.tid = (int)e->tid;
	rec.r.cpu = (int)e->cpu;
	rec.r.nr = (int)e->nr;
	rec.r.ret = e->ret;
	/* the kernel's copy is NUL-terminated within its size; a process the caller's PID
	 * namespace does not contain is pid -1 "[outside namespace]" */
	if (e->tgid == KP_PID_OUTSIDE)
		snprintf(rec.comm, sizeof(rec.comm), "%s", KP_PIDNS_OUTSIDE_COMM);
	else
		snprintf(rec.comm, sizeof(rec.comm), "%.*s", (int)sizeof(e->comm), e->comm);
	if (name)
		snprintf(rec.name, sizeof(rec.name), "%s", name);
	else
		snprintf(rec.name, sizeof(rec.name), "syscall_%u", e->nr);
	if (s->kernel) {
		rec.r.kind = KPERF_ACTIVITY_KIND_KERNEL;
		rec.r.id = kp_act_sink_next_id(s->sink);
		err = kp_act_sink_add(s->sink, &rec);
	}
	if (!err && s->hccl && is_hccl(s, (int)e->nr) &&
	    channel(s, e, rec.channel, sizeof(rec.channel))) {
		rec.r.kind = KPERF_ACTIVITY_KIND_HCCL;
		rec.r.id = kp_act_sink_next_id(s->sink);
		rec.r.bytes = e->ret > 0 && (int)e->nr != s->nr_sendmmsg &&
					      (int)e->nr != s->nr_recvmmsg ?
				      e->ret :
				      0;
		err = kp_act_sink_add(s->sink, &rec);
	}
	return err;
}

int kp_act_sys_open(const int *tgids, unsigned ntgids, bool follow_fork, bool from_exec,
		    bool kernel, bool hccl, size_t ringbuf_bytes, struct kp_act_sink *sink,
		    struct kp_act_sys **out)
{
	struct kp_sys_bpf_opts o = { 0 };
	struct kp_act_sys *s;
	unsigned i;
	int err;

	*out = NULL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
	s->sink = sink;
	s->kernel = kernel;
	s->hccl = hccl;
	for (i = 0; i < KP_ARRAY_SIZE(hccl_names); i++) {
		int nr = lookup(hccl_names[i]);

		if (nr >= 0)
			s->nrs[s->nnrs++] = nr;
	}
	s->nr_read = lookup("read");
	s->nr_write = lookup("write");
	s->nr_readv = lookup("readv");
	s->nr_writev = lookup("writev");
	s->nr_uprobe = lookup("uprobe");
	s->nr_uretprobe = lookup("uretprobe");
	s->nr_sendmmsg = lookup("sendmmsg");
	s->nr_recvmmsg = lookup("recvmmsg");

	o.tgids = tgids;
	o.ntgids = ntgids;
	/* every process (allPids): but this one, whose reading would be read */
	o.exclude_self = !ntgids;
	o.cgroup_fd = -1;
	o.record_events = true;
	o.follow_fork = follow_fork;
	o.from_exec = from_exec;
	o.ringbuf_bytes = ringbuf_bytes;
	o.summary_entries = 4096;
	o.on_event = on_event;
	o.ctx = s;
	if (hccl) {
		o.fd_nrs = s->nrs;
		o.nfd_nrs = s->nnrs;
		if (!kernel) {
			/* only the I/O calls: the others are filtered out in the kernel */
			o.nrs = s->nrs;
			o.nnrs = s->nnrs;
		}
	}
	err = kp_sys_bpf_open(&o, &s->bpf);
	if (err) {
		free(s);
		return err;
	}
	*out = s;
	return 0;
}

int kp_act_sys_attach(struct kp_act_sys *s)
{
	return kp_sys_bpf_attach(s->bpf);
}

void kp_act_sys_detach(struct kp_act_sys *s)
{
	kp_sys_bpf_detach(s->bpf);
}

int kp_act_sys_epoll_fd(struct kp_act_sys *s)
{
	return kp_sys_bpf_epoll_fd(s->bpf);
}

int kp_act_sys_consume(struct kp_act_sys *s)
{
	return kp_sys_bpf_consume(s->bpf);
}

uint64_t kp_act_sys_dropped(struct kp_act_sys *s)
{
	uint64_t c[KP_CNT_MAX];

	kp_sys_bpf_counters(s->bpf, c);
	return c[KP_CNT_DROPPED];
}

bool kp_act_sys_fallback(const struct kp_act_sys *s)
{
	return kp_sys_bpf_is_compat(s->bpf);
}

void kp_act_sys_close(struct kp_act_sys *s)
{
	if (!s)
		return;
	kp_sys_bpf_close(s->bpf);
	free(s);
}
