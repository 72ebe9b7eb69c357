"""Run inside a PID namespace by test_pidns.py (KPERF_PIDNS_INNER=1, under
`unshare --pid --fork --mount-proc`): `kperf-bpf memscope` with the msmemscope analyzers and
`kperf-bpf agent` (the sidecar shape: the agent and the application in one namespace) take
and give the namespace's pids, with the same exact facts as on the host:

- memscope of memscope_wl's leaks run, launched and by -p NSPID: exactly its five leaks
  (sizes, functions, leaves, pointers), every row of the namespace's pid; its forkleak run:
  the forked child's leaks exactly, under the child's namespace pid;
- the agent by -p NSPID: the workload's exact getppid count, its comm, nothing outside;
- the agent over every process: the namespace's workload exact, the host's busy process
  (KPERF_PIDNS_HOSTPID) counted under cgroup "[outside namespace]", never as a local one;
- the agent's pprof profile of a spinner by -p NSPID: every sample labelled with its
  namespace pid and tid, hot_loop the leaf of at least 80% of them;
- `kperf-bpf timeline` of a command (exact marks and calls, its namespace pid) and of every
  process (-a: the host's busy process sampled as the pid of processes out of sight,
  never as a local pid).
Not collected by `pytest tests/python` (its name is not test_*.py); anywhere else, skipped.
"""

import gzip
import io
import os
import re
import signal
import subprocess

import pytest

from agent_util import Agent, parse_exposition, wait_until
from conftest import BUILD, Workload
from test_memscope import check_leak_report, forkleak, record, record_pid

import msmemscope

pytestmark = [
    pytest.mark.skipif(not os.environ.get("KPERF_PIDNS_INNER"),
                       reason="runs inside a PID namespace, started by test_pidns.py"),
]


def leaks_of(out, stdout):
    ptrs = [int(x, 16) for x in re.search(r"leaks (.*)", stdout).group(1).split()]
    rep = msmemscope.check_leaks(str(out), "test", 0, out=io.StringIO())
    check_leak_report(rep, ptrs)
    return rep


def test_memscope_of_a_command(tmp_path):
    out = tmp_path / "c.csv"
    stdout, _ = record(out, "leaks")
    rep = leaks_of(out, stdout)
    pids = {r.pid for r in msmemscope.load(str(out)) if r.event in ("MALLOC", "FREE", "MSTX")}
    # the command kperf-bpf started: a small pid of this namespace, and the only one
    assert len(pids) == 1 and 1 < next(iter(pids)) < 1000, pids
    assert {l.pid for l in rep.leaks} == pids


def test_memscope_by_namespace_pid(tmp_path, workload):
    out = tmp_path / "p.csv"
    stdout, err = record_pid(out, "leaks")
    pid = int(re.search(r"recording process (\d+)", err).group(1))
    assert pid < 1000
    rep = leaks_of(out, stdout)
    assert {l.pid for l in rep.leaks} == {pid}
    assert {r.pid for r in msmemscope.load(str(out)) if r.event == "MALLOC"} == {pid}


def test_memscope_follows_a_child(tmp_path):
    """the child a recorded process forks: its own leaks, under its namespace pid"""
    cpid, pptr, cptrs = forkleak(tmp_path / "f.csv")
    child = msmemscope.check_leaks(str(tmp_path / "f.csv"), "child", 0, out=io.StringIO())
    parent = msmemscope.check_leaks(str(tmp_path / "f.csv"), "parent", 0, out=io.StringIO())
    assert 1 < cpid < 1000
    assert [(l.pid, l.size, l.leaf, l.ptr) for l in child.leaks] == [
        (cpid, 222, "child_leak_a", cptrs[0]), (cpid, 333, "child_leak_b", cptrs[1])]
    assert [(l.size, l.leaf, l.ptr) for l in parent.leaks] == [(111, "leak_parent", pptr)]
    assert parent.leaks[0].pid < 1000 and parent.leaks[0].pid != cpid


def syscall_counts(text, syscall):
    """{(cgroup, comm): count} of kperf_syscall_duration_seconds_count for <syscall>"""
    got = {}
    for name, labels, value in parse_exposition(text):
        if name == "kperf_syscall_duration_seconds_count" and labels.get("syscall") == syscall:
            key = (labels.get("cgroup"), labels.get("comm"))
            got[key] = got.get(key, 0) + value
    return got


