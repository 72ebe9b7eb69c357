"""kperf.mspti and kperf.mstx: msPTI's names as facts, then the monitors on this process and
on the C workload mstx_wl (tests/workloads/mstx_wl.c) started as its child, with exact counts.

The facts below are msPTI's Python API (MindStudio's mspti package: mspti/__init__.py,
activity_data.py, constant.py, monitor/*.py): public names, enum values, record fields and
the keys they are built from, monitor methods and their parameters.
"""

import inspect
import os
import socket
import subprocess
import threading
import time

import pytest
from conftest import BUILD, no_bpf_leak  # noqa: F401

import kperf.mstx as mstx
from kperf import mspti
from kperf.mspti import (HcclMonitor, KernelMonitor, MarkerData, MsptiActivityFlag,
                         MsptiActivityKind, MsptiActivitySourceKind, MsptiResult,
                         MstxMonitor, RangeMarkerData)

# ---- msPTI's facts ----

MSPTI_ALL = [
    "KernelMonitor", "KernelData",
    "MstxMonitor", "MarkerData", "RangeMarkerData",
    "HcclMonitor", "HcclData",
    "MsptiObjectId", "MsptiResult", "MsptiActivityKind", "MsptiActivityFlag",
    "MsptiActivitySourceKind",
]
ENUM_FACTS = {
    "MsptiResult": {"MSPTI_SUCCESS": 0, "MSPTI_ERROR_INVALID_PARAMETER": 1,
                    "MSPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED": 2,
                    "MSPTI_ERROR_MAX_LIMIT_REACHED": 3, "MSPTI_ERROR_DEVICE_OFFLINE": 4,
                    "MSPTI_ERROR_INNER": 999, "MSPTI_ERROR_FORCE_INT": 0x7FFFFFFF},
    "MsptiActivityKind": {"MSPTI_ACTIVITY_KIND_INVALID": 0, "MSPTI_ACTIVITY_KIND_MARKER": 1,
                          "MSPTI_ACTIVITY_KIND_KERNEL": 2, "MSPTI_ACTIVITY_KIND_API": 3,
                          "MSPTI_ACTIVITY_KIND_HCCL": 4, "MSPTI_ACTIVITY_KIND_COUNT": 5,
                          "MSPTI_ACTIVITY_KIND_FORCE_INT": 0x7FFFFFFF},
    "MsptiActivityFlag": {"MSPTI_ACTIVITY_FLAG_NONE": 0,
                          "MSPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS": 1,
                          "MSPTI_ACTIVITY_FLAG_MARKER_START": 2,
                          "MSPTI_ACTIVITY_FLAG_MARKER_END": 4,
                          "MSPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS_WITH_DEVICE": 8,
                          "MSPTI_ACTIVITY_FLAG_MARKER_START_WITH_DEVICE": 16,
                          "MSPTI_ACTIVITY_FLAG_MARKER_END_WITH_DEVICE": 32},
    "MsptiActivitySourceKind": {"MSPTI_ACTIVITY_SOURCE_KIND_HOST": 0,
                                "MSPTI_ACTIVITY_SOURCE_KIND_DEVICE": 1},
}
# record class -> (the keys of the dict it is built from, its attributes after construction)
RECORD_FACTS = {
    "KernelData": ({"KIND": "kind", "START": "start", "END": "end", "DEVICE_ID": "deviceId",
                    "STREAM_ID": "streamId", "CORRELATION_ID": "correlationId",
                    "TYPE": "type", "NAME": "name"},
                   ["kind", "start", "end", "device_id", "stream_id", "correlation_id",
                    "type", "name"]),
    "MarkerData": ({"KIND": "kind", "FLAG": "flag", "SOURCE_KIND": "sourceKind",
                    "TIMESTAMP": "timestamp", "ID": "id", "NAME": "name",
                    "DOMAIN": "domain"},
                   ["kind", "flag", "source_kind", "timestamp", "id", "object_id", "name",
                    "domain"]),
    "HcclData": ({"KIND": "kind", "START": "start", "END": "end", "DEVICE_ID": "deviceId",
                  "STREAM_ID": "streamId", "BANDWIDTH": "bandWidth", "NAME": "name",
                  "COMMNAME": "commName"},
                 ["kind", "start", "end", "device_id", "stream_id", "bandwidth", "name",
                  "comm_name"]),
    "MsptiObjectId": ({"PROCESS_ID": "processId", "THREAD_ID": "threadId",
                       "DEVICE_ID": "deviceId", "STREAM_ID": "streamId"},
                      ["process_id", "thread_id", "device_id", "stream_id"]),
}
RANGE_FIELDS = ["kind", "source_kind", "id", "object_id", "name", "domain", "start", "end"]
# class -> method -> its parameters (msPTI's monitor/*.py)
METHOD_FACTS = {
    "MstxMonitor": {"start": ["self", "mark_cb", "range_cb"], "stop": ["self"],
                    "enable_domain": ["self", "domain_name"],
                    "disable_domain": ["self", "domain_name"]},
    "KernelMonitor": {"start": ["self", "cb"], "stop": ["self"]},
    "HcclMonitor": {"start": ["self", "cb"], "stop": ["self"]},
}
CLASSMETHOD_FACTS = {"set_buffer_size": ["size"], "flush_all": [], "flush_period": ["time_ms"]}


