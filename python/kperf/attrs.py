"""The attribute classes of libkperf's API (what open, trace_open, device_open,
pmu_open_with_hw_metric and u_trace_open take), with libkperf's constructor signatures.

Each holds the C struct it describes (c_pmu_attr, c_pmu_trace_attr, ...) and the Python
objects that struct points into; values are checked when assigned, so a wrong one raises
naming the attribute instead of reaching C. kperf-bpf's own options (kperf.h's KperfPmuOpts,
KperfTraceOpts) are keyword-only arguments after libkperf's, kept in a struct of their own.
"""

import ctypes
from typing import Optional

from . import _cstructs as cs
from ._convert import as_list, cint, flag, int_array, str_array, to_bytes, unsigned


class _CAttr:
    """A ctypes struct (and kperf-bpf's options struct, if any) plus the Python objects its
    pointers point into (kept alive as long as the struct)."""

    _c_type = None
    _x_type = None  # kperf-bpf's options struct (kperf.h), when the class has one
    _fields = ()  # the settable attributes, in libkperf's order

    def _init(self, values):
        object.__setattr__(self, "_c", self._c_type())
        if self._x_type is not None:
            object.__setattr__(self, "_x", self._x_type(sz=ctypes.sizeof(self._x_type)))
        object.__setattr__(self, "_keep", {})
        for name in self._fields:
            if name in values:
                setattr(self, name, values[name])

    def __setattr__(self, name, value):
        if name not in self._fields:
            raise AttributeError(f"{type(self).__name__} has no attribute {name!r}")
        object.__setattr__(self, name, value)

    def __repr__(self):
        parts = []
        for k in self._fields:
            v = getattr(self, k)
            if v not in (None, [], 0, False, ""):
                parts.append(f"{k}={v!r}")
        return f"{type(self).__name__}({', '.join(parts)})"


def _list_prop(name, cfield, nfield, conv):
    def get(self):
        return list(self._keep.get(name + "_py", []))

    def set(self, values):
        items = as_list(values, name)  # once: <values> may be a generator
        arr, n = conv(items, name)
        self._keep[name] = arr
        self._keep[name + "_py"] = items
        setattr(self._c, cfield, ctypes.cast(arr, type(getattr(self._c, cfield))) if arr else None)
        setattr(self._c, nfield, n)

    return property(get, set)


def _count(nfield):
    return property(lambda self: getattr(self._c, nfield))


class _Scalar:
    """A scalar field of the C struct, checked on assignment (errors name the attribute).
    opts=True: a field of kperf-bpf's options struct instead of libkperf's."""

    def __init__(self, conv, out=int, cfield=None, opts=False):
        self.conv, self.out, self.cfield = conv, out, cfield
        self.where = "_x" if opts else "_c"

    def __set_name__(self, owner, name):
        self.name = name
        self.cfield = self.cfield or name

    def __get__(self, obj, objtype=None):
        return self if obj is None else self.out(getattr(getattr(obj, self.where), self.cfield))

    def __set__(self, obj, v):
        setattr(getattr(obj, self.where), self.cfield, self.conv(v, self.name))


def _values(frame_locals):
    return {k: v for k, v in frame_locals.items() if k not in ("self", "__class__")}


class EvtAttr:
    """An event's own attributes (struct EvtAttr): groupId (events with the same id are
    scheduled together; -1: not grouped), period (SAMPLING: this event's sample period, or
    frequency with useFreq; 0: PmuAttr's), excludeUser, excludeKernel."""

    __slots__ = ("groupId", "period", "excludeUser", "excludeKernel")

    def __init__(self, groupId=0, period=0, excludeUser=False, excludeKernel=False):
        self.groupId = groupId
        self.period = period
        self.excludeUser = excludeUser
        self.excludeKernel = excludeKernel

    def __repr__(self):
        return (
            f"EvtAttr(groupId={self.groupId}, period={self.period}, "
            f"excludeUser={self.excludeUser}, excludeKernel={self.excludeKernel})"
        )

    def _fill(self, c):
        c.groupId = cint(self.groupId, "evtAttr groupId")
        c.period = unsigned(32)(self.period, "evtAttr period")
        c.excludeUser = flag(self.excludeUser, "evtAttr excludeUser")
        c.excludeKernel = flag(self.excludeKernel, "evtAttr excludeKernel")

    @property
    def c_evt_attr(self):
        c = cs.EvtAttr()
        self._fill(c)
        return c

    @classmethod
    def from_c_evt_attr(cls, c):
        return cls(c.groupId, c.period, bool(c.excludeUser), bool(c.excludeKernel))


