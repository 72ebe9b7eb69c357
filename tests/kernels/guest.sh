#!/bin/sh
# guest.sh OUT BUILD [FILTER [UNIT [ALL [SET]]]] - what a test guest runs, in the project tree,
# as root, once the shared root is mounted (tests/kernels/init). SET is core (the default:
# the tests tests/kernels/core.list names) or full (every suite but skip.list's). Every
# phase writes into OUT (a share the host reads):
#   release, arch          uname -r / uname -m
#   btf                    /sys/kernel/btf/vmlinux (to regenerate vmlinux/ARCH/vmlinux.h)
#   features.txt           `kperf-bpf features`: the kernel's BPF features and the variant of
#                          every BPF program that loads here
#   integration.json/.log  the integration tests (criterion): core.list's (SET core), or
#                          every suite but those tests/kernels/skip.list names (all of them
#                          with ALL=1), so a test added to tests/integration runs here
#                          without a change
#   *-retry.*              SET core: the tests that failed, run once more (table.py counts a
#                          test that passes then as passed, and names it as flaky)
#   integration-late.*     the suites skip.list says to run late, after those
#   python.xml/.log        the Python tests (pytest) but skip.list's files, when python3 and
#                          pytest are there
#   skipped-suites         what skip.list left out
#   phases                 one line per phase: name, exit status, seconds
# With FILTER, only the integration tests it selects run (a quicker look at one suite);
# with FILTER py:EXPR, only the Python tests pytest -k EXPR selects; with sh:BASE64, that
# shell command (debugging).
set -u
out=$1
build=$2
filter=${3:-}
unit=${4:-}
all=${5:-}
set=${6:-core}
export KPERF_BUILD=$build
export PYTHONDONTWRITEBYTECODE=1
export HOME=/root
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
: >"$out/phases"
top=$(pwd)

# phase NAME SECONDS CMD...: run with a time limit, log its status and duration
phase() {
	name=$1 limit=$2
	shift 2
	t0=$(date +%s)
	timeout -k 5 "$limit" "$@" >"$out/$name.log" 2>&1
	rc=$?
	echo "$name $rc $(($(date +%s) - t0))" >>"$out/phases"
	echo "guest: $name exit $rc in $(($(date +%s) - t0)) s" >/dev/console 2>&1 || true
}

uname -r >"$out/release"
uname -m >"$out/arch"
[ -r /sys/kernel/btf/vmlinux ] && cp /sys/kernel/btf/vmlinux "$out/btf"
# the test machines run with these; a Debian kernel may differ (perf_event_paranoid=3)
sysctl -qw kernel.perf_event_paranoid=2 2>/dev/null

phase features 120 "$build/bin/kperf-bpf" features
cp "$out/features.log" "$out/features.txt"
# FILTER "py:EXPR" runs the Python tests that pytest -k EXPR selects instead
case $filter in
py:*)
	tree=$(dirname "$build")/tree
	[ -d "$tree/tests/python" ] && cd "$tree"
	phase python 900 env KPERF_BPF_LIB="$build/lib/libkperf-bpf.so" PYTHONPATH=python \
		python3 -m pytest -q -p no:cacheprovider --junitxml="$out/python.xml" \
		-k "${filter#py:}" tests/python
	echo done >>"$out/phases"
	exit 0
	;;
sh:*)
	# a shell command, base64 (the kernel command line splits at spaces): for debugging
	echo "${filter#sh:}" | base64 -d >/tmp/cmd.sh
	phase shell 900 sh /tmp/cmd.sh
	echo done >>"$out/phases"
	exit 0
	;;
?*)
	phase integration 1500 "$build/tests/integration" --jobs 1 --verbose \
		--filter "$filter" --json="$out/integration.json"
	echo done >>"$out/phases"
	exit 0
	;;
