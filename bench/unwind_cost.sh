#!/bin/sh
# unwind_cost.sh - run the .eh_frame unwinding benchmark (bench/unwind_cost.c): BPF run time per
# sample dwarf vs frame pointers, CPU and bytes per sample against perf --call-graph dwarf, the
# unwind tables of python3, a system-wide profile under process churn.
# Usage: KPERF_BUILD=build sh bench/unwind_cost.sh [--ms N] [--churn PROCESSES]
B=${KPERF_BUILD:-build}
if [ ! -x "$B/bench/unwind_cost" ]; then
	echo "unwind_cost.sh: build first: make bench" >&2
	exit 1
fi
"$B/bench/unwind_cost" "$@"
