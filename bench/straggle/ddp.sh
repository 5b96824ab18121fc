#!/bin/bash
# bench/straggle/ddp.sh BUILD [RANKS] [FACTOR] [RUNS] [BALANCED_SECS] -- how
# fast the lock-step watch names a straggler in real gloo DDP (Debian's
# torch): RANKS local ranks (default 8) of tests/sh/ddp-straggle.py, the
# last rank doing FACTOR times the others' compute (default 1.2), RUNS times
# (default 3), each with --on-straggler stop; the time counts from the
# ranks' first step (rank 0's "import ... calibrated" line: torch's import
# is not the watch's) to dtrun's straggler line. Then one balanced job of
# BALANCED_SECS (default 120) of steps: how many ranks were named (0 is
# right; 0: none). Prints a line per run and per balanced job:
#   "ddp 8 ranks, rank 7 1.2x compute: named rank 7 after 41.2 s (it is computing (CPU 31%))"
# Numbers are this machine's, at this moment: on a host with fewer cores
# than ranks, the slow rank takes CPU from the waiting ones, and the gap
# the watch sees shrinks (doc/stragglers.md).
set -eu
PY=/usr/bin/python3
"$PY" -c 'import torch.distributed' 2>/dev/null || { echo "bench-straggle ddp: skipped: no python3-torch"; exit 0; }
B=$(cd "${1:-build}" && pwd)
N=${2:-8}
F=${3:-1.2}
RUNS=${4:-3}
BAL=${5:-120}
SRC=$(cd "$(dirname "$0")/../.." && pwd)
SLOW=$((N - 1))
# run SECS ARGS... -- one job; prints "T_FIRST_STEP T_NAMED LINE" (epoch s).
run() {
	local secs=$1 t0="" l
	shift
	timeout -s INT "$secs" "$B/dtrun" -n "$N" --store rank0 "$@" 2>&1 |
	while IFS= read -r l; do
		case $l in
		*"] import "*" calibrated "*) t0=$EPOCHREALTIME ;;
		"dtrun: straggler: "*) echo "${t0:-0} $EPOCHREALTIME ${l#dtrun: straggler: }" ;;
		esac
	done
}
for i in $(seq "$RUNS"); do
	out=$(run 600 --on-straggler stop "$PY" "$SRC/tests/sh/ddp-straggle.py" \
	    --mode compute --slow-rank "$SLOW" --factor "$F")
	if [ -z "$out" ]; then
		echo "ddp $N ranks, rank $SLOW ${F}x compute: nobody named in 600 s"
		continue
	fi
	echo "$out" | head -1 | awk -v n="$N" -v s="$SLOW" -v f="$F" '{
		line = $0; sub(/^[^ ]+ [^ ]+ /, "", line)
		printf "ddp %d ranks, rank %d %sx compute: named after %.1f s: %s\n", n, s, f, $2 - $1, line }'
done
[ "$BAL" -gt 0 ] || exit 0
out=$(run "$BAL" "$PY" "$SRC/tests/sh/ddp-straggle.py" --mode balanced)
echo "ddp $N ranks balanced, ${BAL} s: $(printf '%s' "$out" | grep -c . || true) named${out:+: $out}"
