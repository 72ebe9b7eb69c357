"""ctypes mirrors of include/kperf/proc_data_types.h (ProcDataRead), generated from the header
and checked against the C compiler by tests/python/test_layout.py."""

import ctypes
import enum
from ctypes import POINTER, c_char, c_char_p, c_double, c_int, c_longlong, c_uint, c_ulonglong

c_enum = c_int

class ProcSource(enum.IntEnum):
    PROC_STAT = 0
    PROC_CPUINFO = 1
    PROC_MEMINFO = 2
    PROC_LOADAVG = 3
    PROC_VMSTAT = 4
    PROC_NET_DEV = 5
    PROC_DISKSTATS = 6
    PROC_UPTIME = 7
    PROC_MOUNTS = 8
    PROC_SOFTIRQS = 9
    PROC_SLABINFO = 10
    PROC_SCHEDSTAT = 11
    PROC_INTERRUPTS = 12
    PROC_IRQ_AFFINITY = 13
    PROC_LOCKS = 14
    PROC_ZONEINFO = 15
    PROC_BUDDYINFO = 16
    PROC_NET_SOCKSTAT = 17
    PROC_NET_NETSTAT = 18
    PROC_NET_ARP = 19
    PROC_VERSION = 20
    PROC_MODULES = 21
    PROC_FILESYSTEMS = 22
    PROC_SCSI = 23
    PROC_PRESSURE_CPU = 24
    PROC_PRESSURE_IO = 25
    PROC_SYS_KERNEL = 26
    PROC_SYS_FS = 27
    PROC_SYS_VM = 28
    PROC_SYS_NET_IPV4 = 29
    PROC_SYS_NET_CORE = 30
    PROC_PID_STAT = 31
    PROC_PID_STATM = 32
    PROC_PID_STATUS = 33
    PROC_PID_IO = 34
    PROC_PID_SMAPS_ROLLUP = 35
    PROC_PID_FD = 36
    PROC_PID_NUMA_MAPS = 37
    PROC_PID_SMAPS = 38
    PROC_PID_ENVIRON = 39
    PROC_PID_CMDLINE = 40
    PROC_PID_LIMITS = 41
    PROC_PID_STACK = 42
    PROC_PID_WCHAN = 43
    PROC_PID_MAPS = 44
    PROC_PID_COMM = 45
    PROC_PID_TASK_STAT = 46
    MAX_PROC_SOURCE = 47


class ProcStatLineType(enum.IntEnum):
    PROC_STAT_LINE_CPU = 0
    PROC_STAT_LINE_INTR = 1
    PROC_STAT_LINE_CTXT = 2
    PROC_STAT_LINE_BTIME = 3
    PROC_STAT_LINE_PROCESSES = 4
    PROC_STAT_LINE_PROCS_RUNNING = 5
    PROC_STAT_LINE_PROCS_BLOCKED = 6
    PROC_STAT_LINE_SOFTIRQ = 7


class ProcField(ctypes.Structure):
    pass


class ProcStatEntry(ctypes.Structure):
    pass


class ProcCpuinfoEntry(ctypes.Structure):
    pass


class ProcMeminfoEntry(ctypes.Structure):
    pass


class ProcLoadavgEntry(ctypes.Structure):
    pass


class ProcVmstatEntry(ctypes.Structure):
    pass


class ProcNetDevEntry(ctypes.Structure):
    pass


class ProcDiskstatsEntry(ctypes.Structure):
    pass


class ProcUptimeEntry(ctypes.Structure):
    pass


class ProcMountsEntry(ctypes.Structure):
    pass


class ProcSoftirqsEntry(ctypes.Structure):
    pass


class ProcSlabinfoEntry(ctypes.Structure):
    pass


class ProcSchedstatDomainEntry(ctypes.Structure):
    pass


class ProcSchedstatEntry(ctypes.Structure):
    pass


class ProcInterruptsEntry(ctypes.Structure):
    pass


