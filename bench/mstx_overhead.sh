#!/bin/sh
# mstx marker and timeline overhead (bench/mstx_overhead.c): ratios measured in one run.
exec "${KPERF_BUILD:-build}/bench/mstx_overhead" "$@"
