"""The libkperf Python API over libkperf-bpf: open/enable/disable/read/close, trace_*, fields,
event lists, device metrics, topology, and kperf-bpf's additions.

Names and behaviour follow the libkperf `kperf` documentation, so a script written for it
runs unchanged: handles are plain ints, -1 means failure and kperf.error() says why, read()
returns an object with `len`, `iter` and `free`. What this package adds:

- results can be iterated any number of times, indexed, and freed twice; they free
  themselves when garbage-collected; reading one after free() raises DataFreedError
  instead of touching freed memory (records already taken out of it stay valid: they are
  copies);
- Pmu and Trace wrap a handle as a context manager and raise KperfError on failure;
- the in-kernel syscall summary: trace_read_summary() and trace_stats().
"""

import collections
import ctypes
import enum
import operator
import threading
from dataclasses import dataclass, field
from typing import List, Optional, Sequence

from . import _cstructs as cs
from . import _lib
from .perror import DataFreedError, Error, KperfError, _raise_last

_INT_MIN, _INT_MAX = -(2**31), 2**31 - 1


# ---------------------------------------------------------------- enums


class PmuTaskType(enum.IntEnum):
    """Collection modes of kperf.open()."""

    COUNTING = 0
    COUTING = 0  # the spelling of the libkperf documentation
    SAMPLING = 1
    SPE_SAMPLING = 2
    MAX_TASK_TYPE = 3


class PmuEventType(enum.IntEnum):
    """Event families of kperf.event_list()."""

    CORE_EVENT = 0
    UNCORE_EVENT = 1
    TRACE_EVENT = 2
    ALL_EVENT = 3


class PmuTraceType(enum.IntEnum):
    TRACE_SYS_CALL = 0


class SymbolMode(enum.IntEnum):
    NO_SYMBOL_RESOLVE = 0  # PmuData.stack is None
    RESOLVE_ELF = 1  # function names, no file and line
    RESOLVE_ELF_DWARF = 2  # function names, file and line
    RESOLVE_DELAY_ELF = 3  # addresses now, names at resolvePmuDataSymbol
    RESOLVE_DELAY_DWARF = 4  # addresses now, names and lines at resolvePmuDataSymbol


class SpeFilter(enum.IntFlag):
    SPE_FILTER_NONE = 0
    TS_ENABLE = 1 << 0
    PA_ENABLE = 1 << 1
    PCT_ENABLE = 1 << 2
    JITTER = 1 << 16
    BRANCH_FILTER = 1 << 32
    LOAD_FILTER = 1 << 33
    STORE_FILTER = 1 << 34
    SPE_DATA_ALL = (
        TS_ENABLE | PA_ENABLE | PCT_ENABLE | JITTER | BRANCH_FILTER | LOAD_FILTER | STORE_FILTER
    )


class SpeEventFilter(enum.IntFlag):
    SPE_EVENT_NONE = 0
    SPE_EVENT_RETIRED = 0x2
    SPE_EVENT_L1DMISS = 0x8
    SPE_EVENT_TLB_WALK = 0x20
    SPE_EVENT_MISPREDICTED = 0x80


class SpeEvent(enum.IntFlag):
    SPE_EV_EXCEPT = 1 << 0
    SPE_EV_RETIRED = 1 << 1
    SPE_EV_L1D_ACCESS = 1 << 2
    SPE_EV_L1D_REFILL = 1 << 3
    SPE_EV_TLB_ACCESS = 1 << 4
    SPE_EV_TLB_WALK = 1 << 5
    SPE_EV_NOT_TAKEN = 1 << 6
    SPE_EV_MISPRED = 1 << 7
    SPE_EV_LLC_ACCESS = 1 << 8
    SPE_EV_LLC_MISS = 1 << 9
    SPE_EV_REMOTE_ACCESS = 1 << 10
    SPE_EV_ALIGNMENT = 1 << 11
    SPE_EV_PARTIAL_PRED = 1 << 17
    SPE_EV_EMPTY_PRED = 1 << 18
    SPE_FORWARD_HAZARD = 1 << 24
    SPE_STRUCTURE_HAZARD = 1 << 25


class HipDataSource(enum.IntEnum):
    """HiSilicon data source of an SPE load (PmuDataExt.source; C enum HIP_DATA_SOURCE)."""

    HIP_PEER_CPU = 0
    HIP_PEER_CPU_HITM = 1
    HIP_L3 = 2
    HIP_L3_HITM = 3
    HIP_PEER_CLUSTER = 4
    HIP_PEER_CLUSTER_HITM = 5
    HIP_REMOTE_SOCKET = 6
    HIP_REMOTE_SOCKET_HITM = 7
    HIP_LOCAL_MEM = 8
    HIP_REMOTE_MEM = 9
    HIP_NC_DEV = 13
    HIP_L2 = 16
    HIP_L2_HITM = 17
    HIP_L1 = 18


class SpeLdStOpType(enum.IntFlag):
    SPE_OP_LD = 1 << 20
    SPE_OP_ST = 1 << 21
    SPE_OP_ATOMIC = 1 << 22
    SPE_OP_EXCL = 1 << 23
    SPE_OP_AR = 1 << 24


class PmuHwMetric(enum.IntFlag):
    PMU_HWM_CPI = 1 << 0
    PMU_HWM_CACHE_MISS = 1 << 1
    PMU_HWM_L3_CACHE_MISS = 1 << 2
    PMU_HWM_L2D_CACHE_MISS = 1 << 3
    PMU_HWM_L1_DCACHE_MISS = 1 << 4
    PMU_HWM_L1_ICACHE_LOAD_MISS = 1 << 5
    PMU_HWM_DTLB_LOAD_MISS = 1 << 6
    PMU_HWM_ITLD_LOAD_MISS = 1 << 7
    PMU_HWM_BRACH_LOADS_MISS = 1 << 8


