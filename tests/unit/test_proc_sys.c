/*
 * test_proc_sys.c - the system-wide sources of ProcDataRead (user/proc) on the fixture tree
 * tests/fixtures/proc/full: every entry and every field each file's columns map to.
 */
#include "proctest.h"

TestSuite(proc_sys, .fini = pt_fini);

Test(proc_sys, stat)
{
	struct ProcData d = pt_read(PROC_STAT, 0);
	struct ProcStatEntry *e = d.stat;
	static const unsigned long long softirqs[] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 };
	unsigned i;

	cr_assert(pt_ends(d.filePath, "/proc/full/stat"), "%s", d.filePath);
	cr_assert_eq(d.numEntries, 10);
	cr_assert_str_eq(e[0].cpuName, "cpu");
	cr_assert_eq(e[0].lineType, PROC_STAT_LINE_CPU);
	cr_assert_eq(e[0].user, 1001);
	cr_assert_eq(e[0].nice, 1002);
	cr_assert_eq(e[0].system, 1003);
	cr_assert_eq(e[0].idle, 1004);
	cr_assert_eq(e[0].ioWait, 1005);
	cr_assert_eq(e[0].irq, 1006);
	cr_assert_eq(e[0].softirq, 1007);
	cr_assert_eq(e[0].steal, 1008);
	cr_assert_eq(e[0].guest, 1009);
	cr_assert_eq(e[0].guestNice, 1010);
	cr_assert_str_eq(e[1].cpuName, "cpu0");
	cr_assert_eq(e[1].user, 501);
	cr_assert_eq(e[1].guestNice, 510);
	cr_assert_str_eq(e[3].cpuName, "intr");
	cr_assert_eq(e[3].lineType, PROC_STAT_LINE_INTR);
	cr_assert_eq(e[3].intrTotal, 9000);
	cr_assert_eq(e[3].numIntrPerIrq, 4);
	cr_assert_eq(e[3].intrPerIrq[0], 10);
	cr_assert_eq(e[3].intrPerIrq[1], 20);
	cr_assert_eq(e[3].intrPerIrq[2], 0);
	cr_assert_eq(e[3].intrPerIrq[3], 30);
	cr_assert_eq(e[3].user, 0);
	cr_assert_eq(e[4].lineType, PROC_STAT_LINE_CTXT);
	cr_assert_eq(e[4].ctxt, 123456);
	cr_assert_eq(e[5].lineType, PROC_STAT_LINE_BTIME);
	cr_assert_eq(e[5].btime, 1700000000);
	cr_assert_eq(e[6].lineType, PROC_STAT_LINE_PROCESSES);
	cr_assert_eq(e[6].processes, 4343);
	cr_assert_eq(e[7].lineType, PROC_STAT_LINE_PROCS_RUNNING);
	cr_assert_eq(e[7].procsRunning, 3);
	cr_assert_eq(e[8].lineType, PROC_STAT_LINE_PROCS_BLOCKED);
	cr_assert_eq(e[8].procsBlocked, 1);
	cr_assert_str_eq(e[9].cpuName, "softirq");
	cr_assert_eq(e[9].lineType, PROC_STAT_LINE_SOFTIRQ);
	cr_assert_eq(e[9].softirqTotal, 800);
	cr_assert_eq(e[9].numSoftirqPerType, 10);
	for (i = 0; i < 10; i++)
		cr_assert_eq(e[9].softirqPerType[i], softirqs[i]);
	cr_assert_null(e[4].intrPerIrq);
	cr_assert_eq(e[4].numIntrPerIrq, 0);
}

Test(proc_sys, cpuinfo)
{
	struct ProcData d = pt_read(PROC_CPUINFO, 0);
	struct ProcCpuinfoEntry *e = d.cpuinfo;

	cr_assert_eq(d.numEntries, 2);
	cr_assert_eq(e[0].numFields, 6);
	pt_field(&e[0].fields[0], "processor", "0");
	pt_field(&e[0].fields[1], "vendor_id", "GenuineIntel");
	pt_field(&e[0].fields[2], "model name", "Intel(R) Xeon(R) Platinum 8375C CPU @ 2.90GHz");
	pt_field(&e[0].fields[3], "cpu MHz", "2900.000");
	pt_field(&e[0].fields[4], "flags", "fpu vme de pse");
	pt_field(&e[0].fields[5], "power management", "");
	cr_assert_eq(e[1].numFields, 6);
	pt_field(&e[1].fields[0], "processor", "1");
	pt_field(&e[1].fields[3], "cpu MHz", "2899.998");
}

