"""What the kperf.profiler tests share: the scripts of tests/python/profiler run as programs of
their own (a fresh profiler, this tree's package), and a fixture giving this process's profiler
back with no session and MXNet's defaults."""

import os
import subprocess
import sys

import pytest
from conftest import REPO

import kperf
from kperf import profiler

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "profiler")


def env():
    e = dict(os.environ)
    e["PYTHONPATH"] = os.path.join(REPO, "python") + os.pathsep + e.get("PYTHONPATH", "")
    e.setdefault("KPERF_BPF_LIB", kperf.library_path)
    return e


def run(script, *args, cwd=None):
    p = subprocess.run([sys.executable, os.path.join(HERE, script), *map(str, args)],
                       capture_output=True, text=True, timeout=120, env=env(), cwd=cwd)
    assert p.returncode == 0, p.stderr
    return p


@pytest.fixture
def fresh():
    """This process's profiler with no session and MXNet's defaults (other tests may have
    run sessions in it)."""
    profiler.set_state("stop")
    profiler._session = None
    profiler._cfg = dict(profiler._config.DEFAULTS)
    profiler.STATE.stats = profiler._stats.Stats()
    yield
    profiler.set_state("stop")
    profiler._session = None
    profiler._cfg = dict(profiler._config.DEFAULTS)
    profiler.STATE.stats = profiler._stats.Stats()


