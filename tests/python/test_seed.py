"""The examples of the libkperf Python documentation (shared/seeds/001), as written there,
with software events where the document uses hardware ones (this machine has no PMU) and
shorter sleeps. Each example's body is the document's code; what follows it checks facts.
"""

import os
import re
import time
from ctypes import c_uint, create_string_buffer, pointer

import kperf
import pytest
from conftest import has_core_pmu, requires

TRACEFS = "/sys/kernel/tracing"


def format_fields(event):
    """{field: (declaration, offset, size, signed)} of a tracepoint's format file."""
    path = os.path.join(TRACEFS, "events", *event.split(":"), "format")
    out = {}
    pattern = r"field:([^;]*);\s*offset:(\d+);\s*size:(\d+);\s*signed:(\d+);"
    for m in re.finditer(pattern, open(path).read()):
        decl = m.group(1).strip()
        name = re.sub(r"\[.*\]$", "", decl.split()[-1])
        out[name] = (decl, int(m.group(2)), int(m.group(3)), bool(int(m.group(4))))
    return out


@requires("PmuOpen", "PmuEnable", "PmuDisable", "PmuRead", "PmuClose", "PmuDataFree")
def test_open_enable_read_close_counting(capsys):
    # kperf.open example ("cycles", "branch-misses" -> software events)
    evtList = ["cpu-clock", "task-clock"]
    pmu_attr = kperf.PmuAttr(evtList=evtList)
    pd = kperf.open(kperf.PmuTaskType.COUNTING, pmu_attr)
    if pd == -1:
        print(kperf.error())
        pytest.fail(kperf.error())
    # kperf.enable / kperf.disable example
    kperf.enable(pd)
    time.sleep(0.2)
    kperf.disable(pd)
    # kperf.read example
    pmu_data = kperf.read(pd)
    for data in pmu_data.iter:
        print(f"cpu {data.cpu} count {data.count} evt {data.evt}")
    out = capsys.readouterr().out
    assert "evt cpu-clock" in out and "evt task-clock" in out
    assert {d.evt for d in pmu_data.iter} == {"cpu-clock", "task-clock"}
    for d in pmu_data:
        assert d.countPercent == -1 or 0 < d.countPercent <= 1.0
    pmu_data.free()
    kperf.close(pd)


@requires("PmuOpen")
def test_open_hardware_events_fail_cleanly_without_pmu():
    if has_core_pmu():
        pytest.skip("this machine has a core PMU")
    evtList = ["cycles", "branch-misses"]
    pmu_attr = kperf.PmuAttr(evtList=evtList)
    pd = kperf.open(kperf.PmuTaskType.COUNTING, pmu_attr)
    assert pd == -1
    # perf_event_open's ENOENT, as libkperf reports it
    assert kperf.errorno() == kperf.Error.LIBPERF_ERR_OPEN_INVALID_FILE
    assert "cycles" in kperf.error()


@requires(
    "PmuOpen", "PmuEnable", "PmuDisable", "PmuRead", "PmuClose", "PmuDataFree", "PmuGetField",
    "PmuGetFieldExp",
)
def test_get_field_and_get_field_exp_sched_switch():
    # kperf.get_field example
    evtList = ["sched:sched_switch"]
    # every switch: libkperf's default rate (4000) may give no record in a quiet 0.2 s
    pmu_attr = kperf.PmuAttr(evtList=evtList, sampleRate=1)
    pd = kperf.open(kperf.PmuTaskType.SAMPLING, pmu_attr)
    assert pd > 0, kperf.error()
    kperf.enable(pd)
    time.sleep(0.2)  # 采集时间 (the document: 1 s)
    kperf.disable(pd)
    pmu_data = kperf.read(pd)
    seen = []
    for data in pmu_data.iter:
        next_comm = create_string_buffer(128)
        kperf.get_field(data, "next_comm", next_comm)
        next_comm = next_comm.value.decode("utf-8")

        prev_pid = c_uint(0)
        kperf.get_field(data, "prev_pid", pointer(prev_pid))

        print(f"next_comm={next_comm};prev_pid={prev_pid.value}")
        seen.append((next_comm, prev_pid.value))
    # this process slept: the scheduler switched away from it at least once
    assert os.getpid() in {p for _, p in seen}
    assert all(len(c) < 16 for c, _ in seen)

    # kperf.get_field_exp example (the document's "name" is a placeholder)
    data = pmu_data[0]
    field = kperf.get_field_exp(data, "next_comm")
    print(
        "field_str={} field_name={} size={} offset={} isSigned={}".format(
            field.field_name, field.field_str, field.size, field.offset, field.is_signed
        )
    )
    decl, offset, size, signed = format_fields("sched:sched_switch")["next_comm"]
    assert (field.field_name, field.field_str, field.offset, field.size, field.is_signed) == (
        "next_comm",
        decl,
        offset,
        size,
        signed,
    )
    assert kperf.get_field_exp(data, "no_such_field") is None
    assert kperf.errorno() == kperf.Error.LIBPERF_ERR_INVALID_FIELD_ARGS
    pmu_data.free()
    kperf.close(pd)


