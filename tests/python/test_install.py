"""Installing and finding the package and its library: `make install` into a DESTDIR puts
kperf where Debian's /usr/bin/python3 looks (PREFIX=/usr and /usr/local); the library is
found through $KPERF_BPF_LIB, the path recorded at install, the build tree, or fails with an
ImportError that says what to do; both of the machine's interpreters run a seed script."""

import glob
import os
import shutil
import subprocess
import sys

import kperf
import pytest
from conftest import BUILD, REPO, requires

DEBIAN_PY = "/usr/bin/python3"
PACKAGES = ("kperf", "ksym", "_libkperf", "msmemscope")
SONAME = "libkperf-bpf.so.0"

SEED_SCRIPT = r"""
import kperf
funcs = ["read", "write"]
pmu_trace_attr = kperf.PmuTraceAttr(funcs=funcs)
pd = kperf.trace_open(kperf.PmuTraceType.TRACE_SYS_CALL, pmu_trace_attr)
if pd == -1:
    print(kperf.error())
    exit(1)
kperf.trace_enable(pd)
kperf.trace_disable(pd)
pmu_trace_data = kperf.trace_read(pd)
for pmu_trace in pmu_trace_data.iter:
    pass
kperf.trace_close(pd)
names = list(kperf.sys_call_func_list())
print("lib", kperf.library_path)
print("getppid" in names, "cycles" in names, pmu_trace_data.len >= 0)
import ksym, _libkperf
from _libkperf.Symbol import CtypesStack
print(ksym.record_kernel(), _libkperf.Perrorno(), _libkperf.kperf_so is kperf.libkperf)
"""


def run_py(python, code, env_extra, cwd):
    env = {k: v for k, v in os.environ.items() if k not in ("KPERF_BPF_LIB", "PYTHONPATH")}
    env.update(env_extra)
    return subprocess.run([python, "-c", code], env=env, cwd=cwd, capture_output=True, text=True)


