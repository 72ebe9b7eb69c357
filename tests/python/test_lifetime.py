"""Lifetime of what the library returns: iterating again, freeing twice, reading after free
or after close, freeing by garbage collection, and no memory growth over many cycles.

The memory tests compare, after a warm-up and after the loop, the bytes the C heap has
handed out (every malloc arena, from malloc_info) and the blocks Python has allocated, each
measured once everything freed is freed: exact counts, unlike RSS, which keeps the pages
freed memory leaves and varies with the machine's speed. A leaked array per cycle would
show as megabytes: the limits are far below that and far above allocator noise. BPF load
costs 20-50 ms (ten times that in an emulated guest), so open/close is cycled a hundred
times, and read/free 10 000 times on one handle.
"""

import ctypes
import gc
import os
import sys

import kperf
import pytest
from conftest import bpf_fds, requires
from kperf import _lib

pytestmark = [requires("PmuTraceOpen"), pytest.mark.usefixtures("no_bpf_leak")]


def small_trace(workload, n=10):
    w = workload("syscalls", "--wait", "--getppid", n, "--writes", 0, "--fails", 0)
    pd = kperf.trace_open(
        kperf.PmuTraceType.TRACE_SYS_CALL, kperf.PmuTraceAttr(pidList=[w.pid], funcs=["getppid"])
    )
    assert pd > 0, kperf.error()
    kperf.trace_enable(pd)
    w.go()
    w.wait()
    kperf.trace_disable(pd)
    return pd


def test_iterate_twice_free_twice_use_after_free(workload):
    pd = small_trace(workload)
    try:
        data = kperf.trace_read(pd)
        first = list(data.iter)
        second = [r.funcs for r in data.iter]
        assert len(first) == 10 and second == ["getppid"] * 10
        assert [r.startTs for r in data] == [r.startTs for r in first]
        assert data[0].startTs == first[0].startTs and data[-1].startTs == first[-1].startTs
        assert [r.startTs for r in data[2:5]] == [r.startTs for r in first[2:5]]
        with pytest.raises(IndexError):
            data[10]
        it = data.iter
        next(it)
        data.free()
        data.free()  # harmless
        assert data.freed and data.len == 10
        with pytest.raises(kperf.DataFreedError) as e:
            list(data.iter)
        assert e.value.errno == kperf.Error.LIBPERF_ERR_INVALID_PMU_DATA
        assert "freed" in str(e.value)
        with pytest.raises(kperf.DataFreedError):
            data[0]
        with pytest.raises(kperf.DataFreedError):
            next(it)  # an iterator started before free() stops touching memory too
        with pytest.raises(kperf.DataFreedError):
            data.pointer()
        # records taken out before free() are copies and stay valid
        assert [r.funcs for r in first] == ["getppid"] * 10
        assert first[3].comm == "syscalls"
    finally:
        kperf.trace_close(pd)


def test_c_free_ignores_double_free(workload):
    pd = small_trace(workload)
    try:
        p = ctypes.POINTER(kperf._cstructs.PmuTraceData)()
        assert _lib.fn("PmuTraceRead")(pd, ctypes.byref(p)) == 10
        free = _lib.fn("PmuTraceDataFree")
        free(p)
        free(p)  # ignored by the library's registry
        free(None)
        free(ctypes.cast(ctypes.create_string_buffer(64), type(p)))  # never returned
        # a Python object over an array the C side already freed does not free it again
        assert kperf.trace_read(pd).len == 0
    finally:
        kperf.trace_close(pd)


def test_garbage_collection_frees(workload):
    pd = small_trace(workload)
    try:
        data = kperf.trace_read(pd)
        assert data.len == 10
        rec = data[0]
        del data
        gc.collect()
        # queued, and released at the start of the next kperf call (never in the middle of
        # one, where it could clear the error state)
        assert len(kperf.pmu._pending_frees) == 1
        assert kperf.trace_enable(987654) == -1
        assert kperf.errorno() == kperf.Error.LIBPERF_ERR_INVALID_PD
        assert len(kperf.pmu._pending_frees) == 0
        assert rec.funcs == "getppid"
    finally:
        kperf.trace_close(pd)


