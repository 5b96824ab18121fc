#!/bin/sh
# run.sh BUILDDIR -- generates a 100,000-host file and times parsing and
# placing it: in-process (min/median/max of 20), then the whole process
# under hyperfine when it is installed. Goal: well under 100 ms.
set -eu
B=${1:-build}
bin="$B/bench-hostfile"
file="$B/bench-100k.hosts"
"$bin" gen "$file"
echo "file: $file ($(wc -l < "$file") lines, $(wc -c < "$file") bytes)"
"$bin" time "$file" 20
if command -v hyperfine >/dev/null 2>&1; then
	hyperfine -N --warmup 3 --runs 30 "$bin parse $file"
else
	echo "bench-hostfile: the whole process: skipped: no hyperfine"
fi