def debian_sys_path():
    out = subprocess.run(
        [DEBIAN_PY, "-c", "import sys; print('\\n'.join(sys.path))"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return out.split()


def debian_version():
    return subprocess.run(
        [DEBIAN_PY, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()


@pytest.mark.skipif(not os.access(DEBIAN_PY, os.X_OK), reason="no /usr/bin/python3")
@pytest.mark.skipif(not shutil.which("make"), reason="no make here (the arm64 guests)")
@pytest.mark.parametrize("prefix", ["/usr/local", "/usr"])
@requires("PmuTraceOpen")
def test_make_install_destdir(tmp_path, prefix):
    dest = tmp_path / "root"
    cmd = ["make", "-s", "-C", REPO, "install", f"DESTDIR={dest}", f"PREFIX={prefix}"]
    if os.path.realpath(BUILD) != os.path.realpath(os.path.join(REPO, "build")):
        cmd.append(f"BUILD={BUILD}")
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}
    subprocess.run(cmd, check=True, env=env, capture_output=True)

    if prefix == "/usr":
        pydir = "/usr/lib/python3/dist-packages"
    else:
        pydir = f"/usr/local/lib/python{debian_version()}/dist-packages"
    assert pydir in debian_sys_path(), f"{DEBIAN_PY} does not look in {pydir}"
    # libkperf's three packages and msmemscope, each file of the tree
    for name in PACKAGES:
        shipped = sorted(os.path.basename(p) for p in glob.glob(f"{REPO}/python/{name}/*.py"))
        installed = dest / pydir.lstrip("/") / name
        assert shipped and sorted(p.name for p in installed.glob("*.py")) == shipped, name
    # and its subpackages
    prof = sorted(os.path.basename(p) for p in glob.glob(f"{REPO}/python/kperf/profiler/*.py"))
    installed = dest / pydir.lstrip("/") / "kperf" / "profiler"
    assert prof and sorted(p.name for p in installed.glob("*.py")) == prof
    pkg = dest / pydir.lstrip("/") / "kperf"
    assert (pkg / "_libpath.txt").read_text().strip() == f"{prefix}/lib/{SONAME}"
    lib = dest / prefix.lstrip("/") / "lib" / SONAME
    assert lib.exists()

    # the installed package, with the installed library (cwd and paths outside the tree)
    site = str(dest / pydir.lstrip("/"))
    r = run_py(DEBIAN_PY, SEED_SCRIPT, {"PYTHONPATH": site, "KPERF_BPF_LIB": str(lib)}, tmp_path)
    assert r.returncode == 0, r.stderr + r.stdout
    assert r.stdout.splitlines() == [f"lib {lib}", "True False True", "0 0 True"]

    # the path recorded at install is what the package loads when nothing overrides it
    (pkg / "_libpath.txt").write_text(str(lib) + "\n")
    r = run_py(DEBIAN_PY, SEED_SCRIPT, {"PYTHONPATH": site}, tmp_path)
    assert r.returncode == 0, r.stderr + r.stdout
    assert r.stdout.splitlines()[0] == f"lib {lib}"


def copy_package(dst):
    for name in PACKAGES:
        shutil.copytree(
            os.path.join(REPO, "python", name),
            dst / name,
            ignore=shutil.ignore_patterns("__pycache__", "_libpath.txt"),
        )
    return dst


def test_env_variable_wins_and_a_bad_one_says_what_to_do(tmp_path):
    copy_package(tmp_path)
    env = {"PYTHONPATH": str(tmp_path), "KPERF_BPF_LIB": "/nonexistent/libkperf-bpf.so"}
    r = run_py(sys.executable, "import kperf", env, tmp_path)
    assert r.returncode == 1
    assert "\nImportError: kperf: cannot load libkperf-bpf.so. Tried:\n" in r.stderr
    assert "/nonexistent/libkperf-bpf.so ($KPERF_BPF_LIB)" in r.stderr
    assert "make install" in r.stderr and "KPERF_BPF_LIB=" in r.stderr


def test_recorded_path_then_build_tree(tmp_path):
    lib = os.path.join(BUILD, "lib", "libkperf-bpf.so")
    copy_package(tmp_path)
    (tmp_path / "kperf" / "_libpath.txt").write_text(lib + "\n")
    code = "import kperf; print(kperf.library_path)"
    r = run_py(sys.executable, code, {"PYTHONPATH": str(tmp_path)}, tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == lib
    # in the source tree with no variable: the build tree next to the package
    if os.path.realpath(BUILD) == os.path.realpath(os.path.join(REPO, "build")):
        r = run_py(sys.executable, code, {"PYTHONPATH": os.path.join(REPO, "python")}, tmp_path)
        assert r.returncode == 0, r.stderr
        assert r.stdout.strip() == os.path.join(REPO, "build", "lib", "libkperf-bpf.so")


def test_no_library_anywhere(tmp_path):
    import ctypes.util

    if ctypes.util.find_library("kperf-bpf"):
        pytest.skip("libkperf-bpf is installed on this system")
    copy_package(tmp_path)
    env = {"PYTHONPATH": str(tmp_path), "LD_LIBRARY_PATH": ""}
    r = run_py(sys.executable, "import kperf", env, tmp_path)
    assert r.returncode == 1
    assert "cannot load libkperf-bpf.so" in r.stderr and f"{SONAME} (system)" in r.stderr


def interpreters():
    """Debian's python3 and the machine's default python3 (pyenv), when present."""
    found = {}
    cands = [DEBIAN_PY, shutil.which("python3"), sys.executable]
    try:  # pyenv's global version, which `python3` runs when PATH has pyenv's shims
        with open(os.path.expanduser("~/.pyenv/version")) as f:
            version = f.read().split()[0]
        cands.append(os.path.expanduser(f"~/.pyenv/versions/{version}/bin/python3"))
    except (OSError, IndexError):
        pass
    for c in cands:
        if c and os.access(c, os.X_OK):
            found.setdefault(os.path.realpath(c), c)
    return sorted(found.values())


@requires("PmuTraceOpen")
@pytest.mark.parametrize("python", interpreters())
def test_seed_script_on_each_interpreter(tmp_path, python):
    lib = os.path.join(BUILD, "lib", "libkperf-bpf.so")
    env = {"PYTHONPATH": os.path.join(REPO, "python"), "KPERF_BPF_LIB": lib}
    r = run_py(python, SEED_SCRIPT, env, tmp_path)
    assert r.returncode == 0, r.stderr + r.stdout
    assert r.stdout.splitlines() == [f"lib {lib}", "True False True", "0 0 True"]


def test_version_and_exports():
    assert kperf.__version__ == "0.1.0"
    for name in ("open", "enable", "disable", "read", "close", "dump", "get_field", "get_field_exp",
                 "event_list", "trace_open", "trace_enable", "trace_disable", "trace_read",
                 "trace_close", "sys_call_func_list", "device_open", "get_device_metric",
                 "device_bdf_list", "get_cpu_freq", "get_cluster_core", "get_numa_core", "error",
                 "errorno", "get_warn", "get_warn_msg", "PmuTaskType", "PmuAttr", "PmuEventType",
                 "SymbolMode", "SpeFilter", "SpeEventFilter", "BranchSampleFilter", "PmuTraceType",
                 "PmuTraceAttr", "PmuDeviceAttr", "PmuDeviceMetric", "PmuBdfType", "PmuData",
                 "PmuTraceData", "SampleRawField", "PmuDeviceData", "Trace", "Pmu",
                 "trace_read_summary", "trace_stats", "KperfError"):
        assert name in kperf.__all__ and hasattr(kperf, name), name
        obj = getattr(kperf, name)
        if callable(obj) and not isinstance(obj, type):
            assert obj.__doc__, f"kperf.{name} has no docstring"