def test_context_manager_frees(workload):
    pd = small_trace(workload)
    try:
        with kperf.trace_read(pd) as data:
            assert data.len == 10
        assert data.freed
    finally:
        kperf.trace_close(pd)


def test_read_after_close(workload):
    pd = small_trace(workload)
    data = kperf.trace_read(pd)
    summary = kperf.trace_read_summary(pd)
    kperf.trace_close(pd)
    # read before close: still valid
    assert [r.funcs for r in data] == ["getppid"] * 10
    assert summary[0].calls == 10
    data.free()
    # the handle is gone: every call fails with LIBPERF_ERR_INVALID_PD
    again = kperf.trace_read(pd)
    assert again.len == -1 and len(again) == 0 and list(again.iter) == []
    assert kperf.errorno() == kperf.Error.LIBPERF_ERR_INVALID_PD == 1006
    assert str(pd) in kperf.error()
    again.free()
    assert kperf.trace_enable(pd) == -1 and kperf.errorno() == 1006
    assert kperf.trace_disable(pd) == -1 and kperf.errorno() == 1006
    with pytest.raises(kperf.KperfError) as e:
        kperf.trace_read_summary(pd)
    assert e.value.errno == 1006
    with pytest.raises(kperf.KperfError):
        kperf.trace_stats(pd)
    kperf.trace_close(pd)  # closing twice is harmless


def malloc_totals():
    """(bytes in use, bytes free but kept) over every malloc arena, from glibc's malloc_info.

    mallinfo2 only sees the main arena: a thread of the library (the ring buffer poller)
    allocates from an arena of its own, which glibc may create late, and whose freed memory
    stays mapped (RSS) without being in use."""
    import re
    import tempfile

    libc = ctypes.CDLL(None)
    libc.fopen.restype = ctypes.c_void_p
    with tempfile.NamedTemporaryFile(suffix=".xml") as tmp:
        f = libc.fopen(tmp.name.encode(), b"w")
        libc.malloc_info(0, ctypes.c_void_p(f))
        libc.fclose(ctypes.c_void_p(f))
        xml = open(tmp.name).read()
    # the totals after the last <heap> element cover every arena and the mmapped chunks
    tail = xml[xml.rindex("</heap>") :]
    free = sum(int(v) for v in re.findall(r'<total type="(?:fast|rest)" count="\d+" size="(\d+)"', tail))
    system = int(re.search(r'<system type="current" size="(\d+)"', tail).group(1))
    mmap = int(re.search(r'<total type="mmap" count="\d+" size="(\d+)"', tail).group(1))
    return system - free + mmap, free


def heap_in_use():
    """Bytes the C heap has handed out and not got back, every arena: exact, unlike RSS,
    which keeps pages that freed memory leaves behind."""
    return malloc_totals()[0]


def quiet_heap():
    """(C heap in use, Python blocks) once everything freed is freed: the collector's queued
    frees flushed, and nothing in flight."""
    gc.collect()
    kperf.sys_call_func_list()  # flushes the frees queued by the collector
    return heap_in_use(), sys.getallocatedblocks()


