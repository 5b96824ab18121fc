#!/bin/bash
# run.sh BUILDDIR -- dtrun under Slurm against plain "srun -K" for the same
# ranks, side by side:
#   start      launcher started -> every rank running (the last rank's first
#              instruction), and the whole job of N ranks that exit at once
#   fail-fast  a rank's failing exit -> the launcher's exit, the others sleeping
# Uses the Slurm cluster sinfo reaches (SLURM_CONF); otherwise, as root with
# slurm-wlm installed, brings up the tests' private one-node cluster
# (tests/sh/slurm.sh). Medians of RUNS runs (default 10); ranks: NS
# (default "4 16"), overcommitted with -O. Compare ratios, not absolutes.
set -u
B=$(cd "${1:-build}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
RUNS=${RUNS:-10}
NS=${NS:-"4 16"}
MAXN=$(printf "%s\n" $NS | sort -n | tail -n 1)

export DTRUN_BUILD=$B
. "$here/../../tests/sh/lib.sh"
. "$here/../../tests/sh/slurm.sh"
if ! sinfo -h >/dev/null 2>&1; then
	if why=$(slurm_skip_reason); then
		echo "bench-slurm: no Slurm cluster here and none can be started: $why"
		exit 0
	fi
	slurm_start >/dev/null || { echo "bench-slurm: could not start Slurm"; exit 1; }
	echo "(private one-node Slurm cluster, $(nproc) CPUs, $(srun --version))"
fi
cc -O2 -o "$TRASH/stamp" "$here/stamp.c" || exit 1
salloc --no-shell -O -N1 -n "$MAXN" -J dtrun-bench >"$TRASH/salloc" 2>&1
JOB=$(sed -n 's/.*Granted job allocation \([0-9]*\).*/\1/p' "$TRASH/salloc")
[ -n "$JOB" ] || { cat "$TRASH/salloc"; exit 1; }
NODES=$(squeue -h -j "$JOB" -o %N)
export SLURM_JOB_ID=$JOB SLURM_JOB_NODELIST=$NODES SLURM_TASKS_PER_NODE=$MAXN
test_at_exit 'scancel $JOB 2>/dev/null'

now() { echo "${EPOCHREALTIME/./}"; }		# microseconds
median() { printf "%s\n" "$@" | sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }

# launch WHO N [FAIL] -- one run; prints "start_ms job_ms" or "failfast_ms".
launch() {
	d=$TRASH/run; rm -rf "$d"; mkdir -p "$d"
	if [ "$1" = dtrun ]; then
		cmd=("$B/dtrun" -q -n "$2" "$TRASH/stamp" "$d")
	else
		cmd=(srun -K -O -n "$2" "$TRASH/stamp" "$d")
	fi
	t0=$(now)
	if [ -n "${3:-}" ]; then
		FAIL_RANK=$3 "${cmd[@]}" >/dev/null 2>&1
		t1=$(now)
		f=$(cat "$d/fail")
		echo $(( (t1 - f / 1000) / 1000 ))
		return
	fi
	"${cmd[@]}" >/dev/null 2>&1 || echo "bench-slurm: $1 failed" >&2
	t1=$(now)
	last=$(cat "$d"/start.* | sort -n | tail -n 1)
	[ "$(ls "$d"/start.* | wc -l)" -eq "$2" ] || echo "bench-slurm: $1: missing ranks" >&2
	echo "$(( (last / 1000 - t0) / 1000 )) $(( (t1 - t0) / 1000 ))"
}

echo "== start: launcher -> all N ranks running, and whole job of N ranks of a no-op (median of $RUNS runs, ms)"
printf "%4s %10s %10s %8s   %10s %10s %8s\n" N dtrun srun srun/dt dtrun_job srun_job srun/dt
for n in $NS; do
	ds="" dj="" ss="" sj=""
	launch dtrun "$n" >/dev/null; launch srun "$n" >/dev/null	# warm-up
	for i in $(seq 1 "$RUNS"); do
		read -r a b < <(launch dtrun "$n"); ds="$ds $a" dj="$dj $b"
		read -r a b < <(launch srun "$n"); ss="$ss $a" sj="$sj $b"
	done
	ds=$(median $ds) dj=$(median $dj) ss=$(median $ss) sj=$(median $sj)
	printf "%4s %10s %10s %8s   %10s %10s %8s\n" "$n" "$ds" "$ss" "$(ratio "$ss" "$ds")" "$dj" "$sj" "$(ratio "$sj" "$dj")"
done

echo
echo "== fail-fast: rank 1 exits 1 -> launcher exits, other ranks sleeping (median of $RUNS runs, ms)"
printf "%4s %10s %10s %8s\n" N dtrun srun srun/dt
for n in $NS; do
	df="" sf=""
	for i in $(seq 1 "$RUNS"); do
		df="$df $(launch dtrun "$n" 1)"
		sf="$sf $(launch srun "$n" 1)"
	done
	df=$(median $df) sf=$(median $sf)
	printf "%4s %10s %10s %8s\n" "$n" "$df" "$sf" "$(ratio "$sf" "$df")"
done
