/*
 * test_proc_api.c - ProcDataRead and ProcDataFree as a caller sees them (which sources come
 * back for pid -1, 0, a process, a pid that does not exist; bad arguments; freeing), the
 * code each failed source records, malformed text for the parsers, and running out of
 * memory at every allocation without a leak.
 */
#include "proctest.h"

static void use_root(const char *root)
{
	setenv("KPERF_BPF_PROC", root, 1);
}

TestSuite(proc_api, .fini = pt_fini);

/* ---- which sources come back ---- */

Test(proc_api, system_sources_for_pid_minus_one)
{
	struct ProcData *d = NULL;
	unsigned n = 0, i;

	use_root(pt_full());
	cr_assert_eq(ProcDataRead(-1, &d, &n), 0, "%s", Perror());
	cr_assert_eq(Perrorno(), SUCCESS);
	cr_assert_eq(GetWarn(), SUCCESS);
	/* the fixture has every system source */
	cr_assert_eq(n, PROC_PID_STAT);
	for (i = 0; i < n; i++) {
		cr_assert_eq((int)d[i].source, (int)i);
		cr_assert_eq(d[i].pid, 0);
		cr_assert_not_null(d[i].filePath);
		cr_assert_not_null(d[i].stat, "source %u has no entries", i);
	}
	cr_assert_eq(d[PROC_LOADAVG].loadavg->lastPid, 4343);
	ProcDataFree(d, n);
}

Test(proc_api, pid_zero_is_the_system_only)
{
	struct ProcData *d = NULL;
	unsigned n = 0;

	use_root(pt_full());
	cr_assert_eq(ProcDataRead(0, &d, &n), 0);
	cr_assert_eq(n, PROC_PID_STAT);
	cr_assert_eq(GetWarn(), SUCCESS);
	ProcDataFree(d, n);
}

Test(proc_api, every_source_of_a_process)
{
	struct ProcData *d = NULL;
	unsigned n = 0, i;

	use_root(pt_full());
	cr_assert_eq(ProcDataRead(4242, &d, &n), 0, "%s", Perror());
	cr_assert_eq(n, MAX_PROC_SOURCE);
	for (i = PROC_PID_STAT; i < n; i++) {
		cr_assert_eq((int)d[i].source, (int)i);
		cr_assert_eq(d[i].pid, 4242);
	}
	cr_assert_eq(d[PROC_PID_FD].pidFd->fdCount, 3);
	cr_assert_str_eq(d[PROC_PID_COMM].pidComm->comm, "my (weird) prog");
	ProcDataFree(d, n);
}

Test(proc_api, kernel_thread_leaves_out_what_it_lacks)
{
	static const int want[] = { PROC_PID_STAT, PROC_PID_STACK, PROC_PID_WCHAN, PROC_PID_COMM };
	struct ProcData *d = NULL;
	unsigned n = 0, i;

	use_root(pt_full());
	cr_assert_eq(ProcDataRead(4343, &d, &n), 0, "%s", Perror());
	cr_assert_eq(n, PROC_PID_STAT + 4);
	for (i = 0; i < 4; i++)
		cr_assert_eq((int)d[PROC_PID_STAT + i].source, want[i]);
	cr_assert_eq(d[PROC_PID_STAT + 1].numEntries, 0);
	ProcDataFree(d, n);
}

Test(proc_api, pid_that_does_not_exist)
{
	struct ProcData *d = NULL;
	unsigned n = 0;

	use_root(pt_full());
	/* as libkperf: success with the system sources only; a warning says why */
	cr_assert_eq(ProcDataRead(99999, &d, &n), 0);
	cr_assert_eq(n, PROC_PID_STAT);
	cr_assert_eq(Perrorno(), SUCCESS);
	cr_assert_eq(GetWarn(), LIBPERF_WARN_FAIL_GET_PROC);
	cr_assert(strstr(GetWarnMsg(), "pid 99999 does not exist"), "%s", GetWarnMsg());
	cr_assert(strstr(GetWarnMsg(), "only the system sources were read"));
	ProcDataFree(d, n);
}

Test(proc_api, pid_that_does_not_exist_on_this_machine)
{
	struct ProcData *d = NULL;
	unsigned n = 0, i;

	unsetenv("KPERF_BPF_PROC");
	cr_assert_eq(ProcDataRead(0x7ffffff0, &d, &n), 0);
	cr_assert_gt(n, 0);
	for (i = 0; i < n; i++)
		cr_assert_lt(d[i].source, PROC_PID_STAT);
	cr_assert_eq(GetWarn(), LIBPERF_WARN_FAIL_GET_PROC);
	ProcDataFree(d, n);
}

