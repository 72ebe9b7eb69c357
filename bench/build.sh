# build.sh - sourced by the bench/*.sh scripts: brings the library, CLI, workloads and the
# benchmark program a script runs up to date (make), so that a run always measures the
# current sources, and exports KPERF_BUILD (absolute) for the program to find them.
# Usage (in a script): . "$(dirname "$0")/build.sh"; bench_build NAME   -> "$B/bench/NAME"
bench_build() {
	root=$(cd "$(dirname "$0")/.." && pwd) || exit 1
	B=${KPERF_BUILD:-$root/build}
	case $B in /*) ;; *) B=$(pwd)/$B ;; esac
	export KPERF_BUILD="$B"
	make -s --no-print-directory -C "$root" BUILD="$B" all ${1:+"$B/bench/$1"} >&2 || {
		echo "$(basename "$0"): the build failed" >&2
		exit 1
	}
}
