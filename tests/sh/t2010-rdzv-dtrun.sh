#!/bin/bash
# t2010-rdzv-dtrun.sh -- dtrun's own rendezvous: every worker started by dtrun
# gets its rank and the NCCL unique id through libdtcomm.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/rdzv-lib.sh"

# garbage.py: 4096 random bytes to the agent's rendezvous socket.
cat >"$TRASH/garbage.py" <<'EOS'
import os, socket
s = socket.socket(socket.AF_UNIX)
s.connect("\0" + os.environ["DTRUN_RDZV_ADDR"][len("unix:@"):])
s.sendall(os.urandom(4096))
s.close()
EOS
# bytes.py N: N connections to the agent's rendezvous socket, one byte
# each (a frame begun), held for a minute. The rank never joins: had it,
# its own connection's first byte could reach the agent before some of the
# flood's and be served, and the job would end well before the 1,026th.
cat >"$TRASH/bytes.py" <<'EOS'
import os, socket, sys, time
held = []
for i in range(int(sys.argv[1])):
    s = socket.socket(socket.AF_UNIX)
    s.connect("\0" + os.environ["DTRUN_RDZV_ADDR"][len("unix:@"):])
    s.send(b"\0")
    held.append(s)
time.sleep(60)
EOS
# ping.py: a rank that uses the rendezvous (a PING, answered) and never joins.
cat >"$TRASH/ping.py" <<'EOS'
import os, socket, time
s = socket.socket(socket.AF_UNIX)
s.connect("\0" + os.environ["DTRUN_RDZV_ADDR"][len("unix:@"):])
s.sendall(b"\0\0\0\x09\x07" + bytes(8))
s.recv(64)
time.sleep(60)
EOS

test_expect_success 'dtrun -n 8: 8 distinct ranks, one world, one local world' '
	dtrun -n 8 --prefix "" rdzv-probe -j >out &&
	test $(wc -l <out) -eq 8 &&
	for r in 0 1 2 3 4 5 6 7; do grep -qx "rank $r size 8 local $r node 0 nodes 1" out || return 1; done
'

if nccl_loadable; then
	test_expect_success 'dtrun -n 8: every rank gets rank 0'"'"'s NCCL id byte for byte' '
		dtrun -n 8 --prefix "" rdzv-probe -f >out &&
		test $(grep -c "^rank " out) -eq 8 &&
		test $(cut -d" " -f1-4 out | grep "^rank" | sort -u | wc -l) -eq 8 &&
		grep "^idfull " out | sort -u >ids &&
		test $(wc -l <ids) -eq 1 &&
		! grep -qE "^idfull 0+\$" ids
	'
else
	test_skip 'NCCL ids through dtrun' 'libnccl.so.2 not loadable here'
fi

test_expect_success 'placement from a hostfile reaches the rendezvous' '
	dtrun --launcher local -H a:2,b:3 --prefix "" rdzv-probe -j >out &&
	grep -qx "rank 1 size 5 local 1 node 0 nodes 2" out &&
	grep -qx "rank 4 size 5 local 2 node 1 nodes 2" out
'

# The ranks reach the rendezvous through their agent's Unix socket: only
# processes of the agent's user may use it. Rank 1 dials it as nobody,
# with a copy of rdzv-probe that nobody can reach.
if command -v setpriv >/dev/null && [ "$(id -u)" = 0 ]; then
	test_expect_success 'the agent'"'"'s rendezvous socket refuses another user, and the job fails' '
		nd=$(nobody_dir) &&
		test_at_exit "rm -rf $nd" &&
		test_expect_code 1 dtrun -n 3 sh -c "[ \$RANK = 1 ] && cd / && exec setpriv --reuid=65534 --regid=65534 --clear-groups $nd/helpers/rdzv-probe -j; exec rdzv-probe -j -b" 2>err >out &&
		grep -q "rank 1 on localhost (pid [0-9]*) exited with code 1" err &&
		grep -q "rdzv-probe: dtcomm_init" err &&
		! grep -q "^\[1\] rank" out
	'
else
	test_skip 'another user at the agent'"'"'s rendezvous socket' 'needs root and setpriv'
fi

test_expect_success 'no rank, agent or command line holds the job secret' '
	dtrun -n 2 --prefix "" sh -c "echo \"\$DTRUN_RDZV_ADDR tok=\${DTRUN_RDZV_TOKEN:-none}\" >env.\$RANK; for f in /proc/[0-9]*/environ; do tr \"\\0\" \"\\n\" <\$f 2>/dev/null; done | grep -c ^DTRUN_RDZV_TOKEN= >seen.\$RANK; exec rdzv-probe -j" >out &&
	grep -qx "unix:@dtrun-rdzv\.[-0-9a-f]*\.[0-9]*\.[0-9]* tok=none" env.0 &&
	cmp env.0 env.1 &&
	test "$(cat seen.0 seen.1)" = "$(printf "0\n0")" &&
	test $(grep -c "^rank " out) -eq 2
'

# 64 ranks joined and holding their connections: dtrun holds one link
# per agent, not a socket per rank (it had 64 more before).
test_expect_success 'every rank joined: dtrun holds no descriptor per rank' '
	dtrun -n 64 --prefix "" rdzv-probe -j -h 3 >out 2>err &
	d=$! &&
	wait_for 10 eval "[ \$(grep -c \"^rank \" out) -eq 64 ]" &&
	n=$(ls /proc/$d/fd | wc -l) &&
	echo "dtrun has $n descriptors" &&
	test $n -lt 32 &&
	wait $d
