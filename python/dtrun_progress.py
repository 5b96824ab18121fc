"""dtrun_progress -- tell dtrun's straggler watch each training step.

    import dtrun_progress
    for step, batch in enumerate(loader):
        ...
        dtrun_progress.step(step)

dtrun then measures every rank's seconds per step exactly, instead of from
the rhythm of its output lines, and names a rank (or host) that stays
slower than the others (dtrun --straggler-threshold, --on-straggler).
Under dtrun, DTRUN_PROGRESS names the agent's datagram socket on this
host; each call sends one datagram, "RANK STEP MS" (MS: time.monotonic()
in milliseconds, the host's CLOCK_MONOTONIC), and never waits. Without
dtrun (or with its watch off) every call does nothing. Standard library
only; one file, installed by dtrun's "make install".
"""

import os
import socket
import time

__all__ = ["step"]

_sock = None  # None: not yet tried; False: nothing to report to
_rank = None
_count = 0


def _open():
    global _sock, _rank
    _sock = False
    addr = os.environ.get("DTRUN_PROGRESS", "")
    rank = os.environ.get("DTRUN_RANK", os.environ.get("RANK"))
    if not addr.startswith("unix:@") or rank is None:
        return
    try:
        _rank = int(rank)
        s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        s.setblocking(False)
        s.connect("\0" + addr[len("unix:@"):])
    except (OSError, ValueError):
        return
    _sock = s


def step(n=None):
    """Reports that this rank finished step n (by default: one more than
    the last call's). Any increasing count will do: steps, batches."""
    global _count
    if _sock is None:
        _open()
    _count = _count + 1 if n is None else int(n)
    if not _sock:
        return
    try:
        # With the step's own time (CLOCK_MONOTONIC, as the agent's):
        # the agent reads its socket now and then, not at once.
        _sock.send(b"%d %d %d" % (_rank, _count,
                                  int(time.monotonic() * 1000)))
    except OSError:
        pass  # a full queue or a gone agent: the next step says as much
