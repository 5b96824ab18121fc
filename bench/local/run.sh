#!/bin/sh
# run.sh BUILDDIR -- the local launcher against its peers, side by side, in one run:
#   launch       dtrun -n N true  vs  mpirun -np N true  vs  a posix_spawn loop (the floor),
#                N = 1 (dtrun's fixed cost: its start, its agent's, its exit), 16, 64, 256
#                (NS="1 16" picks others; BASE=DIR adds the dtrun of another build, measured
#                in the same hyperfine, as a before/after)
#   throughput   4 ranks x 250,000 80-byte lines: dtrun vs mpirun --tag-output
#   fail-fast    a rank's failing exit -> the launcher's exit, 16 sleeping ranks
#   memory       peak RSS of dtrun with 1,000 local ranks
# Numbers are this machine's, at this moment: compare ratios, not absolutes.
set -eu
for t in hyperfine python3 cc; do
	command -v "$t" >/dev/null || { echo "bench-local: skipped: no $t"; exit 0; }
done
B=$(cd "${1:-build}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
W=$(mktemp -d /tmp/dtrun-bench.XXXXXX)
trap 'rm -rf "$W"' EXIT
for p in spawnfloor linegen failer measure; do
	cc -O2 -o "$W/$p" "$here/$p.c"
done
MPIRUN="mpirun --allow-run-as-root --oversubscribe --bind-to none"
have_mpi=0; command -v mpirun >/dev/null && have_mpi=1
RUNS=${RUNS:-10}

# mean JSON [I] -- the mean seconds of hyperfine's I-th command (default 0).
mean() { python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['results'][int(sys.argv[2])]['mean'])" "$1" "${2:-0}"; }
ratio() { python3 -c "import sys; a,b=float(sys.argv[1]),float(sys.argv[2]); print('%.2f' % (a/b))" "$1" "$2"; }
ms() { python3 -c "import sys; print('%.1f' % (float(sys.argv[1])*1000))" "$1"; }

# mpi_runs N -- mean seconds of mpirun's successful runs into $m, ratio into $mr.
# mpirun hangs now and then at N >= 48 here: every run is bounded by
# $MPI_TIMEOUT s and hung runs are counted, not averaged.
MPI_TIMEOUT=${MPI_TIMEOUT:-10}
mpi_runs() {
	ok="" nh=0
	for i in $(seq 1 "$RUNS"); do
		"$W/measure" timeout "$MPI_TIMEOUT" $MPIRUN -np "$1" true 2>"$W/m" >/dev/null
		if grep -q "^exit=0 " "$W/m"; then
			ok="$ok $(sed -n 's/.*wall_ms=\([0-9.]*\).*/\1/p' "$W/m")"
		else
			nh=$((nh + 1))
		fi
	done
	hung="(mpirun hung $nh/$RUNS runs, cut at ${MPI_TIMEOUT}s)"
	[ $nh -eq 0 ] && hung=""
	if [ -n "$ok" ]; then
		m=$(python3 -c "import sys; v=[float(x) for x in sys.argv[1:]]; print(sum(v)/len(v)/1000)" $ok)
		mr=$(ratio "$m" "$d")
	else
		m=$MPI_TIMEOUT; mr=">$(ratio "$m" "$d")"
	fi
}

echo "== launch: N ranks of true (mean of $RUNS runs, 5x that at N <= 16; floor and dtrun by one hyperfine, side by side)"
printf "%6s %10s %10s %10s %14s %14s" N floor_ms dtrun_ms mpirun_ms mpirun/dtrun dtrun/floor
[ -n "${BASE:-}" ] && printf " %14s" base/floor
echo
for n in ${NS:-1 16 64 256}; do
	# One hyperfine for both: the floor and dtrun see the same machine.
	# A few ms a run at 1 and 16 ranks: more runs to steady the mean.
	r=$RUNS; [ "$n" -le 16 ] && r=$((RUNS * 5))
	hyperfine -N -w 3 -r "$r" --export-json "$W/fd.json" \
	    "$W/spawnfloor $n true" "$B/dtrun -n $n true" \
	    ${BASE:+"$BASE/dtrun -n $n true"} >/dev/null 2>&1
	f=$(mean "$W/fd.json" 0); d=$(mean "$W/fd.json" 1)
	if [ $have_mpi = 1 ]; then
		mpi_runs $n
	else
		m=0; mr="n/a"; hung=""
	fi
	printf "%6s %10s %10s %10s %14s %14s" $n "$(ms $f)" "$(ms $d)" "$(ms $m)" "$mr" "$(ratio "$d" "$f")"
	[ -n "${BASE:-}" ] && printf " %14s" "$(ratio "$(mean "$W/fd.json" 2)" "$f")"
	echo " $hung"
done

echo
echo "== throughput: 4 ranks x 250,000 lines of 80 bytes"
total=1000000
"$B/dtrun" -n 4 "$W/linegen" 250000 >"$W/out"
lost=$((total - $(wc -l <"$W/out")))
bad=$(grep -cvE '^\[[0-3]\] [0-9]{4} [0-9]{9} ' "$W/out" || true)
hyperfine -N -w 1 -r 5 --export-json "$W/d.json" --output=pipe "$B/dtrun -n 4 $W/linegen 250000" >/dev/null 2>&1
d=$(mean "$W/d.json")
printf "dtrun:  %8.0f lines/s, lost %d, mangled %d\n" "$(python3 -c "print($total/$d)")" $lost $bad
if [ $have_mpi = 1 ]; then
	$MPIRUN --tag-output -np 4 "$W/linegen" 250000 >"$W/out" 2>/dev/null
	mlost=$((total - $(wc -l <"$W/out")))
	hyperfine -w 1 -r 5 --export-json "$W/m.json" --output=pipe "$MPIRUN --tag-output -np 4 $W/linegen 250000" >/dev/null 2>&1
	m=$(mean "$W/m.json")
	printf "mpirun: %8.0f lines/s, lost %d\n" "$(python3 -c "print($total/$m)")" $mlost
	echo "dtrun/mpirun lines/s: $(ratio "$m" "$d")x"
fi

echo
echo "== fail-fast: rank 0 exits 1, 15 others sleep; failing exit -> launcher exit"
latency() {	# latency CMD... : prints ms from the failing exit to the launcher's exit
	rm -f "$W/t"
	"$W/measure" "$@" 2>"$W/m" >/dev/null || true
	end=$(sed -n 's/.*end_ns=\([0-9]*\).*/\1/p' "$W/m")
	python3 -c "import sys; print('%.1f' % ((int(sys.argv[1]) - int(open(sys.argv[2]).read())) / 1e6))" "$end" "$W/t"
}
for who in dtrun mpirun; do
	[ $who = mpirun ] && [ $have_mpi = 0 ] && continue
	vals=""
	for i in 1 2 3 4 5; do
		if [ $who = dtrun ]; then
			v=$(latency "$B/dtrun" -q -n 16 "$W/failer" "$W/t" 0.3)
		else
			v=$(latency timeout 60 $MPIRUN -np 16 "$W/failer" "$W/t" 0.3)
		fi
		vals="$vals $v"
	done
	med=$(python3 -c "import sys,statistics; print(statistics.median(map(float, sys.argv[1:])))" $vals)
	printf "%-7s median %6s ms  (runs:%s)\n" $who "$med" "$vals"
done

echo
echo "== memory: dtrun -n 1000 true"
"$W/measure" "$B/dtrun" -n 1000 true 2>"$W/m"
sed -n 's/.*peak_rss_kb=\([0-9]*\) tree_rss_kb=\([0-9]*\).*/dtrun peak RSS: \1 KiB (largest of dtrun and its agent: \2 KiB)/p' "$W/m"
