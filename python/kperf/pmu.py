"""The functions of libkperf's `kperf` module over libkperf-bpf: open/enable/disable/read/
close, exit, delayed symbol resolution, fields, event lists, syscall tracing, device metrics
and topology, with libkperf's names and signatures.

As in libkperf, handles are plain ints, a failing call returns -1 (or an empty result) and
kperf.error() / kperf.errorno() say why. kperf-bpf's additions: keyword-only arguments after
libkperf's, trace_read_summary() / trace_stats() / syscall_number(), and the handle objects
of kperf.handles.
"""

import ctypes
import operator
import threading
from typing import List, Optional, Sequence

from . import _cstructs as cs
from . import _lib
from ._convert import INT_MAX, INT_MIN, as_list, cint, text, to_bytes, unsigned
from .attrs import PmuAttr, PmuDeviceAttr, PmuHwMetricAttr, PmuTraceAttr
from .symbols import Stack
from .enums import PmuBdfType, PmuEventType, PmuTaskType, PmuTraceType
from .perror import DataFreedError, Error, KperfError, _raise_last
from .results import (
    ImplPmuData,
    PmuData,
    PmuDeviceData,
    PmuTraceData,
    SampleRawData,
    SampleRawField,
    TraceStackSummary,
    TraceStats,
    TraceSummary,
    _pending_frees,  # noqa: F401 (tests look at the queue here)
    flush_frees,
)


def _call(name, *args):
    """Call the C function <name> and keep this thread's error state."""
    flush_frees()
    f = _lib.fn(name)
    r = f(*args)
    _lib.snapshot()
    return r


def _call_or_refuse(name, failed, *args):
    """_call for a function other helpers are still adding to the C library: while the loaded
    library lacks it, the call fails (returns <failed>) with KPERF_ERR_NOT_SUPPORTED."""
    if not _lib.has(name):
        _lib.set_state(
            Error.KPERF_ERR_NOT_SUPPORTED,
            f"{name} is not in {_lib.path}: this build of libkperf-bpf does not provide it yet",
        )
        return failed
    return _call(name, *args)


# pd -> what read() must know to interpret PmuDataExt (set by open)
_pd_branch = {}
_pd_lock = threading.Lock()


def _pd(pd):
    """<pd> as an int the C API can take (a Pmu/Trace object gives its handle), or None
    with LIBPERF_ERR_INVALID_PD recorded."""
    try:
        v = operator.index(pd)
    except (TypeError, KperfError):
        v = None
    if v is not None and INT_MIN <= v <= INT_MAX:
        return v
    _lib.set_state(
        Error.LIBPERF_ERR_INVALID_PD, f"{pd!r} is not an open task handle (an int > 0 from open)"
    )
    return None


def _copy_strings(ptr, n):
    return [text(ptr[i]) for i in range(n)] if ptr and n > 0 else []


def _need_data(data, what="pmu_data"):
    if not isinstance(data, PmuData):
        raise TypeError(f"{what} must be a kperf.PmuData, not {type(data).__name__}")
    if data._freed:
        raise DataFreedError(data._what)
    return data


def open(collect_type: PmuTaskType, pmu_attr: PmuAttr) -> int:
    """Open a counting or sampling task (PmuOpen).

    Returns the task handle (> 0), or -1: kperf.error() / kperf.errorno() say why.
    """
    if not isinstance(pmu_attr, PmuAttr):
        raise TypeError(f"pmu_attr must be a kperf.PmuAttr, not {type(pmu_attr).__name__}")
    pd = _call(
        "KperfOpen",
        cint(collect_type, "collect_type"),
        ctypes.byref(pmu_attr._c),
        ctypes.byref(pmu_attr._x),
    )
    if pd > 0:
        with _pd_lock:
            _pd_branch[pd] = bool(pmu_attr.branchSampleFilter) and int(collect_type) == 1
    return pd


def enable(pd: int) -> int:
    """Start counting/sampling task <pd>: 0, or -1 (kperf.error())."""
    pd = _pd(pd)
    return -1 if pd is None else _call("PmuEnable", pd)


def disable(pd: int) -> int:
    """Stop counting/sampling task <pd>: 0, or -1 (kperf.error())."""
    pd = _pd(pd)
    return -1 if pd is None else _call("PmuDisable", pd)


