/*
 * proc_data_types.h - what ProcDataRead returns: one struct ProcData per /proc source that
 * could be read, holding an array of entries whose type depends on the source.
 *
 * Enums, structs and field order are libkperf's (include/proc_data_types.h at its current
 * head), so a program or a ctypes layout built for libkperf reads ours unchanged. Every
 * string of a returned entry is non-NULL ("" when the file had nothing there); an array with
 * a count of 0 may be NULL. Everything belongs to the caller until ProcDataFree.
 */
#ifndef KPERF_PROC_DATA_TYPES_H
#define KPERF_PROC_DATA_TYPES_H

#include <stdint.h>
#include <unistd.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The sources, in the order ProcDataRead returns them: the whole system first (always read),
 * then those of one process (read when pid > 0). */
enum ProcSource {
	PROC_STAT, /* /proc/stat */
	PROC_CPUINFO, /* /proc/cpuinfo */
	PROC_MEMINFO, /* /proc/meminfo */
	PROC_LOADAVG, /* /proc/loadavg */
	PROC_VMSTAT, /* /proc/vmstat */
	PROC_NET_DEV, /* /proc/net/dev */
	PROC_DISKSTATS, /* /proc/diskstats */
	PROC_UPTIME, /* /proc/uptime */
	PROC_MOUNTS, /* /proc/mounts */
	PROC_SOFTIRQS, /* /proc/softirqs */
	PROC_SLABINFO, /* /proc/slabinfo (root only) */
	PROC_SCHEDSTAT, /* /proc/schedstat (CONFIG_SCHEDSTATS) */
	PROC_INTERRUPTS, /* /proc/interrupts */
	PROC_IRQ_AFFINITY, /* /proc/irq/default_smp_affinity */
	PROC_LOCKS, /* /proc/locks */
	PROC_ZONEINFO, /* /proc/zoneinfo */
	PROC_BUDDYINFO, /* /proc/buddyinfo */
	PROC_NET_SOCKSTAT, /* /proc/net/sockstat */
	PROC_NET_NETSTAT, /* /proc/net/netstat */
	PROC_NET_ARP, /* /proc/net/arp */
	PROC_VERSION, /* /proc/version */
	PROC_MODULES, /* /proc/modules (CONFIG_MODULES) */
	PROC_FILESYSTEMS, /* /proc/filesystems */
	PROC_SCSI, /* /proc/scsi/scsi (CONFIG_SCSI_PROC_FS) */
	PROC_PRESSURE_CPU, /* /proc/pressure/cpu (CONFIG_PSI) */
	PROC_PRESSURE_IO, /* /proc/pressure/io (CONFIG_PSI) */
	PROC_SYS_KERNEL, /* a fixed list of /proc/sys/kernel/ files */
	PROC_SYS_FS, /* a fixed list of /proc/sys/fs/ files */
	PROC_SYS_VM, /* a fixed list of /proc/sys/vm/ files */
	PROC_SYS_NET_IPV4, /* a fixed list of /proc/sys/net/ipv4/ files */
	PROC_SYS_NET_CORE, /* a fixed list of /proc/sys/net/core/ files */
	PROC_PID_STAT, /* /proc/PID/stat */
	PROC_PID_STATM, /* /proc/PID/statm */
	PROC_PID_STATUS, /* /proc/PID/status */
	PROC_PID_IO, /* /proc/PID/io */
	PROC_PID_SMAPS_ROLLUP, /* /proc/PID/smaps_rollup */
	PROC_PID_FD, /* the entries of /proc/PID/fd */
	PROC_PID_NUMA_MAPS, /* /proc/PID/numa_maps (CONFIG_NUMA) */
	PROC_PID_SMAPS, /* /proc/PID/smaps */
	PROC_PID_ENVIRON, /* /proc/PID/environ */
	PROC_PID_CMDLINE, /* /proc/PID/cmdline */
	PROC_PID_LIMITS, /* /proc/PID/limits */
	PROC_PID_STACK, /* /proc/PID/stack (root only) */
	PROC_PID_WCHAN, /* /proc/PID/wchan */
	PROC_PID_MAPS, /* /proc/PID/maps */
	PROC_PID_COMM, /* /proc/PID/comm */
	PROC_PID_TASK_STAT, /* /proc/PID/task/TID/stat of every thread */
	MAX_PROC_SOURCE
};

/* A "name: value" pair, both as the file spells them. */
struct ProcField {
	char *key;
	char *value;
};

