#!/bin/bash
# run.sh BUILD [RUNS] -- the log path against its floor, in one hyperfine
# run: 4 ranks x 250,000 lines of 80 bytes, each command's output into
# "| cat >/dev/null":
#   floor    4 processes writing the same lines straight into one pipe
#   local    dtrun -n 4 linegen 250000 (with its "[R] " prefixes)
#   ssh      the same over ssh on loopback: one host, 127.0.0.1:4, served by
#            a private sshd, logged in as DTBENCH_USER (default dtbench, a
#            /bin/sh user: bench/lib/sshd-user.sh; needs root);
#            "ssh true" is its launch alone
#   mpirun   mpirun --tag-output -np 4 linegen 250000
#   noise    floor and ssh again with LINEGEN_NOISE: the lines' text is random
#            hex, which the agents' LZ4 packing cannot shrink (its worst case)
# Prints each mean and its ratio to the floor (goal: local and ssh <= 1.5),
# and the ssh run less its launch (ssh's login and the agent's start).
# First checks that dtrun's output is whole: every line there, prefixed;
# over ssh it also says how many bytes the stream carried for the frames.
# Numbers are this machine's, at this moment: compare ratios, not absolutes.
set -eu
B=$(cd "${1:-build}" && pwd)
RUNS=${2:-10}
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
N=250000
total=$((4 * N))

# whole WHAT CMD... -- checks that CMD's output has every line, prefixed.
whole() {
	what=$1
	shift
	"$@" -vv "$W/linegen" $N >"$W/out" 2>"$W/err"
	lost=$((total - $(wc -l <"$W/out")))
	bad=$(grep -cvE '^\[[0-3]\] [0-9]{4} [0-9]{9} ' "$W/out" || true)
	# "HOST: done; its frames, F bytes so far, came in S bytes"
	carried=$(sed -n 's/.*its frames, \([0-9]*\) bytes so far, came in \([0-9]*\) bytes.*/\2 of \1/p' "$W/err" |
	    awk '{ printf "; the stream carried %.1f MB for %.1f MB of frames", $1 / 1e6, $3 / 1e6 }')
	echo "$what: lost $lost, mangled $bad$carried"
	[ "$lost" = 0 ] && [ "$bad" = 0 ]
}

names=(floor local)
cmds=("$W/spawnfloor 4 $W/linegen $N | cat >/dev/null"
    "$B/dtrun -n 4 $W/linegen $N | cat >/dev/null")
whole local "$B/dtrun" -n 4
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
	names+=(ssh "ssh true" "floor noise" "ssh noise")
	cmds+=("$SSH $W/linegen $N | cat >/dev/null" "$SSH true"
	    "LINEGEN_NOISE=1 $W/spawnfloor 4 $W/linegen $N | cat >/dev/null"
	    "LINEGEN_NOISE=1 $SSH -x LINEGEN_NOISE $W/linegen $N | cat >/dev/null")
fi
if command -v mpirun >/dev/null; then
	names+=(mpirun)
	cmds+=("mpirun --allow-run-as-root --oversubscribe --bind-to none --tag-output -np 4 $W/linegen $N | cat >/dev/null")
fi

hyperfine -w 1 -r "$RUNS" --export-json "$W/h.json" "${cmds[@]}" >/dev/null 2>&1
python3 - "$W/h.json" "${names[@]}" <<'EOP'
import json, sys
res = json.load(open(sys.argv[1]))["results"]
names = sys.argv[2:]
floor = res[0]["mean"]
mean = {}
print("%-16s %9s %9s %9s" % ("", "mean_ms", "stddev", "/floor"))
for name, r in zip(names, res):
	mean[name] = r["mean"]
	print("%-16s %9.1f %9.1f %9.2f" % (name, r["mean"] * 1000,
	    r["stddev"] * 1000, r["mean"] / floor))
if "ssh" in mean:
	d = mean["ssh"] - mean["ssh true"]
	print("%-16s %9.1f %9s %9.2f" % ("ssh less launch", d * 1000, "", d / floor))
	d = mean["ssh noise"] - mean["ssh true"]
	print("%-16s %9.1f %9s %9.2f  (/ floor noise)" % ("noise less launch",
	    d * 1000, "", d / mean["floor noise"]))
EOP
