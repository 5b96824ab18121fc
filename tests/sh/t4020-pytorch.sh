#!/bin/bash
# t4020-pytorch.sh -- a real PyTorch DDP job (gloo, CPU) through env://, with
# Debian's python3-torch (/usr/bin/python3; make deps installs it).
. "$(dirname "$0")/lib.sh"

PY=/usr/bin/python3
DDP=$SRC/examples/pytorch/ddp.py

if ! "$PY" -c 'import torch.distributed' 2>/dev/null; then
	test_skip 'PyTorch DDP with 4 ranks' 'no python3-torch'
	test_skip 'a diverged replica fails the job' 'no python3-torch'
	test_skip 'a job that fails once restarts and succeeds' 'no python3-torch'
	test_done
fi

test_expect_success 'DDP with 4 ranks keeps the replicas identical' '
	dtrun -n 4 --seed 1 --timeout 120 "$PY" "$DDP" >out 2>err &&
	grep -qE "^\[0\] 4 replicas identical after 5 steps \(params [0-9a-f]{16}, last loss [0-9.]+\)\$" out
'

test_expect_success 'a diverged replica fails the job, and dtrun says which rank' '
	test_expect_code 1 dtrun -n 4 --timeout 120 "$PY" "$DDP" --steps 2 --corrupt 2 >out 2>err &&
	grep -q "^\[0\] rank 2: [0-9a-f]*  <- differs\$" out &&
	grep -q "^\[0\] replicas diverged\$" err &&
	grep -q "^dtrun: rank 0 on localhost (pid [0-9]*) exited with code 1" err
'

# Attempt 0: both ranks join gloo and all_reduce, then rank 1 dies. Attempt
# 1: both see restart count 1 (dtrun's and torchelastic's), join a fresh
# rendezvous on a fresh MASTER_PORT and finish.
cat >"$TRASH/restart.py" <<'EOS'
import os, sys
import torch
import torch.distributed as dist
n = int(os.environ["DTRUN_RESTART_COUNT"])
assert os.environ["TORCHELASTIC_RESTART_COUNT"] == str(n)
dist.init_process_group("gloo")
t = torch.ones(1) * (dist.get_rank() + 1)
dist.all_reduce(t)
print("attempt %d rank %d sum %d port %s" % (n, dist.get_rank(), int(t.item()),
      os.environ["MASTER_PORT"]), flush=True)
if n == 0 and dist.get_rank() == 1:
    os._exit(3)
dist.barrier()
dist.destroy_process_group()
EOS

test_expect_success 'a job that fails once restarts and succeeds (DTRUN_RESTART_COUNT=1)' '
	dtrun -n 2 --max-restarts 1 --restart-delay 0 --timeout 120 "$PY" "$TRASH/restart.py" >out 2>err &&
	grep -q "^\[1\] attempt 0 rank 1 sum 3 port " out &&
	grep -q "^\[0\] attempt 1 rank 0 sum 3 port " out &&
	grep -q "^\[1\] attempt 1 rank 1 sum 3 port " out &&
	grep -q "attempt 0 at .* exit 3: rank 1 on localhost exited with code 3" err &&
	grep -q "attempt 1 at .* exit 0: every rank exited 0" err
'

test_done
