"""test_make_twice.py - a second make builds nothing (issue 19): no rule leaves a target older
than what it is made from. In a fresh clone, the generated files' rules (the syscall table,
protoc-c's pprof schema: one run makes both files; as two rules the header was rewritten
after profile.pb-c.o was built, and the next make rebuilt it and the library) and the object
built from them; and in this tree, which `make test` builds (`all`) before its tests,
`make -q all`. Seconds: the fresh clone builds those few targets only.
"""

import os
import shutil
import subprocess
import tempfile

import pytest

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BUILD = os.environ.get("KPERF_BUILD") or os.path.join(REPO, "build")
GENERATED = [
    "build/gen/syscall_table.h",
    "build/gen/profile.pb-c.c",
    "build/gen/profile.pb-c.h",
    "build/obj/gen/profile.pb-c.o",
]


def make(cwd, *args):
    return subprocess.run(["make", "--no-print-directory", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=300)


@pytest.mark.skipif(not os.path.exists(os.path.join(REPO, ".git")) or not shutil.which("git"),
                    reason="not a git work tree (a copy of the files)")
def test_a_fresh_clone_builds_its_generated_files_once():
    with tempfile.TemporaryDirectory(prefix="kperf-make-twice-") as tmp:
        clone = os.path.join(tmp, "clone")
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO, check=True,
                              capture_output=True, text=True).stdout.strip()
        subprocess.run(["git", "clone", "-q", "--no-checkout", REPO, clone], check=True,
                       timeout=120)
        subprocess.run(["git", "checkout", "-q", head], cwd=clone, check=True, timeout=120)
        first = make(clone, "-j2", *GENERATED)
        assert first.returncode == 0, first.stdout + first.stderr
        for f in GENERATED:
            assert os.path.exists(os.path.join(clone, f)), f
        # make -q: 0 when every target is up to date, 1 when one would be remade
        again = make(clone, "-q", *GENERATED)
        assert again.returncode == 0, make(clone, "-n", *GENERATED).stdout
        second = make(clone, "-j2", *GENERATED)
        assert second.returncode == 0, second.stderr
        assert "cc " not in second.stdout and "protoc-c " not in second.stdout, second.stdout
        for f in GENERATED:
            assert f"'{f}' is up to date." in second.stdout, second.stdout


@pytest.mark.skipif(os.path.realpath(BUILD) != os.path.join(REPO, "build")
                    or not os.path.exists(os.path.join(BUILD, "bin", "kperf-bpf")),
                    reason="not this tree's default build, or not built")
def test_this_tree_built_has_nothing_left_to_do():
    q = make(REPO, "-q", "all")
    assert q.returncode == 0, "make would remake:\n" + make(REPO, "-n", "all").stdout[:4000]
