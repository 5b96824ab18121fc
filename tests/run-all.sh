#!/bin/sh
# run-all.sh BUILDDIR -- runs every suite, then prints the total as "N passed, N failed".
B=${1:-build}
top=$(cd "$(dirname "$0")/.." && pwd)
log=$(mktemp)
trap 'rm -f "$log" "$log.1"' EXIT
rc=0

# Each suite's output goes to the terminal and the log; its own exit code
# (not tee's) decides.
suite() {
	echo "== $1"
	shift
	"$@" >"$log.1" 2>&1 || rc=1
	cat "$log.1"
	cat "$log.1" >>"$log"
}
suite "unit tests" "$top/$B/unit-tests" -d "$top/tests/data"
suite "scenario tests" env DTRUN_BUILD="$top/$B" sh "$top/tests/sh/run.sh"

# Add up the suites' closing lines.
awk '/^[0-9]+ passed, [0-9]+ failed/ { p += $1; f += $3; s += ($5 == "" ? 0 : $5) }
END { printf "== all suites\n%d passed, %d failed", p, f; if (s) printf ", %d skipped", s; printf "\n" }' "$log"
exit $rc
