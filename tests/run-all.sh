#!/bin/sh
# run-all.sh BUILDDIR -- runs every suite, then prints the total as "N passed, N failed".
B=${1:-build}
top=$(cd "$(dirname "$0")/.." && pwd)
log=$(mktemp)
trap 'rm -f "$log"' EXIT
rc=0

echo "== unit tests"
"$top/$B/unit-tests" -d "$top/tests/data" | tee -a "$log" || rc=1
echo "== scenario tests"
DTRUN_BUILD="$top/$B" sh "$top/tests/sh/run.sh" | tee -a "$log" || rc=1

# Add up the suites' closing lines.
awk '/^[0-9]+ passed, [0-9]+ failed/ { p += $1; f += $3; s += ($5 == "" ? 0 : $5) }
END { printf "== all suites\n%d passed, %d failed", p, f; if (s) printf ", %d skipped", s; printf "\n" }' "$log"
exit $rc