class BranchSampleFilter(enum.IntFlag):
    KPERF_NO_BRANCH_SAMPLE = 0
    KPERF_SAMPLE_BRANCH_USER = 1 << 0
    KPERF_SAMPLE_BRANCH_KERNEL = 1 << 1
    KPERF_SAMPLE_BRANCH_HV = 1 << 2
    KPERF_SAMPLE_BRANCH_ANY = 1 << 3
    KPERF_SAMPLE_BRANCH_ANY_CALL = 1 << 4
    KPERF_SAMPLE_BRANCH_ANY_RETURN = 1 << 5
    KPERF_SAMPLE_BRANCH_IND_CALL = 1 << 6
    KPERF_SAMPLE_BRANCH_ABORT_TX = 1 << 7
    KPERF_SAMPLE_BRANCH_IN_TX = 1 << 8
    KPERF_SAMPLE_BRANCH_NO_TX = 1 << 9
    KPERF_SAMPLE_BRANCH_COND = 1 << 10
    KPERF_SAMPLE_BRANCH_CALL_STACK = 1 << 11
    KPERF_SAMPLE_BRANCH_IND_JUMP = 1 << 12
    KPERF_SAMPLE_BRANCH_CALL = 1 << 13
    KPERF_SAMPLE_BRANCH_NO_FLAGES = 1 << 14
    KPERF_SAMPLE_BRANCH_NO_CYCLES = 1 << 15
    KPERF_SAMPLE_BRANCH_TYPE_SAVE = 1 << 16


class PmuDeviceMetric(enum.IntEnum):
    PMU_DDR_READ_BW = 0  # per channel, bytes
    PMU_DDR_WRITE_BW = 1  # per channel, bytes
    PMU_L3_TRAFFIC = 2  # per core, bytes
    PMU_L3_MISS = 3  # per core, count
    PMU_L3_REF = 4  # per core, count
    PMU_L3_LAT = 5  # per cluster / numa node, cycles
    PMU_PCIE_RX_MRD_BW = 6  # per bdf, bytes/ns
    PMU_PCIE_RX_MWR_BW = 7
    PMU_PCIE_TX_MRD_BW = 8
    PMU_PCIE_TX_MWR_BW = 9
    PMU_PCIE_RX_MRD_LAT = 10  # per bdf, ns
    PMU_PCIE_RX_MWR_LAT = 11
    PMU_PCIE_TX_MRD_LAT = 12
    PMU_SMMU_TRAN = 13  # per bdf, count
    PMU_HHA_CROSS_NUMA = 14
    PMU_HHA_CROSS_SOCKET = 15


class PmuBdfType(enum.IntEnum):
    PMU_BDF_TYPE_PCIE = 0
    PMU_BDF_TYPE_SMMU = 1


class PmuMetricMode(enum.IntEnum):
    PMU_METRIC_INVALID = 0
    PMU_METRIC_CORE = 1
    PMU_METRIC_NUMA = 2
    PMU_METRIC_CLUSTER = 3
    PMU_METRIC_BDF = 4
    PMU_METRIC_CHANNEL = 5


# ---------------------------------------------------------------- argument conversion


def _check_int(v, lo, hi, what):
    if isinstance(v, bool) or not isinstance(v, int):
        try:
            v = v.__index__()
        except (AttributeError, TypeError):
            raise TypeError(f"{what} must be an int, not {type(v).__name__}") from None
    if not lo <= v <= hi:
        raise ValueError(f"{what} = {v} is out of range [{lo}, {hi}]")
    return int(v)


def _u(bits):
    return lambda v, what: _check_int(v, 0, 2**bits - 1, what)


def _flag(v, what):
    return 1 if v else 0


def _cint(v, what):
    return _check_int(v, _INT_MIN, _INT_MAX, what)


def _to_bytes(s, what):
    if isinstance(s, str):
        b = s.encode("utf-8")
    elif isinstance(s, (bytes, bytearray)):
        b = bytes(s)
    else:
        raise TypeError(f"{what} must be a str, not {type(s).__name__}")
    if b"\0" in b:
        raise ValueError(f"{what} {s!r} contains a NUL character")
    return b


def _as_list(values, what):
    if values is None:
        return []
    if isinstance(values, (str, bytes)):
        raise TypeError(f"{what} must be a list, not a single {type(values).__name__}")
    try:
        return list(values)
    except TypeError:
        raise TypeError(f"{what} must be a list, not {type(values).__name__}") from None


def _str_array(values, what):
    items = [_to_bytes(v, f"{what} entry") for v in _as_list(values, what)]
    if not items:
        return None, 0
    return (ctypes.c_char_p * len(items))(*items), len(items)


def _int_array(values, what):
    items = [_cint(v, f"{what} entry") for v in _as_list(values, what)]
    if not items:
        return None, 0
    return (ctypes.c_int * len(items))(*items), len(items)


def _str(b):
    return b.decode("utf-8", "replace") if b else ""


class _CAttr:
    """Base of the attribute classes: a ctypes struct plus the Python objects its pointers
    point into (kept alive as long as the struct)."""

    _c_type = None
    _x_type = None  # kperf-bpf's options struct (kperf.h), when the class has one
    _defaults = {}

    def __init__(self, **kwargs):
        object.__setattr__(self, "_c", self._c_type())
        if self._x_type is not None:
            object.__setattr__(self, "_x", self._x_type(sz=ctypes.sizeof(self._x_type)))
        object.__setattr__(self, "_keep", {})
        unknown = set(kwargs) - set(self._defaults)
        if unknown:
            raise TypeError(
                f"{type(self).__name__}() got unexpected keyword argument(s) "
                f"{', '.join(sorted(unknown))}; known: {', '.join(self._defaults)}"
            )
        for name, default in self._defaults.items():
            setattr(self, name, kwargs.get(name, default))

    def __setattr__(self, name, value):
        if name not in self._defaults:
            raise AttributeError(f"{type(self).__name__} has no attribute {name!r}")
        object.__setattr__(self, name, value)

    def __repr__(self):
        parts = [
            f"{k}={getattr(self, k)!r}"
            for k, d in self._defaults.items()
            if getattr(self, k) != d and getattr(self, k) not in (None, [], 0, False, "")
        ]
        return f"{type(self).__name__}({', '.join(parts)})"


