"""kperf.profiler's configuration: set_config's keywords (MXNet's names where MXNet has them,
kperf-bpf's for the kernel's sources), their checks, and what profile_all turns on.

A keyword nobody knows is an error that names it; a value of the wrong kind is an error that
names the keyword and the value. A source this machine's kernel cannot give (asked of the
library: KperfTimelineCheck) is refused when asked for by name, with the library's code and
sentence, and left out by profile_all, which says which and why.
"""

import os

from ..perror import KperfError
from ..timeline import Timeline
from .errors import ProfilerError

# MXNet's keywords about its own engine (operators, NDArray API, server processes): accepted
# so that scripts written for MXNet run; kperf-bpf has nothing of the kind to record.
MXNET_ONLY = ("profile_symbolic", "profile_imperative", "profile_api")

DEFAULTS = {
    "profile_all": False,
    "filename": "profile.json",
    "continuous_dump": True,
    "dump_period": 1.0,
    "aggregate_stats": False,
    "profile_process": "worker",
    # the kernel's view of this process (kperf-bpf): off unless asked or profile_all
    "profile_syscalls": False,
    "profile_cpu": False,
    "profile_markers": False,
    "profile_offcpu": False,
    "profile_memory": False,
    "sample_freq": 999,
    "offcpu_min_us": 50,
    "memory_big_bytes": 1 << 20,
}
DEFAULTS.update({k: False for k in MXNET_ONLY})

SOURCES = ("profile_syscalls", "profile_cpu", "profile_markers", "profile_offcpu",
           "profile_memory")

# each source as KperfTimelineCheck's (Timeline.check's) keyword
_CHECK_KW = {"profile_syscalls": "syscalls", "profile_cpu": "samples",
             "profile_markers": "markers", "profile_offcpu": "off_cpu",
             "profile_memory": "memory"}


def machine_lacks(source):
    """None when this machine's kernel can give <source>, else the KperfError that says
    what it lacks (LIBPERF_ERR_KERNEL_NOT_SUPPORT)."""
    kw = {k: False for k in _CHECK_KW.values()}
    kw[_CHECK_KW[source]] = True
    try:
        Timeline.check(**kw)
    except KperfError as e:
        return e
    return None


def refuse_lacking(source, what):
    """ProfilerError for a source asked for by name that this machine cannot give."""
    e = machine_lacks(source)
    if e is not None:
        raise ProfilerError(f"{what}: {source}: this machine cannot give it: [{e.errno}] "
                            f"{e.message}", errno=e.errno)

# what this version of kperf-bpf cannot put on a timeline, and why (profile_all leaves
# them out; asking for one explicitly is an error that says so)
UNSUPPORTED = {}


def _bool(key, v):
    if not isinstance(v, bool) and v not in (0, 1):
        raise ProfilerError(f"set_config: {key} must be True or False, not {v!r}")
    return bool(v)


def check(current, kwargs):
    """The configuration <current> updated with <kwargs>, checked (a new dict)."""
    cfg = dict(current)
    for key, v in kwargs.items():
        if key not in DEFAULTS:
            raise ProfilerError(
                f"set_config: unknown keyword {key!r} (known: {', '.join(sorted(DEFAULTS))})")
        if key == "filename":
            if isinstance(v, os.PathLike):
                v = os.fspath(v)
            if not isinstance(v, str) or not v:
                raise ProfilerError(f"set_config: filename must be a non-empty path, not {v!r}")
        elif key == "dump_period":
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not v > 0:
                raise ProfilerError(
                    f"set_config: dump_period must be a number of seconds > 0, not {v!r}")
            v = float(v)
        elif key == "profile_process":
            if v != "worker":
                raise ProfilerError(
                    f"set_config: profile_process {v!r}: only 'worker' (this process) exists "
                    "outside MXNet's parameter servers")
        elif key == "memory_big_bytes":
            if isinstance(v, bool) or not isinstance(v, int) or not v >= 1:
                raise ProfilerError(
                    f"set_config: memory_big_bytes must be a size in bytes >= 1, not {v!r}")
        elif key == "offcpu_min_us":
            if isinstance(v, bool) or not isinstance(v, int) or not 1 <= v <= 60000000:
                raise ProfilerError(
                    f"set_config: offcpu_min_us must be 1..60000000 microseconds, not {v!r}")
        elif key == "sample_freq":
            if isinstance(v, bool) or not isinstance(v, int) or not 1 <= v <= 100000:
                raise ProfilerError(
                    f"set_config: sample_freq must be 1..100000 samples a second, not {v!r}")
        else:
            v = _bool(key, v)
            if v and key in UNSUPPORTED:
                raise ProfilerError(f"set_config: {key}: {UNSUPPORTED[key]}")
            if v and key in SOURCES:
                refuse_lacking(key, "set_config")
        cfg[key] = v
    return cfg


def sources(cfg):
    """({source: on}, {source: KperfError}) for the kernel's sources of a session of <cfg>:
    a source asked for by name must be there (ProfilerError otherwise); profile_all turns on
    every other one this machine and version support, and the second dict says which it
    left out and why."""
    on, skipped = {}, {}
    for k in SOURCES:
        if cfg[k]:
            refuse_lacking(k, "set_state('run')")
            on[k] = True
        elif cfg["profile_all"] and k not in UNSUPPORTED:
            e = machine_lacks(k)
            on[k] = e is None
            if e is not None:
                skipped[k] = e
        else:
            on[k] = False
    return on, skipped
