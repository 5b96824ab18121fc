#!/bin/bash
# run.sh BUILDDIR -- the ssh launcher's wake-ups under stress: RUNS runs of
# "dtrun -H <NHOSTS loopback hosts> true" with heartbeats off, so that a
# wake-up the launcher misses shows as a stall (no heartbeat ends it) or a
# hang, never hidden. Each run is bounded by BOUND seconds (then it counts as
# a hang and is stopped); a run more than STALL_MS over the median of the
# AROUND runs about it (itself in the middle) is a stall: judged against
# this machine's own pace at that moment, so a slow machine (sshd-bound:
# 64 loopback logins can take 5 s) reads as slow, and one that slows for a
# while (other jobs: every run of a stretch 1.5 s slower) as slowing, not as
# stalls. Reports the distribution of the run times, the cost of a host
# (the median over NHOSTS) and the counts; exits 1 if any run stalled, hung
# or failed.
#   NHOSTS (64)  RUNS (200)  BOUND (20)  STALL_MS (1000)  AROUND (5)
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
AROUND=${AROUND:-5}

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

echo "== ssh stress: $RUNS runs of true on $NHOSTS hosts, heartbeats off (bound ${BOUND} s, stall: > the median of the $AROUND runs about it + ${STALL_MS} ms)"
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
	fi
done
rm -rf "$UHOME/.cache/dtrun"
# Exits 1 when a run stalled, hung or failed.
python3 - "$W/times" "$STALL_MS" "$NHOSTS" "$AROUND" <<'PYEOF'
import statistics, sys
rows = [tuple(map(int, l.split())) for l in open(sys.argv[1])]
stall, nhosts, around = int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
ok = sorted(ms for ms, rc in rows if rc == 0)
med = statistics.median(ok) if ok else 0
hangs = sum(1 for ms, rc in rows if rc in (124, 137))
fails = sum(1 for ms, rc in rows if rc != 0) - hangs
stalls = 0
# The median of the ok runs among the around runs about i (shifted at the ends).
def local(i):
    lo = max(0, min(i - around // 2, len(rows) - around))
    near = [m for m, rc in rows[lo:lo + around] if rc == 0]
    return statistics.median(near)
for i, (ms, rc) in enumerate(rows):
    if rc == 0 and ms > local(i) + stall:
        stalls += 1
        print("run %d: stalled: %d ms, %d ms over the median about it"
              % (i + 1, ms, ms - local(i)))
def pct(p):
    return ok[min(len(ok) - 1, int(p * len(ok)))] if ok else 0
print("runs=%d ok=%d median_ms=%d p90_ms=%d p99_ms=%d max_ms=%d max-median_ms=%d"
      % (len(rows), len(ok), med, pct(0.90), pct(0.99), ok[-1] if ok else 0,
         ok[-1] - med if ok else 0))
print("a host: %.1f ms (the median over %d hosts)" % (med / nhosts, nhosts))
print("stalls=%d hangs=%d failed=%d" % (stalls, hangs, fails))
sys.exit(1 if stalls or hangs or fails else 0)
PYEOF
