"""The Python side of the calls whose C implementation is not merged yet (PmuOpen, PmuRead,
fields, lists, devices, topology): a stub library (stub_libkperf.c) returning known data is
loaded into a separate interpreter, which checks what kperf passes to C and how it reads,
copies and frees what C returns. The real library's behaviour is tested elsewhere."""

import os
import shutil
import subprocess
import sys
import textwrap

import pytest
from conftest import REPO

HERE = os.path.dirname(os.path.abspath(__file__))

SCRIPT = r"""
import ctypes, gc, kperf
from ctypes import c_uint, c_int64, create_string_buffer, pointer

lib = kperf.libkperf
lib.StubLastAttr.restype = ctypes.c_char_p
lib.StubStats.restype = ctypes.c_char_p
last = lambda: lib.StubLastAttr().decode()
stats = lambda: lib.StubStats().decode()

# ---- PmuAttr: every field reaches C where pmu.h puts it
B = kperf.BranchSampleFilter
attr = kperf.PmuAttr(
    evtList=["cpu-clock", "task-clock"], pidList=[5, 6], cpuList=[0, 1],
    evtAttr=[1, kperf.EvtAttr(2, 500, True)], sampleRate=1000, useFreq=True, excludeKernel=True,
    excludeHost=True, symbolMode=kperf.SymbolMode.RESOLVE_ELF_DWARF,
    callStack=True, dataFilter=kperf.SpeFilter.BRANCH_FILTER | kperf.SpeFilter.TS_ENABLE,
    evFilter=kperf.SpeEventFilter.SPE_EVENT_L1DMISS, minLatency=7, includeNewFork=True,
    branchSampleFilter=B.KPERF_SAMPLE_BRANCH_ANY | B.KPERF_SAMPLE_BRANCH_USER,
    cgroupNameList=["a", "b"], enableBpf=True, perThread=True, aggregate=True, ringBufferKb=64,
    inlineFrames=True, offCpuOnly=True)
pd = kperf.open(kperf.PmuTaskType.SAMPLING, attr)
assert pd == 3, pd
assert last() == ("type=1 evt=cpu-clock,task-clock, pid=5,6, cpu=0,1, group=1:0:00,2:500:10, "
    "cgroup=a,b, period=1000 freq=1000 useFreq=1 excludeUser=0 excludeKernel=1 symbolMode=2 "
    "callStack=1 blockedSample=0 dataFilter=0x100000001 evFilter=8 minLatency=7 includeNewFork=1 "
    "branch=0x9 excludeGuest=0 excludeHost=1 enableUserAccess=0 enableBpf=1 enableHwMetric=0 "
    "enableOnExec=0 perThread=1 aggregate=1 ringBufferKb=64 inlineFrames=1 offCpuOnly=1 "
    "blockedKernelStack=0 sz=40"), last()
# positionally, as libkperf's signature orders them; enableHwMetric is an attribute only
attr = kperf.PmuAttr(["cpu-clock"], None, None, None, 0, False, False, False, True, False, 0,
                     False, True, 0, 0, 0, False, 0, None, True, False, True, False)
attr.enableHwMetric = True
assert kperf.open(kperf.PmuTaskType.SAMPLING, attr) == 3
for part in ("blockedSample=1", "excludeGuest=1 excludeHost=0 enableUserAccess=1 enableBpf=0 "
             "enableHwMetric=1 enableOnExec=1 perThread=0"):
    assert part in last(), last()
attr = kperf.PmuAttr(evtList=["cpu-clock"], evtAttr=[1, 2])
attr.useFreq = False; attr.excludeUser = True; attr.pidList = None; attr.evtAttr = None
assert kperf.open(kperf.PmuTaskType.COUTING, attr) == 3
for part in ("type=0", " pid= ", " group= ", "useFreq=0 excludeUser=1"):
    assert part in last(), last()
assert kperf.open(kperf.PmuTaskType.COUNTING, kperf.PmuAttr(evtList=["bad"])) == -1
assert kperf.errorno() == 1007 and kperf.error() == "unknown event 'bad'"

# ---- PmuRead: records, stacks, topology, ext, raw data
data = kperf.read(3)
assert data.len == 3 and len(data) == 3 and kperf.errorno() == 0
d0, d1, d2 = data.iter
assert (d0.evt, d0.ts, d0.pid, d0.tid, d0.cpu, d0.groupId, d0.comm, d0.period, d0.count,
        d0.countPercent, d0.cgroupName) == (
    "cpu-clock", 123, 10, 11, 1, 2, "app", 1000, 5, 0.5, "cg")
assert d0.cpuTopo == kperf.CpuTopology(1, 0, 0)
names = [s.symbol.symbolName for s in d0.stack]
assert names == ["leaf", "mid", "root"], names
leaf = d0.stack
assert leaf.prev is None and leaf.next.prev is leaf and leaf.next.next.next is None
assert leaf.symbol == kperf.Symbol(
    0x1000, "/usr/bin/app", "leaf", "_Z4leafv", "app.c", 10, 4, 0x1100, 0x1000, 1, "")
assert d0.stack is leaf  # copied once
assert d0.ext == kperf.PmuDataExt(pa=0x10, va=0x20, event=2, lat=5, source=kperf.HitDataSource.HIP_L3)
assert d0.rawData is None
assert (d2.stack, d2.cpuTopo, d2.ext, d2.rawData, d2.comm, d2.cpu) == (
    None, None, None, None, "", -1)
assert d1.rawData is not None and d1.rawData.data != 0

# ---- get_field / get_field_exp, as the documentation calls them
next_comm = create_string_buffer(128)
assert kperf.get_field(d1, "next_comm", next_comm) == 0
assert next_comm.value.decode("utf-8") == "swapper/0" and "last_size=128" in stats()
prev_pid = c_uint(0)
assert kperf.get_field(d1, "prev_pid", pointer(prev_pid)) == 0
assert prev_pid.value == 4242 and "last_size=4" in stats()   # the pointee's size, not the pointer's
v = c_int64(0)
assert kperf.get_field(d1, "prev_pid", v) == 0 and v.value == 4242 and "last_size=8" in stats()
small = create_string_buffer(8)
assert kperf.get_field(d1, "next_comm", small) == 1033 and kperf.errorno() == 1033
assert kperf.get_field(d1.rawData, "prev_pid", ctypes.addressof(v), size=8) == 0
buf = bytearray(16)
assert kperf.get_field(d1, "next_comm", buf) == 0 and bytes(buf).rstrip(b"\0") == b"swapper/0"
assert kperf.get_field(d0, "prev_pid", v) == 1033 and kperf.errorno() == 1033  # no raw data
try:
    kperf.get_field(d1, "prev_pid", ctypes.c_void_p(ctypes.addressof(v)))
    raise AssertionError("a bare address without size must raise")
except TypeError as e:
    assert "size" in str(e)
field = kperf.get_field_exp(d1, "next_comm")
assert (field.field_name, field.field_str, field.size, field.offset, field.is_signed) == (
    "next_comm", "char next_comm[16]", 16, 40, False)
assert (field.fieldName, field.fieldStr, field.isSigned) == (
    "next_comm", "char next_comm[16]", False)
assert kperf.get_field_exp(d1, "nope") is None and kperf.errorno() == 1033

# ---- dump
import tempfile, os
path = os.path.join(tempfile.mkdtemp(), "dump.txt")
assert kperf.dump(data, path, 1) == 0
assert open(path).read() == "len=3 dwf=1 evt0=cpu-clock\n"

# ---- device metrics (the union read by mode)
dev = [kperf.PmuDeviceAttr(metric=kperf.PmuDeviceMetric.PMU_L3_TRAFFIC),
       kperf.PmuDeviceAttr(kperf.PmuDeviceMetric.PMU_PCIE_RX_MRD_LAT, bdf="7a:01.0", port="p0")]
assert kperf.device_open(dev) == 4 and last() == "2:-:-,10:7a:01.0:p0,"
m = kperf.get_device_metric(data, [dev[0]])
assert m.len == 3
a, b, c = m
assert (a.metric, a.count, a.mode, a.coreId, a.bdf, a.channelId) == (2, 1.5, 1, 1, "", 0)
assert (b.mode, b.bdf, b.port, b.coreId) == (4, "7a:01.0", "7a:01.0", 0)
assert (c.mode, c.channelId, c.ddrNumaId, c.socketId, c.coreId) == (5, 2, 0, 1, 0)
m.free(); m.free()

# ---- branch records: only for a task opened with branchSampleFilter in SAMPLING
bdata = kperf.read(4)   # the stub fills the branch view of the union for pd 4
# not opened with branchSampleFilter here: the union is read as SPE fields, never followed
assert bdata[0].ext.branchRecords is None and bdata[0].ext.pa == 2
kperf.pmu._pd_branch[4] = True
bdata2 = kperf.read(4)
br = bdata2[0].ext.branchRecords
assert br.len == 2
assert [(r.fromAddr, r.toAddr, r.cycles, r.misPred, r.predicted) for r in br.iter] == [
    (1, 2, 3, 1, 0), (4, 5, 6, 0, 1)]
bdata.free(); bdata2.free()

# ---- lists and topology: copied, then the C arrays released
assert kperf.event_list(kperf.PmuEventType.TRACE_EVENT) == [
    "sched:sched_switch", "syscalls:sys_enter_openat"]
assert list(kperf.event_list(kperf.PmuEventType.CORE_EVENT)) == ["cpu-clock", "task-clock"]
assert kperf.device_bdf_list(kperf.PmuBdfType.PMU_BDF_TYPE_SMMU) == ["7a:01.0", "7b:02.0"]
assert kperf.get_numa_core(0) == [0, 1]
assert kperf.get_numa_core(1) == [] and kperf.errorno() == 1016
assert kperf.get_cluster_core(1) == [] and kperf.error() == "no clusters on this machine"
assert kperf.get_cpu_freq(0) == 2500000000
assert kperf.get_cpu_freq(6) == -1 and kperf.errorno() == 1062

# ---- lifetime: the PmuData array freed exactly once, after records stay valid
data.free(); data.free()
assert d0.evt == "cpu-clock" and d0.stack.symbol.symbolName == "leaf"   # copies
try:
    d1.rawData
    raise AssertionError("raw data after free must raise")
except kperf.DataFreedError:
    pass
try:
    kperf.get_field(d1, "prev_pid", v)
    raise AssertionError("get_field after free must raise")
except kperf.DataFreedError:
    pass
try:
    kperf.dump(data, path, 0)
    raise AssertionError("dump after free must raise")
except kperf.DataFreedError:
    pass
lost = kperf.read(3)
del lost
gc.collect()
kperf.enable(3)    # flushes the queued free
with kperf.Pmu(kperf.PmuTaskType.COUNTING, evtList=["cpu-clock"]) as p:
    assert p.pd == 3
    p.enable()
    with p.read() as rd:
        assert rd.len == 3
assert stats().startswith("live=0 double=0"), stats()
print("OK")
"""