@requires("PmuEventList")
def test_event_list():
    # kperf.event_list example
    for evt in kperf.event_list(kperf.PmuEventType.CORE_EVENT):
        print(f"event name: {evt}")
    trace = kperf.event_list(kperf.PmuEventType.TRACE_EVENT)
    assert "sched:sched_switch" in trace and "syscalls:sys_enter_openat" in trace
    assert all(re.fullmatch(r"[\w.-]+:[\w.-]+", e) for e in trace)
    assert set(trace) <= set(kperf.event_list(kperf.PmuEventType.ALL_EVENT))
    assert not any(":" in e for e in kperf.event_list(kperf.PmuEventType.CORE_EVENT))


@requires("PmuTraceOpen")
def test_trace_open_trace_read(capsys):
    # kperf.trace_open example
    funcs = ["read", "write"]
    pmu_trace_attr = kperf.PmuTraceAttr(funcs=funcs)
    pd = kperf.trace_open(kperf.PmuTraceType.TRACE_SYS_CALL, pmu_trace_attr)
    if pd == -1:
        print(kperf.error())
        pytest.fail(kperf.error())
    # trace_enable / trace_disable
    kperf.trace_enable(pd)
    rfd, wfd = os.pipe()
    child = os.fork()
    if child == 0:  # a process of known reads and writes (this one is not traced)
        os.write(wfd, b"x" * 7)
        os.read(rfd, 7)
        os._exit(0)
    os.waitpid(child, 0)
    os.close(rfd)
    os.close(wfd)
    kperf.trace_disable(pd)
    # kperf.trace_read example
    pmu_trace_data = kperf.trace_read(pd)
    for pmu_trace in pmu_trace_data.iter:
        print(
            "funcs: %s, elapsedTime: %d, pid: %d, tid: %d, cpu: %d, comm: %s"
            % (
                pmu_trace.funcs,
                pmu_trace.elapsedTime,
                pmu_trace.pid,
                pmu_trace.tid,
                pmu_trace.cpu,
                pmu_trace.comm,
            )
        )
    mine = [(r.funcs, r.ret) for r in pmu_trace_data.iter if r.pid == child]
    assert mine == [("write", 7), ("read", 7)]
    assert {r.funcs for r in pmu_trace_data.iter} <= {"read", "write"}
    assert f"funcs: write, elapsedTime: 0, pid: {child}, tid: {child}" in capsys.readouterr().out
    # kperf.trace_close
    kperf.trace_close(pd)


@requires("PmuSysCallFuncList")
def test_sys_call_func_list(capsys):
    # kperf.sys_call_func_list example
    for func_name in kperf.sys_call_func_list():
        print(f"syscall function name: {func_name}")
    out = capsys.readouterr().out
    assert "syscall function name: getppid\n" in out
    assert "syscall function name: cycles\n" not in out


@requires("PmuDeviceOpen")
def test_device_open_without_uncore_pmu():
    # kperf.device_open example
    dev_attr = [kperf.PmuDeviceAttr(metric=kperf.PmuDeviceMetric.PMU_L3_TRAFFIC)]
    pd = kperf.device_open(dev_attr)
    if pd == -1:
        print(kperf.error())
    if any(d.startswith(("hisi_", "arm_cmn")) for d in os.listdir("/sys/bus/event_source/devices")):
        pytest.skip("this machine has uncore PMUs")
    assert pd == -1
    assert kperf.errorno() == kperf.Error.LIBPERF_ERR_NOT_SUPPORT_METRIC
    assert kperf.error()


@requires("PmuDeviceBdfList")
def test_device_bdf_list():
    # kperf.device_bdf_list example
    bdf_type = kperf.PmuBdfType.PMU_BDF_TYPE_SMMU
    bdf_list = kperf.device_bdf_list(bdf_type)
    print(bdf_list)
    if any("smmu" in d for d in os.listdir("/sys/bus/event_source/devices")):
        pytest.skip("this machine has SMMU PMUs")
    assert bdf_list == []


@requires("PmuGetCpuFreq")
def test_get_cpu_freq():
    # kperf.get_cpu_freq example (core 6 -> a core that does not exist here, then core 0)
    core = os.cpu_count() + 4
    freq = kperf.get_cpu_freq(core)
    assert freq == -1
    assert kperf.errorno() == kperf.Error.LIBPERF_ERR_CPUFREQ_NOT_CONFIG
    assert str(core) in kperf.error()
    cpu0_freq = kperf.get_cpu_freq(0)
    assert cpu0_freq > 0 or kperf.errorno() != 0, "-1 must come with a reason"


@requires("PmuGetClusterCore", "PmuGetNumaCore")
def test_get_cluster_core_and_numa_core():
    # kperf.get_cluster_core / get_numa_core examples
    clusterId = 1
    cluster_cores = kperf.get_cluster_core(clusterId)
    assert isinstance(cluster_cores, list)
    numaId = 1
    numa_cores = kperf.get_numa_core(numaId)
    nodes = sorted(
        int(n[4:]) for n in os.listdir("/sys/devices/system/node") if re.fullmatch(r"node\d+", n)
    )
    if numaId not in nodes:
        assert numa_cores == [] and kperf.errorno() == kperf.Error.LIBPERF_ERR_KERNEL_NOT_SUPPORT
    for node in nodes:
        text = open(f"/sys/devices/system/node/node{node}/cpulist").read().strip()
        cpus = []
        for part in filter(None, text.split(",")):
            lo, _, hi = part.partition("-")
            cpus.extend(range(int(lo), int(hi or lo) + 1))
        assert kperf.get_numa_core(node) == cpus
