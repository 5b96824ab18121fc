#!/bin/bash
# t4021-torchrun.sh -- what torchrun gives its ranks, checked against the
# installed torch (/usr/bin/python3), and the options torchrun and mpirun
# users type.
. "$(dirname "$0")/lib.sh"

PY=/usr/bin/python3

test_expect_success 'every rank gets ROLE_NAME, TORCHELASTIC_RUN_ID (the job id) and TORCHELASTIC_USE_AGENT_STORE' '
	dtrun -n 3 --prefix "%r " sh -c "echo \$ROLE_NAME \$TORCHELASTIC_RUN_ID \$DTRUN_JOB_ID \$TORCHELASTIC_USE_AGENT_STORE" >out &&
	for r in 0 1 2; do
		grep "^$r " out >line &&
		read -r rank role run id store <line &&
		test "$role" = default && test -n "$run" && test "$run" = "$id" &&
		test "$store" = True || return 1
	done &&
	for how in "--store rank0" "-x MASTER_PORT=29500" "-x MASTER_ADDR=127.0.0.1" "--master-port 29500"; do
		dtrun -n 2 $how --prefix "%r " sh -c "echo \$TORCHELASTIC_USE_AGENT_STORE \${DTRUN_STORE:-none}" >out &&
		grep -qx "0 False none" out && grep -qx "1 False none" out || return 1
	done
'

test_expect_success 'over two hosts too, with the same run id on each' '
	dtrun --launcher local -H a:2,b:1 --prefix "%r " sh -c "echo \$ROLE_NAME \$TORCHELASTIC_RUN_ID \$TORCHELASTIC_USE_AGENT_STORE" >out &&
	test $(wc -l <out) -eq 3 &&
	test $(cut -d" " -f2- out | sort -u | wc -l) -eq 1 &&
	grep -q "^2 default [^ ]* True\$" out
'

cat >"$TRASH/store.py" <<'EOS'
import os
import torch
import torch.distributed as dist
from torch.distributed.rendezvous import _torchelastic_use_agent_store
# torch reads it so: False (--store rank0) makes rank 0 host the store.
assert not _torchelastic_use_agent_store(), os.environ["TORCHELASTIC_USE_AGENT_STORE"]
dist.init_process_group("gloo")
t = torch.ones(1)
dist.all_reduce(t)
print("rank %d of %d sum %d role %s" % (dist.get_rank(), dist.get_world_size(),
      int(t.item()), os.environ["ROLE_NAME"]), flush=True)
dist.destroy_process_group()
EOS

if "$PY" -c 'import torch.distributed' 2>/dev/null; then
	test_expect_success 'real PyTorch: gloo init_process_group works with these variables (--store rank0: rank 0 hosts it)' '
		dtrun -n 3 --store rank0 --timeout 120 --prefix "%r " "$PY" "$TRASH/store.py" >out 2>err &&
		for r in 0 1 2; do
			grep -qx "$r rank $r of 3 sum 3 role default" out || return 1
		done
	'
else
	test_skip 'real PyTorch: gloo init_process_group works with these variables (--store rank0: rank 0 hosts it)' 'no python3-torch'
fi

test_expect_success 'mpirun'"'"'s -np N is -n N' '
	dtrun -np 4 --prefix "%r " sh -c "echo \$WORLD_SIZE" >out &&
	for r in 0 1 2 3; do grep -qx "$r 4" out || return 1; done &&
	test $(wc -l <out) -eq 4
'

test_expect_success 'torchrun'"'"'s --nproc_per_node and --nproc-per-node, and mpirun'"'"'s -npernode, are ranks per host' '
	for o in --nproc_per_node --nproc-per-node --npernode -npernode; do
		dtrun --launcher local -H a:1,b:1 $o 2 --prefix "%r " sh -c "echo \$LOCAL_RANK/\$LOCAL_WORLD_SIZE/\$GROUP_RANK" >out &&
		sort out >s && printf "0 0/2/0\n1 1/2/0\n2 0/2/1\n3 1/2/1\n" >want &&
		cmp s want || return 1
	done
'