Test(proc_sys, meminfo)
{
	struct ProcData d = pt_read(PROC_MEMINFO, 0);
	struct ProcMeminfoEntry *e = d.meminfo;

	cr_assert_eq(d.numEntries, 5);
	cr_assert_str_eq(e[0].key, "MemTotal");
	cr_assert_eq(e[0].value, 8117092);
	cr_assert_str_eq(e[0].unit, "kB");
	cr_assert_str_eq(e[2].key, "MemAvailable");
	cr_assert_eq(e[2].value, 7391232);
	cr_assert_str_eq(e[3].key, "HugePages_Total");
	cr_assert_eq(e[3].value, 0);
	cr_assert_str_eq(e[3].unit, "");
	cr_assert_str_eq(e[4].key, "Hugepagesize");
	cr_assert_eq(e[4].value, 2048);
}

Test(proc_sys, loadavg)
{
	struct ProcData d = pt_read(PROC_LOADAVG, 0);

	cr_assert_eq(d.numEntries, 1);
	cr_assert_float_eq(d.loadavg->load1, 0.52, 1e-9);
	cr_assert_float_eq(d.loadavg->load5, 0.58, 1e-9);
	cr_assert_float_eq(d.loadavg->load15, 0.59, 1e-9);
	cr_assert_eq(d.loadavg->runningProcs, 2);
	cr_assert_eq(d.loadavg->totalProcs, 345);
	cr_assert_eq(d.loadavg->lastPid, 4343);
}

Test(proc_sys, vmstat)
{
	struct ProcData d = pt_read(PROC_VMSTAT, 0);

	cr_assert_eq(d.numEntries, 5);
	cr_assert_str_eq(d.vmstat[0].key, "nr_free_pages");
	cr_assert_eq(d.vmstat[0].value, 1550887);
	cr_assert_str_eq(d.vmstat[2].key, "pgfault");
	cr_assert_eq(d.vmstat[2].value, 98765432);
	cr_assert_str_eq(d.vmstat[4].key, "thp_fault_alloc");
	cr_assert_eq(d.vmstat[4].value, 12);
}

Test(proc_sys, net_dev)
{
	struct ProcData d = pt_read(PROC_NET_DEV, 0);
	struct ProcNetDevEntry *e = d.netDev;

	cr_assert(pt_ends(d.filePath, "/net/dev"));
	cr_assert_eq(d.numEntries, 2);
	cr_assert_str_eq(e[0].iface, "lo");
	cr_assert_eq(e[0].rxBytes, 1000);
	cr_assert_eq(e[0].txPackets, 10);
	cr_assert_str_eq(e[1].iface, "eth0");
	cr_assert_eq(e[1].rxBytes, 101);
	cr_assert_eq(e[1].rxPackets, 102);
	cr_assert_eq(e[1].rxErrs, 103);
	cr_assert_eq(e[1].rxDrop, 104);
	cr_assert_eq(e[1].rxFifo, 105);
	cr_assert_eq(e[1].rxFrame, 106);
	cr_assert_eq(e[1].rxCompressed, 107);
	cr_assert_eq(e[1].rxMulticast, 108);
	cr_assert_eq(e[1].txBytes, 201);
	cr_assert_eq(e[1].txPackets, 202);
	cr_assert_eq(e[1].txErrs, 203);
	cr_assert_eq(e[1].txDrop, 204);
	cr_assert_eq(e[1].txFifo, 205);
	cr_assert_eq(e[1].txColls, 206);
	cr_assert_eq(e[1].txCarrier, 207);
	cr_assert_eq(e[1].txCompressed, 208);
}