def test_mspti_public_names_are_mspti_facts():
    assert mspti.__all__ == MSPTI_ALL
    for name in MSPTI_ALL:
        assert hasattr(mspti, name), name


@pytest.mark.parametrize("name", list(ENUM_FACTS))
def test_mspti_enums_are_mspti_facts(name):
    cls = getattr(mspti, name)
    assert {m.name: m.value for m in cls} == ENUM_FACTS[name]


@pytest.mark.parametrize("name", list(RECORD_FACTS))
def test_mspti_records_are_mspti_facts(name):
    cls = getattr(mspti, name)
    keys, attrs = RECORD_FACTS[name]
    for const, key in keys.items():
        assert getattr(cls, const) == key, f"{name}.{const}"
    rec = cls({})
    assert [a for a in attrs if not hasattr(rec, a)] == []
    # kperf-bpf's additions come after msPTI's fields and never replace one
    assert list(vars(rec))[:len(attrs)] == attrs


def test_mspti_record_defaults_are_mspti_facts():
    m = MarkerData({})
    assert m.kind == MsptiActivityKind.MSPTI_ACTIVITY_KIND_INVALID
    assert m.flag == MsptiActivityFlag.MSPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS
    assert m.source_kind == MsptiActivitySourceKind.MSPTI_ACTIVITY_SOURCE_KIND_HOST
    assert (m.timestamp, m.id, m.name, m.domain) == (0, 0, "", "")
    o = m.object_id
    assert (o.process_id, o.thread_id, o.device_id, o.stream_id) == (-1, -1, 0, 0)
    r = RangeMarkerData()
    assert list(vars(r)) == RANGE_FIELDS
    assert r.kind == MsptiActivityKind.MSPTI_ACTIVITY_KIND_MARKER
    assert (r.id, r.name, r.domain, r.start, r.end) == (0, "", "", 0, 0)


@pytest.mark.parametrize("cls", list(METHOD_FACTS))
def test_mspti_monitor_methods_are_mspti_facts(cls):
    c = getattr(mspti, cls)
    for meth, params in METHOD_FACTS[cls].items():
        assert list(inspect.signature(getattr(c, meth)).parameters) == params, f"{cls}.{meth}"
    for meth, params in CLASSMETHOD_FACTS.items():
        f = getattr(c, meth)
        assert inspect.ismethod(f) and f.__self__ is c, f"{cls}.{meth} is a classmethod"
        assert list(inspect.signature(f).parameters) == params, f"{cls}.{meth}"
    assert inspect.signature(MstxMonitor.start).parameters["mark_cb"].default is not None


# ---- the monitors ----


def wl_path():
    p = os.path.join(BUILD, "workloads", "mstx_wl")
    if not os.access(p, os.X_OK):
        pytest.skip(f"{p} is not built (make workloads)")
    return p


def follows_children(monitor):
    """Children are collected where the kernel has attach cookies (5.15); elsewhere the
    open warns that they are not."""
    return "not from their children" not in (monitor._activity.warning
                                             if monitor._activity else "")


@pytest.fixture(autouse=True)
def no_monitor_left():
    """A test that fails half-way leaves no monitor running for the next ones."""
    yield
    for m in list(mspti._running):
        m.stop()


@pytest.fixture
def default_buffer():
    yield
    assert MstxMonitor.set_buffer_size(8) == MsptiResult.MSPTI_SUCCESS