def test_read_free_cycles_do_not_grow_memory(workload):
    # Two workloads of CALLS getppid each, one after the other: the first warms up every
    # path (its records all in the store at once: the largest the store gets), the second
    # runs while 10 000 read/free cycles go on. Each phase ends when every call has been
    # read (the ring buffer holds them all: nothing dropped), so nothing is in flight when
    # memory is measured, however fast or slow the machine: no sleep, no RSS.
    calls = 20000
    w1 = workload("syscalls", "--wait", "--getppid", calls, "--writes", 0, "--fails", 0)
    w2 = workload("syscalls", "--wait", "--getppid", calls, "--writes", 0, "--fails", 0)
    pd = kperf.trace_open(
        kperf.PmuTraceType.TRACE_SYS_CALL,
        kperf.PmuTraceAttr(pidList=[w1.pid, w2.pid], funcs=["getppid"], ringBufferKb=8192),
    )
    assert pd > 0, kperf.error()

    def cycle(i):
        data = kperf.trace_read(pd)
        assert data.len >= 0, kperf.error()
        n = 0
        for r in data:
            n += 1
            if n > 4:
                break
        if i % 2:
            data.free()  # odd cycles free explicitly, even ones by refcount/GC
        return data.len

    def read_all(min_cycles):
        """(records, cycles): cycles until every call of the workload was read"""
        got = i = 0
        while i < min_cycles or got < calls:
            got += cycle(i)
            i += 1
            assert got <= calls, f"{got} records of {calls} calls"
            # a bound, not a time: a lost record ends the test instead of hanging it
            assert i < min_cycles + 10**6, f"{got} records of {calls} calls"
        return got, i

    try:
        assert kperf.trace_enable(pd) == 0
        w1.go()
        assert w1.wait() == 0
        warm, _ = read_all(2000)
        heap0, blocks0 = quiet_heap()
        w2.go()
        records, cycles = read_all(10000)
        assert w2.wait() == 0
        heap1, blocks1 = quiet_heap()
        st = kperf.trace_stats(pd)
        print(
            f"read/free x{cycles}: {records} records; C heap {heap1 - heap0:+} B, "
            f"Python blocks {blocks1 - blocks0:+}"
        )
        assert (warm, records, st.dropped) == (calls, calls, 0)
        # one leaked record array (>= 112 bytes) per cycle would be >= 1.1 MB
        assert heap1 - heap0 < 64 * 1024
        assert blocks1 - blocks0 < 200
    finally:
        kperf.trace_close(pd)


def test_list_cycles_do_not_grow_memory():
    for _ in range(1000):
        kperf.sys_call_func_list()
    heap0, blocks0 = quiet_heap()
    for _ in range(2000):
        names = kperf.sys_call_func_list()
    del names[:]
    heap1, blocks1 = quiet_heap()
    print(f"lists: C heap {heap1 - heap0:+} B, Python blocks {blocks1 - blocks0:+}")
    # 8 bytes leaked per call would show; a leaked list (hundreds of names) is kilobytes
    assert heap1 - heap0 < 16 * 1024, f"C heap grew {heap1 - heap0} B over 2000 lists"
    assert blocks1 - blocks0 < 200


def test_open_close_cycles_do_not_grow_memory():
    attr = kperf.PmuTraceAttr(summaryOnly=True, funcs=["getppid"], summaryEntries=64)
    fds = bpf_fds()
    for _ in range(20):
        pd = kperf.trace_open(kperf.PmuTraceType.TRACE_SYS_CALL, attr)
        assert pd > 0, kperf.error()
        kperf.trace_close(pd)
    heap0, blocks0 = quiet_heap()
    for _ in range(100):
        with kperf.Trace(attr) as t:
            assert t.summary() == []
    del t
    heap1, blocks1 = quiet_heap()
    print(f"open/close: C heap {heap1 - heap0:+} B, Python blocks {blocks1 - blocks0:+}")
    assert bpf_fds() == fds
    # 100 bytes leaked per cycle would show; a leaked handle (its BPF object, maps and
    # programs' descriptions) is kilobytes
    assert heap1 - heap0 < 10 * 1024, f"C heap grew {heap1 - heap0} B over 100 open/close"
    assert blocks1 - blocks0 < 200


def test_dropped_trace_object_is_closed():
    fds = bpf_fds()
    t = kperf.Trace(summaryOnly=True, funcs=["getppid"])
    pd = t.pd
    assert bpf_fds() > fds
    assert kperf.trace_enable(4242) == -1
    del t
    gc.collect()
    assert kperf.errorno() == 1006 and "4242" in kperf.error()  # the error is still there
    assert "getppid" in kperf.sys_call_func_list()  # the next call closes the handle
    assert bpf_fds() == fds
    assert kperf.trace_read(pd).len == -1 and kperf.errorno() == 1006