class PmuAttr(_CAttr):
    """What kperf.open() collects (struct PmuAttr).

    evtList: event names ("cpu-clock", "cycles", "r11", "pmu/event/", "sched:sched_switch").
    pidList: processes (all their threads); empty: every process.
    cpuList: CPUs; empty: every online CPU.
    evtAttr: attributes of the first events of evtList (EvtAttr, or ints: group ids).
    sampleRate: the sample period, or the frequency in Hz when useFreq is set.
    useFreq, excludeUser, excludeKernel, excludeGuest, excludeHost, callStack, blockedSample,
    includeNewFork, enableUserAccess, enableBpf, enableOnExec, perThread: flags.
    symbolMode: SymbolMode. dataFilter: SpeFilter. evFilter: SpeEventFilter.
    minLatency: SPE minimum latency. branchSampleFilter: BranchSampleFilter flags.
    cgroupNameList: cgroups to count or sample. enableHwMetric (attribute only, as libkperf's).
    kperf-bpf options (KperfPmuOpts), keyword-only: aggregate (SAMPLING: one record per
    distinct stack, counted in the kernel, instead of one per sample), ringBufferKb (ring
    buffer size, 0: default), inlineFrames (with a DWARF symbolMode: each inlined call a
    frame of its own in the stacks, its Symbol.inlined True), offCpuOnly (with
    blockedSample: the time blocked only, no on-CPU samples), blockedKernelStack (with
    blockedSample: blocked records keep their kernel frames), callGraph (with callStack: 0,
    the default, user stacks unwound from each file's .eh_frame; 1, frame pointers only),
    pythonFrames (with callStack and callGraph 0: 0, the default, CPython 3.11 frames in place
    of the interpreter's; 1, both; 2, native frames only).
    """

    _c_type = cs.PmuAttr
    _x_type = cs.KperfPmuOpts
    _fields = (
        "evtList",
        "pidList",
        "cpuList",
        "evtAttr",
        "sampleRate",
        "useFreq",
        "excludeUser",
        "excludeKernel",
        "excludeGuest",
        "excludeHost",
        "symbolMode",
        "callStack",
        "blockedSample",
        "dataFilter",
        "evFilter",
        "minLatency",
        "includeNewFork",
        "branchSampleFilter",
        "cgroupNameList",
        "enableUserAccess",
        "enableBpf",
        "enableHwMetric",
        "enableOnExec",
        "perThread",
        "aggregate",
        "ringBufferKb",
        "inlineFrames",
        "offCpuOnly",
        "blockedKernelStack",
        "callGraph",
        "pythonFrames",
    )

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
        enableOnExec=False,
        perThread=False,
        *,
        aggregate=False,
        ringBufferKb=0,
        inlineFrames=False,
        offCpuOnly=False,
        blockedKernelStack=False,
        callGraph=0,
        pythonFrames=0,
    ):
        self._init(_values(locals()))

    evtList = _list_prop("evtList", "evtList", "numEvt", str_array)
    pidList = _list_prop("pidList", "pidList", "numPid", int_array)
    cpuList = _list_prop("cpuList", "cpuList", "numCpu", int_array)
    cgroupNameList = _list_prop("cgroupNameList", "cgroupNameList", "numCgroup", str_array)
    numEvt = _count("numEvt")
    numPid = _count("numPid")
    numCpu = _count("numCpu")
    numCgroup = _count("numCgroup")
    numEvtAttr = _count("numEvtAttr")
    # the union period/freq: one value, read as a frequency when useFreq is set
    sampleRate = _Scalar(unsigned(32), cfield="period")
    useFreq = _Scalar(flag, bool)
    excludeUser = _Scalar(flag, bool)
    excludeKernel = _Scalar(flag, bool)
    excludeGuest = _Scalar(flag, bool)
    excludeHost = _Scalar(flag, bool)
    symbolMode = _Scalar(cint)
    callStack = _Scalar(flag, bool)
    blockedSample = _Scalar(flag, bool)
    dataFilter = _Scalar(unsigned(64))
    evFilter = _Scalar(cint)
    minLatency = _Scalar(unsigned(64))
    includeNewFork = _Scalar(flag, bool)
    branchSampleFilter = _Scalar(unsigned(64))
    enableUserAccess = _Scalar(flag, bool)
    enableBpf = _Scalar(flag, bool)
    enableHwMetric = _Scalar(flag, bool)
    enableOnExec = _Scalar(flag, bool)
    perThread = _Scalar(flag, bool)
    aggregate = _Scalar(flag, bool, opts=True)
    ringBufferKb = _Scalar(unsigned(32), opts=True)
    inlineFrames = _Scalar(flag, bool, opts=True)
    offCpuOnly = _Scalar(flag, bool, opts=True)
    blockedKernelStack = _Scalar(flag, bool, opts=True)
    callGraph = _Scalar(unsigned(32), opts=True)
    pythonFrames = _Scalar(unsigned(32), opts=True)

    @property
    def evtAttr(self):
        return list(self._keep.get("evtAttr_py", []))

    @evtAttr.setter
    def evtAttr(self, values):
        items = as_list(values, "evtAttr")
        attrs = [v if isinstance(v, EvtAttr) else EvtAttr(cint(v, "evtAttr group id")) for v in items]
        arr = (cs.EvtAttr * len(attrs))() if attrs else None
        for i, v in enumerate(attrs):
            v._fill(arr[i])
        self._keep["evtAttr"] = arr
        self._keep["evtAttr_py"] = items
        self._c.evtAttr = ctypes.cast(arr, ctypes.POINTER(cs.EvtAttr)) if arr else None
        self._c.numEvtAttr = len(attrs)

    @property
    def c_pmu_attr(self) -> cs.PmuAttr:
        """The C struct (ctypes) handed to PmuOpen."""
        return self._c

    c_attr = c_pmu_attr

    @classmethod
    def from_c_pmu_data(cls, c_pmu_attr):
        """A PmuAttr holding the values of a C struct PmuAttr (libkperf's name for it)."""
        c = c_pmu_attr.contents if isinstance(c_pmu_attr, ctypes._Pointer) else c_pmu_attr

        def items(arr, n, conv=lambda x: x):
            return [conv(arr[i]) for i in range(n)] if arr and n else None

        a = cls(
            evtList=items(c.evtList, c.numEvt, lambda b: b.decode("utf-8", "replace")),
            pidList=items(c.pidList, c.numPid),
            cpuList=items(c.cpuList, c.numCpu),
            evtAttr=items(c.evtAttr, c.numEvtAttr, EvtAttr.from_c_evt_attr),
            cgroupNameList=items(
                c.cgroupNameList, c.numCgroup, lambda b: b.decode("utf-8", "replace")
            ),
        )
        for name in cls._fields[4:-2]:
            if name != "cgroupNameList":
                setattr(a, name, getattr(c, "period" if name == "sampleRate" else name))
        return a


