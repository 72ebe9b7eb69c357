/*
 * test_sym_trust.c - files other users can write are not trusted (issue 19): a perf map in
 * /tmp owned by neither root nor the process's owner is ignored with a warning and the
 * owner's is used; a 3 GB sparse map is refused at its size, not read; every file read whole
 * has a cap; a path under /proc/PID/root resolves inside that root, with openat2 and with
 * the component walk of older kernels: no symlink, absolute or relative, and no ".." leads
 * to the host's files.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <pwd.h>
#include <sys/stat.h>

#include "core/core.h"
#include "kperf/pcerrc.h"
#include "kperf/symbol.h"
#include "kperf/kperf.h"
#include "symtest.h"

static void fini(void)
{
	SymResolverDestroy();
	kp_rootpath_test_no_openat2(false);
}

TestSuite(sym_trust, .fini = fini, .timeout = 60);

/* run a shell command made with printf; its status */
static int shell(const char *fmt, const char *arg)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd), fmt, arg);
	return system(cmd);
}

static void put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	cr_assert_not_null(f, "%s: %s", path, strerror(errno));
	fputs(text, f);
	cr_assert_eq(fclose(f), 0);
}

Test(sym_trust, a_perf_map_of_another_user_is_ignored_the_owners_used)
{
	struct passwd *nobody = getpwnam("nobody");
	char path[64], text[128], warn[256];
	struct sym_wl w;
	struct Symbol *s;
	unsigned long anon;

	cr_assert_not_null(nobody);
	cr_assert_eq(swl_start(&w, "sym_hot"), 0);
	anon = swl_addr(&w, "anon");
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)w.p.pid);
	snprintf(text, sizeof(text), "%lx 40 planted_by_nobody\n", anon + 0x100);
	put(path, text);
	cr_assert_eq(chown(path, nobody->pw_uid, nobody->pw_gid), 0);
	cr_assert_eq(SymResolverRecordModuleNoDwarf(w.p.pid), 0, "%s", Perror());
	snprintf(warn, sizeof(warn),
		 "%s is owned by uid %u, neither root nor the owner of process %d (uid 0): anyone "
		 "may have written it, it is ignored",
		 path, (unsigned)nobody->pw_uid, (int)w.p.pid);
	cr_expect_eq(GetWarn(), KPERF_WARN_SYM_INCOMPLETE);
	cr_expect_str_eq(GetWarnMsg(), warn);
	s = SymResolverMapAddr(w.p.pid, anon + 0x110);
	cr_assert_not_null(s, "%s", Perror());
	cr_expect_str_eq(s->symbolName, "[unknown]", "the planted name was used");
	/* the same file, now the owner's (root's): used */
	cr_assert_eq(chown(path, 0, 0), 0);
	cr_assert_eq(SymResolverIncrUpdateModuleNoDwarf(w.p.pid), 0, "%s", Perror());
	s = SymResolverMapAddr(w.p.pid, anon + 0x110);
	cr_expect_str_eq(s->symbolName, "planted_by_nobody");
	unlink(path);
	swl_stop(&w);
}

/* a process of nobody: nobody's own map is its owner's */
Test(sym_trust, the_process_owners_map_is_used)
{
	struct passwd *nobody = getpwnam("nobody");
	char bin[PATH_MAX], path[64], text[128];
	char *argv[] = {
		"/usr/bin/setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", bin, NULL
	};
	struct sym_wl w;
	struct Symbol *s;
	unsigned long anon;

	cr_assert_not_null(nobody);
	abs_of(tu_path("workloads/sym_hot"), bin);
	cr_assert_eq(swl_start_argv(&w, argv), 0);
	anon = swl_addr(&w, "anon");
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)w.p.pid);
	snprintf(text, sizeof(text), "%lx 40 nobodys_jit\n", anon + 0x100);
	put(path, text);
	cr_assert_eq(chown(path, nobody->pw_uid, nobody->pw_gid), 0);
	cr_assert_eq(SymResolverRecordModuleNoDwarf(w.p.pid), 0, "%s", Perror());
	s = SymResolverMapAddr(w.p.pid, anon + 0x110);
	cr_assert_not_null(s, "%s", Perror());
	cr_expect_str_eq(s->symbolName, "nobodys_jit");
	unlink(path);
	swl_stop(&w);
}

