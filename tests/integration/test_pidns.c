/*
 * test_pidns.c - kperf-bpf and PID namespaces (a container without hostPID, a sidecar), from
 * the host's side: each test makes a namespace with `unshare --pid --fork --mount-proc` and
 * runs in it one test of suite pidns_in (pidns_inner.c: this very binary, re-executed), which
 * asserts exact facts there: the same exact syscall counts as on the host by a launched
 * command and by -p NSPID, the hot function of a profile, counts, UTrace hits, two nested
 * namespaces, a pid reused after its exit, targets and processes out of the namespace's sight.
 * From the host, a process of such a namespace (with a root of its own) is traced by its host
 * pid, exactly, and its symbols found through /proc/PID/root. Root is needed (unshare, BPF).
 */
#include <criterion/criterion.h>
#include <limits.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "kperf/kperf.h"
#include "pidns_testutil.h"
#include "trace_testutil.h"

TestSuite(pidns, .timeout = 300);

/* Run test pidns_in/<name> of this binary inside a new PID namespace (with its own /proc when
 * <mount_proc>), with <env> added ("" for none): it must pass, and leave no BPF program. */
static void inner(const char *name, bool mount_proc, const char *env)
{
	char self[PATH_MAX], cmd[2 * PATH_MAX], want[64], *out;
	ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	int before = tu_bpf_prog_count(), status;

	cr_assert_gt(len, 0);
	self[len] = '\0';
	/* without BXFI_MAP: criterion takes a process that has it for one of its workers */
	if (system("command -v unshare >/dev/null 2>&1"))
		cr_skip_test("unshare (util-linux) is not installed");
	snprintf(cmd, sizeof(cmd),
		 "unshare --pid --fork %s env -u BXFI_MAP KPERF_PIDNS_INNER=1 %s '%s' --filter "
		 "'pidns_in/%s' "
		 "--jobs 1 2>&1",
		 mount_proc ? "--mount-proc" : "", env, self, name);
	out = tu_run(cmd, &status);
	cr_assert_not_null(out);
	snprintf(want, sizeof(want), "Tested: 1 | Passing: 1 |");
	cr_assert(status == 0 && strstr(out, want), "pidns_in/%s inside a PID namespace:\n%s", name,
		  out);
	free(out);
	cr_assert_leq(tu_bpf_prog_count_settle(before), before, "BPF programs left behind");
}

Test(pidns, trace_inside_a_namespace)
{
	inner("trace_by_pid", true, "");
	inner("trace_cli_by_pid", true, "");
	inner("trace_cli_launched", true, "");
}

Test(pidns, record_inside_a_namespace)
{
	inner("record_by_pid", true, "");
	inner("record_cli", true, "");
}

Test(pidns, stat_inside_a_namespace)
{
	inner("stat_by_pid", true, "");
}

Test(pidns, utrace_inside_a_namespace)
{
	inner("utrace_by_pid", true, "");
}

Test(pidns, two_nested_namespaces)
{
	inner("nested_namespaces", true, "");
}

Test(pidns, a_pid_reused_after_exit)
{
	inner("pid_reused_after_exit", true, "");
}

/* workload <argv> (tu_spawn_v's way), killed when this test process ends: a failed assertion
 * leaves nothing behind */
static struct tu_proc spawn_bound(char *const argv[])
{
	struct tu_proc p = { -1, -1, -1 };
	char path[4096];

	snprintf(path, sizeof(path), "%s/workloads/%s", tu_build(), argv[0]);
	p.pid = fork();
	if (p.pid == 0) {
		int devnull = open("/dev/null", O_RDWR);

		if (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() == 1)
			_exit(126);
		if (devnull >= 0) {
			dup2(devnull, 0);
			dup2(devnull, 1);
		}
		execv(path, argv);
		_exit(127);
	}
	return p;
}

Test(pidns, what_the_namespace_does_not_contain)
{
	/* a host process busy with getppid, which the namespace cannot see */
	char *argv[] = { "syscalls", "--getppid", "2000000000", "--writes",
			 "0",	     "--fails",	  "0",		NULL };
	struct tu_proc host = spawn_bound(argv);
	char env[64];

	cr_assert_gt(host.pid, 0);
	snprintf(env, sizeof(env), "KPERF_PIDNS_HOSTPID=%d", host.pid);
	inner("target_outside_the_namespace", true, env);
	inner("every_process_from_inside", true, env);
	inner("sampling_every_cpu_from_inside", true, env);
	tu_kill(&host);
}

/* mstx markers: by namespace pid (and the child it forks), and of the processes the caller
 * starts while a host process marks in a loop through the same library (not collected: it is
 * not one of them); off-CPU time by namespace pid (pidns_activity.c) */
