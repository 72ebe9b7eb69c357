#!/bin/sh
# The agent under workload churn for DURATION_S (default 600: the issue's 10 minutes):
# `kperf-bpf agent --all --profile-hz 19 --interval 2`, scraped every SCRAPE_S (1) while
# short-lived processes (CHURN_HZ a second, /bin/true and the syscalls workload) are born in
# CGROUPS cgroups that are replaced one by one (a container's life: CG_LIFE_S), and one
# pprof profile of PROFILE_S (10) s is pulled every PROFILE_EVERY_S (25; 0: none), as Parca or
# Pyroscope would. PERF_S: `perf record -g` of the agent for that many seconds from the start,
# its report in perf-agent.txt. Prints, at the end: the agent's CPU share of one core, RSS at
# start, steady (the median of the RSS sampled at each scrape over the last STEADY_S, 180 s,
# profiles included), min/max of those samples and the kernel's peak (VmHWM) over the whole
# run, peak ÷ steady; where the RSS was at the largest sample taken during a profile (smaps:
# heap and anonymous memory, BPF maps mapped, perf buffers, files), scrape latencies (min,
# p50, p99, max) and the series count (min, max, end). Printed, not judged (bench/, not make
# test).
#   sudo DURATION_S=600 sh bench/agent_soak.sh
B=${KPERF_BUILD:-build}
DURATION_S=${DURATION_S:-600}
SCRAPE_S=${SCRAPE_S:-1}
CHURN_HZ=${CHURN_HZ:-20}
CGROUPS=${CGROUPS:-6}
CG_LIFE_S=${CG_LIFE_S:-30}
PROFILE_EVERY_S=${PROFILE_EVERY_S:-25}
PROFILE_S=${PROFILE_S:-10}
STEADY_S=${STEADY_S:-180}
CGROOT=$(awk '$3 == "cgroup2" {print $2; exit}' /proc/self/mounts)
TMP=$(mktemp -d)
ticks=$(getconf CLK_TCK)
cpu_ticks() { awk '{print $14 + $15}' /proc/$1/stat; }
kb() { awk -v k="$2:" '$1 == k {print $2}' /proc/$1/status; }
# the RSS of process $1 by kind of mapping, in kB (smaps)
rss_by_kind() {
	awk '/^[0-9a-f]+-[0-9a-f]+ / {
		name = $6; for (i = 7; i <= NF; i++) name = name " " $i
		kind = "files"
		if (name == "" || name == "[heap]" || name ~ /^\[(stack|anon)/) kind = "heap+anon"
		else if (name ~ /bpf-map|bpf_ringbuf|bpf-ringbuf/) kind = "bpf-maps"
		else if (name ~ /perf_event/) kind = "perf-buffers"
		else if (name ~ /^\[/) kind = "kernel-pages"
		next }
	$1 == "Rss:" { r[kind] += $2; t += $2 }
	END { printf "total %d", t; for (k in r) printf "  %s %d", k, r[k]; printf "\n" }' /proc/$1/smaps
}

"$B/bin/kperf-bpf" agent --listen 127.0.0.1:0 --all --profile-hz 19 --interval 2 2>"$TMP/err" &
A=$!
CHURN=; PROF=
cleanup() {
	[ -n "$CHURN" ] && kill $CHURN 2>/dev/null && wait $CHURN 2>/dev/null
	[ -n "$PROF" ] && kill $PROF 2>/dev/null && wait $PROF 2>/dev/null
	kill -TERM $A 2>/dev/null; wait $A 2>/dev/null
	for d in "$CGROOT"/kperf-soak-$$-*; do [ -d "$d" ] && rmdir "$d" 2>/dev/null; done
	rm -rf "$TMP"
}
trap cleanup EXIT INT TERM
while ! grep -q 'listening on' "$TMP/err"; do
	kill -0 $A 2>/dev/null || { cat "$TMP/err"; exit 1; }
	sleep 0.1
done
PORT=$(sed -n 's/.*listening on .*:\([0-9]*\)$/\1/p' "$TMP/err")

# the churn: a process every 1/CHURN_HZ s in one of the cgroups; each cgroup replaced by a new
# one (another id, another path) after CG_LIFE_S
(
	i=0; gen=0; n=0
	for c in $(seq 1 "$CGROUPS"); do mkdir "$CGROOT/kperf-soak-$$-$c-0"; done
	start=$(date +%s)
	while :; do
		c=$(( i % CGROUPS + 1 )); i=$((i + 1))
		g=$(( ($(date +%s) - start + c * CG_LIFE_S / CGROUPS) / CG_LIFE_S ))
		d="$CGROOT/kperf-soak-$$-$c-$g"
		if [ ! -d "$d" ]; then
			mkdir "$d"; n=$((n + 1))
			rmdir "$CGROOT/kperf-soak-$$-$c-$((g - 1))" 2>/dev/null
		fi
		if [ $((i % 2)) -eq 0 ]; then
			"$B/workloads/incgroup" "$d" /bin/true
		else
			"$B/workloads/incgroup" "$d" "$B/workloads/syscalls" --getppid 100 --writes 10 \
				--fails 1 >/dev/null
		fi
		sleep "$(echo "scale=3; 1 / $CHURN_HZ" | bc)"
	done
) &
CHURN=$!

sleep 1
rss_start=$(kb $A VmRSS)
if [ "${PERF_S:-0}" -gt 0 ]; then
	(perf record -q -g -o "$TMP/perf.data" -p $A -- sleep "$PERF_S" 2>/dev/null &&
	 perf report -i "$TMP/perf.data" --no-children --percent-limit 1.5 --stdio 2>/dev/null \
		| grep -v '^$' | head -150 > perf-agent.txt) &
fi
c0=$(cpu_ticks $A); t0=$(date +%s); next_prof=$((t0 + PROFILE_EVERY_S))
: >"$TMP/lat"; : >"$TMP/rss"; : >"$TMP/series"; : >"$TMP/profiles"; inprof_max=0
while [ $(( $(date +%s) - t0 )) -lt "$DURATION_S" ]; do
	curl -s -o "$TMP/m" -w '%{time_total}\n' "127.0.0.1:$PORT/metrics" >>"$TMP/lat"
	awk '$1 == "kperf_agent_series" {print $2}' "$TMP/m" >>"$TMP/series"
	el=$(( $(date +%s) - t0 )); r=$(kb $A VmRSS)
	[ "$el" -ge 10 ] && echo "$el $r" >>"$TMP/rss"
	# a profile being pulled (the scrapes go on meanwhile, as Prometheus' would)
	if [ -n "$PROF" ] && ! kill -0 "$PROF" 2>/dev/null; then wait "$PROF"; PROF=; fi
	if [ -n "$PROF" ] && [ "$r" -gt "$inprof_max" ]; then
		inprof_max=$r; rss_by_kind $A >"$TMP/inprof"
	fi
	if [ "$PROFILE_EVERY_S" -gt 0 ] && [ -z "$PROF" ] && [ "$(date +%s)" -ge "$next_prof" ]; then
		curl -s -o /dev/null -w '%{http_code} %{size_download}\n' \
			"127.0.0.1:$PORT/debug/pprof/profile?seconds=$PROFILE_S" >>"$TMP/profiles" &
		PROF=$!
		next_prof=$(( $(date +%s) + PROFILE_EVERY_S ))
	fi
	sleep "$SCRAPE_S"
done
[ -n "$PROF" ] && wait "$PROF"
c1=$(cpu_ticks $A); dt=$(( $(date +%s) - t0 ))
stats() { sort -n "$1" | awk '{v[NR] = $1} END {
	p = int(NR * 0.99); if (p < 1) p = 1
	printf "min %s  p50 %s  p99 %s  max %s  (%d samples)", v[1], v[int((NR + 1) / 2)], v[p],
	       v[NR], NR }'; }
echo "agent --all (every syscall) --profile-hz 19 --interval 2, $dt s, churn $CHURN_HZ processes/s in $CGROUPS cgroups (each replaced every $CG_LIFE_S s), a scrape every $SCRAPE_S s, a $PROFILE_S s profile every $PROFILE_EVERY_S s"
if [ "$PROFILE_EVERY_S" -gt 0 ]; then
	echo "profiles:       $(wc -l <"$TMP/profiles") pulled, status $(awk '{print $1}' "$TMP/profiles" | sort | uniq -c | awk '{printf "%s x%s ", $2, $1}')sizes $(awk '{print $2}' "$TMP/profiles" | sort -n | sed -n '1p;$p' | tr '\n' ' ')bytes"
else
	echo "(no profiles pulled)"
fi
echo "CPU:            $(echo "scale=3; 100 * ($c1 - $c0) / $ticks / $dt" | bc)% of one core"
rmin=$(awk '{print $2}' "$TMP/rss" | sort -n | head -1); rmax=$(awk '{print $2}' "$TMP/rss" | sort -n | tail -1)
hwm=$(kb $A VmHWM)
steady=$(awk -v from=$((dt - STEADY_S)) '$1 >= from {print $2}' "$TMP/rss" | sort -n |
	awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}')
echo "RSS (kB):       start $rss_start  steady $steady (median of the last $STEADY_S s)  min $rmin  max $rmax  end $(kb $A VmRSS)  peak (VmHWM) $hwm"
echo "                peak/steady $(echo "scale=2; $hwm / $steady" | bc)  max sampled/steady $(echo "scale=2; $rmax / $steady" | bc)"
[ -s "$TMP/inprof" ] && echo "RSS during a profile, largest sample (kB): $(cat "$TMP/inprof")"
echo "RSS at the end (kB):                       $(rss_by_kind $A)"
echo "scrape latency (s): $(stats "$TMP/lat")"
echo "series:         $(stats "$TMP/series" | sed 's/p50.*max/max/')  end $(tail -1 "$TMP/series")"
s=$(date +%s%N); kill -TERM $A; wait $A; rc=$?
echo "SIGTERM to exit: $(( ($(date +%s%N) - s) / 1000000 )) ms, status $rc"
