#!/bin/sh
# run.sh [SELECT...] - `make test-kernels`: boot each kernel of kernels.list under qemu with
# TCG (no KVM), run tests/kernels/guest.sh inside, then print the table kernel x capability
# (tests/kernels/table.py) and write it into README.md. SELECT picks lines by name, arch or
# name-arch (e.g. `6.1 arm64`, `5.10-amd64`); none means all.
#
# x86_64 guests see this machine's / read-only over 9p (the host's libraries, Python, build);
# arm64 guests see a cached Debian arm64 root (tests/kernels/rootfs.sh) and the project tree.
# Each boot has its own time limit; a guest that does not finish is reported, not waited for.
# qemu runs in the foreground of its time limit: stopping run.sh (Ctrl-C, or a kill of its
# process group) stops the guests too.
#
# Environment: KPERF_KERNEL_SET (core, the default: the tests tests/kernels/core.list names,
# the matrix in about 15 minutes; full: every suite but skip.list's, `make test-kernels-full`),
# KPERF_KERNEL_CACHE (kernels, root; default /var/cache/kperf-kernels),
# KPERF_KERNEL_OUT (results; default build/kernels, build/kernels-full for the full set),
# KPERF_KERNEL_TIMEOUT (seconds per boot, default 1500 for core, 3000 for full: the guest's
# own phases end before), KPERF_KERNEL_JOBS (guests at once,
# default 2: a guest's tests mostly keep one vCPU busy), KPERF_KERNEL_SMP (vCPUs per guest, 2),
# KPERF_KERNEL_ALL=1 (also the suites tests/kernels/skip.list leaves out),
# KPERF_BUILD / KPERF_BUILD_ARM64 (build trees, default build and build/arm64),
# KPERF_KERNEL_ACCEL (qemu's -accel, default tcg,thread=single), KPERF_KERNEL_DEADLINE (epoch seconds: no guest boots with less than 5 minutes left before
# it, and none runs past it; CI's budget: the guests not booted are reported as such),
# KPERF_KERNEL_README=0 (do not touch README.md), KPERF_KERNEL_FILTER=GLOB (only these
# integration tests: criterion --filter; implies README=0), KPERF_KERNEL_UNIT=1 (the unit
# tests too), KPERF_KERNEL_STRICT=0 (failures reported, exit status 0), KPERF_BPF_DEBUG
# (passed on).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
cache=${KPERF_KERNEL_CACHE:-/var/cache/kperf-kernels}
kset=${KPERF_KERNEL_SET:-core}
case $kset in
core) outroot=$(realpath -m "${KPERF_KERNEL_OUT:-$src/build/kernels}") ;;
full) outroot=$(realpath -m "${KPERF_KERNEL_OUT:-$src/build/kernels-full}") ;;
*)
	echo "kernels: KPERF_KERNEL_SET is core or full, not '$kset'" >&2
	exit 2
	;;
esac
limit=${KPERF_KERNEL_TIMEOUT:-$([ "$kset" = core ] && echo 1500 || echo 3000)}
jobs=${KPERF_KERNEL_JOBS:-2}
# one host thread for all of a guest's vCPUs: with a thread per vCPU (QEMU's default, MTTCG)
# code that the guest kernel patches while another vCPU runs it goes stale there: a 6.12
# guest died of "Oops: int3" in __schedule (a static key's int3-based patch), and threads of
# a workload whose code uprobes patch exited non-zero on 5.10 and 6.1 (measured 2026-11-29)
accel=${KPERF_KERNEL_ACCEL:-tcg,thread=single}
smp=${KPERF_KERNEL_SMP:-2}
build_amd64=$(cd "$src" && realpath -m "${KPERF_BUILD:-build}")
build_arm64=$(cd "$src" && realpath -m "${KPERF_BUILD_ARM64:-build/arm64}")

selected() { # name arch
	[ $# -eq 2 ] || return 1
	[ -z "$select" ] && return 0
	for s in $select; do
		case $s in "$1" | "$2" | "$1-$2") return 0 ;; esac
	done
	return 1
}

