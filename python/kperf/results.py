"""What kperf.read(), trace_read() and get_device_metric() return, with libkperf's class and
attribute names.

An array the library returned is wrapped in a _Block (PmuData, PmuTraceData, PmuDeviceData):
`len`, `iter`, `free()`, plus indexing and iterating again. Records are made when reached:
the fixed fields of a record are read in one struct.unpack_from from a memoryview of the C
array (no ctypes attribute per field), its strings decoded once per distinct C string of the
array. Scalars and strings are copies and stay valid after free(); the stack, ext and
rawData of a PmuData record are read from the array when first used (DataFreedError once it
is freed). The C array itself is released exactly once: by free(), or, when the object is
garbage-collected, at the start of the next kperf call (see _pending_frees).
"""

import collections
import ctypes
import operator
import threading
from dataclasses import dataclass, field
from typing import List, Optional

from . import _cstructs as cs
from . import _lib
from ._convert import string_cache, text, to_bytes, unpacker
from .enums import PmuMetricMode
from .perror import DataFreedError
from .symbols import Stack, copy_stack

# Arrays and handles collected by the garbage collector are not freed/closed from __del__
# (which can run in the middle of another kperf call, between the C call and the reading of
# its error state) but queued here, as (C function, argument), and released at the start of
# the next kperf call.
_pending_frees = collections.deque()


def flush_frees():
    while _pending_frees:
        try:
            name, ptr = _pending_frees.popleft()
        except IndexError:
            return
        _lib.fn(name)(ptr)


_memory_view = ctypes.pythonapi.PyMemoryView_FromMemory
_memory_view.restype = ctypes.py_object
_memory_view.argtypes = [ctypes.c_void_p, ctypes.c_ssize_t, ctypes.c_int]
_PyBUF_READ = 0x100
_new = object.__new__
_UNSET = object()


def c_memory(addr, size):
    """A read-only memoryview of <size> bytes of C memory at <addr> (no copy; the caller
    keeps the memory alive as long as the view is used)."""
    return _memory_view(addr, size, _PyBUF_READ)


class _Block:
    """An array of n C structs returned by the library, released exactly once (free(),
    garbage collection or never, for an empty or failed result)."""

    _free_name = None
    _what = "data"
    _c_type = None

    def __init__(self, pointer=None, len=0):
        self._lock = threading.Lock()
        self._n = len
        # records are read by indexing the pointer or a memoryview: casting it to an array
        # type would make ctypes cache one more type, forever, for every new length
        self._ptr = pointer if (pointer and len > 0) else None
        if self._ptr is None and pointer and len >= 0:
            # an array with no entries can still have been allocated: release it
            _pending_frees.append((self._free_name, pointer))
        self._freed = False
        self._addr = ctypes.cast(self._ptr, ctypes.c_void_p).value if self._ptr else 0
        self._mv = c_memory(self._addr, len * ctypes.sizeof(self._c_type)) if self._addr else None

    @property
    def len(self) -> int:
        """The number of records; -1 when the call that produced this data failed."""
        return self._n

    def __len__(self):
        return max(self._n, 0)

    def __bool__(self):
        return self._n > 0

    def _make(self, i):
        raise NotImplementedError

    def _item(self, i):
        with self._lock:
            if self._freed:
                raise DataFreedError(self._what)
            return self._make(i)

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
        return self._records()

    def _records(self):
        lock, make = self._lock, self._make
        for i in range(len(self)):
            with lock:
                if self._freed:
                    raise DataFreedError(self._what)
                r = make(i)
            yield r

    @property
    def iter(self):
        """A new iterator over the records (each access starts again from the first)."""
        return iter(self)

    def free(self) -> None:
        """Release the C memory now; records already taken out stay valid. Idempotent."""
        with self._lock:
            ptr, self._ptr = self._ptr, None
            self._freed = True
            mv, self._mv = self._mv, None
        if mv is not None:
            mv.release()
        if ptr is not None:
            flush_frees()
            _lib.fn(self._free_name)(ptr)

    @property
    def freed(self) -> bool:
        return self._freed

    def pointer(self):
        """The C array (ctypes pointer; None when empty). DataFreedError after free()."""
        if self._freed:
            raise DataFreedError(self._what)
        return self._ptr

    def _rec_addr(self, i):
        # with self._lock held
        if self._freed:
            raise DataFreedError(self._what)
        return self._addr + i * ctypes.sizeof(self._c_type)

    def _c_view(self, i):
        """The C struct of record i (a ctypes view that keeps this array referenced)."""
        with self._lock:
            view = self._c_type.from_address(self._rec_addr(i))
        view._owner = self
        return view

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