/* Which line of /proc/stat a ProcStatEntry holds, i.e. which of its fields are set. */
enum ProcStatLineType {
	PROC_STAT_LINE_CPU = 0, /* "cpu" or "cpuN": user .. guestNice */
	PROC_STAT_LINE_INTR, /* intrTotal, intrPerIrq */
	PROC_STAT_LINE_CTXT, /* ctxt */
	PROC_STAT_LINE_BTIME, /* btime */
	PROC_STAT_LINE_PROCESSES, /* processes */
	PROC_STAT_LINE_PROCS_RUNNING, /* procsRunning */
	PROC_STAT_LINE_PROCS_BLOCKED, /* procsBlocked */
	PROC_STAT_LINE_SOFTIRQ /* softirqTotal, softirqPerType */
};

/* One line of /proc/stat; cpuName is the line's first word ("cpu0", "intr", ...). */
struct ProcStatEntry {
	char *cpuName;
	unsigned long long user, nice, system, idle, ioWait, irq, softirq, steal, guest, guestNice;
	enum ProcStatLineType lineType;
	unsigned long long ctxt, btime, processes, procsRunning, procsBlocked;
	unsigned long long intrTotal, numIntrPerIrq;
	unsigned long long *intrPerIrq;
	unsigned long long softirqTotal, numSoftirqPerType;
	unsigned long long *softirqPerType;
};

/* One processor block of /proc/cpuinfo (blocks end at a blank line). */
struct ProcCpuinfoEntry {
	unsigned numFields;
	struct ProcField *fields;
};

/* One line of /proc/meminfo: "MemTotal: 123 kB" is key, value, unit ("" when none). */
struct ProcMeminfoEntry {
	char *key;
	unsigned long long value;
	char *unit;
};

struct ProcLoadavgEntry {
	double load1, load5, load15;
	unsigned runningProcs, totalProcs;
	int lastPid;
};

/* One "name value" line of /proc/vmstat. */
struct ProcVmstatEntry {
	char *key;
	unsigned long long value;
};

/* One interface line of /proc/net/dev. */
struct ProcNetDevEntry {
	char *iface;
	unsigned long long rxBytes, rxPackets, rxErrs, rxDrop, rxFifo, rxFrame, rxCompressed,
		rxMulticast;
	unsigned long long txBytes, txPackets, txErrs, txDrop, txFifo, txColls, txCarrier,
		txCompressed;
};

/* One device line of /proc/diskstats; fields a kernel does not print stay 0. */
struct ProcDiskstatsEntry {
	int major, minor;
	char *device;
	unsigned long long readsCompleted, readsMerged, sectorsRead, msReading;
	unsigned long long writesCompleted, writesMerged, sectorsWritten, msWriting;
	unsigned long long iosInProgress, msIos, weightedMsIos;
	unsigned long long discardsCompleted, discardsMerged, sectorsDiscarded, msDiscarding;
	unsigned long long flushCompleted, msFlushing;
};

/* /proc/uptime, in seconds. */
struct ProcUptimeEntry {
	double total, idle;
};

/* One line of /proc/mounts, octal escapes (\040) left as the kernel writes them. */
struct ProcMountsEntry {
	char *device, *mountPoint, *fsType, *options;
	int dump, passVal;
};

/* One softirq type of /proc/softirqs with its count on each CPU column. */
struct ProcSoftirqsEntry {
	char *type;
	unsigned numCpus;
	unsigned long long *perCpu;
};

/* One cache line of /proc/slabinfo 2.1. */
struct ProcSlabinfoEntry {
	char *name;
	unsigned long long activeObjs, numObjs, objsize, objperslab, pagesperslab;
	unsigned long long limit, batchcount, sharedfactor;
	unsigned long long activeSlabs, numSlabs, sharedavail;
};

/* A "domainN" line of /proc/schedstat: its cpumask and the counters after it. */
struct ProcSchedstatDomainEntry {
	int domainId;
	char *mask;
	unsigned numValues;
	unsigned long long *values;
};

/* A "cpuN" line of /proc/schedstat with the domain lines that follow it. */
struct ProcSchedstatEntry {
	int cpuId;
	unsigned long long yldCount, schedCount, schedGoidle;
	unsigned long long ttwuCount, ttwuLocal, rqCpuTime, runDelay, pcount;
	unsigned numDomains;
	struct ProcSchedstatDomainEntry *domains;
};

/* One line of /proc/interrupts: "0", "NMI", ...; the words after the counts are the
 * description. */
struct ProcInterruptsEntry {
	char *irq;
	unsigned numCpus;
	unsigned long long *perCpu;
	char *description;
};

/* The hex cpumask of /proc/irq/default_smp_affinity. */
struct ProcIrqAffinityEntry {
	char *affinity;
};

/* A blank-line separated block of /proc/locks, each "N: rest" line one field. */
struct ProcLocksEntry {
	unsigned numFields;
	struct ProcField *fields;
};

/* The counters of one CPU in the "pagesets" part of a zone. */
struct ProcZoneinfoPageset {
	int cpuId;
	unsigned long long count, high, batch, vmStatsThreshold;
};

