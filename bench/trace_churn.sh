#!/bin/sh
# trace_churn.sh - issue 19's "a 24 h system-wide run with processes coming and going counts
# every call", compressed: `kperf-bpf trace -e getppid` of every process (no -p, no command)
# for DURATION_S (default 600) with a summary of SUMMARY_ENTRIES rows (default 256: far fewer
# than the processes of the run, so the counts are exact only if an exited process's rows
# leave the kernel map), while JOBS loops start processes that come and go: a copy of the
# syscalls workload named kpchurn19 (its comm tells its rows from the machine's), CHILDREN
# short-lived children one at a time, then a process of THREADS threads, then a long one of
# LONG calls. Each makes GETPPID calls per thread; the loops count what they started, so the
# workload's own count is exact. The processes start once the trace is attached (its first
# interval printed) and have exited before it is stopped (SIGINT).
# Prints: the calls expected and counted in the rows of kpchurn19 (they must be equal), the
# calls in pid 0 rows ([map full] / [no memory]: counted, but without their process; 0
# wanted), the processes started, the rows of the final summary, the tracer's CPU time and
# peak RSS. Printed, not judged (bench/, not make test). Needs root.
#   sudo DURATION_S=600 sh bench/trace_churn.sh
B=${KPERF_BUILD:-build}
DURATION_S=${DURATION_S:-600}
SUMMARY_ENTRIES=${SUMMARY_ENTRIES:-256}
JOBS=${JOBS:-2}
CHILDREN=${CHILDREN:-50}
THREADS=${THREADS:-4}
GETPPID=${GETPPID:-200}
LONG=${LONG:-200000}
TMP=$(mktemp -d)
cp "$B/workloads/syscalls" "$TMP/kpchurn19"
T=
LOOPS=
cleanup() {
	for p in $LOOPS; do kill "$p" 2>/dev/null; done
	for p in $LOOPS; do wait "$p" 2>/dev/null; done
	[ -n "$T" ] && kill -INT "$T" 2>/dev/null && wait "$T" 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

"$B/bin/kperf-bpf" trace -e getppid --summary-entries "$SUMMARY_ENTRIES" -i 5 --format csv \
	>"$TMP/out.csv" 2>"$TMP/err" &
T=$!
# attached: the first interval is printed (and flushed) after the enable
n=0
until grep -q '^interval,\|^kind,' "$TMP/out.csv" 2>/dev/null; do
	kill -0 "$T" 2>/dev/null || { cat "$TMP/err"; exit 1; }
	n=$((n + 1)); [ $n -gt 600 ] && { echo "never attached"; exit 1; }
	sleep 0.1
done

# one loop: until the deadline, one round of the three kinds of process; its expected calls
# and processes into $TMP/loop.N when it ends
loop() {
	calls=0 procs=0
	end=$(($(date +%s) + DURATION_S))
	while [ "$(date +%s)" -lt "$end" ]; do
		"$TMP/kpchurn19" --children "$CHILDREN" --one-at-a-time --getppid "$GETPPID" \
			--writes 0 --fails 0 || echo "loop $1: a run failed"
		calls=$((calls + (CHILDREN + 1) * GETPPID)); procs=$((procs + CHILDREN + 1))
		"$TMP/kpchurn19" --threads "$THREADS" --getppid "$GETPPID" --writes 0 --fails 0 ||
			echo "loop $1: a run failed"
		calls=$((calls + THREADS * GETPPID)); procs=$((procs + 1))
		"$TMP/kpchurn19" --getppid "$LONG" --writes 0 --fails 0 || echo "loop $1: a run failed"
		calls=$((calls + LONG)); procs=$((procs + 1))
	done
	echo "$calls $procs" >"$TMP/loop.$1"
}
j=1
while [ $j -le "$JOBS" ]; do
	loop $j &
	LOOPS="$LOOPS $!"
	j=$((j + 1))
done
for p in $LOOPS; do wait "$p"; done
LOOPS=
sleep 1
# the tracer's CPU time (user + system) and peak RSS before it reports
cpu_s=$(awk -v t="$(getconf CLK_TCK)" '{printf "%.1f", ($14 + $15) / t}' /proc/$T/stat)
hwm=$(awk '$1 == "VmHWM:" {print $2}' /proc/$T/status)
kill -INT "$T"
wait "$T"
rc=$?
T=
expected=$(cat "$TMP"/loop.* | awk '{c += $1; p += $2} END {print c + 0, p + 0}')
# the final summary's rows: summary,pid,tid,"comm",cpu,syscall,nr,...,calls (11th field)
awk -F, -v want="$expected" '
	$1 == "summary" {
		rows++
		if ($4 == "\"kpchurn19\"") { churn += $11; crows++ }
		if ($2 == 0) { pid0 += $11; print "pid 0 row:", $0 }
	}
	END {
		split(want, e, " ")
		printf "expected calls %d (processes %d)\ncounted  calls %d in %d rows of kpchurn19 (%s)\n", e[1], e[2], churn, crows, churn == e[1] ? "exact" : "NOT EXACT"
		printf "pid 0 rows: %d calls\nrows in the final summary: %d\n", pid0, rows
	}' "$TMP/out.csv"
echo "tracer: ${cpu_s} s of CPU in ${DURATION_S} s, peak RSS ${hwm} kB; exit status $rc; its stderr:"
cat "$TMP/err"
