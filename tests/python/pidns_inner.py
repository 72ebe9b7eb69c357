"""Run inside a PID namespace by test_pidns.py (KPERF_PIDNS_INNER=1, under
`unshare --pid --fork --mount-proc`): the kperf package takes and gives the namespace's pids,
with the same exact facts as on the host. Not collected by `pytest tests/python` (its name is
not test_*.py); anywhere else, every test skips."""

import collections
import os

import kperf
import pytest

pytestmark = [
    pytest.mark.skipif(not os.environ.get("KPERF_PIDNS_INNER"),
                       reason="runs inside a PID namespace, started by test_pidns.py"),
    pytest.mark.usefixtures("no_bpf_leak"),
]

COUNTING, SAMPLING = kperf.PmuTaskType.COUNTING, kperf.PmuTaskType.SAMPLING


def test_inside_a_namespace():
    """This process is a young namespace's, and /proc is that namespace's."""
    assert os.getpid() < 1000
    assert os.readlink("/proc/self") == str(os.getpid())
    assert os.stat("/proc/self/ns/pid").st_ino != 0xEFFFFFFC  # not the initial namespace


def test_trace_by_namespace_pid(workload):
    w = workload("syscalls", "--wait")
    pd = kperf.trace_open(kperf.PmuTraceType.TRACE_SYS_CALL, kperf.PmuTraceAttr(pidList=[w.pid]))
    assert pd > 0, kperf.error()
    try:
        assert kperf.trace_enable(pd) == 0, kperf.error()
        w.go()
        assert w.wait() == 0
        assert kperf.trace_disable(pd) == 0
        data = kperf.trace_read(pd)
        calls = collections.Counter(r.funcs for r in data)
        assert (calls["getppid"], calls["write"], calls["openat"]) == (50000, 2000, 300)
        assert {(r.pid, r.tid, r.comm) for r in data} == {(w.pid, w.pid, "syscalls")}
        assert {r.ret for r in data if r.funcs == "getppid"} == {os.getpid()}
        data.free()
    finally:
        kperf.trace_close(pd)


def run(workload, task, attr_kwargs, name, *args):
    """Open <task> on workload <name> by its namespace pid, released, to its end."""
    w = workload(name, "--wait", *args)
    pd = kperf.open(task, kperf.PmuAttr(pidList=[w.pid], **attr_kwargs))
    assert pd > 0, kperf.error()
    try:
        assert kperf.enable(pd) == 0, kperf.error()
        w.go()
        assert w.wait() == 0
        assert kperf.disable(pd) == 0, kperf.error()
        data = kperf.read(pd)
        assert data.len > 0, kperf.error()
        return w.pid, data
    finally:
        kperf.close(pd)


def test_record_by_namespace_pid(workload):
    pid, data = run(workload, SAMPLING,
                    {"evtList": ["cpu-clock"], "sampleRate": 999, "useFreq": True,
                     "callStack": True, "symbolMode": kperf.SymbolMode.RESOLVE_ELF},
                    "cpuburn", "--ms", 400)
    samples = hot = 0
    for d in data:
        assert (d.pid, d.tid, d.comm) == (pid, pid, "cpuburn")
        samples += d.count
        leaf = next(iter(d.stack or []), None)
        if leaf is not None and leaf.symbol and leaf.symbol.symbolName == "hot_loop":
            hot += d.count
    assert samples > 50
    assert hot * 10 >= samples * 8, f"hot_loop is the leaf of {hot} of {samples} samples"


def test_count_by_namespace_pid(workload):
    pid, data = run(workload, COUNTING, {"evtList": ["syscalls:sys_enter_getppid"]}, "syscalls")
    assert {d.pid for d in data} == {pid}
    assert sum(d.count for d in data) == 50000
