# store-client2.py PORT -- a TCPStore client of the validated generation
# (torch >= 2.2), written from PyTorch's TCPStore.cpp since no such torch
# is installed here: VALIDATE and PING on connect, each query as its
# SendBuffer lays it out, get() as WAIT then GET, and a wait that times
# out sending CANCEL_WAIT and reading WAIT_CANCELED (maybe after a late
# STOP_WAITING). Prints one "ok WHAT" line per step; exits 1 at a wrong
# answer. Last it sends QUEUE_PUSH, which the store does not serve, and
# prints "cut off" when the connection closes.
import os
import select
import socket
import struct
import sys

(VALIDATE, SET, COMPARE_SET, GET, ADD, CHECK, WAIT, GETNUMKEYS, DELETE_KEY,
 APPEND, MULTI_GET, MULTI_SET, CANCEL_WAIT, PING, QUEUE_PUSH) = range(15)
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=30)


def send(op, *parts):
    s.sendall(bytes([op]) + b"".join(parts))


def u64(v):
    return struct.pack("<Q", v)


def text(b):
    return u64(len(b)) + b


def recv(n):
    b = b""
    while len(b) < n:
        c = s.recv(n - len(b))
        if not c:
            raise EOFError("closed")
        b += c
    return b


def vec():
    return recv(struct.unpack("<Q", recv(8))[0])


def expect(what, got, want):
    if got != want:
        print("wrong %s: %r, want %r" % (what, got, want))
        sys.exit(1)
    print("ok", what)


def get(key):
    send(WAIT, u64(1), text(key))
    expect("wait " + key.decode(), recv(1), b"\x00")
    send(GET, text(key))
    return vec()


send(VALIDATE, struct.pack("<I", 0x3C85F7CE))
nonce = os.getpid() & 0xFFFFFFFF
send(PING, struct.pack("<I", nonce))
expect("ping", struct.unpack("<I", recv(4))[0], nonce)
send(SET, text(b"k"), text(b"v"))
expect("set, get", get(b"k"), b"v")
send(ADD, text(b"n"), struct.pack("<q", 5))
expect("add", struct.unpack("<q", recv(8))[0], 5)
send(APPEND, text(b"k"), text(b"w"))
expect("append", get(b"k"), b"vw")
send(COMPARE_SET, text(b"k"), text(b"vw"), text(b"z"))
expect("compare_set", vec(), b"z")
send(MULTI_SET, struct.pack("<q", 2), text(b"a"), text(b"1"), text(b"b"), text(b"2"))
send(MULTI_GET, u64(2), text(b"a"), text(b"b"))
expect("multi_set, multi_get", [vec(), vec()], [b"1", b"2"])
send(CHECK, u64(2), text(b"a"), text(b"nope"))
expect("check", recv(1), b"\x01")
send(GETNUMKEYS)
expect("num_keys", struct.unpack("<q", recv(8))[0], 4)
send(DELETE_KEY, text(b"a"))
expect("delete_key", struct.unpack("<q", recv(8))[0], 1)
# A wait that times out (0.5 s here): CANCEL_WAIT, then WAIT_CANCELED.
send(WAIT, u64(1), text(b"never"))
r, _, _ = select.select([s], [], [], 0.5)
expect("wait pending", r, [])
send(CANCEL_WAIT)
expect("cancel_wait", recv(1), b"\x01")
expect("after cancel, get", get(b"k"), b"z")
send(QUEUE_PUSH, text(b"q"), text(b"v"))
try:
    recv(1)
    print("answered QUEUE_PUSH")
except (EOFError, ConnectionError):
    print("cut off")