class PmuTraceAttr(_CAttr):
    """What kperf.trace_open() traces (struct PmuTraceAttr).

    funcs: syscall names ("read", "openat"); empty: every syscall.
    pidList: processes (all their threads); empty: every process, the caller's included.
    cpuList: CPUs; empty: every CPU.
    callStack: each record carries the stack at syscall entry; symbolMode: how it resolves.
    kperf-bpf options (KperfTraceOpts), keyword-only:
      summaryOnly: keep only the in-kernel summary (trace_read returns nothing; use
                   trace_read_summary), the cheapest mode;
      minDurationNs: per-call records only for calls at least this long;
      ringBufferKb: per-call ring buffer size in KiB (0: 16384);
      cgroupPath: a cgroup v2 directory: only its tasks and its descendants';
      includeNewFork: processes forked by a traced process are traced too;
      fromExec: trace the pids of pidList from their next execve on;
      summaryEntries: (process, syscall) entries of the summary (0: 16384);
      excludeSelf: with no pidList, leave out the caller's own syscalls;
      maxStoredRecords: records kept between two reads (0: the library's default); a
                        trace_read hands out at most this many: read until it returns 0;
      stackEntries: with callStack, distinct stacks kept (0: 8192). With callStack the
                    trace also keeps a summary by stack: trace_read_stack_summary().
    """

    _c_type = cs.PmuTraceAttr
    _x_type = cs.KperfTraceOpts
    _fields = (
        "funcs",
        "pidList",
        "cpuList",
        "callStack",
        "symbolMode",
        "summaryOnly",
        "minDurationNs",
        "ringBufferKb",
        "cgroupPath",
        "includeNewFork",
        "fromExec",
        "summaryEntries",
        "excludeSelf",
        "maxStoredRecords",
        "stackEntries",
    )

    def __init__(
        self,
        funcs=None,
        pidList=None,
        cpuList=None,
        callStack=False,
        symbolMode=0,
        *,
        summaryOnly=False,
        minDurationNs=0,
        ringBufferKb=0,
        cgroupPath=None,
        includeNewFork=False,
        fromExec=False,
        summaryEntries=0,
        excludeSelf=False,
        maxStoredRecords=0,
        stackEntries=0,
    ):
        self._init(_values(locals()))

    funcs = _list_prop("funcs", "funcs", "numFuncs", str_array)
    pidList = _list_prop("pidList", "pidList", "numPid", int_array)
    cpuList = _list_prop("cpuList", "cpuList", "numCpu", int_array)
    numFuncs = _count("numFuncs")
    numPid = _count("numPid")
    numCpu = _count("numCpu")
    callStack = _Scalar(flag, bool)
    symbolMode = _Scalar(cint)
    summaryOnly = _Scalar(flag, bool, opts=True)
    minDurationNs = _Scalar(unsigned(64), opts=True)
    ringBufferKb = _Scalar(unsigned(32), opts=True)
    includeNewFork = _Scalar(flag, bool, opts=True)
    fromExec = _Scalar(flag, bool, opts=True)
    summaryEntries = _Scalar(unsigned(32), opts=True)
    excludeSelf = _Scalar(flag, bool, opts=True)
    maxStoredRecords = _Scalar(unsigned(32), opts=True)
    stackEntries = _Scalar(unsigned(32), opts=True)

    @property
    def cgroupPath(self) -> Optional[str]:
        b = self._keep.get("cgroupPath")
        return b.decode("utf-8", "replace") if b else None

    @cgroupPath.setter
    def cgroupPath(self, path):
        b = to_bytes(path, "cgroupPath") if path else None
        self._keep["cgroupPath"] = b
        self._x.cgroupPath = b

    @property
    def c_pmu_trace_attr(self) -> cs.PmuTraceAttr:
        """The C struct (ctypes) handed to PmuTraceOpen."""
        return self._c

    c_attr = c_pmu_trace_attr


