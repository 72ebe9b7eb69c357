/*
 * owner.c - the unwinder of one BPF object that includes stack_capture.bpf.h, for the owners
 * that take stacks outside sampling (off-CPU, memscope, syscalls): its maps sized before the
 * object's load, the targets' tables loaded after it, and the processes the BPF side asks for
 * (new, exec'ed, new code mapped) loaded every 10 ms by a thread of its own, so that a process
 * just exec'ed gets its tables within milliseconds. Stacks taken before that are frame
 * pointers' (counted: KP_UW_CNT_NO_PROC).
 *
 * A launched command (targets followed from their exec) is held instead (unwind.bpf.h,
 * kp_uw_hold): stopped at its exec, its mappings loaded, a uprobe placed at its entry point
 * (AT_ENTRY of /proc/PID/auxv); stopped there again once ld.so has mapped its libraries, those
 * loaded, continued, and armed again for its next exec (a wrapper: env, nice, taskset, chroot,
 * sh -c execs the real program, held the same way). The processes it forks are held at their
 * exec the same way (a shell, make or time that forks the program). Its first samples are the
 * tables' too. Nothing is left stopped: at the end the hold is said over in the map (no BPF
 * program stops anything after it) before what is stopped is continued, and a guard process
 * (hold_guard.c) continues them if this process dies first.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "core/core.h"
#include "kperf/pcerrc.h"
#include "runtime/python.h"
#include "sym/sym.h"

#include "unwind.h"

#define ROWS_CAP (1u << 20) /* 16 MiB of rows: libc, python3 and libstdc++ take 127 221 */
#define PROCS_TARGETED 1024 /* the targets and the processes they start */
#define PROCS_ALL 4096
#define POLL_MS 10
#define STOP_WAIT_MS 200 /* for a held process to show stopped before it is continued */
#define MAX_HELD 64 /* processes between their exec and their entry point at once */
#define HOLD_OVER_WAIT_MS 5 /* for the programs that looked before the hold was over */
#define MAX_FOLLOWERS 4
#define PY_THREADS 8192 /* threads whose PyThreadState is remembered */
#define PY_CODES 16384 /* code objects copied between two drains */

/* as unwind.bpf.h numbers them */
enum { HOLD_EXEC = 1, HOLD_EXEC_STOPPED, HOLD_ENTRY, HOLD_ENTRY_STOPPED };

struct held {
	int pid;
	struct bpf_link *entry; /* kp_uw_entry at its entry point */
};

struct kp_uw_owner {
	struct bpf_object *obj;
	int hold_fd;
	struct held held[MAX_HELD];
	unsigned nheld;
	uint64_t held_released, held_entry_failed;
	struct kp_uw_loader *loader;
	pthread_mutex_t lock;
	pthread_t thread;
	bool thread_on;
	bool holds; /* it stops and continues held processes */
	struct kp_uw_guard guard; /* continues them if this process dies */
	/* owners of other objects that share its kp_uw_hold map (kp_uw_owner_follow): loaded
	 * with each held process before it is continued */
	struct kp_uw_owner *followers[MAX_FOLLOWERS];
	unsigned nfollowers;
	struct kp_uw_owner *leader; /* the owner this one follows */
	struct kp_py *py; /* the Python frame reader's processes and code objects, or NULL */
	uint64_t full_seen; /* tables_full at the last kp_uw_owner_reclaim */
	atomic_bool stop;
};

static struct bpf_map *map_of(struct bpf_object *obj, const char *name)
{
	return bpf_object__find_map_by_name(obj, name);
}

int kp_uw_owner_size(struct bpf_object *obj, bool on, unsigned ntargets)
{
	struct bpf_map *rows = map_of(obj, "kp_uw_rows"), *procs = map_of(obj, "kp_uw_procs");

	if (!rows || !procs)
		return -ENOENT;
	bpf_map__set_max_entries(rows, on ? ROWS_CAP : 1);
	if (on)
		bpf_map__set_map_flags(rows, bpf_map__map_flags(rows) | BPF_F_MMAPABLE);
	bpf_map__set_max_entries(procs, on ? (ntargets > 0 ? PROCS_TARGETED : PROCS_ALL) : 1);
	return on ? kp_uw_set_task_layout(obj) : 0;
}