class CpuTopology:
    """The core, NUMA node and socket of a CPU (struct CpuTopology)."""

    __slots__ = ("coreId", "numaId", "socketId")

    def __init__(self, coreId=0, numaId=0, socketId=0):
        self.coreId, self.numaId, self.socketId = coreId, numaId, socketId

    def __eq__(self, other):
        if not isinstance(other, CpuTopology):
            return NotImplemented
        return (self.coreId, self.numaId, self.socketId) == (
            other.coreId,
            other.numaId,
            other.socketId,
        )

    def __hash__(self):
        return hash((self.coreId, self.numaId, self.socketId))

    def __repr__(self):
        return f"CpuTopology({self.coreId}, {self.numaId}, {self.socketId})"

    @property
    def c_cpu_topo(self):
        return cs.CpuTopology(self.coreId, self.numaId, self.socketId)

    @classmethod
    def from_c_cpu_topo(cls, c_cpu_topo):
        c = c_cpu_topo.contents if isinstance(c_cpu_topo, ctypes._Pointer) else c_cpu_topo
        return cls(c.coreId, c.numaId, c.socketId)


@dataclass(frozen=True)
class BranchRecord:
    """One branch of a sample's branch stack (struct BranchSampleRecord)."""

    fromAddr: int = 0
    toAddr: int = 0
    cycles: int = 0
    misPred: int = 0
    predicted: int = 0

    @property
    def c_branch_record(self):
        return cs.BranchSampleRecord(
            self.fromAddr, self.toAddr, self.cycles, self.misPred, self.predicted
        )

    @classmethod
    def from_c_branch_record(cls, c):
        return cls(c.fromAddr, c.toAddr, c.cycles, c.misPred, c.predicted)


_MAX_BRANCHES = 1 << 20


class BranchRecords:
    """The branch records of a sample (`len`, `iter`), copied from the C array."""

    def __init__(self, pointer=None, nr=0):
        n = min(int(nr), _MAX_BRANCHES) if pointer else 0
        self._records = [BranchRecord.from_c_branch_record(pointer[i]) for i in range(n)]

    @classmethod
    def _of(cls, records):
        b = cls.__new__(cls)
        b._records = list(records)
        return b

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


class PmuDataExt:
    """SPE fields (pa, va, event, lat, source) or, for a SAMPLING task opened with
    branchSampleFilter, branchRecords; the fields that do not apply are None."""

    __slots__ = ("pa", "va", "event", "lat", "source", "branchRecords")

    def __init__(
        self, *, pa=None, va=None, event=None, lat=None, source=None, branchRecords=None
    ):
        self.pa, self.va, self.event, self.lat = pa, va, event, lat
        self.source, self.branchRecords = source, branchRecords

    def _values(self):
        return (self.pa, self.va, self.event, self.lat, self.source, self.branchRecords)

    def __eq__(self, other):
        if not isinstance(other, PmuDataExt):
            return NotImplemented
        return self._values() == other._values()

    __hash__ = None

    def __repr__(self):
        if self.branchRecords is not None:
            return f"PmuDataExt(branchRecords=<{len(self.branchRecords)} records>)"
        return (
            f"PmuDataExt(pa={self.pa}, va={self.va}, event={self.event}, lat={self.lat}, "
            f"source={self.source})"
        )

    @property
    def c_pmu_data_ext(self):
        c = cs.PmuDataExt()
        if self.branchRecords is None:
            c.pa, c.va, c.event = self.pa or 0, self.va or 0, self.event or 0
            c.lat, c.source = self.lat or 0, self.source or 0
        return c

    @classmethod
    def from_pmu_data_ext(cls, c_pmu_data_ext, branch=False):
        e = c_pmu_data_ext
        if isinstance(e, ctypes._Pointer):
            e = e.contents
        if branch:
            return cls(branchRecords=BranchRecords(e.branchRecords, e.nr))
        return cls(pa=e.pa, va=e.va, event=e.event, lat=e.lat, source=e.source)


