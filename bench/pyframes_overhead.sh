#!/bin/sh
# Python frames (bpf/pyframes.bpf.h): the BPF cost per sample of `kperf-bpf record -g` on a
# CPython 3.11 script with Python frames (--python on) against native frames only
# (--python off), at 999 Hz (the kernel's BPF run-time statistics of the sampling program of
# this record only); and the script's own slowdown (its CPU time for a fixed amount of work)
# at 99 and 999 Hz with Python frames, against a run not profiled. One run each; ratios.
# Needs root (BPF, kernel.bpf_stats_enabled) and /usr/bin/python3.11.
. "$(dirname "$0")/build.sh"
bench_build
PY=${PY:-/usr/bin/python3.11}
WL="$root/tests/workloads/python/pyframes_wl.py"
[ -x "$PY" ] || { echo "pyframes_overhead: no $PY" >&2; exit 0; }
command -v bpftool >/dev/null || { echo "pyframes_overhead: no bpftool" >&2; exit 0; }
old=$(cat /proc/sys/kernel/bpf_stats_enabled)
echo 1 > /proc/sys/kernel/bpf_stats_enabled
trap 'echo "$old" > /proc/sys/kernel/bpf_stats_enabled' EXIT
trap 'exit 1' INT TERM
out=$(mktemp -d)

# the sampling programs (kp_sample*; run under the tests' BPF lock, they are this record's):
# "run_time_ns run_cnt", polled until kperf-bpf <pid> has exited (a zombie: not waited yet)
poll_stats() {
	last="0 0"
	while st=$(sed -n 's/^State:[[:space:]]*\(.\).*/\1/p' "/proc/$1/status" 2>/dev/null) &&
		[ -n "$st" ] && [ "$st" != Z ]; do
		s=$(bpftool -j prog show 2>/dev/null | "$PY" -c '
import json, sys
t = c = 0
for p in json.load(sys.stdin):
    if p.get("name", "").startswith("kp_sample"):
        t += p.get("run_time_ns", 0)
        c += p.get("run_cnt", 0)
if c:
    print(t, c)')
		[ -n "$s" ] && last=$s
		sleep 0.2
	done
	echo "$last"
}

# record at <hz> with --python <mode> running the fixed work: "ns_per_sample cpu_seconds"
run() {
	"$B/bin/kperf-bpf" record -g -F "$1" --python "$2" --format folded -o "$out/p.folded" \
		-- "$PY" "$WL" work 3 > "$out/wl.txt" 2> "$out/err.txt" &
	rec=$!
	sleep 0.3
	stats=$(poll_stats "$rec")
	wait "$rec"
	cpu=$(sed -n 's/^work cpu=\([0-9.]*\).*/\1/p' "$out/wl.txt")
	echo "$stats $cpu" | awk '{ printf "%.0f %s\n", $2 ? $1 / $2 : 0, $3 }'
}

base=$("$PY" "$WL" work 3 | sed -n 's/^work cpu=\([0-9.]*\).*/\1/p')
set -- $(run 999 off); off_ns=$1
set -- $(run 999 on); on_ns=$1; cpu999=$2
set -- $(run 99 on); cpu99=$2
echo "pyframes_overhead: CPython 3.11 ($PY), one run each"
echo "  BPF cost per sample at 999 Hz: native only ${off_ns} ns, with Python frames ${on_ns} ns" \
	"($(echo "$on_ns $off_ns" | awk '{ printf "%.2f", $2 ? $1 / $2 : 0 }')x; target <= 2x)"
echo "  script CPU time for fixed work: unprofiled ${base} s, 99 Hz ${cpu99} s" \
	"($(echo "$cpu99 $base" | awk '{ printf "%.3f", $1 / $2 }')x), 999 Hz ${cpu999} s" \
	"($(echo "$cpu999 $base" | awk '{ printf "%.3f", $1 / $2 }')x)"
rm -rf "$out"
