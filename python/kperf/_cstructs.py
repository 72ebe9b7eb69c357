"""ctypes mirrors of the structs of include/kperf/pmu.h, symbol.h and kperf.h.

Each class is laid out exactly as its C struct on this ABI (field order, types, bitfields,
anonymous unions): libkperf's structs as libkperf has them, kperf-bpf's options in their own
structs (KperfPmuOpts, KperfTraceOpts). tests/python/test_layout.py
compares every size, offset and bit position with what the C compiler says, so a change to
the headers that is not mirrored here fails the tests instead of corrupting memory.
"""

import ctypes
from ctypes import (
    POINTER,
    c_char_p,
    c_double,
    c_int,
    c_int64,
    c_size_t,
    c_uint,
    c_uint8,
    c_uint64,
    c_ulong,
    c_ushort,
)

# C enums: GCC gives an enum the size of int unless a value needs more (SpeFilter: 1 << 34)
c_enum = c_int
c_enum64 = c_uint64

KPERF_HIST_SLOTS = 40


class Symbol(ctypes.Structure):
    _fields_ = [
        ("addr", c_ulong),
        ("module", c_char_p),
        ("symbolName", c_char_p),
        ("mangleName", c_char_p),
        ("fileName", c_char_p),
        ("lineNum", c_uint),
        ("offset", c_ulong),
        ("codeMapEndAddr", c_ulong),
        ("codeMapAddr", c_ulong),
        ("firstLine", c_uint),
        ("mntPoint", c_char_p),
    ]


class Stack(ctypes.Structure):
    # __attribute__((aligned(64))): three pointers padded to 64 bytes
    pass


Stack._fields_ = [
    ("symbol", POINTER(Symbol)),
    ("next", POINTER(Stack)),
    ("prev", POINTER(Stack)),
    ("_pad", ctypes.c_char * 40),
]


class EvtAttr(ctypes.Structure):
    _fields_ = [
        ("groupId", c_int),
        ("period", c_uint),
        ("excludeUser", c_uint, 1),
        ("excludeKernel", c_uint, 1),
    ]


class _SampleRate(ctypes.Union):
    _fields_ = [("period", c_uint), ("freq", c_uint)]


class PmuAttr(ctypes.Structure):
    _anonymous_ = ("_rate",)
    _fields_ = [
        ("evtList", POINTER(c_char_p)),
        ("numEvt", c_uint),
        ("pidList", POINTER(c_int)),
        ("numPid", c_uint),
        ("cpuList", POINTER(c_int)),
        ("numCpu", c_uint),
        ("evtAttr", POINTER(EvtAttr)),
        ("numEvtAttr", c_uint),
        ("_rate", _SampleRate),
        ("useFreq", c_uint, 1),
        ("excludeUser", c_uint, 1),
        ("excludeKernel", c_uint, 1),
        ("excludeGuest", c_uint, 1),
        ("excludeHost", c_uint, 1),
        ("symbolMode", c_enum),
        ("callStack", c_uint, 1),
        ("blockedSample", c_uint, 1),
        ("dataFilter", c_enum64),
        ("evFilter", c_enum),
        ("minLatency", c_ulong),
        ("includeNewFork", c_uint, 1),
        ("branchSampleFilter", c_ulong),
        ("cgroupNameList", POINTER(c_char_p)),
        ("numCgroup", c_uint),
        ("enableUserAccess", c_uint, 1),
        ("enableBpf", c_uint, 1),
        ("enableHwMetric", c_uint, 1),
        ("enableOnExec", c_uint, 1),
        ("perThread", c_uint, 1),
    ]


class KperfPmuOpts(ctypes.Structure):
    _fields_ = [
        ("sz", ctypes.c_size_t),
        ("aggregate", c_uint),
        ("ringBufferKb", c_uint),
        ("inlineFrames", c_uint),
        ("offCpuOnly", c_uint),
        ("blockedKernelStack", c_uint),
        ("callGraph", c_uint),
        ("pythonFrames", c_uint),
        ("stackEntries", c_uint),
    ]


class KperfUnwindStats(ctypes.Structure):
    _fields_ = [
        (name, ctypes.c_ulonglong)
        for name in (
            "stacks",
            "framesEhFrame",
            "framesDebugFrame",
            "framesPlt",
            "framesFp",
            "framesSignal",
            "stacksNotLoaded",
            "stacksUnknownMap",
            "stacksNoRegs",
            "stacksTruncated",
            "tables",
            "rows",
            "rowBytes",
            "processes",
        )
    ]


