"""kperf.profiler's configuration: set_config's keywords (MXNet's names where MXNet has them,
kperf-bpf's for the kernel's sources), their checks, and what profile_all turns on.

A keyword nobody knows is an error that names it; a value of the wrong kind is an error that
names the keyword and the value.
"""

import os

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
        cfg[key] = v
    return cfg


def sources(cfg):
    """{source: on} for the kernel's sources of a session of <cfg>: profile_all turns on
    every one this machine and version support."""
    return {k: (cfg["profile_all"] and k not in UNSUPPORTED) or cfg[k] for k in SOURCES}
