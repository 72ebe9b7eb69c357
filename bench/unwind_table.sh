#!/bin/sh
# unwind_table.sh - run the unwind table benchmark (bench/unwind_table.c): time to compile the
# .eh_frame tables of libc, Debian's python3 and libstdc++ (the library's cache empty, the files
# in the page cache), their rows and bytes. Usage: KPERF_BUILD=build sh bench/unwind_table.sh [FILE...]
B=${KPERF_BUILD:-build}
if [ ! -x "$B/bench/unwind_table" ]; then
	echo "unwind_table.sh: build first: make bench" >&2
	exit 1
fi
"$B/bench/unwind_table" -r 11 "$@"
