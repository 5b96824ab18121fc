#!/bin/bash
# bench/straggle/overhead.sh BUILD [RANKS] [SECS] -- what the straggler
# watch and dtrun top's usage reports cost: RANKS local ranks (default
# 100), each a steady loop printing a step line 10 times a second (and,
# with -c, reporting its step with dtcomm_step) for SECS seconds (default
# 30), run with the watch off (--straggler-threshold 0) and on (the
# default: every output byte hashed, paces judged every 2 s, the agent's
# PROGRESS each second with every rank's CPU and memory read from /proc).
# The CPU of dtrun and its agent (not the ranks': the schedstat of dtrun
# and of the dtrun-agent processes below it, read until each exits) is
# compared; prints
#   "straggler watch, 100 ranks, lines: off 412 ms, on 455 ms: +0.14% of a core (+0.14% per 100 ranks)"
# Numbers are this machine's, at this moment.
set -eu
for t in python3; do
	command -v "$t" >/dev/null || { echo "bench-straggle: skipped: no $t"; exit 0; }
done
B=$(cd "${1:-build}" && pwd)
N=${2:-100}
SECS=${3:-30}
STEPS=$((SECS * 10))
# cpu_ms PID... -- ms on a CPU of live processes (schedstat: ns, not the
# 10 ms ticks of /proc/PID/stat; each is one thread).
cpu_ms() {
	local p t=0 v
	for p in "$@"; do
		v=$(awk '{ print int($1 / 1000000) }' "/proc/$p/schedstat" 2>/dev/null) || v=0
		t=$((t + ${v:-0}))
	done
	echo "$t"
}
# agents PID -- the dtrun-agent processes below PID (its keeper and agent).
agents() {
	local c
	for c in $(pgrep -P "$1" dtrun-agent); do
		echo "$c"
		agents "$c"
	done
}
# one MODE ARGS... -- dtrun's and its agent's CPU ms for one job.
one() {
	local mode=$1 d a t0 t1
	shift
	"$B/dtrun" -q --oversubscribe -n "$N" "$@" "$B/helpers/stepper" \
	    $mode -p 0.1 -n "$STEPS" >/dev/null 2>&1 &
	d=$!
	sleep 1
	a=$(agents "$d")
	t0=0
	# Sample until the end: the last reading before each exits.
	while kill -0 "$d" 2>/dev/null; do
		t1=$(cpu_ms "$d" $a)
		[ "$t1" -gt "$t0" ] && t0=$t1
		sleep 0.5
	done
	wait "$d" || true
	echo "$t0"
}
for mode in "" -c; do
	off=$(one "$mode" --straggler-threshold 0)
	on=$(one "$mode")
	python3 - "$N" "$SECS" "$off" "$on" "${mode:+steps}" <<'EOP'
import sys
n, secs, off, on, kind = int(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5] or "lines"
pct = (on - off) / (secs * 1000.0) * 100
print("straggler watch, %d ranks, %s: off %d ms, on %d ms: %+.2f%% of a core (%+.2f%% per 100 ranks)"
      % (n, kind, off, on, pct, pct * 100 / n))
EOP
done
