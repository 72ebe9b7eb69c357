/*
 * test_sym_jit.c - JIT code (issue 22) in the resolver: the perf map a process left in /tmp
 * names its code after it exited, under issue 19's rules (its owner's or root's, not a
 * symlink, not writable by anyone, written since the process started: each refusal said
 * exactly); JIT code no map names is one "[JIT] comm" name, not one per address, and is looked
 * up again once a map appears; and what the JVM attach (jit/jvm_attach.c) refuses to do to a
 * process that is not a JVM that can be asked: no SIGQUIT to one that does not catch it, none
 * to one started with -XX:+DisableAttachMechanism, and a process that catches SIGQUIT but
 * never listens is given up on, its trigger file removed.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <signal.h>
#include <pwd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/time.h>

#include "core/core.h"
#include "jit/jit.h"
#include "kperf/pcerrc.h"
#include "kperf/symbol.h"
#include "symtest.h"

static void fini(void)
{
	SymResolverDestroy();
}

TestSuite(sym_jit, .fini = fini, .timeout = 60);

static void put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	cr_assert_not_null(f, "%s: %s", path, strerror(errno));
	fputs(text, f);
	cr_assert_eq(fclose(f), 0);
}

/* sym_hot recorded while it lives (no map yet); its perf map written afterwards, <prepare>d,
 * then it exits and is reaped; the symbol of anon + 0x110 */
static const char *left_behind(void (*prepare)(const char *path, pid_t pid), char *path,
			       size_t size, pid_t *pid)
{
	char text[128];
	struct sym_wl w;
	struct Symbol *s;
	unsigned long anon;

	cr_assert_eq(swl_start(&w, "sym_hot"), 0);
	anon = swl_addr(&w, "anon");
	*pid = w.p.pid;
	snprintf(path, size, "/tmp/perf-%d.map", (int)w.p.pid);
	unlink(path);
	cr_assert_eq(SymResolverRecordModuleNoDwarf(w.p.pid), 0, "%s", Perror());
	snprintf(text, sizeof(text), "%lx 40 left_behind\n", anon + 0x100);
	put(path, text);
	if (prepare)
		prepare(path, w.p.pid);
	swl_stop(&w);
	s = SymResolverMapAddr(*pid, anon + 0x110);
	cr_assert_not_null(s, "%s", Perror());
	unlink(path);
	return s->symbolName;
}

Test(sym_jit, a_map_left_after_exit_names_the_code)
{
	char path[64];
	pid_t pid;

	cr_expect_str_eq(left_behind(NULL, path, sizeof(path), &pid), "left_behind");
}

static void to_nobody(const char *path, pid_t pid)
{
	struct passwd *nobody = getpwnam("nobody");

	(void)pid;
	cr_assert_not_null(nobody);
	cr_assert_eq(chown(path, nobody->pw_uid, nobody->pw_gid), 0);
}

Test(sym_jit, a_left_map_of_another_user_is_ignored)
{
	struct passwd *nobody = getpwnam("nobody");
	char path[64], warn[256];
	pid_t pid;

	cr_assert_not_null(nobody);
	cr_expect_str_eq(left_behind(to_nobody, path, sizeof(path), &pid), "[unknown]");
	snprintf(warn, sizeof(warn),
		 "%s is owned by uid %u, neither root nor the owner of process %d (uid 0): anyone "
		 "may have written it, it is ignored",
		 path, (unsigned)nobody->pw_uid, (int)pid);
	cr_expect_eq(GetWarn(), KPERF_WARN_SYM_INCOMPLETE);
	cr_expect_str_eq(GetWarnMsg(), warn);
}

static void to_the_past(const char *path, pid_t pid)
{
	struct timeval tv[2];

	(void)pid;
	gettimeofday(&tv[0], NULL);
	tv[0].tv_sec -= 3600;
	tv[1] = tv[0];
	cr_assert_eq(utimes(path, tv), 0);
}

Test(sym_jit, a_left_map_older_than_the_process_is_anothers)
{
	char path[64], warn[256];
	pid_t pid;

	cr_expect_str_eq(left_behind(to_the_past, path, sizeof(path), &pid), "[unknown]");
	snprintf(warn, sizeof(warn),
		 "%s was last written before process %d started: it is another's, ignored", path,
		 (int)pid);
	cr_expect_str_eq(GetWarnMsg(), warn);
}

static void writable_by_all(const char *path, pid_t pid)
{
	(void)pid;
	cr_assert_eq(chmod(path, 0666), 0);
}

Test(sym_jit, a_map_anyone_may_write_is_ignored)
{
	char path[64], warn[256];
	pid_t pid;

	cr_expect_str_eq(left_behind(writable_by_all, path, sizeof(path), &pid), "[unknown]");
	snprintf(warn, sizeof(warn), "%s may be written by anyone (mode 666): it is ignored", path);
	cr_expect_str_eq(GetWarnMsg(), warn);
}

static void through_a_symlink(const char *path, pid_t pid)
{
	char target[64];

	snprintf(target, sizeof(target), "/tmp/kperf-jit-target-%d", (int)pid);
	unlink(target);
	cr_assert_eq(rename(path, target), 0);
	cr_assert_eq(symlink(target, path), 0);
}

Test(sym_jit, a_symlink_is_not_followed)
{
	char path[64], warn[256], target[64];
	pid_t pid;

	cr_expect_str_eq(left_behind(through_a_symlink, path, sizeof(path), &pid), "[unknown]");
	snprintf(target, sizeof(target), "/tmp/kperf-jit-target-%d", (int)pid);
	unlink(target);
	snprintf(warn, sizeof(warn), "%s is a symbolic link: it is ignored", path);
	cr_expect_str_eq(GetWarnMsg(), warn);
}

