"""Finding and loading libkperf-bpf.so, and the C prototypes of its functions.

The library is looked up, in order, at:
  1. $KPERF_BPF_LIB (a path; when set, nothing else is tried),
  2. the path `make install` wrote next to the package (_libpath.txt),
  3. the build tree this package sits in (<repo>/build/lib/libkperf-bpf.so),
  4. the system (ctypes.util.find_library("kperf-bpf"), then "libkperf-bpf.so.0").

Functions are bound on first use: a library built before a function existed still loads,
and only calling that function raises (NotImplementedError, naming the library file).

The per-thread error state of the C library is read right after each call the package makes
and kept per Python thread, so that a garbage-collected result freed between a failing call
and kperf.error() cannot wipe the message.
"""

import ctypes
import ctypes.util
import os
import threading
from ctypes import POINTER, c_char_p, c_int, c_int64, c_uint, c_ulong, c_void_p

from . import _cstructs as cs

_PKG_DIR = os.path.dirname(os.path.abspath(__file__))
_LIB_ENV = "KPERF_BPF_LIB"


def _candidates():
    """(origin, path) pairs to try, and the reasons the earlier ones were skipped."""
    skipped = []
    env = os.environ.get(_LIB_ENV)
    if env:
        return [("$" + _LIB_ENV, env)], skipped
    cands = []
    pointer = os.path.join(_PKG_DIR, "_libpath.txt")
    if os.path.exists(pointer):
        try:
            with open(pointer, encoding="utf-8") as f:
                path = f.read().strip()
        except OSError as e:
            skipped.append(f"{pointer}: {e.strerror}")
        else:
            if path:
                cands.append((f"installed ({pointer})", path))
    build = os.path.normpath(os.path.join(_PKG_DIR, "..", "..", "build", "lib", "libkperf-bpf.so"))
    if os.path.exists(build):
        cands.append(("build tree", build))
    found = ctypes.util.find_library("kperf-bpf")
    if found:
        cands.append(("system", found))
    cands.append(("system", "libkperf-bpf.so.0"))
    return cands, skipped


def _load():
    cands, tried = _candidates()
    for origin, path in cands:
        try:
            return ctypes.CDLL(path, use_errno=True), path
        except OSError as e:
            tried.append(f"{path} ({origin}): {e}")
    raise ImportError(
        "kperf: cannot load libkperf-bpf.so. Tried:\n  "
        + "\n  ".join(tried)
        + "\nBuild it (`make` in the kperf-bpf source tree, then PYTHONPATH=<tree>/python), "
        "install it (`make install`), or point "
        + _LIB_ENV
        + " at the library file (e.g. KPERF_BPF_LIB=/usr/local/lib/libkperf-bpf.so.0)."
    )


cdll, path = _load()

