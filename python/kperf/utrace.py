"""User function tracing (libkperf's u_trace_open / enable / disable / read / close): the
entries and returns of named functions of a program or library, recorded through uprobes."""

import ctypes
from dataclasses import dataclass

from . import _cstructs as cs
from ._convert import string_cache, text, to_bytes, unpacker
from .attrs import UTraceAttr
from .perror import _raise_last
from .pmu import _call_or_refuse, _pd
from .results import _Block, _new


class UTraceData:
    """One function entry or return (struct UTraceData): addr, comm, tid, cpu, timestamp
    (ns, CLOCK_MONOTONIC), gPtr (with fetchG), module, func, isRet. A copy: valid after
    free()."""

    __slots__ = ("addr", "comm", "tid", "cpu", "timestamp", "gPtr", "module", "func", "isRet")

    def __init__(
        self, addr=0, comm="", tid=0, cpu=0, timestamp=0, gPtr=0, module="", func="", isRet=0,
        *args, **kw
    ):
        if args or kw:
            raise TypeError(f"UTraceData() got unexpected arguments {args} {kw}")
        self.addr, self.comm, self.tid, self.cpu = addr, comm, tid, cpu
        self.timestamp, self.gPtr, self.module, self.func = timestamp, gPtr, module, func
        self.isRet = bool(isRet)

    def __repr__(self):
        kind = "return" if self.isRet else "entry"
        return f"<UTraceData {self.func} {kind} tid={self.tid} ts={self.timestamp}>"

    @property
    def c_u_trace_data(self):
        return cs.UTraceData(
            self.addr,
            to_bytes(self.comm, "comm"),
            self.tid,
            self.cpu,
            self.timestamp,
            self.gPtr,
            to_bytes(self.module, "module"),
            to_bytes(self.func, "func"),
            1 if self.isRet else 0,
        )

    @classmethod
    def from_c_u_trace_data(cls, c):
        if isinstance(c, ctypes._Pointer):
            c = c.contents
        return cls(
            c.addr, text(c.comm), c.tid, c.cpu, c.timestamp, c.gPtr, text(c.module),
            text(c.func), c.isRet,
        )


_REC = unpacker(
    cs.UTraceData, ("addr", "comm", "tid", "cpu", "timestamp", "gPtr", "module", "func", "isRet")
)
_SIZE = ctypes.sizeof(cs.UTraceData)


class UTraceDataList(_Block):
    """What kperf.u_trace_read() returns: `len`, `iter`, `free()` (and len(), indexing)."""

    _free_name = "UTraceDataFree"
    _what = "UTraceDataList"
    _c_type = cs.UTraceData

    def __init__(self, pointer=None, len=0):
        super().__init__(pointer, len)
        self._strs = string_cache()

    def _make(self, i):
        addr, comm, tid, cpu, ts, g, module, func, ret = _REC.unpack_from(self._mv, i * _SIZE)
        s = self._strs
        r = _new(UTraceData)
        r.addr, r.comm, r.tid, r.cpu, r.timestamp, r.gPtr = addr, s(comm), tid, cpu, ts, g
        r.module, r.func, r.isRet = s(module), s(func), bool(ret)
        return r


def u_trace_open(trace_attr: UTraceAttr) -> int:
    """Open a user function trace (UTraceOpen): the handle (> 0), or -1 (kperf.error())."""
    if not isinstance(trace_attr, UTraceAttr):
        raise TypeError(f"trace_attr must be a kperf.UTraceAttr, not {type(trace_attr).__name__}")
    return _call_or_refuse(
        "KperfUTraceOpen", -1, ctypes.byref(trace_attr._c), ctypes.byref(trace_attr._x)
    )


def u_trace_enable(pd: int) -> int:
    """Start recording <pd> (UTraceEnable): 0, or -1 (kperf.error())."""
    pd = _pd(pd)
    return -1 if pd is None else _call_or_refuse("UTraceEnable", -1, pd)


def u_trace_disable(pd: int) -> int:
    """Stop recording <pd> (UTraceDisable): 0, or -1 (kperf.error())."""
    pd = _pd(pd)
    return -1 if pd is None else _call_or_refuse("UTraceDisable", -1, pd)


def u_trace_read(pd: int) -> UTraceDataList:
    """The entries and returns recorded by <pd> since the last read (UTraceRead); len == -1
    on failure (kperf.error())."""
    pd = _pd(pd)
    if pd is None:
        return UTraceDataList(None, -1)
    p = ctypes.POINTER(cs.UTraceData)()
    n = _call_or_refuse("UTraceRead", -1, pd, ctypes.byref(p))
    return UTraceDataList(p, n) if n >= 0 else UTraceDataList(None, -1)


@dataclass(frozen=True)
class UTraceStats:
    """Counters of a user function trace (KperfUTraceGetStats)."""

    records: int  # records handed out by u_trace_read so far
    dropped: int  # probe hits lost (ring buffer, or the store between reads, full)
    unattributed: int  # hits whose function could not be told (the process exited first)
    probes: int  # uprobes placed: (entry or return instruction) x traced process
    ringBufferKb: int  # the ring buffer size in use


def u_trace_stats(pd: int) -> UTraceStats:
    """Record and drop counters of user function trace <pd> (kperf-bpf's
    KperfUTraceGetStats). Raises KperfError on failure."""
    pd = _pd(pd)
    if pd is None:
        _raise_last()
    st = cs.KperfUTraceStats()
    if _call_or_refuse("KperfUTraceGetStats", -1, pd, ctypes.byref(st)) != 0:
        _raise_last()
    return UTraceStats(st.records, st.dropped, st.unattributed, st.probes, st.ringBufferKb)


def u_trace_close(pd: int) -> None:
    """Close <pd> (UTraceClose); data already read stays valid until freed."""
    pd = _pd(pd)
    if pd is not None:
        _call_or_refuse("UTraceClose", None, pd)


__all__ = [
    "UTraceData",
    "UTraceDataList",
    "u_trace_open",
    "u_trace_enable",
    "u_trace_disable",
    "u_trace_read",
    "u_trace_close",
    "u_trace_stats",
    "UTraceStats",
]
