/*
 * test_outputs.c - what the kperf-bpf command writes, and what it refuses (issue 19): a
 * failed write (stdout on /dev/full, -o on a full tmpfs) is a message and status 1, and the
 * file that was there stays whole; -o is never written through a symlink planted in a
 * sticky world-writable directory and is created 0644 whatever the umask; the calls a full
 * summary map could not count appear in CSV and on stderr too; bad lists and a bare "--" are
 * refused; a command launched by kperf-bpf dies with it.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <pwd.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <cjson/cJSON.h>

#include "core/core.h"
#include "testutil.h"

#define KB tu_path("bin/kperf-bpf")

/* run "kperf-bpf ARGS" through the shell; stdout and stderr together */
static char *kb(const char *args, int *status)
{
	char cmd[16384], *out;

	snprintf(cmd, sizeof(cmd), "%s %s 2>&1", KB, args);
	out = tu_run(cmd, status);
	cr_assert_not_null(out);
	return out;
}

/* the full filesystem of a test: a 64 KiB tmpfs, filled up */
static char full_dir[64];

static void full_fs_setup(void)
{
	snprintf(full_dir, sizeof(full_dir), "/tmp/kperf-full-XXXXXX");
	cr_assert_not_null(mkdtemp(full_dir));
	cr_assert_eq(mount("tmpfs", full_dir, "tmpfs", 0, "size=64k,mode=0755"), 0, "mount: %s",
		     strerror(errno));
}

static void full_fs_fill(void)
{
	char filler[128], buf[4096] = { 0 };
	int fd;

	snprintf(filler, sizeof(filler), "%s/filler", full_dir);
	fd = open(filler, O_WRONLY | O_CREAT, 0644);
	cr_assert_geq(fd, 0);
	while (write(fd, buf, sizeof(buf)) == (ssize_t)sizeof(buf))
		;
	close(fd);
}

static void full_fs_teardown(void)
{
	umount2(full_dir, MNT_DETACH);
	rmdir(full_dir);
}

/* names in <dir> other than <keep1>, <keep2> (a temporary file left behind) */
static int stray_files(const char *dir, const char *keep1, const char *keep2)
{
	struct dirent *e;
	DIR *d = opendir(dir);
	int n = 0;

	cr_assert_not_null(d);
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") && strcmp(e->d_name, keep1) &&
		    strcmp(e->d_name, keep2))
			n++;
	closedir(d);
	return n;
}

Test(outputs, stdout_on_dev_full_is_an_error)
{
	static const char *const cases[] = {
		"trace -e getppid -- %s/workloads/syscalls",
		"trace --events --format json -e getppid -- %s/workloads/syscalls",
		"stat -e task-clock -- %s/workloads/syscalls",
		"record -d 0.2 -- %s/workloads/cpuburn",
		"record --format json -d 0.2 -- %s/workloads/cpuburn",
		"list",
	};
	unsigned i;

	for (i = 0; i < KP_ARRAY_SIZE(cases); i++) {
		char args[2048], cmd[8192];
		int st = -1;
		char *out;

		snprintf(args, sizeof(args), cases[i], tu_build());
		/* stderr to the pipe, then stdout to /dev/full */
		snprintf(cmd, sizeof(cmd), "%s %s 2>&1 >/dev/full", KB, args);
		out = tu_run(cmd, &st);
		cr_assert_not_null(out);
		cr_expect_eq(st, 1, "%s: status %d: %s", args, st, out);
		cr_expect(strstr(out, "cannot write standard output: No space left on device"),
			  "%s: %s", args, out);
		free(out);
	}
}

