/*
 * test_proc_pid.c - the sources of one process: every file of process 4242 of the fixture
 * tree (two threads, a comm with spaces and parentheses), the empty files of kernel thread
 * 4343, and this test process itself through the real /proc.
 */
#include <dirent.h>
#include <sys/prctl.h>

#include "proctest.h"

TestSuite(proc_pid, .fini = pt_fini);

Test(proc_pid, stat_every_field)
{
	struct ProcData d = pt_read(PROC_PID_STAT, 4242);
	struct ProcPidStatEntry *e = d.pidStat;

	cr_assert(pt_ends(d.filePath, "/proc/full/4242/stat"), "%s", d.filePath);
	cr_assert_eq(d.numEntries, 1);
	cr_assert_eq(e->pid, 4242);
	cr_assert_str_eq(e->comm, "my (weird) prog");
	cr_assert_eq(e->state, 'S');
	cr_assert_eq(e->ppid, 1);
	cr_assert_eq(e->pgrp, 4242);
	cr_assert_eq(e->session, 4200);
	cr_assert_eq(e->ttyNr, 34816);
	cr_assert_eq(e->tpgid, 4242);
	cr_assert_eq(e->flags, 4194560);
	cr_assert_eq(e->minflt, 1200);
	cr_assert_eq(e->cminflt, 7);
	cr_assert_eq(e->majflt, 3);
	cr_assert_eq(e->cmajflt, 1);
	cr_assert_eq(e->utime, 150);
	cr_assert_eq(e->stime, 75);
	cr_assert_eq(e->cutime, 12);
	cr_assert_eq(e->cstime, 6);
	cr_assert_eq(e->priority, 15);
	cr_assert_eq(e->niceVal, -5);
	cr_assert_eq(e->numThreads, 2);
	cr_assert_eq(e->itrealvalue, 0);
	cr_assert_eq(e->starttime, 98765);
	cr_assert_eq(e->vsize, 123456789);
	cr_assert_eq(e->rss, 2500);
	cr_assert_eq(e->rsslim, 18446744073709551615ULL);
	cr_assert_eq(e->startcode, 94000000000000ULL);
	cr_assert_eq(e->endcode, 94000000100000ULL);
	cr_assert_eq(e->startstack, 140720000000000ULL);
	cr_assert_eq(e->kstkesp, 0);
	cr_assert_eq(e->kstkeip, 0);
	cr_assert_eq(e->signal, 0);
	cr_assert_eq(e->blocked, 0);
	cr_assert_eq(e->sigignore, 4096);
	cr_assert_eq(e->sigcatch, 134234626);
	cr_assert_eq(e->wchan, 1);
	cr_assert_eq(e->nswap, 0);
	cr_assert_eq(e->cnswap, 0);
	cr_assert_eq(e->exitSignal, 17);
	cr_assert_eq(e->processor, 1);
	cr_assert_eq(e->rtPriority, 0);
	cr_assert_eq(e->policy, 0);
	cr_assert_eq(e->delayacctBlkioTicks, 5);
	cr_assert_eq(e->guestTime, 0);
	cr_assert_eq(e->cguestTime, 0);
	cr_assert_eq(e->startData, 94000000200000ULL);
	cr_assert_eq(e->endData, 94000000300000ULL);
	cr_assert_eq(e->startBrk, 94000000400000ULL);
	cr_assert_eq(e->argStart, 140720000001000ULL);
	cr_assert_eq(e->argEnd, 140720000001100ULL);
	cr_assert_eq(e->envStart, 140720000001100ULL);
	cr_assert_eq(e->envEnd, 140720000002000ULL);
	cr_assert_eq(e->exitCode, 3);
}

Test(proc_pid, statm)
{
	struct ProcData d = pt_read(PROC_PID_STATM, 4242);

	cr_assert_eq(d.numEntries, 1);
	cr_assert_eq(d.pidStatm->size, 2500);
	cr_assert_eq(d.pidStatm->resident, 600);
	cr_assert_eq(d.pidStatm->shared, 400);
	cr_assert_eq(d.pidStatm->text, 50);
	cr_assert_eq(d.pidStatm->lib, 0);
	cr_assert_eq(d.pidStatm->data, 300);
	cr_assert_eq(d.pidStatm->dt, 0);
}

Test(proc_pid, status)
{
	struct ProcData d = pt_read(PROC_PID_STATUS, 4242);

	cr_assert_eq(d.numEntries, 1);
	cr_assert_eq(d.pidStatus->numFields, 7);
	pt_field(&d.pidStatus->fields[0], "Name", "my (weird) prog");
	pt_field(&d.pidStatus->fields[2], "State", "S (sleeping)");
	pt_field(&d.pidStatus->fields[5], "VmRSS", "2400 kB");
	pt_field(&d.pidStatus->fields[6], "Threads", "2");
}