def _list_prop(name, cfield, nfield, conv):
    def get(self):
        return list(self._keep.get(name + "_py", []))

    def set(self, values):
        items = _as_list(values, name)  # once: <values> may be a generator
        arr, n = conv(items, name)
        self._keep[name] = arr
        self._keep[name + "_py"] = items
        setattr(self._c, cfield, ctypes.cast(arr, type(getattr(self._c, cfield))) if arr else None)
        setattr(self._c, nfield, n)

    return property(get, set)


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


class EvtAttr:
    """An event's own attributes (libkperf's EvtAttr): groupId (events with the same id are
    scheduled together; -1: not grouped), period (SAMPLING: this event's sample period, 0:
    PmuAttr's), excludeUser, excludeKernel. PmuAttr(evtAttr=...) also takes plain ints (group
    ids)."""

    def __init__(self, groupId: int = -1, period: int = 0, excludeUser=False, excludeKernel=False):
        self.groupId = groupId
        self.period = period
        self.excludeUser = excludeUser
        self.excludeKernel = excludeKernel

    def __repr__(self):
        return (
            f"EvtAttr(groupId={self.groupId}, period={self.period}, "
            f"excludeUser={self.excludeUser}, excludeKernel={self.excludeKernel})"
        )


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
    cgroupNameList: cgroups to count.
    kperf-bpf options (KperfPmuOpts): aggregate (SAMPLING: one record per distinct stack,
    counted in the kernel, instead of one per sample), ringBufferKb (ring buffer size, 0:
    default).
    """

    _c_type = cs.PmuAttr
    _x_type = cs.KperfPmuOpts
    _defaults = {
        "evtList": None,
        "pidList": None,
        "cpuList": None,
        "evtAttr": None,
        "sampleRate": 0,
        "useFreq": False,
        "excludeUser": False,
        "excludeKernel": False,
        "excludeGuest": False,
        "excludeHost": False,
        "symbolMode": SymbolMode.NO_SYMBOL_RESOLVE,
        "callStack": False,
        "blockedSample": False,
        "dataFilter": SpeFilter.SPE_FILTER_NONE,
        "evFilter": SpeEventFilter.SPE_EVENT_NONE,
        "minLatency": 0,
        "includeNewFork": False,
        "branchSampleFilter": BranchSampleFilter.KPERF_NO_BRANCH_SAMPLE,
        "cgroupNameList": None,
        "enableUserAccess": False,
        "enableBpf": False,
        "enableOnExec": False,
        "perThread": False,
        "aggregate": False,
        "ringBufferKb": 0,
    }

    evtList = _list_prop("evtList", "evtList", "numEvt", _str_array)
    pidList = _list_prop("pidList", "pidList", "numPid", _int_array)
    cpuList = _list_prop("cpuList", "cpuList", "numCpu", _int_array)
    cgroupNameList = _list_prop("cgroupNameList", "cgroupNameList", "numCgroup", _str_array)
    # the union period/freq: one value, read as a frequency when useFreq is set
    sampleRate = _Scalar(_u(32), cfield="period")
    useFreq = _Scalar(_flag, bool)
    excludeUser = _Scalar(_flag, bool)
    excludeKernel = _Scalar(_flag, bool)
    excludeGuest = _Scalar(_flag, bool)
    excludeHost = _Scalar(_flag, bool)
    symbolMode = _Scalar(_cint)
    callStack = _Scalar(_flag, bool)
    blockedSample = _Scalar(_flag, bool)
    dataFilter = _Scalar(_u(64))
    evFilter = _Scalar(_cint)
    minLatency = _Scalar(_u(64))
    includeNewFork = _Scalar(_flag, bool)
    branchSampleFilter = _Scalar(_u(64))
    enableUserAccess = _Scalar(_flag, bool)
    enableBpf = _Scalar(_flag, bool)
    enableOnExec = _Scalar(_flag, bool)
    perThread = _Scalar(_flag, bool)
    aggregate = _Scalar(_flag, bool, opts=True)
    ringBufferKb = _Scalar(_u(32), opts=True)

    @property
    def evtAttr(self):
        return list(self._keep.get("evtAttr_py", []))

    @evtAttr.setter
    def evtAttr(self, values):
        items = _as_list(values, "evtAttr")
        attrs = [v if isinstance(v, EvtAttr) else EvtAttr(_cint(v, "evtAttr group id")) for v in items]
        arr = (cs.EvtAttr * len(attrs))() if attrs else None
        for i, v in enumerate(attrs):
            arr[i].groupId = _cint(v.groupId, "evtAttr groupId")
            arr[i].period = _u(32)(v.period, "evtAttr period")
            arr[i].excludeUser = _flag(v.excludeUser, "evtAttr excludeUser")
            arr[i].excludeKernel = _flag(v.excludeKernel, "evtAttr excludeKernel")
        self._keep["evtAttr"] = arr
        self._keep["evtAttr_py"] = items
        self._c.evtAttr = ctypes.cast(arr, ctypes.POINTER(cs.EvtAttr)) if arr else None
        self._c.numEvtAttr = len(attrs)

    @property
    def c_attr(self) -> cs.PmuAttr:
        """The C struct (ctypes) handed to PmuOpen."""
        return self._c

    c_pmu_attr = c_attr

    def _problem(self):
        return None


class PmuTraceAttr(_CAttr):
    """What kperf.trace_open() traces (struct PmuTraceAttr).

    funcs: syscall names ("read", "openat"); empty: every syscall.
    pidList: processes (all their threads); empty: every process, the caller's included.
    cpuList: CPUs; empty: every CPU.
    callStack: each record carries the stack at syscall entry; symbolMode: how it resolves.
    kperf-bpf options (KperfTraceOpts):
      summaryOnly: keep only the in-kernel summary (trace_read returns nothing; use
                   trace_read_summary), the cheapest mode;
      minDurationNs: per-call records only for calls at least this long;
      ringBufferKb: per-call ring buffer size in KiB (0: 16384);
      cgroupPath: a cgroup v2 directory: only its tasks and its descendants';
      includeNewFork: processes forked by a traced process are traced too;
      fromExec: trace the pids of pidList from their next execve on;
      summaryEntries: (process, syscall) entries of the summary (0: 16384);
      excludeSelf: with no pidList, leave out the caller's own syscalls.
    """

    _c_type = cs.PmuTraceAttr
    _x_type = cs.KperfTraceOpts
    _defaults = {
        "funcs": None,
        "pidList": None,
        "cpuList": None,
        "callStack": False,
        "symbolMode": SymbolMode.NO_SYMBOL_RESOLVE,
        "summaryOnly": False,
        "minDurationNs": 0,
        "ringBufferKb": 0,
        "cgroupPath": None,
        "includeNewFork": False,
        "fromExec": False,
        "summaryEntries": 0,
        "excludeSelf": False,
    }

    funcs = _list_prop("funcs", "funcs", "numFuncs", _str_array)
    pidList = _list_prop("pidList", "pidList", "numPid", _int_array)
    cpuList = _list_prop("cpuList", "cpuList", "numCpu", _int_array)
    callStack = _Scalar(_flag, bool)
    symbolMode = _Scalar(_cint)
    summaryOnly = _Scalar(_flag, bool, opts=True)
    minDurationNs = _Scalar(_u(64), opts=True)
    ringBufferKb = _Scalar(_u(32), opts=True)
    includeNewFork = _Scalar(_flag, bool, opts=True)
    fromExec = _Scalar(_flag, bool, opts=True)
    summaryEntries = _Scalar(_u(32), opts=True)
    excludeSelf = _Scalar(_flag, bool, opts=True)

    @property
    def cgroupPath(self) -> Optional[str]:
        b = self._keep.get("cgroupPath")
        return b.decode("utf-8", "replace") if b else None

    @cgroupPath.setter
    def cgroupPath(self, path):
        b = _to_bytes(path, "cgroupPath") if path else None
        self._keep["cgroupPath"] = b
        self._x.cgroupPath = b

    @property
    def c_attr(self) -> cs.PmuTraceAttr:
        """The C struct (ctypes) handed to PmuTraceOpen."""
        return self._c

    c_pmu_trace_attr = c_attr


class PmuDeviceAttr(_CAttr):
    """An uncore metric for kperf.device_open() (struct PmuDeviceAttr).

    metric: PmuDeviceMetric; bdf: the PCIe/SMMU device ("7a:01.0") for those metrics;
    port: the PCIe port for the latency metrics.
    """

    _c_type = cs.PmuDeviceAttr
    _defaults = {"metric": 0, "bdf": None, "port": None}

    metric = _Scalar(_cint)

    def __init__(self, metric: int = 0, bdf: Optional[str] = None, port: Optional[str] = None):
        super().__init__(metric=metric, bdf=bdf, port=port)

    def _str_field(name):
        def get(self):
            b = self._keep.get(name)
            return b.decode("utf-8", "replace") if b else None

        def set(self, v):
            b = _to_bytes(v, name) if v else None
            self._keep[name] = b
            setattr(self._c, name, b)

        return property(get, set)

    bdf = _str_field("bdf")
    port = _str_field("port")
    del _str_field

    @property
    def c_attr(self) -> cs.PmuDeviceAttr:
        return self._c

    c_pmu_device_attr = c_attr


# ---------------------------------------------------------------- results


# Results and handles collected by the garbage collector are not freed/closed from __del__
# (which can run in the middle of another kperf call, between the C call and the reading of
# its error state) but queued here, as (C function, argument), and released at the start of
# the next kperf call.
_pending_frees = collections.deque()


def _flush_frees():
    while _pending_frees:
        try:
            name, ptr = _pending_frees.popleft()
        except IndexError:
            return
        _lib.fn(name)(ptr)


def _call(name, *args):
    """Call the C function <name> and keep this thread's error state."""
    _flush_frees()
    f = _lib.fn(name)
    r = f(*args)
    _lib.snapshot()
    return r


