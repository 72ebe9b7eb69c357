#!/bin/sh
# sym_resolve.sh - run the symbol resolver benchmark (bench/sym_resolve.c): one million
# addresses over the kernel, libc and a workload, cold and warm, next to addr2line.
# Needs root (kallsyms addresses). Usage: KPERF_BUILD=build sh bench/sym_resolve.sh [N] [SAMPLE]
B=${KPERF_BUILD:-build}
if [ ! -x "$B/bench/sym_resolve" ] || [ ! -x "$B/workloads/sym_hot" ]; then
	echo "sym_resolve.sh: build first: make bench" >&2
	exit 1
fi
KPERF_BUILD="$B" "$B/bench/sym_resolve" "${1:-1000000}" "${2:-20000}"
