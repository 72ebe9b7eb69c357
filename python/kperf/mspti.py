"""kperf.mspti - msPTI's Python API (activity monitors) on a CPU, over kperf.activity.

    from kperf.mspti import MstxMonitor, MarkerData, RangeMarkerData
    import kperf.mstx as mstx

    def on_mark(m: MarkerData): print(m.name, m.domain, m.timestamp)
    def on_range(r: RangeMarkerData): print(r.name, r.end - r.start)

    monitor = MstxMonitor()
    monitor.start(on_mark, on_range)
    with mstx.range("step"):
        mstx.mark("half way")
    monitor.stop()

The names, fields and values are msPTI's. What each monitor sees on a CPU:
  MstxMonitor    the mstx markers of this process and of the processes it starts later
                 (kperf.mstx, or C code calling libkperf-bpf's mstx functions); a range is
                 delivered once both its ends are in, from wherever they were called
  KernelMonitor  this process's syscalls: name = the syscall, start/end in ns, device_id =
                 the cpu, stream_id = the thread, type = "syscall", a unique correlation_id
  HcclMonitor    its socket and pipe I/O syscalls (send/recv families, read/write/readv/writev
                 on sockets and pipes), with the bytes moved and the bandwidth in GB/s
Records are buffered (set_buffer_size, in MB) and delivered to the callback, one call per
record, when the buffer is full, on flush_all(), on the period of flush_period() and on
stop(). A callback that raises is reported on stderr and the next records are still
delivered. Records the kernel could not keep (its ring buffer, as large as the activity
buffer, was full) are counted: monitor.dropped. The monitor's own thread is left out of
KernelMonitor and HcclMonitor.
"""

import enum
import sys
import threading
from typing import Callable

from . import _cstructs as cs
from .activity import Activity, KperfActivityKind
from .perror import KperfError

__all__ = [
    "KernelMonitor", "KernelData",
    "MstxMonitor", "MarkerData", "RangeMarkerData",
    "HcclMonitor", "HcclData",
    "MsptiObjectId", "MsptiResult", "MsptiActivityKind", "MsptiActivityFlag",
    "MsptiActivitySourceKind",
]

# msPTI's limits: the activity buffer is set in MB, 8 by default, 256 at most
_DEFAULT_BUFFER_MB = 8
_MAX_BUFFER_MB = 256
_POLL_MS = 50


class MsptiResult(enum.Enum):
    MSPTI_SUCCESS = 0
    MSPTI_ERROR_INVALID_PARAMETER = 1
    MSPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED = 2
    MSPTI_ERROR_MAX_LIMIT_REACHED = 3
    MSPTI_ERROR_DEVICE_OFFLINE = 4
    MSPTI_ERROR_INNER = 999
    MSPTI_ERROR_FORCE_INT = 0x7FFFFFFF


class MsptiActivityKind(enum.Enum):
    MSPTI_ACTIVITY_KIND_INVALID = 0
    MSPTI_ACTIVITY_KIND_MARKER = 1
    MSPTI_ACTIVITY_KIND_KERNEL = 2
    MSPTI_ACTIVITY_KIND_API = 3
    MSPTI_ACTIVITY_KIND_HCCL = 4
    MSPTI_ACTIVITY_KIND_COUNT = 5
    MSPTI_ACTIVITY_KIND_FORCE_INT = 0x7FFFFFFF


class MsptiActivityFlag(enum.Enum):
    MSPTI_ACTIVITY_FLAG_NONE = 0
    MSPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS = 1
    MSPTI_ACTIVITY_FLAG_MARKER_START = 2
    MSPTI_ACTIVITY_FLAG_MARKER_END = 4
    MSPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS_WITH_DEVICE = 8
    MSPTI_ACTIVITY_FLAG_MARKER_START_WITH_DEVICE = 16
    MSPTI_ACTIVITY_FLAG_MARKER_END_WITH_DEVICE = 32


