"""libkperf's _libkperf.Pmu: the Ctypes* structs (kperf._cstructs' mirrors with libkperf's
constructors and field names), the classes (kperf's, or subclasses with _libkperf's
constructors where they differ from kperf's), and the C functions by their C names.

Functions that take or return libkperf's Python objects call kperf's; those that libkperf
calls with raw ctypes pointers (PmuDataFree, PmuAppendData, PmuGetField, ...) pass them to C.
"""

import ctypes

import kperf
from kperf import _cstructs as cs
from kperf import _lib, attrs
from kperf._convert import to_bytes
from kperf.cpufreq import CpuFreqDetail as PmuCpuFreqDetail
from kperf.cpufreq import ImplPmuCpuFreqDetail
from kperf.pmu import _call, _call_or_refuse
from kperf.results import (
    BranchRecord as ImplBranchRecords,
    BranchRecords,
    CpuTopology,
    ImplPmuData,
    ImplPmuDeviceData,
    ImplPmuTraceData,
    PmuData,
    PmuDataExt,
    PmuDeviceData,
    PmuTraceData,
    SampleRawData,
    SampleRawField,
)
from kperf.symbols import Stack
from kperf.utrace import UTraceData, UTraceDataList

from .Config import UTF_8, kperf_so  # noqa: F401
from .Symbol import CtypesStack

EvtAttr = attrs.EvtAttr
PmuTraceAttr = attrs.PmuTraceAttr


def _b(v):
    return to_bytes(v, "string") if v else None


def _keep(obj, *values):
    """Keep <values> alive as long as the ctypes struct <obj> (the arrays its pointers
    point into)."""
    keep = obj.__dict__.setdefault("_keep_alive", [])
    keep.extend(values)


# ---- the ctypes structs


SampleRateUnion = cs._SampleRate
DdrDataStructure = cs._DdrIds
CytpesBranchSampleRecord = cs.BranchSampleRecord
CtypesBranchRecords = cs._BranchExt


class CtypesEvtAttr(cs.EvtAttr):
    def __init__(self, groupId=0, period=0, excludeUser=False, excludeKernel=False, *args, **kw):
        super().__init__(*args, **kw)
        self.groupId, self.period = groupId, period
        self.excludeUser, self.excludeKernel = int(excludeUser), int(excludeKernel)


class CtypesPmuAttr(cs.PmuAttr):
    """struct PmuAttr, with libkperf's constructor; `sampleRate` is the period/freq union."""

    def __init__(
        self,
        evtList=None,
        pidList=None,
        cpuList=None,
        evtAttr=None,
        sampleRate=0,
        useFreq=False,
        excludeUser=False,
        excludeKernel=False,
        excludeGuest=False,
        excludeHost=False,
        symbolMode=0,
        callStack=False,
        blockedSample=False,
        dataFilter=0,
        evFilter=0,
        minLatency=0,
        includeNewFork=False,
        branchSampleFilter=0,
        cgroupNameList=None,
        numCgroup=0,
        enableUserAccess=False,
        enableBpf=False,
        enableHwMetric=False,
        enableOnExec=False,
        perThread=False,
        *args,
        **kw,
    ):
        super().__init__(*args, **kw)
        a = attrs.PmuAttr(
            evtList, pidList, cpuList, evtAttr, sampleRate, useFreq, excludeUser,
            excludeKernel, excludeGuest, excludeHost, symbolMode, callStack, blockedSample,
            dataFilter, evFilter, minLatency, includeNewFork, branchSampleFilter,
            cgroupNameList, enableUserAccess, enableBpf, enableOnExec, perThread,
        )
        a.enableHwMetric = enableHwMetric
        ctypes.memmove(ctypes.addressof(self), ctypes.addressof(a._c), ctypes.sizeof(cs.PmuAttr))
        _keep(self, a)

    sampleRate = property(lambda self: self._rate)


class CtypesPmuTraceAttr(cs.PmuTraceAttr):
    def __init__(
        self, funcs=None, pidList=None, cpuList=None, callStack=False, symbolMode=0, *args, **kw
    ):
        super().__init__(*args, **kw)
        a = attrs.PmuTraceAttr(funcs, pidList, cpuList, callStack, symbolMode)
        ctypes.memmove(ctypes.addressof(self), ctypes.addressof(a._c), ctypes.sizeof(a._c))
        _keep(self, a)


