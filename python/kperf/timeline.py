"""kperf.timeline - one Chrome trace-event timeline of processes (include/kperf/timeline.h):
their syscalls, CPU samples with stacks, mstx marks and ranges and the slices their threads
spend off the CPU, per process and thread, on one clock. The file opens in ui.perfetto.dev, chrome://tracing and speedscope.

    import kperf.timeline, kperf.mstx
    with kperf.timeline.Timeline() as t:         # this process and its children
        with kperf.mstx.range("step"):
            work()
    t.write("trace.json")

Failures raise kperf.KperfError with the library's code and message.
"""

import ctypes
import os

from . import _cstructs as cs
from . import _lib
from .perror import KperfError, _raise_last
from .pmu import _call

__all__ = ["Timeline"]


def _opts(pids, freq, syscalls, samples, markers, off_cpu, buffer_kb, max_events, probe_files,
          off_cpu_min_us, memory, mem_big_bytes, all_pids=False):
    """struct KperfTimelineOpts, and the arrays it points to (kept alive by the caller)."""
    pids = list(pids) if pids else ([] if all_pids else [os.getpid()])
    parr = (ctypes.c_int * len(pids))(*pids)
    files = [f.encode() if isinstance(f, str) else bytes(f) for f in probe_files]
    farr = (ctypes.c_char_p * max(len(files), 1))(*files)
    opts = cs.KperfTimelineOpts(
        ctypes.sizeof(cs.KperfTimelineOpts), parr if pids else None, len(pids), 0, None,
        int(freq),
        0 if syscalls else 1, 0 if samples else 1, 0 if markers else 1,
        1 if off_cpu else 0, int(buffer_kb), int(max_events),
        farr if files else None, len(files), int(off_cpu_min_us), 1 if memory else 0,
        int(mem_big_bytes), 1 if all_pids else 0,
    )
    return opts, (parr, farr)


class Timeline:
    """KperfTimelineOpen: pids (default: this process), with their children; freq: CPU
    samples per second and thread (0: 999); syscalls / samples / markers: which sources;
    off_cpu: the slices threads spend off the CPU ("blocked" or "preempted", category
    "off-cpu", with the user stack they left with), those shorter than off_cpu_min_us
    (0: 50) counted and left out; memory: the heap in use of each process as a counter
    track "heap in use" and its allocations of at least mem_big_bytes (0: 1 MiB) as instant
    events (category "memory"); buffer_kb: each source's ring buffer; max_events: events
    kept until written (0: 2 Mi); probe_files: files holding kperf's USDT probes beyond
    those found; all_pids: every process instead of pids (perf's -a; not with memory), this
    one's own syscalls left out."""

    def __init__(self, pids=None, freq=0, syscalls=True, samples=True, markers=True,
                 off_cpu=False, buffer_kb=0, max_events=0, probe_files=(), off_cpu_min_us=0,
                 memory=False, mem_big_bytes=0, all_pids=False):
        opts, keep = _opts(pids, freq, syscalls, samples, markers, off_cpu, buffer_kb,
                           max_events, probe_files, off_cpu_min_us, memory, mem_big_bytes,
                           all_pids)
        self._td = _call("KperfTimelineOpen", ctypes.byref(opts))
        del keep
        if self._td < 0:
            self._td = None
            _raise_last()
        self.warning = _lib.state()[3] if _lib.state()[2] else ""

    @staticmethod
    def check(syscalls=True, samples=True, markers=True, off_cpu=False, memory=False):
        """KperfTimelineCheck: None when this machine's kernel has what the sources asked for
        need; else KperfError (LIBPERF_ERR_KERNEL_NOT_SUPPORT) naming the source and what
        the kernel lacks. Loads nothing; whether BPF may be loaded is the open's to say."""
        opts, keep = _opts(None, 0, syscalls, samples, markers, off_cpu, 0, 0, (), 0, memory,
                           0)
        r = _call("KperfTimelineCheck", ctypes.byref(opts))
        del keep
        if r != 0:
            _raise_last()

    @property
    def td(self):
        if self._td is None:
            raise KperfError(1006, "this timeline is closed")
        return self._td

    def _check(self, r):
        if r != 0:
            _raise_last()

    def enable(self):
        self._check(_call("KperfTimelineEnable", self.td))

    def disable(self):
        self._check(_call("KperfTimelineDisable", self.td))

    def write(self, path=None):
        """Write the Chrome trace of everything so far to <path> (None: standard output)."""
        self._check(_call("KperfTimelineWrite", self.td,
                          os.fsencode(path) if path is not None else None))

    def stats(self):
        """dict of struct KperfTimelineStats: syscalls, samples, marks, ranges, openRanges,
        dropped, notKept, offCpuSlices, offCpuShort, offCpuLost, heapChanges, largeAllocs,
        memLost."""
        st = cs.KperfTimelineStats()
        self._check(_call("KperfTimelineGetStats", self.td, ctypes.byref(st)))
        return {f: getattr(st, f) for f, _ in cs.KperfTimelineStats._fields_}

    def close(self):
        if self._td is not None:
            _lib.fn("KperfTimelineClose")(self._td)
            self._td = None

    def __enter__(self):
        self.enable()
        return self

    def __exit__(self, *exc):
        if self._td is not None:
            self.disable()

    def __del__(self):
        try:
            self.close()
        except Exception:  # noqa: BLE001 - interpreter shutdown
            pass
