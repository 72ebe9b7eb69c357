"""Helpers of the agent tests (test_agent*.py): the agent started as a process on a port the
kernel picks, a real Prometheus (Debian's package) scraping it, HTTP requests, cgroups of
their own for workloads (cgroup2), and the programs the system has loaded.
"""

import http.client
import json
import os
import select
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
import urllib.parse
import urllib.request

import pytest

from conftest import BUILD

KPERF = os.path.join(BUILD, "bin", "kperf-bpf")


def cgroup2_root():
    with open("/proc/mounts") as f:
        for line in f:
            parts = line.split()
            if parts[2] == "cgroup2":
                return parts[1]
    pytest.skip("no cgroup2 hierarchy mounted")


class Cgroup:
    """A cgroup2 directory of its own; removed (after its processes are gone) at close."""

    count = 0

    def __init__(self, tag="agent"):
        Cgroup.count += 1
        self.name = f"/kperf-test-{tag}-{os.getpid()}-{Cgroup.count}"
        self.dir = cgroup2_root() + self.name
        os.mkdir(self.dir)

    def close(self):
        for _ in range(200):
            try:
                os.rmdir(self.dir)
                return
            except FileNotFoundError:
                return
            except OSError:
                time.sleep(0.05)  # its last processes are still being reaped


def system_bpf_programs():
    """Ids of the BPF programs loaded on the system (bpftool)."""
    out = subprocess.run(["bpftool", "-j", "prog", "list"], capture_output=True, text=True,
                         check=True).stdout
    return {p["id"] for p in json.loads(out or "[]")}


def bpf_programs_of(pid):
    """Ids of the BPF programs process <pid> holds (its fds' fdinfo)."""
    ids = set()
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            if os.readlink(f"/proc/{pid}/fd/{fd}") != "anon_inode:bpf-prog":
                continue
            with open(f"/proc/{pid}/fdinfo/{fd}") as f:
                for line in f:
                    if line.startswith("prog_id:"):
                        ids.add(int(line.split()[1]))
        except OSError:
            pass
    return ids


class Agent:
    """kperf-bpf agent on 127.0.0.1 and a port of the kernel's choice."""

    def __init__(self, *args, prefix=(), expect_start=True):
        self.proc = subprocess.Popen(
            [*prefix, KPERF, "agent", "--listen", "127.0.0.1:0", *map(str, args)],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        self.lines = []
        self.port = None
        self._lock = threading.Lock()
        if expect_start:
            self._wait_listening()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _wait_listening(self):
        deadline = time.time() + 60
        while time.time() < deadline:
            r, _, _ = select.select([self.proc.stderr], [], [], 0.5)
            if r:
                line = self.proc.stderr.readline()
                if not line:
                    break
                self.lines.append(line)
                if "listening on" in line:
                    self.port = int(line.strip().rsplit(":", 1)[1])
                    return
        self.proc.kill()
        self.proc.wait()
        raise AssertionError("the agent did not start: " + "".join(self.lines))

    def _read(self):
        for line in self.proc.stderr:
            with self._lock:
                self.lines.append(line)

    def stderr(self):
        with self._lock:
            return "".join(self.lines)

    def get(self, path, headers=None, method="GET", timeout=60):
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        try:
            c.request(method, path, headers=headers or {})
            r = c.getresponse()
            return r.status, dict(r.getheaders()), r.read()
        finally:
            c.close()

    def metrics(self):
        status, _, body = self.get("/metrics")
        assert status == 200
        return body.decode()

    def rss_kb(self):
        with open(f"/proc/{self.proc.pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        return 0

    def stop(self, timeout=10):
        """SIGTERM; the exit status (the wait is a bound against a hang, not a timing)."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()
            self._reader.join(5)

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class Prometheus:
    """Debian's prometheus scraping <targets> every second, its data in a temporary dir."""

    def __init__(self, target_port):
        exe = shutil.which("prometheus")
        if not exe:
            pytest.skip("prometheus is not installed (make deps)")
        self.dir = tempfile.mkdtemp(prefix="kperf-prom-")
        cfg = os.path.join(self.dir, "prometheus.yml")
        with open(cfg, "w") as f:
            f.write("global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
                    "scrape_configs:\n  - job_name: kperf\n    static_configs:\n"
                    f"      - targets: ['127.0.0.1:{target_port}']\n")
        self.port = free_port()
        self.log = open(os.path.join(self.dir, "log"), "w")
        self.proc = subprocess.Popen(
            [exe, f"--config.file={cfg}", f"--storage.tsdb.path={self.dir}/data",
             f"--web.listen-address=127.0.0.1:{self.port}", "--log.level=warn"],
            stdout=self.log, stderr=self.log)
        for _ in range(600):
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/-/ready",
                                            timeout=1) as r:
                    if r.status == 200:
                        return
            except OSError:
                pass
            if self.proc.poll() is not None:
                break
            time.sleep(0.1)
        self.close()
        raise AssertionError("prometheus did not start: " + open(self.log.name).read())

    def query(self, q):
        """The instant vector of <q>: [(labels, value)]."""
        url = f"http://127.0.0.1:{self.port}/api/v1/query?" + urllib.parse.urlencode(
            {"query": q})
        with urllib.request.urlopen(url, timeout=10) as r:
            data = json.load(r)
        assert data["status"] == "success", data
        return [(x["metric"], float(x["value"][1])) for x in data["data"]["result"]]

    def value(self, q):
        res = self.query(q)
        return res[0][1] if res else None

    def close(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()
        shutil.rmtree(self.dir, ignore_errors=True)


def wait_until(fn, timeout=60, step=0.2):
    """Poll <fn> until it returns a true value (returned) or <timeout> passes (None)."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        v = fn()
        if v:
            return v
        time.sleep(step)
    return None


def parse_exposition(text):
    """Samples of a Prometheus text exposition: [(name, {labels}, value)]."""
    out = []
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        name_labels, value = line.rsplit(" ", 1)
        labels = {}
        if "{" in name_labels:
            name, rest = name_labels.split("{", 1)
            rest = rest.rstrip("}")
            i = 0
            while i < len(rest):
                eq = rest.index("=", i)
                key = rest[i:eq]
                j = eq + 2
                val = []
                while rest[j] != '"':
                    if rest[j] == "\\":
                        j += 1
                        val.append({"n": "\n"}.get(rest[j], rest[j]))
                    else:
                        val.append(rest[j])
                    j += 1
                labels[key] = "".join(val)
                i = j + 2 if j + 1 < len(rest) and rest[j + 1] == "," else j + 1
        else:
            name = name_labels
        out.append((name, labels, float(value)))
    return out