class CtypesCpuTopology(cs.CpuTopology):
    def __init__(self, coreId=0, numaId=0, socketId=0, *args, **kw):
        super().__init__(*args, **kw)
        self.coreId, self.numaId, self.socketId = coreId, numaId, socketId


class CtypesSampleRawData(cs.SampleRawData):
    def __init__(self, data="", *args, **kw):
        super().__init__(*args, **kw)
        buf = ctypes.create_string_buffer(data.encode(UTF_8) if isinstance(data, str) else data)
        self.data = ctypes.addressof(buf)
        _keep(self, buf)


class CytpesSpeDataExt(cs._SpeExt):
    def __init__(self, pa=0, va=0, event=0, lat=0, source=0, *args, **kw):
        super().__init__(*args, **kw)
        self.pa, self.va, self.event, self.lat, self.source = pa, va, event, lat, source


class PmuDataExtUnion(ctypes.Union):
    """The union of struct PmuDataExt under libkperf's Python names."""

    _fields_ = [("speDataExt", cs._SpeExt), ("branchRecords", cs._BranchExt)]


class CtypesPmuDataExt(cs.PmuDataExt):
    """struct PmuDataExt; `ext` is its union (speDataExt, branchRecords)."""

    @property
    def ext(self):
        u = PmuDataExtUnion.from_address(ctypes.addressof(self))
        _keep(u, self)
        return u


class CtypesSampleRawField(cs.SampleRawField):
    def __init__(
        self, field_name="", field_str="", offset=0, size=0, is_signed=0, *args, **kw
    ):
        super().__init__(*args, **kw)
        self.fieldName, self.fieldStr = _b(field_name), _b(field_str)
        self.offset, self.size, self.isSigned = offset, size, int(is_signed)


class CtypesPmuData(cs.PmuData):
    def __init__(
        self,
        stack=None,
        evt="",
        ts=0,
        pid=0,
        tid=0,
        cpu=0,
        groupId=0,
        cpuTopo=None,
        comm="",
        period=0,
        count=0,
        countPercent=0.0,
        ext=None,
        rawData=None,
        cgroupName="",
        *args,
        **kw,
    ):
        super().__init__(*args, **kw)
        self.evt, self.comm, self.cgroupName = _b(evt), _b(comm), _b(cgroupName)
        self.ts, self.pid, self.tid, self.cpu, self.groupId = ts, pid, tid, cpu, groupId
        self.period, self.count, self.countPercent = period, count, countPercent
        for name, v in (("stack", stack), ("cpuTopo", cpuTopo), ("ext", ext), ("rawData", rawData)):
            if v is not None:
                setattr(self, name, v)


class CtypesPmuTraceData(cs.PmuTraceData):
    def __init__(
        self,
        funcs="",
        startTs=0,
        elapsedTime=0.0,
        pid=0,
        tid=0,
        cpu=0,
        comm="",
        stack=None,
        *args,
        **kw,
    ):
        super().__init__(*args, **kw)
        self.funcs, self.comm = _b(funcs), _b(comm)
        self.startTs, self.elapsedTime = startTs, elapsedTime
        self.pid, self.tid, self.cpu = pid, tid, cpu
        if stack is not None:
            self.stack = stack


class CtypesPmuDeviceAttr(cs.PmuDeviceAttr):
    def __init__(self, metric=0, bdf=None, port=None, *args, **kw):
        super().__init__(*args, **kw)
        self.metric, self.bdf, self.port = metric, _b(bdf), _b(port)


CtypesPmuDeviceData = cs.PmuDeviceData


class CtypesPmuCpuFreqDetail(cs.PmuCpuFreqDetail):
    def __init__(self, cpuId=0, minFreq=0, maxFreq=0, avgFreq=0, *args, **kw):
        super().__init__(*args, **kw)
        self.cpuId, self.minFreq, self.maxFreq, self.avgFreq = cpuId, minFreq, maxFreq, avgFreq