class ProcIrqAffinityEntry(ctypes.Structure):
    pass


class ProcLocksEntry(ctypes.Structure):
    pass


class ProcZoneinfoPageset(ctypes.Structure):
    pass


class ProcZoneinfoEntry(ctypes.Structure):
    pass


class ProcBuddyinfoEntry(ctypes.Structure):
    pass


class ProcNetSockstatEntry(ctypes.Structure):
    pass


class ProcNetNetstatEntry(ctypes.Structure):
    pass


class ProcNetArpEntry(ctypes.Structure):
    pass


class ProcVersionEntry(ctypes.Structure):
    pass


class ProcModulesEntry(ctypes.Structure):
    pass


class ProcFilesystemsEntry(ctypes.Structure):
    pass


class ProcScsiEntry(ctypes.Structure):
    pass


class ProcPressureEntry(ctypes.Structure):
    pass


class ProcSysDirEntry(ctypes.Structure):
    pass


class ProcPidStatEntry(ctypes.Structure):
    pass


class ProcPidStatmEntry(ctypes.Structure):
    pass


class ProcPidStatusEntry(ctypes.Structure):
    pass


class ProcPidIoEntry(ctypes.Structure):
    pass


class ProcPidSmapsRollupEntry(ctypes.Structure):
    pass


class ProcPidFdEntry(ctypes.Structure):
    pass


class ProcPidNumaMapsEntry(ctypes.Structure):
    pass


class ProcPidSmapsEntry(ctypes.Structure):
    pass


class ProcPidEnvironEntry(ctypes.Structure):
    pass


class ProcPidCmdlineEntry(ctypes.Structure):
    pass


class ProcPidLimitsEntry(ctypes.Structure):
    pass


class ProcPidStackEntry(ctypes.Structure):
    pass


class ProcPidWchanEntry(ctypes.Structure):
    pass


class ProcPidMapsEntry(ctypes.Structure):
    pass


class ProcPidCommEntry(ctypes.Structure):
    pass


class ProcPidTaskStatEntry(ctypes.Structure):
    pass


class ProcData(ctypes.Structure):
    pass


ProcField._fields_ = [
    ("key", c_char_p),
    ("value", c_char_p),
]

ProcStatEntry._fields_ = [
    ("cpuName", c_char_p),
    ("user", c_ulonglong),
    ("nice", c_ulonglong),
    ("system", c_ulonglong),
    ("idle", c_ulonglong),
    ("ioWait", c_ulonglong),
    ("irq", c_ulonglong),
    ("softirq", c_ulonglong),
    ("steal", c_ulonglong),
    ("guest", c_ulonglong),
    ("guestNice", c_ulonglong),
    ("lineType", c_enum),
    ("ctxt", c_ulonglong),
    ("btime", c_ulonglong),
    ("processes", c_ulonglong),
    ("procsRunning", c_ulonglong),
    ("procsBlocked", c_ulonglong),
    ("intrTotal", c_ulonglong),
    ("numIntrPerIrq", c_ulonglong),
    ("intrPerIrq", POINTER(c_ulonglong)),
    ("softirqTotal", c_ulonglong),
    ("numSoftirqPerType", c_ulonglong),
    ("softirqPerType", POINTER(c_ulonglong)),
]

ProcCpuinfoEntry._fields_ = [
    ("numFields", c_uint),
    ("fields", POINTER(ProcField)),
]

ProcMeminfoEntry._fields_ = [
    ("key", c_char_p),
    ("value", c_ulonglong),
    ("unit", c_char_p),
]

ProcLoadavgEntry._fields_ = [
    ("load1", c_double),
    ("load5", c_double),
    ("load15", c_double),
    ("runningProcs", c_uint),
    ("totalProcs", c_uint),
    ("lastPid", c_int),
]

ProcVmstatEntry._fields_ = [
    ("key", c_char_p),
    ("value", c_ulonglong),
]

