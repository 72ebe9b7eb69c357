#!/bin/sh
# trixie_root.sh - the Debian 13 ("trixie") root the CPython 3.13 tests run their workload in
# (tests/integration/test_pyframes313.c: chroot ROOT python3.13): debootstrap's minbase from this
# machine's own Debian mirror (the first non-security URI of /etc/apt/sources.list*), then
# python3.13 installed in it. Does nothing when ROOT already has python3.13. Takes 1-5 minutes
# (4 on the project's loaded VM): `make trixie-root`, not part of `make test`.
#   sh scripts/trixie_root.sh [ROOT]     (default /var/cache/kperf-trixie; run as root)
set -eu
ROOT=${1:-/var/cache/kperf-trixie}

if [ -x "$ROOT/usr/bin/python3.13" ]; then
	echo "trixie-root: $ROOT has python3.13"
	exit 0
fi
command -v debootstrap >/dev/null || { echo "trixie-root: no debootstrap (make deps)" >&2; exit 1; }
[ -e /usr/share/debootstrap/scripts/trixie ] ||
	{ echo "trixie-root: this debootstrap does not know trixie" >&2; exit 1; }

# the machine's own Debian mirror: deb822 "URIs:" lines, then one-line "deb URI suite" ones
MIRROR=$(cat /etc/apt/sources.list.d/*.sources /etc/apt/sources.list /etc/apt/sources.list.d/*.list \
	2>/dev/null | awk '
	/^URIs:/ { for (i = 2; i <= NF; i++) print $i }
	/^deb / { for (i = 2; i <= NF; i++) if ($i ~ /^[a-z]+:\/\//) { print $i; break } }' |
	grep -E '/debian/?$' | grep -v security | head -n 1)
MIRROR=${MIRROR:-http://deb.debian.org/debian}

echo "trixie-root: debootstrap trixie from $MIRROR into $ROOT"
rm -rf "$ROOT.tmp"
debootstrap --variant=minbase trixie "$ROOT.tmp" "$MIRROR" >"$ROOT.log" 2>&1 ||
	{ tail -n 20 "$ROOT.log" >&2; exit 1; }
chroot "$ROOT.tmp" sh -c 'export DEBIAN_FRONTEND=noninteractive;
	apt-get update -qq && apt-get install -y -qq --no-install-recommends python3.13 &&
	apt-get clean' >>"$ROOT.log" 2>&1 || { tail -n 20 "$ROOT.log" >&2; exit 1; }
rm -rf "$ROOT"
mv "$ROOT.tmp" "$ROOT"
echo "trixie-root: $(chroot "$ROOT" python3.13 -c 'import sys; print(sys.version.split()[0])') in $ROOT"