Test(sym_jit, jit_code_no_map_names_is_one_name)
{
	long page = sysconf(_SC_PAGESIZE);
	char *code =
		mmap(NULL, 2 * page, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char label[64], comm[32] = "", path[64], text[128];
	struct Symbol *a, *b;
	FILE *f = fopen("/proc/self/comm", "r");

	cr_assert_neq(code, MAP_FAILED);
	cr_assert_not_null(f);
	cr_assert_not_null(fgets(comm, sizeof(comm), f));
	fclose(f);
	comm[strcspn(comm, "\n")] = '\0';
	snprintf(label, sizeof(label), "[JIT] %s", comm);
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	unlink(path);
	cr_assert_eq(SymResolverRecordModuleNoDwarf(getpid()), 0, "%s", Perror());
	a = SymResolverMapAddr(getpid(), (unsigned long)code + 0x10);
	b = SymResolverMapAddr(getpid(), (unsigned long)code + page + 0x20);
	cr_assert_not_null(a, "%s", Perror());
	cr_assert_not_null(b, "%s", Perror());
	cr_expect_str_eq(a->symbolName, label);
	cr_expect_eq(a->symbolName, b->symbolName, "one name for all of it");
	cr_expect_str_eq(a->module, "[anon]");
	cr_expect_eq(a->offset, 0x10);
	cr_expect_eq(b->offset, (unsigned long)page + 0x20);
	/* a map appears: the code is named by it */
	snprintf(text, sizeof(text), "%lx 100 now_named\n", (unsigned long)code);
	put(path, text);
	cr_assert_eq(SymResolverIncrUpdateModuleNoDwarf(getpid()), 0, "%s", Perror());
	a = SymResolverMapAddr(getpid(), (unsigned long)code + 0x10);
	cr_expect_str_eq(a->symbolName, "now_named");
	unlink(path);
	munmap(code, 2 * page);
}

/* ---- the JVM attach, on processes that are not JVMs ---- */

/* does /proc/PID/status say <pid> catches SIGQUIT (-1: no such process)? */
static int catches_quit(pid_t pid)
{
	char path[64], *buf = NULL, *p;
	int caught = -1;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if (kp_read_file(path, &buf, NULL))
		return -1;
	p = strstr(buf, "\nSigCgt:");
	if (p)
		caught = (strtoull(p + 8, NULL, 16) >> (SIGQUIT - 1)) & 1;
	free(buf);
	return caught;
}

/* sh -c <script> with $0 = <arg0>; running the script (with its trap, when <trap>) */
static struct tu_proc start_sh(const char *script, const char *arg0, bool trap)
{
	char *argv[] = { "/bin/sh", "-c", (char *)script, (char *)arg0, NULL };
	struct tu_proc p;
	char path[64], *buf = NULL;
	int i;

	/* a signal ignored when a shell starts cannot be trapped there (POSIX), and a command
	 * started in the background of a non-interactive shell has SIGQUIT ignored: the script's
	 * trap would never take */
	signal(SIGQUIT, SIG_DFL);
	p = tu_spawn_v(argv, 0);

	cr_assert_gt(p.pid, 0);
	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)p.pid);
	for (i = 0; i < 500; i++) {
		bool ready = kp_read_file(path, &buf, NULL) == 0 && !strcmp(buf, "/bin/sh") &&
			     (!trap || catches_quit(p.pid) == 1);

		free(buf);
		buf = NULL;
		if (ready)
			return p;
		tu_sleep_ms(10);
	}
	tu_kill(&p);
	cr_assert_fail("sh did not start its script");
	return p;
}

Test(sym_jit, no_sigquit_to_a_process_that_does_not_catch_it)
{
	struct tu_proc p = start_sh("while :; do sleep 0.05; done", "sh", false);
	char why[256] = "";

	cr_expect_eq(kp_jvm_write_perfmap(p.pid, p.pid, why, sizeof(why)), -EPERM);
	cr_expect_str_eq(why, "it does not catch SIGQUIT (started with -Xrs?): it is not sent");
	cr_expect_eq(kill(p.pid, 0), 0, "it was killed");
	tu_kill(&p);
}

Test(sym_jit, no_sigquit_to_a_jvm_that_disabled_attach)
{
	struct tu_proc p = start_sh("trap 'echo' QUIT; while :; do sleep 0.05; done",
				    "-XX:+DisableAttachMechanism", true);
	char why[256] = "";

	cr_expect_eq(kp_jvm_write_perfmap(p.pid, p.pid, why, sizeof(why)), -EPERM);
	cr_expect_str_eq(why, "its attach mechanism is disabled (-XX:+DisableAttachMechanism)");
	tu_kill(&p);
}

Test(sym_jit, a_process_that_never_listens_is_given_up_on)
{
	struct tu_proc p =
		start_sh("trap 'echo quit' QUIT; while :; do sleep 0.05; done", "sh", true);
	char why[256] = "", want[128], trigger[64];
	struct stat st;

	cr_expect_eq(kp_jvm_write_perfmap(p.pid, p.pid, why, sizeof(why)), -ETIMEDOUT);
	snprintf(want, sizeof(want), "no /tmp/.java_pid%d 5 s after SIGQUIT", (int)p.pid);
	cr_expect_str_eq(why, want);
	snprintf(trigger, sizeof(trigger), "/tmp/.attach_pid%d", (int)p.pid);
	cr_expect_neq(stat(trigger, &st), 0, "%s was left behind", trigger);
	cr_expect_eq(kill(p.pid, 0), 0, "it was killed");
	tu_kill(&p);
}
