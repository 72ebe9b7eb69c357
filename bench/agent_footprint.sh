#!/bin/sh
# The agent's footprint: RSS at start and under steady scraping (1 scrape/s), its CPU share
# of one core idle (scraped) and while profiles at --profile-hz 19 are pulled back to back,
# and the syscall workload's time under the agent as a ratio to untraced. Printed, not
# judged. STEADY_S (default 60) is the steady phase.
B=${KPERF_BUILD:-build}
STEADY_S=${STEADY_S:-60}
ERR=$(mktemp)
ticks=$(getconf CLK_TCK)
cpu_ticks() { awk '{print $14 + $15}' /proc/$1/stat; }
rss_kb() { awk '/^VmRSS/ {print $2}' /proc/$1/status; }
hwm_kb() { awk '/^VmHWM/ {print $2}' /proc/$1/status; }
wl_ms() { # the workload's wall time in ms
	s=$(date +%s%N); "$B/workloads/syscalls" --getppid 1000000 --writes 0 --fails 0 >/dev/null
	echo $(( ($(date +%s%N) - s) / 1000000 )); }

untraced=$(wl_ms)
"$B/bin/kperf-bpf" agent --listen 127.0.0.1:0 --profile-hz 19 2>"$ERR" &
A=$!
while ! grep -q 'listening on' "$ERR"; do sleep 0.1; done
PORT=$(sed -n 's/.*listening on .*:\([0-9]*\)$/\1/p' "$ERR")
sleep 1
echo "agent RSS at start:          $(rss_kb $A) kB"
c0=$(cpu_ticks $A); i=0
while [ $i -lt "$STEADY_S" ]; do curl -s -o /dev/null "127.0.0.1:$PORT/metrics"; sleep 1; i=$((i + 1)); done
c1=$(cpu_ticks $A)
echo "agent RSS steady:            $(rss_kb $A) kB (peak $(hwm_kb $A) kB) after $STEADY_S scrapes"
echo "agent CPU, idle + scrapes:   $(echo "scale=3; 100 * ($c1 - $c0) / $ticks / $STEADY_S" | bc)% of one core"
c0=$(cpu_ticks $A); t0=$(date +%s)
while [ $(( $(date +%s) - t0 )) -lt 30 ]; do
	curl -s -o /dev/null "127.0.0.1:$PORT/debug/pprof/profile?seconds=10"; done
c1=$(cpu_ticks $A); dt=$(( $(date +%s) - t0 ))
echo "agent CPU, profiles at 19 Hz: $(echo "scale=3; 100 * ($c1 - $c0) / $ticks / $dt" | bc)% of one core (profiles pulled back to back, $dt s)"
traced=$(wl_ms)
echo "syscall workload (1000000 getppid): untraced $untraced ms, under the agent $traced ms, ratio $(echo "scale=2; $traced / $untraced" | bc)"
echo "agent RSS at the end:        $(rss_kb $A) kB (peak $(hwm_kb $A) kB)"
s=$(date +%s%N); kill -TERM $A; wait $A; rc=$?
echo "SIGTERM to exit:             $(( ($(date +%s%N) - s) / 1000000 )) ms, status $rc"
rm -f "$ERR"