ProcNetDevEntry._fields_ = [
    ("iface", c_char_p),
    ("rxBytes", c_ulonglong),
    ("rxPackets", c_ulonglong),
    ("rxErrs", c_ulonglong),
    ("rxDrop", c_ulonglong),
    ("rxFifo", c_ulonglong),
    ("rxFrame", c_ulonglong),
    ("rxCompressed", c_ulonglong),
    ("rxMulticast", c_ulonglong),
    ("txBytes", c_ulonglong),
    ("txPackets", c_ulonglong),
    ("txErrs", c_ulonglong),
    ("txDrop", c_ulonglong),
    ("txFifo", c_ulonglong),
    ("txColls", c_ulonglong),
    ("txCarrier", c_ulonglong),
    ("txCompressed", c_ulonglong),
]

ProcDiskstatsEntry._fields_ = [
    ("major", c_int),
    ("minor", c_int),
    ("device", c_char_p),
    ("readsCompleted", c_ulonglong),
    ("readsMerged", c_ulonglong),
    ("sectorsRead", c_ulonglong),
    ("msReading", c_ulonglong),
    ("writesCompleted", c_ulonglong),
    ("writesMerged", c_ulonglong),
    ("sectorsWritten", c_ulonglong),
    ("msWriting", c_ulonglong),
    ("iosInProgress", c_ulonglong),
    ("msIos", c_ulonglong),
    ("weightedMsIos", c_ulonglong),
    ("discardsCompleted", c_ulonglong),
    ("discardsMerged", c_ulonglong),
    ("sectorsDiscarded", c_ulonglong),
    ("msDiscarding", c_ulonglong),
    ("flushCompleted", c_ulonglong),
    ("msFlushing", c_ulonglong),
]

ProcUptimeEntry._fields_ = [
    ("total", c_double),
    ("idle", c_double),
]

ProcMountsEntry._fields_ = [
    ("device", c_char_p),
    ("mountPoint", c_char_p),
    ("fsType", c_char_p),
    ("options", c_char_p),
    ("dump", c_int),
    ("passVal", c_int),
]

ProcSoftirqsEntry._fields_ = [
    ("type", c_char_p),
    ("numCpus", c_uint),
    ("perCpu", POINTER(c_ulonglong)),
]

ProcSlabinfoEntry._fields_ = [
    ("name", c_char_p),
    ("activeObjs", c_ulonglong),
    ("numObjs", c_ulonglong),
    ("objsize", c_ulonglong),
    ("objperslab", c_ulonglong),
    ("pagesperslab", c_ulonglong),
    ("limit", c_ulonglong),
    ("batchcount", c_ulonglong),
    ("sharedfactor", c_ulonglong),
    ("activeSlabs", c_ulonglong),
    ("numSlabs", c_ulonglong),
    ("sharedavail", c_ulonglong),
]

ProcSchedstatDomainEntry._fields_ = [
    ("domainId", c_int),
    ("mask", c_char_p),
    ("numValues", c_uint),
    ("values", POINTER(c_ulonglong)),
]

ProcSchedstatEntry._fields_ = [
    ("cpuId", c_int),
    ("yldCount", c_ulonglong),
    ("schedCount", c_ulonglong),
    ("schedGoidle", c_ulonglong),
    ("ttwuCount", c_ulonglong),
    ("ttwuLocal", c_ulonglong),
    ("rqCpuTime", c_ulonglong),
    ("runDelay", c_ulonglong),
    ("pcount", c_ulonglong),
    ("numDomains", c_uint),
    ("domains", POINTER(ProcSchedstatDomainEntry)),
]

ProcInterruptsEntry._fields_ = [
    ("irq", c_char_p),
    ("numCpus", c_uint),
    ("perCpu", POINTER(c_ulonglong)),
    ("description", c_char_p),
]

ProcIrqAffinityEntry._fields_ = [
    ("affinity", c_char_p),
]