_P = POINTER
# name: (restype, argtypes), as declared in include/kperf/pmu.h, symbol.h, kperf.h, pcerrc.h
PROTOTYPES = {
    "Perrorno": (c_int, []),
    "Perror": (c_char_p, []),
    "GetWarn": (c_int, []),
    "GetWarnMsg": (c_char_p, []),
    "PmuOpen": (c_int, [c_int, _P(cs.PmuAttr)]),
    "KperfOpen": (c_int, [c_int, _P(cs.PmuAttr), _P(cs.KperfPmuOpts)]),
    "PmuEventList": (_P(c_char_p), [c_int, _P(c_uint)]),
    "PmuEnable": (c_int, [c_int]),
    "PmuDisable": (c_int, [c_int]),
    "PmuCollect": (c_int, [c_int, c_int, c_uint]),
    "PmuStop": (None, [c_int]),
    "PmuRead": (c_int, [c_int, _P(_P(cs.PmuData))]),
    "PmuAppendData": (c_int, [_P(cs.PmuData), _P(_P(cs.PmuData))]),
    "PmuDumpData": (c_int, [_P(cs.PmuData), c_uint, c_char_p, c_int]),
    "PmuClose": (None, [c_int]),
    "PmuDataFree": (None, [_P(cs.PmuData)]),
    "PmuGetField": (c_int, [_P(cs.SampleRawData), c_char_p, c_void_p, ctypes.c_uint32]),
    "PmuGetFieldExp": (_P(cs.SampleRawField), [_P(cs.SampleRawData), c_char_p]),
    "PmuDeviceBdfList": (_P(c_char_p), [c_int, _P(c_uint)]),
    "PmuDeviceOpen": (c_int, [_P(cs.PmuDeviceAttr), c_uint]),
    "PmuGetDevMetric": (
        c_int,
        [_P(cs.PmuData), c_uint, _P(cs.PmuDeviceAttr), c_uint, _P(_P(cs.PmuDeviceData))],
    ),
    "DevDataFree": (None, [_P(cs.PmuDeviceData)]),
    "PmuGetClusterCore": (c_int, [c_uint, _P(_P(c_uint))]),
    "PmuGetNumaCore": (c_int, [c_uint, _P(_P(c_uint))]),
    "PmuGetCpuFreq": (c_int64, [c_uint]),
    "PmuTraceOpen": (c_int, [c_int, _P(cs.PmuTraceAttr)]),
    "KperfTraceOpen": (c_int, [c_int, _P(cs.PmuTraceAttr), _P(cs.KperfTraceOpts)]),
    "KperfTraceGetExt": (_P(cs.KperfTraceDataExt), [_P(cs.PmuTraceData), c_int]),
    "PmuTraceEnable": (c_int, [c_int]),
    "PmuTraceDisable": (c_int, [c_int]),
    "PmuTraceRead": (c_int, [c_int, _P(_P(cs.PmuTraceData))]),
    "PmuTraceClose": (None, [c_int]),
    "PmuTraceDataFree": (None, [_P(cs.PmuTraceData)]),
    "PmuSysCallFuncList": (_P(c_char_p), [_P(c_uint)]),
    "PmuTraceReadSummary": (c_int, [c_int, _P(_P(cs.PmuTraceSummary))]),
    "PmuTraceSummaryFree": (None, [_P(cs.PmuTraceSummary)]),
    "KperfTraceReadStackSummary": (c_int, [c_int, _P(_P(cs.KperfTraceStackSummary))]),
    "KperfTraceStackSummaryFree": (None, [_P(cs.KperfTraceStackSummary)]),
    "PmuTraceGetStats": (c_int, [c_int, _P(cs.PmuTraceStats)]),
    "PmuSysCallNumber": (c_int, [c_char_p]),
    "PmuEventListFree": (None, []),
    "PmuDeviceBdfListFree": (None, []),
    "PmuSysCallFuncListFree": (None, []),
    "PmuCollectV": (c_int, [_P(c_int), c_uint, c_int]),
    "PmuExit": (None, [c_int]),
    "ResolvePmuDataSymbol": (c_int, [_P(cs.PmuData)]),
    "PmuOpenCpuFreqSampling": (c_int, [c_uint]),
    "PmuReadCpuFreqDetail": (_P(cs.PmuCpuFreqDetail), [_P(c_uint)]),
    "PmuCloseCpuFreqSampling": (None, []),
    "PmuBeginWrite": (c_void_p, [c_char_p, _P(cs.PmuAttr), c_int]),
    "PmuWriteData": (c_int, [c_void_p, _P(cs.PmuData), c_int]),
    "PmuEndWrite": (None, [c_void_p]),
    "PmuOpenWithHWMetric": (c_int, [_P(cs.PmuHwMetricAttr)]),
    "UTraceOpen": (c_int, [_P(cs.UTraceAttr)]),
    "KperfUTraceOpen": (c_int, [_P(cs.UTraceAttr), _P(cs.KperfUTraceOpts)]),
    "KperfUTraceGetStats": (c_int, [c_int, _P(cs.KperfUTraceStats)]),
    "KperfPmuGetUnwindStats": (c_int, [c_int, _P(cs.KperfUnwindStats)]),
    "UTraceEnable": (c_int, [c_int]),
    "UTraceDisable": (c_int, [c_int]),
    "UTraceRead": (c_int, [c_int, _P(_P(cs.UTraceData))]),
    "UTraceDataFree": (None, [_P(cs.UTraceData)]),
    "UTraceClose": (None, [c_int]),
    # activity.h, timeline.h, mstx.h
    "KperfActivityOpen": (c_int, [_P(c_int), c_uint, _P(cs.KperfActivityOpts)]),
    "KperfActivityEnable": (c_int, [c_int]),
    "KperfActivityDisable": (c_int, [c_int]),
    "KperfActivityEnableDomain": (c_int, [c_int, c_char_p]),
    "KperfActivityDisableDomain": (c_int, [c_int, c_char_p]),
    "KperfActivityRead": (c_int, [c_int, c_int, _P(_P(cs.KperfActivityRecord))]),
    "KperfActivityFree": (None, [_P(cs.KperfActivityRecord)]),
    "KperfActivityGetStats": (c_int, [c_int, _P(cs.KperfActivityStats)]),
    "KperfActivityClose": (None, [c_int]),
    "KperfTimelineOpen": (c_int, [_P(cs.KperfTimelineOpts)]),
    "KperfTimelineCheck": (c_int, [_P(cs.KperfTimelineOpts)]),
    "KperfTimelineEnable": (c_int, [c_int]),
    "KperfTimelineDisable": (c_int, [c_int]),
    "KperfTimelineWrite": (c_int, [c_int, c_char_p]),
    "KperfTimelineGetStats": (c_int, [c_int, _P(cs.KperfTimelineStats)]),
    "KperfTimelineClose": (None, [c_int]),
    "mstxMarkA": (None, [c_char_p, c_void_p]),
    "mstxRangeStartA": (ctypes.c_uint64, [c_char_p, c_void_p]),
    "mstxRangeEnd": (None, [ctypes.c_uint64]),
    "mstxDomainCreateA": (c_void_p, [c_char_p]),
    "mstxDomainDestroy": (None, [c_void_p]),
    "mstxDomainMarkA": (None, [c_void_p, c_char_p, c_void_p]),
    "mstxDomainRangeStartA": (ctypes.c_uint64, [c_void_p, c_char_p, c_void_p]),
    "mstxDomainRangeEnd": (None, [c_void_p, ctypes.c_uint64]),
    # symbol.h
    "SymResolverInit": (None, []),
    "SymResolverRecordKernel": (c_int, []),
    "SymResolverRecordModule": (c_int, [c_int]),
    "SymResolverRecordModuleNoDwarf": (c_int, [c_int]),
    "SymResolverIncrUpdateModule": (c_int, [c_int]),
    "SymResolverIncrUpdateModuleNoDwarf": (c_int, [c_int]),
    "SymResolverUpdateModule": (c_int, [c_int, c_char_p, c_ulong]),
    "SymResolverUpdateModuleNoDwarf": (c_int, [c_int, c_char_p, c_ulong]),
    "SymResolverDestroy": (None, []),
    "StackToHash": (_P(cs.Stack), [c_int, _P(c_ulong), c_int]),
    "SymResolverMapAddr": (_P(cs.Symbol), [c_int, c_ulong]),
    "SymResolverAsmCode": (_P(cs.StackAsm), [c_char_p, c_ulong, c_ulong]),
    "SymResolverMapCodeAddr": (_P(cs.Symbol), [c_char_p, c_ulong]),
    "FreeSymbolPtr": (None, [_P(cs.Symbol)]),
    "FreeModuleData": (None, [c_int]),
    "FreeAsmStack": (None, [_P(cs.StackAsm)]),
    "SymGetBuildId": (c_int, [c_char_p, _P(c_char_p)]),
    "GetAsmCodeByAddr": (c_int, [c_char_p, c_ulong, c_ulong, _P(c_char_p)]),
    "SymResolverRecordElf": (c_int, [c_char_p]),
    "SymResolverRecordDwarf": (c_int, [c_char_p]),
    "KperfStackToHash": (_P(cs.Stack), [c_int, _P(c_ulong), c_int, _P(cs.KperfSymOpts)]),
    "KperfMapCodeFrames": (_P(cs.Stack), [c_char_p, c_ulong, _P(cs.KperfSymOpts)]),
    "KperfSymbolGetInfo": (c_int, [c_void_p, _P(cs.KperfSymbolInfo)]),
    "KperfSymbolAliases": (c_int, [c_void_p, _P(_P(c_char_p))]),
}

