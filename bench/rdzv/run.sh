#!/bin/sh
# run.sh BUILD [N] [TORCH_N] -- the rendezvous benchmark: dtrun's server
# (rdzv-serve) with N and TORCH_N workers from rdzv-load, then PyTorch's
# TCPStore with TORCH_N clients, and the ratio at TORCH_N. Not a test:
# timings depend on the machine and whatever else runs on it.
set -u
B=${1:-build}
N=${2:-16384}
TN=${3:-4096}
PROCS=${RDZV_PROCS:-4}
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# dtrun_run N [rdzv-load options] -- prints the seconds, or fails.
dtrun_run() {
	n=$1
	shift
	rm -f "$tmp/env"
	"$B/helpers/rdzv-serve" -n "$n" -t 120 -o "$tmp/env" 2>"$tmp/serve.err" &
	sp=$!
	i=0
	while [ ! -f "$tmp/env" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
	(set -a; . "$tmp/env"; "$B/bench/rdzv-load" -n "$n" -p "$PROCS" "$@") >"$tmp/load.out"
	rc=$?
	wait $sp || rc=1
	cat "$tmp/load.out" >&2
	cat "$tmp/serve.err" >&2
	[ $rc -eq 0 ] || return 1
	sed -n 's/.* ranks in \([0-9.]*\) s (0 failed).*/\1/p' "$tmp/load.out"
}

echo "== dtrun rendezvous, $N ranks ($(nproc) cores, $PROCS load processes)"
big=$(dtrun_run "$N") || { echo "bench-rdzv: dtrun run failed"; exit 1; }
echo "== dtrun rendezvous, $TN ranks"
small=$(dtrun_run "$TN") || { echo "bench-rdzv: dtrun run failed"; exit 1; }
echo "== dtrun rendezvous, $TN ranks, one handshake at a time per process"
seq1=$(dtrun_run "$TN" -c 1) || { echo "bench-rdzv: dtrun run failed"; exit 1; }

echo "== PyTorch TCPStore, $TN clients (/usr/bin/python3)"
if ! /usr/bin/python3 -c 'import torch.distributed' 2>/dev/null; then
	echo "bench-rdzv: skipped TCPStore: /usr/bin/python3 has no torch"
	exit 0
fi
/usr/bin/python3 "$here/tcpstore.py" "$TN" 8 >"$tmp/torch.out" || {
	cat "$tmp/torch.out"; echo "bench-rdzv: TCPStore run failed"; exit 1; }
cat "$tmp/torch.out"
torch=$(sed -n 's/.* clients in \([0-9.]*\) s (0 failed).*/\1/p' "$tmp/torch.out")

echo "== summary"
awk -v n="$N" -v big="$big" -v tn="$TN" -v small="$small" -v seq1="$seq1" \
    -v torch="$torch" 'BEGIN {
	printf "dtrun  %6d ranks: %.3f s (goal <= 2 s: %s)\n", n, big, (big <= 2 ? "met" : "MISSED")
	printf "dtrun  %6d ranks: %.3f s\n", tn, small
	printf "dtrun  %6d ranks: %.3f s, one handshake in flight per process\n", tn, seq1
	printf "torch  %6d ranks: %.3f s (TCPStore)\n", tn, torch
	printf "ratio at %d: %.1fx (goal >= 10x: %s); %.1fx with one handshake in flight\n",
	    tn, torch / small, (torch / small >= 10 ? "met" : "MISSED"), torch / seq1
}'