ProcLocksEntry._fields_ = [
    ("numFields", c_uint),
    ("fields", POINTER(ProcField)),
]

ProcZoneinfoPageset._fields_ = [
    ("cpuId", c_int),
    ("count", c_ulonglong),
    ("high", c_ulonglong),
    ("batch", c_ulonglong),
    ("vmStatsThreshold", c_ulonglong),
]

ProcZoneinfoEntry._fields_ = [
    ("node", c_int),
    ("zone", c_char_p),
    ("pagesFree", c_ulonglong),
    ("pagesMin", c_ulonglong),
    ("pagesLow", c_ulonglong),
    ("pagesHigh", c_ulonglong),
    ("pagesSpanned", c_ulonglong),
    ("pagesPresent", c_ulonglong),
    ("pagesManaged", c_ulonglong),
    ("pagesCma", c_ulonglong),
    ("protection", c_char_p),
    ("nodeUnreclaimable", c_char_p),
    ("startPfn", c_char_p),
    ("numNodeStats", c_uint),
    ("nodeStats", POINTER(ProcField)),
    ("numStats", c_uint),
    ("stats", POINTER(ProcField)),
    ("numPagesets", c_uint),
    ("pagesets", POINTER(ProcZoneinfoPageset)),
]

ProcBuddyinfoEntry._fields_ = [
    ("node", c_int),
    ("zone", c_char_p),
    ("zoneName", c_char_p),
    ("numOrders", c_uint),
    ("orders", POINTER(c_ulonglong)),
]

ProcNetSockstatEntry._fields_ = [
    ("protocol", c_char_p),
    ("numFields", c_uint),
    ("fields", POINTER(ProcField)),
]

ProcNetNetstatEntry._fields_ = [
    ("category", c_char_p),
    ("numFields", c_uint),
    ("fields", POINTER(ProcField)),
]

ProcNetArpEntry._fields_ = [
    ("ipAddress", c_char_p),
    ("hwType", c_char_p),
    ("flags", c_char_p),
    ("hwAddress", c_char_p),
    ("mask", c_char_p),
    ("device", c_char_p),
]

ProcVersionEntry._fields_ = [
    ("version", c_char_p),
]

ProcModulesEntry._fields_ = [
    ("name", c_char_p),
    ("size", c_ulonglong),
    ("usedCount", c_int),
    ("usedBy", c_char_p),
    ("state", c_char_p),
    ("address", c_char_p),
    ("taint", c_char_p),
]

ProcFilesystemsEntry._fields_ = [
    ("nodev", c_int),
    ("fsType", c_char_p),
]

ProcScsiEntry._fields_ = [
    ("host", c_char_p),
    ("channel", c_char_p),
    ("id", c_char_p),
    ("lun", c_char_p),
    ("vendor", c_char_p),
    ("model", c_char_p),
    ("rev", c_char_p),
    ("type", c_char_p),
    ("ansiScsiRevision", c_char_p),
]

ProcPressureEntry._fields_ = [
    ("type", c_char_p),
    ("avg10", c_double),
    ("avg60", c_double),
    ("avg300", c_double),
    ("total", c_ulonglong),
]

ProcSysDirEntry._fields_ = [
    ("name", c_char_p),
    ("path", c_char_p),
    ("value", c_char_p),
]

