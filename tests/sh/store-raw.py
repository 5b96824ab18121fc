# store-raw.py WHAT PORT -- a bare TCPStore client on 127.0.0.1:PORT, in
# torch 1.13's (legacy) wire format, for what torch's own client will not
# do. Prints one line:
#   add KEY   ADD of 1 to KEY: "answered N" (the sum), or "closed"
#   big       a SET that announces a 1 GiB value and sends 8 MiB of it:
#             "closed" once the server shuts the connection, or "answered"
#             if it ever sends something back
import socket
import struct
import sys

what, port = sys.argv[1], int(sys.argv[2])
s = socket.create_connection(("127.0.0.1", port), timeout=20)


def key(k):
    return struct.pack("<Q", len(k)) + k


def reply(n):
    got = b""
    try:
        while len(got) < n:
            b = s.recv(n - len(got))
            if not b:
                return None
            got += b
    except (ConnectionResetError, socket.timeout):
        return None
    return got


if what == "add":
    s.sendall(bytes([3]) + key(sys.argv[3].encode()) + struct.pack("<q", 1))
    r = reply(8)
    print("closed" if r is None else "answered %d" % struct.unpack("<q", r)[0])
elif what == "big":
    try:
        s.sendall(bytes([0]) + key(b"big") + struct.pack("<Q", 1 << 30))
        for _ in range(8):
            s.sendall(b"x" * (1 << 20))
    except (BrokenPipeError, ConnectionResetError):
        pass
    print("closed" if reply(1) is None else "answered")
