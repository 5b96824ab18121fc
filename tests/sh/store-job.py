# store-job.py [MODE] -- one rank of a dtrun job on PyTorch's env:// (the
# store dtrun serves through the rank's agent): init_process_group over
# gloo, an all_reduce of RANK + 1, then prints
# "attempt A rank R of W sum S agent-store B at ADDR:PORT fresh N".
# fresh: what a raw ADD of 1 to a key outside the attempt's prefix gave
# rank 0 (1 in a store that is new this attempt; 0: not asked, rank 0
# hosting the store). MODE:
#   ok       as above
#   restart  rank 1 of attempt 0 exits 3 after its all_reduce
#   die      rank 2 SIGKILLs itself once connected to the store, before
#            init_process_group: the others wait in the store for it
import datetime
import os
import signal
import sys

import torch
import torch.distributed as dist

try:
    from torch.distributed.rendezvous import _torchelastic_use_agent_store
except ImportError:     # what torch reads, where the helper moved
    def _torchelastic_use_agent_store():
        return os.environ.get("TORCHELASTIC_USE_AGENT_STORE") == str(True)

mode = sys.argv[1] if len(sys.argv) > 1 else "ok"
rank = int(os.environ["RANK"])
world = int(os.environ["WORLD_SIZE"])
attempt = int(os.environ["TORCHELASTIC_RESTART_COUNT"])
addr, port = os.environ["MASTER_ADDR"], int(os.environ["MASTER_PORT"])
if mode == "die" and rank == 2:
    s = dist.TCPStore(addr, port, world, False, datetime.timedelta(seconds=30))
    s.add("dying", 1)
    os.kill(os.getpid(), signal.SIGKILL)
fresh = 0
# With --store rank0, rank 0's init_process_group starts the server.
if rank == 0 and _torchelastic_use_agent_store():
    raw = dist.TCPStore(addr, port, world, False, datetime.timedelta(seconds=30))
    fresh = raw.add("outside-the-prefix", 1)
dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=60))
t = torch.tensor([float(rank + 1)])
dist.all_reduce(t)
print("attempt %d rank %d of %d sum %d agent-store %s at %s:%d fresh %d" % (
    attempt, rank, world, int(t.item()), _torchelastic_use_agent_store(),
    addr, port, fresh), flush=True)
if mode == "restart" and attempt == 0 and rank == 1:
    sys.exit(3)
dist.destroy_process_group()