ProcPidStatEntry._fields_ = [
    ("pid", c_int),
    ("comm", c_char_p),
    ("state", c_char),
    ("ppid", c_int),
    ("pgrp", c_int),
    ("session", c_int),
    ("ttyNr", c_int),
    ("tpgid", c_int),
    ("flags", c_ulonglong),
    ("minflt", c_ulonglong),
    ("cminflt", c_ulonglong),
    ("majflt", c_ulonglong),
    ("cmajflt", c_ulonglong),
    ("utime", c_ulonglong),
    ("stime", c_ulonglong),
    ("cutime", c_longlong),
    ("cstime", c_longlong),
    ("priority", c_int),
    ("niceVal", c_int),
    ("numThreads", c_int),
    ("itrealvalue", c_longlong),
    ("starttime", c_ulonglong),
    ("vsize", c_ulonglong),
    ("rsslim", c_ulonglong),
    ("rss", c_longlong),
    ("startcode", c_ulonglong),
    ("endcode", c_ulonglong),
    ("startstack", c_ulonglong),
    ("kstkesp", c_ulonglong),
    ("kstkeip", c_ulonglong),
    ("signal", c_ulonglong),
    ("blocked", c_ulonglong),
    ("sigignore", c_ulonglong),
    ("sigcatch", c_ulonglong),
    ("wchan", c_ulonglong),
    ("nswap", c_ulonglong),
    ("cnswap", c_ulonglong),
    ("exitSignal", c_int),
    ("processor", c_int),
    ("rtPriority", c_uint),
    ("policy", c_uint),
    ("delayacctBlkioTicks", c_ulonglong),
    ("guestTime", c_ulonglong),
    ("cguestTime", c_longlong),
    ("startData", c_ulonglong),
    ("endData", c_ulonglong),
    ("startBrk", c_ulonglong),
    ("argStart", c_ulonglong),
    ("argEnd", c_ulonglong),
    ("envStart", c_ulonglong),
    ("envEnd", c_ulonglong),
    ("exitCode", c_int),
]

ProcPidStatmEntry._fields_ = [
    ("size", c_ulonglong),
    ("resident", c_ulonglong),
    ("shared", c_ulonglong),
    ("text", c_ulonglong),
    ("lib", c_ulonglong),
    ("data", c_ulonglong),
    ("dt", c_ulonglong),
]

ProcPidStatusEntry._fields_ = [
    ("numFields", c_uint),
    ("fields", POINTER(ProcField)),
]

ProcPidIoEntry._fields_ = [
    ("rchar", c_ulonglong),
    ("wchar", c_ulonglong),
    ("syscr", c_ulonglong),
    ("syscw", c_ulonglong),
    ("readBytes", c_ulonglong),
    ("writeBytes", c_ulonglong),
    ("cancelledWriteBytes", c_ulonglong),
]

ProcPidSmapsRollupEntry._fields_ = [
    ("numFields", c_uint),
    ("fields", POINTER(ProcField)),
]

ProcPidFdEntry._fields_ = [
    ("fdCount", c_uint),
]

ProcPidNumaMapsEntry._fields_ = [
    ("address", c_char_p),
    ("numFields", c_uint),
    ("fields", POINTER(ProcField)),
]

ProcPidSmapsEntry._fields_ = [
    ("mapping", c_char_p),
    ("numFields", c_uint),
    ("fields", POINTER(ProcField)),
]

ProcPidEnvironEntry._fields_ = [
    ("name", c_char_p),
    ("value", c_char_p),
]

ProcPidCmdlineEntry._fields_ = [
    ("cmdline", c_char_p),
]

ProcPidLimitsEntry._fields_ = [
    ("limit", c_char_p),
    ("soft", c_char_p),
    ("hard", c_char_p),
    ("units", c_char_p),
]

ProcPidStackEntry._fields_ = [
    ("address", c_char_p),
    ("symbol", c_char_p),
]

ProcPidWchanEntry._fields_ = [
    ("wchan", c_char_p),
]

ProcPidMapsEntry._fields_ = [
    ("start", c_char_p),
    ("end", c_char_p),
    ("perms", c_char_p),
    ("offset", c_char_p),
    ("dev", c_char_p),
    ("inode", c_char_p),
    ("pathname", c_char_p),
]

ProcPidCommEntry._fields_ = [
    ("comm", c_char_p),
]

