"""The timeline (KperfTimeline*, `kperf-bpf timeline`, kperf.timeline): the mstx_wl workload's
markers, ranges and syscalls with exact counts and nesting, samples of cpuburn with their
stacks, the strict format check of every event (chrome_trace.check) and a real consumer:
speedscope's importer (npm, run under Node) must find the ranges by name.
"""

import json
import os
import shutil
import signal
import subprocess

import pytest
from chrome_trace import check, events, ns
from conftest import BUILD, REPO, no_bpf_leak  # noqa: F401

import kperf
import kperf.mstx as mstx
from kperf.timeline import Timeline

CLI = os.path.join(BUILD, "bin", "kperf-bpf")
NODE_DIR = os.path.join(REPO, "tests", "node")


def run_cli(*args, ok=True):
    p = subprocess.run([CLI, "timeline", *map(str, args)], capture_output=True, text=True,
                       timeout=120)
    if ok:
        assert p.returncode == 0, p.stderr
    return p


def wl(name):
    p = os.path.join(BUILD, "workloads", name)
    if not os.access(p, os.X_OK):
        pytest.skip(f"{p} is not built (make workloads)")
    return p


def inside(e, outer):
    return ns(outer["ts"]) <= ns(e["ts"]) and \
        ns(e["ts"]) + ns(e.get("dur", 0)) <= ns(outer["ts"]) + ns(outer["dur"])


@pytest.fixture(scope="module")
def wl_trace(tmp_path_factory):
    """`kperf-bpf timeline -- mstx_wl --marks 20 --calls 7 --open`, checked strictly."""
    out = tmp_path_factory.mktemp("tl") / "mstx.json"
    p = subprocess.Popen([CLI, "timeline", "-o", str(out), "--", wl("mstx_wl"), "--marks",
                          "20", "--calls", "7", "--open"], stderr=subprocess.PIPE, text=True)
    _, err = p.communicate(timeout=120)
    assert p.returncode == 0, err
    doc = check(out)
    doc["cli_pid"] = p.pid
    return doc, err, out


def test_timeline_markers_and_ranges(wl_trace):
    doc, err, _ = wl_trace
    ticks = events(doc, "i", name="tick")
    assert len(ticks) == 20 and {e["cat"] for e in ticks} == {"default"}
    assert len(events(doc, "i", name="alpha-mark", cat="alpha")) == 3
    assert len(events(doc, "i", name="beta-mark", cat="beta")) == 2
    (outer,) = events(doc, "X", name="outer", cat="default")
    (inner,) = events(doc, "X", name="inner", cat="default")
    (alpha,) = events(doc, "X", name="alpha-range", cat="alpha")
    assert inside(inner, outer) and not inside(outer, inner)
    (b,) = events(doc, "b", name="handoff")
    (e,) = events(doc, "e", name="handoff")
    assert b["tid"] == b["pid"] and e["tid"] != b["tid"] and b["args"]["end_tid"] == e["tid"]
    (left,) = events(doc, "X", name="left-open")
    assert left["args"] == {"unfinished": True}
    assert "25 marks, 4 ranges (1 not ended)" in err
    other = doc["otherData"]
    assert (other["marks"], other["ranges"], other["openRanges"]) == (20 + 5, 4, 1)


def test_timeline_syscalls_inside_ranges(wl_trace):
    doc, _, _ = wl_trace
    (inner,) = events(doc, "X", name="inner")
    (alpha,) = events(doc, "X", name="alpha-range")
    sys = events(doc, "X", cat="syscall")
    in_inner = [e for e in sys if e["tid"] == inner["tid"] and inside(e, inner)]
    assert [e["name"] for e in in_inner] == ["getppid"] * 7
    assert {e["args"]["ret"] for e in in_inner} == {doc["cli_pid"]}, "its parent: kperf-bpf"
    in_alpha = [e for e in sys if e["tid"] == alpha["tid"] and inside(e, alpha)]
    assert [e["name"] for e in in_alpha] == ["getppid"]
    # the launcher's syscalls before the exec are not there: the first is the loader's
    assert sys[0]["name"] in ("brk", "arch_prctl", "mmap", "access", "openat")
    assert len(events(doc, "X", name="getppid")) == 8


def test_timeline_names(wl_trace):
    doc, _, _ = wl_trace
    (b,) = events(doc, "b", name="handoff")
    pid = b["pid"]
    names = {(e["name"], e["tid"]): e["args"]["name"] for e in events(doc, "M", pid=pid)}
    assert names[("process_name", pid)] == "mstx_wl"
    assert names[("thread_name", pid)] == "mstx_wl"
    assert names[("thread_name", b["args"]["end_tid"])] == "mstx_wl_end"