Test(sym_trust, a_huge_sparse_perf_map_is_refused_by_its_size)
{
	char path[64], warn[256];
	struct sym_wl w;
	int fd;

	cr_assert_eq(swl_start(&w, "sym_hot"), 0);
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)w.p.pid);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	cr_assert_geq(fd, 0);
	cr_assert_eq(ftruncate(fd, 3LL << 30), 0);
	close(fd);
	cr_assert_eq(SymResolverRecordModuleNoDwarf(w.p.pid), 0, "%s", Perror());
	snprintf(warn, sizeof(warn),
		 "%s is 3221225472 bytes, more than the 64 MiB a perf map may have: it is ignored",
		 path);
	cr_expect_str_eq(GetWarnMsg(), warn);
	unlink(path);
	swl_stop(&w);
}

Test(sym_trust, whole_file_reads_have_a_cap)
{
	char path[64], *buf = NULL;
	size_t len = 0;
	int fd;

	snprintf(path, sizeof(path), "/tmp/kperf-big-%d", getpid());
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	cr_assert_geq(fd, 0);
	cr_assert_eq(ftruncate(fd, KP_READ_FILE_MAX + 1), 0);
	close(fd);
	cr_expect_eq(kp_read_file(path, &buf, &len), -EFBIG);
	cr_expect_null(buf);
	cr_expect_eq(kp_read_file_max(path, &buf, &len, 100), -EFBIG);
	unlink(path);
	/* a /proc file says size 0: cut while reading */
	cr_expect_eq(kp_read_file_max("/proc/self/maps", &buf, &len, 10), -EFBIG);
	cr_assert_eq(kp_read_file_max("/proc/self/maps", &buf, &len, 1 << 20), 0);
	free(buf);
}

/* ---- /proc/PID/root ---- */

static char root_dir[64];
static pid_t chrooted = -1;