def cgroup_of(pid):
    """the cgroup2 path of <pid>, as the agent labels its series"""
    with open(f"/proc/{pid}/cgroup") as f:
        return next(l.split("::", 1)[1].strip() for l in f if l.startswith("0::"))


def test_agent_by_namespace_pid(workload):
    # it lives on after its calls: the agent's fold (every second) sees it alive and labels
    # it with its cgroup (a process gone before that is counted under "[exited]")
    w = workload("syscalls", "--wait", "--sleep-ms", 3000)
    cg = cgroup_of(w.pid)
    agent = Agent("-p", w.pid, "--syscalls", "getppid,write", "--counters", "none",
                  "--interval", "1")
    try:
        w.go()
        assert w.wait() == 0

        def getppid():
            c = syscall_counts(agent.metrics(), "getppid")
            return sum(c.values()) == 50000 and c

        got = wait_until(getppid)
        assert got == {(cg, "syscalls"): 50000}, syscall_counts(agent.metrics(), "getppid")
        assert syscall_counts(agent.metrics(), "write") == {(cg, "syscalls"): 2000}
    finally:
        rc = agent.stop()
    assert rc == 0, agent.stderr()


def test_agent_of_every_process():
    host = os.environ.get("KPERF_PIDNS_HOSTPID")
    assert host, "KPERF_PIDNS_HOSTPID is not set"
    agent = Agent("--all", "--syscalls", "getppid", "--counters", "none", "--interval", "1")
    w = None
    try:
        # started once the agent runs: known to it from its first call on
        w = Workload("syscalls", "--wait", "--sleep-ms", 3000)
        cg = cgroup_of(w.pid)
        assert wait_until(lambda: any(cg == "[outside namespace]" for cg, _ in syscall_counts(
            agent.metrics(), "getppid"))), agent.metrics()
        w.go()
        assert w.wait() == 0

        def inside():
            c = syscall_counts(agent.metrics(), "getppid")
            return c.get((cg, "syscalls")) == 50000 and c

        got = wait_until(inside)
        assert got, syscall_counts(agent.metrics(), "getppid")
        # nothing else of this namespace calls getppid
        assert set(got) == {(cg, "syscalls"), ("[outside namespace]", "other")}, got
        # the host's busy process: counted, as outside, under no command name of its own
        assert got[("[outside namespace]", "other")] > 0, got
    finally:
        if w:
            w.kill()
        rc = agent.stop()
    assert rc == 0, agent.stderr()


# ---- the timeline ----

def timeline(tmp_path, name, *args, go=None):
    """`kperf-bpf timeline -o FILE ARGS`, strictly checked; with <go> (a Workload), -a: the
    workload is released once the CLI says it collects, the CLI stopped by SIGINT after"""
    from chrome_trace import check
    out = tmp_path / name
    cli = subprocess.Popen([os.path.join(BUILD, "bin", "kperf-bpf"), "timeline", "-o", str(out),
                            *map(str, args)], stderr=subprocess.PIPE, text=True)
    try:
        if go:
            line = cli.stderr.readline()
            assert "collecting every process" in line, line + cli.stderr.read()
            go.go()
            assert go.wait() == 0
            cli.send_signal(signal.SIGINT)
        _, err = cli.communicate(timeout=300)
    finally:
        if cli.poll() is None:
            cli.kill()
            cli.wait()
    assert cli.returncode == 0, err
    return check(out)


def test_timeline_of_a_command(tmp_path):
    """`timeline -- mstx_wl`: its marks and the calls inside its ranges, exact, under its
    namespace pid"""
    from chrome_trace import events, ns
    doc = timeline(tmp_path, "cmd.json", "--no-samples", "--", os.path.join(
        BUILD, "workloads", "mstx_wl"), "--marks", 20, "--calls", 7)
    ticks = events(doc, "i", name="tick")
    assert len(ticks) == 20
    (pid,) = {e["pid"] for e in ticks}
    assert 1 < pid < 1000, pid
    (inner,) = events(doc, "X", name="inner", pid=pid)
    calls = [e for e in events(doc, "X", name="getppid", pid=pid)
             if ns(inner["ts"]) <= ns(e["ts"]) and
             ns(e["ts"]) + ns(e["dur"]) <= ns(inner["ts"]) + ns(inner["dur"])]
    assert len(calls) == 7


