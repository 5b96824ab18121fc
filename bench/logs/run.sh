#!/bin/bash
# run.sh BUILD [RUNS [RUNS64]] -- the log path against its floor, and what
# each per-line feature costs it, each group in one hyperfine run: R ranks
# x 250,000 lines of 80 bytes, each command's output into "| cat >/dev/null":
#   floor        R processes writing the same lines straight into one pipe
#   floor 1M pipe  the same with the pipe grown to 1 MiB, as dtrun grows the
#                pipes it writes to: what the bigger pipe alone is worth
#   local        dtrun -n R linegen 250000 (with its "[R] " prefixes), every
#                default on: the straggler watch looks at every rank's lines
#   watch off    the same with --straggler-threshold 0
#   collapse     the same with --collapse (off into a pipe; on by default only
#                on a terminal with 8 or more ranks)
#   stderr       the lines on stderr, dtrun's stderr into the pipe
#   stderr tail  the same with --max-restarts 1: each rank's stderr tail is
#                kept for the crash signature of a failure (off by default)
#   ssh          the same over ssh on loopback: one host, 127.0.0.1:4, served by
#                a private sshd, logged in as DTBENCH_USER (default dtbench, a
#                /bin/sh user: bench/lib/sshd-user.sh; needs root);
#                "ssh true" is its launch alone
#   mpirun       mpirun --tag-output -np 4 linegen 250000
#   noise        floor and ssh again with LINEGEN_NOISE: the lines' text is random
#                hex, which the agents' LZ4 packing cannot shrink (its worst case)
# R = 4 (every row, RUNS runs, default 10), then R = 64 (floor, local and
# watch off, RUNS64 runs, default 3). Prints each mean, its ratio to the
# floor, the CPU time of the whole pipeline, the wall and CPU ratios to the
# row it is compared with, then each goal, met or MISSED on each:
# every per-line feature on within 1.05x of it off, local within 1.3x of
# the floor (issue 35), ssh within 1.5x.
# First checks that dtrun's output is whole (with and without --collapse):
# every line there, prefixed, each rank's in order;
# over ssh it also says how many bytes the stream carried for the frames.
# Numbers are this machine's, at this moment: compare ratios, not absolutes.
# LINES=N changes the lines a rank writes.
set -eu
B=$(cd "${1:-build}" && pwd)
RUNS=${2:-10}
RUNS64=${3:-3}
here=$(cd "$(dirname "$0")" && pwd)
for t in hyperfine python3 cc; do
	command -v "$t" >/dev/null || { echo "bench-logs: skipped: no $t"; exit 0; }
done
. "$here/../lib/sshd-user.sh"
W=$(mktemp -d /tmp/dtrun-bench-logs.XXXXXX)
unset SSH_AUTH_SOCK
cleanup() {
	bench_sshd_stop "$W"
	rm -rf "$W"
}
trap cleanup EXIT
for p in spawnfloor linegen; do
	cc -O2 -o "$W/$p" "$here/../local/$p.c"
done
cc -O2 -o "$W/bigpipe" "$here/bigpipe.c"
N=${LINES:-250000}	# lines a rank
total=$((4 * N))

