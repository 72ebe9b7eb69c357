/*
 * test_sym_mnt.c - Symbol.mntPoint of a process in its own mount namespace with its own root
 * (a container, made here with unshare + pivot_root, root needed): the module is the path the
 * process knows, mntPoint the directory that is its root on this side, and mntPoint + module
 * the very file; "/proc/PID/root" when its root is mounted nowhere here (a tmpfs of its own).
 */
#include <criterion/criterion.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "kperf/pcerrc.h"
#include "kperf/symbol.h"
#include "unit/symtest.h"

static void fini(void)
{
	SymResolverDestroy();
}

TestSuite(sym_mnt, .fini = fini, .timeout = 60);

/* a root for sym_hot in <dir>: the workload, libwl.so beside it (its rpath is $ORIGIN), and
 * the libraries the dynamic loader lists, at their paths (LD_TRACE_LOADED_OBJECTS is what
 * ldd asks the loader for; ldd itself is a bash script, and a root may have no bash) */
static void fill_root(const char *dir)
{
	char bin[PATH_MAX], lib[PATH_MAX];

	abs_of(tu_path("workloads/sym_hot"), bin);
	abs_of(tu_path("workloads/libwl.so"), lib);
	cr_assert_eq(sh("cp '%s' '%s/sym_hot' && cp '%s' '%s/libwl.so' && "
			"for f in $(LD_TRACE_LOADED_OBJECTS=1 '%s' | grep -o '/[^ ]*'); do "
			"mkdir -p '%s'$(dirname $f) && cp -L $f '%s'$f; done",
			bin, dir, lib, dir, bin, dir, dir),
		     0);
}

/* Start /sym_hot inside <dir> as its root, in a new mount namespace; with <tmpfs>, the root is
 * a tmpfs mounted in that namespace only, filled from <dir>. */
static int start_contained(struct sym_wl *w, const char *dir, bool tmpfs)
{
	int in[2], out[2];
	size_t n = 0;

	memset(w, 0, sizeof(*w));
	if (pipe(in) || pipe(out))
		return -1;
	w->p.pid = fork();
	if (w->p.pid == 0) {
		char root[PATH_MAX + 8];
		char *argv[] = { "/sym_hot", NULL };

		dup2(in[0], 0);
		dup2(out[1], 1);
		close(in[1]);
		close(out[0]);
		snprintf(root, sizeof(root), "%s%s", dir, tmpfs ? "/r" : "");
		if (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL))
			_exit(120);
		if (tmpfs) {
			if (mkdir(root, 0755) || mount("none", root, "tmpfs", 0, NULL) ||
			    sh("cp -a '%s'/. '%s'/ 2>/dev/null; rm -rf '%s/r/r'", dir, root, dir))
				_exit(121);
		} else if (mount(root, root, NULL, MS_BIND, NULL)) {
			_exit(122);
		}
		if (chdir(root) || mkdir("old", 0755) || syscall(SYS_pivot_root, ".", "old") ||
		    chdir("/") || umount2("/old", MNT_DETACH) || rmdir("/old"))
			_exit(123);
		/* no /proc in there: the loader cannot work out $ORIGIN, the rpath of sym_hot */
		setenv("LD_LIBRARY_PATH", "/", 1);
		execv(argv[0], argv);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	w->p.go_fd = in[1];
	w->p.out_fd = out[0];
	fcntl(w->p.go_fd, F_SETFD, FD_CLOEXEC);
	fcntl(w->p.out_fd, F_SETFD, FD_CLOEXEC);
	while (!strstr(w->text, "ready\n") && n + 1 < sizeof(w->text)) {
		struct pollfd pfd = { w->p.out_fd, POLLIN, 0 };
		ssize_t r;

		if (poll(&pfd, 1, 10000) <= 0)
			return -1;
		r = read(w->p.out_fd, w->text + n, sizeof(w->text) - n - 1);
		if (r <= 0)
			return -1;
		n += (size_t)r;
		w->text[n] = '\0';
	}
	return 0;
}

