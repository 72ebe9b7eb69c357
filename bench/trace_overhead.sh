#!/bin/sh
# Syscall tracing overhead (bench/trace_overhead.c): ratios measured in one run.
. "$(dirname "$0")/build.sh"
bench_build trace_overhead
exec "$B/bench/trace_overhead" "$@"