Test(proc_sys, diskstats_of_three_kernel_generations)
{
	struct ProcData d = pt_read(PROC_DISKSTATS, 0);
	struct ProcDiskstatsEntry *e = d.diskstats;

	cr_assert_eq(d.numEntries, 3);
	/* 5.5+: 17 counters */
	cr_assert_eq(e[0].major, 8);
	cr_assert_eq(e[0].minor, 0);
	cr_assert_str_eq(e[0].device, "sda");
	cr_assert_eq(e[0].readsCompleted, 1);
	cr_assert_eq(e[0].readsMerged, 2);
	cr_assert_eq(e[0].sectorsRead, 3);
	cr_assert_eq(e[0].msReading, 4);
	cr_assert_eq(e[0].writesCompleted, 5);
	cr_assert_eq(e[0].writesMerged, 6);
	cr_assert_eq(e[0].sectorsWritten, 7);
	cr_assert_eq(e[0].msWriting, 8);
	cr_assert_eq(e[0].iosInProgress, 9);
	cr_assert_eq(e[0].msIos, 10);
	cr_assert_eq(e[0].weightedMsIos, 11);
	cr_assert_eq(e[0].discardsCompleted, 12);
	cr_assert_eq(e[0].discardsMerged, 13);
	cr_assert_eq(e[0].sectorsDiscarded, 14);
	cr_assert_eq(e[0].msDiscarding, 15);
	cr_assert_eq(e[0].flushCompleted, 16);
	cr_assert_eq(e[0].msFlushing, 17);
	/* 4.18: 11 counters, the discard and flush ones absent */
	cr_assert_str_eq(e[1].device, "sda1");
	cr_assert_eq(e[1].minor, 1);
	cr_assert_eq(e[1].weightedMsIos, 31);
	cr_assert_eq(e[1].discardsCompleted, 0);
	cr_assert_eq(e[1].msFlushing, 0);
	/* a partition line of 2.6: 4 counters */
	cr_assert_str_eq(e[2].device, "loop0");
	cr_assert_eq(e[2].major, 7);
	cr_assert_eq(e[2].msReading, 44);
	cr_assert_eq(e[2].writesCompleted, 0);
}

Test(proc_sys, uptime)
{
	struct ProcData d = pt_read(PROC_UPTIME, 0);

	cr_assert_eq(d.numEntries, 1);
	cr_assert_float_eq(d.uptime->total, 12345.67, 1e-9);
	cr_assert_float_eq(d.uptime->idle, 23456.78, 1e-9);
}

Test(proc_sys, mounts)
{
	struct ProcData d = pt_read(PROC_MOUNTS, 0);
	struct ProcMountsEntry *e = d.mounts;

	cr_assert_eq(d.numEntries, 3);
	cr_assert_str_eq(e[0].device, "sysfs");
	cr_assert_str_eq(e[0].mountPoint, "/sys");
	cr_assert_str_eq(e[0].fsType, "sysfs");
	cr_assert_str_eq(e[0].options, "rw,nosuid,nodev,noexec,relatime");
	cr_assert_eq(e[1].dump, 1);
	cr_assert_eq(e[1].passVal, 1);
	/* the kernel's octal escape stays as written */
	cr_assert_str_eq(e[2].mountPoint, "/mnt/my\\040disk");
	cr_assert_str_eq(e[2].fsType, "xfs");
	cr_assert_str_eq(e[2].options, "ro");
	cr_assert_eq(e[2].dump, 0);
	cr_assert_eq(e[2].passVal, 2);
}

Test(proc_sys, softirqs)
{
	struct ProcData d = pt_read(PROC_SOFTIRQS, 0);
	struct ProcSoftirqsEntry *e = d.softirqs;

	cr_assert_eq(d.numEntries, 3);
	cr_assert_str_eq(e[0].type, "HI");
	cr_assert_eq(e[0].numCpus, 2);
	cr_assert_eq(e[0].perCpu[0], 1);
	cr_assert_eq(e[0].perCpu[1], 2);
	cr_assert_str_eq(e[1].type, "TIMER");
	cr_assert_eq(e[1].perCpu[0], 123456);
	cr_assert_eq(e[1].perCpu[1], 654321);
	cr_assert_str_eq(e[2].type, "NET_RX");
	cr_assert_eq(e[2].perCpu[1], 20);
}

