"""kperf-bpf agent: /metrics scraped by a real Prometheus must give exactly the syscalls a
workload made in its own cgroup; the exposition passes promtool; OpenMetrics when asked;
SIGTERM exits 0 and leaves no program loaded; SIGHUP reloads --config; bad options are
refused with their message. (Profiles, bounds and bad requests: test_agent_http.py.)
"""

import os
import shutil
import signal
import subprocess

import pytest

from agent_util import (Agent, Cgroup, KPERF, Prometheus, bpf_programs_of, parse_exposition,
                        system_bpf_programs, wait_until)
from conftest import BUILD

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="needs root (BPF)")

GETPPID = 12345
FAILS = 7


def incgroup(cg, *cmd, stdin=None):
    """<cmd> born in cgroup <cg> (tests/workloads/incgroup: clone3 CLONE_INTO_CGROUP)."""
    return subprocess.Popen([os.path.join(BUILD, "workloads", "incgroup"), cg.dir,
                             *map(str, cmd)], stdin=stdin, stdout=subprocess.DEVNULL)


def test_prometheus_counts_exactly_the_workloads_syscalls():
    agent = Agent("--interval", "1")
    held = bpf_programs_of(agent.proc.pid)
    prom = None
    cg, cg0 = Cgroup(), Cgroup()
    wls = []
    try:
        prom = Prometheus(agent.port)
        # the same program in a second cgroup without failing calls: the dynamic loader's own
        # failing openat (library search paths) are the difference's baseline
        for c, fails in ((cg, FAILS), (cg0, 0)):
            wls.append(incgroup(c, os.path.join(BUILD, "workloads", "syscalls"), "--getppid",
                                GETPPID, "--writes", 0, "--fails", fails, "--wait",
                                stdin=subprocess.PIPE))
        # the agent knows the processes (and so their cgroups) before they make their calls
        for c in (cg, cg0):
            assert wait_until(lambda: f'cgroup="{c.name}"' in agent.metrics()), agent.stderr()
        for wl in wls:
            wl.stdin.write(b"g")
            wl.stdin.close()
            assert wl.wait(60) == 0
        sel = f'cgroup="{cg.name}",syscall="getppid"'

        def scraped():
            v = prom.value(f"sum(kperf_syscall_duration_seconds_count{{{sel}}})")
            return v == GETPPID and v

        got = wait_until(scraped)
        assert got == GETPPID, prom.value(f"sum(kperf_syscall_duration_seconds_count{{{sel}}})")
        # the histogram's +Inf bucket, the errors, the labels: exact too
        assert prom.value(
            f'sum(kperf_syscall_duration_seconds_bucket{{{sel},le="+Inf"}})') == GETPPID
        errors = [f'sum(kperf_syscall_errors_total{{cgroup="{c.name}",syscall="openat"}})'
                  for c in (cg, cg0)]
        assert wait_until(lambda: prom.value(f"{errors[0]} - {errors[1]}") == FAILS), \
            [prom.value(e) for e in errors]
        assert prom.value(f'sum(kperf_syscall_errors_total{{{sel}}})') == 0
        comms = {m["comm"] for m, _ in prom.query(f"kperf_syscall_duration_seconds_count{{{sel}}}")}
        assert comms == {"syscalls"}
        # buckets are cumulative and end at the count
        samples = [s for s in parse_exposition(agent.metrics())
                   if s[0] == "kperf_syscall_duration_seconds_bucket"
                   and s[1].get("cgroup") == cg.name and s[1].get("syscall") == "getppid"]
        values = [v for _, _, v in samples]
        assert values == sorted(values) and values[-1] == GETPPID
        # the agent's own health and counters are there
        text = agent.metrics()
        for name in ("kperf_agent_resident_memory_bytes", "kperf_agent_cpu_seconds_total",
                     "kperf_agent_bpf_programs", "kperf_agent_events_lost_total",
                     "kperf_task_clock_seconds_total", "kperf_context_switches_total",
                     "kperf_page_faults_total"):
            assert f"\n{name}" in text, name
        progs = [v for n, _, v in parse_exposition(text) if n == "kperf_agent_bpf_programs"]
        assert progs and progs[0] >= 1
    finally:
        for wl in wls:
            if wl.poll() is None:
                wl.kill()
                wl.wait()
        if prom:
            prom.close()
        rc = agent.stop()
        cg.close()
        cg0.close()
    assert rc == 0, agent.stderr()
    assert held, "the agent holds no BPF program"
    # the kernel frees a closed program after an RCU grace period: a moment after the exit
    assert wait_until(lambda: not held & system_bpf_programs(), timeout=30), \
        "the agent left programs loaded"