class _Block:
    """An array of n C structs returned by the library, released exactly once (free(),
    garbage collection or never, for an empty or failed result)."""

    _free_name = None
    _what = "data"

    def __init__(self, ptr=None, n=0):
        self._lock = threading.Lock()
        self._n = n
        # records are read by indexing the pointer: casting it to an array type would make
        # ctypes cache one more type, forever, for every new length a read returns
        self._ptr = ptr if (ptr and n > 0) else None
        if self._ptr is None and ptr and n >= 0:
            # an array with no entries can still have been allocated: release it
            _pending_frees.append((self._free_name, ptr))
        self._freed = False

    @property
    def len(self) -> int:
        """The number of records; -1 when the call that produced this data failed."""
        return self._n

    def __len__(self):
        return max(self._n, 0)

    def __bool__(self):
        return self._n > 0

    def _make(self, i, rec):
        raise NotImplementedError

    def _item(self, i):
        with self._lock:
            if self._freed:
                raise DataFreedError(self._what)
            return self._make(i, self._ptr[i])

    def __getitem__(self, index):
        n = len(self)
        if isinstance(index, slice):
            return [self._item(i) for i in range(*index.indices(n))]
        index = operator.index(index)
        if not -n <= index < n:
            raise IndexError(f"{self._what} index {index} out of range (len {n})")
        return self._item(index % n)

    def __iter__(self):
        if self._freed:
            raise DataFreedError(self._what)
        return (self._item(i) for i in range(len(self)))

    @property
    def iter(self):
        """A new iterator over the records (each access starts again from the first)."""
        return iter(self)

    def free(self) -> None:
        """Release the C memory now; records already taken out stay valid. Idempotent."""
        with self._lock:
            ptr, self._ptr = self._ptr, None
            self._freed = True
        if ptr is not None:
            _flush_frees()
            _lib.fn(self._free_name)(ptr)

    @property
    def freed(self) -> bool:
        return self._freed

    def pointer(self):
        """The C array (ctypes pointer; None when empty). DataFreedError after free()."""
        if self._freed:
            raise DataFreedError(self._what)
        return self._ptr

    def __del__(self):
        try:
            ptr, self._ptr = self._ptr, None
            if ptr is not None:
                _pending_frees.append((self._free_name, ptr))
        except Exception:
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.free()

    def __repr__(self):
        state = "freed" if self._freed else f"len={self._n}"
        return f"<{type(self).__name__} {state}>"


@dataclass(frozen=True)
class CpuTopology:
    coreId: int
    numaId: int
    socketId: int


