"""The kperf package inside a PID namespace: pidns_inner.py, run by pytest under
`unshare --pid --fork --mount-proc`, must pass there (trace, record and stat by the
namespace's pid, exact), and leave no BPF program behind."""

import os
import shutil
import subprocess
import sys

import pytest
from conftest import REPO, requires

pytestmark = requires("PmuTraceOpen", "PmuOpen")


def bpf_prog_ids():
    """The ids of the BPF programs loaded on the machine (bpftool), None without bpftool."""
    if not shutil.which("bpftool"):
        return None
    out = subprocess.run(["bpftool", "prog", "list"], capture_output=True, text=True).stdout
    return {line.split(":")[0] for line in out.splitlines() if line[:1].isdigit()}


def test_kperf_inside_a_pid_namespace():
    if not shutil.which("unshare"):
        pytest.skip("unshare (util-linux) is not installed")
    before = bpf_prog_ids()
    env = dict(os.environ, KPERF_PIDNS_INNER="1", PYTHONDONTWRITEBYTECODE="1")
    r = subprocess.run(
        ["unshare", "--pid", "--fork", "--mount-proc", sys.executable, "-m", "pytest", "-q",
         "-p", "no:cacheprovider", os.path.join(REPO, "tests", "python", "pidns_inner.py")],
        env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "4 passed" in r.stdout, r.stdout
    after = bpf_prog_ids()
    if before is not None:
        assert not (after - before), "BPF programs left behind"
