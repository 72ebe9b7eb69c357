#!/bin/sh
# fetch.sh ARCH SUITE PACKAGE - download one of Debian's kernels and make it bootable for the
# test guests: its vmlinuz, and an initramfs holding a static busybox, the modules that mount
# a 9p share over virtio, and tests/kernels/init. Prints the directory that holds
# vmlinuz, initrd.gz and release (the kernel's uname -r).
#
# Everything is cached under $KPERF_KERNEL_CACHE (default /var/cache/kperf-kernels): the
# .deb files, and the prepared kernel (rebuilt only when the package or init changes).
# Suite bookworm is this machine's own apt sources (arm64 needs `dpkg --add-architecture
# arm64`); any other suite gets a private apt configuration of the same archive, so the
# machine's /etc/apt stays as it is.
set -eu
arch=$1 suite=$2 pkg=$3
here=$(cd "$(dirname "$0")" && pwd)
cache=${KPERF_KERNEL_CACHE:-/var/cache/kperf-kernels}
mkdir -p "$cache/debs"
chmod 755 "$cache" "$cache/debs" # apt's download sandbox user writes there

log() { echo "fetch: $*" >&2; }

# apt options of a private configuration for <suite>: its own lists and cache, no status
private_apt() {
	d=$cache/apt-$suite
	if [ ! -f "$d/sources.list" ]; then
		mkdir -p "$d/lists/partial" "$d/archives/partial" "$d/parts"
		: >"$d/status"
		# the archive this machine already uses (deb822 or one-line sources)
		mirror=$(grep -hsE '^(URIs:|deb )' /etc/apt/sources.list.d/*.sources \
			/etc/apt/sources.list.d/*.list /etc/apt/sources.list |
			grep -oE 'https?://[^ ]*/debian/?( |$)' | head -1 | tr -d ' ')
		[ -n "$mirror" ] || mirror=http://deb.debian.org/debian
		echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $mirror $suite main" \
			>"$d/sources.list"
	fi
	echo "-o Dir::Etc::SourceList=$d/sources.list -o Dir::Etc::SourceParts=$d/parts" \
		"-o Dir::State::Lists=$d/lists -o Dir::Cache=$d -o Dir::State::Status=$d/status" \
		"-o APT::Architectures::=amd64 -o APT::Architectures::=arm64" \
		"-o APT::Sandbox::User=root"
}

if [ "$suite" = bookworm ]; then
	opts="-o APT::Sandbox::User=root"
else
	opts=$(private_apt)
	# refresh the private lists once a day
	stamp=$cache/apt-$suite/updated
	if [ ! -f "$stamp" ] || [ -n "$(find "$stamp" -mmin +1440)" ]; then
		log "apt-get update ($suite, private configuration)"
		# shellcheck disable=SC2086
		apt-get -qq $opts update >&2 && touch "$stamp"
	fi
fi

# the kernel package behind the meta package, e.g. linux-image-6.1.0-56-amd64
# shellcheck disable=SC2086
image=$(apt-cache $opts depends "$pkg:$arch" 2>/dev/null |
	sed -n 's/^ *Depends: \(linux-image-[0-9][^ :]*\).*/\1/p' | head -1)
if [ -z "$image" ]; then
	log "cannot resolve $pkg:$arch in $suite (for arm64 on bookworm: dpkg --add-architecture arm64 && apt-get update)"
	exit 1
fi
# shellcheck disable=SC2086
version=$(apt-cache $opts show "$image:$arch" 2>/dev/null | sed -n 's/^Version: //p' | head -1)
deb=$cache/debs/${image}_${version}_$arch.deb
if [ ! -f "$deb" ]; then
	log "downloading $image $version ($arch, $suite)"
	# shellcheck disable=SC2086
	(cd "$cache/debs" && apt-get -qq $opts download "$image:$arch" >&2)
	mv "$cache/debs/${image}_$(echo "$version" | sed 's/:/%3a/')_$arch.deb" "$deb" 2>/dev/null || true
	[ -f "$deb" ] || { log "download of $image failed"; exit 1; }
fi
bbdeb=$(ls "$cache"/debs/busybox-static_*_"$arch".deb 2>/dev/null | head -1)
if [ -z "$bbdeb" ]; then
	log "downloading busybox-static ($arch)"
	(cd "$cache/debs" && apt-get -qq -o APT::Sandbox::User=root download "busybox-static:$arch" >&2)
	bbdeb=$(ls "$cache"/debs/busybox-static_*_"$arch".deb | head -1)
fi

out=$cache/kernels/$arch-$image
key="$(basename "$deb") $(basename "$bbdeb") $(cksum <"$here/init")"
if [ -f "$out/initrd.gz" ] && [ "$(cat "$out/key" 2>/dev/null)" = "$key" ]; then
	echo "$out"
	exit 0
fi
log "preparing $image"
rm -rf "$out"
mkdir -p "$out/pkg" "$out/initrd/bin" "$out/initrd/modules"
dpkg-deb -x "$deb" "$out/pkg"
release=$(ls "$out/pkg/lib/modules")
cp "$out/pkg/boot/vmlinuz-$release" "$out/vmlinuz"
cp "$out/pkg/boot/config-$release" "$out/config"
echo "$release" >"$out/release"

# the modules for a 9p root over virtio-pci, dependencies first
depmod -b "$out/pkg" "$release"
for m in 9p 9pnet_virtio virtio_pci; do
	modprobe -d "$out/pkg" -S "$release" --show-depends $m 2>/dev/null
done | awk '$1 == "insmod" { print $2 }' | awk '!seen[$0]++' >"$out/modpaths"
: >"$out/initrd/modules/order"
while read -r m; do
	name=$(basename "$m" | sed 's/\.ko.*//')
	case $m in
	*.xz) xz -dc "$m" >"$out/initrd/modules/$name.ko" ;;
	*.zst) zstd -qdc "$m" >"$out/initrd/modules/$name.ko" ;;
	*.gz) gzip -dc "$m" >"$out/initrd/modules/$name.ko" ;;
	*) cp "$m" "$out/initrd/modules/$name.ko" ;;
	esac
	echo "$name" >>"$out/initrd/modules/order"
done <"$out/modpaths"
# modules that are built in (e.g. virtio_pci on some kernels) are simply not listed

mkdir -p "$out/bb"
dpkg-deb -x "$bbdeb" "$out/bb"
cp "$out/bb/bin/busybox" "$out/initrd/bin/busybox"
cp "$here/init" "$out/initrd/init"
chmod 755 "$out/initrd/init"
(cd "$out/initrd" && find . | cpio -o -H newc --quiet | gzip -1) >"$out/initrd.gz"
rm -rf "$out/pkg/lib/modules" "$out/bb" # the rest of the package is not needed
echo "$key" >"$out/key"
echo "$out"