/* -o on a full filesystem: status 1, the error named, the old file as it was, nothing left */
Test(outputs, full_filesystem_keeps_the_old_file_whole, .init = full_fs_setup,
     .fini = full_fs_teardown)
{
	static const char *const cases[] = {
		"trace --events --format json -e getppid -o %s -- %s/workloads/syscalls",
		"trace --format csv -e getppid -o %s -- %s/workloads/syscalls",
		"stat -e task-clock --format json -o %s -- %s/workloads/syscalls",
		"record --format json -d 0.2 -o %s -- %s/workloads/cpuburn",
		"record --format pprof -d 0.2 -o %s -- %s/workloads/cpuburn",
		"record --format dump -d 0.2 -o %s -- %s/workloads/cpuburn",
	};
	static const char old[] = "{\"the old report\": true}\n";
	char path[128], msg[256], *text;
	unsigned i;
	int fd;

	snprintf(path, sizeof(path), "%s/out", full_dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	cr_assert_eq(write(fd, old, sizeof(old) - 1), (ssize_t)sizeof(old) - 1);
	close(fd);
	full_fs_fill();
	snprintf(msg, sizeof(msg), "cannot write %s: No space left on device", path);
	for (i = 0; i < KP_ARRAY_SIZE(cases); i++) {
		char args[4096];
		int st = -1;
		char *out;

		snprintf(args, sizeof(args), cases[i], path, tu_build());
		out = kb(args, &st);
		cr_expect_eq(st, 1, "%s: status %d: %s", args, st, out);
		cr_expect(strstr(out, msg), "%s: %s", args, out);
		free(out);
		cr_assert_eq(kp_read_file(path, &text, NULL), 0);
		cr_expect_str_eq(text, old, "%s: the old file was cut", args);
		free(text);
		cr_expect_eq(stray_files(full_dir, "out", "filler"), 0, "%s: a temporary was left",
			     args);
	}
}

/* the same with room for a small report: written whole, the old content replaced */
Test(outputs, a_complete_report_replaces_the_old_file, .init = full_fs_setup,
     .fini = full_fs_teardown)
{
	char path[128], args[4096], *text, *out;
	cJSON *doc;
	int st = -1, fd;

	snprintf(path, sizeof(path), "%s/out.json", full_dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	cr_assert_eq(write(fd, "old\n", 4), 4);
	close(fd);
	snprintf(args, sizeof(args),
		 "trace --format json -e getppid -o %s -- %s/workloads/syscalls", path, tu_build());
	out = kb(args, &st);
	cr_assert_eq(st, 0, "%s", out);
	free(out);
	cr_assert_eq(kp_read_file(path, &text, NULL), 0);
	doc = cJSON_Parse(text);
	cr_assert_not_null(doc, "%s", text);
	cJSON_Delete(doc);
	free(text);
	cr_expect_eq(stray_files(full_dir, "out.json", "out.json"), 0);
}

Test(outputs, dump_truncates_like_every_format)
{
	char path[64], args[4096], *text, *out;
	int st = -1, fd;

	snprintf(path, sizeof(path), "/tmp/kperf-dump-%d.txt", getpid());
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	cr_assert_eq(write(fd, "OLD LINE\n", 9), 9);
	close(fd);
	snprintf(args, sizeof(args), "record --format dump -d 0.3 -o %s -- %s/workloads/cpuburn",
		 path, tu_build());
	out = kb(args, &st);
	cr_assert_eq(st, 0, "%s", out);
	free(out);
	cr_assert_eq(kp_read_file(path, &text, NULL), 0);
	unlink(path);
	cr_expect_null(strstr(text, "OLD LINE"), "appended to the old file");
	cr_expect(strstr(text, "cpuburn\t"), "%s", text);
	free(text);
}

/* another user's symlink in /tmp pointing at root's private file: refused, file untouched */
Test(outputs, a_symlink_planted_in_a_sticky_directory_is_refused)
{
	char victim[64], link[64], args[256], msg[256], *text, *out;
	struct passwd *nobody = getpwnam("nobody");
	struct stat st;
	int status = -1, fd;

	cr_assert_not_null(nobody);
	snprintf(victim, sizeof(victim), "/tmp/kperf-victim-%d", getpid());
	snprintf(link, sizeof(link), "/tmp/kperf-planted-%d", getpid());
	fd = open(victim, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	cr_assert_eq(write(fd, "secret\n", 7), 7);
	close(fd);
	cr_assert_eq(symlink(victim, link), 0);
	cr_assert_eq(lchown(link, nobody->pw_uid, nobody->pw_gid), 0);
	snprintf(args, sizeof(args), "stat -e task-clock -o %s -- true", link);
	out = kb(args, &status);
	snprintf(msg, sizeof(msg),
		 "kperf-bpf stat: refusing to write %s: it is a symbolic link in /tmp, a sticky "
		 "world-writable directory",
		 link);
	cr_expect_eq(status, 1, "%s", out);
	cr_expect(strstr(out, msg), "%s", out);
	free(out);
	cr_assert_eq(kp_read_file(victim, &text, NULL), 0);
	cr_expect_str_eq(text, "secret\n");
	free(text);
	cr_assert_eq(lstat(link, &st), 0);
	cr_expect(S_ISLNK(st.st_mode), "the link itself was replaced");
	unlink(link);
	unlink(victim);
}

Test(outputs, created_0644_whatever_the_umask)
{
	char path[64], args[512], *out;
	struct stat st;
	int status = -1, fd;

	snprintf(path, sizeof(path), "/tmp/kperf-mode-%d", getpid());
	unlink(path);
	snprintf(args, sizeof(args), "stat -e task-clock -o %s -- true", path);
	{
		char cmd[8192];

		snprintf(cmd, sizeof(cmd), "umask 0; %s %s 2>&1", KB, args);
		out = tu_run(cmd, &status);
	}
	cr_assert_eq(status, 0, "%s", out);
	free(out);
	cr_assert_eq(stat(path, &st), 0);
	cr_expect_eq(st.st_mode & 07777, 0644, "mode %o", st.st_mode & 07777);
	/* a private file stays private when a report replaces it */
	unlink(path);
	fd = open(path, O_WRONLY | O_CREAT, 0600);
	close(fd);
	cr_assert_eq(chmod(path, 0600), 0);
	out = kb(args, &status);
	cr_assert_eq(status, 0, "%s", out);
	free(out);
	cr_assert_eq(stat(path, &st), 0);
	cr_expect_eq(st.st_mode & 07777, 0600, "mode %o", st.st_mode & 07777);
	unlink(path);
}

Test(outputs, bad_lists_and_a_bare_double_dash_are_refused)
{
	static const struct {
		const char *args, *msg;
	} cases[] = {
		{ "trace -p 1,", "kperf-bpf trace: -p wants pids like 1234,5678, not '1,'" },
		{ "trace -p ,1", "kperf-bpf trace: -p wants pids like 1234,5678, not ',1'" },
		{ "stat -p 1,,2", "kperf-bpf stat: -p wants pids like 1234,5678, not '1,,2'" },
		{ "trace -e read,,write",
		  "kperf-bpf trace: -e wants syscall names like read,write, not 'read,,write'" },
		{ "trace -e read,", "-e wants syscall names like read,write, not 'read,'" },
		{ "stat -e task-clock,,page-faults", "kperf-bpf stat: -e wants events like" },
		{ "record -C 0,", "kperf-bpf record: -C wants cpus like 0-3,6, not '0,'" },
		{ "trace --", "kperf-bpf trace: '--' must be followed by a command to run" },
		{ "stat --", "kperf-bpf stat: '--' must be followed by a command to run" },
		{ "record --", "kperf-bpf record: '--' must be followed by a command to run" },
		{ "trace --summary-entries 0",
		  "kperf-bpf trace: --summary-entries wants a number of rows, not '0'" },
	};
	unsigned i;

	for (i = 0; i < KP_ARRAY_SIZE(cases); i++) {
		char args[256];
		int st = -1;
		char *out;

		/* a duration first: a case wrongly accepted ends instead of running forever */
		snprintf(args, sizeof(args), "%.*s -d 2 %s",
			 (int)(strchr(cases[i].args, ' ') - cases[i].args), cases[i].args,
			 strchr(cases[i].args, ' ') + 1);
		out = kb(args, &st);
		cr_expect_eq(st, 1, "%s: status %d", args, st);
		cr_expect(strstr(out, cases[i].msg), "%s: %s", args, out);
		free(out);
	}
	/* "--" as the argument of -o is a file name, not the end of the options: written in a
	 * directory of its own (the current one may be read-only: the kernel matrix's guests) */
	{
		char dir[] = "/tmp/kperf-dashdash-XXXXXX", file[64], exe[PATH_MAX],
		     cmd[PATH_MAX + 64];
		struct stat sb;
		int st = -1;
		char *out;

		cr_assert_not_null(realpath(KB, exe), "%s", KB);
		cr_assert_not_null(mkdtemp(dir));
		cr_assert_eq(chdir(dir), 0); /* criterion runs each test in its own process */
		snprintf(cmd, sizeof(cmd), "%s stat -e task-clock -d 0.1 -o -- -a 2>&1", exe);
		out = tu_run(cmd, &st);
		cr_assert_not_null(out);
		cr_expect_eq(st, 0, "%s", out);
		snprintf(file, sizeof(file), "%s/--", dir);
		cr_expect_eq(stat(file, &sb), 0, "no file named --: %s", out);
		free(out);
		unlink(file);
		cr_assert_eq(rmdir(dir), 0);
	}
}

/* a summary map too small: the calls it could not hold are counted without their process, in
 * CSV, JSON, the table, and said on stderr */
Test(outputs, calls_not_counted_appear_in_every_format)
{
	static const char *const formats[] = { "csv", "json", "table" };
	unsigned i;

	for (i = 0; i < KP_ARRAY_SIZE(formats); i++) {
		char args[4096], *out;
		int st = -1;

		/* ld.so's openat and the workload's getppid fill the 2 rows: its 2000 writes
		 * go to the overflow row of write */
		snprintf(args, sizeof(args),
			 "trace --summary-entries 2 -e openat,getppid,write --format %s -- "
			 "%s/workloads/syscalls",
			 formats[i], tu_build());
		out = kb(args, &st);
		cr_assert_eq(st, 0, "%s", out);
		cr_expect(strstr(out, "kperf-bpf trace: warning: 2000 calls are counted without "
				      "their process (pid 0, [map full]): the summary map was full "
				      "(raise --summary-entries)\n"),
			  "%s: %s", formats[i], out);
		if (i == 0) {
			cr_expect(strstr(out, "\nsummary,0,,\"[map full]\",,write,1,,,,2000,0,"),
				  "%s", out);
			cr_expect(strstr(out, "\noverflow,,,,,,,,,,2000,,,,,,,,"), "%s", out);
			cr_expect(!strstr(out, "not_counted"), "%s", out);
		} else if (i == 1) {
			/* a full map (-E2BIG) is not a want of memory (-ENOMEM) */
			cr_expect(strstr(out, "\"not_counted\":0,\"overflow\":2000,"
					      "\"alloc_failed\":0,\"no_memory\":0,"),
				  "%s", out);
			cr_expect(strstr(out, "{\"pid\":0,\"comm\":\"[map full]\",\"syscalls\":[{"
					      "\"name\":\"write\",\"nr\":1,\"calls\":2000,"),
				  "%s", out);
		} else {
			cr_expect(strstr(out,
					 " WARNING: 2000 calls are counted without their "
					 "process (pid 0, [map full]): the summary map was full."),
				  "%s", out);
		}
		free(out);
	}
}

/* the pid of the command kperf-bpf <kb_pid> launched, once it runs <comm> */
static pid_t launched_child(pid_t kb_pid, const char *comm)
{
	char path[64], buf[64], *text;
	int i;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)kb_pid, (int)kb_pid);
	for (i = 0; i < 1000; i++, tu_sleep_ms(10)) {
		pid_t child;

		if (kp_read_file(path, &text, NULL))
			continue;
		child = atoi(text);
		free(text);
		if (child <= 0)
			continue;
		kp_pid_comm(child, buf, sizeof(buf));
		if (!strcmp(buf, comm))
			return child;
	}
	return -1;
}

Test(outputs, a_sigkilled_kperf_bpf_takes_its_command_along)
{
	static const char *const cmds[] = { "stat", "trace", "record" };
	unsigned i;

	/* orphans come to this test, which can then tell how they ended */
	cr_assert_eq(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
	for (i = 0; i < KP_ARRAY_SIZE(cmds); i++) {
		char *argv[] = { (char *)KB, (char *)cmds[i], "--", "/bin/sleep", "1000", NULL };
		char kbpath[4096];
		struct tu_proc t;
		pid_t child;
		int st = 0, j;

		snprintf(kbpath, sizeof(kbpath), "%s", KB);
		argv[0] = kbpath;
		t = tu_spawn_v(argv, 0);
		cr_assert_gt(t.pid, 0);
		child = launched_child(t.pid, "sleep");
		cr_assert_gt(child, 0, "%s: the command never started", cmds[i]);
		kill(t.pid, SIGKILL);
		tu_wait(&t);
		/* bounded: a surviving sleep fails the test instead of holding it 1000 s */
		for (j = 0; j < 1000 && waitpid(child, &st, WNOHANG) == 0; j++)
			tu_sleep_ms(10);
		if (j == 1000) {
			kill(child, SIGKILL);
			waitpid(child, NULL, 0);
			cr_assert_fail("%s: the command outlived kperf-bpf", cmds[i]);
		}
		cr_expect(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL, "%s: status %#x", cmds[i],
			  st);
	}
}

/* KPERF_BPF_* is not for whoever runs a set-user-ID copy: secure_getenv */
Test(outputs, kperf_bpf_environment_is_ignored_when_setuid)
{
	char dir[] = "/tmp/kperf-suid-XXXXXX", copy[64], cmd[8192], *out;
	int modes[2] = { 0755, 04755 }, i, st = -1;

	cr_assert_not_null(mkdtemp(dir));
	cr_assert_eq(chmod(dir, 0755), 0);
	snprintf(copy, sizeof(copy), "%s/kperf-bpf", dir);
	snprintf(cmd, sizeof(cmd), "cp %s %s", KB, copy);
	cr_assert_eq(system(cmd), 0);
	for (i = 0; i < 2; i++) {
		cr_assert_eq(chmod(copy, (mode_t)modes[i]), 0);
		/* a fixture sysfs with HiSilicon uncore PMUs: listed only when the variable counts */
		snprintf(cmd, sizeof(cmd),
			 "setpriv --reuid=nobody --regid=nogroup --clear-groups env "
			 "KPERF_BPF_SYSFS=%s/tests/fixtures/kunpeng920 %s list 2>&1",
			 KPERF_SRCDIR, copy);
		out = tu_run(cmd, &st);
		cr_assert_not_null(out);
		if (i == 0)
			cr_expect(strstr(out, "hisi_sccl1_ddrc0/"), "the variable works: %s", out);
		else
			cr_expect_null(strstr(out, "hisi_"),
				       "set-user-ID: the variable is ignored");
		free(out);
	}
	unlink(copy);
	rmdir(dir);
}
