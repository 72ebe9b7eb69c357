"""kperf.profiler's state: the recording state the objects look at (STATE), and the session
(set_state('run') to set_state('stop')): its kernel sources (one kperf.timeline.Timeline of
this process and its children), the objects it recorded, the pauses, and the thread that
appends what is new to the file every dump_period seconds (continuous_dump: a stream in the
JSON Array Format, _chrome says how) and does the profiler's other work while the session
runs, so that it is not on the trace. The end of the session writes the file whole.

pause() disables the timeline: the syscall programs are detached, the marker programs told
to drop, the sampling events disabled in the kernel. Nothing of a paused stretch reaches
userspace to be filtered out; the objects check STATE.active themselves.
"""

import os
import queue
import threading
import time

from . import _chrome
from ._stats import Stats

now = time.monotonic_ns  # CLOCK_MONOTONIC: the kernel's timeline clock


class State:
    """What every object call reads: one attribute for "record or not", the running
    stretch (run, a new one at every run and resume), and where records go."""

    def __init__(self):
        self.active = False
        self.run = 0
        self.objs = []  # (ph, cat, name, ts, dur, tid, extra): the running session's
        self.stats = Stats()  # aggregates, kept across sessions until a reset

    def span(self, cat, name, t0, t1, tid, kind):
        self.objs.append(("X", cat, name, t0, t1 - t0, tid, kind))
        self.stats.span(cat, name, t1 - t0)

    def counter(self, cat, name, value, ts, tid):
        self.objs.append(("C", cat, name, ts, 0, tid, value))
        self.stats.counter(cat, name, value)

    def mark(self, cat, name, scope, ts, tid):
        self.objs.append(("i", cat, name, ts, 0, tid, scope))
        self.stats.mark(cat, name)


STATE = State()
THREAD_NAMES = {}  # tid -> the name of the Python thread that recorded there


def thread_names():
    names = dict(THREAD_NAMES)
    names[os.getpid()] = _process_name()
    for t in threading.enumerate():
        if t.native_id is not None:
            names[t.native_id] = t.name
    return names


def _process_name():
    try:
        with open("/proc/self/comm") as f:
            return f.read().strip()
    except OSError:
        return "python"


class _Box(list):
    def __init__(self):
        super().__init__()
        self.done = threading.Event()


