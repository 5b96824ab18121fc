#!/bin/bash
# run.sh BUILDDIR -- the ssh launcher against pdsh and parallel-ssh, side by
# side, in one run, on loopback "hosts" 127.0.0.1..16 served by a private sshd:
#   launch      N hosts running true: dtrun vs pdsh -R ssh vs parallel-ssh (hyperfine)
#   fail-fast   the last host's rank exits 1, the others sleep: failing exit ->
#               dtrun's exit (goal: <= 50 ms on loopback)
# Every tool logs in as the same user with the same key, port and known_hosts:
# DTBENCH_USER (default dtbench, made if missing), whose login shell is /bin/sh
# (bench/lib/sshd-user.sh); root is needed to make it and log in as it.
# Numbers are this machine's, at this moment: compare ratios, not absolutes.
set -eu
B=$(cd "${1:-build}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib/sshd-user.sh"
RUNS=${RUNS:-10}
NHOSTS=16

for t in hyperfine python3 cc; do
	command -v "$t" >/dev/null || { echo "bench-ssh: skipped: no $t"; exit 0; }
done
if why=$(bench_user_skip_reason); then
	echo "bench-ssh: skipped: $why"
	exit 0
fi
bench_user_make
W=$(mktemp -d /tmp/dtrun-bench-ssh.XXXXXX)
unset SSH_AUTH_SOCK
cleanup() {
	bench_sshd_stop "$W"
	rm -rf "$W"
}
trap cleanup EXIT
bench_sshd_start "$W" $NHOSTS

hosts() { seq -f "127.0.0.%g" 1 "$1" | paste -sd, -; }
DTRUN="$B/dtrun -q --launcher ssh -p $PORT -i $KEY --ssh-option User=$U --ssh-option UserKnownHostsFile=$KH"
SSHOPTS="-F /dev/null -p $PORT -i $KEY -o UserKnownHostsFile=$KH -o StrictHostKeyChecking=yes -o BatchMode=yes"
export PDSH_SSH_ARGS_APPEND="$SSHOPTS"

mean() { python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['results'][0]['mean'])" "$1"; }
ratio() { python3 -c "import sys; print('%.2f' % (float(sys.argv[1])/float(sys.argv[2])))" "$1" "$2"; }
ms() { python3 -c "import sys; print('%.1f' % (float(sys.argv[1])*1000))" "$1"; }

# Each tool must work before it is timed (this also uploads dtrun's agent).
for n in 3 $NHOSTS; do
	$DTRUN -H "$(hosts $n)" true
	pdsh -R ssh -l "$U" -f 64 -w "$(hosts $n)" true
	parallel-ssh -H "$(hosts $n | tr , ' ')" -l "$U" -p 64 -x "$SSHOPTS" true >/dev/null
done

echo "== launch: true on N loopback hosts as $U (mean of $RUNS runs, hyperfine)"
printf "%6s %10s %10s %14s %12s %14s\n" N dtrun_ms pdsh_ms pssh_ms pdsh/dtrun pssh/dtrun
for n in 3 $NHOSTS; do
	h=$(hosts $n)
	hyperfine -N -w 2 -r "$RUNS" --export-json "$W/d.json" "$DTRUN -H $h true" >/dev/null 2>&1
	hyperfine -N -w 2 -r "$RUNS" --export-json "$W/p.json" "pdsh -R ssh -l $U -f 64 -w $h true" >/dev/null 2>&1
	# parallel-ssh takes its ssh options as one -x word: run it through sh.
	hyperfine -w 2 -r "$RUNS" --export-json "$W/s.json" \
	    "parallel-ssh -H '$(echo $h | tr , ' ')' -l $U -p 64 -x '$SSHOPTS' true" >/dev/null 2>&1
	d=$(mean "$W/d.json"); p=$(mean "$W/p.json"); s=$(mean "$W/s.json")
	printf "%6s %10s %10s %14s %12s %14s\n" "$n" "$(ms $d)" "$(ms $p)" "$(ms $s)" \
	    "$(ratio "$p" "$d")" "$(ratio "$s" "$d")"
done

echo
echo "== fail-fast: the last host's rank exits 1, the others sleep; failing exit -> dtrun's exit"
for p in failer measure; do
	cc -O2 -o "$W/$p" "$here/../local/$p.c"
done
install -d -m 777 "$W/t"
for n in 3 $NHOSTS; do
	vals=""
	for i in 1 2 3 4 5; do
		rm -f "$W/t/t"
		# failer fails on RANK 0: shift the ranks so the last host's is 0.
		"$W/measure" $DTRUN -H "$(hosts $n)" sh -c "RANK=\$((RANK - $n + 1)) exec $W/failer $W/t/t 0.3" \
		    2>"$W/m" >/dev/null || true
		end=$(sed -n 's/.*end_ns=\([0-9]*\).*/\1/p' "$W/m")
		vals="$vals $(python3 -c "import sys; print('%.1f' % ((int(sys.argv[1]) - int(open(sys.argv[2]).read())) / 1e6))" "$end" "$W/t/t")"
	done
	med=$(python3 -c "import sys,statistics; print(statistics.median(map(float, sys.argv[1:])))" $vals)
	printf "%2d hosts: median %6s ms  (runs:%s)\n" "$n" "$med" "$vals"
done
rm -rf "$UHOME/.cache/dtrun"