class MsptiActivitySourceKind(enum.Enum):
    MSPTI_ACTIVITY_SOURCE_KIND_HOST = 0
    MSPTI_ACTIVITY_SOURCE_KIND_DEVICE = 1


# ---- records: built from a dict keyed by msPTI's names, as msPTI builds them ----


class MsptiObjectId:
    """Who a marker belongs to: process_id, thread_id (host), device_id, stream_id (-1 for
    host-side data, as msPTI has it)."""

    PROCESS_ID = "processId"
    THREAD_ID = "threadId"
    DEVICE_ID = "deviceId"
    STREAM_ID = "streamId"

    def __init__(self, origin_data):
        self.process_id: int = origin_data.get(self.PROCESS_ID, -1)
        self.thread_id: int = origin_data.get(self.THREAD_ID, -1)
        self.device_id: int = origin_data.get(self.DEVICE_ID, 0)
        self.stream_id: int = origin_data.get(self.STREAM_ID, 0)

    def __repr__(self):
        return (f"MsptiObjectId(process_id={self.process_id}, thread_id={self.thread_id}, "
                f"device_id={self.device_id}, stream_id={self.stream_id})")


class KernelData:
    """A syscall (MSPTI_ACTIVITY_KIND_KERNEL). kperf-bpf adds ret (its return value) and
    process_id."""

    KIND = "kind"
    START = "start"
    END = "end"
    DEVICE_ID = "deviceId"
    STREAM_ID = "streamId"
    CORRELATION_ID = "correlationId"
    TYPE = "type"
    NAME = "name"

    def __init__(self, origin_data: dict):
        self.kind = MsptiActivityKind(origin_data.get(self.KIND, 0))
        self.start: int = origin_data.get(self.START, 0)
        self.end: int = origin_data.get(self.END, 0)
        self.device_id: int = origin_data.get(self.DEVICE_ID, 0)
        self.stream_id: int = origin_data.get(self.STREAM_ID, 0)
        self.correlation_id: int = origin_data.get(self.CORRELATION_ID, 0)
        self.type: str = origin_data.get(self.TYPE, "")
        self.name: str = origin_data.get(self.NAME, "")
        self.ret: int = origin_data.get("ret", 0)
        self.process_id: int = origin_data.get("processId", -1)

    def __repr__(self):
        return (f"<KernelData {self.name} start={self.start} end={self.end} "
                f"stream_id={self.stream_id} ret={self.ret}>")


class MarkerData:
    """One marker record (MSPTI_ACTIVITY_KIND_MARKER): an instantaneous mark, or one end of a
    range (flag START or END; name is empty on an END)."""

    KIND = "kind"
    FLAG = "flag"
    SOURCE_KIND = "sourceKind"
    TIMESTAMP = "timestamp"
    ID = "id"
    NAME = "name"
    DOMAIN = "domain"

    def __init__(self, origin_data: dict):
        self.kind = MsptiActivityKind(origin_data.get(self.KIND, 0))
        self.flag = MsptiActivityFlag(origin_data.get(self.FLAG, 1))
        self.source_kind = MsptiActivitySourceKind(origin_data.get(self.SOURCE_KIND, 0))
        self.timestamp: int = origin_data.get(self.TIMESTAMP, 0)
        self.id: int = origin_data.get(self.ID, 0)
        self.object_id = MsptiObjectId(origin_data)
        self.name: str = origin_data.get(self.NAME, "")
        self.domain: str = origin_data.get(self.DOMAIN, "")

    def __repr__(self):
        return (f"<MarkerData {self.flag.name} {self.name!r} domain={self.domain!r} "
                f"id={self.id} ts={self.timestamp}>")


class RangeMarkerData:
    """A range, both ends in (MSPTI_ACTIVITY_KIND_MARKER): its start's name, domain and
    object_id, start and end in ns."""

    def __init__(self):
        self.kind = MsptiActivityKind.MSPTI_ACTIVITY_KIND_MARKER
        self.source_kind = MsptiActivitySourceKind.MSPTI_ACTIVITY_SOURCE_KIND_HOST
        self.id: int = 0
        self.object_id = MsptiObjectId({})
        self.name: str = ""
        self.domain: str = ""
        self.start: int = 0
        self.end: int = 0

    def __repr__(self):
        return (f"<RangeMarkerData {self.name!r} domain={self.domain!r} id={self.id} "
                f"start={self.start} end={self.end}>")