Test(proc_sys, slabinfo)
{
	struct ProcData d = pt_read(PROC_SLABINFO, 0);
	struct ProcSlabinfoEntry *e = d.slabinfo;

	cr_assert_eq(d.numEntries, 2);
	cr_assert_str_eq(e[0].name, "kmalloc-64");
	cr_assert_eq(e[0].activeObjs, 2048);
	cr_assert_eq(e[0].numObjs, 2112);
	cr_assert_eq(e[0].objsize, 64);
	cr_assert_eq(e[0].objperslab, 64);
	cr_assert_eq(e[0].pagesperslab, 1);
	cr_assert_eq(e[0].activeSlabs, 33);
	cr_assert_eq(e[0].numSlabs, 33);
	cr_assert_str_eq(e[1].name, "task_struct");
	cr_assert_eq(e[1].activeObjs, 310);
	cr_assert_eq(e[1].numObjs, 336);
	cr_assert_eq(e[1].objsize, 8256);
	cr_assert_eq(e[1].objperslab, 3);
	cr_assert_eq(e[1].pagesperslab, 8);
	cr_assert_eq(e[1].limit, 11);
	cr_assert_eq(e[1].batchcount, 12);
	cr_assert_eq(e[1].sharedfactor, 13);
	cr_assert_eq(e[1].activeSlabs, 112);
	cr_assert_eq(e[1].numSlabs, 114);
	cr_assert_eq(e[1].sharedavail, 15);
}

Test(proc_sys, schedstat_each_counter_in_its_field)
{
	struct ProcData d = pt_read(PROC_SCHEDSTAT, 0);
	struct ProcSchedstatEntry *e = d.schedstat;

	cr_assert_eq(d.numEntries, 2);
	cr_assert_eq(e[0].cpuId, 0);
	/* "cpu0 11 0 12 ...": the literal 0 is the kernel's legacy column, skipped */
	cr_assert_eq(e[0].yldCount, 11);
	cr_assert_eq(e[0].schedCount, 12);
	cr_assert_eq(e[0].schedGoidle, 13);
	cr_assert_eq(e[0].ttwuCount, 14);
	cr_assert_eq(e[0].ttwuLocal, 15);
	cr_assert_eq(e[0].rqCpuTime, 16);
	cr_assert_eq(e[0].runDelay, 17);
	cr_assert_eq(e[0].pcount, 18);
	cr_assert_eq(e[0].numDomains, 1);
	cr_assert_eq(e[0].domains[0].domainId, 0);
	cr_assert_str_eq(e[0].domains[0].mask, "00000003");
	cr_assert_eq(e[0].domains[0].numValues, 5);
	cr_assert_eq(e[0].domains[0].values[4], 5);
	cr_assert_eq(e[1].cpuId, 1);
	cr_assert_eq(e[1].pcount, 28);
	cr_assert_eq(e[1].numDomains, 2);
	cr_assert_eq(e[1].domains[1].domainId, 1);
	cr_assert_str_eq(e[1].domains[1].mask, "0000000f");
	cr_assert_eq(e[1].domains[1].numValues, 1);
	cr_assert_eq(e[1].domains[1].values[0], 9);
}

Test(proc_sys, schedstat_version_17_names_its_domains)
{
	struct ProcData d;

	cr_assert_eq(pt_parse(PROC_SCHEDSTAT,
			      "version 17\ntimestamp 1\ncpu3 1 0 2 3 4 5 6 7 8\n"
			      "domain0 SMT 00000003 9 10\ndomain1 MC 0000000f 11\n",
			      &d),
		     0);
	cr_assert_eq(d.numEntries, 1);
	cr_assert_eq(d.schedstat->cpuId, 3);
	cr_assert_eq(d.schedstat->numDomains, 2);
	cr_assert_str_eq(d.schedstat->domains[0].mask, "00000003");
	cr_assert_eq(d.schedstat->domains[0].numValues, 2);
	cr_assert_eq(d.schedstat->domains[0].values[1], 10);
	cr_assert_str_eq(d.schedstat->domains[1].mask, "0000000f");
}

