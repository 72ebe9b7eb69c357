#!/bin/sh
# python_read.sh - the cost of iterating kperf.read()'s records in Python (bench/python_read.py),
# next to libkperf's own Python classes on the same records when LIBKPERF_PYTHON names
# libkperf's python/modules directory (e.g. a checkout of openeuler-mirror/libkperf).
# Needs root. Usage: KPERF_BUILD=build LIBKPERF_PYTHON=/path/python/modules sh bench/python_read.sh
. "$(dirname "$0")/build.sh"
bench_build
/usr/bin/python3 "$(dirname "$0")/python_read.py" "$@"