def collect(pd: int, milliseconds: int, interval: int = 0) -> int:
    """Enable <pd>, collect for <milliseconds> (-1: until stop()), disable (PmuCollect)."""
    pd = _pd(pd)
    if pd is None:
        return -1
    ms = cint(milliseconds, "milliseconds")
    return _call("PmuCollect", pd, ms, unsigned(32)(interval, "interval"))


def stop(pd: int) -> None:
    """Stop a collect() running in another thread (PmuStop)."""
    pd = _pd(pd)
    if pd is not None:
        _call("PmuStop", pd)


def exit(pd: int) -> None:
    """End the symbol analysis of task <pd> (PmuExit): a read resolving symbols in another
    thread stops doing so, and later reads return records without stacks."""
    pd = _pd(pd)
    if pd is not None:
        _call("PmuExit", pd)


def read(pd: int) -> PmuData:
    """The data of task <pd> since the last enable/read (PmuRead): one record per sample in
    SAMPLING, one per event (and cpu/thread) in COUNTING.

    On failure the PmuData has len == -1 and kperf.error() says why.
    """
    pd = _pd(pd)
    if pd is None:
        return PmuData(None, -1)
    p = ctypes.POINTER(cs.PmuData)()
    n = _call("PmuRead", pd, ctypes.byref(p))
    with _pd_lock:
        branch = _pd_branch.get(pd, False)
    return PmuData(p, n, branch=branch) if n >= 0 else PmuData(None, -1)


def resolvePmuDataSymbol(pmuData: PmuData) -> int:
    """Give the records of <pmuData> their stacks, read with SymbolMode RESOLVE_DELAY_ELF or
    RESOLVE_DELAY_DWARF (ResolvePmuDataSymbol): names, and files and lines for DWARF; also
    after the processes exited or the task was closed. Returns 0, or an error code."""
    data = _need_data(pmuData, "pmuData")
    with data._lock:
        if data._freed:
            raise DataFreedError(data._what)
        if not data._ptr:
            return Error.SUCCESS
        r = _call("ResolvePmuDataSymbol", data._ptr)
    data._resolved()
    return r


def pmu_open_with_hw_metric(pmu_hw_metric_attr: PmuHwMetricAttr) -> int:
    """Open the hardware metrics of <pmu_hw_metric_attr> (PmuOpenWithHWMetric): a handle
    for enable/read/close, or -1 (kperf.error())."""
    if not isinstance(pmu_hw_metric_attr, PmuHwMetricAttr):
        raise TypeError(
            "pmu_hw_metric_attr must be a kperf.PmuHwMetricAttr, not "
            f"{type(pmu_hw_metric_attr).__name__}"
        )
    return _call_or_refuse("PmuOpenWithHWMetric", -1, ctypes.byref(pmu_hw_metric_attr._c))


def close(pd: int) -> None:
    """Close task <pd> (PmuClose); data already read stays valid until freed."""
    pd = _pd(pd)
    if pd is not None:
        _call("PmuClose", pd)
        with _pd_lock:
            _pd_branch.pop(pd, None)


def dump(pmuData: PmuData, filepath: str, dump_dwf: int) -> int:
    """Append <pmuData> to the text file <filepath> (PmuDumpData); with dump_dwf, source
    files and lines too. Returns 0, or -1 (kperf.error())."""
    data = _need_data(pmuData, "pmuData")
    path = to_bytes(filepath, "filepath")
    with data._lock:
        if data._freed:
            raise DataFreedError(data._what)
        return _call("PmuDumpData", data._ptr, len(data), path, 1 if dump_dwf else 0)


def _value_target(value, size):
    """(address, size) of the buffer get_field writes into."""
    if size is not None:
        size = unsigned(32)(size, "size")
        if isinstance(value, int):
            return value, size
        if isinstance(value, ctypes._Pointer):
            return ctypes.cast(value, ctypes.c_void_p).value, size
        if isinstance(value, (ctypes._SimpleCData, ctypes.Array, ctypes.Structure, ctypes.Union)):
            if isinstance(value, ctypes.c_void_p):
                return value.value, size
            return ctypes.addressof(value), min(size, ctypes.sizeof(value))
    if isinstance(value, ctypes._Pointer):
        if not value:
            raise ValueError("get_field: value is a NULL pointer")
        return ctypes.cast(value, ctypes.c_void_p).value, ctypes.sizeof(value._type_)
    if isinstance(value, (ctypes.c_void_p, ctypes.c_char_p, ctypes.c_wchar_p)) or isinstance(
        value, int
    ):
        raise TypeError(
            "get_field: a bare address has no size: pass size=, or a buffer "
            "(create_string_buffer(N)), a ctypes value (c_uint()) or pointer(c_uint())"
        )
    if isinstance(value, (ctypes._SimpleCData, ctypes.Array, ctypes.Structure, ctypes.Union)):
        return ctypes.addressof(value), ctypes.sizeof(value)
    if isinstance(value, bytearray):
        buf = (ctypes.c_char * len(value)).from_buffer(value)
        return ctypes.addressof(buf), len(value)
    raise TypeError(
        f"get_field: value must be a ctypes buffer, value or pointer, not {type(value).__name__}"
    )