class SampleRawData:
    """The raw record of a tracepoint hit: pass it (or the record) to kperf.get_field."""

    __slots__ = ("_owner", "_index", "_data")

    def __init__(self, data=""):
        self._owner, self._index, self._data = None, -1, data

    @classmethod
    def _of(cls, owner, index):
        r = _new(cls)
        r._owner, r._index, r._data = owner, index, None
        return r

    @property
    def data(self) -> int:
        """The address of the raw record (valid until the PmuData is freed)."""
        if self._owner is None:
            return self._data
        with self._owner._lock:
            return self._owner._raw_ptr(self._index).contents.data or 0

    @property
    def c_pmu_data_rawData(self):
        """The C struct SampleRawData * of the record (ctypes pointer), for PmuGetField."""
        if self._owner is None:
            raise ValueError("this SampleRawData was not read from a PmuData")
        with self._owner._lock:
            return self._owner._raw_ptr(self._index)

    @classmethod
    def from_sample_raw_data(cls, c_sample_raw_data):
        return cls(c_sample_raw_data)


_DATA = unpacker(
    cs.PmuData,
    (
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
        "ext",
        "rawData",
        "cgroupName",
    ),
)
_DATA_SIZE = ctypes.sizeof(cs.PmuData)
_read_ptr = ctypes.c_void_p.from_address