int kp_uw_owner_py_size(struct bpf_object *obj, bool on, unsigned ntargets)
{
	struct bpf_map *procs = map_of(obj, "kp_py_procs"), *threads = map_of(obj, "kp_py_threads");
	struct bpf_map *codes = map_of(obj, "kp_py_codes");

	if (!procs || !threads || !codes)
		return -ENOENT;
	bpf_map__set_max_entries(procs, on ? (ntargets > 0 ? PROCS_TARGETED : PROCS_ALL) : 1);
	bpf_map__set_max_entries(threads, on ? PY_THREADS : 1);
	bpf_map__set_max_entries(codes, on ? PY_CODES : 1);
	return 0;
}

/* wait (up to STOP_WAIT_MS) for <pid> to be stopped: a SIGCONT sent before the SIGSTOP was
 * taken would be lost in it and leave the process stopped for good */
static void wait_stopped(int pid)
{
	struct timespec ms = { 0, 1000000L };
	char path[64], *text, *p;
	int i;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	for (i = 0; i < STOP_WAIT_MS; i++) {
		bool stopped = false, gone = false;

		if (kp_read_file(path, &text, NULL)) {
			gone = true;
		} else {
			p = strrchr(text, ')');
			stopped = p && (p[2] == 'T' || p[2] == 't');
			gone = p && (p[2] == 'Z' || p[2] == 'X');
			free(text);
		}
		if (stopped || gone)
			return;
		nanosleep(&ms, NULL);
	}
}

/* the file offset and a path of the program's entry point in process <pid> (AT_ENTRY of its
 * auxiliary vector, in its mappings) */
static int entry_of(int pid, char *file, size_t len, uint64_t *off)
{
	char path[64], *text, *line, *save = NULL;
	uint64_t entry = 0, aux[2];
	int fd, err = -ENOENT;

	snprintf(path, sizeof(path), "/proc/%d/auxv", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while (read(fd, aux, sizeof(aux)) == (ssize_t)sizeof(aux) && aux[0] != AT_NULL)
		if (aux[0] == AT_ENTRY)
			entry = aux[1];
	close(fd);
	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	if (!entry || kp_read_file(path, &text, NULL))
		return -ENOENT;
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		unsigned long long start, end, moff;
		int n = 0;

		if (sscanf(line, "%llx-%llx %*s %llx %*s %*s %n", &start, &end, &moff, &n) < 3 ||
		    entry < start || entry >= end || n <= 0 || line[n] != '/')
			continue;
		snprintf(file, len, "/proc/%d/root%s", pid, line + n);
		*off = entry - start + moff;
		err = 0;
		break;
	}
	free(text);
	return err;
}

static struct held *held_of(struct kp_uw_owner *u, int pid)
{
	unsigned i;

	for (i = 0; i < u->nheld; i++)
		if (u->held[i].pid == pid)
			return &u->held[i];
	if (u->nheld >= MAX_HELD)
		return NULL;
	u->held[u->nheld].pid = pid;
	u->held[u->nheld].entry = NULL;
	return &u->held[u->nheld++];
}

/* every object that unwinds the held process gets its tables before it goes on */
static void load_held(struct kp_uw_owner *u, int pid)
{
	unsigned i;

	kp_uw_loader_add_pid(u->loader, pid);
	for (i = 0; i < u->nfollowers; i++) {
		pthread_mutex_lock(&u->followers[i]->lock);
		kp_uw_loader_add_pid(u->followers[i]->loader, pid);
		pthread_mutex_unlock(&u->followers[i]->lock);
	}
}

/* a held process goes on, loaded; <rearm>: this program's hold is over (its entry point's
 * probe goes) and the next exec of the process holds it again, so a wrapper (env, nice,
 * taskset, chroot, sh -c) holds the program it execs as the command itself was held */
static void release(struct kp_uw_owner *u, int pid, bool rearm)
{
	struct held *h = held_of(u, pid);
	__u32 key = (__u32)pid, armed = HOLD_EXEC;

	load_held(u, pid);
	wait_stopped(pid);
	if (rearm) {
		if (h) {
			bpf_link__destroy(h->entry);
			*h = u->held[--u->nheld];
		}
		/* while it is stopped: it cannot exec before the state says armed. Its exit
		 * drops the entry (kp_uw_exit_reset); a process gone meanwhile has none to arm */
		if (bpf_map_update_elem(u->hold_fd, &key, &armed, BPF_EXIST) || kill(pid, 0))
			bpf_map_delete_elem(u->hold_fd, &key);
		u->held_released++;
	}
	kill(pid, SIGCONT);
}

/* the held processes that stopped: at their exec, loaded and sent on to their entry point
 * (re-armed for their next exec where it cannot be probed); at their entry point, loaded and
 * re-armed for their next exec */