@dataclass(frozen=True)
class Symbol:
    """A resolved address (struct Symbol)."""

    addr: int
    module: str
    symbolName: str
    mangleName: str
    fileName: str
    lineNum: int
    offset: int
    codeMapEndAddr: int
    codeMapAddr: int
    firstLine: int
    mntPoint: str


class Stack:
    """A frame of a call stack, leaf first: `next` goes towards the caller, `prev` towards
    the callee (struct Stack)."""

    __slots__ = ("symbol", "next", "prev")

    def __init__(self, symbol):
        self.symbol = symbol
        self.next = None
        self.prev = None

    def __iter__(self):
        """The frames from this one to the outermost caller."""
        s = self
        while s is not None:
            yield s
            s = s.next

    def __repr__(self):
        name = self.symbol.symbolName if self.symbol else "?"
        return f"<Stack {name}>"


_MAX_FRAMES = 1 << 16  # a cycle in a corrupt chain must not hang the reader


def _copy_symbol(p, cache):
    if not p:
        return None
    addr = ctypes.addressof(p.contents)
    s = cache.get(addr)
    if s is None:
        c = p.contents
        s = Symbol(
            c.addr,
            _str(c.module),
            _str(c.symbolName),
            _str(c.mangleName),
            _str(c.fileName),
            c.lineNum,
            c.offset,
            c.codeMapEndAddr,
            c.codeMapAddr,
            c.firstLine,
            _str(c.mntPoint),
        )
        cache[addr] = s
    return s


def _copy_stack(head, cache):
    """Copy the C chain around <head> into Python Stack objects; returns the copy of head."""
    if not head:
        return None
    seen = set()

    def frame(p):
        seen.add(ctypes.addressof(p.contents))
        return Stack(_copy_symbol(p.contents.symbol, cache))

    first = frame(head)
    cur, p = first, head.contents.next
    while p and ctypes.addressof(p.contents) not in seen and len(seen) < _MAX_FRAMES:
        nxt = frame(p)
        cur.next, nxt.prev = nxt, cur
        cur, p = nxt, p.contents.next
    cur, p = first, head.contents.prev
    while p and ctypes.addressof(p.contents) not in seen and len(seen) < _MAX_FRAMES:
        prv = frame(p)
        cur.prev, prv.next = prv, cur
        cur, p = prv, p.contents.prev
    return first


@dataclass(frozen=True)
class BranchRecord:
    fromAddr: int
    toAddr: int
    cycles: int
    misPred: int
    predicted: int


class BranchRecords:
    """The branch records of a sample (`len`, `iter`)."""

    def __init__(self, records):
        self._records = records

    @property
    def len(self):
        return len(self._records)

    @property
    def iter(self):
        return iter(self._records)

    def __len__(self):
        return len(self._records)

    def __iter__(self):
        return iter(self._records)

    def __getitem__(self, i):
        return self._records[i]


@dataclass(frozen=True)
class PmuDataExt:
    """SPE fields (pa, va, event, lat) or branch records, depending on the task."""

    pa: Optional[int] = None
    va: Optional[int] = None
    event: Optional[int] = None
    lat: Optional[int] = None
    branchRecords: Optional[BranchRecords] = None


class SampleRawData:
    """The raw record of a tracepoint hit: pass it (or the record) to kperf.get_field."""

    __slots__ = ("_owner", "_index")

    def __init__(self, owner, index):
        self._owner, self._index = owner, index

    @property
    def data(self) -> int:
        """The address of the raw record (valid until the PmuData is freed)."""
        with self._owner._lock:
            raw = self._owner._raw_ptr(self._index)
            return raw.contents.data or 0


class ImplPmuData:
    """One record of kperf.read(). Scalars and strings are copies; stack, ext and rawData
    are read from the PmuData when first used (DataFreedError if it was freed)."""

    __slots__ = (
        "_owner",
        "_index",
        "_stack",
        "evt",
        "ts",
        "pid",
        "tid",
        "cpu",
        "groupId",
        "cpuTopo",
        "comm",
        "period",
        "count",
        "countPercent",
        "cgroupName",
    )

    def __init__(self, owner, index, c, strs):
        self._owner, self._index, self._stack = owner, index, False
        self.evt = strs(c.evt)
        self.ts = c.ts
        self.pid = c.pid
        self.tid = c.tid
        self.cpu = c.cpu
        self.groupId = c.groupId
        self.comm = strs(c.comm)
        self.period = c.period
        self.count = c.count
        self.countPercent = c.countPercent
        self.cgroupName = strs(c.cgroupName)
        topo = c.cpuTopo
        self.cpuTopo = (
            CpuTopology(topo.contents.coreId, topo.contents.numaId, topo.contents.socketId)
            if topo
            else None
        )

    @property
    def stack(self) -> Optional[Stack]:
        """The call stack, leaf first (None under NO_SYMBOL_RESOLVE)."""
        if self._stack is False:
            with self._owner._lock:
                rec = self._owner._rec(self._index)
                self._stack = _copy_stack(rec.stack, self._owner._symcache)
        return self._stack

    @property
    def ext(self) -> Optional[PmuDataExt]:
        """SPE data (pa, va, event, lat), or branchRecords for a SAMPLING task opened with
        branchSampleFilter; None when the record has none."""
        with self._owner._lock:
            rec = self._owner._rec(self._index)
            if not rec.ext:
                return None
            e = rec.ext.contents
            if self._owner._branch:
                n = min(e.nr, 1 << 20)
                recs = []
                if e.branchRecords:
                    recs = [
                        BranchRecord(r.fromAddr, r.toAddr, r.cycles, r.misPred, r.predicted)
                        for r in e.branchRecords[:n]
                    ]
                return PmuDataExt(branchRecords=BranchRecords(recs))
            return PmuDataExt(pa=e.pa, va=e.va, event=e.event, lat=e.lat)

    @property
    def rawData(self) -> Optional[SampleRawData]:
        """The tracepoint record (for kperf.get_field), None for other events."""
        with self._owner._lock:
            rec = self._owner._rec(self._index)
            return SampleRawData(self._owner, self._index) if rec.rawData else None

    def __repr__(self):
        return (
            f"<ImplPmuData evt={self.evt!r} pid={self.pid} tid={self.tid} cpu={self.cpu} "
            f"count={self.count} period={self.period} ts={self.ts}>"
        )