def by_name(items):
    out = {}
    for x in items:
        out.setdefault(x.name, []).append(x)
    return out


def test_mstx_monitor_python_markers(no_bpf_leak):
    marks, ranges = [], []
    m = MstxMonitor()
    assert m.start(marks.append, ranges.append) == MsptiResult.MSPTI_SUCCESS
    for _ in range(25):
        mstx.mark("py-tick")
    with mstx.range("py-outer"):
        with mstx.range("py-inner", domain="py-dom"):
            os.getppid()
    rid = mstx.range_start("py-handoff")
    assert rid > 0
    t = threading.Thread(target=mstx.range_end, args=(rid,))
    t.start()
    t.join()
    d = mstx.domain("py-dom")
    d.mark("py-dmark")
    assert m.stop() == MsptiResult.MSPTI_SUCCESS
    mk, rg = by_name(marks), by_name(ranges)
    assert sorted(mk) == ["py-dmark", "py-tick"] and len(mk["py-tick"]) == 25
    assert {x.domain for x in mk["py-tick"]} == {"default"}
    assert mk["py-dmark"][0].domain == "py-dom"
    assert sorted(rg) == ["py-handoff", "py-inner", "py-outer"]
    outer, inner = rg["py-outer"][0], rg["py-inner"][0]
    assert inner.domain == "py-dom" and outer.domain == "default"
    assert outer.start < inner.start < inner.end < outer.end
    assert rg["py-handoff"][0].id == rid
    me = os.getpid(), threading.get_native_id()
    for x in marks:
        assert x.kind == MsptiActivityKind.MSPTI_ACTIVITY_KIND_MARKER
        assert (x.object_id.process_id, x.object_id.thread_id) == me
        assert (x.object_id.device_id, x.object_id.stream_id) == (-1, -1)
    ids = [x.id for x in marks] + [x.id for x in ranges]
    assert len(set(ids)) == len(ids), "ids are unique in a process"
    assert mstx.range_start("not collected") == 0, "nothing collects after stop"


def run_wl(*args):
    out = subprocess.run([wl_path(), *map(str, args)], capture_output=True, text=True,
                         check=True, timeout=60).stdout
    return out


def test_mstx_monitor_c_workload(no_bpf_leak):
    marks, ranges = [], []
    m = MstxMonitor()
    assert m.start(marks.append, ranges.append) == MsptiResult.MSPTI_SUCCESS
    if not follows_children(m):
        m.stop()
        pytest.skip("this kernel has no attach cookies: children's markers are not collected")
    out = run_wl("--marks", 100, "--calls", 7)
    assert m.stop() == MsptiResult.MSPTI_SUCCESS
    mk, rg = by_name(marks), by_name(ranges)
    assert {k: len(v) for k, v in mk.items()} == {"tick": 100, "alpha-mark": 3, "beta-mark": 2}
    assert {x.domain for x in mk["tick"]} == {"default"}
    assert {x.domain for x in mk["alpha-mark"]} == {"alpha"}
    assert {x.domain for x in mk["beta-mark"]} == {"beta"}
    assert {k: len(v) for k, v in rg.items()} == {"outer": 1, "inner": 1, "alpha-range": 1,
                                                  "handoff": 1}
    outer, inner = rg["outer"][0], rg["inner"][0]
    assert outer.start < inner.start < inner.end < outer.end
    assert rg["alpha-range"][0].domain == "alpha"
    ids = dict(kv.split("=") for kv in out.split()[1:])
    assert int(ids["outer"]) == outer.id and int(ids["inner"]) == inner.id
    assert int(ids["handoff"]) == rg["handoff"][0].id
    pids = {x.object_id.process_id for x in marks}
    assert len(pids) == 1 and os.getpid() not in pids


def test_mstx_monitor_range_ended_on_another_thread_and_forked_child(no_bpf_leak):
    marks, ranges = [], []
    m = MstxMonitor()
    assert m.start(marks.append, ranges.append) == MsptiResult.MSPTI_SUCCESS
    if not follows_children(m):
        m.stop()
        pytest.skip("this kernel has no attach cookies: children's markers are not collected")
    run_wl("--marks", 10, "--fork")
    m.stop()
    rg = by_name(ranges)
    # the workload and its forked child: two processes, each its own ids
    assert len(rg["handoff"]) == 2 and len({r.object_id.process_id for r in rg["handoff"]}) == 2
    assert len(by_name(marks)["tick"]) == 20


