"""Syscall tracing through Python, with exact facts: the syscalls workload makes exactly
50 000 getppid, 2 000 write and 300 failing openat (ENOENT) per worker once released."""

import collections
import errno
import os

import kperf
import pytest
from conftest import requires

pytestmark = [requires("PmuTraceOpen"), pytest.mark.usefixtures("no_bpf_leak")]

GETPPID, WRITES, FAILS = 50000, 2000, 300
# the architecture's numbers: x86_64's, or the generic table's (arm64)
NR = (
    {"getppid": 110, "write": 1, "openat": 257}
    if os.uname().machine == "x86_64"
    else {"getppid": 173, "write": 64, "openat": 56}
)


def trace_workload(workload, attr_kwargs, *args):
    """Trace a released syscalls workload to its end; returns (pid, pd)."""
    w = workload("syscalls", "--wait", *args)
    pd = kperf.trace_open(
        kperf.PmuTraceType.TRACE_SYS_CALL, kperf.PmuTraceAttr(pidList=[w.pid], **attr_kwargs)
    )
    assert pd > 0, kperf.error()
    assert kperf.trace_enable(pd) == 0, kperf.error()
    w.go()
    assert w.wait() == 0
    assert kperf.trace_disable(pd) == 0
    return w.pid, pd


def test_per_call_records_are_exact(workload):
    pid, pd = trace_workload(workload, {})
    try:
        data = kperf.trace_read(pd)
        assert kperf.errorno() == 0 and kperf.error() == "success"
        calls = collections.Counter(r.funcs for r in data.iter)
        assert calls["getppid"] == GETPPID
        assert calls["write"] == WRITES
        assert calls["openat"] == FAILS
        assert data.len == len(data) == sum(calls.values())
        failed = collections.Counter((r.funcs, r.ret) for r in data if r.ret < 0)
        assert failed == {("openat", -errno.ENOENT): FAILS}
        for r in data:
            assert (r.pid, r.tid, r.comm) == (pid, pid, "syscalls")
            assert r.elapsedTime >= 0 and r.startTs > 0 and r.cpu >= 0
            if r.funcs in NR:
                assert r.nr == NR[r.funcs]
        # in time order within the thread
        starts = [r.startTs for r in data]
        assert starts == sorted(starts)
        # a second read returns only what happened since the first: nothing
        again = kperf.trace_read(pd)
        assert again.len == 0 and list(again.iter) == []
        stats = kperf.trace_stats(pd)
        assert stats.records == data.len and stats.dropped == 0 and stats.summaryDropped == 0
        assert stats.ringBufferKb == 16384
        data.free()
    finally:
        kperf.trace_close(pd)


def check_summary(rows, pids, mult=1):
    by = collections.defaultdict(lambda: [0, 0])
    for s in rows:
        assert s.pid in pids, s
        assert sum(s.hist) == s.calls and len(s.hist) == 40
        assert s.minNs <= s.maxNs and s.minNs * s.calls <= s.totalNs <= s.maxNs * s.calls
        assert s.comm == "syscalls"
        by[s.funcs][0] += s.calls
        by[s.funcs][1] += s.errors
    rows_text = "\n".join(map(repr, rows))
    assert by["getppid"] == [GETPPID * mult, 0], rows_text
    assert by["write"] == [WRITES * mult, 0], rows_text
    assert by["openat"] == [FAILS * mult, FAILS * mult], rows_text


def test_summary_is_exact(workload):
    pid, pd = trace_workload(workload, {})
    try:
        rows = kperf.trace_read_summary(pd)
        check_summary(rows, {pid})
        # sorted by pid, then total time descending
        totals = [s.totalNs for s in rows]
        assert totals == sorted(totals, reverse=True)
        assert {s.funcs: s.nr for s in rows if s.funcs in NR} == NR
        # cumulative: reading again gives the same
        assert kperf.trace_read_summary(pd) == rows
    finally:
        kperf.trace_close(pd)


def test_summary_only_with_threads_and_children(workload):
    pid, pd = trace_workload(
        workload,
        {"summaryOnly": True, "includeNewFork": True},
        "--threads",
        2,
        "--children",
        1,
    )
    try:
        data = kperf.trace_read(pd)
        assert data.len == 0 and kperf.errorno() == 0, kperf.error()
        rows = kperf.trace_read_summary(pd)
        pids = {s.pid for s in rows}
        assert pid in pids and len(pids) == 2, rows  # the parent and its child
        check_summary(rows, pids, mult=4)  # (children + 1) * threads
        assert kperf.trace_stats(pd).ringBufferKb == 0
    finally:
        kperf.trace_close(pd)


def test_funcs_filter(workload):
    pid, pd = trace_workload(workload, {"funcs": ["getppid", "openat"]})
    try:
        data = kperf.trace_read(pd)
        assert collections.Counter(r.funcs for r in data) == {"getppid": GETPPID, "openat": FAILS}
        assert {s.funcs for s in kperf.trace_read_summary(pd)} == {"getppid", "openat"}
    finally:
        kperf.trace_close(pd)


def test_min_duration_keeps_summary_exact(workload):
    # no call lasts an hour: no per-call record, the summary still counts every call
    pid, pd = trace_workload(workload, {"minDurationNs": 3600 * 10**9})
    try:
        assert kperf.trace_read(pd).len == 0
        check_summary(kperf.trace_read_summary(pd), {pid})
    finally:
        kperf.trace_close(pd)


def test_trace_object_context_manager(workload):
    w = workload("syscalls", "--wait")
    with kperf.Trace(pidList=[w.pid], funcs=["openat"]) as t:
        assert isinstance(t.pd, int) and t.pd > 0
        t.enable()
        w.go()
        w.wait()
        t.disable()
        with t.read() as data:
            assert [r.ret for r in data] == [-errno.ENOENT] * FAILS
        (row,) = t.summary()
        assert (row.funcs, row.calls, row.errors, row.pid) == ("openat", FAILS, FAILS, w.pid)
        assert t.stats().records == FAILS
        pd = t.pd
    assert t.closed
    # the handle is gone
    assert kperf.trace_read(pd).len == -1
    assert kperf.errorno() == kperf.Error.LIBPERF_ERR_INVALID_PD
    with pytest.raises(kperf.KperfError) as e:
        t.read()
    assert e.value.errno == kperf.Error.LIBPERF_ERR_INVALID_PD


def test_trace_object_raises_on_failure():
    with pytest.raises(kperf.KperfError) as e:
        kperf.Trace(funcs=["no_such_syscall"])
    assert e.value.errno == kperf.Error.LIBPERF_ERR_INVALID_SYSCALL_FUN == 1039
    assert "no_such_syscall" in e.value.message
    assert kperf.errorno() == 1039


def test_sys_call_func_list():
    names = kperf.sys_call_func_list()
    assert "getppid" in names and "openat" in names and "read" in names
    assert "cycles" not in names
    assert len(names) == len(set(names)) > 250  # arm64's generic table has about 290
    assert all(isinstance(n, str) and n for n in names)
    assert kperf.syscall_number("getppid") == NR["getppid"]
    assert kperf.syscall_number("no_such_syscall") == -1
    assert kperf.errorno() == 1039


def test_handle_accepts_trace_object(workload):
    w = workload("syscalls", "--wait", "--getppid", 10, "--writes", 0, "--fails", 0)
    with kperf.Trace(pidList=[w.pid], funcs=["getppid"]) as t:
        assert kperf.trace_enable(t) == 0  # a Trace stands for its handle
        w.go()
        w.wait()
        assert kperf.trace_disable(t) == 0
        assert kperf.trace_read(t).len == 10
