"""msmemscope - msMemScope's offline analysis API over the recordings of `kperf-bpf memscope`.

Scripts written for msMemScope run unchanged:

    import msmemscope
    print(msmemscope.list_analyzers())                   # ['leaks', 'inefficient']
    print(msmemscope.get_analyzer_config("leaks"))
    msmemscope.check_leaks(input_path="memscope.csv", mstx_info="test", start_index=0)
    msmemscope.check_inefficient(input_path="memscope.csv", mem_size=0,
                                 inefficient_type=["early_allocation"], idle_threshold=3000)
    msmemscope.analyze("leaks", input_path="memscope.csv", mstx_info="test", start_index=0)

    from msmemscope.analyzer import LeaksAnalyzer, LeaksConfig
    LeaksAnalyzer().analyze(LeaksConfig(input_path="memscope.csv", mstx_info="test",
                                        start_index=0))

Each analysis prints its report, as msMemScope's do, and (kperf-bpf's addition) returns its
findings: a LeakReport (`leaks`, `count`, `total_bytes`) or a list of Inefficiency. Bad input
raises MemScopeError (a ValueError) saying what is wrong. Standard library only: a recording
can be analyzed where kperf-bpf is not installed. kperf.memscope is the same API.
"""

import sys

from ._recording import COLUMNS, TABLE, MemScopeError, load  # noqa: F401
from .analyzer import (INEFFICIENT_TYPES, InefficientAnalyzer, InefficientConfig,  # noqa: F401
                       Inefficiency, Leak, LeakReport, LeaksAnalyzer, LeaksConfig)

__all__ = ["list_analyzers", "get_analyzer_config", "analyze", "check_leaks",
           "check_inefficient", "MemScopeError", "load", "COLUMNS"]

_CONFIGS = {
    "leaks": {"input_path": "", "mstx_info": "", "start_index": 0},
    "inefficient": {"input_path": "", "mem_size": 0,
                    "inefficient_type": list(INEFFICIENT_TYPES), "idle_threshold": 3000},
}


def list_analyzers():
    """The analysis types: ['leaks', 'inefficient']."""
    return list(_CONFIGS)


def _check_type(analyzer_type):
    if analyzer_type not in _CONFIGS:
        raise MemScopeError(f"unknown analyzer type {analyzer_type!r}: the types are "
                            f"{', '.join(repr(t) for t in _CONFIGS)}")


def get_analyzer_config(analyzer_type):
    """The parameters analysis <analyzer_type> takes, with their defaults (a new dict)."""
    _check_type(analyzer_type)
    return {k: (list(v) if isinstance(v, list) else v)
            for k, v in _CONFIGS[analyzer_type].items()}


def check_leaks(input_path, mstx_info, start_index=0, out=sys.stdout):
    """Leaks between the start_index-th mark <mstx_info> and the next one, not freed before
    the mark after that: printed, and returned as a LeakReport."""
    return LeaksAnalyzer().analyze(LeaksConfig(input_path, mstx_info, start_index), out=out)


def check_inefficient(input_path, mem_size=0, inefficient_type=None, idle_threshold=3000,
                      out=sys.stdout):
    """early_allocation, late_deallocation and temporary_idleness blocks of at least
    <mem_size> bytes: written into the file, printed, and returned as a list."""
    return InefficientAnalyzer().analyze(
        InefficientConfig(input_path, mem_size, inefficient_type, idle_threshold), out=out)


def analyze(analyzer_type, **kwargs):
    """check_leaks(**kwargs) for "leaks", check_inefficient(**kwargs) for "inefficient"."""
    _check_type(analyzer_type)
    allowed = set(_CONFIGS[analyzer_type]) | {"out"}
    extra = sorted(set(kwargs) - allowed)
    if extra:
        raise MemScopeError(f"analyze({analyzer_type!r}) takes {', '.join(sorted(allowed - {'out'}))}"
                            f", not {', '.join(extra)}")
    if "input_path" not in kwargs:
        raise MemScopeError(f"analyze({analyzer_type!r}) needs input_path")
    if analyzer_type == "leaks":
        if "mstx_info" not in kwargs:
            raise MemScopeError("analyze('leaks') needs mstx_info")
        return check_leaks(**kwargs)
    return check_inefficient(**kwargs)