def _str_field(name):
    def get(self):
        b = self._keep.get(name)
        return b.decode("utf-8", "replace") if b else None

    def set(self, v):
        b = to_bytes(v, name) if v else None
        self._keep[name] = b
        setattr(self._c, name, b)

    return property(get, set)


class PmuDeviceAttr(_CAttr):
    """An uncore metric for kperf.device_open() (struct PmuDeviceAttr).

    metric: PmuDeviceMetric; bdf: the PCIe/SMMU device ("7a:01.0") for those metrics;
    port: the PCIe port for the latency metrics.
    """

    _c_type = cs.PmuDeviceAttr
    _fields = ("metric", "bdf", "port")

    def __init__(self, metric, bdf=None, port=None):
        self._init(_values(locals()))

    metric = _Scalar(cint)
    bdf = _str_field("bdf")
    port = _str_field("port")

    @property
    def c_pmu_device_attr(self) -> cs.PmuDeviceAttr:
        return self._c

    c_attr = c_pmu_device_attr

    @classmethod
    def from_c_pmu_device_attr(cls, c):
        return cls(c.metric, c.bdf.decode() if c.bdf else None, c.port.decode() if c.port else None)


class PmuHwMetricAttr(_CAttr):
    """The hardware metrics of kperf.pmu_open_with_hw_metric() (struct PmuHwMetricAttr):
    metric (PmuHwMetric bits), basePeriodList and thresholdList (one entry per metric bit
    set), pid."""

    _c_type = cs.PmuHwMetricAttr
    _fields = ("metric", "basePeriodList", "thresholdList", "pid")

    def __init__(self, metric, basePeriodList=None, thresholdList=None, pid=0):
        self._init(_values(locals()))

    metric = _Scalar(unsigned(64))
    pid = _Scalar(unsigned(32))

    def _array(name, ctype, conv):
        def get(self):
            return list(self._keep.get(name + "_py", []))

        def set(self, values):
            items = [conv(v, f"{name} entry") for v in as_list(values, name)]
            arr = (ctype * len(items))(*items) if items else None
            self._keep[name], self._keep[name + "_py"] = arr, items
            setattr(self._c, name, ctypes.cast(arr, ctypes.POINTER(ctype)) if arr else None)

        return property(get, set)

    basePeriodList = _array("basePeriodList", ctypes.c_uint, unsigned(32))
    thresholdList = _array("thresholdList", ctypes.c_double, lambda v, what: float(v))
    del _array

    @property
    def c_hw_metric_attr(self) -> cs.PmuHwMetricAttr:
        return self._c


