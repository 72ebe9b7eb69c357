#!/bin/sh
# mstx marker and timeline overhead (bench/mstx_overhead.c): ratios measured in one run.
. "$(dirname "$0")/build.sh"
bench_build mstx_overhead
exec "$B/bench/mstx_overhead" "$@"