def test_short_lived_processes_are_counted_under_their_cgroup(tmp_path):
    """The kernel keys its summary by cgroup: processes that live a millisecond, all gone
    long before the agent's next fold, are counted under their cgroup, exactly, and nothing
    of theirs under [exited]."""
    runs, true_runs, each = 100, 300, 7
    agent = Agent("--interval", "1", "--syscalls", "getppid,execve", "--counters", "none")
    cg = Cgroup("short")
    link = tmp_path / "kp3true"  # a name of its own: an exec of the link is named after it
    os.symlink("/bin/true", link)
    try:
        for _ in range(true_runs):
            assert incgroup(cg, link).wait(60) == 0
        for _ in range(runs):
            assert incgroup(cg, os.path.join(BUILD, "workloads", "syscalls"), "--getppid",
                            each, "--writes", 0, "--fails", 0).wait(60) == 0

        def counts():
            got = {}
            for n, l, v in parse_exposition(agent.metrics()):
                if n == "kperf_syscall_duration_seconds_count" and (
                        l["cgroup"] == cg.name or l["comm"] in ("kp3true", "syscalls")
                        and l["cgroup"] == "[exited]" or l["comm"] == "kp3true"):
                    key = (l["cgroup"], l["comm"], l["syscall"])
                    got[key] = got.get(key, 0) + v
            return got

        want = {(cg.name, "kp3true", "execve"): true_runs,
                (cg.name, "syscalls", "execve"): runs,
                (cg.name, "syscalls", "getppid"): runs * each}
        assert wait_until(lambda: counts() == want), counts()
    finally:
        rc = agent.stop()
        cg.close()
    assert rc == 0, agent.stderr()


def test_exposition_passes_promtool_and_openmetrics_on_accept():
    promtool = shutil.which("promtool")
    if not promtool:
        pytest.skip("promtool is not installed (make deps: prometheus)")
    agent = Agent()
    try:
        status, headers, body = agent.get("/metrics")
        assert status == 200
        assert headers["Content-Type"] == "text/plain; version=0.0.4; charset=utf-8"
        r = subprocess.run([promtool, "check", "metrics"], input=body, capture_output=True)
        assert r.returncode == 0, r.stdout.decode() + r.stderr.decode()
        status, headers, body = agent.get(
            "/metrics", headers={"Accept": "application/openmetrics-text; version=1.0.0"})
        text = body.decode()
        assert status == 200
        assert headers["Content-Type"].startswith("application/openmetrics-text; version=1.0.0")
        assert text.endswith("# EOF\n")
        assert "# TYPE kperf_syscall_errors counter\n" in text
        assert "# UNIT kperf_syscall_duration_seconds seconds\n" in text
        # /healthz and /readyz answer as the manifests' probes expect
        assert agent.get("/healthz")[0] == 200
        assert agent.get("/readyz")[:1] == (200,)
    finally:
        assert agent.stop() == 0, agent.stderr()


def test_sighup_reloads_the_config_file(tmp_path):
    cfg = tmp_path / "agent.conf"
    cfg.write_text("# bounds\ntop-comm = 2\ngrace = 10\n")
    agent = Agent("--config", cfg)
    try:
        cfg.write_text("top-comm = 1\ncache-mb = 0\n")
        agent.proc.send_signal(signal.SIGHUP)
        assert wait_until(lambda: "configuration reloaded" in agent.stderr(), timeout=20)
        cfg.write_text("top-comm = many\n")
        agent.proc.send_signal(signal.SIGHUP)
        assert wait_until(lambda: "unchanged" in agent.stderr(), timeout=20)
        assert (f"{cfg}:1: --top-comm wants a whole number from 0 to 1000, not 'many'; "
                "the configuration is unchanged") in agent.stderr()
        assert agent.get("/healthz")[0] == 200
    finally:
        assert agent.stop() == 0, agent.stderr()