class ImplPmuData:
    """One record of kperf.read() (struct PmuData). Scalars and strings are copies (and can
    be assigned, as libkperf's); stack, ext and rawData are read from the PmuData when first
    used (DataFreedError if it was freed)."""

    __slots__ = (
        "_owner",
        "_index",
        "_stack",
        "_gen",
        "_ext",
        "_raw",
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
    ):
        self._owner, self._index, self._gen = None, -1, 0
        self._stack, self._ext, self._raw = stack, ext, rawData
        self.evt, self.ts, self.pid, self.tid, self.cpu = evt, ts, pid, tid, cpu
        self.groupId, self.cpuTopo, self.comm = groupId, cpuTopo, comm
        self.period, self.count, self.countPercent = period, count, countPercent
        self.cgroupName = cgroupName

    @property
    def stack(self) -> Optional[Stack]:
        """The call stack, leaf first (None under NO_SYMBOL_RESOLVE, and under the delayed
        modes until resolvePmuDataSymbol)."""
        # records of an array leave _stack/_gen/_ext unset until first used (fewer stores
        # per record); re-read after resolvePmuDataSymbol changed the array (_gen), unless
        # assigned (_gen None)
        try:
            st, gen = self._stack, self._gen
        except AttributeError:
            st, gen = _UNSET, 0
        o = self._owner
        if o is not None and (st is _UNSET or (gen is not None and gen != o._gen)):
            with o._lock:
                head = _read_ptr(o._rec_addr(self._index)).value  # PmuData.stack, offset 0
                st = self._stack = copy_stack(head, o._symcache, o._stackcache, o)
                self._gen = o._gen
        return st

    @stack.setter
    def stack(self, stack):
        self._stack, self._gen = stack, None

    @property
    def ext(self):
        """SPE data (pa, va, event, lat, source), or branchRecords for a SAMPLING task opened
        with branchSampleFilter; None when the record has none."""
        try:
            return self._ext
        except AttributeError:
            pass
        o = self._owner
        with o._lock:
            rec = o._rec(self._index)
            if not rec.ext:
                return None
            return PmuDataExt.from_pmu_data_ext(rec.ext.contents, o._branch)

    @ext.setter
    def ext(self, ext):
        self._ext = ext

    @property
    def rawData(self) -> Optional[SampleRawData]:
        """The tracepoint record (for kperf.get_field), None for other events."""
        o = self._owner
        if o is None:
            return self._raw
        if not self._raw:
            return None
        with o._lock:
            o._rec_addr(self._index)  # raises once freed
        return SampleRawData._of(o, self._index)

    @property
    def c_pmu_data(self):
        """The C struct PmuData of this record: the library's while the array is alive."""
        if self._owner is not None:
            return self._owner._c_view(self._index)
        c = cs.PmuData()
        c.evt, c.comm = to_bytes(self.evt, "evt"), to_bytes(self.comm, "comm")
        c.cgroupName = to_bytes(self.cgroupName, "cgroupName")
        c.ts, c.pid, c.tid, c.cpu, c.groupId = self.ts, self.pid, self.tid, self.cpu, self.groupId
        c.period, c.count, c.countPercent = self.period, self.count, self.countPercent
        c._keep = []
        for name, value, attr in (
            ("stack", self._stack, "c_stack"),
            ("cpuTopo", self.cpuTopo, "c_cpu_topo"),
        ):
            if value:
                cv = getattr(value, attr)
                c._keep.append(cv)
                setattr(c, name, ctypes.pointer(cv))
        return c

    @classmethod
    def from_c_pmu_data(cls, c_pmu_data):
        """A standalone copy of a C struct PmuData (ctypes struct or pointer)."""
        c = c_pmu_data.contents if isinstance(c_pmu_data, ctypes._Pointer) else c_pmu_data
        topo = CpuTopology.from_c_cpu_topo(c.cpuTopo) if c.cpuTopo else None
        return cls(
            Stack.from_c_stack(c.stack) if c.stack else None,
            text(c.evt),
            c.ts,
            c.pid,
            c.tid,
            c.cpu,
            c.groupId,
            topo,
            text(c.comm),
            c.period,
            c.count,
            c.countPercent,
            PmuDataExt.from_pmu_data_ext(c.ext) if c.ext else None,
            None,
            text(c.cgroupName),
        )

    def __repr__(self):
        return (
            f"<ImplPmuData evt={self.evt!r} pid={self.pid} tid={self.tid} cpu={self.cpu} "
            f"count={self.count} period={self.period} ts={self.ts}>"
        )


class PmuData(_Block):
    """What kperf.read() returns: `len`, `iter`, `free()` (and len(), indexing, for)."""

    _free_name = "PmuDataFree"
    _what = "PmuData"
    _c_type = cs.PmuData

    def __init__(self, pointer=None, len=0, *, branch=False):
        super().__init__(pointer, len)
        self._branch = branch
        self._symcache = {}
        self._stackcache = {}
        self._topocache = {}
        self._gen = 0
        self._strs = string_cache()

    def _make(self, i, _unpack=_DATA.unpack_from, _new=_new, _cls=ImplPmuData):
        (evt, ts, pid, tid, cpu, gid, topo, comm, period, count, pct, ext, raw, cg) = _unpack(
            self._mv, i * _DATA_SIZE
        )
        strs = self._strs
        r = _new(_cls)
        r._owner, r._index, r._raw = self, i, raw
        r.evt, r.ts, r.pid, r.tid, r.cpu, r.groupId = strs(evt), ts, pid, tid, cpu, gid
        r.comm, r.period, r.count, r.countPercent = strs(comm), period, count, pct
        r.cgroupName = strs(cg) if cg else ""
        # a CPU's topology is the same in every record: one copy per CPU
        r.cpuTopo = (self._topocache.get(cpu) or self._topo(cpu, topo)) if topo else None
        return r

    def _topo(self, cpu, addr):
        t = self._topocache[cpu] = CpuTopology.from_c_cpu_topo(cs.CpuTopology.from_address(addr))
        return t

    def _rec(self, i):
        # with self._lock held
        return cs.PmuData.from_address(self._rec_addr(i))

    def _raw_ptr(self, i):
        rec = self._rec(i)
        if not rec.rawData:
            raise ValueError("this record has no raw tracepoint data")
        return rec.rawData

    def _resolved(self):
        """The records' stacks changed in place (ResolvePmuDataSymbol): read them again."""
        with self._lock:
            self._gen += 1
            self._symcache.clear()
            self._stackcache.clear()


