/*
 * trace_testutil.h - what the syscall tracing tests share: trace the `syscalls` workload by
 * pid from its first counted call to its exit, close a task checking that no BPF object is
 * left open, and tell when a `kperf-bpf trace` process has attached its syscall programs.
 */
#ifndef KPERF_TRACE_TESTUTIL_H
#define KPERF_TRACE_TESTUTIL_H

#include <bpf/bpf.h>
#include <criterion/criterion.h>
#include <dirent.h>

#include "kperf/kperf.h"
#include "testutil.h"

/* trace `syscalls --wait <extra...>` with <a> and <x> by pid until it exits; returns the
 * handle, disabled, and the workload's pid in *pid_out (when not NULL) */
static inline int tt_trace_workload(struct PmuTraceAttr *a, const struct KperfTraceOpts *x,
				    char *const extra[], pid_t *pid_out)
{
	char *argv[16] = { "syscalls", "--wait" };
	struct tu_proc w;
	int pids[1], pd, i;

	for (i = 0; extra && extra[i] && i < 13; i++)
		argv[2 + i] = extra[i];
	w = tu_spawn_v(argv, 0);
	cr_assert_gt(w.pid, 0);
	pids[0] = w.pid;
	a->pidList = pids;
	a->numPid = 1;
	pd = KperfTraceOpen(TRACE_SYS_CALL, a, x);
	cr_assert_gt(pd, 0, "PmuTraceOpen: %d %s", Perrorno(), Perror());
	cr_assert_eq(PmuTraceEnable(pd), 0, "%s", Perror());
	tu_go(&w);
	cr_assert_eq(tu_wait(&w), 0);
	cr_assert_eq(PmuTraceDisable(pd), 0);
	if (pid_out)
		*pid_out = pids[0];
	a->pidList = NULL;
	a->numPid = 0;
	return pd;
}

/* close a trace task: nothing of it may stay open */
static inline void tt_finish(int pd)
{
	PmuTraceClose(pd);
	cr_assert_eq(tu_bpf_fds(), 0, "BPF objects left open after PmuTraceClose");
}

/* The links process <pid> holds whose program is kp_sys_enter or kp_sys_exit: the syscall
 * tracer itself. The library attaches sys_exit, then sys_enter last (kp_sys_bpf_attach):
 * with 2, every call of a target from then on is traced. (A count of all the process's
 * links, or of the machine's programs, would say "attached" too early or mix other tests'.) */
static inline int tt_sys_links(pid_t pid)
{
	char path[320], line[256];
	struct dirent *e;
	int n = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/fdinfo", (int)pid);
	d = opendir(path);
	if (!d)
		return 0;
	while ((e = readdir(d))) {
		unsigned prog_id = 0;
		int is_link = 0;
		FILE *f;

		snprintf(path, sizeof(path), "/proc/%d/fdinfo/%s", (int)pid, e->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		while (fgets(line, sizeof(line), f)) {
			is_link |= !strncmp(line, "link_id:", 8);
			sscanf(line, "prog_id: %u", &prog_id);
		}
		fclose(f);
		if (is_link && prog_id) {
			struct bpf_prog_info info = { 0 };
			__u32 len = sizeof(info);
			int fd = bpf_prog_get_fd_by_id(prog_id);

			if (fd >= 0 && !bpf_obj_get_info_by_fd(fd, &info, &len))
				n += !strcmp(info.name, "kp_sys_enter") ||
				     !strcmp(info.name, "kp_sys_exit");
			if (fd >= 0)
				close(fd);
		}
	}
	closedir(d);
	return n;
}

/* wait (up to 60 s: loading and attaching under an emulator) until the `kperf-bpf trace`
 * process <pid> has attached its syscall programs; false if it never did */
static inline bool tt_wait_sys_attached(pid_t pid)
{
	int i;

	for (i = 0; i < 6000 && tt_sys_links(pid) < 2; i++)
		tu_sleep_ms(10);
	return tt_sys_links(pid) >= 2;
}

#endif