class HcclData:
    """A socket or pipe transfer (MSPTI_ACTIVITY_KIND_HCCL): name = the syscall, comm_name =
    the channel ("socket:[INODE]", "pipe:[INODE]"), bandwidth in GB/s. kperf-bpf adds bytes
    and ret."""

    KIND = "kind"
    START = "start"
    END = "end"
    DEVICE_ID = "deviceId"
    STREAM_ID = "streamId"
    BANDWIDTH = "bandWidth"
    NAME = "name"
    COMMNAME = "commName"

    def __init__(self, origin_data: dict):
        self.kind = MsptiActivityKind(origin_data.get(self.KIND, 0))
        self.start: int = origin_data.get(self.START, 0)
        self.end: int = origin_data.get(self.END, 0)
        self.device_id: int = origin_data.get(self.DEVICE_ID, 0)
        self.stream_id: int = origin_data.get(self.STREAM_ID, 0)
        self.bandwidth: float = origin_data.get(self.BANDWIDTH, 0)
        self.name: str = origin_data.get(self.NAME, "")
        self.comm_name: str = origin_data.get(self.COMMNAME, "")
        self.bytes: int = origin_data.get("bytes", 0)
        self.ret: int = origin_data.get("ret", 0)

    def __repr__(self):
        return (f"<HcclData {self.name} {self.comm_name} bytes={self.bytes} "
                f"bandwidth={self.bandwidth:.3f} GB/s>")


# ---- monitors ----


def _error(text):
    print(f"kperf.mspti: {text}", file=sys.stderr, flush=True)


def empty_callback(*_args):
    """The callback a monitor uses for what it was given none for."""


_state_lock = threading.Lock()
_buffer_mb = _DEFAULT_BUFFER_MB
_period_ms = 0
_running = set()