_bound = {}
_bind_lock = threading.Lock()


def has(name):
    """Does the loaded library export <name>?"""
    return hasattr(cdll, name)


def fn(name):
    """The C function <name> with its prototype; NotImplementedError if the library lacks it."""
    f = _bound.get(name)
    if f is not None:
        return f
    with _bind_lock:
        if not hasattr(cdll, name):
            raise NotImplementedError(
                f"{name} is not exported by {path}: this build of libkperf-bpf does not "
                f"provide it (rebuild or upgrade the library)"
            )
        f = getattr(cdll, name)
        f.restype, f.argtypes = PROTOTYPES[name]
        _bound[name] = f
    return f


def free_returned(ptr):
    """Release an array the library returned that pmu.h gives no free function for
    (PmuSysCallFuncList, PmuEventList, PmuDeviceBdfList, the core lists).

    Every *Free of libkperf-bpf releases through one registry of the arrays it handed out
    (user/core/registry.c): it frees an array it returned, whatever its type, and ignores
    anything else (a NULL, an array already freed, a pointer into a cache). So a list is
    released through PmuTraceDataFree, the free every build of the library exports.
    """
    if ptr:
        fn("PmuTraceDataFree")(ctypes.cast(ptr, _P(cs.PmuTraceData)))


# ---- the error state of the last call, per Python thread ----

_tls = threading.local()


def snapshot():
    """Copy the C library's error and warning of this thread after a call."""
    _tls.state = (
        fn("Perrorno")(),
        _decode(fn("Perror")()),
        fn("GetWarn")(),
        _decode(fn("GetWarnMsg")()),
    )


def state():
    """(errno, message, warn, warn message) of this thread's last kperf call."""
    st = getattr(_tls, "state", None)
    if st is None:
        snapshot()
        st = _tls.state
    return st


def set_state(code, message):
    """Record a failure detected on the Python side (e.g. data used after free)."""
    _tls.state = (code, message, 0, "")


def _decode(b):
    return b.decode("utf-8", "replace") if b else ""


decode = _decode
