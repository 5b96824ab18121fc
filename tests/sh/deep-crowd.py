#!/usr/bin/env python3
"""deep-crowd.py [SECONDS [PER]] -- a stranger crowding TCP listeners (t3071).

Watches /proc/net/tcp for listeners that appear after it starts and opens
PER (300) idle connections to each, sending nothing; a connection the
other end closes is opened again, twice a second, so the crowd stays. It
prints "crowd ADDR:PORT N" once N are open to a listener, and ends on its
own after SECONDS (60): a second guard, after the test's kill by PID.
"""
import errno
import os
import resource
import socket
import sys
import time


def listeners():
    """The (addr, port) of every IPv4 TCP socket in LISTEN."""
    out = set()
    with open("/proc/net/tcp") as f:
        next(f)
        for line in f:
            fields = line.split()
            if fields[3] != "0A":
                continue
            addr, port = fields[1].split(":")
            ip = socket.inet_ntoa(bytes.fromhex(addr)[::-1])
            out.add((ip, int(port, 16)))
    return out


def dial(target):
    """A connection to target, its connect under way; None if none."""
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setblocking(False)
    try:
        s.connect(target)
    except BlockingIOError:
        pass
    except OSError:
        s.close()
        return None
    return s


def closed(s):
    """Whether the other end closed s (what it sent is left unread)."""
    try:
        return s.recv(1, socket.MSG_PEEK) == b""
    except BlockingIOError:
        return False
    except OSError as e:
        return e.errno != errno.ENOTCONN


def main():
    secs = float(sys.argv[1]) if len(sys.argv) > 1 else 60
    per = int(sys.argv[2]) if len(sys.argv) > 2 else 300
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    end = time.monotonic() + secs
    old = listeners()
    crowds = {}
    sweep = 0
    print("watching", flush=True)
    while time.monotonic() < end:
        now = listeners()
        for t in sorted(now - old - set(crowds)):
            crowds[t] = [s for s in (dial(t) for _ in range(per)) if s]
            print("crowd %s:%d %d" % (t[0], t[1], len(crowds[t])),
                  flush=True)
        if time.monotonic() >= sweep:
            sweep = time.monotonic() + 0.5
            for t, socks in crowds.items():
                if t not in now:
                    continue    # gone: nothing to crowd
                for i, s in enumerate(socks):
                    if closed(s):
                        s.close()
                        socks[i] = dial(t) or s
        time.sleep(0.01)


if __name__ == "__main__":
    main()