ProcPidTaskStatEntry._fields_ = [
    ("pid", c_int),
    ("comm", c_char_p),
    ("state", c_char),
    ("ppid", c_int),
    ("pgrp", c_int),
    ("session", c_int),
    ("ttyNr", c_int),
    ("tpgid", c_int),
    ("flags", c_ulonglong),
    ("minflt", c_ulonglong),
    ("cminflt", c_ulonglong),
    ("majflt", c_ulonglong),
    ("cmajflt", c_ulonglong),
    ("utime", c_ulonglong),
    ("stime", c_ulonglong),
    ("cutime", c_longlong),
    ("cstime", c_longlong),
    ("priority", c_int),
    ("niceVal", c_int),
    ("numThreads", c_int),
    ("itrealvalue", c_longlong),
    ("starttime", c_ulonglong),
    ("vsize", c_ulonglong),
    ("rsslim", c_ulonglong),
    ("rss", c_longlong),
    ("startcode", c_ulonglong),
    ("endcode", c_ulonglong),
    ("startstack", c_ulonglong),
    ("kstkesp", c_ulonglong),
    ("kstkeip", c_ulonglong),
    ("signal", c_ulonglong),
    ("blocked", c_ulonglong),
    ("sigignore", c_ulonglong),
    ("sigcatch", c_ulonglong),
    ("wchan", c_ulonglong),
    ("nswap", c_ulonglong),
    ("cnswap", c_ulonglong),
    ("exitSignal", c_int),
    ("processor", c_int),
    ("rtPriority", c_uint),
    ("policy", c_uint),
    ("delayacctBlkioTicks", c_ulonglong),
    ("guestTime", c_ulonglong),
    ("cguestTime", c_longlong),
    ("startData", c_ulonglong),
    ("endData", c_ulonglong),
    ("startBrk", c_ulonglong),
    ("argStart", c_ulonglong),
    ("argEnd", c_ulonglong),
    ("envStart", c_ulonglong),
    ("envEnd", c_ulonglong),
    ("exitCode", c_int),
]

class _ProcDataUnion(ctypes.Union):
    _fields_ = [("stat", POINTER(ProcStatEntry)), ("cpuinfo", POINTER(ProcCpuinfoEntry)), ("meminfo", POINTER(ProcMeminfoEntry)), ("loadavg", POINTER(ProcLoadavgEntry)), ("vmstat", POINTER(ProcVmstatEntry)), ("netDev", POINTER(ProcNetDevEntry)), ("diskstats", POINTER(ProcDiskstatsEntry)), ("uptime", POINTER(ProcUptimeEntry)), ("mounts", POINTER(ProcMountsEntry)), ("softirqs", POINTER(ProcSoftirqsEntry)), ("slabinfo", POINTER(ProcSlabinfoEntry)), ("schedstat", POINTER(ProcSchedstatEntry)), ("interrupts", POINTER(ProcInterruptsEntry)), ("irqAffinity", POINTER(ProcIrqAffinityEntry)), ("locks", POINTER(ProcLocksEntry)), ("zoneinfo", POINTER(ProcZoneinfoEntry)), ("buddyinfo", POINTER(ProcBuddyinfoEntry)), ("netSockstat", POINTER(ProcNetSockstatEntry)), ("netNetstat", POINTER(ProcNetNetstatEntry)), ("netArp", POINTER(ProcNetArpEntry)), ("version", POINTER(ProcVersionEntry)), ("modules", POINTER(ProcModulesEntry)), ("filesystems", POINTER(ProcFilesystemsEntry)), ("scsi", POINTER(ProcScsiEntry)), ("pressure", POINTER(ProcPressureEntry)), ("sysDir", POINTER(ProcSysDirEntry)), ("pidStat", POINTER(ProcPidStatEntry)), ("pidStatm", POINTER(ProcPidStatmEntry)), ("pidStatus", POINTER(ProcPidStatusEntry)), ("pidIo", POINTER(ProcPidIoEntry)), ("pidSmapsRollup", POINTER(ProcPidSmapsRollupEntry)), ("pidFd", POINTER(ProcPidFdEntry)), ("pidNumaMaps", POINTER(ProcPidNumaMapsEntry)), ("pidSmaps", POINTER(ProcPidSmapsEntry)), ("pidEnviron", POINTER(ProcPidEnvironEntry)), ("pidCmdline", POINTER(ProcPidCmdlineEntry)), ("pidLimits", POINTER(ProcPidLimitsEntry)), ("pidStack", POINTER(ProcPidStackEntry)), ("pidWchan", POINTER(ProcPidWchanEntry)), ("pidMaps", POINTER(ProcPidMapsEntry)), ("pidComm", POINTER(ProcPidCommEntry)), ("pidTaskStat", POINTER(ProcPidTaskStatEntry))]


