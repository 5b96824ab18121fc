#!/usr/bin/python3
"""ddp.py -- a tiny PyTorch DistributedDataParallel job on CPU (gloo).

    dtrun -n 4 /usr/bin/python3 examples/pytorch/ddp.py [--steps N] [--corrupt RANK]

Every rank trains the same small model on its own data for a few steps;
DDP averages the gradients, so the replicas must stay identical. At the
end rank 0 gathers a checksum of every rank's parameters and exits 1 if any
differs. --corrupt RANK nudges that rank's weights after training, to show
the check catches a diverged replica.

Only what dtrun exports is used: RANK, WORLD_SIZE, MASTER_ADDR and
MASTER_PORT through init_method="env://" (the default), and DTRUN_SEED /
DTRUN_RANK_SEED when dtrun is given --seed.
"""
import argparse
import hashlib
import os
import sys

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def checksum(model):
    h = hashlib.sha256()
    for p in model.parameters():
        h.update(p.detach().contiguous().numpy().tobytes())
    return h.hexdigest()[:16]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--corrupt", type=int, default=-1)
    args = ap.parse_args()

    torch.set_num_threads(1)    # ranks share the machine's cores
    dist.init_process_group("gloo", init_method="env://")
    rank, world = dist.get_rank(), dist.get_world_size()

    # Different initial weights per rank: DDP must broadcast rank 0's.
    torch.manual_seed(int(os.environ.get("DTRUN_SEED", "0")) + rank)
    model = DDP(torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.Tanh(),
                                    torch.nn.Linear(16, 1)))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)

    # Each rank its own data.
    gen = torch.Generator().manual_seed(
        int(os.environ.get("DTRUN_RANK_SEED", str(1000 + rank))))
    for _ in range(args.steps):
        x = torch.randn(32, 8, generator=gen)
        y = x.sum(dim=1, keepdim=True)
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()

    if rank == args.corrupt:
        with torch.no_grad():
            next(model.parameters()).add_(1e-3)

    sums = [None] * world if rank == 0 else None
    dist.gather_object(checksum(model.module), sums, dst=0)
    last = loss.item()
    # Free DDP before the group and before Python shuts down: torch 1.13 on
    # Python 3.11 can hang at exit when a gloo thread outlives the module.
    del model, opt, loss
    dist.destroy_process_group()
    if rank != 0:
        return 0
    if len(set(sums)) != 1:
        for r, s in enumerate(sums):
            print("rank %d: %s%s" % (r, s, "" if s == sums[0] else "  <- differs"))
        print("replicas diverged", file=sys.stderr)
        return 1
    print("%d replicas identical after %d steps (params %s, last loss %.4f)"
          % (world, args.steps, sums[0], last))
    return 0


if __name__ == "__main__":
    sys.exit(main())
