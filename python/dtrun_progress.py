"""dtrun_progress -- tell dtrun's straggler watch each training step.

    import dtrun_progress
    for step, batch in enumerate(loader):
        ...
        dtrun_progress.step(step)

dtrun then measures every rank's seconds per step exactly, instead of from
the rhythm of its output lines, and names a rank (or host) that stays
slower than the others (dtrun --straggler-threshold, --on-straggler).
Under dtrun, DTRUN_PROGRESS names the agent's stream socket on this
host; the first call connects, and each call writes one line,
"RANK STEP MS\n" (MS: time.monotonic() in milliseconds, the host's
CLOCK_MONOTONIC), and never waits. Without
dtrun (or with its watch off) every call does nothing. Standard library
only; one file, installed by dtrun's "make install".
"""

import os
import socket
import time

__all__ = ["step"]

_sock = None  # None: not yet tried (or to try again); False: nothing to report to
_rank = None
_count = 0


def _open():
    global _sock, _rank
    _sock = False
    addr = os.environ.get("DTRUN_PROGRESS", "")
    rank = os.environ.get("DTRUN_RANK", os.environ.get("RANK"))
    if not addr.startswith("unix:@") or rank is None:
        return
    s = None
    try:
        _rank = int(rank)
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.setblocking(False)
        s.connect("\0" + addr[len("unix:@"):])
    except BlockingIOError:
        # The agent's queue of new connections is full for now.
        s.close()
        _sock = None
        return
    except (OSError, ValueError):
        if s is not None:
            s.close()
        return
    _sock = s


def step(n=None):
    """Reports that this rank finished step n (by default: one more than
    the last call's). Any increasing count will do: steps, batches."""
    global _count, _sock
    if _sock is None:
        _open()
    _count = _count + 1 if n is None else int(n)
    if not _sock:
        return
    # With the step's own time (CLOCK_MONOTONIC, as the agent's): the
    # agent reads its socket now and then, not at once.
    line = b"%d %d %d\n" % (_rank, _count, int(time.monotonic() * 1000))
    try:
        if _sock.send(line) == len(line):
            return
    except BlockingIOError:
        return  # a full buffer: the next step says as much
    except OSError:
        pass
    # A gone agent, or a line cut short (it would garble the next): done.
    _sock.close()
    _sock = False
