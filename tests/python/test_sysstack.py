"""Syscalls with their call stacks through Python (PmuTraceAttr callStack and symbolMode, as
libkperf has them, and kperf-bpf's summary by stack): the sysstack workload calls getppid
300 times from ppid_from_a and 200 times from ppid_from_b. Exact counts per stack, the leaf
user function of each, its line under DWARF; bad input."""

import collections
import ctypes
import os
import time

import kperf
import pytest
from conftest import REPO, requires

pytestmark = [requires("KperfTraceReadStackSummary"), pytest.mark.usefixtures("no_bpf_leak")]

A, B = 300, 200
KERNEL_MIN = 0xFFFF800000000000


def marker_line(marker):
    with open(os.path.join(REPO, "tests", "workloads", "sysstack.c")) as f:
        for n, line in enumerate(f, 1):
            if marker in line and "markers" not in line:
                return n
    raise AssertionError(f"no {marker} in sysstack.c")


def user_leaf(stack):
    for frame in stack:
        if frame.symbol is not None and frame.symbol.addr < KERNEL_MIN:
            return frame.symbol
    return None


def traced(workload, **kw):
    """A sysstack workload traced by pid until its 500 calls are counted (it then waits to be
    killed, so its stacks resolve); returns the disabled trace handle."""
    w = workload("sysstack", "--wait", "--hold", A, B)
    attr = kperf.PmuTraceAttr(funcs=["getppid"], pidList=[w.pid], callStack=True, **kw)
    pd = kperf.trace_open(kperf.PmuTraceType.TRACE_SYS_CALL, attr)
    assert pd > 0, kperf.error()
    assert kperf.trace_enable(pd) == 0, kperf.error()
    w.go()
    # the summary says when every call is in (a fact to wait for, bounded)
    for _ in range(3000):
        rows = kperf.trace_read_summary(pd)
        if rows and rows[0].calls == A + B:
            break
        time.sleep(0.01)
    assert kperf.trace_disable(pd) == 0
    return w, pd


def test_records_carry_the_stack_at_entry_with_lines(workload):
    w, pd = traced(workload, symbolMode=kperf.SymbolMode.RESOLVE_ELF_DWARF)
    try:
        data = kperf.trace_read(pd)
        assert len(data) == A + B
        leaves = collections.Counter()
        for r in data:
            assert r.stack is not None
            assert r.stack.symbol.addr >= KERNEL_MIN, "kernel frames come first"
            leaf = user_leaf(r.stack)
            leaves[leaf.symbolName] += 1
            marker = "SYSSTACK_LINE_A" if leaf.symbolName == "ppid_from_a" else "SYSSTACK_LINE_B"
            assert leaf.fileName.endswith("sysstack.c")
            assert leaf.lineNum == marker_line(marker)
            assert "main" in [f.symbol.symbolName for f in r.stack]
        assert leaves == {"ppid_from_a": A, "ppid_from_b": B}
        # libkperf's way of reading it: a ctypes pointer to struct Stack
        p = ctypes.cast(data[0].stack, ctypes.POINTER(kperf._cstructs.Stack))
        assert p.contents.symbol.contents.addr == data[0].stack.symbol.addr
        data.free()
    finally:
        kperf.trace_close(pd)


def test_summary_by_stack_is_exact(workload):
    w, pd = traced(workload, symbolMode=kperf.SymbolMode.RESOLVE_ELF, summaryOnly=True)
    try:
        assert len(kperf.trace_read(pd)) == 0
        rows = kperf.trace_read_stack_summary(pd)
        by_leaf = {r.userStack.symbol.symbolName: r for r in rows}
        assert set(by_leaf) == {"ppid_from_a", "ppid_from_b"}
        assert by_leaf["ppid_from_a"].calls == A
        assert by_leaf["ppid_from_b"].calls == B
        for r in rows:
            assert (r.funcs, r.pid, r.comm, r.errors) == ("getppid", w.pid, "sysstack", 0)
            assert r.kernelFrames > 0
        assert rows[0].totalNs >= rows[1].totalNs
        assert sum(r.totalNs for r in rows) == kperf.trace_read_summary(pd)[0].totalNs
        st = kperf.trace_stats(pd)
        assert (st.stacksLost, st.stackSummaryDropped) == (0, 0)
    finally:
        kperf.trace_close(pd)