Test(proc_pid, io)
{
	struct ProcData d = pt_read(PROC_PID_IO, 4242);
	struct ProcPidIoEntry *e = d.pidIo;

	cr_assert_eq(d.numEntries, 1);
	cr_assert_eq(e->rchar, 1001);
	cr_assert_eq(e->wchar, 1002);
	cr_assert_eq(e->syscr, 1003);
	cr_assert_eq(e->syscw, 1004);
	cr_assert_eq(e->readBytes, 1005);
	cr_assert_eq(e->writeBytes, 1006);
	cr_assert_eq(e->cancelledWriteBytes, 1007);
}

Test(proc_pid, smaps_rollup)
{
	struct ProcData d = pt_read(PROC_PID_SMAPS_ROLLUP, 4242);
	struct ProcPidSmapsRollupEntry *e = d.pidSmapsRollup;

	cr_assert_eq(d.numEntries, 1);
	cr_assert_eq(e->numFields, 4);
	pt_field(
		&e->fields[0], "rollup",
		"557400271000-7ffd406cb000 ---p 00000000 00:00 0                          [rollup]");
	pt_field(&e->fields[1], "Rss", "1740 kB");
	pt_field(&e->fields[3], "Swap", "0 kB");
}

Test(proc_pid, fd_counts_the_directory)
{
	struct ProcData d = pt_read(PROC_PID_FD, 4242);

	cr_assert(pt_ends(d.filePath, "/4242/fd"));
	cr_assert_eq(d.numEntries, 1);
	cr_assert_eq(d.pidFd->fdCount, 3);
}

Test(proc_pid, numa_maps)
{
	struct ProcData d = pt_read(PROC_PID_NUMA_MAPS, 4242);
	struct ProcPidNumaMapsEntry *e = d.pidNumaMaps;

	cr_assert_eq(d.numEntries, 2);
	cr_assert_str_eq(e[0].address, "55d26756a000");
	cr_assert_eq(e[0].numFields, 5);
	pt_field(&e[0].fields[0], "flag", "default");
	pt_field(&e[0].fields[1], "file", "/usr/bin/prog");
	pt_field(&e[0].fields[2], "mapped", "2");
	pt_field(&e[0].fields[4], "kernelpagesize_kB", "4");
	cr_assert_eq(e[1].numFields, 6);
	pt_field(&e[1].fields[1], "flag", "stack");
	pt_field(&e[1].fields[2], "anon", "3");
}

Test(proc_pid, smaps)
{
	struct ProcData d = pt_read(PROC_PID_SMAPS, 4242);
	struct ProcPidSmapsEntry *e = d.pidSmaps;

	cr_assert_eq(d.numEntries, 2);
	cr_assert_str_eq(e[0].mapping, "55d26756a000-55d26756c000 r--p 00000000 08:01 1234        "
				       "               /usr/bin/prog");
	cr_assert_eq(e[0].numFields, 3);
	pt_field(&e[0].fields[0], "Size", "8 kB");
	pt_field(&e[0].fields[2], "VmFlags", "rd mr mw me sd");
	cr_assert_eq(e[1].numFields, 2);
	pt_field(&e[1].fields[1], "Rss", "12 kB");
}

Test(proc_pid, environ)
{
	struct ProcData d = pt_read(PROC_PID_ENVIRON, 4242);
	struct ProcPidEnvironEntry *e = d.pidEnviron;

	cr_assert_eq(d.numEntries, 5);
	cr_assert_str_eq(e[0].name, "HOME");
	cr_assert_str_eq(e[0].value, "/root");
	cr_assert_str_eq(e[1].name, "PATH");
	cr_assert_str_eq(e[1].value, "/usr/bin:/bin");
	cr_assert_str_eq(e[2].name, "EMPTY");
	cr_assert_str_eq(e[2].value, "");
	cr_assert_str_eq(e[3].name, "NOEQUALS");
	cr_assert_str_eq(e[3].value, "");
	cr_assert_str_eq(e[4].name, "EQ");
	cr_assert_str_eq(e[4].value, "a=b");
}

Test(proc_pid, cmdline_arguments_joined_by_spaces)
{
	struct ProcData d = pt_read(PROC_PID_CMDLINE, 4242);

	cr_assert_eq(d.numEntries, 1);
	cr_assert_str_eq(d.pidCmdline->cmdline, "/usr/bin/prog --flag two  words");
}

