#!/usr/bin/env python3
"""reencode.py FROM TO CHECK_TAIL DIR... -- carries fuzzing seeds over a
protocol bump, so the corpus keeps reaching past the version check: every
JOB that says version FROM (its first field; in a JOB sent in parts, the
first CONT's) says TO instead, and every CHECK gets CHECK_TAIL zero bytes
appended (the fields the new version added at its end; 0: none). Seeds are
streams of frames (u32 length, u8 type, payload); whatever follows the last
whole frame is kept as it is. Run mkcorpus afterwards: its named seeds are
made new by the real encoders.

    python3 fuzz/agent/reencode.py 8 9 12 fuzz/agent/corpus fuzz/agent/conversations
"""
import os
import struct
import sys

JOB, CONT, CHECK = 1, 8, 32


def frames(data):
    """[(type, payload)], and the bytes after the last whole frame."""
    out, off = [], 0
    while len(data) - off >= 5:
        (n,) = struct.unpack_from(">I", data, off)
        if n == 0 or len(data) - off - 4 < n:
            break
        out.append((data[off + 4], bytearray(data[off + 5:off + 4 + n])))
        off += 4 + n
    return out, data[off:]


def reencode(data, old, new, tail):
    fs, rest = frames(data)
    first = None  # the first CONT of a message in parts
    for t, p in fs:
        if t == CONT:
            if first is None:
                first = p
            continue
        head = first if first is not None else p
        if t == JOB and len(head) >= 4 and struct.unpack_from(">I", head)[0] == old:
            struct.pack_into(">I", head, 0, new)
        if t == CHECK:
            p.extend(b"\0" * tail)
        first = None
    return b"".join(struct.pack(">IB", len(p) + 1, t) + bytes(p)
                    for t, p in fs) + rest


def main():
    old, new, tail = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
    changed = 0
    for d in sys.argv[4:]:
        for name in sorted(os.listdir(d)):
            path = os.path.join(d, name)
            with open(path, "rb") as f:
                data = f.read()
            out = reencode(data, old, new, tail)
            if out != data:
                with open(path, "wb") as f:
                    f.write(out)
                changed += 1
    print("%d seeds changed" % changed)


if __name__ == "__main__":
    main()
