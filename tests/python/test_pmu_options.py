"""PmuAttr's options through Python, on the real library: what a libkperf script sets
(cgroupNameList in SAMPLING, perThread, enableBpf) reaches C and changes
what is collected. The syscalls workload makes exactly --getppid calls per worker, so the
records of syscalls:sys_enter_getppid are exact facts.
"""

import os

import kperf
import pytest
from conftest import requires

COUNTING, SAMPLING = kperf.PmuTaskType.COUNTING, kperf.PmuTaskType.SAMPLING
E = kperf.Error
GETPPID = "syscalls:sys_enter_getppid"
QUIET = ("--writes", 0, "--fails", 0)

pytestmark = requires("PmuOpen", "PmuEnable", "PmuDisable", "PmuRead", "PmuClose", "PmuDataFree")


def collect(task, attr, *workloads):
    """Open <attr>, release <workloads>, wait for them; returns the records."""
    pd = kperf.open(task, attr)
    assert pd > 0, kperf.error()
    try:
        assert kperf.enable(pd) == 0, kperf.error()
        for w in workloads:
            w.go()
        for w in workloads:
            assert w.wait() == 0
        assert kperf.disable(pd) == 0, kperf.error()
        data = kperf.read(pd)
        assert data.len >= 0, kperf.error()
        return data
    finally:
        kperf.close(pd)


@pytest.fixture
def cgroup():
    """A cgroup v2 directory made for the test: (its path, its name under the mount)."""
    root = "/sys/fs/cgroup/unified" if os.path.isdir("/sys/fs/cgroup/unified") else "/sys/fs/cgroup"
    name = f"kperf-py-{os.getpid()}"
    path = os.path.join(root, name)
    try:
        os.mkdir(path)
    except OSError as e:
        pytest.skip(f"cannot create a cgroup v2 directory: {e}")
    yield path, name
    os.rmdir(path)


def test_sampling_a_cgroup_records_its_processes_only(workload, cgroup, no_bpf_leak):
    path, name = cgroup
    inside = workload("syscalls", "--wait", "--getppid", 300, *QUIET)
    outside = workload("syscalls", "--wait", "--getppid", 200, *QUIET)
    with open(os.path.join(path, "cgroup.procs"), "w") as f:
        f.write(f"{inside.pid}\n")
    attr = kperf.PmuAttr(evtList=[GETPPID], cgroupNameList=[name])
    data = collect(SAMPLING, attr, inside, outside)
    assert data.len == 300
    assert {(d.pid, d.evt, d.cgroupName) for d in data} == {(inside.pid, GETPPID, name)}
    data.free()


def test_per_thread_leaves_out_what_starts_after_the_open(workload, no_bpf_leak):
    # 400 getppid in the main thread, 400 more in a child forked after the open
    def run(per_thread):
        w = workload("syscalls", "--wait", "--getppid", 400, "--children", 1, *QUIET)
        attr = kperf.PmuAttr(evtList=[GETPPID], pidList=[w.pid], perThread=per_thread)
        data = collect(SAMPLING, attr, w)
        n, tids = data.len, {d.tid for d in data}
        data.free()
        return n, tids, w.pid

    n, tids, pid = run(True)
    assert (n, tids) == (400, {pid})
    n, tids, pid = run(False)
    assert n == 800 and pid in tids and len(tids) == 2


def test_bpf_mode_counts_the_process(workload, no_bpf_leak):
    w = workload("syscalls", "--wait", "--getppid", 20000, *QUIET)
    attr = kperf.PmuAttr(evtList=["task-clock"], pidList=[w.pid], enableBpf=True)
    data = collect(COUNTING, attr, w)
    assert data.len > 0
    assert {(d.pid, d.tid, d.evt) for d in data} == {(w.pid, w.pid, "task-clock")}
    assert sum(d.count for d in data) > 0
    data.free()
    # libkperf's condition: BPF mode counts processes or cgroups
    assert kperf.open(COUNTING, kperf.PmuAttr(evtList=["task-clock"], enableBpf=True)) == -1
    assert kperf.errorno() == E.LIBPERF_ERR_INVALID_BPF_PARAM, kperf.error()
