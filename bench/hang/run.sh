#!/bin/bash
# bench/hang/run.sh BUILD [RANKS [TOOL]] -- time from kill -QUIT to dtrun's
# merged stack report, for RANKS (default 64) local ranks asleep in a C
# function (tests/helpers/spin nap: they leave the cores to the capture).
# Goal: at most 2 s for 64 ranks. Prints one line: "stacks of N ranks: S s
# (tool)". Needs gdb or eu-stack; TOOL gdb times the gdb-only path (hosts
# without elfutils) with DTRUN_STACK_TOOL=gdb.
set -eu
B=$(cd "${1:-build}" && pwd)
N=${2:-64}
W=$(mktemp -d "${TMPDIR:-/tmp}/dtrun-bench-hang.XXXXXX")
trap 'rc=$?; kill $pid 2>/dev/null; wait $pid 2>/dev/null || :; rm -rf "$W"; exit $rc' EXIT
cd "$W"
tool=${3:-eu-stack}
command -v eu-stack >/dev/null || tool=gdb
command -v $tool >/dev/null || { echo "bench-hang: skipped: no gdb or eu-stack"; exit 0; }
# Made first: the loop below must never read a file not there yet.
: >out
: >err
timeout 300 env DTRUN_STACK_TOOL=$tool "$B/dtrun" -n "$N" "$B/helpers/spin" nap >out 2>err &
pid=$!
# Every rank is running once each has said so.
while [ "$(grep -c spinning out)" -lt "$N" ]; do
	kill -0 $pid 2>/dev/null || { cat err >&2; exit 1; }
	sleep 0.05
done
t0=$(date +%s.%N)
kill -QUIT $pid
while ! grep -q "^dtrun: full stacks of every rank:" err; do
	kill -0 $pid 2>/dev/null || { cat err >&2; exit 1; }
	sleep 0.01
done
t1=$(date +%s.%N)
grep -q "^dtrun:   ranks 0-$((N - 1)) ($N): .*nap_here <- main" err &&
    grep -q "^=== rank 0 on .* ($tool)" "$(sed -n "s/^dtrun: full stacks of every rank: //p" err)" ||
    { echo "bench-hang: unexpected report:" >&2; cat err >&2; exit 1; }
echo "stacks of $N ranks: $(echo "$t1 - $t0" | bc -l | sed 's/^\./0./' | cut -c1-5) s ($tool)"
