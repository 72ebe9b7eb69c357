#!/bin/sh
# Off-CPU tracing overhead on a context-switch-heavy workload (bench/offcpu_overhead.c).
. "$(dirname "$0")/build.sh"
bench_build offcpu_overhead
exec "$B/bench/offcpu_overhead" "$@"