def _raw_source(pmu_data):
    if isinstance(pmu_data, ImplPmuData) and pmu_data._owner is not None:
        return pmu_data._owner, pmu_data._index
    if isinstance(pmu_data, SampleRawData) and pmu_data._owner is not None:
        return pmu_data._owner, pmu_data._index
    raise TypeError(
        f"pmu_data must be a record of kperf.read() (ImplPmuData), not {type(pmu_data).__name__}"
    )


def get_field(pmu_data: ImplPmuData, field_name: str, value, *, size: Optional[int] = None) -> int:
    """Copy the tracepoint field <field_name> of a sampled record into <value> (PmuGetField).

    value: create_string_buffer(N) for strings, a ctypes value (c_uint()) or
    pointer(c_uint()) for numbers; a raw address needs size=. Returns 0, or the error
    code, as libkperf (kperf.error(): unknown field, buffer too small, not a tracepoint
    record).
    """
    owner, index = _raw_source(pmu_data)
    name = to_bytes(field_name, "field_name")
    addr, nbytes = _value_target(value, size)
    with owner._lock:
        rec = owner._rec(index)
        return _call("PmuGetField", rec.rawData, name, addr, nbytes)


def get_field_exp(pmu_data: ImplPmuData, field_name: str) -> Optional[SampleRawField]:
    """The description of tracepoint field <field_name> (PmuGetFieldExp): a SampleRawField
    (field_name, field_str, offset, size, is_signed), or None (kperf.error())."""
    owner, index = _raw_source(pmu_data)
    name = to_bytes(field_name, "field_name")
    with owner._lock:
        rec = owner._rec(index)
        p = _call("PmuGetFieldExp", rec.rawData, name)
        return SampleRawField.from_sample_raw_field(p.contents) if p else None


def _list_call(name, *args):
    n = ctypes.c_uint(0)
    p = _call(name, *args, ctypes.byref(n))
    names = _copy_strings(p, n.value)
    _lib.free_returned(p)
    return names


def event_list(event_type: PmuEventType) -> List[str]:
    """The names of the events of a family (PmuEventList); [] on failure (kperf.error())."""
    return _list_call("PmuEventList", cint(event_type, "event_type"))


def sys_call_func_list() -> List[str]:
    """The syscalls the running kernel implements, by name (PmuSysCallFuncList)."""
    return _list_call("PmuSysCallFuncList")


def device_bdf_list(bdf_type: PmuBdfType) -> List[str]:
    """The PCIe or SMMU devices (bdf strings) that have metrics (PmuDeviceBdfList)."""
    return _list_call("PmuDeviceBdfList", cint(bdf_type, "bdf_type"))


def _device_attrs(device_attr):
    if isinstance(device_attr, PmuDeviceAttr):
        device_attr = [device_attr]
    attrs = as_list(device_attr, "device_attr")
    for a in attrs:
        if not isinstance(a, PmuDeviceAttr):
            raise TypeError(
                f"device_attr entries must be kperf.PmuDeviceAttr, not {type(a).__name__}"
            )
    arr = (cs.PmuDeviceAttr * len(attrs))(*[a._c for a in attrs]) if attrs else None
    return arr, len(attrs), attrs


def device_open(device_attr: Sequence[PmuDeviceAttr]) -> int:
    """Open uncore metrics (PmuDeviceOpen): a handle for enable/read/close, or -1."""
    arr, n, keep = _device_attrs(device_attr)
    return _call("PmuDeviceOpen", arr, n)