class UTraceAttr(_CAttr):
    """What kperf.u_trace_open() traces (struct UTraceAttr): symSrc, a list of (module,
    function) pairs whose entries and returns are recorded; pidList (empty: every process
    that maps the module); fetchG (Go programs: record the runtime's g pointer).
    kperf-bpf option (KperfUTraceOpts), keyword-only: ringBufferKb (0: 16384)."""

    _c_type = cs.UTraceAttr
    _x_type = cs.KperfUTraceOpts
    _fields = ("symSrc", "pidList", "fetchG", "ringBufferKb")

    def __init__(self, symSrc=None, pidList=None, fetchG=0, *, ringBufferKb=0):
        self._init(_values(locals()))

    ringBufferKb = _Scalar(unsigned(32), opts=True)

    pidList = _list_prop("pidList", "pidList", "numPid", int_array)
    numPid = _count("numPid")
    numSym = _count("numSym")
    fetchG = _Scalar(flag, bool)

    @property
    def symSrc(self):
        return list(self._keep.get("symSrc_py", []))

    @symSrc.setter
    def symSrc(self, values):
        pairs = []
        for v in as_list(values, "symSrc"):
            try:
                module, symbol = v
            except (TypeError, ValueError):
                raise TypeError(
                    f"symSrc entries must be (module, function) pairs, not {v!r}"
                ) from None
            pairs.append((module, symbol))
        arr = (cs.SymbolSource * len(pairs))() if pairs else None
        keep = []
        for i, (module, symbol) in enumerate(pairs):
            m, s = to_bytes(module, "symSrc module"), to_bytes(symbol, "symSrc function")
            keep += [m, s]
            arr[i].moduleName, arr[i].symbolName = m, s
        self._keep["symSrc"], self._keep["symSrc_bytes"] = arr, keep
        self._keep["symSrc_py"] = pairs
        self._c.symSrc = ctypes.cast(arr, ctypes.POINTER(cs.SymbolSource)) if arr else None
        self._c.numSym = len(pairs)

    @property
    def c_u_trace_attr(self) -> cs.UTraceAttr:
        return self._c


__all__ = ["EvtAttr", "PmuAttr", "PmuTraceAttr", "PmuDeviceAttr", "PmuHwMetricAttr", "UTraceAttr"]