Test(proc_sys, interrupts)
{
	struct ProcData d = pt_read(PROC_INTERRUPTS, 0);
	struct ProcInterruptsEntry *e = d.interrupts;

	cr_assert_eq(d.numEntries, 5);
	cr_assert_str_eq(e[0].irq, "0");
	cr_assert_eq(e[0].numCpus, 2);
	cr_assert_eq(e[0].perCpu[0], 44);
	cr_assert_eq(e[0].perCpu[1], 0);
	cr_assert_str_eq(e[0].description, "IO-APIC 2-edge timer");
	cr_assert_str_eq(e[1].irq, "24");
	cr_assert_eq(e[1].perCpu[0], 1200);
	cr_assert_eq(e[1].perCpu[1], 340);
	cr_assert_str_eq(e[1].description, "PCI-MSI 65536-edge virtio0-config");
	cr_assert_str_eq(e[2].irq, "NMI");
	cr_assert_str_eq(e[2].description, "Non-maskable interrupts");
	/* ERR and MIS have one total, not one count per CPU */
	cr_assert_str_eq(e[3].irq, "ERR");
	cr_assert_eq(e[3].numCpus, 1);
	cr_assert_eq(e[3].perCpu[0], 0);
	cr_assert_str_eq(e[3].description, "");
	cr_assert_str_eq(e[4].irq, "MIS");
}

Test(proc_sys, irq_affinity)
{
	struct ProcData d = pt_read(PROC_IRQ_AFFINITY, 0);

	cr_assert(pt_ends(d.filePath, "/irq/default_smp_affinity"));
	cr_assert_eq(d.numEntries, 1);
	cr_assert_str_eq(d.irqAffinity->affinity, "3");
}

Test(proc_sys, locks_one_entry_of_lock_lines)
{
	struct ProcData d = pt_read(PROC_LOCKS, 0);

	cr_assert_eq(d.numEntries, 1);
	cr_assert_eq(d.locks->numFields, 2);
	pt_field(&d.locks->fields[0], "1", "POSIX  ADVISORY  WRITE 4242 00:1a:123 0 EOF");
	pt_field(&d.locks->fields[1], "2", "FLOCK  ADVISORY  WRITE 4343 08:01:456 0 EOF");
}

Test(proc_sys, zoneinfo_reads_both_line_forms)
{
	struct ProcData d = pt_read(PROC_ZONEINFO, 0);
	struct ProcZoneinfoEntry *z = d.zoneinfo;

	cr_assert_eq(d.numEntries, 2);
	cr_assert_eq(z[0].node, 0);
	cr_assert_str_eq(z[0].zone, "DMA");
	cr_assert_eq(z[0].pagesFree, 3840);
	cr_assert_eq(z[0].pagesMin, 47);
	cr_assert_eq(z[0].pagesLow, 58);
	cr_assert_eq(z[0].pagesHigh, 69);
	cr_assert_eq(z[0].pagesSpanned, 4095);
	cr_assert_eq(z[0].pagesPresent, 3998);
	cr_assert_eq(z[0].pagesManaged, 3840);
	cr_assert_eq(z[0].pagesCma, 0);
	cr_assert_str_eq(z[0].protection, "(0, 3019, 5323, 5323, 5323)");
	cr_assert_str_eq(z[0].nodeUnreclaimable, "0");
	cr_assert_str_eq(z[0].startPfn, "1");
	cr_assert_eq(z[0].numNodeStats, 2);
	pt_field(&z[0].nodeStats[0], "nr_inactive_anon", "923");
	pt_field(&z[0].nodeStats[1], "nr_active_anon", "380");
	cr_assert_eq(z[0].numStats, 3);
	pt_field(&z[0].stats[0], "boost", "0");
	pt_field(&z[0].stats[1], "nr_free_pages", "3840");
	pt_field(&z[0].stats[2], "nr_zone_inactive_anon", "0");
	cr_assert_eq(z[0].numPagesets, 2);
	cr_assert_eq(z[0].pagesets[0].cpuId, 0);
	cr_assert_eq(z[0].pagesets[0].count, 0);
	cr_assert_eq(z[0].pagesets[0].high, 0);
	cr_assert_eq(z[0].pagesets[0].batch, 1);
	cr_assert_eq(z[0].pagesets[0].vmStatsThreshold, 4);
	cr_assert_eq(z[0].pagesets[1].cpuId, 1);
	cr_assert_eq(z[0].pagesets[1].count, 5);
	cr_assert_eq(z[0].pagesets[1].high, 6);
	cr_assert_eq(z[0].pagesets[1].batch, 7);
	cr_assert_eq(z[0].pagesets[1].vmStatsThreshold, 8);
	cr_assert_str_eq(z[1].zone, "Normal");
	cr_assert_eq(z[1].pagesFree, 512);
	cr_assert_eq(z[1].pagesMin, 1);
	cr_assert_eq(z[1].pagesManaged, 900);
	cr_assert_eq(z[1].pagesCma, 10);
	cr_assert_eq(z[1].numNodeStats, 0);
	cr_assert_null(z[1].nodeStats);
	cr_assert_eq(z[1].numStats, 1);
	cr_assert_eq(z[1].numPagesets, 0);
	cr_assert_str_eq(z[1].nodeUnreclaimable, "1");
	cr_assert_str_eq(z[1].startPfn, "1048576");
}