@pytest.mark.parametrize("args,message", [
    (["--listen", "9464"], "--listen wants ADDRESS:PORT (127.0.0.1:9464), not '9464'"),
    (["--top-comm", "-1"], "--top-comm wants a whole number from 0 to 1000, not '-1'"),
    (["--interval", "0"], "--interval wants a whole number from 1 to 3600, not '0'"),
    (["--cache-mb", "lots"], "--cache-mb wants a whole number from 0 to 65536, not 'lots'"),
    (["-p", "12x"], "-p wants pids like 1234,5678, not '12x'"),
    (["--bogus"], "unknown option '--bogus'"),
    (["--config", "/nonexistent/agent.conf"],
     "cannot read /nonexistent/agent.conf: No such file or directory"),
    (["--syscalls", "none", "--counters", "none"],
     "--syscalls none and --counters none leave nothing to serve"),
    (["extra"], "unexpected argument 'extra'"),
])
def test_bad_options(args, message):
    r = subprocess.run([KPERF, "agent", *args], capture_output=True, text=True, timeout=30)
    assert r.returncode == 2
    assert f"kperf-bpf agent: {message}\n" in r.stderr


def test_bad_syscall_and_listen_address():
    r = subprocess.run([KPERF, "agent", "--syscalls", "getppid,nosuchcall", "--listen",
                        "127.0.0.1:0"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 1
    assert "kperf-bpf agent: syscalls: " in r.stderr and "nosuchcall" in r.stderr
    r = subprocess.run([KPERF, "agent", "--listen", "256.0.0.1:80"], capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 1
    assert "kperf-bpf agent: --listen 256.0.0.1:80: " in r.stderr


SETPRIV = ["setpriv", "--inh-caps=-all"]
FOUR = "+bpf,+perfmon,+sys_ptrace,+dac_read_search"


@pytest.mark.parametrize("drop,name,why", [
    ("bpf", "CAP_BPF", "to load the BPF programs"),
    ("perfmon", "CAP_PERFMON", "to attach them and open perf events"),
])
def test_refuses_naming_the_missing_capability(drop, name, why):
    caps = FOUR.replace(f"+{drop},", "").replace(f",+{drop}", "")
    r = subprocess.run([*SETPRIV, f"--bounding-set=-all,{caps}", KPERF, "agent", "--listen",
                        "127.0.0.1:0"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 1
    assert f"kperf-bpf agent: missing capability {name}, needed {why} (" in r.stderr


def test_runs_with_only_its_four_capabilities():
    """No CAP_SYS_ADMIN: the programs load, a workload's calls are counted exactly."""
    agent = Agent("--interval", "1", "--syscalls", "getppid",
                  prefix=[*SETPRIV, f"--bounding-set=-all,{FOUR}"])
    cg = Cgroup("caps")
    try:
        with open(f"/proc/{agent.proc.pid}/status") as f:
            eff = int(next(l for l in f if l.startswith("CapEff:")).split()[1], 16)
        assert not eff & (1 << 21), "CAP_SYS_ADMIN held"
        wl = incgroup(cg, os.path.join(BUILD, "workloads", "syscalls"), "--getppid", 4321,
                      "--writes", 0, "--fails", 0, "--wait", stdin=subprocess.PIPE)
        # the agent (tracing getppid only) knows the process once it is in the summary
        getppid_before = 0
        assert wait_until(lambda: wl.poll() is None and os.path.exists(f"/proc/{wl.pid}"))
        wl.stdin.write(b"g")
        wl.stdin.close()
        assert wl.wait(60) == 0

        def count():
            return sum(v for n, l, v in parse_exposition(agent.metrics())
                       if n == "kperf_syscall_duration_seconds_count"
                       and l.get("syscall") == "getppid"
                       and l.get("cgroup") in (cg.name, "[exited]")) - getppid_before

        # its only traced calls come after the go: if it ended between two folds it is
        # counted under [exited], else under its cgroup; nothing else calls getppid there
        assert wait_until(lambda: count() >= 4321, timeout=20), agent.metrics()[-2000:]
    finally:
        assert agent.stop() == 0, agent.stderr()
        cg.close()
