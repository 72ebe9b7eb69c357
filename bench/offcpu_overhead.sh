#!/bin/sh
# Off-CPU tracing overhead on a context-switch-heavy workload (bench/offcpu_overhead.c).
exec "${KPERF_BUILD:-build}/bench/offcpu_overhead" "$@"