Test(proc_sys, buddyinfo)
{
	struct ProcData d = pt_read(PROC_BUDDYINFO, 0);
	struct ProcBuddyinfoEntry *e = d.buddyinfo;

	cr_assert_eq(d.numEntries, 2);
	cr_assert_eq(e[0].node, 0);
	cr_assert_str_eq(e[0].zone, "0,");
	cr_assert_str_eq(e[0].zoneName, "DMA");
	cr_assert_eq(e[0].numOrders, 11);
	cr_assert_eq(e[0].orders[8], 1);
	cr_assert_eq(e[0].orders[10], 3);
	cr_assert_eq(e[1].node, 1);
	cr_assert_str_eq(e[1].zone, "1,");
	cr_assert_str_eq(e[1].zoneName, "Normal");
	cr_assert_eq(e[1].orders[0], 2507);
	cr_assert_eq(e[1].orders[10], 300);
}

Test(proc_sys, net_sockstat)
{
	struct ProcData d = pt_read(PROC_NET_SOCKSTAT, 0);
	struct ProcNetSockstatEntry *e = d.netSockstat;

	cr_assert_eq(d.numEntries, 4);
	cr_assert_str_eq(e[0].protocol, "sockets");
	cr_assert_eq(e[0].numFields, 1);
	pt_field(&e[0].fields[0], "used", "11");
	cr_assert_str_eq(e[1].protocol, "TCP");
	cr_assert_eq(e[1].numFields, 5);
	pt_field(&e[1].fields[0], "inuse", "1");
	pt_field(&e[1].fields[4], "mem", "220");
	/* an odd word out gets an empty value */
	cr_assert_str_eq(e[3].protocol, "FRAG");
	cr_assert_eq(e[3].numFields, 2);
	pt_field(&e[3].fields[1], "memory", "");
}

Test(proc_sys, net_netstat)
{
	struct ProcData d = pt_read(PROC_NET_NETSTAT, 0);
	struct ProcNetNetstatEntry *e = d.netNetstat;

	cr_assert_eq(d.numEntries, 2);
	cr_assert_str_eq(e[0].category, "TcpExt");
	cr_assert_eq(e[0].numFields, 3);
	pt_field(&e[0].fields[0], "SyncookiesSent", "1");
	pt_field(&e[0].fields[2], "TW", "12");
	cr_assert_str_eq(e[1].category, "IpExt");
	cr_assert_eq(e[1].numFields, 2);
	pt_field(&e[1].fields[1], "InOctets", "9876543210");
}

Test(proc_sys, net_arp)
{
	struct ProcData d = pt_read(PROC_NET_ARP, 0);
	struct ProcNetArpEntry *e = d.netArp;

	cr_assert_eq(d.numEntries, 1);
	cr_assert_str_eq(e->ipAddress, "192.0.2.1");
	cr_assert_str_eq(e->hwType, "0x1");
	cr_assert_str_eq(e->flags, "0x2");
	cr_assert_str_eq(e->hwAddress, "02:fc:00:00:00:05");
	cr_assert_str_eq(e->mask, "*");
	cr_assert_str_eq(e->device, "eth0");
}

