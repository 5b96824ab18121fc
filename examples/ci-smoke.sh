#!/bin/sh
# ci-smoke.sh -- a CI smoke test with dtrun's local launcher: run a training
# command for a few steps as N ranks on the CI machine, fail the CI job as
# soon as any rank fails (with that rank's exit code), never hang past a
# deadline, and keep every rank's output for the CI artifacts.
#
#   examples/ci-smoke.sh [-n N] [-t SECS] [-o DIR] [-- COMMAND [ARGS...]]
#
# Without a COMMAND: examples/pytorch/ddp.py when /usr/bin/python3 has
# torch, else a shell check of the environment every rank gets.
# In a CI file (GitHub Actions, GitLab CI...), one step is enough:
#
#   - run: examples/ci-smoke.sh -n 2 -t 600 -o smoke-logs -- python train.py --steps 10
#
# and keep smoke-logs/ as an artifact: smoke-logs/rank.N/{stdout,stderr}.
n=2 t=300 o=smoke-logs
while getopts n:t:o: c; do
	case $c in
	n) n=$OPTARG ;;
	t) t=$OPTARG ;;
	o) o=$OPTARG ;;
	*) echo "usage: $0 [-n N] [-t SECS] [-o DIR] [-- COMMAND [ARGS...]]" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
here=$(cd "$(dirname "$0")" && pwd)
DTRUN=${DTRUN:-dtrun}

if [ $# -eq 0 ]; then
	if /usr/bin/python3 -c 'import torch.distributed' 2>/dev/null; then
		set -- /usr/bin/python3 "$here/pytorch/ddp.py" --steps 3
	else
		set -- sh -c 'test "$RANK" -lt "$WORLD_SIZE" && test -n "$MASTER_PORT" &&
		    echo "rank $RANK of $WORLD_SIZE ok"'
	fi
fi

# A fixed seed makes a failure reproducible; --timeout turns a hang (a rank
# stuck in a collective) into exit 124 instead of a CI job that never ends.
"$DTRUN" -n "$n" --seed 0 --timeout "$t" --kill-grace 10 --output-dir "$o" -- "$@"
rc=$?
if [ $rc -ne 0 ]; then
	echo "ci-smoke: FAILED with exit code $rc; the last lines of each rank's stderr:" >&2
	for d in "$o"/rank.*; do
		[ -s "$d/stderr" ] || continue
		echo "--- $d/stderr" >&2
		tail -n 5 "$d/stderr" >&2
	done
	exit $rc
fi
echo "ci-smoke: $n ranks passed"