def _string_cache():
    cache = {}

    def get(b):
        if not b:
            return ""
        s = cache.get(b)
        if s is None:
            s = cache[b] = b.decode("utf-8", "replace")
        return s

    return get


class PmuData(_Block):
    """What kperf.read() returns: `len`, `iter`, `free()` (and len(), indexing, for)."""

    _free_name = "PmuDataFree"
    _what = "PmuData"

    def __init__(self, ptr=None, n=0, branch=False):
        super().__init__(ptr, n)
        self._branch = branch
        self._symcache = {}
        self._strs = _string_cache()

    def _make(self, i, rec):
        return ImplPmuData(self, i, rec, self._strs)

    def _rec(self, i):
        # with self._lock held
        if self._freed:
            raise DataFreedError(self._what)
        return self._ptr[i]

    def _raw_ptr(self, i):
        rec = self._rec(i)
        if not rec.rawData:
            raise ValueError("this record has no raw tracepoint data")
        return rec.rawData


class ImplPmuTraceData:
    """One syscall of kperf.trace_read() (a copy: valid after free())."""

    __slots__ = ("funcs", "startTs", "elapsedTime", "pid", "tid", "cpu", "comm", "ret", "nr")

    def __init__(self, c, strs, ext):
        self.funcs = strs(c.funcs)
        self.startTs = c.startTs
        self.elapsedTime = c.elapsedTime
        self.pid = c.pid
        self.tid = c.tid
        self.cpu = c.cpu
        self.comm = strs(c.comm)
        self.ret = ext.ret if ext else 0
        self.nr = ext.nr if ext else -1

    def __repr__(self):
        return (
            f"<ImplPmuTraceData {self.funcs} pid={self.pid} tid={self.tid} cpu={self.cpu} "
            f"comm={self.comm!r} ret={self.ret} elapsedTime={self.elapsedTime:.6f}ms>"
        )


class PmuTraceData(_Block):
    """What kperf.trace_read() returns: `len`, `iter`, `free()` (and len(), indexing, for)."""

    _free_name = "PmuTraceDataFree"
    _what = "PmuTraceData"

    def __init__(self, ptr=None, n=0):
        super().__init__(ptr, n)
        self._strs = _string_cache()
        # the extensions (ret, nr) are one array beside the records: found once, indexed
        self._ext = _lib.fn("KperfTraceGetExt")(self._ptr, 0) if self._ptr else None

    def _make(self, i, rec):
        return ImplPmuTraceData(rec, self._strs, self._ext[i] if self._ext else None)


class ImplPmuDeviceData:
    """One value of kperf.get_device_metric(); the id fields that apply to its mode are
    set (coreId, numaId, clusterId, bdf/port, or channelId/ddrNumaId/socketId)."""

    __slots__ = (
        "metric",
        "count",
        "mode",
        "coreId",
        "numaId",
        "clusterId",
        "bdf",
        "port",
        "channelId",
        "ddrNumaId",
        "socketId",
    )

    def __init__(self, c):
        self.metric = c.metric
        self.count = c.count
        self.mode = c.mode
        m = PmuMetricMode
        self.coreId = c.coreId if c.mode == m.PMU_METRIC_CORE else 0
        self.numaId = c.numaId if c.mode == m.PMU_METRIC_NUMA else 0
        self.clusterId = c.clusterId if c.mode == m.PMU_METRIC_CLUSTER else 0
        # bdf and port share the union: one string, named by the metric
        self.bdf = _str(c.bdf) if c.mode == m.PMU_METRIC_BDF else ""
        self.port = self.bdf
        ch = c.mode == m.PMU_METRIC_CHANNEL
        self.channelId = c.channelId if ch else 0
        self.ddrNumaId = c.ddrNumaId if ch else 0
        self.socketId = c.socketId if ch else 0

    def __repr__(self):
        return f"<ImplPmuDeviceData metric={self.metric} mode={self.mode} count={self.count}>"


class PmuDeviceData(_Block):
    """What kperf.get_device_metric() returns: `len`, `iter`, `free()`."""

    _free_name = "DevDataFree"
    _what = "PmuDeviceData"

    def _make(self, i, rec):
        return ImplPmuDeviceData(rec)


@dataclass(frozen=True)
class SampleRawField:
    """A tracepoint field's description (kperf.get_field_exp)."""

    field_name: str
    field_str: str
    offset: int
    size: int
    is_signed: bool

    # the names of the C struct, as the libkperf documentation lists them
    @property
    def fieldName(self):
        return self.field_name

    @property
    def fieldStr(self):
        return self.field_str

    @property
    def isSigned(self):
        return self.is_signed


@dataclass(frozen=True)
class TraceSummary:
    """One (process, syscall) pair of the in-kernel summary, cumulative since trace_open.

    hist[i] counts the calls whose latency in ns had its highest set bit at i, i.e. in
    [2**i, 2**(i+1)) (0 ns in hist[0]); the last slot also holds everything longer.
    """

    funcs: str
    nr: int
    pid: int
    comm: str
    calls: int
    errors: int
    totalNs: int
    minNs: int
    maxNs: int
    hist: List[int] = field(repr=False)

    @property
    def avgNs(self) -> float:
        return self.totalNs / self.calls if self.calls else 0.0


@dataclass(frozen=True)
class TraceStats:
    """Counters of a trace task (PmuTraceGetStats)."""

    records: int  # per-call records delivered by trace_read so far
    dropped: int  # per-call records lost (ring buffer full)
    summaryDropped: int  # calls not counted (summary map full)
    fallback: bool  # the raw_syscalls / hash-map fallback is in use
    ringBufferKb: int  # ring buffer size in use (0: summaryOnly)


# ---------------------------------------------------------------- the API


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
    if v is not None and _INT_MIN <= v <= _INT_MAX:
        return v
    _lib.set_state(
        Error.LIBPERF_ERR_INVALID_PD, f"{pd!r} is not an open task handle (an int > 0 from open)"
    )
    return None


