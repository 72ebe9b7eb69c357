"""`kperf-bpf memscope` and the msmemscope analyzers (kperf.memscope): exact facts of the
memscope_wl workloads (tests/workloads/memscope_wl.c).

- leaks: the leak report between the marks "test" #0 and #1, not freed before #2, is exactly
  the five blocks the workload leaves (count, sizes, total, pointers, allocation stack leaf),
  from CSV and from SQLite; a forked child that execs /bin/true is unharmed;
- ineff: exactly one early_allocation, one late_deallocation, one temporary_idleness, at the
  blocks the workload printed, none at the plain block or elsewhere; written back once;
- sampled: --sample-bytes 8k over 40000 blocks of known total: rescaled within 5%;
- every bad input a user can give, with its message.
Run as root with BPF (the recording tests load BPF through the CLI, which exits).
"""

import io
import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time

import pytest

from conftest import BUILD, REPO, free_pid

sys.path.insert(0, os.path.join(REPO, "python"))
import msmemscope  # noqa: E402
from msmemscope import MemScopeError  # noqa: E402
from msmemscope.analyzer import (InefficientAnalyzer, InefficientConfig,  # noqa: E402
                                 LeaksAnalyzer, LeaksConfig)

CLI = os.path.join(BUILD, "bin", "kperf-bpf")
COLUMNS = ["ID", "Event", "Event Type", "Name", "Timestamp(ns)", "Process Id", "Thread ID",
           "Device ID", "Ptr", "Attr", "Call Stack(Python)", "Call Stack(C)"]
LEAK_SIZES = [100, 300, 262144, 512, 12288]
LEAK_LEAVES = ["leak_small", "leak_calloc", "leak_realloc", "leak_memalign", "leak_mmap"]
LEAK_FUNCS = ["malloc", "calloc", "realloc", "posix_memalign", "mmap"]


def wl():
    p = os.path.join(BUILD, "workloads", "memscope_wl")
    if not os.access(p, os.X_OK):
        pytest.skip(f"{p} is not built (make workloads)")
    return p


def has_attach_cookies():
    """BPF attach cookies (5.15): without them a launched command's marks are not collected"""
    release = tuple(int(x) for x in re.findall(r"\d+", os.uname().release)[:2])
    return release >= (5, 15)


