#!/bin/sh
# rootfs.sh ARCH - the root file system of the test guests of a foreign architecture: Debian
# bookworm's packages for ARCH that the test binaries and the Python tests need, unpacked
# (mmdebstrap --variant=extract: no maintainer script runs, so no emulator is needed here).
# The guest sees it read-only over 9p with the project tree mounted at its own path.
# Cached in $KPERF_KERNEL_CACHE/rootfs-ARCH; rebuilt when the package list below changes.
set -eu
arch=$1
cache=${KPERF_KERNEL_CACHE:-/var/cache/kperf-kernels}
root=$cache/rootfs-$arch
# the shared libraries of libkperf-bpf and the tests (ldd build/arm64/tests/integration),
# a shell and the tools guest.sh and the tests call (awk, objdump/objcopy/nm: binutils,
# perf script/report: linux-perf, ldd: libc-bin, /etc/passwd: base-passwd), Python for the
# package's tests (python3-yaml: the deploy/ manifests' test). run.sh checks every NEEDED
# library of the arm64 build against this root before it boots a guest.
pkgs="libc6 libgcc-s1 libstdc++6 libbpf1 libelf1 libdw1 zlib1g libdeflate0 libzstd1 liblzma5 libbz2-1.0
      libcjson1 libprotobuf-c1 libcapstone4 libsqlite3-0 libmicrohttpd12 libcriterion3 dash
      coreutils procps util-linux grep sed gawk findutils python3 python3-pytest python3-yaml
      busybox-static binutils linux-perf libc-bin base-passwd"
# the key: the package list and this script's fix-ups (a change to either rebuilds the root)
key=$( (echo "$pkgs" | tr -s ' \n' ' '; sed -n '/^# fix-ups/,$p' "$0") | cksum)
mkdir -p "$cache"
if [ -f "$root/.kperf-key" ] && [ "$(cat "$root/.kperf-key")" = "$key" ]; then
	exit 0
fi
mirror=$(grep -hsE '^(URIs:|deb )' /etc/apt/sources.list.d/*.sources \
	/etc/apt/sources.list.d/*.list /etc/apt/sources.list |
	grep -oE 'https?://[^ ]*/debian/?( |$)' | head -1 | tr -d ' ')
[ -n "$mirror" ] || mirror=http://deb.debian.org/debian
rm -rf "$root"
echo "rootfs: unpacking bookworm $arch into $root" >&2
mmdebstrap --quiet --variant=extract --architectures="$arch" \
	--include="$(echo "$pkgs" | tr -s ' \n' ',' | sed 's/,$//')" \
	bookworm "$root" "deb $mirror bookworm main"
# fix-ups: what extract leaves out (no maintainer script runs): the usrmerge links, mount
# points, the alternatives (awk), the files postinst scripts write (/etc/passwd, /etc/group)
for d in bin sbin lib; do
	[ -e "$root/$d" ] || ln -s "usr/$d" "$root/$d"
done
mkdir -p "$root/proc" "$root/sys" "$root/dev" "$root/tmp" "$root/run" "$root/var/tmp" \
	"$root/root"
[ -e "$root/bin/sh" ] || ln -s dash "$root/bin/sh"
[ -e "$root/usr/bin/python3" ] || ln -s "$(cd "$root/usr/bin" && ls python3.* | head -1)" \
	"$root/usr/bin/python3"
[ -e "$root/usr/bin/awk" ] || ln -s gawk "$root/usr/bin/awk"
for f in passwd group; do
	[ -s "$root/etc/$f" ] || cp "$root/usr/share/base-passwd/$f.master" "$root/etc/$f"
done
# every tool the tests call must be there: fail here, not in a guest 10 minutes later
for t in sh awk objdump objcopy nm perf ldd python3 timeout; do
	[ -x "$root/usr/bin/$t" ] || [ -x "$root/bin/$t" ] || { echo "rootfs: $t is missing from $root" >&2; exit 1; }
done
echo "$key" >"$root/.kperf-key"