class CtypesPmuHwMetricAttr(cs.PmuHwMetricAttr):
    def __init__(self, metric=0, basePeriodList=None, thresholdList=None, pid=0, *args, **kw):
        super().__init__(*args, **kw)
        a = attrs.PmuHwMetricAttr(metric, basePeriodList, thresholdList, pid)
        ctypes.memmove(ctypes.addressof(self), ctypes.addressof(a._c), ctypes.sizeof(a._c))
        _keep(self, a)


class CtypesSymbolSource(cs.SymbolSource):
    def __init__(self, moduleName="", symbolName="", *args, **kw):
        super().__init__(*args, **kw)
        self.moduleName, self.symbolName = _b(moduleName), _b(symbolName)


class CtypesUTraceAttr(cs.UTraceAttr):
    def __init__(self, symSrc=None, pidList=None, cpuList=None, fetchG=0, *args, **kw):
        super().__init__(*args, **kw)
        a = attrs.UTraceAttr(symSrc, pidList, fetchG)
        ctypes.memmove(ctypes.addressof(self), ctypes.addressof(a._c), ctypes.sizeof(a._c))
        _keep(self, a)


class CtypesUTraceData(cs.UTraceData):
    def __init__(
        self, addr=0, comm="", tid=0, cpu=0, timestamp=0, gPtr=0, module="", func="", isRet=0,
        *args, **kw
    ):
        super().__init__(*args, **kw)
        self.addr, self.comm, self.tid, self.cpu = addr, _b(comm), tid, cpu
        self.timestamp, self.gPtr, self.module, self.func = timestamp, gPtr, _b(module), _b(func)
        self.isRet = int(isRet)


# ---- the classes whose _libkperf constructor differs from kperf's


class PmuAttr(attrs.PmuAttr):
    """kperf.PmuAttr with _libkperf's constructor (enableHwMetric before enableOnExec)."""

    def __init__(
        self,
        evtList=None,
        pidList=None,
        cpuList=None,
        evtAttr=None,
        sampleRate=0,
        useFreq=False,
        excludeUser=False,
        excludeKernel=False,
        excludeGuest=False,
        excludeHost=False,
        symbolMode=0,
        callStack=False,
        blockedSample=False,
        dataFilter=0,
        evFilter=0,
        minLatency=0,
        includeNewFork=False,
        branchSampleFilter=0,
        cgroupNameList=None,
        enableUserAccess=False,
        enableBpf=False,
        enableHwMetric=False,
        enableOnExec=False,
        perThread=False,
        *,
        aggregate=False,
        ringBufferKb=0,
        inlineFrames=False,
        offCpuOnly=False,
        blockedKernelStack=False,
    ):
        self._init(attrs._values(locals()))


class PmuDeviceAttr(attrs.PmuDeviceAttr):
    """kperf.PmuDeviceAttr with _libkperf's constructor (metric defaults to 0)."""

    def __init__(self, metric=0, bdf=None, port=None):
        super().__init__(metric, bdf, port)


class PmuHwMetricAttr(attrs.PmuHwMetricAttr):
    """kperf.PmuHwMetricAttr with _libkperf's constructor (metric defaults to 0)."""

    def __init__(self, metric=0, basePeriodList=None, thresholdList=None, pid=0):
        super().__init__(metric, basePeriodList, thresholdList, pid)


class UTraceAttr(attrs.UTraceAttr):
    """kperf.UTraceAttr with _libkperf's constructor (a cpuList, which struct UTraceAttr has
    no field for: it must be empty)."""

    def __init__(self, symSrc=None, pidList=None, cpuList=None, fetchG=0, *, ringBufferKb=0):
        if cpuList:
            raise ValueError("UTraceAttr has no cpuList: struct UTraceAttr traces every CPU")
        super().__init__(symSrc, pidList, fetchG, ringBufferKb=ringBufferKb)


# ---- the functions


def PmuOpen(collectType, pmuAttr):
    return kperf.open(collectType, pmuAttr)


def PmuEventList(eventType):
    return kperf.event_list(eventType)


def PmuEventListFree():
    _call("PmuEventListFree")


def PmuEnable(pd):
    return kperf.enable(pd)


def PmuDisable(pd):
    return kperf.disable(pd)


def PmuCollect(pd, milliseconds, interval):
    return kperf.collect(pd, milliseconds, interval)