'

test_expect_success 'garbage sent to the agent'"'"'s rendezvous socket does not stop the job' '
	dtrun -n 4 --prefix "" sh -c "if [ \$RANK = 0 ]; then python3 $TRASH/garbage.py || exit 9; fi; exec rdzv-probe -j -b" >out &&
	test $(grep -c "^rank " out) -eq 4
'

# Every rank comes through its agent: no TCP port of dtrun's for anyone
# on the host (or, with ssh, the network) to flood. The ranks hold the
# job running while this looks at dtrun's sockets.
test_expect_success 'a local job: dtrun listens on no TCP port' '
	dtrun -n 2 --prefix "" sh -c "touch up.\$RANK; i=0; while [ ! -e go ] && [ \$i -lt 600 ]; do sleep 0.05; i=\$((i + 1)); done; exec rdzv-probe -j" >out 2>err &
	d=$! &&
	test_at_exit "kill $d 2>/dev/null" &&
	wait_for 20 test -e up.0 -a -e up.1 &&
	ls -l /proc/$d/fd | sed -n "s/.*socket:\[\([0-9]*\)\]\$/\1/p" >inodes &&
	test -s inodes &&
	awk "NR == FNR { ours[\$1] = 1; next } FNR > 1 && \$4 == \"0A\" && (\$10 in ours)" inodes /proc/net/tcp /proc/net/tcp6 >listening &&
	touch go &&
	wait $d &&
	test $(grep -c "^rank " out) -eq 2 &&
	cat listening &&
	! test -s listening
'

# --start-timeout counts from START (or, for ranks slower to reach the
# rendezvous, from their first request): ranks that use it but never
# join (here: a PING, then nothing) fail the job, where the clock once
# waited for a first join that never came.
test_expect_success 'ranks that use the rendezvous but never join: --start-timeout fails the job' '
	test_expect_code 125 timeout -k 5 60 dtrun -n 2 --start-timeout 2 python3 $TRASH/ping.py 2>err &&
	grep -q "2 of 2 ranks never joined" err
'

# The clock runs from START: the others need the time to start and join
# (3 s, on a loaded machine), rank 2 never comes.
test_expect_success 'a rank that never joins fails the job, named, after --start-timeout' '
	test_expect_code 125 dtrun -n 4 --start-timeout 3 sh -c "[ \$RANK = 2 ] && exec sleep 30; exec rdzv-probe -j -b" 2>err >out &&
	grep -q "1 of 4 ranks never joined: rank 2 on localhost" err &&
	grep -q "start-timeout 3" err
'

# Under an open-files limit of 64 (hard, so nothing can raise it), the
# rank opens 60 connections to its agent's rendezvous socket, each with a
# first byte (those that say nothing are closed for room): the agent,
# which has more open already, runs out first. It must say so and the
# job fail at once, not wait for --start-timeout with ranks that can
# never join (--timeout bounds a regression).
test_expect_success 'a rendezvous out of descriptors fails the job at once, saying so' '
	(ulimit -n 64 && test_expect_code 125 dtrun -n 1 --start-timeout 300 --timeout 30 --prefix "" python3 -c "
import os, socket, time
open(\"rank.pid\", \"w\").write(str(os.getpid()))
name = os.environ[\"DTRUN_RDZV_ADDR\"][len(\"unix:@\"):]
held = []
for i in range(60):
    s = socket.socket(socket.AF_UNIX)
    try:
        s.connect(\"\\0\" + name)
        s.send(b\"\\0\")
    except OSError:
        break
    held.append(s)
time.sleep(300)") 2>err &&
	grep -q ": the ranks'"'"' rendezvous: out of file descriptors at the open-files limit of 64 (hard limit 64): raise it" err &&
	grep -q "job failed: the rendezvous could not go on" err &&
	! any_alive rank.pid
'

# A process of the job's user opens 1,100 connections to the agent's
# socket, each with a first byte and no more: past 1,024 beyond the
# ranks dtrun cannot serve a channel, and the job fails at once saying
# so (its rank once failed later, in dtcomm_init, its channel refused
# without a word).
test_expect_success 'a rank'"'"'s channel dtrun cannot serve fails the job at once, saying why' '
	test_expect_code 125 timeout -k 5 60 dtrun -n 1 --prefix "" python3 $TRASH/bytes.py 1100 2>err &&
	grep "rendezvous: localhost.s agent carried a rank.s connection (channel 1026) that cannot be served: it is one too many: 1025 rendezvous connections are open for 1 rank (a process of the job.s user flooding localhost.s ranks. rendezvous socket?)" err &&
	grep -q "job failed: the rendezvous could not go on (see above)" err
'

test_expect_success 'workers that never use the rendezvous are not failed by it' '
	dtrun -n 2 --start-timeout 0.3 sleep 0.8
'

test_expect_success 'a worker blocked in a rendezvous wait learns the job is stopping' '
	test_expect_code 3 dtrun -n 3 --kill-grace 30 sh -c "[ \$RANK = 2 ] && { sleep 0.5; exit 3; }; trap \"\" TERM; exec rdzv-probe -j -b" 2>err &&
	grep -q "rank 2 on localhost (pid [0-9]*) exited with code 3" err
'

test_done
