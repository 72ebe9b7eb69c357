"""Counting and sampling through Python, with exact facts where the kernel gives them: the
syscalls workload makes exactly 50 000 getppid and 300 failing openat per worker, so a
tracepoint counted or sampled on it has exactly those numbers. These tests run once the
counting/sampling module of the C library is merged (they skip until its functions exist).
"""

import ctypes
import errno
import os
import re

import kperf
import pytest
from conftest import REPO, free_pid, requires

COUNTING, SAMPLING = kperf.PmuTaskType.COUNTING, kperf.PmuTaskType.SAMPLING
E = kperf.Error

pytestmark = requires("PmuOpen", "PmuEnable", "PmuDisable", "PmuRead", "PmuClose", "PmuDataFree")


def run(workload, task, attr_kwargs, *args):
    """Open <task> on a released syscalls workload, run it to its end; returns (pid, data)."""
    w = workload("syscalls", "--wait", *args)
    pd = kperf.open(task, kperf.PmuAttr(pidList=[w.pid], **attr_kwargs))
    assert pd > 0, kperf.error()
    try:
        assert kperf.enable(pd) == 0, kperf.error()
        w.go()
        assert w.wait() == 0
        assert kperf.disable(pd) == 0, kperf.error()
        data = kperf.read(pd)
        assert data.len >= 0, kperf.error()
        return w.pid, data
    finally:
        kperf.close(pd)


def total(data, evt):
    return sum(d.count for d in data if d.evt == evt)


def test_counting_tracepoint_is_exact(workload):
    pid, data = run(workload, COUNTING, {"evtList": ["syscalls:sys_enter_getppid", "task-clock"]})
    assert {d.evt for d in data} == {"syscalls:sys_enter_getppid", "task-clock"}
    assert total(data, "syscalls:sys_enter_getppid") == 50000
    assert total(data, "task-clock") > 0
    for d in data:
        assert d.countPercent == -1 or 0 < d.countPercent <= 1.0


def test_counting_new_forks(workload):
    pid, data = run(
        workload,
        COUNTING,
        {"evtList": ["syscalls:sys_enter_getppid"], "includeNewFork": True},
        "--threads",
        2,
        "--children",
        1,
    )
    assert total(data, "syscalls:sys_enter_getppid") == 4 * 50000


@requires("PmuGetField", "PmuGetFieldExp")
def test_sampling_tracepoint_records_and_fields(workload):
    pid, data = run(
        workload, SAMPLING, {"evtList": ["syscalls:sys_exit_openat"], "sampleRate": 1}
    )
    recs = [d for d in data if d.evt == "syscalls:sys_exit_openat"]
    assert sum(d.count for d in recs) == 300 and len(recs) == 300
    ret = ctypes.c_long(0)
    for d in recs:
        assert (d.pid, d.tid, d.comm) == (pid, pid, "syscalls")
        assert d.rawData is not None
        assert kperf.get_field(d, "ret", ctypes.pointer(ret)) == 0, kperf.error()
        assert ret.value == -errno.ENOENT
    small = ctypes.c_int8(0)
    assert kperf.get_field(recs[0], "ret", small) == E.LIBPERF_ERR_INVALID_FIELD_ARGS
    assert kperf.errorno() == E.LIBPERF_ERR_INVALID_FIELD_ARGS
    assert kperf.get_field(recs[0], "no_such_field", ret) == E.LIBPERF_ERR_INVALID_FIELD_ARGS
    assert kperf.errorno() == E.LIBPERF_ERR_INVALID_FIELD_ARGS and "no_such_field" in kperf.error()
    fmt = open("/sys/kernel/tracing/events/syscalls/sys_exit_openat/format").read()
    m = re.search(r"field:(long ret);\s*offset:(\d+);\s*size:(\d+);\s*signed:(\d)", fmt)
    f = kperf.get_field_exp(recs[0], "ret")
    assert (f.field_name, f.field_str, f.offset, f.size, f.is_signed) == (
        "ret",
        m.group(1),
        int(m.group(2)),
        int(m.group(3)),
        m.group(4) == "1",
    )
    data.free()


def worker_lines():
    src = open(os.path.join(REPO, "tests", "workloads", "syscalls.c")).read().splitlines()
    start = next(i for i, line in enumerate(src, 1) if line.startswith("static void *worker("))
    end = next(i for i, line in enumerate(src, 1) if i > start and line == "}")
    return start, end


def test_sampling_stacks_resolve_to_source_lines(workload):
    pid, data = run(
        workload,
        SAMPLING,
        {
            "evtList": ["cpu-clock"],
            "sampleRate": 1000,
            "useFreq": True,
            "callStack": True,
            "symbolMode": kperf.SymbolMode.RESOLVE_ELF_DWARF,
        },
        "--getppid",
        3000000,
        "--writes",
        0,
        "--fails",
        0,
    )
    assert data.len > 0
    start, end = worker_lines()
    in_worker = 0
    for d in data:
        assert d.pid == pid and d.evt == "cpu-clock" and d.count >= 1
        for s in d.stack or []:
            if s.next is not None:
                assert s.next.prev is s
            if s.symbol and s.symbol.symbolName == "worker":
                assert s.symbol.module.endswith("/workloads/syscalls")
                assert s.symbol.fileName.endswith("syscalls.c")
                assert start <= s.symbol.lineNum <= end
                in_worker += d.count
    assert in_worker > 0, "no sample's stack went through worker()"


def test_open_errors():
    def fails(code, word, task=COUNTING, **kw):
        assert kperf.open(task, kperf.PmuAttr(**kw)) == -1
        assert kperf.errorno() == code, kperf.error()
        assert word in kperf.error()

    fails(E.LIBPERF_ERR_INVALID_EVENT, "no-such-event", evtList=["no-such-event"])
    pid = free_pid()
    fails(E.LIBPERF_ERR_INVALID_PIDLIST, str(pid), evtList=["task-clock"], pidList=[pid])
    cpu = os.cpu_count() + 50
    fails(E.LIBPERF_ERR_INVALID_CPULIST, str(cpu), evtList=["cpu-clock"], cpuList=[cpu])
    fails(E.LIBPERF_ERR_INVALID_TASK_TYPE, "7", task=7, evtList=["cpu-clock"])
    for f in (kperf.enable, kperf.disable):
        assert f(4242) == -1 and kperf.errorno() == E.LIBPERF_ERR_INVALID_PD
    assert kperf.read(4242).len == -1 and kperf.errorno() == E.LIBPERF_ERR_INVALID_PD
    kperf.close(4242)


@requires("PmuDumpData")
def test_pmu_object_and_data_after_close(workload, tmp_path):
    w = workload("syscalls", "--wait")
    with kperf.Pmu(COUNTING, evtList=["syscalls:sys_enter_getppid"], pidList=[w.pid]) as p:
        p.enable()
        w.go()
        w.wait()
        p.disable()
        data = p.read()
    assert p.closed
    assert total(data, "syscalls:sys_enter_getppid") == 50000  # still valid after close
    out = tmp_path / "dump.txt"
    assert kperf.dump(data, str(out), 0) == 0, kperf.error()
    assert "syscalls:sys_enter_getppid" in out.read_text()
    data.free()
    with pytest.raises(kperf.DataFreedError):
        kperf.dump(data, str(out), 0)
    with pytest.raises(kperf.KperfError) as e:
        kperf.Pmu(COUNTING, evtList=["no-such-event"])
    assert e.value.errno == E.LIBPERF_ERR_INVALID_EVENT