def _copy_strings(ptr, n):
    return [_str(ptr[i]) for i in range(n)] if ptr and n > 0 else []


def open(collector_type: PmuTaskType, pmu_attr: PmuAttr) -> int:
    """Open a counting or sampling task (PmuOpen).

    Returns the task handle (> 0), or -1: kperf.error() / kperf.errorno() say why.
    """
    if not isinstance(pmu_attr, PmuAttr):
        raise TypeError(f"pmu_attr must be a kperf.PmuAttr, not {type(pmu_attr).__name__}")
    problem = pmu_attr._problem()
    if problem:
        _lib.set_state(*problem)
        return -1
    pd = _call(
        "KperfOpen",
        _cint(collector_type, "collector_type"),
        ctypes.byref(pmu_attr._c),
        ctypes.byref(pmu_attr._x),
    )
    if pd > 0:
        with _pd_lock:
            _pd_branch[pd] = bool(pmu_attr.branchSampleFilter) and int(collector_type) == 1
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
    ms = _cint(milliseconds, "milliseconds")
    return _call("PmuCollect", pd, ms, _u(32)(interval, "interval"))


def stop(pd: int) -> None:
    """Stop a collect() running in another thread (PmuStop)."""
    pd = _pd(pd)
    if pd is not None:
        _call("PmuStop", pd)


