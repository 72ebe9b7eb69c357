#!/bin/sh
# CPU profiling overhead and time to a resolved report (bench/sample_overhead.c).
. "$(dirname "$0")/build.sh"
bench_build sample_overhead
exec "$B/bench/sample_overhead" "$@"