class KperfSymOpts(ctypes.Structure):
    _fields_ = [("sz", ctypes.c_size_t), ("dwarf", c_uint), ("inlineFrames", c_uint)]


class KperfSymbolInfo(ctypes.Structure):
    _fields_ = [("sz", ctypes.c_size_t), ("inlined", c_uint), ("baseNameLen", c_uint)]


class PmuTraceAttr(ctypes.Structure):
    _fields_ = [
        ("funcs", POINTER(c_char_p)),
        ("numFuncs", c_uint),
        ("pidList", POINTER(c_int)),
        ("numPid", c_uint),
        ("cpuList", POINTER(c_int)),
        ("numCpu", c_uint),
        ("callStack", c_uint, 1),
        ("symbolMode", c_enum),
    ]


class KperfTraceOpts(ctypes.Structure):
    _fields_ = [
        ("sz", ctypes.c_size_t),
        ("summaryOnly", c_uint),
        ("minDurationNs", c_uint64),
        ("ringBufferKb", c_uint),
        ("cgroupPath", c_char_p),
        ("includeNewFork", c_uint),
        ("fromExec", c_uint),
        ("summaryEntries", c_uint),
        ("excludeSelf", c_uint),
        ("maxStoredRecords", c_uint),
        ("stackEntries", c_uint),
        ("callGraph", c_uint),
        ("summaryByCgroup", c_uint),
    ]


class KperfTraceDataExt(ctypes.Structure):
    _fields_ = [("ret", c_int64), ("nr", c_int)]


class CpuTopology(ctypes.Structure):
    _fields_ = [("coreId", c_int), ("numaId", c_int), ("socketId", c_int)]


class BranchSampleRecord(ctypes.Structure):
    _fields_ = [
        ("fromAddr", c_ulong),
        ("toAddr", c_ulong),
        ("cycles", c_ulong),
        ("misPred", c_uint8),
        ("predicted", c_uint8),
    ]


class _SpeExt(ctypes.Structure):
    _fields_ = [
        ("pa", c_ulong),
        ("va", c_ulong),
        ("event", c_ulong),
        ("lat", c_ushort),
        ("source", c_ushort),
        ("op", ctypes.c_uint32),
    ]


class _BranchExt(ctypes.Structure):
    _fields_ = [("nr", c_ulong), ("branchRecords", POINTER(BranchSampleRecord))]


class _PmuDataExtUnion(ctypes.Union):
    _anonymous_ = ("_spe", "_brbe")
    _fields_ = [("_spe", _SpeExt), ("_brbe", _BranchExt)]


class PmuDataExt(ctypes.Structure):
    _anonymous_ = ("_u",)
    _fields_ = [("_u", _PmuDataExtUnion)]


class SampleRawData(ctypes.Structure):
    # char *data: a binary record, so not c_char_p (which would stop at the first NUL)
    _fields_ = [("data", ctypes.c_void_p)]


class SampleRawField(ctypes.Structure):
    _fields_ = [
        ("fieldName", c_char_p),
        ("fieldStr", c_char_p),
        ("offset", c_uint),
        ("size", c_uint),
        ("isSigned", c_uint),
    ]


class PmuData(ctypes.Structure):
    _fields_ = [
        ("stack", POINTER(Stack)),
        ("evt", c_char_p),
        ("ts", c_int64),
        ("pid", c_int),
        ("tid", c_int),
        ("cpu", c_int),
        ("groupId", c_int),
        ("cpuTopo", POINTER(CpuTopology)),
        ("comm", c_char_p),
        ("period", c_uint64),
        ("count", c_uint64),
        ("countPercent", c_double),
        ("ext", POINTER(PmuDataExt)),
        ("rawData", POINTER(SampleRawData)),
        ("cgroupName", c_char_p),
    ]


class PmuTraceData(ctypes.Structure):
    _fields_ = [
        ("funcs", c_char_p),
        ("startTs", c_int64),
        ("elapsedTime", c_double),
        ("pid", c_int),
        ("tid", c_int),
        ("cpu", c_int),
        ("comm", c_char_p),
        ("stack", POINTER(Stack)),
    ]


class PmuCpuFreqDetail(ctypes.Structure):
    _fields_ = [
        ("cpuId", c_int),
        ("minFreq", c_uint64),
        ("maxFreq", c_uint64),
        ("avgFreq", c_uint64),
    ]


class PmuDeviceAttr(ctypes.Structure):
    _fields_ = [("metric", c_enum), ("bdf", c_char_p), ("port", c_char_p)]


class _DdrIds(ctypes.Structure):
    _fields_ = [("channelId", c_uint), ("ddrNumaId", c_uint), ("socketId", c_uint)]