Test(proc_sys, version)
{
	struct ProcData d = pt_read(PROC_VERSION, 0);

	cr_assert_eq(d.numEntries, 1);
	cr_assert_str_eq(d.version->version,
			 "Linux version 6.18.0-test (builder@host) (gcc (Debian "
			 "12.2.0-14) 12.2.0) #1 SMP PREEMPT_DYNAMIC");
}

Test(proc_sys, modules)
{
	struct ProcData d = pt_read(PROC_MODULES, 0);
	struct ProcModulesEntry *e = d.modules;

	cr_assert_eq(d.numEntries, 2);
	cr_assert_str_eq(e[0].name, "nf_tables");
	cr_assert_eq(e[0].size, 352256);
	cr_assert_eq(e[0].usedCount, 0);
	cr_assert_str_eq(e[0].usedBy, "-");
	cr_assert_str_eq(e[0].state, "Live");
	cr_assert_str_eq(e[0].address, "0x0000000000000000");
	cr_assert_str_eq(e[0].taint, "");
	cr_assert_str_eq(e[1].name, "vboxdrv");
	cr_assert_eq(e[1].usedCount, 2);
	cr_assert_str_eq(e[1].usedBy, "vboxnetadp,vboxnetflt,");
	cr_assert_str_eq(e[1].address, "0xffffffffc0a00000");
	cr_assert_str_eq(e[1].taint, "(OE)");
}

Test(proc_sys, filesystems)
{
	struct ProcData d = pt_read(PROC_FILESYSTEMS, 0);
	struct ProcFilesystemsEntry *e = d.filesystems;

	cr_assert_eq(d.numEntries, 4);
	cr_assert_eq(e[0].nodev, 1);
	cr_assert_str_eq(e[0].fsType, "sysfs");
	cr_assert_eq(e[1].nodev, 1);
	cr_assert_str_eq(e[1].fsType, "proc");
	cr_assert_eq(e[2].nodev, 0);
	cr_assert_str_eq(e[2].fsType, "ext4");
	cr_assert_eq(e[3].nodev, 0);
	cr_assert_str_eq(e[3].fsType, "xfs");
}

Test(proc_sys, scsi)
{
	struct ProcData d = pt_read(PROC_SCSI, 0);
	struct ProcScsiEntry *e = d.scsi;

	cr_assert(pt_ends(d.filePath, "/scsi/scsi"));
	cr_assert_eq(d.numEntries, 2);
	cr_assert_str_eq(e[0].host, "scsi0");
	cr_assert_str_eq(e[0].channel, "00");
	cr_assert_str_eq(e[0].id, "00");
	cr_assert_str_eq(e[0].lun, "00");
	cr_assert_str_eq(e[0].vendor, "ATA");
	cr_assert_str_eq(e[0].model, "QEMU HARDDISK");
	cr_assert_str_eq(e[0].rev, "2.5+");
	cr_assert_str_eq(e[0].type, "Direct-Access");
	cr_assert_str_eq(e[0].ansiScsiRevision, "05");
	cr_assert_str_eq(e[1].host, "scsi1");
	cr_assert_str_eq(e[1].id, "01");
	cr_assert_str_eq(e[1].vendor, "QEMU");
	cr_assert_str_eq(e[1].model, "QEMU DVD-ROM");
	cr_assert_str_eq(e[1].type, "CD-ROM");
}

Test(proc_sys, pressure_cpu_and_io)
{
	struct ProcData c = pt_read(PROC_PRESSURE_CPU, 0), io = pt_read(PROC_PRESSURE_IO, 0);

	cr_assert_eq(c.numEntries, 2);
	cr_assert_str_eq(c.pressure[0].type, "some");
	cr_assert_float_eq(c.pressure[0].avg10, 1.30, 1e-9);
	cr_assert_float_eq(c.pressure[0].avg60, 0.75, 1e-9);
	cr_assert_float_eq(c.pressure[0].avg300, 0.96, 1e-9);
	cr_assert_eq(c.pressure[0].total, 6481457);
	cr_assert_str_eq(c.pressure[1].type, "full");
	cr_assert_eq(c.pressure[1].total, 0);
	cr_assert(pt_ends(io.filePath, "/pressure/io"));
	cr_assert_eq(io.numEntries, 2);
	cr_assert_float_eq(io.pressure[1].avg10, 0.47, 1e-9);
	cr_assert_eq(io.pressure[1].total, 2724833);
}

