#!/bin/sh
# Sampling one record per sample: overhead on both CPUs and PmuRead per sample (bench/sample_records.c).
. "$(dirname "$0")/build.sh"
bench_build sample_records
exec "$B/bench/sample_records" "$@"
