#!/bin/sh
# run.sh [tNNNN-*.sh ...] -- runs the scenario tests of its own directory one
# file at a time: each file's lines as they come, then "-- FILE: N passed,
# N failed, N skipped in S s"; ends with "N passed, N failed, N skipped".
here=$(cd "$(dirname "$0")" && pwd)
cd "$here" || exit 1
[ $# -gt 0 ] || set -- t[0-9][0-9][0-9][0-9]-*.sh
p=0 f=0 s=0 rc=0 pid='' tpid=''
out=$(mktemp)
# Interrupted, the file running is stopped too: timeout passes the TERM to
# its process group, so nothing of it runs on unseen.
stop() {
	[ -z "$pid" ] || kill "$pid" 2>/dev/null
	[ -z "$tpid" ] || kill "$tpid" 2>/dev/null
}
trap 'stop; rm -f "$out"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
for t in "$@"; do
	echo "-- $t"
	t0=$(date +%s)
	# A hung scenario must not hang the suite: it fails, by name.
	timeout -k 10 "${DTRUN_TEST_TIMEOUT:-600}" bash "$t" >"$out" 2>&1 &
	pid=$!
	# Its lines as they come, read from the file: a daemon a test leaves
	# behind holds that file, never our stdout.
	tail -n +1 -s 0.2 -f --pid="$pid" "$out" &
	tpid=$!
	wait "$pid"
	r=$?
	pid=''
	wait "$tpid"
	tpid=''
	secs=$(($(date +%s) - t0))
	if [ $r -eq 124 ]; then
		echo "not ok - $t still running after ${DTRUN_TEST_TIMEOUT:-600} s: killed" |
		    tee -a "$out"
	fi
	set -- $(sed -n 's/^# \([0-9]*\) passed, \([0-9]*\) failed, \([0-9]*\) skipped$/\1 \2 \3/p' "$out" | tail -n 1)
	if [ $# -eq 3 ]; then
		p=$((p + $1)) f=$((f + $2)) s=$((s + $3))
		echo "-- $t: $1 passed, $2 failed, $3 skipped in $secs s"
	else
		echo "not ok - $t ended without its summary (exit $r)"
		echo "-- $t: no summary (exit $r) in $secs s"
		f=$((f + 1))
	fi
	[ $r -eq 0 ] || rc=1
done
echo "$p passed, $f failed, $s skipped"
exit $rc
