"""Every public name of libkperf's Python package exists here with libkperf's shape.

The facts (libkperf_names.py) list, for kperf, kperf.pmu, kperf.perror, kperf.trace_pointer,
ksym, ksym.symbol, _libkperf and its submodules: each name and its kind (class, function,
module, value), each function's and constructor's parameters in order with their defaults,
each class's public attributes, each constant's value. Here each is looked up in this
package: same kind, same parameters (kperf-bpf's own options may follow, keyword-only, and are
listed in ADDITIONS), every attribute present, every value equal.
"""

import importlib
import inspect
import types

import pytest
from libkperf_names import ATTRIBUTES, NAMES, SIGNATURES, VALUES

# kperf-bpf's keyword-only additions to libkperf's parameters, by "module:name"
_TRACE_OPTS = (
    "summaryOnly minDurationNs ringBufferKb cgroupPath includeNewFork fromExec summaryEntries "
    "excludeSelf maxStoredRecords stackEntries"
)
ADDITIONS = {
    "PmuAttr": "aggregate ringBufferKb inlineFrames offCpuOnly blockedKernelStack callGraph "
    "pythonFrames",
    "PmuTraceAttr": _TRACE_OPTS,
    "PmuData": "branch",
    "PmuDataExt": "pa va event lat source branchRecords",
    "UTraceAttr": "ringBufferKb",
    "get_field": "size",
}
# the ctypes layer has no call-graph nor Python-frames choice yet (kperf.PmuAttr's go to
# KperfPmuOpts)
_NO_CALLGRAPH = ADDITIONS["PmuAttr"].replace(" callGraph pythonFrames", "")
ADDITIONS["_libkperf:PmuAttr"] = ADDITIONS["_libkperf.Pmu:PmuAttr"] = _NO_CALLGRAPH


def module(name):
    return importlib.import_module(name)


def kind(obj):
    if isinstance(obj, types.ModuleType):
        return "module"
    if inspect.isclass(obj):
        return "class"
    if callable(obj):
        return "function"
    return "value"


def libkperf_params(obj):
    """The parameters of obj (a function, or a class's constructor) as the facts write them:
    libkperf's, i.e. without the keyword-only ones kperf-bpf adds."""
    out, extra = [], []
    for p in inspect.signature(obj).parameters.values():
        if p.kind == p.KEYWORD_ONLY:
            extra.append(p.name)
        elif p.kind == p.VAR_POSITIONAL:
            out.append("*" + p.name)
        elif p.kind == p.VAR_KEYWORD:
            out.append("**" + p.name)
        elif p.default is p.empty:
            out.append(p.name)
        else:
            out.append(f"{p.name}={p.default!r}")
    return ", ".join(out), extra


def entries(table):
    return sorted(table.items())


ALL_NAMES = [
    (mod, k, name) for mod, kinds in NAMES.items() for k, names in kinds.items()
    for name in names.split()
]


def test_the_facts_are_complete():
    # what the facts hold, so that a truncated table cannot pass quietly
    assert len(ALL_NAMES) == 390
    assert len(SIGNATURES) == 274
    assert sum(len(v.split()) for v in ATTRIBUTES.values()) == 1005
    assert sum(len(v.split()) for v in VALUES.values()) == 464
    assert sorted(n for m, k, n in ALL_NAMES if m == "kperf" and k == "function") == sorted(
        "begin_write close close_cpu_freq_sampling device_bdf_list device_open disable dump "
        "enable end_write error errorno event_list exit get_cluster_core get_cpu_freq "
        "get_device_metric get_field get_field_exp get_numa_core get_warn get_warn_msg open "
        "open_cpu_freq_sampling pmu_open_with_hw_metric read read_cpu_freq_detail "
        "resolvePmuDataSymbol stop sys_call_func_list trace_close trace_disable trace_enable "
        "trace_open trace_read u_trace_close u_trace_disable u_trace_enable u_trace_open "
        "u_trace_read write_data".split()
    )


@pytest.mark.parametrize("mod,expected,name", ALL_NAMES, ids=lambda v: str(v))
def test_name_exists_with_its_kind(mod, expected, name):
    m = module(mod)
    assert hasattr(m, name), f"{mod}.{name} is missing"
    assert kind(getattr(m, name)) == expected, f"{mod}.{name} is not a {expected}"


@pytest.mark.parametrize("key,params", entries(SIGNATURES), ids=lambda v: str(v)[:40])
def test_signature(key, params):
    mod, name = key.split(":")
    ours, extra = libkperf_params(getattr(module(mod), name))
    assert ours == params, f"{key}: ({ours}) where libkperf has ({params})"
    want = ADDITIONS.get(key, ADDITIONS.get(name, ""))
    assert extra == want.split(), f"{key}: unexpected keyword-only {extra}"


@pytest.mark.parametrize("key,names", entries(ATTRIBUTES), ids=lambda v: str(v)[:40])
def test_class_attributes(key, names):
    mod, name = key.split(":")
    cls = getattr(module(mod), name)
    missing = [a for a in names.split() if not hasattr(cls, a)]
    assert not missing, f"{key} lacks {missing}"


@pytest.mark.parametrize("key,values", entries(VALUES), ids=lambda v: str(v)[:40])
def test_constant_values(key, values):
    mod, name = key.split(":")
    cls = getattr(module(mod), name)
    wrong = []
    for item in values.split():
        attr, value = item.split("=")
        if getattr(cls, attr, None) != int(value):
            wrong.append(f"{attr}: {getattr(cls, attr, None)} != {value}")
    assert not wrong, f"{key}: {wrong}"


def test_libkperf_layouts_of_the_module_tree():
    """The quirks of libkperf's tree that code relies on: _libkperf.Symbol is the Symbol
    class while `from _libkperf.Symbol import CtypesStack` imports from the module, and
    ksym.Symbol takes no mangleName where _libkperf.Symbol does."""
    import _libkperf
    import ksym
    from _libkperf.Symbol import CtypesStack, CtypesSymbol

    assert inspect.isclass(_libkperf.Symbol) and _libkperf.Symbol.__name__ == "Symbol"
    assert CtypesStack is _libkperf.CtypesStack and CtypesSymbol is _libkperf.CtypesSymbol
    assert isinstance(_libkperf.Pmu, types.ModuleType)
    assert "mangleName" not in inspect.signature(ksym.Symbol).parameters
    assert "mangleName" in inspect.signature(_libkperf.Symbol).parameters
    s = ksym.Symbol(0x10, "m", "f", "f.c", 3)
    assert (s.addr, s.module, s.symbolName, s.mangleName, s.fileName, s.lineNum) == (
        0x10, "m", "f", "", "f.c", 3
    )