def PmuStop(pd):
    kperf.stop(pd)


def PmuExit(pd):
    kperf.exit(pd)


def _c_array(data, ctype):
    """The C array of <data>: a kperf result (its pointer) or a ctypes pointer."""
    if isinstance(data, kperf.results._Block):
        return data.pointer()
    if data is None or isinstance(data, ctypes._Pointer):
        return data
    raise TypeError(f"expected a kperf result or a ctypes pointer, not {type(data).__name__}")


def PmuDataFree(pmuData):
    if isinstance(pmuData, PmuData):
        pmuData.free()
    elif pmuData:
        _lib.fn("PmuDataFree")(ctypes.cast(pmuData, ctypes.POINTER(cs.PmuData)))


def PmuRead(pd):
    return kperf.read(pd)


def ResolvePmuDataSymbol(pmuData):
    if isinstance(pmuData, PmuData):
        return kperf.resolvePmuDataSymbol(pmuData)
    return _call("ResolvePmuDataSymbol", ctypes.cast(pmuData, ctypes.POINTER(cs.PmuData)))


def PmuAppendData(fromData, toData):
    """int PmuAppendData(struct PmuData *fromData, struct PmuData **toData), with ctypes
    pointers as libkperf passes them."""
    return _call(
        "PmuAppendData",
        ctypes.cast(_c_array(fromData, cs.PmuData), ctypes.POINTER(cs.PmuData)),
        toData,
    )


def PmuClose(pd):
    kperf.close(pd)


def PmuDumpData(pmuData, filepath, dumpDwf):
    return kperf.dump(pmuData, filepath, dumpDwf)


def _void_p(value):
    if isinstance(value, (ctypes._SimpleCData, ctypes.Structure, ctypes.Union)) and not isinstance(
        value, (ctypes.c_void_p, ctypes.c_char_p)
    ):
        return ctypes.byref(value)
    return value


def PmuGetField(rawData, field_name, value, vSize):
    """int PmuGetField(struct SampleRawData *rawData, const char *fieldName, void *value,
    uint32_t vSize), with rawData as ImplPmuData.rawData.c_pmu_data_rawData gives it."""
    return _call(
        "PmuGetField",
        ctypes.cast(rawData, ctypes.POINTER(cs.SampleRawData)),
        to_bytes(field_name, "field_name"),
        ctypes.cast(_void_p(value), ctypes.c_void_p) if value is not None else None,
        vSize,
    )


def PmuGetFieldExp(rawData, field_name):
    p = _call(
        "PmuGetFieldExp",
        ctypes.cast(rawData, ctypes.POINTER(cs.SampleRawData)),
        to_bytes(field_name, "field_name"),
    )
    return SampleRawField.from_sample_raw_field(p.contents) if p else None


def PmuDeviceBdfListFree():
    _call("PmuDeviceBdfListFree")


def PmuDeviceBdfList(bdf_type):
    return kperf.device_bdf_list(bdf_type)


def PmuDeviceOpen(device_attr):
    return kperf.device_open(device_attr)


def PmuGetDevMetric(pmu_data, device_attr):
    return kperf.get_device_metric(pmu_data, device_attr)


def DevDataFree(dev_data):
    if isinstance(dev_data, PmuDeviceData):
        dev_data.free()
    elif dev_data:
        _lib.fn("DevDataFree")(ctypes.cast(dev_data, ctypes.POINTER(cs.PmuDeviceData)))


def PmuGetCpuFreq(core):
    return kperf.get_cpu_freq(core)


def PmuGetClusterCore(clusterId):
    return kperf.get_cluster_core(clusterId)


def PmuGetNumaCore(numaId):
    return kperf.get_numa_core(numaId)


def PmuTraceOpen(traceType, pmuTraceAttr):
    return kperf.trace_open(traceType, pmuTraceAttr)


def PmuTraceEnable(pd):
    return kperf.trace_enable(pd)


def PmuTraceDisable(pd):
    return kperf.trace_disable(pd)


def PmuTraceRead(pd):
    return kperf.trace_read(pd)


def PmuTraceClose(pd):
    kperf.trace_close(pd)