# boot NAME ARCH KERNEL_DIR OUT: one guest, console in OUT/console.log
boot() {
	name=$1 arch=$2 kdir=$3 out=$4
	share="security_model=none,multidevs=remap"
	common="-accel $accel -m 2048 -smp $smp -nographic -no-reboot -kernel $kdir/vmlinuz
		-initrd $kdir/initrd.gz -virtfs local,path=$out,mount_tag=out,$share"
	args="panic=-1 quiet loglevel=4 kp.src=$src kp.out=$out kp.set=$kset"
	[ -n "${KPERF_KERNEL_FILTER:-}" ] && args="$args kp.filter=$KPERF_KERNEL_FILTER"
	[ "${KPERF_KERNEL_UNIT:-0}" = 1 ] && args="$args kp.unit=1"
	[ "${KPERF_KERNEL_ALL:-0}" = 1 ] && args="$args kp.all=1"
	[ -n "${KPERF_BPF_DEBUG:-}" ] && args="$args KPERF_BPF_DEBUG=$KPERF_BPF_DEBUG"
	case $arch in
	amd64)
		# shellcheck disable=SC2086
		timeout --foreground -k 10 "$limit" qemu-system-x86_64 $common -cpu max \
			-virtfs "local,path=/,mount_tag=root,readonly=on,$share" \
			-append "console=ttyS0 $args kp.build=$build_amd64" \
			</dev/null >"$out/console.log" 2>&1
		;;
	arm64)
		root=$cache/rootfs-arm64
		mkdir -p "$root$src"
		# pauth-impdef: QEMU's cheap pointer authentication; the architected one
		# (QARMA) makes every function return slow under TCG
		# shellcheck disable=SC2086
		timeout --foreground -k 10 "$limit" qemu-system-aarch64 $common -machine virt \
			-cpu max,pauth-impdef=on \
			-virtfs "local,path=$root,mount_tag=root,readonly=on,$share" \
			-virtfs "local,path=$src,mount_tag=src,readonly=on,$share" \
			-append "console=ttyAMA0 $args kp.tree=1 kp.build=$build_arm64" \
			</dev/null >"$out/console.log" 2>&1
		;;
	esac
}

# run_one NAME ARCH SUITE PACKAGE
run_one() {
	name=$1 arch=$2 suite=$3 pkg=$4
	out=$outroot/$name-$arch
	rm -rf "$out"
	mkdir -p "$out"
	echo "$name $arch $suite" >"$out/kernel"
	case $arch in
	amd64) b=$build_amd64 ;;
	arm64) b=$build_arm64 ;;
	esac
	if [ ! -x "$b/tests/integration" ]; then
		echo "not built: $b/tests/integration is missing (make ${arch#amd64} tests)" >"$out/skipped"
		echo "kernels: $name-$arch: skipped, $(cat "$out/skipped")"
		return 0
	fi
	if [ "$arch" = arm64 ] && ! sh "$here/rootfs.sh" arm64 >"$out/rootfs.log" 2>&1; then
		echo "no arm64 root: see rootfs.log" >"$out/skipped"
		echo "kernels: $name-$arch: skipped, no arm64 root (tail $out/rootfs.log)"
		return 0
	fi
	if ! kdir=$(sh "$here/fetch.sh" "$arch" "$suite" "$pkg" 2>"$out/fetch.log"); then
		echo "kernel package not fetched: see fetch.log" >"$out/skipped"
		echo "kernels: $name-$arch: skipped, $pkg ($suite) could not be fetched"
		return 0
	fi
	cp "$kdir/release" "$out/package-release"
	t0=$(date +%s)
	cut_by=
	if [ -n "${KPERF_KERNEL_DEADLINE:-}" ]; then
		left=$((KPERF_KERNEL_DEADLINE - t0))
		if [ "$left" -lt 300 ]; then
			echo "not booted: ${left} s left before KPERF_KERNEL_DEADLINE" >"$out/skipped"
			echo "kernels: $name-$arch: skipped, $(cat "$out/skipped")"
			return 0
		fi
		# cut by the deadline, not by its own limit: said as such (table.py reports it, the
		# phases it did finish count, and a budget is not a failure of the kernel)
		[ "$left" -lt "$limit" ] && limit=$left && cut_by=deadline
	fi
	echo "kernels: $name-$arch: booting $(cat "$kdir/release")"
	set +e
	boot "$name" "$arch" "$kdir" "$out"
	rc=$?
	set -e
	# the CPU time of the guest (this shell's children): what it costs with no one else on
	# the machine, whatever its wall time was under load
	times >"$out/times" # not in a pipeline: a subshell would count its own children
	cpu=$(tail -1 "$out/times" | awk '{ n = 0; for (i = 1; i <= NF; i++) {
		split($i, t, "m"); n += t[1] * 60 + t[2] } printf "%d", n }')
	echo "$rc $(($(date +%s) - t0)) $cpu" >"$out/boot"
	if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
		echo "timeout after $limit s${cut_by:+ (KPERF_KERNEL_DEADLINE)}" >>"$out/boot"
	fi
	echo "kernels: $name-$arch: done in $(($(date +%s) - t0)) s, $cpu s of CPU (qemu exit $rc)"
}

