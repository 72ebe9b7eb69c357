#!/bin/sh
# memscope_overhead.sh - what `kperf-bpf memscope` costs a malloc-heavy program: ns per
# malloc/free pair (memscope_wl loop N SIZE: a loop of malloc(SIZE) + free) at 16, 64 and
# 4096 bytes, untraced, recorded exactly, and sampled at 512 KiB, with the ratios to
# untraced. bcc's memleak compiles its program against this kernel's headers: the script
# says whether it could run here (it cannot on a kernel without them). Each figure is the
# best of ROUNDS runs (the machine is shared); configurations are interleaved. Ratios, not
# pass/fail.
#
#   KPERF_BUILD=build sh bench/memscope_overhead.sh [PAIRS] [ROUNDS]
set -u
B=${KPERF_BUILD:-build}
CLI=$B/bin/kperf-bpf
WL=$B/workloads/memscope_wl
N=${1:-200000}
ROUNDS=${2:-3}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

[ -x "$CLI" ] && [ -x "$WL" ] || { echo "memscope_overhead: build first (make all)" >&2; exit 1; }

# ns per pair of one run: untraced, or under memscope with OPTIONS
run() {
	mode=$1 size=$2
	case $mode in
	untraced) "$WL" loop "$N" "$size" ;;
	exact) "$CLI" memscope --no-markers -o "$TMP/x.csv" -- "$WL" loop "$N" "$size" 2>"$TMP/err" ;;
	sampled) "$CLI" memscope --no-markers --sample-bytes 512k -o "$TMP/s.csv" -- \
		"$WL" loop "$N" "$size" 2>"$TMP/err" ;;
	esac | sed -n 's/^loop ns=//p'
}

MEMLEAK=$(command -v memleak-bpfcc || command -v memleak || true)

best() { sort -n | head -1; }

echo "memscope overhead: ns per malloc/free pair, $N pairs, best of $ROUNDS (kernel $(uname -r))"
printf '%-8s %10s %10s %10s %10s %10s\n' size untraced exact sampled exact/unt sampled/unt
for size in 16 64 4096; do
	: >"$TMP/untraced" ; : >"$TMP/exact" ; : >"$TMP/sampled"
	r=0
	while [ $r -lt "$ROUNDS" ]; do
		for m in untraced exact sampled; do
			run $m $size >>"$TMP/$m"
		done
		r=$((r + 1))
	done
	u=$(best <"$TMP/untraced")
	e=$(best <"$TMP/exact")
	s=$(best <"$TMP/sampled")
	printf '%-8s %10s %10s %10s %10s %10s\n' "$size" "$u" "$e" "$s" \
		"$(echo "$e $u" | awk '{ printf "%.1fx", $1 / $2 }')" \
		"$(echo "$s $u" | awk '{ printf "%.1fx", $1 / $2 }')"
done
if [ ! -d "/lib/modules/$(uname -r)/build" ] && [ ! -e /sys/kernel/kheaders.tar.xz ]; then
	echo "bcc memleak: cannot run here: no headers of kernel $(uname -r) to compile its program"
elif [ -z "$MEMLEAK" ]; then
	echo "bcc memleak: not installed (bpfcc-tools)"
else
	echo "bcc memleak: $MEMLEAK -p PID, by hand: it prints no per-call figure"
fi