def record(out, *args, extra=()):
    """kperf-bpf memscope -o OUT EXTRA -- memscope_wl ARGS: (stdout of the workload, stderr).
    On a kernel without attach cookies, where a command's marks cannot be collected, the
    workload is started waiting and recorded with -p instead."""
    if not has_attach_cookies() and "--no-markers" not in extra:
        return record_pid(out, *args, extra=extra)
    p = subprocess.run([CLI, "memscope", "-o", str(out), *extra, "--", wl(), *map(str, args)],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    return p.stdout, p.stderr


def wait_blocked(pid):
    """Until <pid> sits in read(0) (--wait): its libraries are loaded, its allocator there to
    be found (the dynamic loader takes long under an emulator)."""
    want = "0 0x0 " if os.uname().machine == "x86_64" else "63 0x0 "
    for _ in range(1000):
        try:
            with open(f"/proc/{pid}/syscall") as f:
                if f.read().startswith(want):
                    return
        except OSError:
            return
        time.sleep(0.01)


def record_pid(out, *args, extra=()):
    """the same with memscope_wl --wait ARGS recorded by -p once the probes are in place"""
    w = subprocess.Popen([wl(), "--wait", *map(str, args)], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, text=True)
    wait_blocked(w.pid)
    p = subprocess.Popen([CLI, "memscope", "-o", str(out), *extra, "-p", str(w.pid)],
                         stderr=subprocess.PIPE, text=True)
    try:
        line = p.stderr.readline()
        assert f"recording process {w.pid}" in line, line
        stdout, _ = w.communicate("g", timeout=300)
        assert w.returncode == 0
        _, err = p.communicate(timeout=300)
    finally:
        for proc in (w, p):
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    assert p.returncode == 0, err
    return stdout, line + err


@pytest.fixture(scope="module")
def leaks_csv(tmp_path_factory):
    out = tmp_path_factory.mktemp("ms") / "leaks.csv"
    stdout, err = record(out, "leaks")
    m = re.search(r"leaks (\S+) (\S+) (\S+) (\S+) (\S+)", stdout)
    assert m, stdout
    return out, [int(x, 16) for x in m.groups()], err


def big_blocks(path, stdout):
    """The workload's four 1 MiB blocks, in allocation order, as {name: (allocation id,
    ptr)}: mmap gives them all the same address, so only their ids tell them apart."""
    m = re.search(r"early=(\S+) late=(\S+) idle=(\S+) plain=(\S+)", stdout)
    assert m, stdout
    rows = [r for r in msmemscope.load(str(path))
            if r.event == "MALLOC" and r.attr["size"] == 1 << 20 and r.leaf == "ineff"]
    assert [r.ptr for r in rows] == [int(x, 16) for x in m.groups()]
    return dict(zip(("early", "late", "idle", "plain"),
                    ((r.attr["allocation_id"], r.ptr) for r in rows)))


@pytest.fixture(scope="module")
def ineff_csv(tmp_path_factory):
    out = tmp_path_factory.mktemp("ms") / "ineff.csv"
    stdout, _ = record(out, "ineff")
    return out, big_blocks(out, stdout)


def check_leak_report(rep, ptrs):
    assert rep.count == 5
    assert [l.size for l in rep.leaks] == LEAK_SIZES
    assert rep.total_bytes == sum(LEAK_SIZES) == 275344
    assert [l.leaf for l in rep.leaks] == LEAK_LEAVES
    assert [l.func for l in rep.leaks] == LEAK_FUNCS
    assert [l.ptr for l in rep.leaks] == ptrs
    assert rep.deadline is not None


def test_leaks_exact(leaks_csv):
    path, ptrs, err = leaks_csv
    out = io.StringIO()
    rep = msmemscope.check_leaks(input_path=str(path), mstx_info="test", start_index=0, out=out)
    check_leak_report(rep, ptrs)
    text = out.getvalue()
    assert "5 blocks, 275344 bytes" in text
    for leaf in LEAK_LEAVES:
        assert leaf in text
    # the other thread's free, realloc(p, 0), the block freed between marks #1 and #2: none
    assert all(l.tid == rep.leaks[0].tid for l in rep.leaks)
    assert "allocations" in err and "marks" in err


def test_recording_rows(leaks_csv):
    path, ptrs, _ = leaks_csv
    rows = msmemscope.load(str(path))
    with open(path) as f:
        assert f.readline().rstrip("\n").split(",") == COLUMNS
    assert [r.name for r in rows if r.event == "MSTX"] == ["test"] * 3
    assert all(r.device == "host" for r in rows)
    assert [r.ts for r in rows] == sorted(r.ts for r in rows)
    # the realloc move: a FREE of the 16-byte block and a MALLOC of the new one, same time
    (new,) = [r for r in rows if r.event == "MALLOC" and r.ptr == ptrs[2]]
    (old,) = [r for r in rows if r.event == "FREE" and r.name == "realloc" and r.ts == new.ts
              and r.attr["size"] == 16]
    assert old.ptr != new.ptr and new.name == "realloc"
    # the partial unmap of leak_mmap: one page of its four
    (mm,) = [r for r in rows if r.event == "MALLOC" and r.ptr == ptrs[4]]
    assert mm.type == "MMAP" and mm.attr["size"] == 16384
    unmaps = [r for r in rows if r.event == "FREE" and
              r.attr.get("allocation_id") == mm.attr["allocation_id"]]
    assert [u.attr["size"] for u in unmaps] == [4096, 12288]
    # the block another thread freed
    handoff = [r for r in rows if r.event == "MALLOC" and r.leaf == "handoff"]
    (free,) = [r for r in rows if r.event == "FREE" and
               r.attr.get("allocation_id") == handoff[0].attr["allocation_id"]]
    assert free.tid != handoff[0].tid and free.pid == handoff[0].pid
    # nothing lost, and the file says so
    last = rows[-1]
    assert last.event == "SYSTEM" and last.type == "LOST"
    assert last.attr == {"ringbuf": 0, "inflight": 0, "sampled": 0, "stacks": 0, "marks": 0,
                         "not_kept": 0}


def test_leaks_sqlite(tmp_path):
    out = tmp_path / "leaks.db"
    stdout, _ = record(out, "leaks")
    ptrs = [int(x, 16) for x in re.search(r"leaks (.*)", stdout).group(1).split()]
    con = sqlite3.connect(out)
    cols = [d[0] for d in con.execute("SELECT * FROM memscope_dump").description]
    con.close()
    assert cols == COLUMNS
    rep = LeaksAnalyzer().analyze(LeaksConfig(input_path=str(out), mstx_info="test",
                                              start_index=0), out=io.StringIO())
    check_leak_report(rep, ptrs)


def test_leaks_with_stacks(tmp_path):
    out = tmp_path / "g.csv"
    stdout, _ = record(out, "leaks", extra=["-g"])
    rep = msmemscope.check_leaks(str(out), "test", 0, out=io.StringIO())
    assert [l.leaf for l in rep.leaks] == LEAK_LEAVES
    # the walk goes on past the call site: leaks() and main() are callers of each
    for l in rep.leaks:
        frames = [f.rsplit(" (", 1)[0] for f in l.stack.split(";")]
        assert frames[:3] == [l.leaf, "leaks", "main"], l.stack


def test_inefficient_exact(ineff_csv, tmp_path):
    path, ptrs = ineff_csv
    copy = tmp_path / "ineff.csv"
    copy.write_bytes(path.read_bytes())
    out = io.StringIO()
    found = msmemscope.check_inefficient(input_path=str(copy), out=out)
    got = [(f.type, f.allocation_id, f.ptr) for f in found]
    assert got == [("early_allocation",) + ptrs["early"],
                   ("late_deallocation",) + ptrs["late"],
                   ("temporary_idleness",) + ptrs["idle"]]
    idle = [f for f in found if f.type == "temporary_idleness"][0]
    assert idle.calls == 8000 and idle.size == 1 << 20
    assert all(f.leaf == "ineff" for f in found)
    assert "3 inefficient blocks" in out.getvalue()
    # written back into the MALLOC rows, once even when analyzed twice
    msmemscope.check_inefficient(str(copy), out=io.StringIO())
    rows = {r.attr["allocation_id"]: r for r in msmemscope.load(str(copy))
            if r.event == "MALLOC"}
    assert rows[ptrs["early"][0]].attr["inefficient"] == "early_allocation"
    assert rows[ptrs["late"][0]].attr["inefficient"] == "late_deallocation"
    assert rows[ptrs["idle"][0]].attr["inefficient"] == "temporary_idleness"
    assert "inefficient" not in rows[ptrs["plain"][0]].attr
    assert sum("inefficient" in r.attr for r in rows.values()) == 3


def test_inefficient_filters(ineff_csv, tmp_path):
    path, ptrs = ineff_csv
    copy = tmp_path / "f.csv"
    copy.write_bytes(path.read_bytes())
    a = InefficientAnalyzer()
    only = a.analyze(InefficientConfig(str(copy), inefficient_type=["late_deallocation"]),
                     out=None)
    assert [(f.type, f.allocation_id) for f in only] == [("late_deallocation",
                                                          ptrs["late"][0])]
    assert a.analyze(InefficientConfig(str(copy), mem_size=(1 << 20) + 1), out=None) == []
    # 8000 calls: idle at a threshold of 7999, not at 8000
    t = InefficientConfig(str(copy), inefficient_type=["temporary_idleness"],
                          idle_threshold=7999)
    assert [f.allocation_id for f in a.analyze(t, out=None)] == [ptrs["idle"][0]]
    t.idle_threshold = 8000
    assert a.analyze(t, out=None) == []


def test_inefficient_sqlite(tmp_path):
    out = tmp_path / "i.db"
    stdout, _ = record(out, "ineff")
    idle = big_blocks(out, stdout)["idle"][0]
    found = msmemscope.analyze("inefficient", input_path=str(out), mem_size=0,
                               inefficient_type=["temporary_idleness"], idle_threshold=3000,
                               out=io.StringIO())
    assert [f.allocation_id for f in found] == [idle]
    con = sqlite3.connect(out)
    attrs = [a for (a,) in con.execute('SELECT "Attr" FROM memscope_dump WHERE "Event" = '
                                       '\'MALLOC\' AND "Attr" LIKE \'%inefficient%\'')]
    con.close()
    assert attrs == [f"{{size:1048576,allocation_id:{idle},owner:libc.so.6,"
                     f"inefficient:temporary_idleness}}"]


def test_sampled_total(tmp_path):
    out = tmp_path / "s.csv"
    stdout, _ = record(out, "sampled", 40000, extra=["--sample-bytes", "8k", "--no-markers"])
    total = int(re.search(r"total=(\d+)", stdout).group(1))
    rows = [r for r in msmemscope.load(str(out)) if r.event == "MALLOC" and r.leaf == "sampled"]
    est = sum(r.attr["weight"] for r in rows)
    assert 0 < len(rows) < 40000
    assert abs(est - total) / total < 0.05, (est, total, len(rows))
    # a sampled block's free is recorded, an unsampled one's is not
    frees = [r for r in msmemscope.load(str(out)) if r.event == "FREE"]
    assert all(f.attr.get("allocation_id", 0) > 0 for f in frees)


def test_analyzer_api():
    assert msmemscope.list_analyzers() == ["leaks", "inefficient"]
    assert msmemscope.get_analyzer_config("leaks") == {"input_path": "", "mstx_info": "",
                                                       "start_index": 0}
    assert msmemscope.get_analyzer_config("inefficient") == {
        "input_path": "", "mem_size": 0,
        "inefficient_type": ["early_allocation", "late_deallocation", "temporary_idleness"],
        "idle_threshold": 3000}
    with pytest.raises(MemScopeError, match="unknown analyzer type 'leak'"):
        msmemscope.get_analyzer_config("leak")
    with pytest.raises(MemScopeError, match="takes input_path, mstx_info, start_index, not "
                                            "mem_size"):
        msmemscope.analyze("leaks", input_path="x", mstx_info="t", mem_size=1)
    import kperf.memscope as km
    assert km.list_analyzers() == msmemscope.list_analyzers()
    assert km.LeaksAnalyzer is LeaksAnalyzer


def test_bad_files(tmp_path, leaks_csv):
    path, _, _ = leaks_csv
    text = tmp_path / "notes.txt"
    text.write_text("hello, world\n1,2\n")
    with pytest.raises(MemScopeError, match="is not a memscope recording: its first line is "
                                            "not msMemScope's header"):
        msmemscope.check_leaks(str(text), "test", 0)
    lines = path.read_text().splitlines()
    cut = tmp_path / "cut.csv"
    cut.write_text("\n".join(",".join(f for i, f in enumerate(l.split(","))
                                      if i != 9) for l in lines[:1]) + "\n")
    with pytest.raises(MemScopeError, match="column 'Attr' missing"):
        msmemscope.check_leaks(str(cut), "test", 0)
    with pytest.raises(MemScopeError, match="no such file"):
        msmemscope.check_inefficient(str(tmp_path / "none.csv"))
    db = tmp_path / "other.db"
    sqlite3.connect(db).execute("CREATE TABLE t (x)").connection.commit()
    with pytest.raises(MemScopeError, match="a SQLite database but not a memscope recording"):
        msmemscope.check_inefficient(str(db))


def test_bad_arguments(leaks_csv):
    path = str(leaks_csv[0])
    with pytest.raises(MemScopeError, match=r"no mark 'nope' in .* \(its marks: 'test'\)"):
        msmemscope.check_leaks(path, "nope", 0)
    with pytest.raises(MemScopeError, match="start_index 2 is out of range: .* has 3 marks "
                                            "'test'.*at most 1"):
        msmemscope.check_leaks(path, "test", 2)
    with pytest.raises(MemScopeError, match="start_index must be at least 0, not -1"):
        msmemscope.check_leaks(path, "test", -1)
    with pytest.raises(MemScopeError, match="unknown inefficient_type 'early'"):
        msmemscope.check_inefficient(path, inefficient_type=["early"])
    with pytest.raises(MemScopeError, match="idle_threshold must be at least 1, not 0"):
        msmemscope.check_inefficient(path, idle_threshold=0)
    with pytest.raises(MemScopeError, match="mem_size must be an int, not str"):
        msmemscope.check_inefficient(path, mem_size="1")


def cli(*args):
    return subprocess.run([CLI, "memscope", *map(str, args)], capture_output=True, text=True,
                          timeout=120)


def test_cli_analyze(leaks_csv):
    path = leaks_csv[0]
    p = cli("analyze", "leaks", path, "--mstx-info", "test")
    assert p.returncode == 0, p.stderr
    assert "5 blocks, 275344 bytes" in p.stdout
    p = cli("analyze", "leaks", path, "--mstx-info", "test", "--start-index", "5")
    assert p.returncode == 1
    assert "kperf-bpf memscope analyze: start_index 5 is out of range" in p.stderr
    p = cli("analyze", "leaky", path)
    assert p.returncode == 2 and "invalid choice: 'leaky'" in p.stderr


@pytest.mark.parametrize("args,message", [
    ([], "give the processes (-p PID) or a command to run (-- COMMAND)"),
    (["-p", "1", "--", "true"], "give either -p or a command, not both"),
    (["--sample-bytes", "lots", "--", "true"],
     "--sample-bytes wants a number of bytes like 524288 or 512k, not 'lots'"),
    (["--sample-bytes", "0", "--", "true"], "--sample-bytes must be at least 1"),
    (["--min-size", "-5", "--", "true"], "--min-size wants a number of bytes"),
    (["-p", "x"], "-p wants pids like 1234,5678, not 'x'"),
])
def test_cli_bad_options(args, message):
    p = cli(*args)
    assert p.returncode != 0
    assert message in p.stderr


def test_cli_bad_targets(tmp_path):
    pid = free_pid()
    p = cli("-o", tmp_path / "x.csv", "-p", pid)
    assert p.returncode == 1
    assert f"{pid}" in p.stderr and "kperf-bpf memscope:" in p.stderr
    p = cli("-o", tmp_path / "x.csv", "--", tmp_path / "missing")
    assert p.returncode == 127 and "no such program" in p.stderr
    # a static program without symbols has no allocator to find
    src = tmp_path / "s.c"
    src.write_text("int main(void) { return 0; }\n")
    exe = tmp_path / "static"
    if subprocess.run(["gcc", "-static", "-s", "-o", exe, src]).returncode:
        pytest.skip("no static libc here")
    p = cli("-o", tmp_path / "x.csv", "--", exe)
    assert p.returncode == 1
    assert f"{exe} has no allocator to trace: no malloc symbol in {exe}" in p.stderr
    assert not (tmp_path / "x.csv").exists()


def test_prefix_not_found(tmp_path):
    p = cli("-o", tmp_path / "x.csv", "--prefix", "je_", "--", wl(), "leaks")
    assert p.returncode == 1
    assert "no je_malloc symbol in" in p.stderr


def test_pid_mode(tmp_path):
    out = tmp_path / "p.csv"
    stdout, err = record_pid(out, "leaks")
    assert "probes in libc.so.6; Ctrl-C to stop" in err
    ptrs = [int(x, 16) for x in re.search(r"leaks (.*)", stdout).group(1).split()]
    rep = msmemscope.check_leaks(str(out), "test", 0, out=io.StringIO())
    check_leak_report(rep, ptrs)


@pytest.mark.skipif(not has_attach_cookies(), reason="a kernel without attach cookies")
def test_command_marks_without_cookies(tmp_path):
    """KPERF_BPF_NO_COOKIE=1 (the kernels before 5.15): a command's marks are said missing"""
    out = tmp_path / "n.csv"
    p = subprocess.run([CLI, "memscope", "-o", str(out), "--", wl(), "leaks"],
                       capture_output=True, text=True, timeout=300,
                       env=dict(os.environ, KPERF_BPF_NO_COOKIE="1"))
    assert p.returncode == 0, p.stderr
    assert "the mstx marks of a command kperf-bpf starts are not collected" in p.stderr
    rows = msmemscope.load(str(out))
    assert not [r for r in rows if r.event == "MSTX"]
    assert rows[-1].attr["marks_unavailable"] == 1
    with pytest.raises(MemScopeError, match=r"no mark 'test' in .* \(its marks: none\)"):
        msmemscope.check_leaks(str(out), "test", 0)


def forkleak(out, *extra):
    """memscope_wl forkleak recorded: (child pid, parent's leak, child's two leaks)"""
    stdout, err = record(out, "forkleak", extra=extra)
    m = re.search(r"forkleak child=(\d+) parent=(\S+) child_a=(\S+) child_b=(\S+)", stdout)
    assert m, stdout + err
    return int(m.group(1)), int(m.group(2), 16), [int(m.group(3), 16), int(m.group(4), 16)]


def test_fork_followed(tmp_path):
    """A child forked by the recorded process, which leaks at once: its calls are recorded
    under its pid, and each process's leak report is exactly its own."""
    out = tmp_path / "f.csv"
    cpid, pptr, cptrs = forkleak(out)
    parent = msmemscope.check_leaks(str(out), "parent", 0, out=io.StringIO())
    child = msmemscope.check_leaks(str(out), "child", 0, out=io.StringIO())
    ppid = parent.leaks[0].pid
    assert [(l.pid, l.size, l.func, l.leaf, l.ptr) for l in parent.leaks] == [
        (ppid, 111, "malloc", "leak_parent", pptr)]
    assert [(l.pid, l.size, l.func, l.leaf, l.ptr) for l in child.leaks] == [
        (cpid, 222, "malloc", "child_leak_a", cptrs[0]),
        (cpid, 333, "calloc", "child_leak_b", cptrs[1])]
    assert child.total_bytes == 555 and ppid != cpid
    rows = msmemscope.load(str(out))
    # the child's freed block, and its marks, are its own
    assert [r.attr["size"] for r in rows if r.event == "MALLOC" and r.pid == cpid
            and r.leaf == "forkleak"] == [50]
    assert [r.pid for r in rows if r.event == "MSTX" and r.name == "child"] == [cpid] * 3
    # none of its calls ran unprobed
    assert rows[-1].attr == {"ringbuf": 0, "inflight": 0, "sampled": 0, "stacks": 0,
                             "marks": 0, "not_kept": 0}


def test_fork_not_followed(tmp_path):
    out = tmp_path / "n.csv"
    cpid, _, _ = forkleak(out, "--no-children")
    rows = msmemscope.load(str(out))
    assert not [r for r in rows if r.pid == cpid]
    with pytest.raises(MemScopeError, match=r"no mark 'child'"):
        msmemscope.check_leaks(str(out), "child", 0)


def memscope_targets(pid):
    """The keys of the `targets` map of the memscope run that records <pid> (bpftool)."""
    progs = json.loads(subprocess.run(["bpftool", "-j", "prog", "show"], capture_output=True,
                                      text=True, check=True).stdout)
    for prog in progs:
        if prog.get("name") != "kp_ms_exit":
            continue
        for mid in prog.get("map_ids", []):
            info = json.loads(subprocess.run(["bpftool", "-j", "map", "show", "id", str(mid)],
                                             capture_output=True, text=True).stdout or "{}")
            if info.get("name") != "targets":
                continue
            dump = json.loads(subprocess.run(["bpftool", "-j", "map", "dump", "id", str(mid)],
                                             capture_output=True, text=True).stdout or "[]")
            keys = {e["formatted"]["key"] for e in dump}
            if pid in keys:
                return keys
    return None


def test_exited_children_leave_targets():
    """Followed children that exited leave the BPF filter: 20 short-lived children of a shell
    (each probed, then gone) and, while the shell sleeps, the filter holds exactly the
    shell and its sleeping child, never a pid of an exited process (which the kernel would
    give to another process next)."""
    script = "echo $$; for i in $(seq 20); do /bin/true; done; sleep 30 & echo $!; wait"
    p = subprocess.Popen([CLI, "memscope", "--no-markers", "-o", "/dev/null", "--", "sh", "-c",
                          script], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        sh_pid = int(p.stdout.readline())
        sleep_pid = int(p.stdout.readline())
        keys = None
        for _ in range(200):
            keys = memscope_targets(sh_pid)
            if keys == {sh_pid, sleep_pid}:
                break
            time.sleep(0.05)
        assert keys == {sh_pid, sleep_pid}, (keys, sh_pid, sleep_pid)
        os.kill(sleep_pid, signal.SIGKILL)
        _, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
