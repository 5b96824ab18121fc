#!/bin/sh
# run-all.sh BUILDDIR -- runs every suite, each line shown as it comes (the
# scenario suite says each file's result and time as it ends), then prints
# the total as "N passed, N failed" and how long it all took.
B=${1:-build}
top=$(cd "$(dirname "$0")/.." && pwd)
log=$(mktemp)
trap 'rm -f "$log" "$log.rc"' EXIT
rc=0
t0=$(date +%s)

# Each suite's output goes to the terminal as it comes and to the log; its
# own exit code (not tee's) decides.
suite() {
	echo "== $1"
	shift
	{ "$@" 2>&1; echo $? >"$log.rc"; } | tee -a "$log"
	[ "$(cat "$log.rc" 2>/dev/null)" = 0 ] || rc=1
}
suite "unit tests" "$top/$B/unit-tests" -d "$top/tests/data"
suite "scenario tests" env DTRUN_BUILD="$top/$B" sh "$top/tests/sh/run.sh"

# Add up the suites' closing lines.
awk -v secs=$(($(date +%s) - t0)) '/^[0-9]+ passed, [0-9]+ failed/ { p += $1; f += $3; s += ($5 == "" ? 0 : $5) }
END { printf "== all suites (%d s)\n%d passed, %d failed", secs, p, f; if (s) printf ", %d skipped", s; printf "\n" }' "$log"
exit $rc