_TRACE = unpacker(
    cs.PmuTraceData, ("funcs", "startTs", "elapsedTime", "pid", "tid", "cpu", "comm", "stack")
)
_TRACE_SIZE = ctypes.sizeof(cs.PmuTraceData)
_TRACE_EXT = unpacker(cs.KperfTraceDataExt, ("ret", "nr"))
_TRACE_EXT_SIZE = ctypes.sizeof(cs.KperfTraceDataExt)


class ImplPmuTraceData:
    """One syscall of kperf.trace_read() (struct PmuTraceData; a copy, valid after free()),
    with kperf-bpf's ret (return value) and nr (syscall number)."""

    __slots__ = (
        "_owner",
        "_stack",
        "_stackp",
        "funcs",
        "startTs",
        "elapsedTime",
        "pid",
        "tid",
        "cpu",
        "comm",
        "ret",
        "nr",
        "_index",
    )

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
        self.funcs, self.startTs, self.elapsedTime = funcs, startTs, elapsedTime
        self.pid, self.tid, self.cpu, self.comm = pid, tid, cpu, comm
        self._owner, self._index, self._stack, self._stackp = None, -1, stack, 0
        self.ret, self.nr = kw.pop("ret", 0), kw.pop("nr", -1)
        if args or kw:
            raise TypeError(f"ImplPmuTraceData() got unexpected arguments {args} {kw}")

    @property
    def stack(self) -> Optional[Stack]:
        """The stack at syscall entry (PmuTraceAttr callStack), leaf first; None without.
        It also works as the ctypes pointer libkperf documents (ctypes.cast, .contents)."""
        if self._stack is _UNSET:
            o = self._owner
            with o._lock:
                o._rec_addr(self._index)
                self._stack = copy_stack(self._stackp, o._symcache, o._stackcache, o)
        return self._stack

    @stack.setter
    def stack(self, stack):
        self._stack = stack

    @property
    def c_pmu_trace_data(self):
        """The C struct PmuTraceData of this record: the library's while the array is alive
        and the record has a stack, else one built from the record's values."""
        if self._owner is not None:
            return self._owner._c_view(self._index)
        c = cs.PmuTraceData()
        c.funcs, c.comm = to_bytes(self.funcs, "funcs"), to_bytes(self.comm, "comm")
        c.startTs, c.elapsedTime = self.startTs, self.elapsedTime
        c.pid, c.tid, c.cpu = self.pid, self.tid, self.cpu
        if self._stack is not None:
            c._keep = self._stack.c_stack
            c.stack = ctypes.pointer(c._keep)
        return c

    @classmethod
    def from_c_pmu_trace_data(cls, c_pmu_trace_data):
        c = c_pmu_trace_data
        if isinstance(c, ctypes._Pointer):
            c = c.contents
        return cls(
            text(c.funcs),
            c.startTs,
            c.elapsedTime,
            c.pid,
            c.tid,
            c.cpu,
            text(c.comm),
            Stack.from_c_stack(c.stack) if c.stack else None,
        )

    def __repr__(self):
        return (
            f"<ImplPmuTraceData {self.funcs} pid={self.pid} tid={self.tid} cpu={self.cpu} "
            f"comm={self.comm!r} ret={self.ret} elapsedTime={self.elapsedTime:.6f}ms>"
        )