class _BaseMonitor:
    """What the three monitors share: an activity collection of their kind, a thread that
    drains it into the buffer, and the delivery of the buffer to the callbacks."""

    _KINDS = ()

    def __init__(self):
        self._activity = None
        self._thread = None
        self._stop = threading.Event()
        self._lock = threading.RLock()  # the buffer and its delivery
        self._buffer = []
        self._buffered = 0
        self._capacity = 0
        self._reader_tid = 0
        self._domains = {}  # name -> enabled, applied at start
        #: records the kernel could not keep (its ring buffer was full), since start()
        self.dropped = 0
        #: calls of disabled domains dropped in the kernel (MstxMonitor), since start()
        self.filtered = 0
        #: callbacks that raised, since start()
        self.callback_errors = 0

    # -- msPTI's class methods: the buffer, flushing --

    @classmethod
    def set_buffer_size(cls, size: int) -> MsptiResult:
        """The activity buffer in MB (1..256; 8 by default), before start()."""
        global _buffer_mb
        if isinstance(size, bool) or not isinstance(size, int) or size <= 0:
            _error(f"set_buffer_size: the size is a number of MB greater than 0, not {size!r}")
            return MsptiResult.MSPTI_ERROR_INVALID_PARAMETER
        if size > _MAX_BUFFER_MB:
            _error(f"set_buffer_size: {size} MB is more than the {_MAX_BUFFER_MB} MB allowed")
            return MsptiResult.MSPTI_ERROR_INVALID_PARAMETER
        with _state_lock:
            if _running:
                _error("set_buffer_size: a monitor is running; set the size before start()")
                return MsptiResult.MSPTI_ERROR_INVALID_PARAMETER
            _buffer_mb = size
        return MsptiResult.MSPTI_SUCCESS

    @classmethod
    def flush_all(cls) -> MsptiResult:
        """Deliver everything collected so far, by every running monitor."""
        with _state_lock:
            monitors = list(_running)
        for m in monitors:
            m._flush()
        return MsptiResult.MSPTI_SUCCESS

    @classmethod
    def flush_period(cls, time_ms: int) -> MsptiResult:
        """Also deliver the buffer every <time_ms> ms (0: only when full, flushed or
        stopped)."""
        global _period_ms
        if isinstance(time_ms, bool) or not isinstance(time_ms, int) or time_ms < 0:
            _error(f"flush_period: the period is a number of ms >= 0, not {time_ms!r}")
            return MsptiResult.MSPTI_ERROR_INVALID_PARAMETER
        _period_ms = time_ms
        return MsptiResult.MSPTI_SUCCESS

    # -- lifecycle --

    def _start(self) -> MsptiResult:
        if self._activity is not None:
            _error(f"{type(self).__name__}.start: already started")
            return MsptiResult.MSPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED
        with _state_lock:
            mb = _buffer_mb
        try:
            act = Activity(self._KINDS, buffer_kb=mb * 1024)
            for name, on in self._domains.items():
                if not on:
                    act.disable_domain(name)
        except KperfError as e:
            _error(f"{type(self).__name__}.start: {e.message}")
            return MsptiResult.MSPTI_ERROR_INNER
        self._capacity = mb << 20
        # a quarter of the kernel's ring buffer, in its smallest records (syscalls)
        self._busy = (mb << 20) // 4 // 72
        self._buffer, self._buffered = [], 0
        self.dropped = self.filtered = self.callback_errors = 0
        self._stop.clear()
        self._activity = act
        started = threading.Event()
        self._thread = threading.Thread(target=self._drain_main, args=(started,),
                                        name=f"kperf.mspti.{type(self).__name__}", daemon=True)
        self._thread.start()
        started.wait()
        try:
            act.enable()
        except KperfError as e:
            self._shutdown()
            _error(f"{type(self).__name__}.start: {e.message}")
            return MsptiResult.MSPTI_ERROR_INNER
        with _state_lock:
            _running.add(self)
        return MsptiResult.MSPTI_SUCCESS

    def stop(self) -> MsptiResult:
        """Stop collecting and deliver everything collected."""
        if self._activity is None:
            _error(f"{type(self).__name__}.stop: not started")
            return MsptiResult.MSPTI_ERROR_INVALID_PARAMETER
        try:
            self._activity.disable()
        except KperfError as e:
            _error(f"{type(self).__name__}.stop: {e.message}")
        self._shutdown()
        return MsptiResult.MSPTI_SUCCESS

    def _shutdown(self):
        self._stop.set()
        if self._thread:
            self._thread.join()
            self._thread = None
        self._flush()
        with _state_lock:
            _running.discard(self)
        self._activity.close()
        self._activity = None
        self._unmatched_done()

    # -- collection and delivery --

    def _drain_main(self, started):
        self._reader_tid = threading.get_native_id()
        started.set()
        since = 0.0
        while not self._stop.is_set():
            with self._lock:
                n = self._take(0)
                since += _POLL_MS / 1000
                if self._buffered >= self._capacity or (
                        _period_ms and since * 1000 >= _period_ms):
                    self._deliver()
                    since = 0.0
            # a ring buffer is readable from its first record: waiting on it would wake this
            # thread every few records, to compete for the CPU with what it watches; it
            # sleeps a tick instead, unless the last read was large (then it keeps up)
            if n < self._busy:
                self._stop.wait(_POLL_MS / 1000)

    def _take(self, timeout_ms):
        """Move what the kernel has into the buffer (with self._lock); how many records."""
        try:
            recs = self._activity.read(timeout_ms)
        except KperfError as e:
            _error(f"reading the records failed: {e.message}")
            return 0
        for r in recs:
            if r.kind != KperfActivityKind.KPERF_ACTIVITY_KIND_MARKER and r.tid == self._reader_tid:
                continue  # the monitor's own thread
            self._buffer.append(r)
            self._buffered += _RECORD_SIZE + len(r.name) + len(r.domain) + len(r.channel)
            if self._buffered >= self._capacity:
                self._deliver()
        return len(recs)

    def _flush(self):
        with self._lock:
            if self._activity is not None:
                self._take(0)
                try:
                    st = self._activity.stats()
                    self.dropped, self.filtered = st["dropped"], st["filtered"]
                except KperfError:
                    pass
            self._deliver()

    def _deliver(self):
        recs, self._buffer, self._buffered = self._buffer, [], 0
        for r in recs:
            self._dispatch(r)

    def _call(self, cb, data, what):
        try:
            cb(data)
        except Exception as e:  # noqa: BLE001 - the user's callback: report, go on
            self.callback_errors += 1
            _error(f"the {what} callback raised {type(e).__name__}: {e}; the other records "
                   f"are still delivered")

    def _unmatched_done(self):
        pass


