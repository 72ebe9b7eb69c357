#!/bin/sh
# CPU profiling overhead and time to a resolved report (bench/sample_overhead.c).
exec "${KPERF_BUILD:-build}/bench/sample_overhead" "$@"