def PmuTraceDataFree(pmuTraceData):
    if isinstance(pmuTraceData, PmuTraceData):
        pmuTraceData.free()
    elif pmuTraceData:
        _lib.fn("PmuTraceDataFree")(ctypes.cast(pmuTraceData, ctypes.POINTER(cs.PmuTraceData)))


def PmuSysCallFuncList():
    return kperf.sys_call_func_list()


def PmuSysCallFuncListFree():
    _call("PmuSysCallFuncListFree")


def PmuReadCpuFreqDetail():
    return kperf.read_cpu_freq_detail()


def PmuOpenCpuFreqSampling(period):
    return kperf.open_cpu_freq_sampling(period)


def PmuCloseCpuFreqSampling():
    kperf.close_cpu_freq_sampling()


def PmuBeginWrite(path, pattr, addIdHdr):
    return kperf.begin_write(path, pattr, addIdHdr)


def PmuWriteData(file, data):
    return kperf.write_data(file, data)


def PmuEndWrite(file):
    kperf.end_write(file)


def PmuOpenWithHWMetric(hwMetricAttr):
    return kperf.pmu_open_with_hw_metric(hwMetricAttr)


def UTraceOpen(attr):
    return kperf.u_trace_open(attr)


def UTraceEnable(pd):
    return kperf.u_trace_enable(pd)


def UTraceDisable(pd):
    return kperf.u_trace_disable(pd)


def UTraceRead(pd):
    return kperf.u_trace_read(pd)


def UTraceClose(pd):
    kperf.u_trace_close(pd)


def UTraceDataFree(traceData):
    if isinstance(traceData, UTraceDataList):
        traceData.free()
    elif traceData:
        _call_or_refuse(
            "UTraceDataFree", None, ctypes.cast(traceData, ctypes.POINTER(cs.UTraceData))
        )


__all__ = [
    "CtypesEvtAttr",
    "EvtAttr",
    "CtypesPmuAttr",
    "PmuAttr",
    "CpuTopology",
    "PmuDataExt",
    "SampleRawField",
    "SampleRawData",
    "CtypesPmuData",
    "ImplPmuData",
    "PmuData",
    "PmuOpen",
    "PmuEventList",
    "PmuEnable",
    "PmuDisable",
    "PmuStop",
    "PmuExit",
    "PmuRead",
    "PmuAppendData",
    "PmuClose",
    "PmuDumpData",
    "PmuGetField",
    "PmuGetFieldExp",
    "PmuDeviceAttr",
    "ImplPmuDeviceData",
    "PmuDeviceData",
    "PmuDeviceBdfList",
    "PmuDeviceBdfListFree",
    "PmuDeviceOpen",
    "PmuGetDevMetric",
    "PmuGetCpuFreq",
    "PmuGetClusterCore",
    "PmuGetNumaCore",
    "CtypesPmuTraceAttr",
    "PmuTraceAttr",
    "CtypesPmuTraceData",
    "ImplPmuTraceData",
    "PmuTraceData",
    "PmuTraceOpen",
    "PmuTraceEnable",
    "PmuTraceDisable",
    "PmuTraceRead",
    "PmuTraceClose",
    "PmuTraceDataFree",
    "PmuSysCallFuncList",
    "PmuSysCallFuncListFree",
    "PmuOpenCpuFreqSampling",
    "PmuReadCpuFreqDetail",
    "PmuCloseCpuFreqSampling",
    "PmuCpuFreqDetail",
    "ResolvePmuDataSymbol",
    "PmuBeginWrite",
    "PmuWriteData",
    "PmuEndWrite",
    "PmuOpenWithHWMetric",
    "PmuHwMetricAttr",
    "CtypesSymbolSource",
    "CtypesUTraceAttr",
    "UTraceAttr",
    "CtypesUTraceData",
    "UTraceData",
    "UTraceDataList",
    "UTraceOpen",
    "UTraceEnable",
    "UTraceDisable",
    "UTraceRead",
    "UTraceClose",
    "UTraceDataFree",
]

# names of libkperf's module outside its __all__, reached as _libkperf.Pmu.<name>
_ALSO = (BranchRecords, ImplBranchRecords, ImplPmuCpuFreqDetail, Stack, CtypesStack)