def test_timeline_samples_with_stacks(tmp_path):
    out = tmp_path / "burn.json"
    run_cli("-o", out, "-F", 499, "--no-syscalls", "--", wl("cpuburn"), "--ms", 300)
    doc = check(out)
    samples = events(doc, "P")
    assert len(samples) >= 50, f"{len(samples)} samples of 300 ms at 499 Hz"
    frames = doc["stackFrames"]

    def chain(sf):
        names = []
        while sf is not None:
            fr = frames[str(sf)]
            names.append(fr["name"])
            sf = fr.get("parent")
        return names

    hot = [s for s in samples if "sf" in s and "hot_loop" in chain(s["sf"])]
    assert len(hot) > len(samples) // 2
    assert "main" in chain(hot[0]["sf"])
    assert events(doc, "X") == []


def test_speedscope_finds_the_ranges(wl_trace):
    node = shutil.which("node")
    if not node:  # make test installs it (make deps-node); a test guest's root may not have it
        pytest.skip("node is not installed (make deps installs it)")
    script = os.path.join(NODE_DIR, "speedscope_import.mjs")
    assert os.path.isdir(os.path.join(NODE_DIR, "node_modules", "speedscope")), \
        "speedscope is not installed: make deps (npm ci in tests/node)"
    _, _, path = wl_trace
    p = subprocess.run([node, script, str(path)], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    res = json.loads(p.stdout)
    assert res["importer"] == "Trace Event Format profile"
    main = [pr for pr in res["profiles"] if pr["name"].startswith("mstx_wl (pid ")
            and "mstx_wl (tid " in pr["name"]]
    assert len(main) == 1, [pr["name"] for pr in res["profiles"]]
    frames = set(main[0]["frames"])
    assert {"outer", "inner", "alpha-range"} <= frames
    assert any(f.startswith("getppid ") for f in frames)


def test_timeline_python_api(tmp_path, no_bpf_leak):
    out = tmp_path / "self.json"
    with Timeline(samples=False) as t:
        with mstx.range("py-step"):
            for _ in range(5):
                os.getppid()
        mstx.mark("py-mark")
    st = t.stats()
    t.write(str(out))
    t.close()
    assert (st["marks"], st["ranges"], st["openRanges"]) == (1, 1, 0)
    doc = check(out)
    (step,) = events(doc, "X", name="py-step", pid=os.getpid())
    calls = [e for e in events(doc, "X", name="getppid") if inside(e, step)]
    assert len(calls) == 5 and {e["tid"] for e in calls} == {step["tid"]}
    assert len(events(doc, "i", name="py-mark")) == 1


def test_timeline_off_cpu_slices_from_the_cli(tmp_path):
    """--off-cpu alone: the sleeper's 3 naps are 3 "blocked" slices of at least 5 ms on its
    main thread with nap_here on their stack; none is shorter than --off-cpu-min. (The
    spinner keeps the process alive long enough for the stacks to be resolved: without
    samples, nothing records its mappings before it exits.)"""
    out = tmp_path / "off.json"
    p = run_cli("--off-cpu", "--off-cpu-min", "1000", "--no-syscalls", "--no-samples",
                "--no-markers", "-o", out, "--", wl("sleeper"),
                "--naps", "3", "--nap-ms", "5", "--spin-ms", "300")
    doc = check(out)
    main = int(p.stdout.split("main_tid=")[1].split()[0])
    frames = doc["stackFrames"]

    def stack(e):
        sf, names = e.get("sf"), []
        while sf is not None:
            names.append(frames[str(sf)]["name"])
            sf = frames[str(sf)].get("parent")
        return names

    slices = events(doc, "X", cat="off-cpu")
    naps = [e for e in slices if "nap_here" in stack(e)]
    assert len(naps) == 3
    assert all(e["name"] == "blocked" and e["tid"] == main and ns(e["dur"]) >= 5000000
               for e in naps)
    assert all(ns(e["dur"]) >= 1000000 for e in slices)
    assert doc["otherData"]["offCpuSlices"] == len(slices)
    assert doc["otherData"]["offCpuLost"] == 0
    assert f"{len(slices)} off-CPU slices" in p.stderr


def every_process_doc(doc, pid):
    """(ticks, getppid calls inside its "inner" range) of process <pid> in a timeline"""
    ticks = events(doc, "i", name="tick", pid=pid)
    (inner,) = events(doc, "X", name="inner", pid=pid)
    calls = [e for e in events(doc, "X", name="getppid", pid=pid) if inside(e, inner)]
    return len(ticks), len(calls)


def test_timeline_every_process_python(tmp_path, no_bpf_leak):
    """all_pids: a workload that was running before the timeline opened (a pid list of this
    process reaches only the children it forks afterwards) and one a shell of that time
    forks afterwards: both exact, marks and calls; this process's own calls left out"""
    before = subprocess.Popen([wl("mstx_wl"), "--wait", "--marks", "20", "--calls", "7"],
                              stdin=subprocess.PIPE, stdout=subprocess.DEVNULL)
    shell = subprocess.Popen(["sh", "-c", f"read x; {wl('mstx_wl')} --marks 3 --calls 2; "
                              "echo $!"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    out = tmp_path / "all.json"
    try:
        with Timeline(all_pids=True, samples=False, buffer_kb=65536) as t:
            before.stdin.write(b"g")
            before.stdin.close()
            assert before.wait(60) == 0
            shell.stdin.write(b"g\n")
            shell.stdin.close()
            assert shell.wait(60) == 0
        t.write(str(out))
        st = t.stats()
        t.close()
    finally:
        for p in (before, shell):
            if p.poll() is None:
                p.kill()
                p.wait()
    doc = check(out)
    assert every_process_doc(doc, before.pid) == (20, 7)
    later = {e["pid"] for e in events(doc, "i", name="tick")} - {before.pid}
    assert len(later) == 1, later
    assert every_process_doc(doc, later.pop()) == (3, 2)
    assert not events(doc, "X", pid=os.getpid(), cat="syscall")
    assert st["dropped"] == 0


def test_timeline_every_process_cli(tmp_path):
    """`timeline -a`: says it collects every process; a workload of that time, exact; the
    CLI's own calls left out; stopped by SIGINT, the file written"""
    w = subprocess.Popen([wl("mstx_wl"), "--wait", "--marks", "5", "--calls", "4"],
                         stdin=subprocess.PIPE, stdout=subprocess.DEVNULL)
    out = tmp_path / "cli-all.json"
    cli = subprocess.Popen([CLI, "timeline", "-a", "--no-samples", "-o", str(out)],
                           stderr=subprocess.PIPE, text=True)
    try:
        line = cli.stderr.readline()
        assert line == "kperf-bpf timeline: collecting every process; Ctrl-C to stop\n", \
            line + cli.stderr.read()
        w.stdin.write(b"g")
        w.stdin.close()
        assert w.wait(60) == 0
        cli.send_signal(signal.SIGINT)
        _, err = cli.communicate(timeout=120)
    finally:
        for p in (w, cli):
            if p.poll() is None:
                p.kill()
                p.wait()
    assert cli.returncode == 0, err
    doc = check(out)
    assert every_process_doc(doc, w.pid) == (5, 4)
    assert not [e for e in doc["traceEvents"] if e.get("pid") == cli.pid and e["ph"] == "X"]


@pytest.mark.parametrize("args, message", [
    ([], "give the processes (-p PID), a command to run (-- COMMAND) or -a (every process)"),
    (["-F", "0", "--", "true"], "-F wants samples per second from 1 to 100000, not '0'"),
    (["-p", "1", "--", "true"], "give one of -a, -p or a command, not -p and a command"),
    (["-a", "-p", "1"], "give one of -a, -p or a command, not -a and -p"),
    (["-a", "--", "true"], "give one of -a, -p or a command, not -a and a command"),
    (["-a", "--memory"], "--memory follows given processes (-p or a command), not -a"),
    (["--no-syscalls", "--no-samples", "--no-markers", "--", "true"],
     "--no-syscalls, --no-samples and --no-markers leave nothing to record"),
    (["--"], "'--' must be followed by a command to run"),
    (["--off-cpu-min", "10", "--", "true"], "--off-cpu-min goes with --off-cpu"),
    (["--off-cpu", "--off-cpu-min", "0", "--", "true"],
     "--off-cpu-min wants microseconds from 1 to 60000000, not '0'"),
])
def test_timeline_bad_arguments(args, message):
    p = run_cli(*args, ok=False)
    assert p.returncode == 1
    assert f"kperf-bpf timeline: {message}" in p.stderr


def test_timeline_bad_pid_and_file(tmp_path):
    from conftest import free_pid
    pid = free_pid()
    p = run_cli("-p", pid, "-o", tmp_path / "x.json", ok=False)
    assert p.returncode == 1 and str(pid) in p.stderr
    p = run_cli("--probe-file", "/bin/true", "-o", tmp_path / "y.json", "--", "true", ok=False)
    assert p.returncode == 1
    assert ("/bin/true holds no kperf USDT probes (the mstx markers of libkperf-bpf)"
            in p.stderr)
    p = run_cli("-o", "/nonexistent-dir/t.json", "--", "true", ok=False)
    assert p.returncode == 1 and "/nonexistent-dir/t.json" in p.stderr