@pytest.fixture(scope="module")
def stub_lib(tmp_path_factory):
    out = tmp_path_factory.mktemp("stub") / "libstub.so"
    cc = os.environ.get("CC") or "cc"
    if not shutil.which(cc):
        pytest.skip(f"no C compiler ({cc}) here: the arm64 guests of make test-kernels")
    subprocess.run(
        [cc, "-shared", "-fPIC", "-O1", "-Wall", "-Werror", "-I", os.path.join(REPO, "include"),
         "-o", str(out), os.path.join(HERE, "stub_libkperf.c")],
        check=True,
    )
    return str(out)


def test_marshalling_against_stub(stub_lib):
    env = dict(os.environ, KPERF_BPF_LIB=stub_lib, PYTHONPATH=os.path.join(REPO, "python"))
    r = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(SCRIPT)], env=env, capture_output=True, text=True
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "OK"


def test_missing_function_says_so(stub_lib):
    env = dict(os.environ, KPERF_BPF_LIB=stub_lib, PYTHONPATH=os.path.join(REPO, "python"))
    code = (
        "import kperf\n"
        "try:\n"
        "    kperf.trace_open(kperf.PmuTraceType.TRACE_SYS_CALL, kperf.PmuTraceAttr())\n"
        "except NotImplementedError as e:\n"
        "    print(e)\n"
    )
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "KperfTraceOpen is not exported by " + stub_lib in r.stdout
