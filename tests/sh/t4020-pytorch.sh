#!/bin/bash
# t4020-pytorch.sh -- a real PyTorch DDP job (gloo, CPU) through env://, with
# Debian's python3-torch (/usr/bin/python3; make deps installs it).
. "$(dirname "$0")/lib.sh"

PY=/usr/bin/python3
DDP=$SRC/examples/pytorch/ddp.py

if ! "$PY" -c 'import torch.distributed' 2>/dev/null; then
	test_skip 'PyTorch DDP with 4 ranks' 'no python3-torch'
	test_skip 'a diverged replica fails the job' 'no python3-torch'
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

test_done
