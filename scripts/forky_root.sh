#!/bin/sh
# forky_root.sh - the Debian "forky" root the CPython 3.14 tests run their workload in
# (tests/integration/test_pyframes314.c: chroot ROOT python3.14): debootstrap's minbase of forky
# from this machine's own Debian mirror (the first non-security URI of /etc/apt/sources.list*,
# the machine's own apt configuration left as it is), then python3.14, python3.15 (a version
# kperf-bpf does not read: the "native frames only" test) and a free-threaded 3.14
# (python3.14-nogil) where the archive has them. A package the archive lacks is written, with
# what `apt-cache policy` said of it, to ROOT/kperf-missing, which the tests print as their
# reason to skip. Does nothing when ROOT already has python3.14. 2-6 minutes: `make
# forky-root`, not part of `make test`.
#   sh scripts/forky_root.sh [ROOT]     (default /var/cache/kperf-forky; run as root)
set -eu
ROOT=${1:-/var/cache/kperf-forky}
SUITE=forky
PKGS="python3.14 python3.15 python3.14-nogil"

if [ -x "$ROOT/usr/bin/python3.14" ]; then
	echo "forky-root: $ROOT has python3.14"
	exit 0
fi
command -v debootstrap >/dev/null || { echo "forky-root: no debootstrap (make deps)" >&2; exit 1; }
# debootstrap 1.0.128 (Debian 12) has no script named forky; sid's is the same (debian-common)
SCRIPT=/usr/share/debootstrap/scripts/$SUITE
[ -e "$SCRIPT" ] || SCRIPT=/usr/share/debootstrap/scripts/sid
[ -e "$SCRIPT" ] || { echo "forky-root: this debootstrap knows neither forky nor sid" >&2; exit 1; }

# the machine's own Debian mirror: deb822 "URIs:" lines, then one-line "deb URI suite" ones
MIRROR=$(cat /etc/apt/sources.list.d/*.sources /etc/apt/sources.list /etc/apt/sources.list.d/*.list \
	2>/dev/null | awk '
	/^URIs:/ { for (i = 2; i <= NF; i++) print $i }
	/^deb / { for (i = 2; i <= NF; i++) if ($i ~ /^[a-z]+:\/\//) { print $i; break } }' |
	grep -E '/debian/?$' | grep -v security | head -n 1)
MIRROR=${MIRROR:-http://deb.debian.org/debian}

# a base system left by an earlier run that failed after debootstrap is used again
if [ ! -f "$ROOT.tmp/.kperf-debootstrapped" ]; then
	echo "forky-root: debootstrap $SUITE from $MIRROR into $ROOT"
	rm -rf "$ROOT.tmp"
	debootstrap --variant=minbase "$SUITE" "$ROOT.tmp" "$MIRROR" "$SCRIPT" >"$ROOT.log" 2>&1 ||
		{ tail -n 20 "$ROOT.log" >&2; exit 1; }
	touch "$ROOT.tmp/.kperf-debootstrapped"
fi
# a testing suite's Release carries Valid-Until: a mirror (or a snapshot of one) older than
# this machine's clock is refused as expired without this
APT="apt-get -o Acquire::Check-Valid-Until=false"
chroot "$ROOT.tmp" sh -c "$APT update -qq" >>"$ROOT.log" 2>&1 ||
	{ tail -n 20 "$ROOT.log" >&2; exit 1; }
: >"$ROOT.tmp/kperf-missing"
want=""
for p in $PKGS; do
	cand=$(chroot "$ROOT.tmp" apt-cache policy "$p" | sed -n 's/^ *Candidate: //p')
	if [ -z "$cand" ] || [ "$cand" = "(none)" ]; then
		echo "$p: not in Debian $SUITE at $MIRROR (apt-cache policy $p: candidate ${cand:-none})" \
			>>"$ROOT.tmp/kperf-missing"
	else
		want="$want $p"
	fi
done
# shellcheck disable=SC2086
chroot "$ROOT.tmp" sh -c "export DEBIAN_FRONTEND=noninteractive;
	$APT install -y -qq --no-install-recommends $want && apt-get clean" >>"$ROOT.log" 2>&1 ||
	{ tail -n 20 "$ROOT.log" >&2; exit 1; }
rm -rf "$ROOT"
mv "$ROOT.tmp" "$ROOT"
for p in $want; do
	echo "forky-root: $p $(chroot "$ROOT" dpkg-query -W -f '${Version}' "$p") in $ROOT"
done
sed 's/^/forky-root: missing: /' "$ROOT/kperf-missing"
