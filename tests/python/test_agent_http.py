"""kperf-bpf agent over HTTP: pprof profiles read by `go tool pprof`, one at a time, Go's
seconds=N with 400 on bad values; bad requests of every kind (unknown paths and methods, huge
query strings, 100 connections at once) get their status and leave the agent serving with its
memory flat; 1000 short-lived processes in many cgroups keep the series within the bounds,
and series of gone workloads go after the grace period; SIGTERM during a profile exits 0.
"""

import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import threading

import pytest

from agent_util import (Agent, Cgroup, bpf_programs_of, parse_exposition, system_bpf_programs,
                        wait_until)
from conftest import BUILD

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="needs root (BPF)")

WL = os.path.join(BUILD, "workloads")


def go_pprof(*args):
    go = shutil.which("go")
    if not go:
        pytest.skip("go is not installed (make deps: golang-go)")
    tmp = tempfile.mkdtemp(prefix="kperf-pprof-")
    env = dict(os.environ, HOME=tmp, PPROF_TMPDIR=tmp, GOCACHE=os.path.join(tmp, "cache"))
    try:
        r = subprocess.run([go, "tool", "pprof", *args], capture_output=True, text=True,
                           env=env, timeout=180)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    assert r.returncode == 0, r.stderr
    return r.stdout


def top_rows(out):
    """The function names of `pprof -top`'s rows, in order."""
    lines = out.splitlines()
    start = next(i for i, l in enumerate(lines) if l.strip().startswith("flat"))
    return [l.split()[-1] for l in lines[start + 1:] if l.strip()]


def test_pprof_profile_names_the_hot_function_first():
    burn = subprocess.Popen([os.path.join(WL, "cpuburn"), "--ms", "20000"],
                            stdout=subprocess.DEVNULL)
    agent = Agent("-p", burn.pid)
    try:
        out = go_pprof("-top", f"http://127.0.0.1:{agent.port}/debug/pprof/profile?seconds=2")
        assert top_rows(out)[0] == "hot_loop", out
    finally:
        burn.kill()
        burn.wait()
        assert agent.stop() == 0, agent.stderr()


def test_pprof_offcpu_and_one_profile_at_a_time():
    wl = subprocess.Popen([os.path.join(WL, "offcpu"), "--rounds", "400", "--compute-ms", "5",
                           "--block-ms", "10"], stdout=subprocess.DEVNULL)
    agent = Agent("-p", wl.pid)
    try:
        first = {}

        def take():
            first["r"] = agent.get("/debug/pprof/offcpu?seconds=3")

        t = threading.Thread(target=take)
        t.start()
        # a second profile while the first is taken: 429, whatever its kind (the poll may
        # take the slot before the thread's request arrives: then that one gets the 429)
        assert wait_until(lambda: agent.get("/debug/pprof/profile?seconds=1")[0] == 429
                          or first.get("r", (0,))[0] == 429, timeout=30)
        t.join(120)
        if first["r"][0] == 429:
            first["r"] = agent.get("/debug/pprof/offcpu?seconds=3")
        status, headers, body = first["r"]
        assert status == 200 and body[:2] == b"\x1f\x8b"
        out = go_pprof("-top", "-cum", f"http://127.0.0.1:{agent.port}"
                       "/debug/pprof/offcpu?seconds=2")
        assert "wait_on_pipe" in top_rows(out), out
    finally:
        wl.kill()
        wl.wait()
        assert agent.stop() == 0, agent.stderr()
    # off-CPU profiles need processes to follow (-p)
    agent = Agent("--syscalls", "getppid")
    try:
        status, _, body = agent.get("/debug/pprof/offcpu?seconds=1")
        assert (status, body) == (501, b"an off-CPU profile needs an agent started with -p PID\n")
    finally:
        assert agent.stop() == 0


def raw_request(port, data, read=True):
    s = socket.create_connection(("127.0.0.1", port), timeout=30)
    try:
        s.sendall(data)
        if not read:
            return s
        chunks = []
        while True:
            try:
                c = s.recv(65536)
            except ConnectionResetError:
                break
            if not c:
                break
            chunks.append(c)
        return b"".join(chunks)
    finally:
        if read:
            s.close()


def status_of(resp):
    return int(resp.split(b" ", 2)[1]) if resp.startswith(b"HTTP/1.") else None