def get_device_metric(pmu_data: PmuData, device_attr: Sequence[PmuDeviceAttr]) -> PmuDeviceData:
    """Aggregate the data of a device_open() task into metrics (PmuGetDevMetric).

    As libkperf's, an empty result (len 0) when there is nothing to aggregate (no data, no
    attributes) or the aggregation failed; kperf.errorno() / kperf.error() then say why.
    """
    data = _need_data(pmu_data)
    arr, n, keep = _device_attrs(device_attr)
    if not data or not n:
        return PmuDeviceData(None, 0)
    out = ctypes.POINTER(cs.PmuDeviceData)()
    with data._lock:
        if data._freed:
            raise DataFreedError(data._what)
        r = _call("PmuGetDevMetric", data._ptr, len(data), arr, n, ctypes.byref(out))
    return PmuDeviceData(out, r) if r > 0 else PmuDeviceData(out, 0)


def get_cpu_freq(core: int) -> int:
    """The current frequency of CPU <core> in Hz (PmuGetCpuFreq), or -1 (kperf.error())."""
    if not (isinstance(core, int) and 0 <= core <= 0xFFFFFFFF):
        _lib.set_state(Error.LIBPERF_ERR_CPUFREQ_NOT_CONFIG, f"cpu core {core!r} does not exist")
        return -1
    return _call("PmuGetCpuFreq", core)


def _core_list(name, ident, what, code):
    if not (isinstance(ident, int) and 0 <= ident <= 0xFFFFFFFF):
        _lib.set_state(code, f"{what} {ident!r} does not exist")
        return []
    p = ctypes.POINTER(ctypes.c_uint)()
    n = _call(name, ident, ctypes.byref(p))
    cores = [p[i] for i in range(n)] if p and n > 0 else []
    _lib.free_returned(p)
    return cores


def get_cluster_core(clusterId: int) -> List[int]:
    """The CPUs of cluster <clusterId> (PmuGetClusterCore); [] on failure (kperf.error())."""
    return _core_list(
        "PmuGetClusterCore", clusterId, "cluster", Error.LIBPERF_ERR_CLUSTER_ID_OVERSIZE
    )


def get_numa_core(numaId: int) -> List[int]:
    """The CPUs of NUMA node <numaId> (PmuGetNumaCore); [] on failure (kperf.error())."""
    return _core_list("PmuGetNumaCore", numaId, "numa node", Error.LIBPERF_ERR_KERNEL_NOT_SUPPORT)


def trace_open(trace_type: PmuTraceType, pmu_trace_attr: PmuTraceAttr) -> int:
    """Open a syscall trace (PmuTraceOpen): the handle (> 0), or -1 (kperf.error()).

    With no pidList every process is traced, this one included (PmuTraceAttr(excludeSelf=
    True) leaves it out)."""
    if not isinstance(pmu_trace_attr, PmuTraceAttr):
        raise TypeError(
            f"pmu_trace_attr must be a kperf.PmuTraceAttr, not {type(pmu_trace_attr).__name__}"
        )
    return _call(
        "KperfTraceOpen",
        cint(trace_type, "trace_type"),
        ctypes.byref(pmu_trace_attr._c),
        ctypes.byref(pmu_trace_attr._x),
    )


def trace_enable(pd: int) -> int:
    """Start tracing <pd>: 0, or -1 (kperf.error())."""
    pd = _pd(pd)
    return -1 if pd is None else _call("PmuTraceEnable", pd)


def trace_disable(pd: int) -> int:
    """Stop tracing <pd> (records so far stay readable): 0, or -1 (kperf.error())."""
    pd = _pd(pd)
    return -1 if pd is None else _call("PmuTraceDisable", pd)


def trace_read(pd: int) -> PmuTraceData:
    """The syscalls traced by <pd> since the last read (PmuTraceRead).

    On failure the PmuTraceData has len == -1 and kperf.error() says why. With
    summaryOnly it is always empty: use trace_read_summary().
    """
    pd = _pd(pd)
    if pd is None:
        return PmuTraceData(None, -1)
    p = ctypes.POINTER(cs.PmuTraceData)()
    n = _call("PmuTraceRead", pd, ctypes.byref(p))
    return PmuTraceData(p, n) if n >= 0 else PmuTraceData(None, -1)


def trace_close(pd: int) -> None:
    """Close trace <pd> (PmuTraceClose); data already read stays valid until freed."""
    pd = _pd(pd)
    if pd is not None:
        _call("PmuTraceClose", pd)


def syscall_number(name: str) -> int:
    """The number of syscall <name> on this kernel (PmuSysCallNumber), or -1."""
    return _call("PmuSysCallNumber", to_bytes(name, "name"))


