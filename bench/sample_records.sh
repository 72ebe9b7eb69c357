#!/bin/sh
# Sampling one record per sample: overhead on both CPUs and PmuRead per sample (bench/sample_records.c).
exec "${KPERF_BUILD:-build}/bench/sample_records" "$@"