static void serve_held(struct kp_uw_owner *u)
{
	__u32 key, next, *prev = NULL, state, entry_state = HOLD_ENTRY;
	struct held *h;
	char file[PATH_MAX];
	uint64_t off = 0;

	if (u->hold_fd < 0 || !u->holds)
		return;
	while (!bpf_map_get_next_key(u->hold_fd, prev, &next)) {
		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(u->hold_fd, &key, &state))
			continue;
		if (state == HOLD_EXEC && kill((pid_t)key, 0) && errno == ESRCH) {
			/* armed, gone without an exit program of this object's seeing it */
			bpf_map_delete_elem(u->hold_fd, &key);
			prev = NULL;
			continue;
		}
		if (state == HOLD_ENTRY_STOPPED) {
			release(u, (int)key, true);
			prev = NULL; /* deleted: start over */
			continue;
		}
		if (state != HOLD_EXEC_STOPPED)
			continue;
		/* stopped before its state says it is not: the switch that stops it must find it
		 * held, or an owner of blocked time counts the stop as the program's (the exec's
		 * tracepoint marks it a little before the signal is taken) */
		wait_stopped((int)key);
		h = held_of(u, (int)key);
		if (h && !h->entry && entry_of((int)key, file, sizeof(file), &off) == 0)
			h->entry = bpf_program__attach_uprobe(
				bpf_object__find_program_by_name(u->obj, "kp_uw_entry"), false,
				(pid_t)key, file, (size_t)off);
		if (!h || !h->entry ||
		    bpf_map_update_elem(u->hold_fd, &key, &entry_state, BPF_EXIST)) {
			u->held_entry_failed++;
			release(u, (int)key, true);
			prev = NULL;
			continue;
		}
		release(u, (int)key, false);
	}
}

/* <u> holds processes from now on: its guard is started (without one, a kill -9 of this
 * process could leave a held process stopped: said, and it holds all the same) */
static void start_holding(struct kp_uw_owner *u)
{
	int err;

	if (u->holds)
		return;
	u->holds = true;
	err = kp_uw_guard_start(u->hold_fd, &u->guard);
	if (err)
		kp_warn(KPERF_WARN_FALLBACK,
			"no guard for the held command (%s): if kperf-bpf is killed while it is "
			"stopped at an exec, it stays stopped until sent SIGCONT",
			strerror(-err));
}

static void *loader_main(void *arg)
{
	struct kp_uw_owner *u = arg;
	struct timespec ts = { 0, POLL_MS * 1000000L };

	while (!atomic_load(&u->stop)) {
		pthread_mutex_lock(&u->lock);
		kp_uw_loader_poll(u->loader);
		serve_held(u);
		pthread_mutex_unlock(&u->lock);
		nanosleep(&ts, NULL);
	}
	return NULL;
}

/* each process whose tables were just loaded, alive: the symbolizer notes where its root is
 * (a chroot'ed interpreter exits before its stacks are resolved), the Python reader looks */
static void py_on_pid(void *ctx, int pid)
{
	kp_sym_note_root(pid);
	kp_py_add_pid(ctx, pid);
}

static int start(struct bpf_object *obj, const int *pids, unsigned n, bool hold,
		 void (*on_pid)(void *ctx, int pid), void *ctx, bool python,
		 struct kp_uw_owner **out);

int kp_uw_owner_start(struct bpf_object *obj, const int *pids, unsigned n, bool hold,
		      struct kp_uw_owner **out)
{
	return start(obj, pids, n, hold, NULL, NULL, false, out);
}

int kp_uw_owner_start_py(struct bpf_object *obj, const int *pids, unsigned n, bool hold,
			 bool python, struct kp_uw_owner **out)
{
	return start(obj, pids, n, hold, NULL, NULL, python, out);
}

int kp_uw_owner_start_hooked(struct bpf_object *obj, const int *pids, unsigned n, bool hold,
			     void (*on_pid)(void *ctx, int pid), void *ctx,
			     struct kp_uw_owner **out)
{
	return start(obj, pids, n, hold, on_pid, ctx, false, out);
}

static int start(struct bpf_object *obj, const int *pids, unsigned n, bool hold,
		 void (*on_pid)(void *ctx, int pid), void *ctx, bool python,
		 struct kp_uw_owner **out)
{
	struct kp_uw_owner *u = calloc(1, sizeof(*u));
	struct bpf_map *hold_map = map_of(obj, "kp_uw_hold");
	__u32 armed = HOLD_EXEC;
	unsigned i;
	int err;