def trace_read_summary(pd: int) -> List[TraceSummary]:
    """The in-kernel summary of trace <pd> (PmuTraceReadSummary): one TraceSummary per
    (process, syscall), cumulative since trace_open, sorted by pid then total time
    (descending). Raises KperfError on failure."""
    pd = _pd(pd)
    if pd is None:
        _raise_last()
    p = ctypes.POINTER(cs.PmuTraceSummary)()
    n = _call("PmuTraceReadSummary", pd, ctypes.byref(p))
    if n < 0:
        _raise_last()
    try:
        return [
            TraceSummary(
                text(s.funcs),
                s.nr,
                s.pid,
                text(s.comm),
                s.calls,
                s.errors,
                s.totalNs,
                s.minNs,
                s.maxNs,
                list(s.hist),
            )
            for s in (p[i] for i in range(n))
        ]
    finally:
        if p:
            _lib.fn("PmuTraceSummaryFree")(p)


def trace_read_stack_summary(pd: int) -> List[TraceStackSummary]:
    """The summary by stack of trace <pd> (KperfTraceReadStackSummary; the trace was opened
    with callStack): one TraceStackSummary per (process, syscall, stack at entry), cumulative
    since trace_open, sorted by total time (descending). Raises KperfError on failure."""
    pd = _pd(pd)
    if pd is None:
        _raise_last()
    p = ctypes.POINTER(cs.KperfTraceStackSummary)()
    n = _call("KperfTraceReadStackSummary", pd, ctypes.byref(p))
    if n < 0:
        _raise_last()
    try:
        return [
            TraceStackSummary(
                text(s.funcs),
                s.nr,
                s.pid,
                text(s.comm),
                s.calls,
                s.errors,
                s.totalNs,
                s.minNs,
                s.maxNs,
                Stack.from_c_stack(s.stack) if s.stack else None,
                s.kernelFrames,
            )
            for s in (p[i] for i in range(n))
        ]
    finally:
        if p:
            _lib.fn("KperfTraceStackSummaryFree")(p)


def trace_stats(pd: int) -> TraceStats:
    """Record and drop counters of trace <pd> (PmuTraceGetStats). Raises KperfError."""
    pd = _pd(pd)
    if pd is None:
        _raise_last()
    st = cs.PmuTraceStats()
    if _call("PmuTraceGetStats", pd, ctypes.byref(st)) != 0:
        _raise_last()
    return TraceStats(
        st.records,
        st.dropped,
        st.summaryDropped,
        bool(st.fallback),
        st.ringBufferKb,
        st.stacksLost,
        st.stackSummaryDropped,
        st.summaryNoMemory,
        st.stackSummaryNoMemory,
    )


def unwind_stats(pd: int) -> dict:
    """How sampling task <pd>'s user stacks were unwound since its open (kperf-bpf's
    KperfPmuGetUnwindStats): stacks, frames by method (framesEhFrame, framesDebugFrame,
    framesPlt, framesFp, framesSignal), stacks taken before their tables (stacksNotLoaded,
    stacksUnknownMap, stacksNoRegs), stacksTruncated, and the tables in the kernel (tables,
    rows, rowBytes, processes). Raises KperfError."""
    pd = _pd(pd)
    if pd is None:
        _raise_last()
    st = cs.KperfUnwindStats()
    if _call("KperfPmuGetUnwindStats", pd, ctypes.byref(st)) != 0:
        _raise_last()
    return {name: getattr(st, name) for name, _ in cs.KperfUnwindStats._fields_}


__all__ = [
    "open",
    "enable",
    "disable",
    "collect",
    "stop",
    "exit",
    "read",
    "resolvePmuDataSymbol",
    "pmu_open_with_hw_metric",
    "close",
    "dump",
    "get_field",
    "get_field_exp",
    "event_list",
    "trace_open",
    "trace_enable",
    "trace_disable",
    "trace_read",
    "trace_close",
    "trace_read_summary",
    "trace_read_stack_summary",
    "trace_stats",
    "unwind_stats",
    "sys_call_func_list",
    "syscall_number",
    "device_open",
    "get_device_metric",
    "device_bdf_list",
    "get_cpu_freq",
    "get_cluster_core",
    "get_numa_core",
]


def __getattr__(name):
    # libkperf's kperf.pmu holds all of kperf's API; here the classes and the newer functions
    # live in modules of their own, and `from kperf.pmu import PmuAttr` finds them through
    # the package
    import kperf

    if name in getattr(kperf, "__all__", ()):
        return getattr(kperf, name)
    raise AttributeError(f"module 'kperf.pmu' has no attribute {name!r}")