class PmuTraceData(_Block):
    """What kperf.trace_read() returns: `len`, `iter`, `free()` (and len(), indexing, for)."""

    _free_name = "PmuTraceDataFree"
    _what = "PmuTraceData"
    _c_type = cs.PmuTraceData

    def __init__(self, pointer=None, len=0):
        super().__init__(pointer, len)
        self._strs = string_cache()
        self._symcache, self._stackcache = {}, {}
        # the extensions (ret, nr) are one array beside the records: found once, indexed
        ext = _lib.fn("KperfTraceGetExt")(self._ptr, 0) if self._ptr else None
        addr = ctypes.cast(ext, ctypes.c_void_p).value if ext else 0
        self._ext_mv = c_memory(addr, self._n * _TRACE_EXT_SIZE) if addr else None

    def _make(self, i):
        funcs, start, elapsed, pid, tid, cpu, comm, stack = _TRACE.unpack_from(
            self._mv, i * _TRACE_SIZE
        )
        strs = self._strs
        r = _new(ImplPmuTraceData)
        r.funcs, r.startTs, r.elapsedTime = strs(funcs), start, elapsed
        r.pid, r.tid, r.cpu, r.comm = pid, tid, cpu, strs(comm)
        # only a record with a stack refers to the array (to copy its stack when asked)
        r._owner, r._index, r._stackp = (self, i, stack) if stack else (None, -1, 0)
        r._stack = _UNSET if stack else None
        if self._ext_mv is not None:
            r.ret, r.nr = _TRACE_EXT.unpack_from(self._ext_mv, i * _TRACE_EXT_SIZE)
        else:
            r.ret, r.nr = 0, -1
        return r

    def free(self):
        with self._lock:
            mv, self._ext_mv = self._ext_mv, None
        if mv is not None:
            mv.release()
        super().free()


class ImplPmuDeviceData:
    """One value of kperf.get_device_metric(); the id fields that apply to its mode are
    set (coreId, numaId, clusterId, bdf/port, or channelId/ddrNumaId/socketId), the others 0
    (or "" for bdf and port)."""

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

    def __init__(self, metric=0, count=0, mode=0):
        self.metric, self.count, self.mode = metric, count, mode
        self.coreId = self.numaId = self.clusterId = 0
        self.channelId = self.ddrNumaId = self.socketId = 0
        self.bdf = self.port = ""

    @classmethod
    def from_c_pmu_device_data(cls, c):
        if isinstance(c, ctypes._Pointer):
            c = c.contents
        d = cls(c.metric, c.count, c.mode)
        m = PmuMetricMode
        if c.mode == m.PMU_METRIC_CORE:
            d.coreId = c.coreId
        elif c.mode == m.PMU_METRIC_NUMA:
            d.numaId = c.numaId
        elif c.mode == m.PMU_METRIC_CLUSTER:
            d.clusterId = c.clusterId
        elif c.mode == m.PMU_METRIC_BDF:
            # bdf and port share the union: one string, named by the metric
            d.bdf = d.port = text(c.bdf)
        elif c.mode == m.PMU_METRIC_CHANNEL:
            d.channelId, d.ddrNumaId, d.socketId = c.channelId, c.ddrNumaId, c.socketId
        return d

    @property
    def c_pmu_device_data(self):
        c = cs.PmuDeviceData(metric=self.metric, count=self.count, mode=self.mode)
        m = PmuMetricMode
        if self.mode == m.PMU_METRIC_CORE:
            c.coreId = self.coreId
        elif self.mode == m.PMU_METRIC_NUMA:
            c.numaId = self.numaId
        elif self.mode == m.PMU_METRIC_CLUSTER:
            c.clusterId = self.clusterId
        elif self.mode == m.PMU_METRIC_BDF:
            c.bdf = to_bytes(self.bdf, "bdf")
        elif self.mode == m.PMU_METRIC_CHANNEL:
            c.channelId, c.ddrNumaId, c.socketId = self.channelId, self.ddrNumaId, self.socketId
        return c

    def __repr__(self):
        return f"<ImplPmuDeviceData metric={self.metric} mode={self.mode} count={self.count}>"