class _DeviceDataUnion(ctypes.Union):
    _anonymous_ = ("_ddr",)
    _fields_ = [
        ("coreId", c_uint),
        ("numaId", c_uint),
        ("clusterId", c_uint),
        ("bdf", c_char_p),
        ("port", c_char_p),
        ("_ddr", _DdrIds),
    ]


class PmuDeviceData(ctypes.Structure):
    _anonymous_ = ("_u",)
    _fields_ = [
        ("metric", c_enum),
        ("count", c_double),
        ("mode", c_enum),
        ("_u", _DeviceDataUnion),
    ]


class PmuTraceSummary(ctypes.Structure):
    _fields_ = [
        ("funcs", c_char_p),
        ("nr", c_int),
        ("pid", c_int),
        ("comm", c_char_p),
        ("calls", c_uint64),
        ("errors", c_uint64),
        ("totalNs", c_uint64),
        ("minNs", c_uint64),
        ("maxNs", c_uint64),
        ("hist", c_uint64 * KPERF_HIST_SLOTS),
    ]


class KperfTraceCgroupSummary(ctypes.Structure):
    _fields_ = [("cgroupId", c_uint64), ("s", PmuTraceSummary)]


class PmuTraceStats(ctypes.Structure):
    _fields_ = [
        ("records", c_uint64),
        ("dropped", c_uint64),
        ("summaryDropped", c_uint64),
        ("fallback", c_uint),
        ("ringBufferKb", c_uint),
        ("stacksLost", c_uint64),
        ("stackSummaryDropped", c_uint64),
        ("summaryNoMemory", c_uint64),
        ("stackSummaryNoMemory", c_uint64),
    ]


class KperfTraceStackSummary(ctypes.Structure):
    _fields_ = [
        ("funcs", c_char_p),
        ("nr", c_int),
        ("pid", c_int),
        ("comm", c_char_p),
        ("calls", c_uint64),
        ("errors", c_uint64),
        ("totalNs", c_uint64),
        ("minNs", c_uint64),
        ("maxNs", c_uint64),
        ("stack", POINTER(Stack)),
        ("kernelFrames", c_uint),
    ]


class AsmCode(ctypes.Structure):
    _fields_ = [
        ("addr", c_ulong),
        ("code", c_char_p),
        ("fileName", c_char_p),
        ("lineNum", c_uint),
    ]


class StackAsm(ctypes.Structure):
    pass


StackAsm._fields_ = [
    ("funcName", c_char_p),
    ("funcStartAddr", c_ulong),
    ("functFileOffset", c_ulong),
    ("next", POINTER(StackAsm)),
    ("asmCode", POINTER(AsmCode)),
]


class PmuHwMetricAttr(ctypes.Structure):
    _fields_ = [
        ("metric", c_ulong),
        ("basePeriodList", POINTER(c_uint)),
        ("thresholdList", POINTER(c_double)),
        ("pid", c_uint),
    ]


class SymbolSource(ctypes.Structure):
    _fields_ = [("moduleName", c_char_p), ("symbolName", c_char_p)]


class UTraceAttr(ctypes.Structure):
    _fields_ = [
        ("symSrc", POINTER(SymbolSource)),
        ("numSym", c_uint),
        ("pidList", POINTER(c_int)),
        ("numPid", c_uint),
        ("fetchG", c_uint),
    ]


class UTraceData(ctypes.Structure):
    _fields_ = [
        ("addr", c_ulong),
        ("comm", c_char_p),
        ("tid", c_int),
        ("cpu", c_int),
        ("timestamp", c_int64),
        ("gPtr", c_uint64),
        ("module", c_char_p),
        ("func", c_char_p),
        ("isRet", c_uint),
    ]


class KperfUTraceOpts(ctypes.Structure):
    _fields_ = [("sz", ctypes.c_size_t), ("ringBufferKb", c_uint)]


class KperfUTraceStats(ctypes.Structure):
    _fields_ = [
        ("records", c_uint64),
        ("dropped", c_uint64),
        ("unattributed", c_uint64),
        ("probes", c_uint),
        ("ringBufferKb", c_uint),
    ]


class KperfActivityOpts(ctypes.Structure):
    _fields_ = [
        ("sz", c_size_t),
        ("pidList", POINTER(c_int)),
        ("numPid", c_uint),
        ("noChildren", c_uint),
        ("fromExec", c_uint),
        ("bufferKb", c_uint),
        ("probeFiles", POINTER(c_char_p)),
        ("numProbeFiles", c_uint),
        ("excludeReader", c_uint),
        ("command", c_char_p),
        ("allPids", c_uint),
    ]