_RECORD_SIZE = __import__("ctypes").sizeof(cs.KperfActivityRecord)


class MstxMonitor(_BaseMonitor):
    """The mstx markers of this process and its children."""

    _KINDS = (KperfActivityKind.KPERF_ACTIVITY_KIND_MARKER,)

    def __init__(self):
        super().__init__()
        self.mark_user_cb = None
        self.range_user_cb = None
        self._starts = {}  # (pid, id) -> MarkerData of a range start waiting for its end

    def start(self, mark_cb: Callable[[MarkerData], None] = empty_callback,
              range_cb: Callable[[RangeMarkerData], None] = empty_callback) -> MsptiResult:
        """Collect markers: each mark to mark_cb, each range to range_cb once both its ends
        are in."""
        if not callable(mark_cb) and not callable(range_cb):
            _error("MstxMonitor.start: neither mark_cb nor range_cb is callable")
            return MsptiResult.MSPTI_ERROR_INVALID_PARAMETER
        self.mark_user_cb = mark_cb if callable(mark_cb) else empty_callback
        self.range_user_cb = range_cb if callable(range_cb) else empty_callback
        self._starts = {}
        ret = self._start()
        if ret != MsptiResult.MSPTI_SUCCESS:
            self.mark_user_cb = self.range_user_cb = None
        return ret

    def stop(self) -> MsptiResult:
        ret = super().stop()
        if ret == MsptiResult.MSPTI_SUCCESS:
            self.mark_user_cb = self.range_user_cb = None
        return ret

    def _domain(self, name, on):
        if not isinstance(name, str) or not name:
            _error(f"MstxMonitor.{'enable' if on else 'disable'}_domain: the domain name is a "
                   f"non-empty str, not {name!r}")
            return MsptiResult.MSPTI_ERROR_INVALID_PARAMETER
        self._domains[name] = on
        if self._activity is not None:
            try:
                if on:
                    self._activity.enable_domain(name)
                else:
                    self._activity.disable_domain(name)
            except KperfError as e:
                _error(f"MstxMonitor: domain {name!r}: {e.message}")
                return MsptiResult.MSPTI_ERROR_INNER
        return MsptiResult.MSPTI_SUCCESS

    def enable_domain(self, domain_name: str) -> MsptiResult:
        """Collect domain <domain_name> again (every domain is collected at first)."""
        return self._domain(domain_name, True)

    def disable_domain(self, domain_name: str) -> MsptiResult:
        """Stop collecting domain <domain_name>: its calls are dropped in the kernel."""
        return self._domain(domain_name, False)

    def _dispatch(self, r):
        data = MarkerData({
            MarkerData.KIND: MsptiActivityKind.MSPTI_ACTIVITY_KIND_MARKER.value,
            MarkerData.FLAG: r.flag,
            MarkerData.SOURCE_KIND: MsptiActivitySourceKind.MSPTI_ACTIVITY_SOURCE_KIND_HOST.value,
            MarkerData.TIMESTAMP: r.start,
            MarkerData.ID: r.id,
            MarkerData.NAME: r.name,
            MarkerData.DOMAIN: r.domain,
            MsptiObjectId.PROCESS_ID: r.pid,
            MsptiObjectId.THREAD_ID: r.tid,
            MsptiObjectId.DEVICE_ID: -1,
            MsptiObjectId.STREAM_ID: -1,
        })
        if data.flag == MsptiActivityFlag.MSPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS:
            self._call(self.mark_user_cb, data, "mark")
            return
        key = (r.pid, r.id)
        if data.flag == MsptiActivityFlag.MSPTI_ACTIVITY_FLAG_MARKER_START:
            self._starts[key] = data
            return
        start = self._starts.pop(key, None)
        if start is None:
            return  # its start came before the monitor
        rng = RangeMarkerData()
        rng.source_kind = start.source_kind
        rng.id = start.id
        rng.object_id = start.object_id
        rng.name = start.name
        rng.domain = start.domain
        rng.start = start.timestamp
        rng.end = data.timestamp
        self._call(self.range_user_cb, rng, "range")

    @property
    def open_ranges(self):
        """Ranges started and not ended (yet) when last delivered: (pid, id) -> MarkerData."""
        return dict(self._starts)