def test_bad_requests():
    agent = Agent("--max-profile-seconds", "10", "--max-connections", "16")
    try:
        bad_seconds = "seconds wants a whole number of seconds from 1 to the agent's " \
                      "--max-profile-seconds\n"
        cases = [
            ("/nope", 404, None),
            ("/metrics/", 404, None),
            ("/debug/pprof/profile?seconds=-1", 400, bad_seconds),
            ("/debug/pprof/profile?seconds=1e9", 400, bad_seconds),
            ("/debug/pprof/profile?seconds=abc", 400, bad_seconds),
            ("/debug/pprof/profile?seconds=", 400,
             "seconds wants a whole number of seconds, not an empty value\n"),
            ("/debug/pprof/profile?seconds=0", 400, "seconds must be at least 1\n"),
            ("/debug/pprof/profile?seconds=11", 400,
             "profile duration exceeds the agent's --max-profile-seconds\n"),
            ("/debug/pprof/profile?seconds=99999999999999999999", 400, bad_seconds),
        ]
        for path, status, body in cases:
            got = agent.get(path)
            assert got[0] == status, (path, got)
            if body:
                assert got[2].decode() == body, path
        assert agent.get("/metrics", method="POST")[0] == 405
        assert agent.get("/metrics", method="DELETE")[0] == 405
        rss0 = agent.rss_kb()
        # a query string beyond the request memory: refused by the server library
        huge = raw_request(agent.port, b"GET /metrics?" + b"x" * 200000 + b" HTTP/1.1\r\n"
                           b"Host: x\r\n\r\n")
        assert status_of(huge) in (414, 431, None), huge[:200]
        huge = raw_request(agent.port, b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Big: " +
                           b"y" * 100000 + b"\r\n\r\n")
        assert status_of(huge) in (413, 431, None), huge[:200]
        assert not huge.startswith(b"HTTP/1.1 200")
        # 100 connections at once: the first 16 are served, the others closed at once;
        # twice: the second round must not grow the memory the first one settled
        def flood():
            socks = [raw_request(agent.port, b"GET /metrics HTTP/1.1\r\nHost: x\r\n"
                                 b"Connection: close\r\n\r\n", read=False)
                     for _ in range(100)]
            statuses = []
            for s in socks:
                data = b""
                try:
                    while True:
                        c = s.recv(65536)
                        if not c:
                            break
                        data += c
                except OSError:
                    pass
                s.close()
                statuses.append(status_of(data))
            assert set(statuses) <= {200, None}, statuses
            assert statuses.count(200) >= 16

        def serves():
            try:
                return agent.get("/healthz")[0] == 200 and agent.get("/metrics")[0] == 200
            except OSError:  # the closed connections are still being released
                return False

        flood()
        assert wait_until(serves, timeout=30)
        rss1 = agent.rss_kb()
        flood()
        assert wait_until(serves, timeout=30)
        assert agent.rss_kb() < rss1 + 2 * 1024, (rss0, rss1, agent.rss_kb())
        assert agent.proc.poll() is None
    finally:
        assert agent.stop() == 0, agent.stderr()


def prog_name(prog_id):
    out = subprocess.run(["bpftool", "-j", "prog", "show", "id", str(prog_id)],
                         capture_output=True, text=True).stdout
    return json.loads(out).get("name", "") if out else ""


def bpf_map_sizes(pid):
    """max_entries of the BPF maps process <pid> holds, by name (the largest of a name)."""
    sizes = {}
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            if os.readlink(f"/proc/{pid}/fd/{fd}") != "anon_inode:bpf-map":
                continue
            with open(f"/proc/{pid}/fdinfo/{fd}") as f:
                info = dict(l.split(":", 1) for l in f if ":" in l)
        except OSError:
            continue
        out = subprocess.run(["bpftool", "-j", "map", "show", "id",
                              info["map_id"].strip()], capture_output=True, text=True).stdout
        if out:
            m = json.loads(out)
            sizes[m["name"]] = max(sizes.get(m["name"], 0), int(info["max_entries"]))
    return sizes


def test_profiles_reuse_the_loaded_sampling_programs():
    """The first CPU profile loads the sampling programs, the next ones enable them again: the
    same program ids, and the same hot function first each time (the process resolved again
    after the first profile's state was let go), and capstone never mapped. After the agent,
    none of its programs."""
    burn = subprocess.Popen([os.path.join(WL, "cpuburn"), "--ms", "60000"],
                            stdout=subprocess.DEVNULL)
    agent = Agent("-p", burn.pid, "--profile-hz", 19, "--max-profile-seconds", 10)
    url = f"http://127.0.0.1:{agent.port}/debug/pprof/profile?seconds=2"
    held = set()
    try:
        before = bpf_programs_of(agent.proc.pid)
        # pprof waits 1.5 x seconds by default: the first profile also loads the programs
        first = top_rows(go_pprof("-top", "-timeout", "120", url))
        after_first = bpf_programs_of(agent.proc.pid)
        second = top_rows(go_pprof("-top", "-timeout", "120", url))
        after_second = bpf_programs_of(agent.proc.pid)
        held = after_second | before
        sampling = sorted(prog_name(i) for i in after_first - before
                          if prog_name(i).startswith("kp_sample"))
        assert len(sampling) == 1, (before, after_first, sampling)
        assert after_second == after_first
        # its maps sized for the longest profile: 19 Hz x 10 s x the CPUs, a power of two
        # from 1024 (kernel and user stacks: twice that)
        want = 1024
        while want < 19 * 10 * os.cpu_count() and want < 16384:
            want *= 2
        sizes = bpf_map_sizes(agent.proc.pid)
        assert sizes["stacks"] == 2 * want and sizes["counts0"] == want, sizes
        assert first[0] == "hot_loop" and second[0] == "hot_loop", (first, second)
        # nothing disassembled: capstone is loaded on a disassembly's first need only
        with open(f"/proc/{agent.proc.pid}/maps") as f:
            assert "libcapstone" not in f.read()
    finally:
        burn.kill()
        burn.wait()
        assert agent.stop() == 0, agent.stderr()
    # the kernel frees a closed program after an RCU grace period: a moment after the exit
    assert wait_until(lambda: not held & system_bpf_programs(), timeout=30)


