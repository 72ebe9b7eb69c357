"""kperf-bpf's handle objects: Pmu and Trace wrap a task handle as a context manager and
raise KperfError where the libkperf functions return -1."""

from typing import List, Optional

from .attrs import PmuAttr, PmuTraceAttr
from .enums import PmuTaskType, PmuTraceType
from .perror import Error, KperfError, _raise_last
from .pmu import (
    close,
    collect,
    disable,
    enable,
    open,
    read,
    stop,
    trace_close,
    trace_disable,
    trace_enable,
    trace_open,
    trace_read,
    trace_read_summary,
    trace_stats,
)
from .results import PmuData, PmuTraceData, TraceStats, TraceSummary, _pending_frees


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


__all__ = ["Pmu", "Trace"]
