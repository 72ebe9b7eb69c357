"""kperf - libkperf's Python API on kperf-bpf (pure ctypes over libkperf-bpf.so).

A script written for libkperf's `kperf` module (and its `ksym` and `_libkperf` modules, also
in this distribution) runs unchanged:

    import kperf
    attr = kperf.PmuTraceAttr(funcs=["read", "write"])
    pd = kperf.trace_open(kperf.PmuTraceType.TRACE_SYS_CALL, attr)
    if pd == -1:
        print(kperf.error())
    kperf.trace_enable(pd); ...; kperf.trace_disable(pd)
    for rec in kperf.trace_read(pd).iter:
        print(rec.funcs, rec.elapsedTime, rec.pid, rec.tid, rec.cpu, rec.comm)
    kperf.trace_close(pd)

kperf-bpf's modules: kperf.mstx (mstx markers), kperf.mspti (msPTI's activity monitors),
kperf.activity, kperf.timeline (one Chrome trace of syscalls, samples and markers), and
kperf.memscope (msMemScope's analyzers of `kperf-bpf memscope` recordings; imported by name,
it is the msmemscope package).

kperf-bpf's additions: kperf.Trace / kperf.Pmu (context managers that raise KperfError),
trace_read_summary() and trace_stats() (the in-kernel syscall summary), kperf-bpf's options as
keyword-only arguments (PmuAttr(aggregate=...), PmuTraceAttr(summaryOnly=...)), and results
that can be iterated again, indexed, freed twice, and free themselves when garbage-collected.

The library is found through $KPERF_BPF_LIB, the path `make install` recorded, the build
tree, then the system (see kperf._lib); `kperf.library_path` says which file was loaded.
"""

import sys

if sys.version_info < (3, 7):
    raise ImportError("kperf needs Python 3.7 or later (this is %s)" % sys.version.split()[0])

from . import _lib  # noqa: E402
from . import attrs, cpufreq, enums, handles, perfdata, perror, pmu, results  # noqa: E402
from . import symbols, trace_pointer, utrace  # noqa: E402
# kperf-bpf's own modules, beside libkperf's names: markers, msPTI's monitors, the timeline
from . import activity, mspti, mstx, timeline  # noqa: E402
from .attrs import *  # noqa: F401,F403,E402
from .cpufreq import *  # noqa: F401,F403,E402
from .enums import *  # noqa: F401,F403,E402
from .handles import *  # noqa: F401,F403,E402
from .perfdata import *  # noqa: F401,F403,E402
from .perror import *  # noqa: F401,F403,E402
from .pmu import *  # noqa: F401,F403,E402
from .results import *  # noqa: F401,F403,E402
from .symbols import *  # noqa: F401,F403,E402
from .trace_pointer import *  # noqa: F401,F403,E402
from .utrace import *  # noqa: F401,F403,E402

__version__ = "0.1.0"

#: the libkperf-bpf.so file in use, and its ctypes handle (hasattr(libkperf, "PmuOpen"))
library_path = _lib.path
libkperf = _lib.cdll

__all__ = (
    attrs.__all__
    + cpufreq.__all__
    + enums.__all__
    + handles.__all__
    + perfdata.__all__
    + perror.__all__
    + pmu.__all__
    + results.__all__
    + symbols.__all__
    + trace_pointer.__all__
    + utrace.__all__
    + ["library_path", "libkperf"]
)
