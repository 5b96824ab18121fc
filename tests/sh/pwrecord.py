#!/usr/bin/python3
# Samples each rank's main thread from /proc without stopping it (state,
# blocking syscall, what its fd is, other threads running, schedstat), to see
# what working / waiting on a peer / waiting on input look like. No torch.
import argparse, collections, os, struct, sys, time

# x86_64 syscall numbers a training rank blocks in.
SYSCALLS = {0: "read", 1: "write", 7: "poll", 17: "pread64", 19: "readv",
            23: "select", 24: "sched_yield", 35: "nanosleep", 42: "connect",
            43: "accept", 44: "sendto", 45: "recvfrom", 46: "sendmsg",
            47: "recvmsg", 61: "wait4", 202: "futex", 219: "restart_syscall",
            230: "clock_nanosleep", 232: "epoll_wait", 270: "pselect6",
            271: "ppoll", 281: "epoll_pwait", 288: "accept4", 441: "epoll_pwait2", 82: "rename", 257: "openat", 3: "close", 9: "mmap", 11: "munmap"}
FD_ARG0 = {"read", "write", "pread64", "readv", "recvfrom", "recvmsg",
           "sendto", "sendmsg", "epoll_wait", "epoll_pwait", "epoll_pwait2",
           "accept", "accept4", "connect"}
warned = set()


# Parse the command line.
def parse():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("pids", nargs="*", type=int)
    p.add_argument("--agent", type=int, help="rank = python child of this pid")
    p.add_argument("--seconds", type=float, default=30.0)
    p.add_argument("--hz", type=float, default=20.0)
    p.add_argument("--raw", help="write samples 'rank state syscall fdkind others'")
    return p.parse_args()


# Read a /proc file, None when it is gone or denied.
def slurp(path, mode="r"):
    try:
        with open(path, mode) as f:
            return f.read()
    except OSError as e:
        if isinstance(e, PermissionError) and path not in warned:
            warned.add(path)
            print(f"pwrecord: {path}: permission denied", file=sys.stderr)
        return None


# Children of pid (all threads' children files).
def children(pid):
    out = []
    for tid in os.listdir(f"/proc/{pid}/task"):
        out += [int(c) for c in (slurp(f"/proc/{pid}/task/{tid}/children") or "").split()]
    return out


# The python ranks under the agent: python processes whose parent is not python.
def find_ranks(top):
    found, todo = {}, [top]
    while todo:
        pid = todo.pop()
        for c in children(pid):
            cmd = (slurp(f"/proc/{c}/cmdline") or "").split("\0")
            if "python" in os.path.basename(cmd[0]):
                env = (slurp(f"/proc/{c}/environ") or "").split("\0")
                rank = [e[5:] for e in env if e.startswith("RANK=")]
                found[int(rank[0]) if rank else c] = c
            else:
                todo.append(c)
    return found


# What fd N of pid is: socket.unix socket.tcp pipe file eventfd epoll anon
# none. A unix socket is not a peer: the DataLoader passes each batch's
# shared-memory fd over one (recvmsg), gloo and the store use TCP.
def fdkind(pid, fd):
    try:
        link = os.readlink(f"/proc/{pid}/fd/{fd}")
    except OSError:
        return "none"
    if link.startswith("socket:["):
        unix = slurp(f"/proc/{pid}/net/unix") or ""
        inode = [link[8:-1]]
        rows = unix.splitlines()[1:]
        return "socket.unix" if any(r.split()[6:7] == inode for r in rows) else "socket.tcp"
    for pre, kind in ( ("pipe:", "pipe"),
                      ("anon_inode:[eventfd]", "eventfd"),
                      ("anon_inode:[eventpoll]", "epoll"), ("anon_inode:", "anon")):
        if link.startswith(pre):
            return kind
    return "file"


# First pollfd's fd at address addr in pid's memory, None if unreadable.
def pollfd(pid, addr):
    try:
        with open(f"/proc/{pid}/mem", "rb", buffering=0) as f:
            f.seek(addr)
            return struct.unpack("i", f.read(4))[0]
    except (OSError, ValueError, struct.error) as e:
        key = "mem" + type(e).__name__
        if key not in warned:
            warned.add(key)
            print(f"pwrecord: /proc/{pid}/mem: {e}", file=sys.stderr)
        return None


# One sample of pid's main thread: (state, syscall, fdkind, others) or None.
def sample(pid):
    stat = slurp(f"/proc/{pid}/task/{pid}/stat")
    if stat is None:
        return None
    state = stat[stat.rindex(")") + 2]
    sc = (slurp(f"/proc/{pid}/task/{pid}/syscall") or "?").split()
    name, kind = "-", "-"
    if state != "R" and sc[0] not in ("running", "?"):
        nr = int(sc[0])
        name = SYSCALLS.get(nr, f"sys{nr}")
        arg0 = int(sc[1], 16)
        if name in FD_ARG0:
            kind = fdkind(pid, arg0)
        elif name in ("poll", "ppoll"):
            fd = pollfd(pid, arg0)
            kind = "?" if fd is None else fdkind(pid, fd)
    elif sc[0] == "?":
        name = "?"
    others = 0
    for tid in os.listdir(f"/proc/{pid}/task"):
        if int(tid) != pid:
            s = slurp(f"/proc/{pid}/task/{tid}/stat") or ")  "
            others |= s[s.rindex(")") + 2] == "R"
    return state, name, kind, int(others)


# cpu ns and run-delay ns of pid's main thread.
def schedstat(pid):
    s = (slurp(f"/proc/{pid}/task/{pid}/schedstat") or "0 0 0").split()
    return int(s[0]), int(s[1])


def main():
    args = parse()
    ranks = find_ranks(args.agent) if args.agent else dict(enumerate(args.pids))
    if not ranks:
        sys.exit("pwrecord: no ranks found; give PIDs or --agent PID of dtrun-agent")
    counts = {r: collections.Counter() for r in ranks}
    raw = open(args.raw, "w") if args.raw else None
    t0, s0 = time.monotonic(), {r: schedstat(p) for r, p in ranks.items()}
    next_t = t0
    while time.monotonic() - t0 < args.seconds:
        for r, pid in sorted(ranks.items()):
            s = sample(pid)
            if s:
                counts[r][s] += 1
                if raw:
                    st, name, kind, oth = s
                    raw.write(f"{r} {st} {name} {kind.split('.')[0]} {oth}\n")
        next_t += 1.0 / args.hz
        time.sleep(max(0.0, next_t - time.monotonic()))
    wall = (time.monotonic() - t0) * 1e9
    for r, pid in sorted(ranks.items()):
        c1, d1 = schedstat(pid)
        cpu, delay = (c1 - s0[r][0]) / wall, (d1 - s0[r][1]) / wall
        total = sum(counts[r].values()) or 1
        print(f"rank {r} pid {pid} samples {total} cpu {cpu:.2f} rundelay {delay:.2f}")
        for (st, name, kind, oth), n in counts[r].most_common():
            print(f"  {n:4d} {n / total:5.1%}  {st} {name:14s} {kind:11s} others={oth}")


if __name__ == "__main__":
    main()
