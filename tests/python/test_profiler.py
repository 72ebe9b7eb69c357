"""kperf.profiler with the kernel's sources (BPF: run under the test lock): exact counts and
values of known objects and syscalls in the Chrome trace and in dumps(), the syscalls nested
in the Task that made them, nothing of a paused section (objects, syscalls, mstx marks),
MXNet's example unchanged, a file that survives SIGKILL, and a session in this process that
leaves no BPF object behind.
"""

import json
import os
import signal
import subprocess
import sys
import time

import pytest
from chrome_trace import check, events, ns, recover_array
from conftest import no_bpf_leak  # noqa: F401
from profiler_testutil import HERE, env, fresh, run  # noqa: F401

from kperf import profiler

def inside(e, outer):
    return ns(outer["ts"]) <= ns(e["ts"]) and \
        ns(e["ts"]) + ns(e.get("dur", 0)) <= ns(outer["ts"]) + ns(outer["dur"])


@pytest.fixture(scope="module")
def known(tmp_path_factory):
    out = tmp_path_factory.mktemp("known")
    p = run("known.py", out)
    doc = check(out / "trace.json")
    with open(out / "dumps.json") as f:
        stats = json.load(f)
    return doc, stats, (out / "dumps.txt").read_text(), p


def test_objects_exact(known):
    doc, _, _, p = known
    pid = doc["traceEvents"][0]["pid"]
    steps = events(doc, "X", cat="wl", name="step")
    assert len(steps) == 7 and all(e["args"] == {"kind": "Task"} for e in steps)
    (outer,) = events(doc, "X", cat="wl", name="outer")
    (inner,) = events(doc, "X", cat="wl", name="inner")
    assert inner["args"] == {"kind": "Frame"} and inside(inner, outer)
    assert not inside(outer, inner)
    counts = [e["args"]["items"] for e in events(doc, "C", cat="wl", name="items")]
    assert counts == [10, 12, 14, 16, 18, 20, 17, 18, 16, 16]
    assert [e["s"] for e in events(doc, "i", cat="wl", name="ready")] == ["p", "t", "g"]
    (ev,) = events(doc, "X", cat="event", name="ev")
    assert ev["args"] == {"kind": "Event"}
    assert events(doc, name="paused-task") == []
    assert {e["pid"] for e in steps} == {pid}


def test_syscalls_nested_in_their_task(known):
    doc, _, _, _ = known
    steps = events(doc, "X", cat="wl", name="step")
    calls = events(doc, "X", cat="syscall", name="getppid")
    # 7 Tasks x 3 calls, and none of the 11 of the paused section
    assert len(calls) == 21
    for s in steps:
        mine = [c for c in calls if c["tid"] == s["tid"] and inside(c, s)]
        assert len(mine) == 3
    (inner,) = events(doc, "X", cat="wl", name="inner")
    (getsid,) = events(doc, "X", cat="syscall", name="getsid")
    assert inside(getsid, inner) and getsid["tid"] == inner["tid"]


def test_paused_markers_absent(known):
    doc, _, _, _ = known
    assert len(events(doc, "i", name="mstx-on")) == 1
    assert events(doc, name="mstx-paused") == []
    (pause,) = doc["otherData"]["paused"]
    assert pause[0] < pause[1]
    assert doc["otherData"]["sources"] == ["markers", "syscalls"]
    # nothing of the profiler's own thread
    tids = {e["tid"] for e in events(doc, "X", cat="syscall")}
    assert tids == {doc["traceEvents"][0]["pid"]}


def test_dumps_exact(known):
    _, stats, text, _ = known
    step = stats["Time"]["wl"]["step"]
    assert step["Total Count"] == 7
    assert step["Min Time (ms)"] <= step["P50 (ms)"] <= step["P99 (ms)"] == step["Max Time (ms)"]
    assert abs(step["Avg Time (ms)"] * 7 - step["Time (ms)"]) < 1e-9
    assert stats["Time"]["wl"]["outer"]["Total Count"] == 1
    assert stats["Time"]["event"]["ev"]["Total Count"] == 1
    assert "paused-task" not in stats["Time"]["wl"]
    assert stats["Syscalls"]["getppid"]["Total Count"] == 21
    assert stats["Syscalls"]["getppid"]["Errors"] == 0
    assert stats["Syscalls"]["getsid"]["Total Count"] == 1
    assert stats["Counters"]["wl"]["items"] == {"Total Count": 10, "Value": 16,
                                                "Min Value": 10, "Max Value": 20}
    assert stats["Markers"]["wl"]["ready"] == {"Total Count": 3}
    assert stats["Unit"] == {"Time": "ms"}
    assert text.startswith("\nProfile Statistics:\n")
    lines = text.splitlines()
    wl = lines.index("wl")
    assert lines[wl + 2].split() == ["Name", "Total", "Count", "Time", "(ms)", "Min", "Time",
                                     "(ms)", "Max", "Time", "(ms)", "Avg", "Time", "(ms)",
                                     "P50", "(ms)", "P99", "(ms)"]
    # sort_by='count', ascending: outer/inner (1) before step (7)
    names = [ln.split()[0] for ln in lines[wl + 4:wl + 7]]
    assert names == ["inner", "outer", "step"]
    assert int(lines[wl + 6].split()[1]) == 7