Test(pidns, markers_and_offcpu_inside_a_namespace)
{
	char loop[1024], *argv[] = { "/bin/sh", "-c", loop, NULL };
	struct tu_proc host;
	char env[64];

	inner("markers_by_pid", true, "");
	inner("offcpu_by_pid", true, "");
	/* a few marks every 10 ms (a busy loop of marks would fill the ring buffer and drop
	 * the namespace's own), for as long as this test process lives: a failed assertion
	 * does not leave it behind */
	snprintf(loop, sizeof(loop),
		 "while kill -0 %d 2>/dev/null; do %s/workloads/mstx_wl --marks 1 --calls 0; "
		 "sleep 0.01; done",
		 (int)getpid(), tu_build());
	host = tu_spawn_v(argv, 0);
	cr_assert_gt(host.pid, 0);
	snprintf(env, sizeof(env), "KPERF_PIDNS_HOSTPID=%d", host.pid);
	inner("markers_of_every_process", true, env);
	inner("markers_of_all_pids", true, env);
	tu_kill(&host);
}

Test(pidns, proc_of_another_namespace_is_refused)
{
	char cmd[512], *out;
	int status;

	inner("proc_of_another_namespace", false, "");
	snprintf(cmd, sizeof(cmd), "unshare --pid --fork %s/bin/kperf-bpf trace -d 1 2>&1",
		 tu_build());
	out = tu_run(cmd, &status);
	cr_assert_eq(status, 1, "%s", out);
	cr_assert(strstr(out, "kperf-bpf trace: /proc belongs to another PID namespace than "
			      "kperf-bpf's (pid:["),
		  "%s", out);
	cr_assert(strstr(out, "Mount the namespace's own /proc (unshare --pid --fork "
			      "--mount-proc, or mount -t proc proc /proc in a new mount "
			      "namespace)\n"),
		  "%s", out);
	free(out);
}

/* ---- from the host: a process of a namespace with a root of its own ---- */

/* a root in <dir> for the workloads: them, libwl.so beside them, /dev/null, and where to mount
 * /proc and the system's libraries (bind_system) */
static void fill_root(char *dir, size_t size)
{
	char cmd[16 * PATH_MAX];
	struct stat st;

	snprintf(dir, size, "/tmp/kperf-pidns-root-%d", getpid());
	snprintf(cmd, sizeof(cmd),
		 "rm -rf '%1$s' && mkdir -p '%1$s/proc' '%1$s/dev' && "
		 "cp '%2$s/workloads/syscalls' '%2$s/workloads/cpuburn' '%2$s/workloads/libwl.so' "
		 "'%1$s/'",
		 dir, tu_build());
	cr_assert_eq(system(cmd), 0, "%s", cmd);
	snprintf(cmd, sizeof(cmd), "%s/dev/null", dir);
	cr_assert_eq(stat("/dev/null", &st), 0);
	cr_assert_eq(mknod(cmd, S_IFCHR | 0666, st.st_rdev), 0, "mknod %s: %s", cmd,
		     strerror(errno));
}

/* the system's libraries and loader in <root> (of a new mount namespace): /usr, /lib* bound
 * there, or the same symlinks (a merged /usr). 0 or -1. */
static int bind_system(const char *root)
{
	static const char *const dirs[] = { "usr", "lib", "lib64", "lib32" };
	char from[16], to[PATH_MAX + 16], link[PATH_MAX];
	struct stat st;
	ssize_t n;
	size_t i;

	for (i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		snprintf(from, sizeof(from), "/%s", dirs[i]);
		snprintf(to, sizeof(to), "%s/%s", root, dirs[i]);
		if (lstat(from, &st))
			continue;
		if (S_ISLNK(st.st_mode)) {
			n = readlink(from, link, sizeof(link) - 1);
			if (n <= 0)
				return -1;
			link[n] = '\0';
			if (symlink(link, to))
				return -1;
		} else if (mkdir(to, 0755) || mount(from, to, NULL, MS_BIND | MS_REC, NULL)) {
			return -1;
		}
	}
	return 0;
}

/* The init of a new PID namespace, in a new mount namespace whose root is a tmpfs filled from
 * <dir>, with the system's libraries bound in (the tmpfs is mounted nowhere else: the
 * workload's file is reached from here through /proc/PID/root only), running /<argv[0]>
 * <argv...>. Returns the process of this side that waits for it (stdin a pipe: tu_go
 * releases a --wait workload); *child is the init's pid here. */
static struct tu_proc spawn_contained(const char *dir, char *const argv[], pid_t *child)
{
	struct tu_proc u = { -1, -1, -1 };
	int in[2], rep[2], st;

