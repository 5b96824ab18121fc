#!/bin/sh
# run.sh BUILDDIR -- what heartbeats cost an idle job: 1,000 local ranks of
# sleep, then dtrun's and its agent's CPU (utime + stime from /proc/PID/stat)
# over IDLE seconds (default 20), as percent of one core; once with the
# default --heartbeat-timeout, once with 0 (off), and their difference.
# Numbers are this machine's, at this moment.
set -eu
B=$(cd "${1:-build}" && pwd)
N=${N:-1000}
IDLE=${IDLE:-20}
W=$(mktemp -d /tmp/dtrun-bench.XXXXXX)
d=""
trap '[ -n "$d" ] && kill "$d" 2>/dev/null; rm -rf "$W"' EXIT
HZ=$(getconf CLK_TCK)

# ticks PID... -- utime + stime of the PIDs, in clock ticks.
ticks() {
	for p in "$@"; do
		sed 's/^.*) //' "/proc/$p/stat" | awk '{ print $12 + $13 }'
	done | awk '{ t += $1 } END { print t + 0 }'
}

# children PID -- the PIDs of PID's children.
children() { cat /proc/"$1"/task/*/children 2>/dev/null; }

# idle_cpu HB -- runs the job with --heartbeat-timeout HB; prints
# "dtrun% agents%".
idle_cpu() {
	(cd "$W" && exec "$B/dtrun" -q -n "$N" --heartbeat-timeout "$1" \
	    sleep 100000 >/dev/null 2>&1) &
	d=$!
	# dtrun -> keeper -> agent -> N ranks.
	i=0 keeper="" agent="" nr=0
	while [ "$nr" -lt "$N" ]; do
		i=$((i + 1))
		[ $i -lt 1200 ] || { echo "ranks did not start" >&2; exit 1; }
		sleep 0.1
		keeper=$(children "$d" | awk '{ print $1 }')
		[ -n "$keeper" ] || continue
		agent=$(children "$keeper" | awk '{ print $1 }')
		[ -n "$agent" ] || continue
		nr=$(children "$agent" | wc -w)
	done
	sleep 2		# let the start settle
	t0=$(ticks "$d") a0=$(ticks "$keeper" "$agent")
	sleep "$IDLE"
	t1=$(ticks "$d") a1=$(ticks "$keeper" "$agent")
	kill "$d"
	wait "$d" 2>/dev/null || true
	d=""
	awk -v a="$((t1 - t0))" -v b="$((a1 - a0))" -v hz="$HZ" -v s="$IDLE" \
	    'BEGIN { printf "%.3f %.3f\n", 100 * a / hz / s, 100 * b / hz / s }'
}

on=$(idle_cpu 15)
off=$(idle_cpu 0)
echo "idle CPU with $N local ranks over $IDLE s, percent of one core" \
    "(resolution: one clock tick, $(awk -v hz="$HZ" -v s="$IDLE" 'BEGIN { printf "%.3f%%", 100 / hz / s }')):"
echo "$on" | awk '{ printf "  heartbeat 15 s (default)  dtrun %6.3f%%  agent %6.3f%%\n", $1, $2 }'
echo "$off" | awk '{ printf "  heartbeat off (0)         dtrun %6.3f%%  agent %6.3f%%\n", $1, $2 }'
echo "$on $off" | awk '{ printf "  heartbeat cost            dtrun %+6.3f%%  agent %+6.3f%%  (goal: < 1%% of a core)\n", $1 - $3, $2 - $4 }'
