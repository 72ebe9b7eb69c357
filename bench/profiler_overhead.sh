#!/bin/sh
# profiler_overhead.sh - what kperf.profiler costs a Python program (bench/profiler_overhead.py):
# a Task start/stop with no session and with one, and a profile_all session's overhead on a
# syscall-heavy loop as a ratio to none. Needs root and the build (make).
# Usage: sudo sh bench/profiler_overhead.sh [--tasks N] [--iters N] [--rounds N]
B=${KPERF_BUILD:-build}
if [ ! -e "$B/lib/libkperf-bpf.so" ]; then
	echo "profiler_overhead.sh: build first: make" >&2
	exit 1
fi
KPERF_BUILD="$B" /usr/bin/python3 "$(dirname "$0")/profiler_overhead.py" "$@"