	cr_assert_eq(pipe(in), 0);
	cr_assert_eq(pipe(rep), 0);
	u.pid = fork();
	if (u.pid == 0) {
		pid_t c;

		dup2(in[0], 0);
		close(in[1]);
		close(rep[0]);
		if (unshare(CLONE_NEWPID | CLONE_NEWNS) ||
		    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL))
			_exit(120);
		c = fork();
		if (c == 0) {
			char root[PATH_MAX + 8], exe[4 * PATH_MAX];

			/* pid 1 of the new namespace */
			snprintf(root, sizeof(root), "%s/r", dir);
			if ((mkdir(root, 0755) && errno != EEXIST) ||
			    mount("none", root, "tmpfs", 0, NULL))
				_exit(121);
			snprintf(exe, sizeof(exe), "cp -a '%s'/. '%s'/ 2>/dev/null; rm -rf '%s/r'",
				 dir, root, root);
			if (system(exe) || bind_system(root) || chdir(root) || mkdir("old", 0755) ||
			    syscall(SYS_pivot_root, ".", "old") || chdir("/") ||
			    umount2("/old", MNT_DETACH) || rmdir("/old") ||
			    mount("proc", "/proc", "proc", 0, NULL))
				_exit(122);
			snprintf(exe, sizeof(exe), "/%s", argv[0]);
			execv(exe, argv);
			_exit(127);
		}
		if (c < 0 || write(rep[1], &c, sizeof(c)) != sizeof(c))
			_exit(123);
		if (waitpid(c, &st, 0) != c)
			_exit(124);
		_exit(WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
	}
	close(in[0]);
	close(rep[1]);
	u.go_fd = in[1];
	*child = 0;
	if (read(rep[0], child, sizeof(*child)) != (ssize_t)sizeof(*child) ||
	    tu_wait_blocked(*child)) {
		kill(u.pid, SIGKILL);
		cr_assert_fail("the contained workload did not start (exit status %d)",
			       tu_wait(&u));
	}
	close(rep[0]);
	return u;
}

Test(pidns, from_the_host_by_host_pid)
{
	char *evts[] = { "cpu-clock" };
	char dir[PATH_MAX], cmd[PATH_MAX + 16], want[64];
	struct PmuTraceAttr ta = { .numPid = 1 };
	struct PmuAttr pa = { .evtList = evts,
			      .numEvt = 1,
			      .useFreq = 1,
			      .freq = 999,
			      .callStack = 1,
			      .symbolMode = RESOLVE_ELF,
			      .numPid = 1 };
	char *wl_sys[] = { "syscalls", "--wait", NULL };
	char *wl_burn[] = { "cpuburn", "--ms", "400", "--wait", NULL };
	struct PmuTraceData *d = NULL;
	struct PmuData *s = NULL;
	struct ns_counts c = { 0 };
	uint64_t all, hot;
	struct tu_proc u;
	pid_t child;
	int pd, n, i;

	if (system("command -v unshare >/dev/null 2>&1"))
		cr_skip_test("unshare (util-linux) is not installed");
	fill_root(dir, sizeof(dir));

	/* syscalls, traced by its host pid: exact, and its pids are the host's */
	u = spawn_contained(dir, wl_sys, &child);
	ta.pidList = &child;
	pd = PmuTraceOpen(TRACE_SYS_CALL, &ta);
	cr_assert_gt(pd, 0, "PmuTraceOpen: %d %s", Perrorno(), Perror());
	cr_assert_eq(PmuTraceEnable(pd), 0, "%s", Perror());
	tu_go(&u);
	cr_assert_eq(tu_wait(&u), 0);
	cr_assert_eq(PmuTraceDisable(pd), 0);
	n = PmuTraceRead(pd, &d);
	cr_assert_gt(n, 0, "%s", Perror());
	for (i = 0; i < n; i++) {
		cr_assert_eq(d[i].pid, child);
		cr_assert_eq(d[i].tid, child);
		if (!strcmp(d[i].funcs, "getppid"))
			cr_assert_eq(KperfTraceGetExt(d, i)->ret, 0, "pid 1 of its namespace");
		ns_add(&c, d[i].funcs, 1, KperfTraceGetExt(d, i)->ret < 0);
	}
	ns_assert_workload(&c, 1);
	PmuTraceDataFree(d);
	c = ns_summary(pd, child);
	ns_assert_workload(&c, 1);
	tt_finish(pd);

	/* cpuburn, sampled by its host pid: its files are found through /proc/PID/root */
	u = spawn_contained(dir, wl_burn, &child);
	pa.pidList = &child;
	pd = PmuOpen(SAMPLING, &pa);
	cr_assert_gt(pd, 0, "PmuOpen: %d %s", Perrorno(), Perror());
	cr_assert_eq(PmuEnable(pd), 0, "%s", Perror());
	tu_go(&u);
	cr_assert_eq(tu_wait(&u), 0);
	PmuDisable(pd);
	n = PmuRead(pd, &s);
	cr_assert_gt(n, 0, "PmuRead: %s", Perror());
	ns_leaf_share(s, n, "hot_loop", &all, &hot);
	cr_assert_gt(all, 50, "%lu samples", all);
	cr_assert_geq(hot * 10, all * 8, "hot_loop is the leaf of %lu of %lu samples", hot, all);
	for (i = 0; i < n; i++) {
		struct Symbol *sym = s[i].stack ? s[i].stack->symbol : NULL;

		cr_assert_eq(s[i].pid, child);
		if (!sym || strcmp(sym->symbolName, "hot_loop"))
			continue;
		/* the path the process knows; its root is mounted nowhere here */
		cr_assert_str_eq(sym->module, "/cpuburn");
		snprintf(want, sizeof(want), "/proc/%d/root", child);
		cr_assert_str_eq(sym->mntPoint, want);
	}
	PmuDataFree(s);
	PmuClose(pd);
	cr_assert_eq(tu_bpf_fds(), 0);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	cr_assert_eq(system(cmd), 0);
}
