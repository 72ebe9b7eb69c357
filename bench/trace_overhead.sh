#!/bin/sh
# Syscall tracing overhead (bench/trace_overhead.c): ratios measured in one run.
exec "${KPERF_BUILD:-build}/bench/trace_overhead" "$@"
