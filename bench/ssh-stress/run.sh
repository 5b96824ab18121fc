#!/bin/bash
# run.sh BUILDDIR -- the ssh launcher's wake-ups under stress: RUNS runs of
# "dtrun -H <NHOSTS loopback hosts> true" with heartbeats off, so that a
# wake-up the launcher misses shows as a stall (no heartbeat ends it) or a
# hang, never hidden. Each run is bounded by BOUND seconds (then it counts as
# a hang and is stopped); a run over STALL_MS is a stall. Reports the
# distribution of the run times and the counts; exits 1 if any run stalled,
# hung or failed.
#   NHOSTS (64)  RUNS (200)  BOUND (20)  STALL_MS (1000)
# Hosts are 127.0.0.1..NHOSTS, served by private sshds (one per 16
# addresses) that let in the /bin/sh user of bench/lib/sshd-user.sh.
set -eu
B=$(cd "${1:-build}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib/sshd-user.sh"
NHOSTS=${NHOSTS:-64}
RUNS=${RUNS:-200}
BOUND=${BOUND:-20}
STALL_MS=${STALL_MS:-1000}

for t in python3 timeout; do
	command -v "$t" >/dev/null || { echo "bench-ssh-stress: skipped: no $t"; exit 0; }
done
if why=$(bench_user_skip_reason); then
	echo "bench-ssh-stress: skipped: $why"
	exit 0
fi
bench_user_make
W=$(mktemp -d /tmp/dtrun-bench-stress.XXXXXX)
unset SSH_AUTH_SOCK
cleanup() {
	bench_sshd_stop "$W"
	rm -rf "$W"
}
trap cleanup EXIT
bench_sshd_start "$W" "$NHOSTS"

HOSTS=$(seq -f "127.0.0.%g" 1 "$NHOSTS" | paste -sd, -)
DTRUN="$B/dtrun -q --launcher ssh -p $PORT -i $KEY --ssh-option User=$U
    --ssh-option UserKnownHostsFile=$KH --heartbeat-timeout 0"

# The first run uploads the agent to the user's cache; it is not counted.
$DTRUN -H "$HOSTS" true

echo "== ssh stress: $RUNS runs of true on $NHOSTS hosts, heartbeats off (bound ${BOUND} s, stall > ${STALL_MS} ms)"
: >"$W/times"
fails=0
for i in $(seq 1 "$RUNS"); do
	t0=$(date +%s%N)
	rc=0
	timeout -k 5 "$BOUND" $DTRUN -H "$HOSTS" true 2>"$W/err" || rc=$?
	t1=$(date +%s%N)
	ms=$(( (t1 - t0) / 1000000 ))
	echo "$ms $rc" >>"$W/times"
	if [ "$rc" -ne 0 ]; then
		[ "$rc" -eq 124 ] || [ "$rc" -eq 137 ] || fails=$((fails + 1))
		echo "run $i: exit $rc after $ms ms: $(head -c 300 "$W/err")"
	elif [ "$ms" -gt "$STALL_MS" ]; then
		echo "run $i: stalled: $ms ms"
	fi
done
python3 - "$W/times" "$STALL_MS" <<'PYEOF'
import statistics, sys
rows = [tuple(map(int, l.split())) for l in open(sys.argv[1])]
stall = int(sys.argv[2])
ok = sorted(ms for ms, rc in rows if rc == 0)
hangs = sum(1 for ms, rc in rows if rc in (124, 137))
stalls = sum(1 for ms in ok if ms > stall)
def pct(p):
    return ok[min(len(ok) - 1, int(p * len(ok)))] if ok else 0
print("runs=%d ok=%d median_ms=%d p90_ms=%d p99_ms=%d max_ms=%d stalls=%d hangs=%d"
      % (len(rows), len(ok), statistics.median(ok) if ok else 0, pct(0.90),
         pct(0.99), ok[-1] if ok else 0, stalls, hangs))
PYEOF
st=$(awk -v s="$STALL_MS" '$2 != 0 || $1 > s' "$W/times" | wc -l)
rm -rf "$UHOME/.cache/dtrun"
[ "$st" -eq 0 ]