def test_seed_example_runs_unchanged(tmp_path):
    p = run("seed_example.py", cwd=tmp_path)
    assert "Profile Statistics:" in p.stdout and "getppid" in p.stdout
    doc = check(tmp_path / "chrome_tracing_profile.json")
    assert len(events(doc, "X", cat="syscall", name="getppid")) == 9
    assert events(doc, name="getpgrp") == []
    pid = doc["traceEvents"][0]["pid"]
    samples = events(doc, "P", pid=pid)
    assert samples and all(str(e["sf"]) in doc["stackFrames"] for e in samples if "sf" in e)
    assert doc["otherData"]["sources"] == ["cpu", "markers", "memory", "offcpu", "syscalls"]


def test_continuous_dump_survives_sigkill(tmp_path):
    path = tmp_path / "killed.json"
    p = subprocess.Popen([sys.executable, os.path.join(HERE, "killed.py"), str(path)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env())
    try:
        line = p.stdout.readline()
        assert line == "dumped\n", p.stderr.read() if p.poll() is not None else line
        before = path.read_text()
        for _ in range(200):  # until the next append (every 0.1 s)
            if path.stat().st_size > len(before.encode()):
                break
            time.sleep(0.05)
        p.send_signal(signal.SIGKILL)
    finally:
        p.kill()
        p.wait(timeout=60)
    assert p.returncode == -signal.SIGKILL
    # a stream without its closing bracket, which the trace event format allows: appended
    # to, never rewritten
    text = path.read_text()
    assert text.startswith("[") and not text.rstrip().endswith("]")
    assert text.startswith(before) and len(text) > len(before)
    doc = recover_array(path)
    its = events(doc, "X", cat="loop", name="iteration")
    assert len(its) >= 3
    # the calls inside a Task: all of those made before the last Task the stream holds ended
    # (a Task is recorded at its end, its calls as they come)
    last = max(ns(i["ts"]) + ns(i["dur"]) for i in its)
    calls = [c for c in events(doc, "X", cat="syscall", name="getppid") if ns(c["ts"]) < last]
    assert len(calls) >= 3 and all(any(inside(c, i) for i in its) for c in calls)
    # each event once, whatever the number of appends
    keys = [json.dumps(e, sort_keys=True) for e in doc["traceEvents"]]
    assert len(keys) == len(set(keys))
    # the package's reader applies the same rule
    assert len(profiler.recover(path)) == len(doc["traceEvents"])
    assert [f for f in os.listdir(tmp_path) if f != "killed.json"] == [] or \
        all(f.endswith(".tmp") for f in os.listdir(tmp_path) if f != "killed.json")


def test_session_in_this_process_pauses_and_leaves_nothing(tmp_path, fresh, no_bpf_leak):
    path = tmp_path / "p.json"
    profiler.set_config(profile_syscalls=True, filename=str(path), aggregate_stats=True)
    profiler.set_state("run")
    dom = profiler.Domain("here")
    with profiler.Task(dom, "before"):
        os.getppid()
    profiler.pause()
    assert profiler.state() == "pause"
    for _ in range(4):
        os.getppid()
    profiler.resume()
    with profiler.Task(dom, "after"):
        os.getppid()
        os.getppid()
    profiler.set_state("stop")
    doc = check(path)
    calls = events(doc, "X", cat="syscall", name="getppid")
    assert len(calls) == 3
    (before,) = events(doc, "X", name="before")
    (after,) = events(doc, "X", name="after")
    assert [inside(c, before) for c in calls] == [True, False, False]
    assert [inside(c, after) for c in calls] == [False, True, True]
    stats = json.loads(profiler.dumps(format="json"))
    assert stats["Syscalls"]["getppid"]["Total Count"] == 3


def test_offcpu_slices_nested_in_their_tasks(tmp_path):
    """profile_offcpu: each 5 ms sleep of a Task is one "blocked" slice of at least 5 ms
    inside it, on its thread; a Task that computes has none; no slice is shorter than
    offcpu_min_us."""
    run("offcpu.py", tmp_path)
    doc = check(tmp_path / "trace.json")
    assert doc["otherData"]["sources"] == ["offcpu"]
    naps = events(doc, "X", cat="wl", name="nap")
    (compute,) = events(doc, "X", cat="wl", name="compute")
    slices = events(doc, "X", cat="off-cpu")
    assert len(naps) == 5 and slices
    assert all(ns(e["dur"]) >= 1000000 for e in slices)
    assert all(e["args"]["reason"] == e["name"] for e in slices)
    blocked = [e for e in slices if e["name"] == "blocked"]
    for n in naps:
        mine = [e for e in blocked if e["tid"] == n["tid"] and inside(e, n)]
        assert len([e for e in mine if ns(e["dur"]) >= 5000000]) == 1, mine
    assert [e for e in blocked if e["tid"] == compute["tid"] and inside(e, compute)] == []


def test_memory_heap_counter_steps_by_the_known_sizes(tmp_path):
    """profile_memory: a script holding bytearrays of 3 MiB and 5 MiB (one malloc of the
    interpreter each) inside a Task: both are large allocation events inside it, of at least
    their size, and at each the "heap in use" counter steps up by exactly that size."""
    run("memory.py", tmp_path)
    doc = check(tmp_path / "trace.json")
    assert doc["otherData"]["sources"] == ["memory"]
    (hold,) = events(doc, "X", cat="wl", name="hold")
    heap = events(doc, "C", cat="memory", name="heap in use")
    bigs = [e for e in events(doc, "i", cat="memory") if inside(e, hold)]
    assert sorted(e["args"]["size"] >> 20 for e in bigs) == [3, 5]
    for b in bigs:
        k = next(k for k, c in enumerate(heap) if c["ts"] == b["ts"])
        assert k > 0 and heap[k]["args"]["bytes"] - heap[k - 1]["args"]["bytes"] == \
            b["args"]["size"]
    assert doc["otherData"]["memLost"] == 0


def test_memory_pause_takes_the_probes_out(tmp_path):
    """pause() with profile_memory: the breakpoints at libc's malloc and free are there while
    the session runs (their first byte is not the function's), gone while it is paused and
    after it stopped (the function's own bytes again), back after resume(); the 6 MiB block
    of the pause is not on the timeline, the 4 MiB one after it is."""
    run("memory_pause.py", tmp_path)
    with open(tmp_path / "bytes.json") as f:
        seen = json.load(f)
    orig = seen["before"]
    for f in ("malloc", "free"):
        assert seen["running"][f] != orig[f], seen
        assert seen["resumed"][f] == seen["running"][f], seen
    assert seen["paused"] == orig, seen
    assert seen["stopped"] == orig, seen
    doc = check(tmp_path / "trace.json")
    (after,) = events(doc, "X", cat="wl", name="after")
    bigs = events(doc, "i", cat="memory")
    assert sorted(e["args"]["size"] >> 20 for e in bigs) == [4]
    assert inside(bigs[0], after)


def test_memory_follows_forked_children(tmp_path):
    """profile_memory follows a forked child as the other sources do: its 7 MiB allocation is
    a large allocation event of its own pid, inside the Task that forked it, with a heap
    counter of its own; the child ran to its end (exit status 0)."""
    run("memory_fork.py", tmp_path)
    child, status = map(int, (tmp_path / "child").read_text().split())
    assert status == 0
    doc = check(tmp_path / "trace.json")
    (task,) = events(doc, "X", cat="wl", name="fork")
    bigs = [e for e in events(doc, "i", cat="memory") if e["pid"] == child]
    assert [e["args"]["size"] >> 20 for e in bigs] == [7]
    assert inside(bigs[0], task)
    heap = [e for e in events(doc, "C", cat="memory", name="heap in use") if e["pid"] == child]
    assert any(e["args"]["bytes"] >= 7 << 20 for e in heap)


def test_profile_all_session_without_kernel_btf(tmp_path):
    """A profile_all session on a kernel without BTF (KPERF_BPF_BTF naming no file) runs with
    the sources that do without it (syscalls and off-CPU slices through their raw tracepoint
    fallbacks, markers); the file and skipped() say that the CPU samples and the memory
    source were left out, and why (LIBPERF_ERR_KERNEL_NOT_SUPPORT)."""
    script = (
        "import json, os, sys\n"
        "from kperf import profiler\n"
        "profiler.set_config(profile_all=True, continuous_dump=False, filename=sys.argv[1])\n"
        "profiler.set_state('run')\n"
        "skipped = {k: e.errno for k, e in profiler.skipped().items()}\n"
        "for _ in range(5):\n"
        "    os.getppid()\n"
        "profiler.set_state('stop')\n"
        "print(json.dumps(skipped))\n")
    e = env()
    e["KPERF_BPF_BTF"] = "/nonexistent/vmlinux"
    p = subprocess.run([sys.executable, "-c", script, str(tmp_path / "t.json")],
                       capture_output=True, text=True, env=e, timeout=120)
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout) == {"profile_cpu": 1016, "profile_memory": 1016}
    doc = check(tmp_path / "t.json")
    assert doc["otherData"]["sources"] == ["markers", "offcpu", "syscalls"]
    assert sorted(doc["otherData"]["skipped"]) == ["cpu", "memory"]
    assert doc["otherData"]["skipped"]["memory"]["code"] == 1016
    assert len(events(doc, "X", cat="syscall", name="getppid")) == 5
    assert events(doc, "P") == []