def test_disable_domain_filters_in_the_kernel(no_bpf_leak):
    marks, ranges = [], []
    m = MstxMonitor()
    assert m.disable_domain("beta") == MsptiResult.MSPTI_SUCCESS  # before start
    assert m.start(marks.append, ranges.append) == MsptiResult.MSPTI_SUCCESS
    if not follows_children(m):
        m.stop()
        pytest.skip("this kernel has no attach cookies: children's markers are not collected")
    assert m.disable_domain("alpha") == MsptiResult.MSPTI_SUCCESS  # while running
    run_wl("--marks", 5)
    MstxMonitor.flush_all()
    # dropped in the kernel: 2 beta marks, 3 alpha marks, the alpha range's start and end
    assert m.filtered == 7
    assert m.enable_domain("alpha") == MsptiResult.MSPTI_SUCCESS
    run_wl("--marks", 5)
    m.stop()
    mk, rg = by_name(marks), by_name(ranges)
    assert "beta-mark" not in mk
    assert len(mk["alpha-mark"]) == 3 and len(rg["alpha-range"]) == 1
    assert len(mk["tick"]) == 10
    assert m.filtered == 9  # and the second run's 2 beta marks


def test_domain_names_are_checked():
    m = MstxMonitor()
    assert m.disable_domain("") == MsptiResult.MSPTI_ERROR_INVALID_PARAMETER
    assert m.enable_domain(None) == MsptiResult.MSPTI_ERROR_INVALID_PARAMETER
    assert m.disable_domain(3) == MsptiResult.MSPTI_ERROR_INVALID_PARAMETER


def test_set_buffer_size(capfd, default_buffer, no_bpf_leak):
    for bad in (0, -1, 257, "8", True, 1.5, None):
        assert MstxMonitor.set_buffer_size(bad) == MsptiResult.MSPTI_ERROR_INVALID_PARAMETER
    assert MstxMonitor.set_buffer_size(256) == MsptiResult.MSPTI_SUCCESS
    assert MstxMonitor.set_buffer_size(2) == MsptiResult.MSPTI_SUCCESS
    m = MstxMonitor()
    assert m.start(lambda _: None) == MsptiResult.MSPTI_SUCCESS
    capfd.readouterr()
    assert KernelMonitor.set_buffer_size(4) == MsptiResult.MSPTI_ERROR_INVALID_PARAMETER
    assert "a monitor is running; set the size before start()" in capfd.readouterr().err
    assert m._activity.stats()["bufferKb"] == 2048
    assert m.stop() == MsptiResult.MSPTI_SUCCESS
    assert KernelMonitor.set_buffer_size(4) == MsptiResult.MSPTI_SUCCESS


def test_full_buffer_is_delivered_before_stop(default_buffer, no_bpf_leak):
    got = []
    assert MstxMonitor.set_buffer_size(1) == MsptiResult.MSPTI_SUCCESS
    m = MstxMonitor()
    assert m.start(got.append) == MsptiResult.MSPTI_SUCCESS
    n = 0
    deadline = time.monotonic() + 20
    while not got and time.monotonic() < deadline:
        for _ in range(2000):
            mstx.mark("fill")
        n += 2000
        time.sleep(0.02)
    assert got, "a full buffer is delivered without flush_all or stop"
    assert len(got) < n
    m.stop()
    assert len(got) + m.dropped == n


def test_flush_all_delivers_what_came(no_bpf_leak):
    got = []
    m = MstxMonitor()
    m.start(got.append)
    for _ in range(7):
        mstx.mark("flushed")
    assert got == []
    assert MstxMonitor.flush_all() == MsptiResult.MSPTI_SUCCESS
    assert len(got) == 7
    m.stop()
    assert len(got) == 7


def test_a_callback_that_raises_loses_nothing_else(capfd, no_bpf_leak):
    seen = []

    def cb(x):
        seen.append(x.name)
        if x.name.endswith(("1", "3")):
            raise ValueError("no " + x.name)

    m = MstxMonitor()
    m.start(cb)
    for i in range(6):
        mstx.mark(f"r{i}")
    m.stop()
    assert seen == ["r0", "r1", "r2", "r3", "r4", "r5"]
    assert m.callback_errors == 2
    err = capfd.readouterr().err
    assert "the mark callback raised ValueError: no r1; the other records are still delivered" in err


