#!/bin/bash
# bench/restart/run.sh BUILD [RUNS] -- --max-restarts: time from a rank's
# failure (its last act before exit) to every rank of the next attempt
# running (each one's first act), with --restart-delay 0, for 16 local
# ranks and for 3 loopback ssh hosts (2 ranks each; a private sshd on
# 127.0.0.1-3, tests/sh/sshd.sh). Goal: at most 100 ms plus the delay.
# Prints the median and the worst of RUNS (default 5) for each:
#   "restart, 16 local ranks: median 41 ms, max 55 ms (5 runs)"
# Numbers are this machine's, at this moment.
set -eu
B=$(cd "${1:-build}" && pwd)
RUNS=${2:-5}
# The test library gives the private sshd (and a scratch dir it cleans).
DTRUN_BUILD=$B
. "$(dirname "$0")/../../tests/sh/lib.sh"
. "$(dirname "$0")/../../tests/sh/sshd.sh"
set +u

# Attempt 0: once all N ranks run, rank 0 notes the time and fails; the
# others sleep until stopped. Attempt 1: each rank notes when it runs.
cat >"$TRASH/rank.sh" <<'EOS'
#!/bin/sh
if [ "$DTRUN_RESTART_COUNT" = 0 ]; then
	: >"$W/up.$RANK"
	[ "$RANK" = 0 ] || exec sleep 300
	while [ "$(ls "$W" | grep -c '^up\.')" -lt "$WORLD_SIZE" ]; do sleep 0.01; done
	date +%s%N >"$W/fail"
	exit 3
fi
date +%s%N >"$W/run.$RANK"
EOS
chmod +x "$TRASH/rank.sh"

# one KIND ARGS... -- one job; prints the failure-to-running time in ms.
one() {
	W=$TRASH/w.$1
	rm -rf "$W"
	mkdir -p "$W"
	shift
	W=$W timeout 120 "$B/dtrun" "$@" --max-restarts 1 --restart-delay 0 \
	    -x W "$TRASH/rank.sh" >/dev/null 2>"$W.err" || { cat "$W.err" >&2; return 1; }
	last=$(cat "$W"/run.* | sort -n | tail -1)
	echo $(( (last - $(cat "$W/fail")) / 1000000 ))
}

# report WHAT KIND ARGS... -- RUNS jobs, then the median and the worst.
report() {
	what=$1
	shift
	: >"$TRASH/ms"
	for i in $(seq 1 "$RUNS"); do one "$@" >>"$TRASH/ms"; done
	sort -n "$TRASH/ms" >"$TRASH/ms.s"
	echo "restart, $what: median $(sed -n "$(( (RUNS + 1) / 2 ))p" "$TRASH/ms.s") ms, max $(tail -1 "$TRASH/ms.s") ms ($RUNS runs)"
}

report "16 local ranks" local -n 16
if why=$(sshd_skip_reason); then
	echo "restart, 3 ssh hosts: skipped: $why"
else
	sshd_start >/dev/null || { echo "bench-restart: could not start sshd" >&2; exit 1; }
	dtrun "${SSH_ARGS[@]}" --ssh-agent-dir "$TRASH/agents" -H 127.0.0.1 true 2>/dev/null
	report "3 ssh hosts, 6 ranks" ssh "${SSH_ARGS[@]}" --ssh-agent-dir "$TRASH/agents" -H 127.0.0.1:2,127.0.0.2:2,127.0.0.3:2
fi