def test_a_full_summary_by_stack_counts_the_rest_in_a_pid_0_row(workload):
    """41 distinct stacks (sysstack --deep 40 400 100) for a summary by stack of 4 rows: the
    calls without a row are in getppid's overflow row, pid 0 "[map full]", one frame "[stack
    table full]"; every row together has the 500 calls."""
    w = workload("sysstack", "--wait", "--hold", "--deep", 40, 400, 100)
    attr = kperf.PmuTraceAttr(funcs=["getppid"], pidList=[w.pid], callStack=True,
                              symbolMode=kperf.SymbolMode.RESOLVE_ELF, summaryOnly=True,
                              summaryEntries=4)
    pd = kperf.trace_open(kperf.PmuTraceType.TRACE_SYS_CALL, attr)
    assert pd > 0, kperf.error()
    try:
        assert kperf.trace_enable(pd) == 0, kperf.error()
        w.go()
        for _ in range(3000):
            rows = kperf.trace_read_summary(pd)
            if rows and rows[0].calls == 500:
                break
            time.sleep(0.01)
        assert kperf.trace_disable(pd) == 0
        rows = kperf.trace_read_stack_summary(pd)
        warning = kperf.get_warn_msg()
        assert sum(r.calls for r in rows) == 500
        own = [r for r in rows if r.pid == w.pid]
        over = {r.comm: r for r in rows if r.pid == 0}
        assert len(own) + len(over) == len(rows) and len(own) <= 4
        st = kperf.trace_stats(pd)
        # the map full (a row the kernel could not allocate would be [no memory]; before
        # Linux 6.4 a full map's -E2BIG, zero-extended on x86-64, was taken for that)
        frames = {"[map full]": "[stack table full]", "[no memory]": "[no memory for a stack row]"}
        for comm, r in over.items():
            assert (r.funcs, r.kernelFrames) == ("getppid", 0)
            assert r.stack.symbol.symbolName == frames[comm] and r.stack.next is None
            assert f"{r.calls} calls are counted in the summary by stack without their " \
                   f"process and stack (pid 0, {frames[comm]})" in warning
        full = over["[map full]"].calls if "[map full]" in over else 0
        nomem = over["[no memory]"].calls if "[no memory]" in over else 0
        assert (st.stackSummaryDropped, st.stackSummaryNoMemory) == (full, nomem)
        assert nomem == 0 and len(own) == 4 and full > 0
    finally:
        kperf.trace_close(pd)


def test_no_symbol_resolve_gives_no_stack(workload):
    w, pd = traced(workload, symbolMode=kperf.SymbolMode.NO_SYMBOL_RESOLVE)
    try:
        data = kperf.trace_read(pd)
        assert len(data) == A + B
        assert all(r.stack is None for r in data)
    finally:
        kperf.trace_close(pd)


def test_bad_input():
    attr = kperf.PmuTraceAttr(funcs=["getppid"], callStack=True, symbolMode=7)
    assert kperf.trace_open(kperf.PmuTraceType.TRACE_SYS_CALL, attr) == -1
    assert kperf.errorno() == kperf.Error.KPERF_ERR_INVALID_ATTR
    assert kperf.error().startswith("symbolMode 7 does not exist: NO_SYMBOL_RESOLVE (0)")

    attr = kperf.PmuTraceAttr(funcs=["getppid"], stackEntries=16)
    assert kperf.trace_open(kperf.PmuTraceType.TRACE_SYS_CALL, attr) == -1
    assert kperf.error() == "stackEntries is for callStack, which is 0"

    pd = kperf.trace_open(kperf.PmuTraceType.TRACE_SYS_CALL, kperf.PmuTraceAttr(funcs=["getppid"]))
    assert pd > 0, kperf.error()
    try:
        with pytest.raises(kperf.KperfError, match="open it with callStack"):
            kperf.trace_read_stack_summary(pd)
    finally:
        kperf.trace_close(pd)
