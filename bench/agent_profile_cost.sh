#!/bin/sh
# What one pull profile costs the agent: `kperf-bpf agent --all --profile-hz 19` idle for
# IDLE_S (10) s, then PROFILES (5) profiles of PROFILE_S (5) s pulled one after the other
# (GAP_S, 3 s, apart). Prints the agent's CPU time (utime + stime of /proc/PID/stat) over the
# idle phase and for each profile (request to response, the sampling seconds included), the
# ids of the sampling programs seen during each profile (bpftool: the same ids each time when
# the program set stays loaded), RSS after each, and what bpftool shows of the agent's programs
# after it exited. Printed, not judged (bench/, not make test).
#   sudo sh bench/agent_profile_cost.sh
B=${KPERF_BUILD:-build}
IDLE_S=${IDLE_S:-10}
PROFILES=${PROFILES:-5}
PROFILE_S=${PROFILE_S:-5}
GAP_S=${GAP_S:-3}
TMP=$(mktemp -d)
ticks=$(getconf CLK_TCK)
cpu_ms() { awk -v t="$ticks" '{print int(($14 + $15) * 1000 / t)}' /proc/$1/stat; }
kb() { awk -v k="$2:" '$1 == k {print $2}' /proc/$1/status; }
# the ids and names of the BPF programs process $1 holds (its fds' fdinfo)
held() { for f in /proc/$1/fdinfo/*; do awk '$1 == "prog_id:" {print $2}' "$f" 2>/dev/null
	done | sort -nu | while read -r id; do
		printf "%s:%s " "$id" "$(bpftool prog show id "$id" 2>/dev/null | awk 'NR == 1 {print $4}')"
	done; }
# of ids $*, those still loaded
loaded() { for id in "$@"; do bpftool prog show id "$id" >/dev/null 2>&1 && printf "%s " "$id"; done; }

"$B/bin/kperf-bpf" agent --listen 127.0.0.1:0 --all --profile-hz 19 2>"$TMP/err" &
A=$!
trap 'kill -TERM $A 2>/dev/null; wait $A 2>/dev/null; rm -rf "$TMP"' EXIT INT TERM
while ! grep -q 'listening on' "$TMP/err"; do
	kill -0 $A 2>/dev/null || { cat "$TMP/err"; exit 1; }
	sleep 0.1
done
PORT=$(sed -n 's/.*listening on .*:\([0-9]*\)$/\1/p' "$TMP/err")
sleep 1
c0=$(cpu_ms $A)
if [ -n "$PERF_S" ]; then # perf record -g of the agent from here, its report in perf-agent-profile.txt
	(perf record -q -g -o "$TMP/perf.data" -p $A -- sleep "$PERF_S" 2>/dev/null &&
	 perf report -i "$TMP/perf.data" --no-children --percent-limit 1 --stdio 2>/dev/null |
		grep -v '^$' | head -300 >perf-agent-profile.txt) &
	P=$!
fi
sleep "$IDLE_S"
c1=$(cpu_ms $A)
echo "idle (no scrape, no profile) $IDLE_S s: $((c1 - c0)) ms of CPU ($(echo "scale=2; ($c1 - $c0) / 10 / $IDLE_S" | bc)% of one core), RSS $(kb $A VmRSS) kB"
i=1
while [ $i -le "$PROFILES" ]; do
	c0=$(cpu_ms $A)
	curl -s -o "$TMP/p.pb.gz" "127.0.0.1:$PORT/debug/pprof/profile?seconds=$PROFILE_S" &
	C=$!
	sleep "${HELD_AT_S:-3}"
	ids=$(held $A)
	all="$all $(echo "$ids" | tr ' ' '\n' | sed 's/:.*//')"
	wait $C
	c1=$(cpu_ms $A)
	echo "profile $i: $((c1 - c0)) ms of CPU, $(wc -c <"$TMP/p.pb.gz") bytes, RSS after $(kb $A VmRSS) kB (peak $(kb $A VmHWM)), sampling prog ids: $ids"
	i=$((i + 1))
	sleep "$GAP_S"
done
[ -n "$P" ] && wait "$P"
kill -0 $A 2>/dev/null || { echo "the agent is gone:"; cat "$TMP/err"; }
kill -TERM $A; wait $A
echo "agent exit status $?; of the programs it held, still loaded 2 s after: [$(sleep 2; loaded $all)]"
