#!/bin/bash
# dump.sh BUILD [NP] [LINES] [SKEW_MS] [SEED] -- the log flood of a big job's
# start: NP ranks (default 256, --oversubscribe), each after a random sleep
# of up to SKEW_MS (default 2000; the same for a given SEED) printing a
# LINES-line config dump (default 2000; bench/logs/dump.c) that every rank
# shares but for three lines. Counts the terminal's lines without and with
# --collapse, prints the ratio (goal: 50x or more), and checks that nothing
# was lost: each rank's lines, taken back out of the collapsed terminal
# (a "[0-3,7] line" belongs to ranks 0-3 and 7), are what it printed, in
# order, and its --output-dir file is byte for byte the same.
set -eu
B=$(cd "${1:-build}" && pwd)
NP=${2:-256}
LINES=${3:-2000}
SKEW=${4:-2000}
SEED=${5:-1}
here=$(cd "$(dirname "$0")" && pwd)
command -v python3 >/dev/null || { echo "bench-logs-dump: skipped: no python3"; exit 0; }
W=$(mktemp -d /tmp/dtrun-bench-dump.XXXXXX)
trap '[ -n "${KEEP:-}" ] || rm -rf "$W"' EXIT
cc -O2 -o "$W/dump" "$here/dump.c"

# run NAME FLAGS... -- one job; prints its terminal line count and seconds.
run() {
	name=$1
	shift
	s=$(date +%s.%N)
	"$B/dtrun" -n "$NP" --oversubscribe "$@" "$W/dump" "$LINES" "$SKEW" "$SEED" \
	    >"$W/$name.out" 2>"$W/$name.err"
	e=$(date +%s.%N)
	echo "$(cat "$W/$name.out" "$W/$name.err" | wc -l) $(echo "$e - $s" | bc)"
}
set -- $(run plain)
plain=$1 tplain=$2
set -- $(run collapse --collapse --output-dir "$W/logs")
coll=$1 tcoll=$2

# Each rank's own output, then the check.
for r in $(seq 0 $((NP - 1))); do
	RANK=$r "$W/dump" "$LINES" 0 "$SEED" >"$W/want.$r"
done
python3 - "$W" "$NP" <<'EOP'
import re, sys
w, np = sys.argv[1], int(sys.argv[2])
got = [[] for _ in range(np)]
pre = re.compile(rb"^\[([0-9,-]+)\] ")
for line in open(w + "/collapse.out", "rb"):
    m = pre.match(line)
    if not m:
        sys.exit("collapse: a line without a rank prefix: %r" % line[:80])
    for part in m.group(1).split(b","):
        lo, _, hi = part.partition(b"-")
        for r in range(int(lo), int(hi or lo) + 1):
            got[r].append(line[m.end():])
bad = 0
for r in range(np):
    want = open("%s/want.%d" % (w, r), "rb").read()
    if b"".join(got[r]) != want:
        print("rank %d: its lines from the terminal differ from what it printed" % r)
        bad += 1
    if open("%s/logs/rank.%d/stdout" % (w, r), "rb").read() != want:
        print("rank %d: --output-dir file differs from what it printed" % r)
        bad += 1
if bad:
    sys.exit(1)
print("nothing lost: %d ranks' lines whole and in order on the terminal; files byte for byte" % np)
EOP
echo "ranks $NP, $LINES-line dump, up to $SKEW ms start skew (seed $SEED): terminal lines $plain without --collapse ($(printf %.1f "$tplain") s), $coll with ($(printf %.1f "$tcoll") s)"
python3 -c "r = $plain / $coll; print('reduction: %.1fx fewer lines (goal 50x): %s' % (r, 'met' if r >= 50 else 'MISSED'))"
