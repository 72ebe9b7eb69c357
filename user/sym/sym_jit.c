/*
 * sym_jit.c - code a runtime generated while it ran: the symbols it wrote to /tmp/perf-PID.map
 * (Node's --perf-basic-prof, a JVM's Compiler.perfmap or -XX:+DumpPerfMapAtExit, any runtime
 * that writes perf's JIT map), read while the process lives and once more after it exited,
 * a running HotSpot JVM asked to write its map (jit/jvm_attach.c), and the name of JIT code
 * no map names: "[JIT] comm", one per process, never one row per address.
 *
 * A perf map lies in /tmp, which anyone can write: it names a process's code only when it is
 * a regular file (a symlink is not followed), owned by root or by the process's owner, not
 * writable by others, and, once the process is gone (its pid may be another's by then),
 * modified since the process started. Who the process was (its uid, its pid in its own
 * namespace, its start) is noted while it lives: nothing can be asked afterwards.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/core.h"
#include "jit/jit.h"
#include "kperf/pcerrc.h"
#include "sym.h"

#define PERF_MAP_MAX (64u << 20) /* a JVM's map after hours is a few MiB */
#define BORN_SLACK_S 2 /* the boot time /proc/stat gives is in whole seconds */
#define JVM_ASK_MIN_MS 5000 /* a JVM is asked for its map at most this often */

bool sym_ask_jit;

/* ---- who the process is ---- */

static int64_t boot_time_s(void)
{
	static int64_t btime;
	char *buf, *p;

	if (btime)
		return btime;
	if (kp_read_file("/proc/stat", &buf, NULL))
		return 0;
	p = strstr(buf, "\nbtime ");
	if (p)
		btime = strtoll(p + 7, NULL, 10);
	free(buf);
	return btime;
}

/* the last pid of "NSpid:" (its own namespace's) and "Name:" of /proc/PID/status */
static void parse_status(char *buf, pid_t *nspid, char *name, size_t size)
{
	char *line = strstr(buf, "\nNSpid:"), *end;
	long v;

	if (line) {
		line += 7;
		for (;;) {
			v = strtol(line, &end, 10);
			if (end == line)
				break;
			*nspid = (pid_t)v;
			line = end;
		}
	}
	if (!strncmp(buf, "Name:\t", 6)) {
		end = strchr(buf + 6, '\n');
		snprintf(name, size, "%.*s", end ? (int)(end - buf - 6) : 0, buf + 6);
	}
}

void sym_proc_note_identity(struct sym_proc *p)
{
	char path[64], name[64] = "", *buf;
	uint64_t ticks = 0;
	long hz = sysconf(_SC_CLK_TCK);
	pid_t nspid = p->pid;
	struct stat st;

	if (p->id_fresh || p->pid <= 0)
		return;
	/* the owner of /proc/PID is the process's effective user */
	snprintf(path, sizeof(path), "/proc/%d", (int)p->pid);
	if (stat(path, &st))
		return;
	snprintf(path, sizeof(path), "/proc/%d/status", (int)p->pid);
	if (kp_read_file(path, &buf, NULL))
		return;
	parse_status(buf, &nspid, name, sizeof(name));
	free(buf);
	if (sym_start_ticks(p->pid, &ticks) || hz <= 0 || !boot_time_s())
		p->born_s = 0; /* unknown: a map left behind is not checked against it */
	else
		p->born_s = boot_time_s() + (int64_t)(ticks / (uint64_t)hz);
	p->uid = st.st_uid;
	p->nspid = nspid;
	if (!p->comm && *name)
		p->comm = sym_intern(name);
	p->id_known = p->id_fresh = true;
}

/* ---- perf maps: lines of "START SIZE name", START and SIZE in hex ---- */

static int cmp_jit(const void *a, const void *b)
{
	const struct sym_jit_sym *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	/* the same address written twice: the later line (higher name pointer) wins */
	return x->name < y->name ? -1 : x->name > y->name;
}

int sym_parse_perf_map(char *buf, struct sym_jit_sym **out, size_t *nout)
{
	struct sym_jit_sym *v = NULL;
	size_t n = 0, cap = 0, i, j;
	char *line, *next;

	*out = NULL;
	*nout = 0;
	for (line = buf; line && *line; line = next) {
		unsigned long long start, size;
		char *e1, *e2, *nm;

		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		start = strtoull(line, &e1, 16);
		if (e1 == line || *e1 != ' ')
			continue;
		size = strtoull(e1 + 1, &e2, 16);
		if (e2 == e1 + 1 || *e2 != ' ' || !size || start + size < start)
			continue;
		nm = e2 + 1;
		if (!*nm)
			continue;
		if (kp_grow((void **)&v, &cap, n + 1, sizeof(*v))) {
			free(v);
			return -ENOMEM;
		}
		v[n].start = start;
		v[n].end = start + size;
		v[n].name = nm;
		n++;
	}
	if (n)
		qsort(v, n, sizeof(*v), cmp_jit);
	for (i = 0, j = 0; i < n; i++) {
		if (j && v[j - 1].start == v[i].start)
			j--;
		v[j++] = v[i];
	}
	*out = v;
	*nout = j;
	return 0;
}