ProcData._anonymous_ = ("_u",)
ProcData._fields_ = [
    ("source", c_enum),
    ("pid", c_int),
    ("numEntries", c_uint),
    ("filePath", c_char_p),
    ("_u", _ProcDataUnion),
]

ALL = {"ProcField": ProcField, "ProcStatEntry": ProcStatEntry, "ProcCpuinfoEntry": ProcCpuinfoEntry, "ProcMeminfoEntry": ProcMeminfoEntry, "ProcLoadavgEntry": ProcLoadavgEntry, "ProcVmstatEntry": ProcVmstatEntry, "ProcNetDevEntry": ProcNetDevEntry, "ProcDiskstatsEntry": ProcDiskstatsEntry, "ProcUptimeEntry": ProcUptimeEntry, "ProcMountsEntry": ProcMountsEntry, "ProcSoftirqsEntry": ProcSoftirqsEntry, "ProcSlabinfoEntry": ProcSlabinfoEntry, "ProcSchedstatDomainEntry": ProcSchedstatDomainEntry, "ProcSchedstatEntry": ProcSchedstatEntry, "ProcInterruptsEntry": ProcInterruptsEntry, "ProcIrqAffinityEntry": ProcIrqAffinityEntry, "ProcLocksEntry": ProcLocksEntry, "ProcZoneinfoPageset": ProcZoneinfoPageset, "ProcZoneinfoEntry": ProcZoneinfoEntry, "ProcBuddyinfoEntry": ProcBuddyinfoEntry, "ProcNetSockstatEntry": ProcNetSockstatEntry, "ProcNetNetstatEntry": ProcNetNetstatEntry, "ProcNetArpEntry": ProcNetArpEntry, "ProcVersionEntry": ProcVersionEntry, "ProcModulesEntry": ProcModulesEntry, "ProcFilesystemsEntry": ProcFilesystemsEntry, "ProcScsiEntry": ProcScsiEntry, "ProcPressureEntry": ProcPressureEntry, "ProcSysDirEntry": ProcSysDirEntry, "ProcPidStatEntry": ProcPidStatEntry, "ProcPidStatmEntry": ProcPidStatmEntry, "ProcPidStatusEntry": ProcPidStatusEntry, "ProcPidIoEntry": ProcPidIoEntry, "ProcPidSmapsRollupEntry": ProcPidSmapsRollupEntry, "ProcPidFdEntry": ProcPidFdEntry, "ProcPidNumaMapsEntry": ProcPidNumaMapsEntry, "ProcPidSmapsEntry": ProcPidSmapsEntry, "ProcPidEnvironEntry": ProcPidEnvironEntry, "ProcPidCmdlineEntry": ProcPidCmdlineEntry, "ProcPidLimitsEntry": ProcPidLimitsEntry, "ProcPidStackEntry": ProcPidStackEntry, "ProcPidWchanEntry": ProcPidWchanEntry, "ProcPidMapsEntry": ProcPidMapsEntry, "ProcPidCommEntry": ProcPidCommEntry, "ProcPidTaskStatEntry": ProcPidTaskStatEntry, "ProcData": ProcData}
ENUMS = {"ProcSource": ProcSource, "ProcStatLineType": ProcStatLineType}