class KperfActivityRecord(ctypes.Structure):
    _fields_ = [
        ("kind", c_enum),
        ("flag", c_uint),
        ("start", c_uint64),
        ("end", c_uint64),
        ("id", c_uint64),
        ("pid", c_int),
        ("tid", c_int),
        ("cpu", c_int),
        ("nr", c_int),
        ("ret", c_int64),
        ("bytes", c_int64),
        ("name", c_char_p),
        ("domain", c_char_p),
        ("comm", c_char_p),
        ("channel", c_char_p),
    ]


class KperfActivityStats(ctypes.Structure):
    _fields_ = [
        ("records", c_uint64),
        ("dropped", c_uint64),
        ("filtered", c_uint64),
        ("probes", c_uint),
        ("probeFiles", c_uint),
        ("bufferKb", c_uint),
        ("fallback", c_uint),
    ]


class KperfTimelineOpts(ctypes.Structure):
    _fields_ = [
        ("sz", c_size_t),
        ("pidList", POINTER(c_int)),
        ("numPid", c_uint),
        ("fromExec", c_uint),
        ("command", c_char_p),
        ("freq", c_uint),
        ("noSyscalls", c_uint),
        ("noSamples", c_uint),
        ("noMarkers", c_uint),
        ("offCpu", c_uint),
        ("bufferKb", c_uint),
        ("maxEvents", c_uint),
        ("probeFiles", POINTER(c_char_p)),
        ("numProbeFiles", c_uint),
        ("offCpuMinUs", c_uint),
        ("memory", c_uint),
        ("memBigBytes", c_uint64),
        ("allPids", c_uint),
    ]


class KperfTimelineStats(ctypes.Structure):
    _fields_ = [
        ("syscalls", c_uint64),
        ("samples", c_uint64),
        ("marks", c_uint64),
        ("ranges", c_uint64),
        ("openRanges", c_uint64),
        ("dropped", c_uint64),
        ("notKept", c_uint64),
        ("offCpuSlices", c_uint64),
        ("offCpuShort", c_uint64),
        ("offCpuLost", c_uint64),
        ("heapChanges", c_uint64),
        ("largeAllocs", c_uint64),
        ("memLost", c_uint64),
    ]


# every mirrored struct, by its C name (the layout test walks this)
ALL = {
    "Symbol": Symbol,
    "Stack": Stack,
    "EvtAttr": EvtAttr,
    "PmuAttr": PmuAttr,
    "KperfPmuOpts": KperfPmuOpts,
    "KperfSymOpts": KperfSymOpts,
    "KperfSymbolInfo": KperfSymbolInfo,
    "PmuTraceAttr": PmuTraceAttr,
    "KperfTraceOpts": KperfTraceOpts,
    "KperfTraceDataExt": KperfTraceDataExt,
    "CpuTopology": CpuTopology,
    "BranchSampleRecord": BranchSampleRecord,
    "PmuDataExt": PmuDataExt,
    "SampleRawData": SampleRawData,
    "SampleRawField": SampleRawField,
    "PmuData": PmuData,
    "PmuTraceData": PmuTraceData,
    "PmuCpuFreqDetail": PmuCpuFreqDetail,
    "PmuDeviceAttr": PmuDeviceAttr,
    "PmuDeviceData": PmuDeviceData,
    "PmuTraceSummary": PmuTraceSummary,
    "KperfTraceCgroupSummary": KperfTraceCgroupSummary,
    "PmuTraceStats": PmuTraceStats,
    "KperfTraceStackSummary": KperfTraceStackSummary,
    "AsmCode": AsmCode,
    "StackAsm": StackAsm,
    "PmuHwMetricAttr": PmuHwMetricAttr,
    "SymbolSource": SymbolSource,
    "UTraceAttr": UTraceAttr,
    "UTraceData": UTraceData,
    "KperfUTraceOpts": KperfUTraceOpts,
    "KperfUTraceStats": KperfUTraceStats,
    "KperfUnwindStats": KperfUnwindStats,
    "KperfActivityOpts": KperfActivityOpts,
    "KperfActivityRecord": KperfActivityRecord,
    "KperfActivityStats": KperfActivityStats,
    "KperfTimelineOpts": KperfTimelineOpts,
    "KperfTimelineStats": KperfTimelineStats,
}

# proc_data_types.h (ProcDataRead): generated mirrors, same checks
from . import _procstructs  # noqa: E402

ALL.update(_procstructs.ALL)