esac
# the core set: core.list's tests, then those that failed once more
if [ "$set" = core ] && [ "$all" != 1 ]; then
	echo core >"$out/set"
	globs=$(awk '$1 == "integration" { printf "%s%s", sep, $2; sep = "|" }' \
		tests/kernels/core.list)
	pyfiles=$(awk '$1 == "python" { printf " tests/python/%s", $2 }
		$1 == "python-deselect" { printf " --deselect tests/python/%s", $2 }' \
		tests/kernels/core.list)
	phase integration 900 "$build/tests/integration" --jobs 1 --verbose \
		--filter "@($globs)" --json="$out/integration.json"
	again=$(python3 tests/kernels/table.py --failed "$out/integration.json" 2>/dev/null)
	if [ -n "$again" ]; then
		phase integration-retry 300 "$build/tests/integration" --jobs 1 --verbose \
			--filter "@($again)" --json="$out/integration-retry.json"
	fi
	if command -v python3 >/dev/null && python3 -c 'import pytest' 2>/dev/null; then
		tree=$(dirname "$build")/tree
		[ -d "$tree/tests/python" ] && cd "$tree"
		# shellcheck disable=SC2086
		phase python 600 env KPERF_BPF_LIB="$build/lib/libkperf-bpf.so" PYTHONPATH=python \
			python3 -m pytest -q -p no:cacheprovider --durations=0 $pyfiles \
			--junitxml="$out/python.xml"
		again=$(python3 "$top/tests/kernels/table.py" --failed "$out/python.xml" 2>/dev/null)
		if [ -n "$again" ]; then
			set -f # test ids hold brackets
			# shellcheck disable=SC2086
			phase python-retry 300 env KPERF_BPF_LIB="$build/lib/libkperf-bpf.so" \
				PYTHONPATH=python python3 -m pytest -q -p no:cacheprovider $again \
				--junitxml="$out/python-retry.xml"
		fi
	fi
	echo done >>"$out/phases"
	exit 0
fi
echo full >"$out/set"
# what skip.list leaves out: a criterion filter !(a|b)/* and pytest --ignore options
suites= ignore= late=
if [ "$all" != 1 ]; then
	suites=$(awk '$1 == "integration" { printf "%s%s", sep, $2; sep = "|" }' \
		tests/kernels/skip.list)
	late=$(awk '$1 == "late" { printf "%s%s", sep, $2; sep = "|" }' tests/kernels/skip.list)
	ignore=$(awk '$1 == "python" { printf " --ignore=tests/python/%s", $2 }' \
		tests/kernels/skip.list)
	awk '$1 == "integration" || $1 == "python" { print $1, $2 }' tests/kernels/skip.list \
		>"$out/skipped-suites"
fi
# --verbose: the log shows each test as it ends, so a hang names its test. The unit tests
# hardly depend on the kernel and take minutes under emulation: only on request (UNIT=1)
if [ "$unit" = 1 ]; then
	phase unit 900 "$build/tests/unit" --jobs 2 --verbose --json="$out/unit.json"
fi
# a test that hangs is cut off by the phase's limit; table.py then reads the verbose log
# the late suites (skip.list) in a phase of their own, after the Python tests
notfirst=$suites${suites:+${late:+|}}$late
phase integration 1200 "$build/tests/integration" --jobs 1 --verbose \
	${notfirst:+--filter "!($notfirst)/*"} --json="$out/integration.json"
if command -v python3 >/dev/null && python3 -c 'import pytest' 2>/dev/null; then
	# the copy of the tree run.sh took beside the build copies, when there is one
	tree=$(dirname "$build")/tree
	[ -d "$tree/tests/python" ] && cd "$tree"
	# shellcheck disable=SC2086
	phase python 600 env KPERF_BPF_LIB="$build/lib/libkperf-bpf.so" PYTHONPATH=python \
		python3 -m pytest -q -p no:cacheprovider --durations=0 $ignore \
		--junitxml="$out/python.xml" tests/python
fi
# the late suites after the Python tests: those prove more per minute of emulation
cd "$top"
if [ -n "$late" ]; then
	phase integration-late 900 "$build/tests/integration" --jobs 1 --verbose \
		--filter "@($late)/*" --json="$out/integration-late.json"
fi
echo done >>"$out/phases"