def test_timeline_of_every_process(tmp_path):
    """`timeline -a`: a workload of this namespace marks exactly under its pid; the host's
    busy process (KPERF_PIDNS_HOSTPID) is sampled, as pid -1, never under a local pid"""
    from chrome_trace import events
    assert os.environ.get("KPERF_PIDNS_HOSTPID"), "KPERF_PIDNS_HOSTPID is not set"
    w = Workload("mstx_wl", "--wait", "--marks", 5, "--calls", 0)
    try:
        doc = timeline(tmp_path, "all.json", "-a", "--no-syscalls", "-F", 199, go=w)
    finally:
        w.kill()
    assert [e["pid"] for e in events(doc, "i", name="tick")] == [w.pid] * 5
    # out of sight: pid -1 elsewhere, PID_MAX_LIMIT in the format (no negative pids there)
    outside = 4194304
    pids = {e["pid"] for e in events(doc, "P")}
    assert outside in pids, pids
    assert all(p == outside or 0 < p < 1000 for p in pids), pids
    (name,) = [e["args"]["name"] for e in events(doc, "M", name="process_name", pid=outside)]
    assert name == "[outside namespace]"


# ---- a pprof profile.proto, read with the standard library ----

def _varint(b, i):
    v = s = 0
    while True:
        c = b[i]
        i += 1
        v |= (c & 0x7F) << s
        s += 7
        if c < 0x80:
            return v, i


def _fields(b):
    """(field number, value) of a protobuf message: ints, or bytes for length-delimited"""
    i = 0
    while i < len(b):
        key, i = _varint(b, i)
        num, wt = key >> 3, key & 7
        if wt == 0:
            v, i = _varint(b, i)
        elif wt == 2:
            n, i = _varint(b, i)
            v, i = b[i:i + n], i + n
        elif wt == 1:
            v, i = int.from_bytes(b[i:i + 8], "little"), i + 8
        elif wt == 5:
            v, i = int.from_bytes(b[i:i + 4], "little"), i + 4
        else:
            raise ValueError(f"wire type {wt}")
        yield num, v


def _ints(v):
    """a repeated integer field, packed (bytes) or not (int)"""
    if isinstance(v, int):
        return [v]
    out, i = [], 0
    while i < len(v):
        x, i = _varint(v, i)
        out.append(x)
    return out


def read_pprof(gz):
    """[(labels {key: str or int}, leaf function name, count)] of each sample"""
    strings, samples, locs, funcs = [], [], {}, {}
    for num, v in _fields(gzip.decompress(gz)):
        if num == 6:
            strings.append(v.decode())
        elif num == 2:
            samples.append(v)
        elif num == 4:
            loc = dict(id=0, funcs=[])
            for n, x in _fields(v):
                if n == 1:
                    loc["id"] = x
                elif n == 4:
                    loc["funcs"].append(dict(_fields(x)).get(1, 0))
            locs[loc["id"]] = loc["funcs"]
        elif num == 5:
            f = dict(_fields(v))
            funcs[f.get(1, 0)] = f.get(2, 0)
    out = []
    for s in samples:
        ids, values, labels = [], [], {}
        for n, x in _fields(s):
            if n == 1:
                ids += _ints(x)
            elif n == 2:
                values += _ints(x)
            elif n == 3:
                lab = dict(_fields(x))
                key = strings[lab.get(1, 0)]
                labels[key] = strings[lab[2]] if lab.get(2) else lab.get(3, 0)
        # a location's first line is its innermost (inlined) function
        leaf = strings[funcs[locs[ids[0]][0]]] if ids and locs.get(ids[0]) else ""
        out.append((labels, leaf, values[0] if values else 0))
    return out


def test_agent_pprof_by_namespace_pid(workload):
    w = workload("cpuburn", "--ms", "20000")
    agent = Agent("-p", w.pid, "--syscalls", "getppid", "--counters", "none",
                  "--profile-hz", "999")
    try:
        status, _, body = agent.get("/debug/pprof/profile?seconds=2")
        assert status == 200, body
        samples = read_pprof(body)
        assert samples
        assert {(l["pid"], l["comm"]) for l, _, _ in samples} == {(w.pid, "cpuburn")}
        assert {l["tid"] for l, _, _ in samples} == {w.pid}
        total = sum(c for _, _, c in samples)
        hot = sum(c for _, leaf, c in samples if leaf == "hot_loop")
        # samples are CPU time: a loaded machine gives the spinner less of it
        assert total >= 20 and hot * 10 >= total * 8, (hot, total)
    finally:
        w.kill()
        rc = agent.stop()
    assert rc == 0, agent.stderr()
