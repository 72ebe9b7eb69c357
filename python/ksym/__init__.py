"""ksym - libkperf's symbol module on kperf-bpf (see ksym.symbol)."""

from . import symbol  # noqa: F401
from .symbol import *  # noqa: F401,F403
from .symbol import __all__  # noqa: F401
