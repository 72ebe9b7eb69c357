"""kperf - the libkperf Python API on kperf-bpf (pure ctypes over libkperf-bpf.so).

A script written for libkperf's `kperf` documentation runs unchanged:

    import kperf
    attr = kperf.PmuTraceAttr(funcs=["read", "write"])
    pd = kperf.trace_open(kperf.PmuTraceType.TRACE_SYS_CALL, attr)
    if pd == -1:
        print(kperf.error())
    kperf.trace_enable(pd); ...; kperf.trace_disable(pd)
    for rec in kperf.trace_read(pd).iter:
        print(rec.funcs, rec.elapsedTime, rec.pid, rec.tid, rec.cpu, rec.comm)
    kperf.trace_close(pd)

kperf-bpf's additions: kperf.Trace / kperf.Pmu (context managers that raise KperfError),
trace_read_summary() and trace_stats() (the in-kernel syscall summary), and results that
can be iterated again, freed twice, and free themselves when garbage-collected.

The library is found through $KPERF_BPF_LIB, the path `make install` recorded, the build
tree, then the system (see kperf._lib); `kperf.library_path` says which file was loaded.
"""

import sys

if sys.version_info < (3, 7):
    raise ImportError("kperf needs Python 3.7 or later (this is %s)" % sys.version.split()[0])

from . import _lib  # noqa: E402
from .perror import *  # noqa: F401,F403,E402
from .perror import __all__ as _perror_all  # noqa: E402
from .pmu import *  # noqa: F401,F403,E402
from .pmu import __all__ as _pmu_all  # noqa: E402

__version__ = "0.1.0"

#: the libkperf-bpf.so file in use, and its ctypes handle (hasattr(libkperf, "PmuOpen"))
library_path = _lib.path
libkperf = _lib.cdll

__all__ = list(_perror_all) + list(_pmu_all) + ["library_path", "libkperf"]
