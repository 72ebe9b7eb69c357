#!/bin/sh
# profiler_overhead.sh - what kperf.profiler costs a Python program (bench/profiler_overhead.py):
# a Task start/stop with no session and with one, and a profile_all session's overhead on a
# syscall-heavy loop as a ratio to none, with its sources one at a time. Needs root; brings
# the build up to date first (bench/build.sh).
# Usage: sudo sh bench/profiler_overhead.sh [--tasks N] [--iters N] [--rounds N]
. "$(dirname "$0")/build.sh"
bench_build
KPERF_BUILD="$B" /usr/bin/python3 "$(dirname "$0")/profiler_overhead.py" "$@"