static void same_file(const char *a, const char *b)
{
	struct stat x, y;

	cr_assert_eq(stat(a, &x), 0, "%s", a);
	cr_assert_eq(stat(b, &y), 0, "%s", b);
	cr_assert(x.st_dev == y.st_dev && x.st_ino == y.st_ino, "%s and %s differ", a, b);
}

Test(sym_mnt, a_bind_mounted_root_is_named_by_its_directory)
{
	char dir[PATH_MAX], path[2 * PATH_MAX], real[PATH_MAX];
	struct sym_wl w;
	struct Symbol *s;
	pid_t pid;

	scratch_dir(dir, sizeof(dir));
	fill_root(dir);
	cr_assert_not_null(realpath(dir, real));
	cr_assert_eq(start_contained(&w, dir, false), 0, "the contained workload started");
	pid = w.p.pid;
	cr_assert_eq(SymResolverRecordModule(pid), 0, "%s", Perror());
	s = SymResolverMapAddr(pid, swl_addr(&w, "hot_loop"));
	cr_assert_not_null(s, "%s", Perror());
	cr_assert_str_eq(s->symbolName, "hot_loop");
	cr_assert_str_eq(s->module, "/sym_hot", "the path the process knows");
	cr_assert_str_eq(s->mntPoint, real);
	cr_assert_eq(s->lineNum, (unsigned)src_line("tests/workloads/sym_hot.c", "LINE:hot_loop"));
	snprintf(path, sizeof(path), "%s%s", s->mntPoint, s->module);
	same_file(path, path); /* exists */
	{
		char copy[PATH_MAX + 16];

		snprintf(copy, sizeof(copy), "%s/sym_hot", dir);
		same_file(path, copy);
	}
	s = SymResolverMapAddr(pid, swl_addr(&w, "wl_lib_work"));
	cr_assert_str_eq(s->symbolName, "wl_lib_work");
	cr_assert_str_eq(s->module, "/libwl.so");
	cr_assert_str_eq(s->mntPoint, real);
	s = SymResolverMapAddr(pid, swl_addr(&w, "getppid"));
	cr_assert_eq(s->module[0], '/');
	cr_assert_str_eq(s->mntPoint, real);
	snprintf(path, sizeof(path), "%s%s", s->mntPoint, s->module);
	same_file(path, path);
	/* still known after it exited */
	cr_assert_eq(swl_stop(&w), 0);
	s = SymResolverMapAddr(pid, swl_addr(&w, "hot_loop"));
	cr_assert_str_eq(s->symbolName, "hot_loop");
	cr_assert_str_eq(s->mntPoint, real);
	rm_tree(dir);
}

Test(sym_mnt, a_root_mounted_nowhere_here_is_proc_pid_root)
{
	char dir[PATH_MAX], want[64], path[PATH_MAX + 64];
	struct sym_wl w;
	struct Symbol *s;

	scratch_dir(dir, sizeof(dir));
	fill_root(dir);
	cr_assert_eq(start_contained(&w, dir, true), 0, "the contained workload started");
	snprintf(want, sizeof(want), "/proc/%d/root", (int)w.p.pid);
	cr_assert_eq(SymResolverRecordModule(w.p.pid), 0, "%s", Perror());
	s = SymResolverMapAddr(w.p.pid, swl_addr(&w, "hot_loop"));
	cr_assert_str_eq(s->symbolName, "hot_loop");
	cr_assert_str_eq(s->module, "/sym_hot");
	cr_assert_str_eq(s->mntPoint, want);
	snprintf(path, sizeof(path), "%s%s", s->mntPoint, s->module);
	cr_assert_eq(access(path, R_OK), 0, "%s", path);
	cr_assert_eq(swl_stop(&w), 0);
	rm_tree(dir);
}