test_expect_success '--nnodes checks the number of hosts, naming both counts' '
	dtrun --launcher local -H a:1,b:1 --nnodes 2 true &&
	dtrun --launcher local -H a:1,b:1 --nnodes 1:4 true &&
	test_expect_code 2 dtrun --launcher local -H a:1,b:1 --nnodes 3 true 2>err &&
	grep -q "^dtrun: --nnodes 3: the job runs on 2 hosts" err &&
	test_expect_code 2 dtrun -n 2 --nnodes 2:8 true 2>err &&
	grep -q "^dtrun: --nnodes 2:8: the job runs on 1 host " err &&
	test_expect_code 2 dtrun --nnodes 4:2 true 2>err &&
	grep -q "want a number of hosts, or MIN:MAX" err
'

test_expect_success '--master-port/--master_port and --master-addr/--master_addr reach every rank' '
	for o in --master-port --master_port; do
		dtrun -n 2 $o 29511 --master_addr 127.0.0.1 --prefix "%r " sh -c "echo \$MASTER_ADDR:\$MASTER_PORT" >out &&
		grep -qx "0 127.0.0.1:29511" out && grep -qx "1 127.0.0.1:29511" out || return 1
	done &&
	test_expect_code 2 dtrun --master-port 70000 true 2>err &&
	grep -q "^dtrun: --master-port 70000: want 1 to 65535$" err
'

test_expect_success 'torchrun'"'"'s --standalone, --rdzv-backend, --rdzv-id are ignored with a note' '
	dtrun -n 2 --standalone --rdzv-backend c10d --rdzv_id 42 --rdzv-endpoint localhost:29400 --node_rank 0 true 2>err &&
	grep -q "^dtrun: --standalone: ignored: not needed, dtrun -n N runs a one-host job" err &&
	grep -q "^dtrun: --rdzv-backend: ignored: dtrun runs its own rendezvous" err &&
	grep -q "^dtrun: --rdzv_id: ignored" err &&
	grep -q "^dtrun: --rdzv-endpoint: ignored" err &&
	grep -q "^dtrun: --node_rank: ignored" err
'

test_expect_success 'a rendezvous elsewhere or a node rank above 0 is refused: dtrun runs once for all hosts' '
	test_expect_code 2 dtrun --rdzv_endpoint gpu1:29400 true 2>err &&
	grep -q "^dtrun: --rdzv_endpoint gpu1:29400: dtrun is not run once per node" err &&
	test_expect_code 2 dtrun --node-rank 1 true 2>err &&
	grep -q "^dtrun: --node-rank 1: dtrun is not run once per node" err
'

test_expect_success 'torchrun'"'"'s --max_restarts is --max-restarts' '
	dtrun --max_restarts 1 --restart-delay 0 sh -c "test \$TORCHELASTIC_RESTART_COUNT = 1 || exit 3; echo \$TORCHELASTIC_MAX_RESTARTS" >out 2>err &&
	grep -qx "\[0\] 1" out
'

test_expect_success 'OMP_NUM_THREADS=1 where ranks share a host, with one notice (-v: not a terminal)' '
	env -u OMP_NUM_THREADS dtrun -v --launcher local -H a:2,b:1 --max-restarts 1 --restart-delay 0 --prefix "%r " \
	    sh -c "echo \${OMP_NUM_THREADS-unset}; test \$DTRUN_RESTART_COUNT = 1" >out 2>err &&
	grep -qx "0 1" out && grep -qx "1 1" out && grep -qx "2 unset" out &&
	test $(grep -c "^dtrun: OMP_NUM_THREADS=1 for ranks that share a host" err) -eq 1 &&
	env -u OMP_NUM_THREADS dtrun -n 2 true 2>err && test ! -s err
'

test_expect_success 'but never over the user'"'"'s: -x, dtrun'"'"'s environment, --setup' '
	env -u OMP_NUM_THREADS dtrun -n 2 -x OMP_NUM_THREADS=4 --prefix "%r " sh -c "echo \$OMP_NUM_THREADS" >out 2>err &&
	grep -qx "0 4" out && grep -qx "1 4" out && ! grep -q OMP_NUM_THREADS err &&
	OMP_NUM_THREADS=3 dtrun -n 2 --prefix "%r " sh -c "echo \$OMP_NUM_THREADS" >out 2>err &&
	grep -qx "0 3" out && grep -qx "1 3" out && ! grep -q OMP_NUM_THREADS err &&
	env -u OMP_NUM_THREADS dtrun -n 2 --setup "echo OMP_NUM_THREADS=6" --prefix "%r " sh -c "echo \$OMP_NUM_THREADS" >out &&
	grep -qx "0 6" out && grep -qx "1 6" out &&
	env -u OMP_NUM_THREADS dtrun -n 1 sh -c "echo \${OMP_NUM_THREADS-unset}" >out 2>err &&
	grep -qx "\[0\] unset" out && ! grep -q OMP_NUM_THREADS err