/* One "Node N, zone NAME" block of /proc/zoneinfo. */
struct ProcZoneinfoEntry {
	int node;
	char *zone;
	/* the zone's page counts and watermarks */
	unsigned long long pagesFree;
	unsigned long long pagesMin, pagesLow, pagesHigh;
	unsigned long long pagesSpanned, pagesPresent, pagesManaged, pagesCma;
	char *protection;
	char *nodeUnreclaimable;
	char *startPfn;
	/* the "per-node stats" lines (printed with the node's first zone only) */
	unsigned numNodeStats;
	struct ProcField *nodeStats;
	/* every other line of the zone part (nr_free_pages, boost, ...) */
	unsigned numStats;
	struct ProcField *stats;
	unsigned numPagesets;
	struct ProcZoneinfoPageset *pagesets;
};

/* One line of /proc/buddyinfo: free blocks of each order. */
struct ProcBuddyinfoEntry {
	int node;
	char *zone, *zoneName;
	unsigned numOrders;
	unsigned long long *orders;
};

/* One "PROTO: name value name value" line of /proc/net/sockstat. */
struct ProcNetSockstatEntry {
	char *protocol;
	unsigned numFields;
	struct ProcField *fields;
};

/* One header/values line pair of /proc/net/netstat ("TcpExt", "IpExt", ...). */
struct ProcNetNetstatEntry {
	char *category;
	unsigned numFields;
	struct ProcField *fields;
};

/* One neighbour line of /proc/net/arp. */
struct ProcNetArpEntry {
	char *ipAddress;
	char *hwType;
	char *flags;
	char *hwAddress;
	char *mask;
	char *device;
};

struct ProcVersionEntry {
	char *version;
};

/* One line of /proc/modules. */
struct ProcModulesEntry {
	char *name;
	unsigned long long size;
	int usedCount;
	char *usedBy, *state, *address, *taint;
};

/* One line of /proc/filesystems; nodev is 1 for a filesystem that needs no device. */
struct ProcFilesystemsEntry {
	int nodev;
	char *fsType;
};

/* One device (three lines) of /proc/scsi/scsi. */
struct ProcScsiEntry {
	char *host;
	char *channel;
	char *id;
	char *lun;
	char *vendor;
	char *model;
	char *rev;
	char *type;
	char *ansiScsiRevision;
};

/* The "some" or "full" line of a /proc/pressure file. */
struct ProcPressureEntry {
	char *type;
	double avg10, avg60, avg300;
	unsigned long long total;
};

/* One sysctl file: its base name, full path and trimmed content. */
struct ProcSysDirEntry {
	char *name, *path, *value;
};

/* /proc/PID/stat, field for field (proc(5)). */
struct ProcPidStatEntry {
	int pid;
	char *comm;
	char state;
	int ppid, pgrp, session, ttyNr, tpgid;
	unsigned long long flags, minflt, cminflt, majflt, cmajflt, utime, stime;
	long long cutime, cstime;
	int priority, niceVal, numThreads;
	long long itrealvalue;
	unsigned long long starttime, vsize, rsslim;
	long long rss;
	unsigned long long startcode, endcode, startstack, kstkesp, kstkeip;
	unsigned long long signal, blocked, sigignore, sigcatch, wchan, nswap, cnswap;
	int exitSignal, processor;
	unsigned rtPriority, policy;
	unsigned long long delayacctBlkioTicks, guestTime;
	long long cguestTime;
	unsigned long long startData, endData, startBrk, argStart, argEnd, envStart, envEnd;
	int exitCode;
};

/* /proc/PID/statm, in pages. */
struct ProcPidStatmEntry {
	unsigned long long size, resident, shared, text, lib, data, dt;
};

/* Every "Name: value" line of /proc/PID/status. */
struct ProcPidStatusEntry {
	unsigned numFields;
	struct ProcField *fields;
};

struct ProcPidIoEntry {
	unsigned long long rchar, wchar, syscr, syscw, readBytes, writeBytes, cancelledWriteBytes;
};

/* /proc/PID/smaps_rollup: the "[rollup]" header line as field "rollup", then every
 * "Name: value" line. */
struct ProcPidSmapsRollupEntry {
	unsigned numFields;
	struct ProcField *fields;
};

/* The number of open file descriptors. */
struct ProcPidFdEntry {
	unsigned fdCount;
};

/* One mapping of /proc/PID/numa_maps: "key=value" words, and other words as key "flag". */
struct ProcPidNumaMapsEntry {
	char *address;
	unsigned numFields;
	struct ProcField *fields;
};

