#!/usr/bin/python3
# tcpstore.py N [PROCS] -- the same job as rdzv-load, on PyTorch's TCPStore:
# a server store in this process, N client stores spread over PROCS forked
# processes; client 0 sets a 128-byte "nccl_id", every client sets its own
# 128-byte key and gets "nccl_id" (waiting if need be), and keeps its
# connection open until its process is done. Prints
#	tcpstore: N clients in S s (F failed), PROCS procs
# timed from the moment all processes are ready to the last get.
import multiprocessing as mp
import os
import socket
import sys
import time
from datetime import timedelta

from torch.distributed import TCPStore

HOST = "127.0.0.1"
VAL = bytes(range(1, 129))


def free_port():
    s = socket.socket()
    s.bind((HOST, 0))
    port = s.getsockname()[1]
    s.close()
    return port


def client(lo, hi, port, go, release, q):
    import resource
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    stores, failed = [], 0
    go.wait()
    for i in range(lo, hi):
        try:
            s = TCPStore(HOST, port, None, False, timedelta(seconds=120),
                         wait_for_workers=False)
            if i == 0:
                s.set("nccl_id", VAL)
            s.set("rank/%d" % i, VAL)
            if s.get("nccl_id") != VAL:
                failed += 1
            stores.append(s)
        except Exception as e:  # noqa: BLE001 - count and go on
            if failed < 3:
                print("tcpstore: client %d: %s" % (i, e), file=sys.stderr)
            failed += 1
    q.put((hi - lo - failed, failed, time.monotonic()))
    release.wait()  # hold connections until the parent has every result


def main():
    n = int(sys.argv[1])
    procs = int(sys.argv[2]) if len(sys.argv) > 2 else 8
    import resource
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    port = free_port()
    server = TCPStore(HOST, port, None, True, timedelta(seconds=120),
                      wait_for_workers=False)
    ctx = mp.get_context("fork")
    go, release, q = ctx.Event(), ctx.Event(), ctx.Queue()
    ps = [ctx.Process(target=client,
                      args=(n * i // procs, n * (i + 1) // procs, port, go,
                            release, q))
          for i in range(procs)]
    for p in ps:
        p.start()
    time.sleep(1.0)  # every child imported and waiting
    t0 = time.monotonic()
    go.set()
    done = failed = 0
    last = t0
    for _ in ps:
        d, f, end = q.get()
        done, failed, last = done + d, failed + f, max(last, end)
    release.set()
    for p in ps:
        p.join()
    del server
    print("tcpstore: %d clients in %.3f s (%d failed), %d procs"
          % (n, last - t0, failed + n - done - failed, procs))
    return 0 if failed == 0 and done == n else 1


if __name__ == "__main__":
    sys.exit(main())
