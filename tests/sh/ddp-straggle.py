#!/usr/bin/python3
# A real gloo DDP job with one chosen straggler, for measuring what a rank's
# main thread looks like in /proc while it works, waits on peers, or waits on
# its own input. Started by dtrun (RANK/WORLD_SIZE/MASTER_ADDR/MASTER_PORT).
import argparse, ctypes, multiprocessing, os, signal, sys, time

T0 = time.time()
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Dataset


# Parse the command line.
def parse():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--mode", default="balanced",
                   choices=["balanced", "compute", "input", "cpu", "allslow"])
    p.add_argument("--slow-rank", type=int, default=0)
    p.add_argument("--factor", type=float, default=1.3)
    p.add_argument("--steps", type=int, default=0, help="0: until killed")
    p.add_argument("--step-ms", type=float, default=60.0)
    p.add_argument("--hogs", type=int, default=4,
                   help="cpu mode: busy children sharing the slow rank's core")
    p.add_argument("--stats", default="",
                   help="directory: each rank writes rank.N with its mean times")
    p.add_argument("--phases", default=[], type=phases,
                   help="NAME:STEPS,...,NAME: modes (balanced, compute, "
                   "allslow) one after another, the last until the end; "
                   "overrides --mode; rank 0 says \"phase NAME\" as each starts")
    return p.parse_args()


# "balanced:50,allslow:40,compute" -> [("balanced", 50), ("allslow", 40),
# ("compute", 0)]: steps of each phase, 0 for the last (until the end).
def phases(spec):
    out = []
    for i, part in enumerate(spec.split(",")):
        name, _, n = part.partition(":")
        last = i == spec.count(",")
        if name not in ("balanced", "compute", "allslow") or \
                (not last and not (n.isdigit() and int(n) > 0)) or (last and n):
            raise argparse.ArgumentTypeError(
                f"bad phase {part!r}: want NAME:STEPS, the last NAME alone "
                "(NAME: balanced, compute or allslow)")
        out.append((name, int(n) if n else 0))
    return out


SIZE = 96


# Busy matmul loop: iterations per CPU-ms measured with thread CPU time, so
# the figure does not depend on how many ranks share a core right now.
def calibrate():
    a, b = torch.randn(SIZE, SIZE), torch.randn(SIZE, SIZE)
    for _ in range(20):
        torch.mm(a, b)
    n, t0 = 0, time.thread_time()
    while time.thread_time() - t0 < 0.3:
        for _ in range(50):
            torch.mm(a, b)
        n += 50
    return n / ((time.thread_time() - t0) * 1000.0)


# Burn about MS CPU-ms with matmuls (the "model compute" of one step).
def busy(iters, a, b):
    for _ in range(iters):
        torch.mm(a, b)


class Batches(Dataset):
    # Each item is a whole batch; the slow rank's worker sleeps first (the
    # delay is shared so the rank can set it from its measured step time).
    def __init__(self):
        self.delay_s = multiprocessing.Value("d", 0.0, lock=False)

    def __len__(self):
        return 1 << 40

    def __getitem__(self, i):
        if self.delay_s.value:
            time.sleep(self.delay_s.value)
        return torch.randn(32, 64), torch.randn(32, 8)


# A busy child pinned to CPU; it dies with its parent (PDEATHSIG and ppid).
def spawn_hog(cpu):
    pid = os.fork()
    if pid:
        return pid
    try:
        ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        os.sched_setaffinity(0, {cpu})
        parent, n = os.getppid(), 0
        while True:
            n += 1
            if n % 1000000 == 0 and os.getppid() != parent:
                break
    finally:
        os._exit(0)


# cpu mode layout (2 cores): the slow rank and its hogs on the last core, the
# others on the remaining ones, so only the slow rank is short of CPU.
def pin(args, rank):
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        sys.exit("ddp-straggle: cpu mode needs 2 CPUs; run it on a bigger machine")
    mine, rest = cpus[-1], set(cpus[:-1])
    if rank != args.slow_rank:
        os.sched_setaffinity(0, rest)
        return []
    os.sched_setaffinity(0, {mine})
    return [spawn_hog(mine) for _ in range(args.hogs)]


# Kill the hogs by pid.
def reap(hogs):
    for pid in hogs:
        try:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        except OSError:
            pass


# Per-rank compute factor, and for the input straggler the factor its loader
# delivers slower than the step time measured before (ranks share cores, so
# the wall step is longer than --step-ms).
def shape(args, rank, mode):
    slow = rank == args.slow_rank
    work, delay = 1.0, 0.0
    if mode == "allslow" or (mode == "compute" and slow):
        work = args.factor
    if mode == "input" and slow:
        delay = args.factor
    return work, delay


def main():
    args = parse()
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    torch.set_num_threads(1)
    rank = int(os.environ["RANK"])
    hogs = pin(args, rank) if args.mode == "cpu" else []
    try:
        run(args, rank)
    finally:
        reap(hogs)


# The training loop.
def run(args, rank):
    t_init = time.time()
    dist.init_process_group("gloo", init_method="env://")
    t_pg = time.time()
    rate = torch.tensor([calibrate()])
    dist.all_reduce(rate)  # everybody does the same work per "ms"
    rate = rate.item() / dist.get_world_size()
    plan = list(args.phases) or [(args.mode, 0)]
    phase_end, delay = 0, 0.0
    model = DDP(nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 8)))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    data = Batches()
    loader = DataLoader(data, batch_size=None, num_workers=1)
    a, b = torch.randn(SIZE, SIZE), torch.randn(SIZE, SIZE)
    if rank == 0:
        print(f"import {t_init - T0:.2f}s init_process_group {t_pg - t_init:.2f}s "
              f"calibrated {time.time() - t_pg:.2f}s rate {rate:.1f} mm/ms", flush=True)
    sums, n, step = [0.0, 0.0, 0.0], 0, 0
    it = iter(loader)
    t_prev = time.perf_counter()
    while args.steps == 0 or step < args.steps:
        if step == phase_end and plan:
            mode, count = plan.pop(0)
            phase_end = step + count if count else -1
            work, delay = shape(args, rank, mode)
            iters = max(1, int(rate * args.step_ms * work))
            if rank == 0 and args.phases:
                print(f"phase {mode}", flush=True)
        x, y = next(it)
        t_data = time.perf_counter()
        busy(iters, a, b)
        t_busy = time.perf_counter()
        opt.zero_grad()
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()  # DDP's allreduce
        opt.step()
        t_end = time.perf_counter()
        step += 1
        sums[0] += t_end - t_prev
        sums[1] += t_data - t_prev
        sums[2] += t_busy - t_data
        n += 1
        t_prev = t_end
        if step == 20 or (step == 40 and delay):  # leave the warm-up out
            if step == 40:  # steps 21-40 give the steady step time
                data.delay_s.value = sums[0] / n * delay
            sums, n = [0.0, 0.0, 0.0], 0
        if step % 10 == 0:
            if rank == 0:
                print(f"step {step}", flush=True)
            if args.stats and n:
                write_stats(args.stats, rank, step, sums, n)
    dist.destroy_process_group()


# Mean step / data-wait / compute ms since the start, for the report.
def write_stats(d, rank, step, sums, n):
    path = os.path.join(d, f"rank.{rank}")
    with open(path + ".tmp", "w") as f:
        f.write(f"rank {rank} steps {step} step_ms {sums[0] / n * 1000:.1f} "
                f"data_ms {sums[1] / n * 1000:.1f} busy_ms {sums[2] / n * 1000:.1f}\n")
    os.replace(path + ".tmp", path)


if __name__ == "__main__":
    main()
