"""Run by test_pidns.py inside the shape of a least-privileged container
(container_shape.sh under `unshare --pid --fork --mount-proc`; KPERF_CONTAINER_INNER is
"bind" or "none"): a PID namespace of its own, a fresh read-only sysfs, only CAP_BPF,
CAP_PERFMON, CAP_SYS_PTRACE and CAP_DAC_READ_SEARCH (no CAP_SYS_ADMIN), and the host's
tracefs bound in ("bind", as deploy/daemonset.yaml does) or not ("none").

With the bind, `kperf-bpf trace`, the C library through the Python package (trace, record
with stacks, counting a tracepoint) take and give the namespace's pids with the same exact
facts as on the host. Without it, what needs tracefs is refused with a message that says
so and what to do (mounting it needs CAP_SYS_ADMIN), and what does not need it still works.
Not collected by `pytest tests/python` (its name is not test_*.py); anywhere else, skipped.
"""

import json
import os
import subprocess

import kperf
import pytest

from conftest import BUILD

MODE = os.environ.get("KPERF_CONTAINER_INNER")
pytestmark = pytest.mark.skipif(not MODE, reason="runs in a container's shape, by test_pidns.py")

KPERF = os.path.join(BUILD, "bin", "kperf-bpf")
CAP_DAC_READ_SEARCH, CAP_SYS_PTRACE, CAP_SYS_ADMIN, CAP_PERFMON, CAP_BPF = 2, 19, 21, 38, 39
WITHOUT_TRACEFS = (" needs tracefs, which is not mounted and cannot be mounted here "
                   "(/sys/kernel/tracing: Operation not permitted; mounting needs "
                   "CAP_SYS_ADMIN): mount it (mount -t tracefs nodev /sys/kernel/tracing), "
                   "or bind the host's into the container")


def test_the_shape():
    """Namespace pids, the four capabilities and not CAP_SYS_ADMIN, tracefs as asked."""
    assert os.getpid() < 1000
    with open("/proc/self/status") as f:
        eff = int(next(l for l in f if l.startswith("CapEff:")).split()[1], 16)
    assert eff == sum(1 << c for c in (CAP_DAC_READ_SEARCH, CAP_SYS_PTRACE, CAP_PERFMON,
                                       CAP_BPF)), hex(eff)
    assert os.path.exists("/sys/kernel/tracing/events/sched") == (MODE == "bind")
    assert os.path.exists("/sys/kernel/btf/vmlinux")


def test_trace_of_a_command():
    """tp_btf/raw tracepoints need no tracefs: exact counts either way."""
    r = subprocess.run([KPERF, "trace", "--format", "json", "--",
                        os.path.join(BUILD, "workloads", "syscalls")],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    procs = json.loads(r.stdout)["processes"]
    assert len(procs) == 1, procs
    calls = {s["name"]: s["calls"] for s in procs[0]["syscalls"]}
    assert (calls["getppid"], calls["write"]) == (50000, 2000), calls
    assert procs[0]["pid"] < 1000 and procs[0]["comm"] == "syscalls"


# the same exact facts as in a PID namespace with every capability
from pidns_inner import test_trace_by_namespace_pid  # noqa: E402,F401


def open_on(w, task, **attr):
    pd = kperf.open(task, kperf.PmuAttr(pidList=[w.pid], **attr))
    return pd, (kperf.errorno(), kperf.error())


def refused(w, pd, code, msg, want_code, what):
    """Refused without tracefs: <want_code>, "<what> needs tracefs ..."; <w> let go."""
    assert pd == -1
    assert code == want_code, (code, msg)
    assert msg == what + WITHOUT_TRACEFS, msg
    w.go()
    assert w.wait() == 0


def test_record_with_stacks(workload):
    """Unwinding follows exec through sched:sched_process_exec: needs tracefs."""
    w = workload("cpuburn", "--wait", "--ms", 400)
    pd, (code, msg) = open_on(w, kperf.PmuTaskType.SAMPLING, evtList=["cpu-clock"],
                              sampleRate=999, useFreq=True, callStack=True,
                              symbolMode=kperf.SymbolMode.RESOLVE_ELF)
    if MODE == "none":
        refused(w, pd, code, msg, kperf.Error.LIBPERF_ERR_PATH_INACCESSIBLE,
                "unwinding the user stacks of processes (tracepoint sched:sched_process_exec)")
        return
    assert pd > 0, msg
    try:
        assert kperf.enable(pd) == 0, kperf.error()
        w.go()
        assert w.wait() == 0
        assert kperf.disable(pd) == 0
        data = kperf.read(pd)
        samples = hot = 0
        for d in data:
            assert (d.pid, d.comm) == (w.pid, "cpuburn")
            samples += d.count
            leaf = next(iter(d.stack or []), None)
            if leaf is not None and leaf.symbol and leaf.symbol.symbolName == "hot_loop":
                hot += d.count
        assert samples > 50
        assert hot * 10 >= samples * 8, f"hot_loop is the leaf of {hot} of {samples} samples"
    finally:
        kperf.close(pd)


def test_count_a_tracepoint(workload):
    """A tracepoint's perf event id is read from tracefs."""
    w = workload("syscalls", "--wait")
    pd, (code, msg) = open_on(w, kperf.PmuTaskType.COUNTING,
                              evtList=["syscalls:sys_enter_getppid"])
    if MODE == "none":
        refused(w, pd, code, msg, kperf.Error.LIBPERF_ERR_INVALID_EVENT,
                "a tracepoint event (its id and fields)")
        return
    assert pd > 0, msg
    try:
        assert kperf.enable(pd) == 0, kperf.error()
        w.go()
        assert w.wait() == 0
        assert kperf.disable(pd) == 0
        data = kperf.read(pd)
        assert {d.pid for d in data} == {w.pid}
        assert sum(d.count for d in data) == 50000
    finally:
        kperf.close(pd)
