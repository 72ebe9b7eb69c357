"""kperf.activity - activity records of processes (include/kperf/activity.h): their mstx
markers, their syscalls and their socket/pipe I/O, collected with BPF and read in batches.
kperf.mspti builds msPTI's monitors on it.

    with kperf.activity.Activity([KperfActivityKind.KPERF_ACTIVITY_KIND_MARKER]) as a:
        kperf.mstx.mark("x")
        for r in a.read():
            print(r.kind, r.flag, r.name, r.domain, r.start, r.pid, r.tid)

Failures raise kperf.KperfError with the library's code and message.
"""

import ctypes
import enum

from . import _cstructs as cs
from . import _lib
from .perror import KperfError, _raise_last
from .pmu import _call

__all__ = ["KperfActivityKind", "KperfActivityFlag", "ActivityRecord", "Activity"]


class KperfActivityKind(enum.IntEnum):
    """enum KperfActivityKind (msPTI's msptiActivityKind numbers)."""

    KPERF_ACTIVITY_KIND_MARKER = 1
    KPERF_ACTIVITY_KIND_KERNEL = 2
    KPERF_ACTIVITY_KIND_HCCL = 4


class KperfActivityFlag(enum.IntEnum):
    """enum KperfActivityFlag (msPTI's msptiActivityFlag values for markers)."""

    KPERF_ACTIVITY_FLAG_NONE = 0
    KPERF_ACTIVITY_FLAG_MARKER_INSTANTANEOUS = 1
    KPERF_ACTIVITY_FLAG_MARKER_START = 2
    KPERF_ACTIVITY_FLAG_MARKER_END = 4


def _s(b):
    return b.decode("utf-8", "replace") if b else ""


class ActivityRecord:
    """One struct KperfActivityRecord, copied (valid after the array is freed)."""

    __slots__ = ("kind", "flag", "start", "end", "id", "pid", "tid", "cpu", "nr", "ret",
                 "bytes", "name", "domain", "comm", "channel")

    def __init__(self, c):
        self.kind = KperfActivityKind(c.kind)
        self.flag = c.flag
        self.start, self.end, self.id = c.start, c.end, c.id
        self.pid, self.tid, self.cpu, self.nr = c.pid, c.tid, c.cpu, c.nr
        self.ret, self.bytes = c.ret, c.bytes
        self.name, self.domain = _s(c.name), _s(c.domain)
        self.comm, self.channel = _s(c.comm), _s(c.channel)

    def __repr__(self):
        return (f"<ActivityRecord {self.kind.name} flag={self.flag} {self.name!r} "
                f"pid={self.pid} tid={self.tid} start={self.start}>")


class Activity:
    """A collection of <kinds> (KperfActivityOpen), enabled by enable() or `with`.

    pids: the processes (default: this one), with their children unless children=False;
    buffer_kb: the kernel ring buffer of each source; probe_files: files holding kperf's
    USDT probes beyond those found; exclude_reader: leave out the records of the thread that
    calls read(); all_pids: every process instead of pids (perf's -a), this one's own
    syscalls left out."""

    def __init__(self, kinds, pids=None, children=True, from_exec=False, buffer_kb=0,
                 probe_files=(), exclude_reader=False, all_pids=False):
        kinds = [int(k) for k in kinds]
        karr = (ctypes.c_int * max(len(kinds), 1))(*kinds)
        pids = list(pids or [])
        parr = (ctypes.c_int * max(len(pids), 1))(*pids)
        files = [f.encode() if isinstance(f, str) else bytes(f) for f in probe_files]
        farr = (ctypes.c_char_p * max(len(files), 1))(*files)
        opts = cs.KperfActivityOpts(
            ctypes.sizeof(cs.KperfActivityOpts), parr if pids else None, len(pids),
            0 if children else 1, 1 if from_exec else 0, int(buffer_kb),
            farr if files else None, len(files), 1 if exclude_reader else 0, None,
            1 if all_pids else 0,
        )
        self._ad = _call("KperfActivityOpen", karr, len(kinds), ctypes.byref(opts))
        if self._ad < 0:
            self._ad = None
            _raise_last()
        self.warning = _lib.state()[3] if _lib.state()[2] else ""

    def _check(self, r):
        if r != 0:
            _raise_last()

    @property
    def ad(self):
        if self._ad is None:
            raise KperfError(1006, "this activity collection is closed")
        return self._ad

    def enable(self):
        self._check(_call("KperfActivityEnable", self.ad))

    def disable(self):
        self._check(_call("KperfActivityDisable", self.ad))

    def enable_domain(self, name):
        self._check(_call("KperfActivityEnableDomain", self.ad, name.encode()))

    def disable_domain(self, name):
        self._check(_call("KperfActivityDisableDomain", self.ad, name.encode()))

    def read(self, timeout_ms=0):
        """The records made since the last read, waiting up to <timeout_ms> when none is
        there yet (-1: until one comes)."""
        arr = ctypes.POINTER(cs.KperfActivityRecord)()
        n = _call("KperfActivityRead", self.ad, int(timeout_ms), ctypes.byref(arr))
        if n < 0:
            _raise_last()
        try:
            return [ActivityRecord(arr[i]) for i in range(n)]
        finally:
            if n:
                _lib.fn("KperfActivityFree")(arr)

    def stats(self):
        """dict of struct KperfActivityStats: records, dropped, filtered, probes,
        probeFiles, bufferKb, fallback."""
        st = cs.KperfActivityStats()
        self._check(_call("KperfActivityGetStats", self.ad, ctypes.byref(st)))
        return {f: getattr(st, f) for f, _ in cs.KperfActivityStats._fields_}

    def close(self):
        if self._ad is not None:
            _lib.fn("KperfActivityClose")(self._ad)
            self._ad = None

    def __enter__(self):
        self.enable()
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:  # noqa: BLE001 - interpreter shutdown
            pass