def test_process_that_exits_with_a_range_open(no_bpf_leak):
    marks, ranges = [], []
    m = MstxMonitor()
    m.start(marks.append, ranges.append)
    if not follows_children(m):
        m.stop()
        pytest.skip("this kernel has no attach cookies: children's markers are not collected")
    run_wl("--marks", 3, "--open")
    MstxMonitor.flush_all()
    opened = [d.name for d in m.open_ranges.values()]
    m.stop()
    assert opened == ["left-open"]
    assert sorted(by_name(ranges)) == ["alpha-range", "handoff", "inner", "outer"]
    assert len(by_name(marks)["tick"]) == 3


def test_monitor_start_and_stop_misuse(capfd, no_bpf_leak):
    m = MstxMonitor()
    assert m.stop() == MsptiResult.MSPTI_ERROR_INVALID_PARAMETER
    assert m.start(None, None) == MsptiResult.MSPTI_ERROR_INVALID_PARAMETER
    assert "neither mark_cb nor range_cb is callable" in capfd.readouterr().err
    assert KernelMonitor().start("x") == MsptiResult.MSPTI_ERROR_INVALID_PARAMETER
    assert HcclMonitor().start(None) == MsptiResult.MSPTI_ERROR_INVALID_PARAMETER
    assert m.start(print) == MsptiResult.MSPTI_SUCCESS
    assert m.start(print) == MsptiResult.MSPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED
    assert m.stop() == MsptiResult.MSPTI_SUCCESS
    assert m.stop() == MsptiResult.MSPTI_ERROR_INVALID_PARAMETER


def test_kernel_monitor_syscalls(no_bpf_leak):
    got = []
    k = KernelMonitor()
    assert k.start(got.append) == MsptiResult.MSPTI_SUCCESS
    for _ in range(50):
        os.getppid()
    assert k.stop() == MsptiResult.MSPTI_SUCCESS
    me = threading.get_native_id()
    calls = [x for x in got if x.name == "getppid"]
    assert len(calls) == 50
    for x in calls:
        assert x.kind == MsptiActivityKind.MSPTI_ACTIVITY_KIND_KERNEL
        assert x.type == "syscall" and x.stream_id == me and x.process_id == os.getpid()
        assert 0 <= x.device_id < os.cpu_count() and x.start <= x.end
        assert x.ret == os.getppid()
    ids = [x.correlation_id for x in got]
    assert len(set(ids)) == len(ids) and min(ids) > 0
    assert not [x for x in got if x.stream_id == k._reader_tid], "the monitor's own thread"


def test_hccl_monitor_sockets_and_pipes(tmp_path, no_bpf_leak):
    got = []
    a, b = socket.socketpair()
    r, w = os.pipe()
    f = open(tmp_path / "hccl-file.tmp", "wb")
    h = HcclMonitor()
    assert h.start(got.append) == MsptiResult.MSPTI_SUCCESS
    a.send(b"x" * 1000)
    b.recv(4096)
    os.write(w, b"y" * 300)
    os.read(r, 1000)
    os.write(f.fileno(), b"z" * 10)  # a file: not communication
    assert h.stop() == MsptiResult.MSPTI_SUCCESS
    f.close()
    me = threading.get_native_id()
    mine = [(x.name, x.comm_name, x.bytes) for x in got if x.stream_id == me]
    ino = lambda fd: os.fstat(fd).st_ino  # noqa: E731
    assert mine == [("sendto", f"socket:[{ino(a.fileno())}]", 1000),
                    ("recvfrom", f"socket:[{ino(b.fileno())}]", 1000),
                    ("write", f"pipe:[{ino(w)}]", 300),
                    ("read", f"pipe:[{ino(r)}]", 300)]
    for x in got:
        assert x.kind == MsptiActivityKind.MSPTI_ACTIVITY_KIND_HCCL
        assert x.bandwidth == pytest.approx(x.bytes / (x.end - x.start))
    for fd in (r, w):
        os.close(fd)
    a.close()
    b.close()


def test_mstx_python_api_checks_its_input():
    with pytest.raises(TypeError, match="a message must be a str, not int"):
        mstx.mark(3)
    with pytest.raises(ValueError, match="a domain name cannot be empty"):
        mstx.domain("")
    assert mstx.domain("same")._handle == mstx.domain("same")._handle
    with mstx.range("uncollected") as rid:
        assert rid == 0
