#!/bin/bash
# torch-ranks.sh BUILDDIR [N...] -- real PyTorch (Debian's torch, gloo) at
# N ranks (default 4 16 64) init_process_group and all_reduce with the
# store dtrun serves (TORCHELASTIC_USE_AGENT_STORE=True), over the local
# launcher and over loopback ssh (two hosts, N/2 ranks each, as the
# bench user with /bin/sh: bench/lib/sshd-user.sh); then the same with
# --store rank0 (rank 0's TCPStore, torch's own). Prints, per N and way,
# whether every rank got the right sum and the job's wall time. The time
# is torch's import and gloo's connections more than the store; read the
# two columns side by side, not against another machine. STORES="dtrun"
# runs dtrun's store alone.
set -eu
B=$(cd "${1:-build}" && pwd)
shift || true
NS=${*:-4 16 64}
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
. "$here/../lib/sshd-user.sh"
PY=/usr/bin/python3
"$PY" -c 'import torch.distributed' 2>/dev/null ||
    { echo "bench-store-torch: skipped: no python3-torch"; exit 0; }
W=$(mktemp -d /tmp/dtrun-bench-torch.XXXXXX)
chmod 755 "$W"
cp "$top/tests/sh/store-job.py" "$W/job.py"
ssh_ok=0
if why=$(bench_user_skip_reason); then
	echo "(ssh rows skipped: $why)"
else
	bench_user_make
	unset SSH_AUTH_SOCK
	bench_sshd_start "$W" 2
	ssh_ok=1
fi
cleanup() {
	[ $ssh_ok = 0 ] || bench_sshd_stop "$W"
	rm -rf "$W"
}
trap cleanup EXIT
DSSH="$B/dtrun --launcher ssh -p ${PORT:-0} -i ${KEY:-none} --ssh-option User=$U --ssh-option UserKnownHostsFile=${KH:-none}"

# run N WAY STORE: prints one row.
run() {
	local n=$1 way=$2 store=$3 t0 t1 ok sum
	sum=$((n * (n + 1) / 2))
	t0=$(date +%s.%N)
	if [ "$way" = local ]; then
		(cd "$W" && "$B/dtrun" -n "$n" --store "$store" --timeout 600 \
		    --prefix "" "$PY" "$W/job.py") >"$W/out" 2>"$W/err" || true
	else
		(cd "$W" && $DSSH -H "127.0.0.1:$((n / 2)),127.0.0.2:$((n - n / 2))" \
		    --store "$store" --timeout 600 --prefix "" "$PY" "$W/job.py") \
		    >"$W/out" 2>"$W/err" || true
	fi
	t1=$(date +%s.%N)
	ok=$(grep -c "^attempt 0 rank [0-9]* of $n sum $sum " "$W/out" || true)
	printf "%6s %6s %6s %8s %9.1f\n" "$n" "$way" "$store" "$ok/$n" \
	    "$(echo "$t1 - $t0" | bc)"
	[ "$ok" = "$n" ] || sed -n '1,5p' "$W/err"
}

echo "== real torch $("$PY" -c 'import torch; print(torch.__version__)') gloo ranks: init_process_group + all_reduce"
printf "%6s %6s %6s %8s %9s\n" ranks way store ok wall_s
for n in $NS; do
	for store in ${STORES:-dtrun rank0}; do
		run "$n" local "$store"
		[ $ssh_ok = 0 ] || run "$n" ssh "$store"
	done
done