	*out = NULL;
	if (!u)
		return -ENOMEM;
	u->obj = obj;
	u->guard.pid = -1;
	u->guard.fd = -1;
	if (python) {
		u->py = kp_py_new(bpf_map__fd(map_of(obj, "kp_py_procs")),
				  bpf_map__fd(map_of(obj, "kp_py_codes")),
				  bpf_map__fd(map_of(obj, "kp_py_counters")));
		if (!u->py) {
			free(u);
			return -ENOMEM;
		}
		on_pid = py_on_pid;
		ctx = u->py;
	}
	if (hold && secure_getenv("KPERF_BPF_NO_HOLD"))
		hold = false; /* a launched command runs on at once (frame pointers meanwhile) */
	u->hold_fd = hold_map && bpf_object__find_program_by_name(obj, "kp_uw_entry") ?
			     bpf_map__fd(hold_map) :
			     -1;
	pthread_mutex_init(&u->lock, NULL);
	u->loader = kp_uw_loader_new(bpf_map__fd(map_of(obj, "kp_uw_rows")), ROWS_CAP,
				     bpf_map__fd(map_of(obj, "kp_uw_procs")),
				     bpf_map__fd(map_of(obj, "kp_uw_want")),
				     bpf_map__fd(map_of(obj, "kp_uw_counters")));
	if (!u->loader) {
		err = -errno;
		kp_uw_owner_stop(u);
		return err;
	}
	if (on_pid)
		kp_uw_loader_on_pid(u->loader, on_pid, ctx);
	for (i = 0; i < n; i++) {
		__u32 key = (__u32)pids[i];

		/* a command about to exec: held at its exec (kperf-bpf's mappings until then) */
		if (!hold)
			kp_uw_loader_add_pid(u->loader, pids[i]);
		else if (u->hold_fd >= 0 &&
			 bpf_map_update_elem(u->hold_fd, &key, &armed, BPF_ANY) == 0)
			start_holding(u);
	}
	atomic_store(&u->stop, false);
	err = pthread_create(&u->thread, NULL, loader_main, u);
	if (err) {
		kp_uw_owner_stop(u);
		return -err;
	}
	u->thread_on = true;
	*out = u;
	return 0;
}

void kp_uw_owner_locked(struct kp_uw_owner *u, void (*fn)(void *ctx), void *ctx)
{
	if (!u)
		return;
	pthread_mutex_lock(&u->lock);
	fn(ctx);
	pthread_mutex_unlock(&u->lock);
}

int kp_uw_owner_hold(struct kp_uw_owner *u, int pid)
{
	__u32 key = (__u32)pid, armed = HOLD_EXEC;
	int err = 0;

	if (!u || u->hold_fd < 0)
		return 0;
	pthread_mutex_lock(&u->lock);
	if (bpf_map_update_elem(u->hold_fd, &key, &armed, BPF_ANY))
		err = -errno;
	else
		start_holding(u);
	pthread_mutex_unlock(&u->lock);
	return err;
}

int kp_uw_owner_follow(struct kp_uw_owner *holder, struct kp_uw_owner *follower)
{
	int err = 0;

	if (!holder || !follower || holder == follower || follower->leader)
		return holder && follower && holder != follower ? -EBUSY : 0;
	pthread_mutex_lock(&holder->lock);
	if (holder->nfollowers >= MAX_FOLLOWERS) {
		err = -ENOSPC;
	} else {
		holder->followers[holder->nfollowers++] = follower;
		follower->leader = holder;
	}
	pthread_mutex_unlock(&holder->lock);
	return err;
}

int kp_uw_owner_hold_fd(const struct kp_uw_owner *u)
{
	return u && u->holds ? u->hold_fd : -1;
}

/* <u> leaves its leader's followers, and its own followers are left without one */
static void unfollow(struct kp_uw_owner *u)
{
	struct kp_uw_owner *l = u->leader;
	unsigned i;

	if (l) {
		pthread_mutex_lock(&l->lock);
		for (i = 0; i < l->nfollowers; i++)
			if (l->followers[i] == u)
				l->followers[i] = l->followers[--l->nfollowers];
		pthread_mutex_unlock(&l->lock);
		u->leader = NULL;
	}
	pthread_mutex_lock(&u->lock);
	for (i = 0; i < u->nfollowers; i++)
		u->followers[i]->leader = NULL;
	u->nfollowers = 0;
	pthread_mutex_unlock(&u->lock);
}