/* a process whose root is a directory holding links that point outside of it */
static void chroot_setup(void)
{
	char p[256];
	int go[2];
	char c;

	snprintf(root_dir, sizeof(root_dir), "/tmp/kperf-root-XXXXXX");
	cr_assert_not_null(mkdtemp(root_dir));
	snprintf(p, sizeof(p), "%s/etc", root_dir);
	cr_assert_eq(mkdir(p, 0755), 0);
	snprintf(p, sizeof(p), "%s/etc/passwd", root_dir);
	put(p, "inside\n");
	snprintf(p, sizeof(p), "%s/usr/lib/debug/.build-id/ab", root_dir);
	cr_assert_eq(shell("mkdir -p %s", p), 0);
	snprintf(p, sizeof(p), "%s/usr/lib/debug/.build-id/ab/abs.debug", root_dir);
	cr_assert_eq(symlink("/etc/passwd", p), 0);
	snprintf(p, sizeof(p), "%s/usr/lib/debug/.build-id/ab/rel.debug", root_dir);
	cr_assert_eq(symlink("../../../../../../../../../etc/passwd", p), 0);
	snprintf(p, sizeof(p), "%s/usr/lib/debug/.build-id/ab/proc.debug", root_dir);
	cr_assert_eq(symlink("/proc/1/root/etc/passwd", p), 0);
	snprintf(p, sizeof(p), "%s/loop", root_dir);
	cr_assert_eq(symlink("loop", p), 0);
	cr_assert_eq(pipe(go), 0);
	chrooted = fork();
	if (chrooted == 0) {
		if (chroot(root_dir) || chdir("/"))
			_exit(1);
		if (write(go[1], "r", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	close(go[1]);
	cr_assert_eq(read(go[0], &c, 1), 1);
	close(go[0]);
}

static void chroot_teardown(void)
{
	if (chrooted > 0) {
		kill(chrooted, SIGKILL);
		waitpid(chrooted, NULL, 0);
	}
	kp_rootpath_test_no_openat2(false);
	shell("rm -rf %s", root_dir);
}

static void confined(bool openat2)
{
	static const char *const paths[] = {
		"usr/lib/debug/.build-id/ab/abs.debug",
		"usr/lib/debug/.build-id/ab/rel.debug",
		"../../../../etc/passwd",
		"usr/../../../etc/passwd",
		"etc/passwd",
	};
	char path[256], p[256], *text;
	unsigned i;

	kp_rootpath_test_no_openat2(!openat2);
	for (i = 0; i < KP_ARRAY_SIZE(paths); i++) {
		snprintf(path, sizeof(path), "/proc/%d/root/%s", (int)chrooted, paths[i]);
		cr_assert_eq(kp_read_file(path, &text, NULL), 0, "%s", path);
		cr_expect_str_eq(text, "inside\n", "%s left the root", path);
		free(text);
	}
	/* a magic link is not followed; a link to itself ends */
	snprintf(path, sizeof(path), "/proc/%d/root/usr/lib/debug/.build-id/ab/proc.debug",
		 (int)chrooted);
	cr_expect_lt(kp_read_file(path, &text, NULL), 0, "%s reached another root", path);
	snprintf(path, sizeof(path), "/proc/%d/root/loop", (int)chrooted);
	cr_expect_eq(kp_read_file(path, &text, NULL), -ELOOP);
	/* nothing inside: the host's file is not the answer */
	snprintf(p, sizeof(p), "%s/etc/passwd", root_dir);
	unlink(p);
	snprintf(path, sizeof(path), "/proc/%d/root/usr/lib/debug/.build-id/ab/abs.debug",
		 (int)chrooted);
	cr_expect_eq(kp_read_file(path, &text, NULL), -ENOENT);
	{
		struct stat st;

		cr_expect_eq(kp_stat_path(path, &st), -ENOENT);
		snprintf(path, sizeof(path), "/proc/%d/root", (int)chrooted);
		cr_expect_eq(kp_stat_path(path, &st), 0);
		cr_expect(S_ISDIR(st.st_mode));
	}
}

Test(sym_trust, proc_root_paths_stay_in_the_root_openat2, .init = chroot_setup,
     .fini = chroot_teardown)
{
	confined(true);
}

Test(sym_trust, proc_root_paths_stay_in_the_root_walk, .init = chroot_setup,
     .fini = chroot_teardown)
{
	confined(false);
}

/* a debug file next to a stripped binary, written by someone else: not used */
Test(sym_trust, a_debug_file_of_another_user_is_ignored)
{
	struct passwd *nobody = getpwnam("nobody");
	char dir[64], bin[128], debug[128], warn[512];
	char *argv[] = { bin, NULL };
	struct sym_wl w;
	struct Symbol *s;

	cr_assert_not_null(nobody);
	scratch_dir(dir, sizeof(dir));
	snprintf(bin, sizeof(bin), "%s/sym_hot", dir);
	snprintf(debug, sizeof(debug), "%s/sym_hot.debug", dir);
	cr_assert_eq(sh("objcopy --only-keep-debug '%s' '%s'", tu_path("workloads/sym_hot"), debug),
		     0);
	cr_assert_eq(sh("objcopy --strip-all --add-gnu-debuglink='%s' '%s' '%s'", debug,
			tu_path("workloads/sym_hot"), bin),
		     0);
	cr_assert_eq(sh("cp '%s' '%s/'", tu_path("workloads/libwl.so"), dir), 0);
	cr_assert_eq(chown(debug, nobody->pw_uid, nobody->pw_gid), 0);
	cr_assert_eq(swl_start_argv(&w, argv), 0);
	cr_assert_eq(SymResolverRecordModuleNoDwarf(w.p.pid), 0, "%s", Perror());
	snprintf(warn, sizeof(warn),
		 "%s is owned by uid %u, neither root nor the owner of process %d (uid 0)", debug,
		 (unsigned)nobody->pw_uid, (int)w.p.pid);
	cr_expect(strstr(GetWarnMsg(), warn), "%s", GetWarnMsg());
	s = SymResolverMapAddr(w.p.pid, swl_addr(&w, "hot_loop"));
	cr_assert_not_null(s, "%s", Perror());
	cr_expect_str_eq(s->symbolName, "[unknown]", "the foreign debug file named it");
	swl_stop(&w);
	/* root's: used */
	SymResolverDestroy();
	cr_assert_eq(chown(debug, 0, 0), 0);
	cr_assert_eq(swl_start_argv(&w, argv), 0);
	cr_assert_eq(SymResolverRecordModuleNoDwarf(w.p.pid), 0, "%s", Perror());
	s = SymResolverMapAddr(w.p.pid, swl_addr(&w, "hot_loop"));
	cr_expect_str_eq(s->symbolName, "hot_loop");
	swl_stop(&w);
	rm_tree(dir);
}
