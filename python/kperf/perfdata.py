"""Writing samples as a perf.data file (libkperf's begin_write, write_data, end_write), for
`perf report -i` and `perf script -i`."""

import ctypes

from .attrs import PmuAttr
from ._convert import to_bytes
from .perror import DataFreedError
from .pmu import _call
from .results import PmuData


def begin_write(path: str, pattr: PmuAttr, addIdHdr) -> int:
    """Start the perf.data file <path> (created or emptied) for the records of a SAMPLING
    task opened with <pattr> (PmuBeginWrite); addIdHdr: side-band records carry the sample
    id fields. Returns the file handle (an int) for write_data/end_write, or None
    (kperf.error())."""
    if not isinstance(pattr, PmuAttr):
        raise TypeError(f"pattr must be a kperf.PmuAttr, not {type(pattr).__name__}")
    return _call("PmuBeginWrite", to_bytes(path, "path"), ctypes.byref(pattr._c), int(addIdHdr))


def write_data(file: int, data: PmuData) -> int:
    """Append the records of <data> (from kperf.read) to <file> (PmuWriteData), with the
    comm and mmap records perf needs for their stacks. Returns 0, or an error code."""
    if not isinstance(data, PmuData):
        raise TypeError(f"data must be a kperf.PmuData, not {type(data).__name__}")
    with data._lock:
        if data._freed:
            raise DataFreedError(data._what)
        return _call("PmuWriteData", file, data._ptr, len(data))


def end_write(file: int) -> None:
    """Finish <file> (PmuEndWrite): feature sections and header; the handle is released.
    On failure the file is removed and kperf.error() says why."""
    _call("PmuEndWrite", file)


__all__ = ["begin_write", "write_data", "end_write"]