int kp_uw_owner_add_pid(struct kp_uw_owner *u, int pid)
{
	int err;

	if (!u)
		return 0;
	pthread_mutex_lock(&u->lock);
	err = kp_uw_loader_add_pid(u->loader, pid);
	pthread_mutex_unlock(&u->lock);
	return err;
}

static void drain_codes(void *py)
{
	kp_py_drain_codes(py);
}

void kp_uw_owner_py_drain(struct kp_uw_owner *u)
{
	if (u && u->py)
		kp_uw_owner_locked(u, drain_codes, u->py);
}

struct py_note {
	struct kp_py *py;
	char *buf;
	size_t len;
};

static void take_note(void *arg)
{
	struct py_note *n = arg;
	const char *note = kp_py_next_note(n->py);

	if (note)
		snprintf(n->buf, n->len, "%s", note);
}

bool kp_uw_owner_py_note(struct kp_uw_owner *u, char *buf, size_t len)
{
	struct py_note n = { u ? u->py : NULL, buf, len };

	if (!len)
		return false;
	buf[0] = '\0';
	if (n.py)
		kp_uw_owner_locked(u, take_note, &n);
	return buf[0] != '\0';
}

void kp_uw_owner_stats(struct kp_uw_owner *u, struct kp_uw_load_stats *s)
{
	pthread_mutex_lock(&u->lock);
	kp_uw_loader_stats(u->loader, s);
	pthread_mutex_unlock(&u->lock);
}

void kp_uw_owner_reclaim(struct kp_uw_owner *u)
{
	struct kp_uw_load_stats st;

	if (!u)
		return;
	pthread_mutex_lock(&u->lock);
	kp_uw_loader_stats(u->loader, &st);
	/* the array is the cache of compiled tables for the next collections: emptied only
	 * when a table found no room in it since the last time */
	if (st.tables_full != u->full_seen)
		kp_uw_loader_reclaim(u->loader, 0);
	u->full_seen = st.tables_full;
	pthread_mutex_unlock(&u->lock);
}

int kp_uw_owner_poll(struct kp_uw_owner *u)
{
	int n;

	if (!u)
		return 0;
	pthread_mutex_lock(&u->lock);
	n = kp_uw_loader_poll(u->loader);
	pthread_mutex_unlock(&u->lock);
	return n;
}

/* Nothing stays stopped for a collection that is over. The hold is said over first (key 0:
 * no program stops or arms a process after it sees it), the programs that looked before are
 * given time to finish (they run for microseconds, without sleeping), then every process
 * marked stopped is continued and its entry goes. A full map makes room for the key: an
 * armed process is let go (it is not stopped, and will not be). */
static void end_hold(struct kp_uw_owner *u)
{
	__u32 over = 0, yes = 1, key, next, *prev = NULL, state;
	struct timespec ts = { 0, HOLD_OVER_WAIT_MS * 1000000L };

	while (bpf_map_update_elem(u->hold_fd, &over, &yes, BPF_ANY) && errno == E2BIG &&
	       !bpf_map_get_next_key(u->hold_fd, NULL, &next)) {
		if (!bpf_map_lookup_elem(u->hold_fd, &next, &state) &&
		    (state == HOLD_EXEC_STOPPED || state == HOLD_ENTRY_STOPPED)) {
			wait_stopped((int)next);
			kill((pid_t)next, SIGCONT);
		}
		bpf_map_delete_elem(u->hold_fd, &next);
	}
	nanosleep(&ts, NULL);
	while (!bpf_map_get_next_key(u->hold_fd, prev, &next)) {
		key = next;
		if (!key) {
			prev = &key; /* the key that says it is over stays */
			continue;
		}
		if (!bpf_map_lookup_elem(u->hold_fd, &key, &state) &&
		    (state == HOLD_EXEC_STOPPED || state == HOLD_ENTRY_STOPPED)) {
			wait_stopped((int)key);
			kill((pid_t)key, SIGCONT);
		}
		bpf_map_delete_elem(u->hold_fd, &key);
		prev = NULL;
	}
}

void kp_uw_owner_stop(struct kp_uw_owner *u)
{
	if (!u)
		return;
	if (u->thread_on) {
		atomic_store(&u->stop, true);
		pthread_join(u->thread, NULL);
	}
	unfollow(u);
	if (u->holds && u->hold_fd >= 0)
		end_hold(u);
	kp_uw_guard_stop(&u->guard);
	while (u->nheld)
		bpf_link__destroy(u->held[--u->nheld].entry);
	kp_uw_loader_free(u->loader);
	kp_py_free(u->py); /* after the thread, which called into it */
	pthread_mutex_destroy(&u->lock);
	free(u);
}