class Session:
    """One run of the profiler: started by start(), ended by stop(); its data stays until
    the next session so that dump() and dumps() still see it."""

    def __init__(self, cfg, sources, timeline_cls, skipped=None):
        self.cfg = cfg
        self.sources = sources
        self.skipped = dict(skipped or {})  # profile_all's sources the machine lacks
        self.pid = os.getpid()
        self.timeline = None
        self.kdoc = None  # the kernel's part, once the session stopped
        self.lock = threading.RLock()  # writes of the file
        self.own_tids = set()  # the profiler's threads: left out of the trace
        self.pauses = []  # [start ns, end ns or None]
        self.start_ns = self.stop_ns = None
        self.syscalls_folded = False
        self.objs = []  # (ph, cat, name, ts, dur, tid, extra): STATE.objs while it runs
        self.worker = None  # the profiler's thread (_work)
        self.jobs = queue.Queue()
        self.dump_error = None
        self.stream = None  # continuous_dump: the path of the stream while it runs
        self.streamed = set()  # the keys of the events in it
        on = [k for k, v in sources.items() if v]
        if on:
            self.timeline = timeline_cls(
                pids=[self.pid], freq=cfg["sample_freq"],
                syscalls=sources["profile_syscalls"], samples=sources["profile_cpu"],
                markers=sources["profile_markers"], off_cpu=sources["profile_offcpu"],
                off_cpu_min_us=cfg["offcpu_min_us"] if sources["profile_offcpu"] else 0,
                memory=sources["profile_memory"],
                mem_big_bytes=cfg["memory_big_bytes"] if sources["profile_memory"] else 0)

    # ---- the life of a session ----

    def start(self):
        """Write the first file (continuous_dump), then enable the sources: what the profiler
        itself does from now on is done on its own thread, left out of the trace."""
        self.worker = threading.Thread(target=self._work, name="kperf.profiler", daemon=True)
        self.worker.start()
        self.own_tids.add(self.worker.native_id)
        if self.cfg["continuous_dump"]:
            self._call(self._stream_start, self.cfg["filename"])
        if self.timeline is not None:
            self.timeline.enable()
        self.start_ns = now()
        STATE.objs = self.objs

    def pause(self):
        if self.timeline is not None:
            self.timeline.disable()
        self.pauses.append([now(), None])

    def resume(self):
        self.pauses[-1][1] = now()
        if self.timeline is not None:
            self.timeline.enable()

    def stop(self):
        """End the collection: the kernel's part is read once more and the BPF programs
        closed."""
        self.stop_ns = now()
        if self.pauses and self.pauses[-1][1] is None:
            self.pauses[-1][1] = self.stop_ns
        try:
            if self.timeline is not None:
                self.timeline.disable()
        finally:
            self._end_worker()
        with self.lock:
            if self.timeline is not None:
                try:
                    self.kdoc = _chrome.kernel_doc(self.timeline)
                finally:
                    self.timeline.close()
                    self.timeline = None

    def _end_worker(self):
        if self.worker is not None:
            self.jobs.put(None)
            self.worker.join()
            self.worker = None

    def close(self):
        """Forget the kernel's sources without reading them (an interpreter at exit)."""
        if self.worker is not None:
            self.jobs.put(None)
        if self.timeline is not None:
            self.timeline.close()
            self.timeline = None

    def _work(self):
        """The profiler's thread: the jobs of the other threads (reading the kernel's part,
        writing the file), and every dump_period seconds a write (continuous_dump)."""
        period = self.cfg["dump_period"] if self.cfg["continuous_dump"] else None
        wait = period
        while True:
            try:
                job = self.jobs.get(timeout=wait)
            except queue.Empty:
                job = (self._append, None, None)
            if job is None:
                return
            fn, arg, box = job
            t0 = time.monotonic()
            try:
                res = fn(arg)
            except BaseException as e:  # noqa: BLE001 - handed to the caller
                res = e
                if box is None:
                    self.dump_error = e  # a periodic dump failing does not end the session
            if box is not None:
                box.append(res)
                box.done.set()
            elif period is not None:
                # reading the kernel's part takes longer as the trace grows (and holds the
                # GIL while it parses): the next one waits at least 10 times as long as
                # this one took, so that dumping costs the program at most about a tenth
                # of its time
                wait = max(period, 10 * (time.monotonic() - t0))

    def _call(self, fn, arg):
        """fn(arg) on the profiler's thread while it runs (so that its syscalls are not the
        caller's), here otherwise."""
        if self.worker is None or not self.worker.is_alive():
            return fn(arg)
        box = _Box()
        self.jobs.put((fn, arg, box))
        box.done.wait()
        if isinstance(box[0], BaseException):
            raise box[0]
        return box[0]

    # ---- what it recorded ----

    def kernel(self):
        """The kernel's part so far (None: no kernel source)."""
        return self._call(self._kernel, None)

    def _kernel(self, _):
        with self.lock:
            if self.timeline is not None:
                return _chrome.kernel_doc(self.timeline)
            return self.kdoc

    def _document(self, objs):
        kdoc = self._kernel(None)
        meta = {
            "profiler": "kperf.profiler",
            "sources": sorted(k[len("profile_"):] for k, v in self.sources.items() if v),
            "skipped": {k[len("profile_"):]: {"code": e.errno, "message": e.message}
                        for k, e in sorted(self.skipped.items())},
            "objects": len(objs),
            "paused": [[_chrome.us(a), _chrome.us(b) if b else None] for a, b in self.pauses],
            "running": self.stop_ns is None,
        }
        return _chrome.merge(kdoc, objs, self.pid, thread_names(), self.own_tids, meta)

    def write(self, path):
        """The file at <path>: while the session streams to it, what is new is appended;
        otherwise (the session's end, another path) it is written whole."""
        if self.stream is not None and self.stop_ns is None and path == self.stream:
            self._call(self._append, None)
        else:
            self._call(self._write, path)

    def _stream_start(self, path):
        first = _chrome.stream_start(path, self.pid, thread_names().get(self.pid, "python"))
        self.stream = path
        self.streamed = {first}

    def _append(self, _):
        with self.lock:
            if self.stream is None or self.stop_ns is not None:
                return
            lines = _chrome.stream_events(self._document(list(self.objs)), self.streamed)
            _chrome.stream_append(self.stream, lines)

    def _write(self, path):
        with self.lock:
            doc = self._document(list(self.objs))
            _chrome.write_atomic(path, doc)
            if path == self.stream:
                self.stream = None  # whole now: no more appending to it