class KernelMonitor(_BaseMonitor):
    """The syscalls of this process and its children."""

    _KINDS = (KperfActivityKind.KPERF_ACTIVITY_KIND_KERNEL,)

    def __init__(self):
        super().__init__()
        self.user_cb = None

    def start(self, cb: Callable[[KernelData], None]) -> MsptiResult:
        if not callable(cb):
            _error("KernelMonitor.start: the callback is not callable")
            return MsptiResult.MSPTI_ERROR_INVALID_PARAMETER
        self.user_cb = cb
        ret = self._start()
        if ret != MsptiResult.MSPTI_SUCCESS:
            self.user_cb = None
        return ret

    def stop(self) -> MsptiResult:
        ret = super().stop()
        if ret == MsptiResult.MSPTI_SUCCESS:
            self.user_cb = None
        return ret

    def _dispatch(self, r):
        self._call(self.user_cb, KernelData({
            KernelData.KIND: MsptiActivityKind.MSPTI_ACTIVITY_KIND_KERNEL.value,
            KernelData.START: r.start,
            KernelData.END: r.end,
            KernelData.DEVICE_ID: r.cpu,
            KernelData.STREAM_ID: r.tid,
            KernelData.CORRELATION_ID: r.id,
            KernelData.TYPE: "syscall",
            KernelData.NAME: r.name,
            "ret": r.ret,
            "processId": r.pid,
        }), "kernel")


class HcclMonitor(_BaseMonitor):
    """The socket and pipe I/O of this process and its children."""

    _KINDS = (KperfActivityKind.KPERF_ACTIVITY_KIND_HCCL,)

    def __init__(self):
        super().__init__()
        self.user_cb = None

    def start(self, cb: Callable[[HcclData], None]) -> MsptiResult:
        if not callable(cb):
            _error("HcclMonitor.start: the callback is not callable")
            return MsptiResult.MSPTI_ERROR_INVALID_PARAMETER
        self.user_cb = cb
        ret = self._start()
        if ret != MsptiResult.MSPTI_SUCCESS:
            self.user_cb = None
        return ret

    def stop(self) -> MsptiResult:
        ret = super().stop()
        if ret == MsptiResult.MSPTI_SUCCESS:
            self.user_cb = None
        return ret

    def _dispatch(self, r):
        dur = r.end - r.start
        self._call(self.user_cb, HcclData({
            HcclData.KIND: MsptiActivityKind.MSPTI_ACTIVITY_KIND_HCCL.value,
            HcclData.START: r.start,
            HcclData.END: r.end,
            HcclData.DEVICE_ID: r.cpu,
            HcclData.STREAM_ID: r.tid,
            # bytes per ns is GB/s
            HcclData.BANDWIDTH: r.bytes / dur if dur > 0 else 0.0,
            HcclData.NAME: r.name,
            HcclData.COMMNAME: r.channel,
            "bytes": r.bytes,
            "ret": r.ret,
        }), "hccl")


