#!/bin/bash
# t2011-rdzv-flood.sh -- floods of connections that say nothing, at the
# agent's rendezvous socket and at a rendezvous server's TCP port, as the
# job's user and as nobody: the workers still join, or the job fails at
# once saying why; it never waits.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/rdzv-lib.sh"

# What nobody runs lives where nobody can reach it, not in the build
# (which may sit in a clone under a 0700 home).
FLOODS=$(mktemp -d /tmp/dtrun-XXXX)
chmod 755 "$FLOODS"
test_at_exit 'rm -rf "$FLOODS"'
# flood.py unix NAME N HOLD | tcp PORT N HOLD -- opens N connections to the
# abstract Unix socket NAME (or 127.0.0.1:PORT) and sends nothing, at most
# HOLD open at once (the oldest closed first); prints how many it opened.
# With HOLD >= N it then holds them all until its stdin closes.
cat >"$FLOODS/flood.py" <<'EOS'
import collections, resource, socket, sys
kind, where, n, hold = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
want = hold + 64
if hard != resource.RLIM_INFINITY and want > hard:
    want = hard
if want > soft:
    resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
    soft = want
hold = max(1, min(hold, soft - 32))
held = collections.deque()
opened = 0
for i in range(n):
    if kind == "unix":
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        addr = "\0" + where
    else:
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        addr = ("127.0.0.1", int(where))
    s.settimeout(10)
    try:
        s.connect(addr)
    except OSError as e:
        print("connection %d: %s" % (i, e), file=sys.stderr)
        s.close()
        break
    opened += 1
    held.append(s)
    if len(held) > hold:
        held.popleft().close()
print(opened, flush=True)
if opened == n and hold >= n:
    sys.stdin.read()
EOS
chmod 644 "$FLOODS/flood.py"

# Rank 0 floods its agent's socket before any rank joins: 5,000
# connections that send nothing, as the job's user (2,000 held at once:
# more than the agent keeps) and, where we may, as nobody; then every
# rank joins. They once took channel numbers: past 1,024 of them dtrun
# dropped the real ranks' JOINs without a word and the job hung.
cat >"$TRASH/flooded-rank.sh" <<'EOS'
name=${DTRUN_RDZV_ADDR#unix:@}
if [ "$RANK" = 0 ]; then
	python3 "$FLOODS/flood.py" unix "$name" 5000 2000 </dev/null >flood.same || exit 9
	if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null && [ -x /usr/bin/python3 ]; then
		(cd / && exec setpriv --reuid=65534 --regid=65534 --clear-groups /usr/bin/python3 "$FLOODS/flood.py" unix "$name" 5000 5000) </dev/null >flood.nobody || exit 9
	fi
	touch flooded
fi
i=0
while [ ! -e flooded ] && [ $i -lt 1200 ]; do sleep 0.05; i=$((i + 1)); done
exec rdzv-probe -j -b
EOS
export FLOODS

test_expect_success '5,000 silent connections to the agent'"'"'s rendezvous socket: every rank still joins' '
	timeout -k 5 120 dtrun -n 4 --start-timeout 60 --prefix "" sh "$TRASH/flooded-rank.sh" >out 2>err &&
	test $(grep -c "^rank " out) -eq 4 &&
	test "$(cat flood.same)" = 5000 &&
	grep "connections\{0,1\} that sent nothing closed to keep at most" err &&
	if [ -e flood.nobody ]; then test "$(cat flood.nobody)" = 5000; fi
'

# A connection that says nothing is closed after 10 s: it once stayed
# open, and counted, for the whole job. The rank waits for the close
# (30 s at most) and says what it saw.
cat >"$TRASH/silent.py" <<'EOS'
import os, socket
s = socket.socket(socket.AF_UNIX)
s.connect("\0" + os.environ["DTRUN_RDZV_ADDR"][len("unix:@"):])
s.settimeout(30)
try:
    print("closed" if s.recv(1) == b"" else "data")
except socket.timeout:
    print("still open")
EOS

test_expect_success 'a silent connection to the agent'"'"'s socket is closed' '
	timeout -k 5 60 dtrun -n 1 --prefix "" python3 "$TRASH/silent.py" >out &&
	test "$(cat out)" = closed
'

# The direct TCP path (workers that dial the server with the secret):
# at the open-files limit (32, set on the running rdzv-serve) a
# stranger's 200 idle connections make the server drop the oldest that
# has not authenticated; they once made it abort the job, each worker
# hearing ABORT (and rdzv-serve, with no start timeout left, never
# ended).
test_expect_success 'direct TCP at the open-files limit: idle strangers are shed, the workers join' '
	serve_start -n 2 -t 60 &&
	prlimit --pid "$serve_pid" --nofile=32:32 &&
	port=${DTRUN_RDZV_ADDR##*:} &&
	mkfifo hold &&
	if [ "$(id -u)" = 0 ] && [ -x /usr/bin/python3 ]; then
		(cd / && exec setpriv --reuid=65534 --regid=65534 --clear-groups /usr/bin/python3 "$FLOODS/flood.py" tcp "$port" 200 200) <hold >flood.out 2>flood.err &
	else
		python3 "$FLOODS/flood.py" tcp "$port" 200 200 <hold >flood.out 2>flood.err &
	fi &&
	fp=$! &&
	echo "$fp" >>"$TRASH/pids" &&
	exec 8>hold &&
	wait_for 20 test -s flood.out &&
	test "$(cat flood.out)" = 200 &&
	{ DTRUN_RANK=0 timeout -k 5 60 rdzv-probe -j -b >out.0 2>err.0 & } &&
	w0=$! &&
	DTRUN_RANK=1 timeout -k 5 60 rdzv-probe -j -b >out.1 2>err.1 &&
	wait $w0 &&
	test "$(cat out.0 out.1 | grep -c "^rank ")" -eq 2 &&
	exec 8>&- &&
	wait "$fp" &&
	wait_for 30 eval "! proc_alive $serve_pid" &&
	serve_wait &&
	cat serve.err &&
	grep -q "2 of 2 joined" serve.err
'

test_done