class PmuDeviceData(_Block):
    """What kperf.get_device_metric() returns: `len`, `iter`, `free()`."""

    _free_name = "DevDataFree"
    _what = "PmuDeviceData"
    _c_type = cs.PmuDeviceData

    def _make(self, i):
        return ImplPmuDeviceData.from_c_pmu_device_data(self._ptr[i])


@dataclass(frozen=True)
class SampleRawField:
    """A tracepoint field's description (kperf.get_field_exp)."""

    field_name: str = ""
    field_str: str = ""
    offset: int = 0
    size: int = 0
    is_signed: bool = 0

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

    @property
    def c_sample_raw_field(self):
        return cs.SampleRawField(
            to_bytes(self.field_name, "field_name"),
            to_bytes(self.field_str, "field_str"),
            self.offset,
            self.size,
            1 if self.is_signed else 0,
        )

    @classmethod
    def from_sample_raw_field(cls, c):
        if isinstance(c, ctypes._Pointer):
            c = c.contents
        return cls(text(c.fieldName), text(c.fieldStr), c.offset, c.size, bool(c.isSigned))


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
    summaryDropped: int  # calls outside their process's row (pid 0 rows, or lost)
    fallback: bool  # the raw_syscalls / hash-map fallback is in use
    ringBufferKb: int  # ring buffer size in use (0: summaryOnly)
    stacksLost: int = 0  # callStack: calls counted without their stack (stack map full)
    # callStack: calls in the summary by stack's pid 0 "[stack table full]" rows (its map full)
    stackSummaryDropped: int = 0
    # calls whose kernel row could not be allocated at that moment (-ENOMEM, map not full):
    # still in their process's row, except those in the pid 0 "[no memory]" rows
    summaryNoMemory: int = 0
    # callStack: for that reason in the summary by stack's "[no memory for a stack row]" rows
    stackSummaryNoMemory: int = 0


@dataclass(frozen=True)
class TraceStackSummary:
    """One (process, syscall, stack at entry) of the summary by stack (callStack), cumulative
    since trace_open. stack: kernel frames first (kernelFrames of them), then user frames, each
    part leaf first; None when no stack was kept for those calls. pid 0: the calls of a
    syscall the summary by stack had no row for, counted without their process and stack;
    comm "[map full]" and one frame "[stack table full]" (its map was full), or "[no memory]"
    and "[no memory for a stack row]" (the kernel could not allocate the row)."""

    funcs: str
    nr: int
    pid: int
    comm: str
    calls: int
    errors: int
    totalNs: int
    minNs: int
    maxNs: int
    stack: Optional[Stack] = field(repr=False)
    kernelFrames: int

    @property
    def avgNs(self) -> float:
        return self.totalNs / self.calls if self.calls else 0.0

    @property
    def userStack(self) -> Optional[Stack]:
        """The first user frame of the stack (its leaf), None when it has none."""
        s, i = self.stack, 0
        while s is not None and i < self.kernelFrames:
            s, i = s.next, i + 1
        return s


__all__ = [
    "CpuTopology",
    "BranchRecord",
    "BranchRecords",
    "PmuDataExt",
    "SampleRawData",
    "SampleRawField",
    "ImplPmuData",
    "PmuData",
    "ImplPmuTraceData",
    "PmuTraceData",
    "ImplPmuDeviceData",
    "PmuDeviceData",
    "TraceSummary",
    "TraceStats",
    "TraceStackSummary",
]