Test(proc_pid, limits)
{
	struct ProcData d = pt_read(PROC_PID_LIMITS, 4242);
	struct ProcPidLimitsEntry *e = d.pidLimits;

	cr_assert_eq(d.numEntries, 4);
	cr_assert_str_eq(e[0].limit, "Max cpu time");
	cr_assert_str_eq(e[0].soft, "unlimited");
	cr_assert_str_eq(e[0].hard, "unlimited");
	cr_assert_str_eq(e[0].units, "seconds");
	cr_assert_str_eq(e[1].limit, "Max open files");
	cr_assert_str_eq(e[1].soft, "1024");
	cr_assert_str_eq(e[1].hard, "4096");
	cr_assert_str_eq(e[1].units, "files");
	cr_assert_str_eq(e[2].limit, "Max nice priority");
	cr_assert_str_eq(e[2].soft, "0");
	cr_assert_str_eq(e[2].hard, "0");
	cr_assert_str_eq(e[2].units, "");
	cr_assert_str_eq(e[3].limit, "Max realtime timeout");
	cr_assert_str_eq(e[3].units, "us");
}

Test(proc_pid, stack_frames_with_an_offset)
{
	struct ProcData d = pt_read(PROC_PID_STACK, 4242);
	struct ProcPidStackEntry *e = d.pidStack;

	cr_assert_eq(d.numEntries, 3);
	cr_assert_str_eq(e[0].address, "0");
	cr_assert_str_eq(e[0].symbol, "do_wait+0x1b1/0x300");
	cr_assert_str_eq(e[1].symbol, "kernel_wait4+0xaf/0x150");
	cr_assert_str_eq(e[2].symbol, "entry_SYSCALL_64_after_hwframe+0x76/0x7e");
}

Test(proc_pid, wchan_and_comm)
{
	struct ProcData w = pt_read(PROC_PID_WCHAN, 4242), c = pt_read(PROC_PID_COMM, 4242);

	cr_assert_eq(w.numEntries, 1);
	cr_assert_str_eq(w.pidWchan->wchan, "do_wait");
	cr_assert_eq(c.numEntries, 1);
	cr_assert_str_eq(c.pidComm->comm, "my (weird) prog");
}

Test(proc_pid, maps)
{
	struct ProcData d = pt_read(PROC_PID_MAPS, 4242);
	struct ProcPidMapsEntry *e = d.pidMaps;

	cr_assert_eq(d.numEntries, 4);
	cr_assert_str_eq(e[0].start, "55d26756a000");
	cr_assert_str_eq(e[0].end, "55d26756c000");
	cr_assert_str_eq(e[0].perms, "r--p");
	cr_assert_str_eq(e[0].offset, "00000000");
	cr_assert_str_eq(e[0].dev, "08:01");
	cr_assert_str_eq(e[0].inode, "1234");
	cr_assert_str_eq(e[0].pathname, "/usr/bin/prog");
	/* a path with spaces stays one pathname (a run of spaces becomes one, as in libkperf) */
	cr_assert_str_eq(e[1].perms, "rw-s");
	cr_assert_str_eq(e[1].pathname, "/tmp/with space (deleted)");
	cr_assert_str_eq(e[2].pathname, "[stack]");
	cr_assert_str_eq(e[3].perms, "r-xp");
	cr_assert_str_eq(e[3].pathname, "");
}

Test(proc_pid, task_stat_of_each_thread)
{
	struct ProcData d = pt_read(PROC_PID_TASK_STAT, 4242);
	struct ProcPidTaskStatEntry *e = d.pidTaskStat;
	char want[2 * PATH_MAX + 64];

	snprintf(want, sizeof(want), "%s/4242/task/4242/stat\n%s/4242/task/4243/stat", pt_full(),
		 pt_full());
	cr_assert_str_eq(d.filePath, want);
	cr_assert_eq(d.numEntries, 2);
	cr_assert_eq(e[0].pid, 4242);
	cr_assert_str_eq(e[0].comm, "my (weird) prog");
	cr_assert_eq(e[0].state, 'S');
	cr_assert_eq(e[0].exitCode, 3);
	cr_assert_eq(e[1].pid, 4243);
	cr_assert_str_eq(e[1].comm, "worker");
	cr_assert_eq(e[1].state, 'R');
	cr_assert_eq(e[1].niceVal, -5);
	cr_assert_eq(e[1].envEnd, 140720000002000ULL);
}

/* ---- a kernel thread: empty files ---- */

