"""The configuration names of libkperf's _libkperf.Config: the encoding, the version of the
API this layer mirrors, and the loaded library (one file here: libkperf-bpf.so serves both
libkperf.so and libsym.so)."""

import os

from kperf import _lib

VERSION_MAJOR = 1
VERSION_MINOR = 0
VERSION_BUGFIX = 0
VERSION_SUFFIX = ""
VERSION = "1.0"

UTF_8 = "utf-8"

sym_so = _lib.cdll
kperf_so = _lib.cdll


def lib_path():
    """The directory of the loaded library."""
    return os.path.dirname(os.path.abspath(_lib.path))


def libsym_path():
    """The symbol library's file: libkperf-bpf.so."""
    return _lib.path


def libkperf_path():
    """The collection library's file: libkperf-bpf.so."""
    return _lib.path


__all__ = ["UTF_8", "VERSION", "sym_so", "kperf_so"]
