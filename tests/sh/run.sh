#!/bin/sh
# run.sh [tNNNN-*.sh ...] -- runs the scenario tests; ends with "N passed, N failed, N skipped".
here=$(cd "$(dirname "$0")" && pwd)
cd "$here" || exit 1
[ $# -gt 0 ] || set -- t[0-9][0-9][0-9][0-9]-*.sh
p=0 f=0 s=0 rc=0
out=$(mktemp)
trap 'rm -f "$out"' EXIT
for t in "$@"; do
	echo "-- $t"
	# A hung scenario must not hang the suite: it fails, by name.
	timeout -k 10 "${DTRUN_TEST_TIMEOUT:-600}" bash "$t" >"$out" 2>&1
	r=$?
	[ $r -eq 124 ] && echo "not ok - $t still running after ${DTRUN_TEST_TIMEOUT:-600} s: killed" >>"$out"
	cat "$out"
	set -- $(sed -n 's/^# \([0-9]*\) passed, \([0-9]*\) failed, \([0-9]*\) skipped$/\1 \2 \3/p' "$out" | tail -n 1)
	if [ $# -eq 3 ]; then
		p=$((p + $1)) f=$((f + $2)) s=$((s + $3))
	else
		echo "not ok - $t ended without its summary (exit $r)"
		f=$((f + 1))
	fi
	[ $r -eq 0 ] || rc=1
done
echo "$p passed, $f failed, $s skipped"
exit $rc