'

test_expect_success 'each rank gets its own TORCHELASTIC_ERROR_FILE, owner-only, gone after the job' '
	dtrun -n 2 --prefix "%r " sh -c "echo \$TORCHELASTIC_ERROR_FILE; ls -ld \$(dirname \$TORCHELASTIC_ERROR_FILE); echo x >\$TORCHELASTIC_ERROR_FILE" >out &&
	f0=$(sed -n "s/^0 \(\/.*json\)\$/\1/p" out) && f1=$(sed -n "s/^1 \(\/.*json\)\$/\1/p" out) &&
	test -n "$f0" && test -n "$f1" && test "$f0" != "$f1" &&
	case $f0 in *rank.0.json) ;; *) false ;; esac &&
	grep -q "^0 drwx------ " out && grep -q "^1 drwx------ " out &&
	! test -e "$f0" && ! test -e "$f1"
'

cat >"$TRASH/record.py" <<'EOS'
import os, time
from torch.distributed.elastic.multiprocessing.errors import record

def load(rank):
    raise ValueError("bad shard on rank %d" % rank)

@record
def main():
    if int(os.environ["RANK"]) == 2:
        load(2)
    time.sleep(60)

if __name__ == "__main__":
    main()
EOS

if "$PY" -c 'import torch.distributed.elastic.multiprocessing.errors' 2>/dev/null; then
	test_expect_success 'real PyTorch: a rank that raises under @record: the summary shows its traceback, rank and host' '
		test_expect_code 1 dtrun --launcher local -H a:2,b:2 --timeout 120 "$PY" "$TRASH/record.py" >out 2>err &&
		sed -n "/^dtrun: =====/,/^dtrun: =====/p" err >block &&
		grep -qx "dtrun: record.py FAILED" block &&
		grep -qx "dtrun: Root Cause (first observed failure):" block &&
		grep -qx "dtrun:   host      : b" block &&
		grep -qx "dtrun:   rank      : 2 (local_rank: 0)" block &&
		grep -qE "^dtrun:   exitcode  : 1 \(pid: [0-9]+\)\$" block &&
		grep -qE "^dtrun:   time      : [0-9]{4}-[0-9]{2}-[0-9]{2}_[0-9:]{8}\$" block &&
		grep -qE "^dtrun:   error_file: /.*\.rank\.2\.json \(removed as the job ended; --output-dir keeps a copy\)\$" block &&
		grep -qx "dtrun:   traceback : Traceback (most recent call last):" block &&
		grep -q "^dtrun:     File \".*record.py\", line 5, in load\$" block &&
		grep -qx "dtrun:   ValueError: bad shard on rank 2" block &&
		tail -n 1 err | grep -q "^dtrun: job failed: rank 2 on b exited with code 1 first"
	'
	test_expect_success 'real PyTorch: with --output-dir the error file named stays after the job, a copy of the rank'"'"'s' '
		test_expect_code 1 dtrun --output-dir logs -n 3 --timeout 120 "$PY" "$TRASH/record.py" >out 2>err &&
		f=$(sed -n "s/^dtrun:   error_file: \(.*\)\$/\1/p" err) &&
		test "$f" = "$PWD/logs/rank.2/error.json" &&
		test -s "$f" &&
		python3 -c "import json, sys; m = json.load(open(sys.argv[1]))[\"message\"]; assert \"bad shard on rank 2\" in m[\"message\"], m" "$f"
	'
else
	test_skip 'real PyTorch: a rank that raises under @record: the summary shows its traceback, rank and host' 'no python3-torch'
	test_skip 'real PyTorch: with --output-dir the error file named stays after the job' 'no python3-torch'
fi

test_expect_success 'an error file that is no JSON is shown as it is; a rank that exits 0 sends none' '
	test_expect_code 3 dtrun -n 2 sh -c "test \$RANK = 1 || exit 0; printf \"disk full\\\\n\" >\$TORCHELASTIC_ERROR_FILE; exit 3" 2>err &&
	grep -qx "dtrun:   traceback : disk full" err &&
	grep -qx "dtrun:   exitcode  : 3 (pid: [0-9]*)" err &&
	dtrun -n 1 sh -c "echo x >\$TORCHELASTIC_ERROR_FILE" 2>err && ! grep -q "Root Cause" err
'

test_done