# whole WHAT CMD... -- checks that CMD's output has every line, prefixed,
# each rank's in the order it wrote them.
whole() {
	what=$1
	shift
	"$@" -vv "$W/linegen" $N >"$W/out" 2>"$W/err"
	lost=$((total - $(wc -l <"$W/out")))
	bad=$(grep -cvE '^\[[0-3]\] [0-9]{4} [0-9]{9} ' "$W/out" || true)
	bad=$((bad + $(awk '{ n = $3 + 0; if (n != next_[$1] + 0) b++
	    next_[$1] = n + 1 } END { print b + 0 }' "$W/out")))
	# "HOST: done; its frames, F bytes so far, came in S bytes"
	carried=$(sed -n 's/.*its frames, \([0-9]*\) bytes so far, came in \([0-9]*\) bytes.*/\2 of \1/p' "$W/err" |
	    awk '{ printf "; the stream carried %.1f MB for %.1f MB of frames", $1 / 1e6, $3 / 1e6 }')
	echo "$what: lost $lost, mangled $bad$carried"
	[ "$lost" = 0 ] && [ "$bad" = 0 ]
}

# row NAME VS CMD -- a command of the next hyperfine, compared with row VS.
rows=() cmds=()
row() {
	rows+=("$1:$2")
	cmds+=("$3")
}

# bench TITLE RUNS GOAL... -- runs the rows in one hyperfine and prints
# them; a GOAL "NAME:VS:MAX" is met when NAME's mean is at most MAX x VS's.
bench() {
	local title=$1 runs=$2
	shift 2
	echo "== $title: $runs runs, one hyperfine"
	hyperfine -w 1 -r "$runs" --export-json "$W/h.json" "${cmds[@]}" \
	    >/dev/null 2>&1
	python3 - "$W/h.json" "${rows[*]/%/|}" "$@" <<'EOP'
import json, sys
res = json.load(open(sys.argv[1]))["results"]
rows = [r.strip().rsplit(":", 1) for r in sys.argv[2].split("|") if r.strip()]
goals = [g.rsplit(":", 2) for g in sys.argv[3:]]
mean, cpu = {}, {}
floor = res[0]["mean"]
print("%-18s %9s %9s %7s %9s   %s" % ("", "mean_ms", "stddev", "/floor",
    "cpu_ms", "/vs (wall, cpu)"))
for (name, vs), r in zip(rows, res):
	mean[name] = r["mean"]
	cpu[name] = r["user"] + r["system"]
	rel = ("%5.2f %5.2f  (/ %s)" % (r["mean"] / mean[vs], cpu[name] / cpu[vs],
	    vs)) if vs in mean else ""
	print("%-18s %9.1f %9.1f %7.2f %9.1f   %s" % (name, r["mean"] * 1000,
	    (r["stddev"] or 0) * 1000, r["mean"] / floor, cpu[name] * 1000, rel))
if "ssh true" in mean:
	d = mean["ssh"] - mean["ssh true"]
	print("%-18s %9.1f %9s %7.2f" % ("ssh less launch", d * 1000, "", d / floor))
	d = mean["ssh noise"] - mean["ssh true"]
	print("%-18s %9.1f %9s %7.2f   (/ floor noise)" % ("noise less launch",
	    d * 1000, "", d / mean["floor noise"]))
# Wall time is what a user waits; on a shared machine the CPU time of the
# whole pipeline (every process's user + system) is the steadier figure.
# Over ssh the ranks and the agent run under sshd: their CPU is not counted.
for name, vs, most in goals:
	if name not in mean:
		continue
	w, c = mean[name] / mean[vs], cpu[name] / cpu[vs]
	v = lambda x: "met" if x <= float(most) else "MISSED"
	print("goal: %s <= %sx %s: wall %.2f %s, cpu %.2f %s" % (name, most, vs,
	    w, v(w), c, v(c)))
EOP
	rows=() cmds=()
}

L="$W/linegen $N | cat >/dev/null"
row floor - "$W/spawnfloor 4 $L"
row "floor 1M pipe" floor "$W/bigpipe $W/spawnfloor 4 $L"
row local floor "$B/dtrun -n 4 $L"
row "watch off" floor "$B/dtrun -n 4 --straggler-threshold 0 $L"
row collapse local "$B/dtrun -n 4 --collapse $L"
E="$W/linegen $N 2>&1 >/dev/null | cat >/dev/null"
row stderr floor "LINEGEN_STDERR=1 $B/dtrun -n 4 $E"
row "stderr tail" stderr "LINEGEN_STDERR=1 $B/dtrun -n 4 --max-restarts 1 $E"
whole local "$B/dtrun" -n 4
whole collapse "$B/dtrun" -n 4 --collapse
if why=$(bench_user_skip_reason); then
	echo "ssh: skipped: $why"
else
	bench_user_make
	bench_sshd_start "$W" 1 || { echo "bench-logs: could not start sshd" >&2; exit 1; }
	# The agent is uploaded there, by the user.
	install -d -o "$U" "$W/agents"
	SSH="$B/dtrun --launcher ssh -p $PORT -i $KEY --ssh-option User=$U"
	SSH="$SSH --ssh-option UserKnownHostsFile=$KH --ssh-agent-dir $W/agents"
	SSH="$SSH -H 127.0.0.1:4"
	whole ssh $SSH
	# Over ssh only -x carries a variable to the ranks.
	LINEGEN_NOISE=1 whole "ssh noise" $SSH -x LINEGEN_NOISE
	row ssh floor "$SSH $L"
	row "ssh true" - "$SSH true"
	row "floor noise" floor "LINEGEN_NOISE=1 $W/spawnfloor 4 $L"
	row "ssh noise" "floor noise" "LINEGEN_NOISE=1 $SSH -x LINEGEN_NOISE $L"
fi
if command -v mpirun >/dev/null; then
	row mpirun floor "mpirun --allow-run-as-root --oversubscribe --bind-to none --tag-output -np 4 $L"
fi
bench "4 ranks x $N lines" "$RUNS" "local:watch off:1.05" "local:floor:1.3" \
    "collapse:local:1.05" "stderr tail:stderr:1.05" "ssh:floor:1.5"

row floor - "$W/spawnfloor 64 $L"
row local floor "$B/dtrun -n 64 --oversubscribe $L"
row "watch off" floor "$B/dtrun -n 64 --oversubscribe --straggler-threshold 0 $L"
bench "64 ranks x $N lines" "$RUNS64" "local:watch off:1.05" "local:floor:1.3"