Test(proc_api, empty_root_reads_nothing)
{
	const char *root = pt_scratch();
	struct ProcData *d = (struct ProcData *)1;
	unsigned n = 7;

	use_root(root);
	cr_assert_eq(ProcDataRead(1, &d, &n), 0);
	cr_assert_null(d);
	cr_assert_eq(n, 0);
	cr_assert_eq(Perrorno(), SUCCESS);
	ProcDataFree(d, n);
	pt_rmtree(root);
}

/* ---- bad arguments and freeing ---- */

Test(proc_api, null_data_or_count)
{
	struct ProcData *d = NULL;
	unsigned n = 0;

	cr_assert_eq(ProcDataRead(-1, NULL, &n), -1);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_PROC_DATA_NULL);
	cr_assert_str_eq(Perror(), "ProcDataRead: data is NULL");
	cr_assert_eq(ProcDataRead(-1, &d, NULL), -1);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_PROC_DATA_NULL);
	cr_assert_str_eq(Perror(), "ProcDataRead: numData is NULL");
	cr_assert_null(d);
}

Test(proc_api, free_null_twice_and_foreign)
{
	struct ProcData *d = NULL, local = { 0 };
	unsigned n = 0;

	ProcDataFree(NULL, 0);
	ProcDataFree(NULL, 5);
	ProcDataFree(&local, 1);
	use_root(pt_full());
	cr_assert_eq(ProcDataRead(4242, &d, &n), 0);
	ProcDataFree(d, n);
	ProcDataFree(d, n); /* ignored: already freed */
}

Test(proc_api, results_of_two_reads_are_independent)
{
	struct ProcData *a = NULL, *b = NULL;
	unsigned na = 0, nb = 0;

	use_root(pt_full());
	cr_assert_eq(ProcDataRead(4242, &a, &na), 0);
	cr_assert_eq(ProcDataRead(-1, &b, &nb), 0);
	ProcDataFree(a, na);
	/* b is untouched by freeing a */
	cr_assert_eq(nb, PROC_PID_STAT);
	cr_assert_str_eq(b[PROC_VERSION].version->version,
			 "Linux version 6.18.0-test (builder@host) (gcc (Debian 12.2.0-14) 12.2.0) "
			 "#1 SMP PREEMPT_DYNAMIC");
	ProcDataFree(b, nb);
}

/* ---- the code of each failed source ---- */

Test(proc_api, source_codes)
{
	const char *root = pt_scratch();
	struct ProcData d;

	cr_assert_eq(pt_read_in(root, MAX_PROC_SOURCE, 0, &d), -EINVAL);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_PROC_SOURCE_INVALID);
	cr_assert_str_eq(Perror(), "47 is not a proc source (0 to 46)");
	cr_assert_eq(pt_read_in(root, -1, 0, &d), -EINVAL);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_PROC_SOURCE_INVALID);
	cr_assert_eq(pt_read_in(root, PROC_PID_COMM, 0, &d), -EINVAL);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_PROC_SOURCE_INVALID);
	cr_assert_str_eq(Perror(), "proc source 45 is a process's: it needs a pid > 0, not 0");

	cr_assert_eq(pt_read_in(root, PROC_MEMINFO, 0, &d), -ENOENT);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_PROC_FILE_NOT_FOUND);
	cr_assert(pt_ends(Perror(), "/meminfo does not exist"), "%s", Perror());
	cr_assert_eq(pt_read_in(root, PROC_PID_STATM, 77, &d), -ENOENT);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_PROC_FILE_NOT_FOUND);
	cr_assert(pt_ends(Perror(), "/77/statm does not exist"), "%s", Perror());

	pt_put(root, "uptime", "");
	cr_assert_eq(pt_read_in(root, PROC_UPTIME, 0, &d), -ENODATA);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_PROC_READ_FAILED);
	cr_assert(pt_ends(Perror(), "/uptime is empty"), "%s", Perror());
	/* a directory where a file should be: open works, read fails */
	pt_put(root, "version/x", "");
	cr_assert_eq(pt_read_in(root, PROC_VERSION, 0, &d), -EISDIR);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_PROC_READ_FAILED);
	cr_assert(pt_ends(Perror(), "/version: Is a directory"), "%s", Perror());
	pt_put(root, "7/fd", "");
	cr_assert_eq(pt_read_in(root, PROC_PID_FD, 7, &d), -ENOTDIR);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_PROC_READ_FAILED);
	cr_assert(strstr(Perror(), "cannot list"), "%s", Perror());

	pt_put(root, "loadavg", " \n\t\n");
	cr_assert_eq(pt_read_in(root, PROC_LOADAVG, 0, &d), -ENODATA);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_PROC_PARSE_FAILED);
	cr_assert(pt_ends(Perror(), "/loadavg: no entry recognised"), "%s", Perror());
	cr_assert_eq(pt_read_in(root, PROC_SYS_KERNEL, 0, &d), -ENODATA);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_PROC_PARSE_FAILED);
	cr_assert(strstr(Perror(), "none of the 20 files of"), "%s", Perror());
	cr_assert(pt_ends(Perror(), "/sys/kernel could be read"), "%s", Perror());
	/* a task directory whose threads have no stat */
	pt_put(root, "8/task/9/status", "Name: x\n");
	cr_assert_eq(pt_read_in(root, PROC_PID_TASK_STAT, 8, &d), -ENODATA);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_PROC_PARSE_FAILED);
	cr_assert(pt_ends(Perror(), "/8/task: no thread with a readable stat"), "%s", Perror());

	cr_assert_eq(pt_parse(PROC_PID_FD, "0\n1\n", &d), -EINVAL);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_PROC_SOURCE_INVALID);
	cr_assert_str_eq(Perror(), "proc source 36 has no text to parse");
	pt_rmtree(root);
}