def read(pd: int) -> PmuData:
    """The data of task <pd> since the last enable/read (PmuRead).

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
    if not isinstance(pmuData, PmuData):
        raise TypeError(f"pmuData must be a kperf.PmuData, not {type(pmuData).__name__}")
    path = _to_bytes(filepath, "filepath")
    with pmuData._lock:
        if pmuData._freed:
            raise DataFreedError(pmuData._what)
        return _call("PmuDumpData", pmuData._ptr, len(pmuData), path, 1 if dump_dwf else 0)


def _value_target(value, size):
    """(address, size) of the buffer get_field writes into."""
    if size is not None:
        size = _u(32)(size, "size")
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
    if isinstance(pmu_data, (ImplPmuData, SampleRawData)):
        return pmu_data._owner, pmu_data._index
    raise TypeError(
        f"pmu_data must be a record of kperf.read() (ImplPmuData), not {type(pmu_data).__name__}"
    )


def get_field(pmu_data: ImplPmuData, field_name: str, value, size: Optional[int] = None) -> int:
    """Copy the tracepoint field <field_name> of a sampled record into <value> (PmuGetField).

    value: create_string_buffer(N) for strings, a ctypes value (c_uint()) or
    pointer(c_uint()) for numbers; a raw address needs size=. Returns 0, or the error
    code, as libkperf (kperf.error(): unknown field, buffer too small, not a tracepoint
    record).
    """
    owner, index = _raw_source(pmu_data)
    name = _to_bytes(field_name, "field_name")
    addr, nbytes = _value_target(value, size)
    with owner._lock:
        rec = owner._rec(index)
        return _call("PmuGetField", rec.rawData, name, addr, nbytes)


def get_field_exp(pmu_data: ImplPmuData, field_name: str) -> Optional[SampleRawField]:
    """The description of tracepoint field <field_name> (PmuGetFieldExp): a SampleRawField
    (field_name, field_str, offset, size, is_signed), or None (kperf.error())."""
    owner, index = _raw_source(pmu_data)
    name = _to_bytes(field_name, "field_name")
    with owner._lock:
        rec = owner._rec(index)
        p = _call("PmuGetFieldExp", rec.rawData, name)
        if not p:
            return None
        f = p.contents
        return SampleRawField(
            _str(f.fieldName), _str(f.fieldStr), f.offset, f.size, bool(f.isSigned)
        )


def _list_call(name, *args):
    n = ctypes.c_uint(0)
    p = _call(name, *args, ctypes.byref(n))
    names = _copy_strings(p, n.value)
    _lib.free_returned(p)
    return names


def event_list(event_type: PmuEventType) -> List[str]:
    """The names of the events of a family (PmuEventList); [] on failure (kperf.error())."""
    return _list_call("PmuEventList", _cint(event_type, "event_type"))


def sys_call_func_list() -> List[str]:
    """The syscalls the running kernel implements, by name (PmuSysCallFuncList)."""
    return _list_call("PmuSysCallFuncList")


def device_bdf_list(bdf_type: PmuBdfType) -> List[str]:
    """The PCIe or SMMU devices (bdf strings) that have metrics (PmuDeviceBdfList)."""
    return _list_call("PmuDeviceBdfList", _cint(bdf_type, "bdf_type"))


def _device_attrs(device_attr):
    if isinstance(device_attr, PmuDeviceAttr):
        device_attr = [device_attr]
    attrs = _as_list(device_attr, "dev_attr")
    for a in attrs:
        if not isinstance(a, PmuDeviceAttr):
            raise TypeError(f"dev_attr entries must be kperf.PmuDeviceAttr, not {type(a).__name__}")
    arr = (cs.PmuDeviceAttr * len(attrs))(*[a._c for a in attrs]) if attrs else None
    return arr, len(attrs), attrs


def device_open(dev_attr: Sequence[PmuDeviceAttr]) -> int:
    """Open uncore metrics (PmuDeviceOpen): a handle for enable/read/close, or -1."""
    arr, n, keep = _device_attrs(dev_attr)
    return _call("PmuDeviceOpen", arr, n)


def get_device_metric(
    pmu_data: PmuData, device_attr: Sequence[PmuDeviceAttr]
) -> PmuDeviceData:
    """Aggregate the data of a device_open() task into metrics (PmuGetDevMetric).

    On failure the result has len == -1 and kperf.error() says why.
    """
    if not isinstance(pmu_data, PmuData):
        raise TypeError(f"pmu_data must be a kperf.PmuData, not {type(pmu_data).__name__}")
    arr, n, keep = _device_attrs(device_attr)
    out = ctypes.POINTER(cs.PmuDeviceData)()
    with pmu_data._lock:
        if pmu_data._freed:
            raise DataFreedError(pmu_data._what)
        r = _call("PmuGetDevMetric", pmu_data._ptr, len(pmu_data), arr, n, ctypes.byref(out))
    return PmuDeviceData(out, r) if r >= 0 else PmuDeviceData(None, -1)


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


def trace_open(trace_type: PmuTraceType, pmu_trace_attr: Optional[PmuTraceAttr] = None) -> int:
    """Open a syscall trace (PmuTraceOpen): the handle (> 0), or -1 (kperf.error())."""
    if pmu_trace_attr is None:
        pmu_trace_attr = PmuTraceAttr()
    if not isinstance(pmu_trace_attr, PmuTraceAttr):
        raise TypeError(
            f"pmu_trace_attr must be a kperf.PmuTraceAttr, not {type(pmu_trace_attr).__name__}"
        )
    return _call(
        "KperfTraceOpen",
        _cint(trace_type, "trace_type"),
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
    return _call("PmuSysCallNumber", _to_bytes(name, "name"))


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
                _str(s.funcs),
                s.nr,
                s.pid,
                _str(s.comm),
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


def trace_stats(pd: int) -> TraceStats:
    """Record and drop counters of trace <pd> (PmuTraceGetStats). Raises KperfError."""
    pd = _pd(pd)
    if pd is None:
        _raise_last()
    st = cs.PmuTraceStats()
    if _call("PmuTraceGetStats", pd, ctypes.byref(st)) != 0:
        _raise_last()
    return TraceStats(
        st.records, st.dropped, st.summaryDropped, bool(st.fallback), st.ringBufferKb
    )


# ---------------------------------------------------------------- handles as objects


class _Handle:
    _close_fn = None
    _close_name = None

    def __init__(self, pd):
        self.pd = pd

    @property
    def closed(self) -> bool:
        return self.pd is None

    def _need(self):
        if self.pd is None:
            raise KperfError(Error.LIBPERF_ERR_INVALID_PD, f"this {type(self).__name__} is closed")
        return self.pd

    def close(self) -> None:
        """Close the handle (idempotent)."""
        pd, self.pd = self.pd, None
        if pd is not None:
            type(self)._close_fn(pd)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            pd, self.pd = self.pd, None
            if pd is not None:
                _pending_frees.append((self._close_name, pd))
        except Exception:
            pass

    def __int__(self):
        return self._need()

    def __index__(self):
        return self._need()

    def __repr__(self):
        return f"<kperf.{type(self).__name__} pd={self.pd}>"


def _checked(r):
    if r != 0:
        _raise_last()


class Trace(_Handle):
    """A syscall trace as an object; raises KperfError on failure.

        with kperf.Trace(funcs=["read"], pidList=[pid]) as t:
            t.enable(); ...; t.disable()
            for rec in t.read(): ...
            for s in t.summary(): ...

    Takes a PmuTraceAttr, or its fields as keyword arguments. `pd` is the plain handle.
    """

    _close_fn = staticmethod(trace_close)
    _close_name = "PmuTraceClose"

    def __init__(self, attr: Optional[PmuTraceAttr] = None, **kwargs):
        if attr is not None and kwargs:
            raise TypeError("give a PmuTraceAttr or keyword arguments, not both")
        super().__init__(None)
        pd = trace_open(PmuTraceType.TRACE_SYS_CALL, attr or PmuTraceAttr(**kwargs))
        if pd < 0:
            _raise_last()
        self.pd = pd

    def enable(self) -> None:
        _checked(trace_enable(self._need()))

    def disable(self) -> None:
        _checked(trace_disable(self._need()))

    def read(self) -> PmuTraceData:
        d = trace_read(self._need())
        if d.len < 0:
            _raise_last()
        return d

    def summary(self) -> List[TraceSummary]:
        return trace_read_summary(self._need())

    def stats(self) -> TraceStats:
        return trace_stats(self._need())


class Pmu(_Handle):
    """A counting/sampling task as an object; raises KperfError on failure.

        with kperf.Pmu(kperf.PmuTaskType.COUNTING, evtList=["task-clock"]) as p:
            p.enable(); time.sleep(1); p.disable()
            for rec in p.read(): ...
    """

    _close_fn = staticmethod(close)
    _close_name = "PmuClose"

    def __init__(self, task_type: PmuTaskType, attr: Optional[PmuAttr] = None, **kwargs):
        if attr is not None and kwargs:
            raise TypeError("give a PmuAttr or keyword arguments, not both")
        super().__init__(None)
        pd = open(task_type, attr or PmuAttr(**kwargs))
        if pd < 0:
            _raise_last()
        self.pd = pd

    def enable(self) -> None:
        _checked(enable(self._need()))

    def disable(self) -> None:
        _checked(disable(self._need()))

    def collect(self, milliseconds: int, interval: int = 0) -> None:
        _checked(collect(self._need(), milliseconds, interval))

    def stop(self) -> None:
        stop(self._need())

    def read(self) -> PmuData:
        d = read(self._need())
        if d.len < 0:
            _raise_last()
        return d


__all__ = [
    "PmuTaskType",
    "PmuEventType",
    "PmuTraceType",
    "SymbolMode",
    "SpeFilter",
    "SpeEventFilter",
    "SpeEvent",
    "HipDataSource",
    "SpeLdStOpType",
    "PmuHwMetric",
    "BranchSampleFilter",
    "PmuDeviceMetric",
    "PmuBdfType",
    "PmuMetricMode",
    "EvtAttr",
    "PmuAttr",
    "PmuTraceAttr",
    "PmuDeviceAttr",
    "PmuData",
    "ImplPmuData",
    "PmuDataExt",
    "BranchRecord",
    "BranchRecords",
    "SampleRawData",
    "SampleRawField",
    "CpuTopology",
    "Symbol",
    "Stack",
    "PmuTraceData",
    "ImplPmuTraceData",
    "PmuDeviceData",
    "ImplPmuDeviceData",
    "TraceSummary",
    "TraceStats",
    "Pmu",
    "Trace",
    "open",
    "enable",
    "disable",
    "collect",
    "stop",
    "read",
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
    "trace_stats",
    "sys_call_func_list",
    "syscall_number",
    "device_open",
    "get_device_metric",
    "device_bdf_list",
    "get_cpu_freq",
    "get_cluster_core",
    "get_numa_core",
]