static void assert_sysctl(const struct ProcSysDirEntry *e, const char *name, const char *rel,
			  const char *value)
{
	char path[PATH_MAX + 64];

	snprintf(path, sizeof(path), "%s/sys/%s", pt_full(), rel);
	cr_assert_str_eq(e->name, name);
	cr_assert_str_eq(e->path, path);
	cr_assert_str_eq(e->value, value);
}

Test(proc_sys, sysctl_lists)
{
	struct ProcData k = pt_read(PROC_SYS_KERNEL, 0), fs = pt_read(PROC_SYS_FS, 0);
	struct ProcData vm = pt_read(PROC_SYS_VM, 0), v4 = pt_read(PROC_SYS_NET_IPV4, 0);
	struct ProcData core = pt_read(PROC_SYS_NET_CORE, 0);

	/* the fixed list's order; sched_cluster is empty and the others are absent: left out */
	cr_assert_str_eq(k.filePath, "sys_dir");
	cr_assert_eq(k.numEntries, 3);
	assert_sysctl(&k.sysDir[0], "perf_event_paranoid", "kernel/perf_event_paranoid", "2");
	assert_sysctl(&k.sysDir[1], "pid_max", "kernel/pid_max", "4194304");
	assert_sysctl(&k.sysDir[2], "tainted", "kernel/tainted", "0");
	cr_assert_eq(fs.numEntries, 2);
	assert_sysctl(&fs.sysDir[0], "file-nr", "fs/file-nr", "1024\t0\t9223372036854775807");
	assert_sysctl(&fs.sysDir[1], "nr_open", "fs/nr_open", "1048576");
	cr_assert_eq(vm.numEntries, 1);
	assert_sysctl(&vm.sysDir[0], "nr_hugepages", "vm/nr_hugepages", "0");
	cr_assert_eq(v4.numEntries, 2);
	assert_sysctl(&v4.sysDir[0], "tcp_congestion_control", "net/ipv4/tcp_congestion_control",
		      "cubic");
	assert_sysctl(&v4.sysDir[1], "tcp_rmem", "net/ipv4/tcp_rmem", "4096\t131072\t6291456");
	cr_assert_eq(core.numEntries, 1);
	assert_sysctl(&core.sysDir[0], "somaxconn", "net/core/somaxconn", "4096");
}

/* ---- the same sources on this machine, against what the test reads itself ---- */

Test(proc_sys, real_stat_has_a_line_per_online_cpu)
{
	struct ProcData d;
	unsigned i, cpus = 0;

	cr_assert_eq(pt_read_in("/proc", PROC_STAT, 0, &d), 0, "%s", Perror());
	cr_assert_str_eq(d.filePath, "/proc/stat");
	for (i = 0; i < d.numEntries; i++)
		if (!strncmp(d.stat[i].cpuName, "cpu", 3) && d.stat[i].cpuName[3])
			cpus++;
	cr_assert_eq(cpus, (unsigned)sysconf(_SC_NPROCESSORS_ONLN));
	cr_assert_str_eq(d.stat[0].cpuName, "cpu");
	cr_assert_gt(d.stat[0].user + d.stat[0].system + d.stat[0].idle, 0);
}

Test(proc_sys, real_version_and_uptime)
{
	struct ProcData v, u;

	cr_assert_eq(pt_read_in("/proc", PROC_VERSION, 0, &v), 0);
	cr_assert(!strncmp(v.version->version, "Linux version ", 14), "%s", v.version->version);
	cr_assert_eq(pt_read_in("/proc", PROC_UPTIME, 0, &u), 0);
	cr_assert_gt(u.uptime->total, 0.0);
}