Test(proc_api, empty_fd_directory_counts_zero)
{
	const char *root = pt_scratch();
	char path[PATH_MAX];
	struct ProcData d;

	snprintf(path, sizeof(path), "%s/5", root);
	cr_assert_eq(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/5/fd", root);
	cr_assert_eq(mkdir(path, 0755), 0);
	cr_assert_eq(pt_read_in(root, PROC_PID_FD, 5, &d), 0);
	cr_assert_eq(d.numEntries, 1);
	cr_assert_eq(d.pidFd->fdCount, 0);
	pt_rmtree(root);
}

/* ---- malformed text ---- */

Test(proc_api, malformed_stat_lines)
{
	struct ProcData d;

	cr_assert_eq(pt_parse(PROC_STAT, "cpu0 1 2\nintr\nbogus 5\n\n   \nctxt x\n", &d), 0);
	cr_assert_eq(d.numEntries, 3);
	cr_assert_eq(d.stat[0].user, 1);
	cr_assert_eq(d.stat[0].nice, 2);
	cr_assert_eq(d.stat[0].system, 0);
	cr_assert_eq(d.stat[1].lineType, PROC_STAT_LINE_INTR);
	cr_assert_eq(d.stat[1].intrTotal, 0);
	cr_assert_eq(d.stat[1].numIntrPerIrq, 0);
	cr_assert_null(d.stat[1].intrPerIrq);
	cr_assert_eq(d.stat[2].ctxt, 0);
	cr_assert_eq(pt_parse(PROC_STAT, "bogus 1\n", &d), -ENODATA);
	cr_assert_eq(Perrorno(), LIBPERF_ERR_PROC_PARSE_FAILED);
	cr_assert_str_eq(Perror(), "proc text: no entry recognised");
}

Test(proc_api, huge_numbers_read_as_zero)
{
	struct ProcData d;

	cr_assert_eq(pt_parse(PROC_MEMINFO,
			      "A: 18446744073709551615 kB\nB: 18446744073709551616 kB\n"
			      "C: 99999999999999999999999999\nD: -\n",
			      &d),
		     0);
	cr_assert_eq(d.numEntries, 4);
	cr_assert_eq(d.meminfo[0].value, 18446744073709551615ULL);
	cr_assert_eq(d.meminfo[1].value, 0);
	cr_assert_eq(d.meminfo[2].value, 0);
	cr_assert_str_eq(d.meminfo[2].unit, "");
	cr_assert_eq(d.meminfo[3].value, 0);
	cr_assert_eq(pt_parse(PROC_LOADAVG, "1e999 0.5 x 9999999999/2 99999999999\n", &d), 0);
	cr_assert_float_eq(d.loadavg->load1, 0.0, 0);
	cr_assert_float_eq(d.loadavg->load5, 0.5, 1e-12);
	cr_assert_float_eq(d.loadavg->load15, 0.0, 0);
	cr_assert_eq(d.loadavg->runningProcs, 0);
	cr_assert_eq(d.loadavg->totalProcs, 2);
	cr_assert_eq(d.loadavg->lastPid, 0);
	cr_assert_eq(pt_parse(PROC_PID_STAT, "1 (x) S 99999999999 -1\n", &d), 0);
	cr_assert_eq(d.pidStat->ppid, 0);
	cr_assert_eq(d.pidStat->pgrp, -1);
}

Test(proc_api, truncated_lines)
{
	struct ProcData d;

	cr_assert_eq(pt_parse(PROC_DISKSTATS, "8 0\n   8\n", &d), -ENODATA);
	cr_assert_eq(pt_parse(PROC_NET_DEV, "eth0: 1 2", &d), 0);
	cr_assert_eq(d.netDev->rxBytes, 1);
	cr_assert_eq(d.netDev->rxPackets, 2);
	cr_assert_eq(d.netDev->txCompressed, 0);
	cr_assert_eq(pt_parse(PROC_MOUNTS, "a b c d e\n", &d), -ENODATA);
	cr_assert_eq(pt_parse(PROC_NET_ARP, "IP address HW type\n1.2.3.4 0x1 0x2\n", &d), -ENODATA);
	cr_assert_eq(pt_parse(PROC_BUDDYINFO, "Node 0, zone\n", &d), -ENODATA);
	/* the third line of a scsi device is missing */
	cr_assert_eq(pt_parse(PROC_SCSI,
			      "Attached devices:\nHost: scsi0 Channel: 00 Id: 00 Lun: 00\n"
			      "  Vendor: ATA Model: X Rev: 1\n",
			      &d),
		     -ENODATA);
	cr_assert_eq(pt_parse(PROC_SCSI, "Host: scsi2\n\n\n", &d), 0);
	cr_assert_str_eq(d.scsi->host, "scsi2");
	cr_assert_str_eq(d.scsi->channel, "");
	cr_assert_str_eq(d.scsi->vendor, "");
	cr_assert_str_eq(d.scsi->ansiScsiRevision, "");
	/* a netstat header with no value line */
	cr_assert_eq(pt_parse(PROC_NET_NETSTAT, "TcpExt: A B\n", &d), -ENODATA);
	cr_assert_eq(pt_parse(PROC_NET_NETSTAT, "TcpExt: A B\nTcpExt: 1 2 3\nIpExt: C\n", &d), 0);
	cr_assert_eq(d.numEntries, 1);
	cr_assert_eq(d.netNetstat->numFields, 2);
	cr_assert_eq(pt_parse(PROC_PID_LIMITS, "Limit Soft Hard Units\n", &d), -ENODATA);
	cr_assert_eq(pt_parse(PROC_PID_LIMITS, "Limit\nMax x\nMax y 1 2\n", &d), 0);
	cr_assert_eq(d.numEntries, 1);
	cr_assert_str_eq(d.pidLimits->limit, "Max y");
}

Test(proc_api, missing_fields)
{
	struct ProcData d;

	cr_assert_eq(pt_parse(PROC_PID_STAT, "12 (x)", &d), 0);
	cr_assert_eq(d.pidStat->pid, 12);
	cr_assert_str_eq(d.pidStat->comm, "x");
	cr_assert_eq(d.pidStat->state, '\0');
	cr_assert_eq(d.pidStat->exitCode, 0);
	/* no "(comm)" at all: one entry of zeros, as libkperf */
	cr_assert_eq(pt_parse(PROC_PID_STAT, "12 x S 1", &d), 0);
	cr_assert_eq(d.numEntries, 1);
	cr_assert_eq(d.pidStat->pid, 0);
	cr_assert_str_eq(d.pidStat->comm, "");
	cr_assert_eq(pt_parse(PROC_PID_STAT, "12 )x( S", &d), 0);
	cr_assert_eq(d.pidStat->pid, 0);
	/* threads without "(comm)" are left out */
	cr_assert_eq(pt_parse(PROC_PID_TASK_STAT, "1 x\n2 (y) R\n", &d), 0);
	cr_assert_eq(d.numEntries, 1);
	cr_assert_eq(d.pidTaskStat->pid, 2);
	cr_assert_eq(pt_parse(PROC_PID_STATM, "1 2", &d), 0);
	cr_assert_eq(d.pidStatm->resident, 2);
	cr_assert_eq(d.pidStatm->dt, 0);
	cr_assert_eq(pt_parse(PROC_PID_IO, "no colon\n", &d), 0);
	cr_assert_eq(d.pidIo->rchar, 0);
	cr_assert_eq(pt_parse(PROC_PID_STATUS, "no colon\n: empty key\n", &d), -ENODATA);
	cr_assert_eq(pt_parse(PROC_UPTIME, "5", &d), 0);
	cr_assert_float_eq(d.uptime->idle, 0.0, 0);
}

Test(proc_api, lines_out_of_place)
{
	struct ProcData d;

	/* fields before the first mapping, domains before the first cpu, lines before a zone */
	cr_assert_eq(pt_parse(PROC_PID_SMAPS, "Size: 4 kB\n1000-2000 r-xp 0 0:0 0\nRss: 1\n", &d),
		     0);
	cr_assert_eq(d.numEntries, 1);
	cr_assert_eq(d.pidSmaps->numFields, 1);
	cr_assert_eq(pt_parse(PROC_PID_SMAPS, "Size: 4 kB\nx-1000 r\n-1000\n", &d), -ENODATA);
	cr_assert_eq(pt_parse(PROC_SCHEDSTAT, "domain0 3 1\ncpu0 1\n", &d), 0);
	cr_assert_eq(d.schedstat->numDomains, 0);
	cr_assert_eq(pt_parse(PROC_SCHEDSTAT, "cpufreq 1\ncpu 2\n", &d), -ENODATA);
	cr_assert_eq(pt_parse(PROC_ZONEINFO, "min 5\npages free 3\n", &d), -ENODATA);
	cr_assert_eq(pt_parse(PROC_ZONEINFO, "min 5\nNode 2, zone X\n  pagesets\n  count: 4\n", &d),
		     0);
	cr_assert_eq(d.zoneinfo->node, 2);
	cr_assert_eq(d.zoneinfo->numPagesets, 0);
	cr_assert_str_eq(d.zoneinfo->protection, "");
	cr_assert_eq(pt_parse(PROC_PID_STACK, "garbage\n[<0>]\n>] [< x+1\n", &d), 0);
	cr_assert_eq(d.numEntries, 0);
	cr_assert_eq(pt_parse(PROC_INTERRUPTS, "CPU0\n", &d), -ENODATA);
	cr_assert_eq(pt_parse(PROC_INTERRUPTS, "\n\nCPU0 CPU1\n 5: 1 2 3 edge\n", &d), 0);
	cr_assert_eq(d.interrupts->numCpus, 2);
	cr_assert_str_eq(d.interrupts->description, "3 edge");
}

Test(proc_api, text_after_a_nul_is_ignored)
{
	struct ProcData d;

	cr_assert_eq(pt_parse_n(PROC_MEMINFO, "A: 5 kB\0B: 6 kB\n", 16, &d), 0);
	cr_assert_eq(d.numEntries, 1);
	/* environ and cmdline are the NUL-separated ones; no final NUL is fine */
	cr_assert_eq(pt_parse_n(PROC_PID_ENVIRON, "A=1\0\0B", 6, &d), 0);
	cr_assert_eq(d.numEntries, 2);
	cr_assert_str_eq(d.pidEnviron[1].name, "B");
	cr_assert_eq(pt_parse_n(PROC_PID_CMDLINE, "\0\0", 2, &d), 0);
	cr_assert_str_eq(d.pidCmdline->cmdline, "");
}

/* ---- out of memory at each allocation in turn ---- */

Test(proc_api, out_of_memory_at_every_allocation, .timeout = 120)
{
	struct ProcData *d;
	unsigned n;
	long k, failures = 0;
	int ret;

	use_root(pt_full());
	for (k = 0;; k++) {
		d = (struct ProcData *)1;
		n = 99;
		kp_proc_fail_after(k);
		ret = ProcDataRead(4242, &d, &n);
		if (ret == 0)
			break;
		cr_assert_eq(ret, -1);
		cr_assert_eq(Perrorno(), LIBPERF_ERR_PROC_DATA_NULL);
		cr_assert_str_eq(Perror(), "ProcDataRead: out of memory");
		cr_assert_null(d);
		cr_assert_eq(n, 0);
		failures++;
	}
	kp_proc_fail_after(-1);
	/* every allocation of a full read failed once; the last run succeeded */
	cr_assert_gt(failures, 300, "only %ld allocations", failures);
	cr_assert_eq(n, MAX_PROC_SOURCE);
	ProcDataFree(d, n);
}