# run.sh --one NAME ARCH SUITE PACKAGE: one guest (what the pool below starts)
if [ "${1:-}" = --one ]; then
	shift
	run_one "$@"
	exit 0
fi

select="$*"
mkdir -p "$outroot"
# The guests run a copy of each build tree, taken now: a build during the run (this
# tree's or a test's) would otherwise change the programs under the running tests. Inside
# the project tree, which the arm64 guests see too.
case $outroot/ in "$src"/*) ;; *)
	echo "kernels: KPERF_KERNEL_OUT must be inside $src (the arm64 guests see only it)" >&2
	exit 1
	;;
esac
for a in amd64 arm64; do
	case $a in amd64) b=$build_amd64 ;; arm64) b=$build_arm64 ;; esac
	rm -rf "$outroot/build-$a"
	[ -x "$b/tests/integration" ] || continue
	mkdir -p "$outroot/build-$a"
	for d in bin lib tests workloads bpf; do
		[ -d "$b/$d" ] && cp -a "$b/$d" "$outroot/build-$a/"
	done
done
# and the Python package with its tests, from a copy of the tree's files (git's list:
# tracked and not ignored), for the same reason: a merge during the run would bring tests
# that the copied build does not match (guest.sh runs pytest there)
rm -rf "$outroot/tree"
mkdir -p "$outroot/tree"
(cd "$src" && git ls-files -co --exclude-standard -z 2>/dev/null | tar --null -T - -cf -) |
	tar -xf - -C "$outroot/tree"
# every library the arm64 build links must be in the guests' root (rootfs.sh's package list):
# a missing one makes every test of those guests fail with exit 127, said here instead
if [ -d "$outroot/build-arm64" ]; then
	aroot=$cache/rootfs-arm64
	for f in "$outroot"/build-arm64/bin/* "$outroot"/build-arm64/tests/integration; do
		for lib in $(readelf -d "$f" 2>/dev/null | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
			found=
			for d in usr/lib/aarch64-linux-gnu lib/aarch64-linux-gnu usr/lib; do
				[ -e "$aroot/$d/$lib" ] && found=1
			done
			[ -n "$found" ] ||
				echo "kernels: the arm64 root lacks $lib (needed by $(basename "$f")):" \
					"add its package to tests/kernels/rootfs.sh" >&2
		done
	done
fi
build_amd64=$outroot/build-amd64 build_arm64=$outroot/build-arm64
export KPERF_BUILD="$build_amd64" KPERF_BUILD_ARM64="$build_arm64"
t_all=$(date +%s)
# a pool of $jobs guests: the next kernel boots as soon as one finishes
grep -v '^#' "$here/kernels.list" | grep -v '^[[:space:]]*$' | while read -r name arch suite pkg; do
	# shellcheck disable=SC2086
	selected $name $arch && echo "$name $arch $suite $pkg"
done | xargs -r -L 1 -P "$jobs" sh "$0" --one
echo "kernels: all guests in $(($(date +%s) - t_all)) s"
readme=$src/README.md
[ "${KPERF_KERNEL_README:-1}" = 0 ] && readme=""
[ -n "${KPERF_KERNEL_FILTER:-}" ] && readme=""
if ! python3 "$here/table.py" "$outroot" ${readme:+--readme "$readme"} --select "$select" \
	--set "$kset"; then
	if [ "${KPERF_KERNEL_STRICT:-1}" = 0 ]; then
		echo "kernels: failures above (KPERF_KERNEL_STRICT=0: reported, not fatal)"
		exit 0
	fi
	exit 1
fi
