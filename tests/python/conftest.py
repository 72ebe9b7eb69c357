"""Shared fixtures of the Python tests: the kperf package from this tree, the build
directory, the syscalls workload (started blocked so a tracer can attach to its pid first),
skips for C functions the library does not export yet, and a check that a test leaves no BPF
object open in this process.

Run by `make test-python` (KPERF_BUILD and KPERF_BPF_LIB set, as root).
"""

import os
import re
import subprocess
import sys
import time

import pytest

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
if os.path.join(REPO, "python") not in sys.path:
    sys.path.insert(0, os.path.join(REPO, "python"))

import kperf  # noqa: E402

BUILD = os.environ.get("KPERF_BUILD") or os.path.join(REPO, "build")


def requires(*symbols):
    """Skip unless libkperf-bpf exports every C function in <symbols>."""
    missing = [s for s in symbols if not hasattr(kperf.libkperf, s)]
    return pytest.mark.skipif(
        bool(missing),
        reason=f"{', '.join(missing)} not in {kperf.library_path} yet "
        f"(the C module that provides it is not merged)",
    )


def tracefs_field(system, event, field):
    """(offset, size, signed) of <field> in this kernel's format file of system:event: the
    facts a decoded field must match, which differ between kernels (char is signed in the
    formats of 6.1 and older)."""
    with open(f"/sys/kernel/tracing/events/{system}/{event}/format") as f:
        fmt = f.read()
    m = re.search(r"field:[^;]*\b" + re.escape(field) +
                  r"(\[\d*\])?;\s*offset:(\d+);\s*size:(\d+);\s*signed:(\d+);", fmt)
    assert m, f"{field} not in {system}:{event}'s format"
    return int(m[2]), int(m[3]), bool(int(m[4]))


def has_core_pmu():
    """Does this machine have a hardware PMU? x86's is 'cpu' (or cpu_core/cpu_atom),
    arm64's armv8_pmuv3* (qemu's -cpu max emulates one)."""
    root = "/sys/bus/event_source/devices"
    try:
        names = os.listdir(root)
    except OSError:
        return False
    return any(n in ("cpu", "cpu_core", "cpu_atom") or n.startswith("armv8_pmuv3")
               for n in names)


def bpf_fds():
    """BPF programs, maps and links this process holds open."""
    n = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if target.startswith("anon_inode:bpf"):
            n += 1
    return n


@pytest.fixture
def no_bpf_leak():
    """The test must close every BPF object it made this process load."""
    before = bpf_fds()
    yield
    assert bpf_fds() == before, "BPF programs/maps/links left open"


class Workload:
    """A tests/workloads program started with its stdin a pipe (for --wait)."""

    def __init__(self, name, *args):
        path = os.path.join(BUILD, "workloads", name)
        if not os.access(path, os.X_OK):
            pytest.skip(f"{path} is not built (make workloads)")
        self.proc = subprocess.Popen(
            [path, *map(str, args)], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL
        )
        self.pid = self.proc.pid
        if "--wait" in map(str, args):
            self._wait_blocked()

    def _wait_blocked(self):
        """Until the workload sits in read(0): its start-up (the dynamic loader's openat
        calls, which take long under an emulator) is over before anyone traces it."""
        want = "0 0x0 " if os.uname().machine == "x86_64" else "63 0x0 "
        for _ in range(500):
            try:
                with open(f"/proc/{self.pid}/syscall") as f:
                    if f.read().startswith(want):
                        return
            except OSError:
                return
            time.sleep(0.01)
    def go(self):
        """Release a workload started with --wait."""
        self.proc.stdin.write(b"g")
        self.proc.stdin.close()

    def wait(self, timeout=120):
        return self.proc.wait(timeout)

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        if self.proc.stdin and not self.proc.stdin.closed:
            self.proc.stdin.close()


@pytest.fixture
def workload():
    """workload("syscalls", "--wait", ...) -> Workload; killed at the end of the test."""
    started = []

    def start(name, *args):
        w = Workload(name, *args)
        started.append(w)
        return w

    yield start
    for w in started:
        w.kill()


def free_pid():
    """A pid no process has."""
    pid_max = int(open("/proc/sys/kernel/pid_max").read())
    for pid in range(pid_max - 1, 1, -1):
        if not os.path.exists(f"/proc/{pid}"):
            return pid
    raise RuntimeError("no free pid")
