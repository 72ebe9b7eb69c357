"""The kperf package inside a PID namespace: pidns_inner.py, run by pytest under
`unshare --pid --fork --mount-proc`, must pass there (trace, record and stat by the
namespace's pid, exact), and leave no BPF program behind; so must pidns_tools_inner.py
(`kperf-bpf memscope` with msmemscope, `kperf-bpf agent` and `kperf-bpf timeline`), and
container_inner.py in the shape of a least-privileged container (container_shape.sh: a
fresh sysfs, no CAP_SYS_ADMIN, the host's tracefs bound in or not)."""

import os
import shutil
import subprocess
import sys

import pytest
from agent_util import wait_until
from conftest import BUILD, REPO, requires

pytestmark = requires("PmuTraceOpen", "PmuOpen")


def bpf_prog_ids():
    """The ids of the BPF programs loaded on the machine (bpftool), None without bpftool."""
    if not shutil.which("bpftool"):
        return None
    out = subprocess.run(["bpftool", "prog", "list"], capture_output=True, text=True).stdout
    return {line.split(":")[0] for line in out.splitlines() if line[:1].isdigit()}


def run_inside(name, passed, prefix=(), **env):
    """pytest on tests/python/<name> under unshare --pid --fork --mount-proc (and <prefix>,
    a command that runs the rest): all <passed> tests pass, and no BPF program is left
    behind."""
    if not shutil.which("unshare"):
        pytest.skip("unshare (util-linux) is not installed")
    before = bpf_prog_ids()
    env = dict(os.environ, KPERF_PIDNS_INNER="1", PYTHONDONTWRITEBYTECODE="1", **env)
    r = subprocess.run(
        ["unshare", "--pid", "--fork", "--mount-proc", *prefix, sys.executable, "-m", "pytest",
         "-q", "-p", "no:cacheprovider", os.path.join(REPO, "tests", "python", name)],
        env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    assert f"{passed} passed" in r.stdout, r.stdout
    if before is not None:
        # the kernel frees a closed program after an RCU grace period: a moment after
        assert wait_until(lambda: not (bpf_prog_ids() - before), timeout=30), \
            "BPF programs left behind"


def test_kperf_inside_a_pid_namespace():
    run_inside("pidns_inner.py", 4)


def test_memscope_and_agent_inside_a_pid_namespace():
    """memscope (CLI + msmemscope) and the agent in the sidecar shape; a host process busy
    with getppid, which the namespace cannot see, for the agent's every-process test"""
    host = subprocess.Popen([os.path.join(BUILD, "workloads", "syscalls"), "--getppid",
                             "2000000000", "--writes", "0", "--fails", "0"],
                            stdout=subprocess.DEVNULL)
    try:
        run_inside("pidns_tools_inner.py", 8, KPERF_PIDNS_HOSTPID=str(host.pid))
    finally:
        host.kill()
        host.wait()


@pytest.mark.parametrize("tracefs", ["bind", "none"])
def test_least_privileged_container(tracefs):
    """Only CAP_BPF, CAP_PERFMON, CAP_SYS_PTRACE, CAP_DAC_READ_SEARCH in a namespace of its
    own with a fresh sysfs: with the host's tracefs bound in, trace, record with stacks and
    tracepoint counting are exact; without it, what needs tracefs says so."""
    if not shutil.which("setpriv"):
        pytest.skip("setpriv (util-linux) is not installed")
    run_inside("container_inner.py", 5,
               prefix=("sh", os.path.join(REPO, "tests", "python", "container_shape.sh"),
                       tracefs),
               KPERF_CONTAINER_INNER=tracefs)