def test_sigterm_during_a_profile_exits_0():
    agent = Agent()
    res = {}

    def take():
        # until it holds the one profile slot: the poll below may take it first
        while True:
            try:
                res["r"] = agent.get("/debug/pprof/profile?seconds=30")
            except OSError as e:
                res["r"] = e
            if isinstance(res["r"], OSError) or res["r"][0] != 429:
                return

    t = threading.Thread(target=take)
    t.start()
    try:
        assert wait_until(lambda: agent.get("/debug/pprof/profile?seconds=1")[0] == 429,
                          timeout=30)
    finally:
        # the agent stopped whatever happened: its reader thread and process gone
        assert agent.stop() == 0, agent.stderr()
        t.join(30)
    r = res["r"]
    assert isinstance(r, OSError) or r[0] == 503, r


def test_1000_short_lived_processes_stay_within_the_bounds(tmp_path):
    top, max_wl = 3, 4
    agent = Agent("--top-comm", top, "--max-workloads", max_wl, "--grace", 3, "--interval", 1)
    cgs = [Cgroup("bound") for _ in range(8)]
    names = []
    for i in range(40):  # 40 command names: each exec of a link is named after the link
        link = tmp_path / f"t{i}"
        os.symlink("/bin/true", link)
        names.append(str(link))
    worst = {"series": 0, "comms": 0, "cgroups": set(), "per_scrape": 0}
    stop = threading.Event()

    def scrape():
        while not stop.is_set():
            samples = parse_exposition(agent.metrics())
            series = [v for n, _, v in samples if n == "kperf_agent_series"][0]
            worst["series"] = max(worst["series"], series)
            per_cg = {}
            for n, l, _ in samples:
                if n == "kperf_syscall_errors_total":
                    per_cg.setdefault(l["cgroup"], set()).add(l["comm"])
                    worst["cgroups"].add(l["cgroup"])
            worst["comms"] = max([worst["comms"]] + [len(c) for c in per_cg.values()])
            worst["per_scrape"] = max(worst["per_scrape"], len(per_cg))

    # one shell that lives through the churn in each cgroup: a /bin/true is often gone before
    # the agent reads its cgroup (it is then counted under [exited]; on an idle machine most
    # are), so the shells are what makes more cgroups than max_wl live at a fold
    shells = [subprocess.Popen([os.path.join(WL, "incgroup"), cg.dir, "/bin/sh", "-c",
                                "while :; do sleep 0.2; done"]) for cg in cgs]
    t = threading.Thread(target=scrape)
    t.start()
    rss_half = 0
    try:
        for i in range(1000):
            r = subprocess.run([os.path.join(WL, "incgroup"), cgs[i % len(cgs)].dir,
                                names[i % len(names)]])
            assert r.returncode == 0
            if i == 499:
                rss_half = agent.rss_kb()
    finally:
        stop.set()
        t.join(60)
        for cg in cgs:  # the shells (incgroup waits for its child, in the cgroup)
            for pid in open(os.path.join(cg.dir, "cgroup.procs")).read().split():
                os.kill(int(pid), signal.SIGKILL)
        for sh in shells:
            sh.wait()
    try:
        ours = {c.name for c in cgs}
        # at any time at most max_wl cgroups of their own (the system's count too) and the
        # three shared ones ([other], [exited], [outside namespace]); the rest under [other];
        # at most top comm names per cgroup, the rest "other"
        assert worst["per_scrape"] <= max_wl + 3, worst
        assert "[other]" in worst["cgroups"]
        assert worst["series"] <= (max_wl + 3) * (top + 1) * 400
        assert worst["comms"] <= top + 1
        overflow = [v for n, _, v in parse_exposition(agent.metrics())
                    if n == "kperf_agent_workloads_overflow_total"][0]
        assert overflow > 0
        # the workloads are gone: their series go after the grace period
        assert wait_until(lambda: not any(f'cgroup="{c}"' in agent.metrics() for c in ours),
                          timeout=60)
        # the second 500 processes did not grow what the first 500 settled
        assert agent.rss_kb() < rss_half + 2 * 1024, (rss_half, agent.rss_kb())
    finally:
        for c in cgs:
            c.close()
        assert agent.stop() == 0, agent.stderr()