/* Open the perf map at <open_path> (named <shown> in messages) and read it whole when it is
 * this process's: 0 with *buf, -ENOENT when there is none, another -errno when it is refused
 * (with a warning) or unreadable. *size its size; unchanged from <known> (>= 0): -EEXIST. */
static int read_perf_map(struct sym_proc *p, const char *open_path, const char *shown, off_t known,
			 char **buf, off_t *size)
{
	struct stat st;
	bool owner_ok;
	ssize_t r;
	size_t n = 0;
	int fd, err = 0;

	/* not through a symlink; O_NONBLOCK: a FIFO put there must not hang us */
	fd = kp_open_path(open_path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
	if (fd == -ELOOP)
		kp_warn(KPERF_WARN_SYM_INCOMPLETE, "%s is a symbolic link: it is ignored", shown);
	if (fd < 0)
		return fd;
	if (fstat(fd, &st)) {
		err = -errno;
		goto out;
	}
	*size = st.st_size;
	if (!S_ISREG(st.st_mode)) {
		kp_warn(KPERF_WARN_SYM_INCOMPLETE, "%s is not a regular file: it is ignored",
			shown);
		err = -EINVAL;
		goto out;
	}
	if (known >= 0 && st.st_size == known) {
		err = -EEXIST;
		goto out;
	}
	/* anyone can write to /tmp: only the process's owner (or root) names its code */
	if (p->gone) {
		owner_ok = st.st_uid == 0 || (p->id_known && st.st_uid == p->uid);
		if (!owner_ok && p->id_known)
			kp_warn(KPERF_WARN_SYM_INCOMPLETE,
				"%s is owned by uid %u, neither root nor the owner of process %d "
				"(uid %u): anyone may have written it, it is ignored",
				shown, (unsigned)st.st_uid, (int)p->pid, (unsigned)p->uid);
		else if (!owner_ok)
			kp_warn(KPERF_WARN_SYM_INCOMPLETE,
				"%s is owned by uid %u, not root, and process %d exited before its "
				"owner was known: it is ignored",
				shown, (unsigned)st.st_uid, (int)p->pid);
	} else {
		owner_ok = sym_owner_trusted(shown, st.st_uid, p->pid);
	}
	if (!owner_ok) {
		err = -EPERM;
		goto out;
	}
	if (st.st_mode & S_IWOTH) {
		kp_warn(KPERF_WARN_SYM_INCOMPLETE,
			"%s may be written by anyone (mode %03o): it is ignored", shown,
			(unsigned)(st.st_mode & 0777));
		err = -EPERM;
		goto out;
	}
	if (p->gone && p->born_s && (int64_t)st.st_mtime + BORN_SLACK_S < p->born_s) {
		kp_warn(KPERF_WARN_SYM_INCOMPLETE,
			"%s was last written before process %d started: it is another's, ignored",
			shown, (int)p->pid);
		err = -ESTALE;
		goto out;
	}
	if ((uint64_t)st.st_size > PERF_MAP_MAX) {
		kp_warn(KPERF_WARN_SYM_INCOMPLETE,
			"%s is %lld bytes, more than the %u MiB a perf map may have: it is ignored",
			shown, (long long)st.st_size, PERF_MAP_MAX >> 20);
		err = -EFBIG;
		goto out;
	}
	*buf = malloc((size_t)st.st_size + 1);
	if (!*buf) {
		err = -ENOMEM;
		goto out;
	}
	/* it may grow while read: what was there at the fstat is enough */
	while (n < (size_t)st.st_size) {
		r = read(fd, *buf + n, (size_t)st.st_size - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	(*buf)[n] = '\0';
out:
	close(fd);
	return err;
}

int sym_proc_load_jit(struct sym_proc *p)
{
	char open_path[2][PATH_MAX], shown[2][64], name[64];
	struct sym_jit_sym *v = NULL;
	pid_t nspid = p->id_known ? p->nspid : p->pid;
	off_t size = 0;
	char *buf = NULL;
	size_t j;
	int n = 0, k, err = -ENOENT;

	if (p->pid <= 0 || p->jit_final)
		return 0;
	/* named as the process sees it: /tmp/perf-N.map in its own root */
	snprintf(shown[0], sizeof(shown[0]), "/tmp/perf-%d.map", (int)nspid);
	if (!p->gone) {
		sym_proc_note_identity(p);
		nspid = p->id_known ? p->nspid : p->pid;
		snprintf(shown[0], sizeof(shown[0]), "/tmp/perf-%d.map", (int)nspid);
		snprintf(open_path[n++], sizeof(open_path[0]), "/proc/%d/root%s", (int)p->pid,
			 shown[0]);
		snprintf(shown[1], sizeof(shown[1]), "/tmp/perf-%d.map", (int)p->pid);
		snprintf(open_path[n++], sizeof(open_path[0]), "%s", shown[1]);
	} else {
		/* what it left behind, read once: in /tmp as we see it when it shared our
		 * files, in the directory of ours that was its root otherwise */
		p->jit_final = true;
		if (p->mnt_point && !*p->mnt_point)
			snprintf(open_path[n++], sizeof(open_path[0]), "%s", shown[0]);
		else if (p->mnt_point && p->mnt_point[0] == '/' &&
			 strncmp(p->mnt_point, "/proc/", 6))
			snprintf(open_path[n++], sizeof(open_path[0]), "%s%s", p->mnt_point,
				 shown[0]);
		else if (!p->mnt_point)
			snprintf(open_path[n++], sizeof(open_path[0]), "%s", shown[0]);
	}
	for (k = 0; k < n && err == -ENOENT; k++)
		err = read_perf_map(p, open_path[k], shown[k], p->jit_path ? p->jit_size : -1, &buf,
				    &size);
	if (err)
		return err == -ENOMEM ? err : 0;
	if (sym_parse_perf_map(buf, &v, &j)) {
		free(buf);
		return -ENOMEM;
	}
	/* symbols copied their names out: the previous version can go */
	free(p->jit_names);
	p->jit_names = buf;
	free(p->jit);
	p->jit = v;
	p->njit = j;
	p->jit_size = size;
	snprintf(name, sizeof(name), "/tmp/perf-%d.map", (int)p->pid);
	p->jit_path = sym_intern(name);
	return p->jit_path ? 0 : -ENOMEM;
}

const struct sym_jit_sym *sym_proc_find_jit(const struct sym_proc *p, uint64_t addr)
{
	size_t lo = 0, hi = p->njit;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (p->jit[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0 || addr >= p->jit[lo - 1].end)
		return NULL;
	return &p->jit[lo - 1];
}

/* ---- JIT code no map names ---- */

bool sym_map_is_jit(const struct sym_map *m)
{
	return m->exec && (m->kind == SYM_MAP_ANON || !strncmp(m->path, "/memfd:", 7));
}

const char *sym_proc_jit_label(struct sym_proc *p)
{
	char buf[96];

	if (!p->jit_label) {
		snprintf(buf, sizeof(buf), "[JIT] %s", p->comm ? p->comm : "unknown");
		p->jit_label = sym_intern(buf);
	}
	return p->jit_label;
}

bool sym_unresolved(const struct sym_proc *p, const struct Symbol *s)
{
	return s->symbolName == sym_unknown_str ||
	       (p && p->jit_label && s->symbolName == p->jit_label);
}

/* ---- a JVM asked for its map ---- */

/* a HotSpot JVM maps its libjvm.so; OpenJ9 has one too, but its VM is libj9vm*.so (and its
 * SIGQUIT writes a javacore file): not asked */
static bool is_hotspot(const struct sym_proc *p)
{
	bool jvm = false;
	size_t i;

	for (i = 0; i < p->nmaps; i++) {
		const char *path = p->maps[i].path, *base = strrchr(path, '/');

		if (p->maps[i].kind != SYM_MAP_FILE || !base)
			continue;
		if (!strncmp(base, "/libj9vm", 8))
			return false;
		jvm |= !strcmp(base, "/libjvm.so");
	}
	return jvm;
}

bool sym_proc_ask_jvm(struct sym_proc *p)
{
	char why[256];
	int err;

	if (!sym_ask_jit || p->pid <= 0 || p->gone || p->jvm_refused ||
	    (p->jvm_asked_ms && sym_now_ms() - p->jvm_asked_ms < JVM_ASK_MIN_MS) || !is_hotspot(p))
		return false;
	sym_proc_note_identity(p);
	err = kp_jvm_write_perfmap(p->pid, p->id_known ? p->nspid : p->pid, why, sizeof(why));
	p->jvm_asked_ms = sym_now_ms();
	if (err == -ESRCH) /* it exited meanwhile: what it left is read as for any other */
		return false;
	if (err) {
		p->jvm_refused = true;
		kp_warn(KPERF_WARN_SYM_INCOMPLETE,
			"JVM %d did not write its perf map (Compiler.perfmap): %s; its JIT code is "
			"shown as %s",
			(int)p->pid, why, sym_proc_jit_label(p) ? p->jit_label : "[JIT]");
		return false;
	}
	/* its map is rewritten whole: read it even when its size did not change */
	p->jit_size = -1;
	return true;
}
