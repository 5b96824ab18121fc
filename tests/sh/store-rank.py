# store-rank.py PORT RANK WORLD -- one torch rank as torchrun's agent store
# makes it: a TCPStore client (never the server) under the attempt's
# PrefixStore, gloo's init_process_group, then an all_reduce of RANK + 1;
# prints "rank RANK ok SUM".
import datetime
import sys

import torch
import torch.distributed as dist

port, rank, world = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
store = dist.TCPStore("127.0.0.1", port, world, False,
                      timeout=datetime.timedelta(seconds=60))
store = dist.PrefixStore("/worker/attempt_0", store)
dist.init_process_group("gloo", store=store, rank=rank, world_size=world,
                        timeout=datetime.timedelta(seconds=60))
t = torch.tensor([float(rank + 1)])
dist.all_reduce(t)
print("rank %d ok %d" % (rank, int(t.item())))
dist.destroy_process_group()