Test(proc_pid, kernel_thread_empty_files)
{
	struct ProcData stat = pt_read(PROC_PID_STAT, 4343), stack = pt_read(PROC_PID_STACK, 4343);
	struct ProcData wchan = pt_read(PROC_PID_WCHAN, 4343), comm = pt_read(PROC_PID_COMM, 4343);
	struct ProcData cmd;

	cr_assert_str_eq(stat.pidStat->comm, "kworker/0:1");
	cr_assert_eq(stat.pidStat->state, 'I');
	cr_assert_eq(stat.pidStat->ppid, 2);
	cr_assert_eq(stat.pidStat->tpgid, -1);
	cr_assert_eq(stat.pidStat->flags, 69238880);
	cr_assert_eq(stat.pidStat->sigcatch, 0);
	cr_assert_eq(stat.pidStat->sigignore, 2147483647);
	/* an empty stack, wchan or comm is an answer; an empty cmdline is not */
	cr_assert_eq(stack.numEntries, 0);
	cr_assert_null(stack.pidStack);
	cr_assert_eq(wchan.numEntries, 1);
	cr_assert_str_eq(wchan.pidWchan->wchan, "");
	cr_assert_eq(comm.numEntries, 1);
	cr_assert_str_eq(comm.pidComm->comm, "");
	cr_assert_eq(pt_read_in(NULL, PROC_PID_CMDLINE, 4343, &cmd), -ENODATA);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_PROC_READ_FAILED);
	cr_assert(strstr(Perror(), "/4343/cmdline is empty"), "%s", Perror());
}

/* ---- this process, through the real /proc ---- */

static struct ProcData *find_source(struct ProcData *d, unsigned n, int src)
{
	unsigned i;

	for (i = 0; i < n; i++)
		if ((int)d[i].source == src)
			return &d[i];
	return NULL;
}

Test(proc_pid, self_for_real)
{
	char comm[17] = { 0 }, exe[PATH_MAX], cmdline[4096];
	size_t clen;
	FILE *f;
	struct ProcData *d = NULL, *p;
	unsigned n = 0, i, fds = 0;
	ssize_t len;
	bool found_exe = false;
	struct dirent *de;
	DIR *dir;

	unsetenv("KPERF_BPF_PROC");
	prctl(PR_GET_NAME, comm);
	len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	cr_assert_gt(len, 0);
	exe[len] = '\0';
	f = fopen("/proc/self/cmdline", "r");
	cr_assert(f);
	clen = fread(cmdline, 1, sizeof(cmdline) - 1, f);
	fclose(f);
	while (clen && !cmdline[clen - 1])
		clen--;
	for (i = 0; i < clen; i++)
		cmdline[i] = cmdline[i] ? cmdline[i] : ' ';
	cmdline[clen] = '\0';
	dir = opendir("/proc/self/fd");
	cr_assert(dir);
	while ((de = readdir(dir)))
		fds += de->d_name[0] != '.';
	closedir(dir);

	cr_assert_eq(ProcDataRead(getpid(), &d, &n), 0, "%s", Perror());
	cr_assert_eq(Perrorno(), SUCCESS);
	cr_assert_eq(GetWarn(), SUCCESS);
	cr_assert_not_null(d);

	p = find_source(d, n, PROC_PID_COMM);
	cr_assert(p);
	cr_assert_eq(p->pid, getpid());
	cr_assert_str_eq(p->pidComm->comm, comm);

	/* criterion's workers run as "boxfort-worker": compare with the file itself */
	p = find_source(d, n, PROC_PID_CMDLINE);
	cr_assert(p);
	cr_assert_str_eq(p->pidCmdline->cmdline, cmdline);

	/* our own binary is mapped executable */
	p = find_source(d, n, PROC_PID_MAPS);
	cr_assert(p);
	for (i = 0; i < p->numEntries; i++)
		if (!strcmp(p->pidMaps[i].pathname, exe) && strchr(p->pidMaps[i].perms, 'x'))
			found_exe = true;
	cr_assert(found_exe, "no executable mapping of %s", exe);

	p = find_source(d, n, PROC_PID_STAT);
	cr_assert(p);
	cr_assert_eq(p->pidStat->pid, getpid());
	cr_assert_eq(p->pidStat->ppid, getppid());
	cr_assert_str_eq(p->pidStat->comm, comm);
	cr_assert_eq(p->pidStat->state, 'R');

	p = find_source(d, n, PROC_PID_TASK_STAT);
	cr_assert(p);
	cr_assert_geq(p->numEntries, 1);
	cr_assert_eq(p->pidTaskStat[0].pid, getpid());

	/* the library's own listing of fd/ holds one descriptor more, as the test's did */
	p = find_source(d, n, PROC_PID_FD);
	cr_assert(p);
	cr_assert_eq(p->pidFd->fdCount, fds);

	p = find_source(d, n, PROC_PID_STATUS);
	cr_assert(p);
	for (i = 0; i < p->pidStatus->numFields; i++)
		if (!strcmp(p->pidStatus->fields[i].key, "Pid"))
			cr_assert_eq(atoi(p->pidStatus->fields[i].value), getpid());

	/* the system sources come first, then ours, each once and in enum order */
	for (i = 1; i < n; i++)
		cr_assert_lt(d[i - 1].source, d[i].source);
	cr_assert_eq(d[0].source, PROC_STAT);
	cr_assert_eq(d[0].pid, 0);
	ProcDataFree(d, n);
}