/* One mapping of /proc/PID/smaps: its maps line, then its "Name: value" lines. */
struct ProcPidSmapsEntry {
	char *mapping;
	unsigned numFields;
	struct ProcField *fields;
};

/* One NAME=value variable of /proc/PID/environ. */
struct ProcPidEnvironEntry {
	char *name, *value;
};

/* The arguments joined with spaces. */
struct ProcPidCmdlineEntry {
	char *cmdline;
};

/* One limit of /proc/PID/limits ("Max open files"), units "" when the file has none. */
struct ProcPidLimitsEntry {
	char *limit, *soft, *hard, *units;
};

/* One kernel frame of /proc/PID/stack: "[<0>] func+0x1/0x2" is address "0", symbol
 * "func+0x1/0x2". */
struct ProcPidStackEntry {
	char *address, *symbol;
};

struct ProcPidWchanEntry {
	char *wchan;
};

/* One line of /proc/PID/maps, every column a string as printed. */
struct ProcPidMapsEntry {
	char *start, *end, *perms, *offset, *dev, *inode, *pathname;
};

struct ProcPidCommEntry {
	char *comm;
};

/* /proc/PID/task/TID/stat of one thread, as ProcPidStatEntry. */
struct ProcPidTaskStatEntry {
	int pid;
	char *comm;
	char state;
	int ppid, pgrp, session, ttyNr, tpgid;
	unsigned long long flags, minflt, cminflt, majflt, cmajflt, utime, stime;
	long long cutime, cstime;
	int priority, niceVal, numThreads;
	long long itrealvalue;
	unsigned long long starttime, vsize, rsslim;
	long long rss;
	unsigned long long startcode, endcode, startstack, kstkesp, kstkeip;
	unsigned long long signal, blocked, sigignore, sigcatch, wchan, nswap, cnswap;
	int exitSignal, processor;
	unsigned rtPriority, policy;
	unsigned long long delayacctBlkioTicks, guestTime;
	long long cguestTime;
	unsigned long long startData, endData, startBrk, argStart, argEnd, envStart, envEnd;
	int exitCode;
};

/* One source that was read. pid is 0 for the system sources. filePath is the file read;
 * "sys_dir" for the PROC_SYS_* sources (each entry has its own path); for
 * PROC_PID_TASK_STAT the stat files of the threads, one per line. The union member to use
 * is the one named after <source>; it has numEntries elements. */
struct ProcData {
	enum ProcSource source;
	int pid;
	unsigned numEntries;
	char *filePath;
	union {
		struct ProcStatEntry *stat;
		struct ProcCpuinfoEntry *cpuinfo;
		struct ProcMeminfoEntry *meminfo;
		struct ProcLoadavgEntry *loadavg;
		struct ProcVmstatEntry *vmstat;
		struct ProcNetDevEntry *netDev;
		struct ProcDiskstatsEntry *diskstats;
		struct ProcUptimeEntry *uptime;
		struct ProcMountsEntry *mounts;
		struct ProcSoftirqsEntry *softirqs;
		struct ProcSlabinfoEntry *slabinfo;
		struct ProcSchedstatEntry *schedstat;
		struct ProcInterruptsEntry *interrupts;
		struct ProcIrqAffinityEntry *irqAffinity;
		struct ProcLocksEntry *locks;
		struct ProcZoneinfoEntry *zoneinfo;
		struct ProcBuddyinfoEntry *buddyinfo;
		struct ProcNetSockstatEntry *netSockstat;
		struct ProcNetNetstatEntry *netNetstat;
		struct ProcNetArpEntry *netArp;
		struct ProcVersionEntry *version;
		struct ProcModulesEntry *modules;
		struct ProcFilesystemsEntry *filesystems;
		struct ProcScsiEntry *scsi;
		struct ProcPressureEntry *pressure;
		struct ProcSysDirEntry *sysDir;
		struct ProcPidStatEntry *pidStat;
		struct ProcPidStatmEntry *pidStatm;
		struct ProcPidStatusEntry *pidStatus;
		struct ProcPidIoEntry *pidIo;
		struct ProcPidSmapsRollupEntry *pidSmapsRollup;
		struct ProcPidFdEntry *pidFd;
		struct ProcPidNumaMapsEntry *pidNumaMaps;
		struct ProcPidSmapsEntry *pidSmaps;
		struct ProcPidEnvironEntry *pidEnviron;
		struct ProcPidCmdlineEntry *pidCmdline;
		struct ProcPidLimitsEntry *pidLimits;
		struct ProcPidStackEntry *pidStack;
		struct ProcPidWchanEntry *pidWchan;
		struct ProcPidMapsEntry *pidMaps;
		struct ProcPidCommEntry *pidComm;
		struct ProcPidTaskStatEntry *pidTaskStat;
	};
};

#ifdef __cplusplus
}
#endif

#endif
