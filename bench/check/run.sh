#!/bin/bash
# bench/check/run.sh BUILD [--hosts "4 16 64"] [--runs N] -- the cost of
# dtrun --check --deep over N simulated hosts (the local launcher with a
# hostfile of N names starts one real agent per name, each on its own link),
# against the floor of the same check without --deep, in one hyperfine run
# per size: --deep with 1 MiB per pair (what the rounds themselves cost:
# the CHECK round trips, connects and the 16 round trips of each pair) and
# with the default 64 MiB per pair (loopback moves the bytes: on one machine
# that is its CPU, not a network). Prints one line per size:
#   "check --deep, 16 hosts: plain 61 ms, deep(1M) 95 ms (1.56x), deep(64M) 1210 ms (19.8x), 8 rounds"
# Numbers are this machine's, at this moment: compare the ratios.
set -eu
B=$(cd "${1:-build}" && pwd)
shift || true
HOSTS="4 16 64" RUNS=5
while [ $# -gt 0 ]; do
	case $1 in
	--hosts) HOSTS=$2; shift ;;
	--runs) RUNS=$2; shift ;;
	*) echo "usage: run.sh BUILD [--hosts LIST] [--runs N]" >&2; exit 2 ;;
	esac
	shift
done
for t in hyperfine python3; do
	command -v "$t" >/dev/null || { echo "bench-check: skipped: no $t"; exit 0; }
done
W=$(mktemp -d /tmp/dtrun-bench-check.XXXXXX)
trap 'rm -rf "$W"' EXIT
# mean NAME -- the mean of hyperfine's run NAME, in ms.
mean() {
	python3 -c "import json, sys
for r in json.load(open(sys.argv[1]))['results']:
    if r['command'] == sys.argv[2]: print('%.0f' % (r['mean'] * 1000))" "$W/h.json" "$1"
}
ratio() { python3 -c "import sys; print('%.2f' % (float(sys.argv[1]) / float(sys.argv[2])))" "$1" "$2"; }
for n in $HOSTS; do
	seq -f 'h%g' 1 "$n" >"$W/hosts"
	d="$B/dtrun -q --launcher local -H $W/hosts --check"
	# The rounds it ran, from the summary line.
	rounds=$($d --deep --deep-bytes 1M | sed -n 's/^deep: [0-9]* pairs in \([0-9]*\) rounds.*/\1/p')
	hyperfine -N -w 1 -r "$RUNS" --export-json "$W/h.json" \
	    -n plain "$d" -n deep1M "$d --deep --deep-bytes 1M" \
	    -n deep64M "$d --deep" >/dev/null 2>&1
	p=$(mean plain) a=$(mean deep1M) b=$(mean deep64M)
	echo "check --deep, $n hosts: plain $p ms, deep(1M) $a ms ($(ratio "$a" "$p")x), deep(64M) $b ms ($(ratio "$b" "$p")x), $rounds rounds"
done
