#!/usr/bin/python3
# torchserve.py PORTFILE -- PyTorch's own TCPStore server, as torchrun's
# agent hosts it for TORCHELASTIC_USE_AGENT_STORE=True ranks: a master
# TCPStore in this process that waits for no worker. Writes its port to
# PORTFILE (renamed into place, so it appears whole) and serves until
# SIGTERM or stdin closes.
import os
import resource
import signal
import sys
from datetime import timedelta

from torch.distributed import TCPStore

HOST = "127.0.0.1"


def main():
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    store = TCPStore(HOST, 0, None, True, timedelta(seconds=600),
                     wait_for_workers=False)
    with open(sys.argv[1] + ".tmp", "w") as f:
        f.write("%d\n" % store.port)
    os.rename(sys.argv[1] + ".tmp", sys.argv[1])
    signal.signal(signal.SIGTERM, lambda *a: sys.exit(0))
    signal.pause()
    del store


if __name__ == "__main__":
    main()
