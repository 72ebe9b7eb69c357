#!/bin/sh
# sym_resolve.sh - run the symbol resolver benchmark (bench/sym_resolve.c): one million
# addresses over the kernel, libc and a workload, cold and warm, next to addr2line.
# Needs root (kallsyms addresses). Usage: KPERF_BUILD=build sh bench/sym_resolve.sh [N] [SAMPLE]
. "$(dirname "$0")/build.sh"
bench_build sym_resolve
"$B/bench/sym_resolve" "${1:-1000000}" "${2:-20000}"
