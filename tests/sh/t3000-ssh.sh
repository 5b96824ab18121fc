#!/bin/bash
# t3000-ssh.sh -- the ssh launcher against a private sshd on 127.0.0.1-3.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/sshd.sh"

if why=$(sshd_skip_reason); then
	test_skip 'ssh launcher scenarios' "$why"
	test_done
fi
sshd_start || { echo "could not start sshd"; exit 1; }
AGENTS=$TRASH/agents
H3=127.0.0.1:2,127.0.0.2:2,127.0.0.3:2
# Every run caches the agent in $AGENTS (the first one uploads it).
run() { dtrun_ssh --ssh-agent-dir "$AGENTS" "$@"; }
SSH_ARGS+=(--ssh-agent-dir "$AGENTS")

test_expect_success 'a host without the agent gets it uploaded, then reused' '
	run -v -H 127.0.0.2 true 2>err &&
	grep -q "127.0.0.2: no dtrun-agent of this build there: uploading it" err &&
	test -x "$AGENTS"/*/dtrun-agent &&
	run -v -H 127.0.0.2 true 2>err2 &&
	! grep -q uploading err2
'

test_expect_success '6 ranks on 3 hosts: placement and environment' '
	run -H $H3 --prefix "" sh -c "echo \$RANK \$LOCAL_RANK \$NODE_RANK \$WORLD_SIZE \$LOCAL_WORLD_SIZE \$NNODES \$(echo \$SSH_CONNECTION | cut -d\" \" -f3,4) \$MASTER_ADDR" >out &&
	sort -n out >got &&
	cat >want <<-EOW &&
	0 0 0 6 2 3 127.0.0.1 $SSHD_PORT 127.0.0.1
	1 1 0 6 2 3 127.0.0.1 $SSHD_PORT 127.0.0.1
	2 0 1 6 2 3 127.0.0.2 $SSHD_PORT 127.0.0.1
	3 1 1 6 2 3 127.0.0.2 $SSHD_PORT 127.0.0.1
	4 0 2 6 2 3 127.0.0.3 $SSHD_PORT 127.0.0.1
	5 1 2 6 2 3 127.0.0.3 $SSHD_PORT 127.0.0.1
	EOW
	diff want got
'

test_expect_success '6 ranks on 3 hosts join the rendezvous through their agents' '
	run -H $H3 --prefix "" sh -c "echo \$DTRUN_RDZV_ADDR; exec $B/helpers/rdzv-probe -j" >out &&
	test $(grep -c "^unix:@dtrun-rdzv\." out) -eq 6 &&
	for r in 0 1 2 3 4 5; do
		grep -qx "rank $r size 6 local $((r % 2)) node $((r / 2)) nodes 3" out || return 1
	done
'

test_expect_success 'the job secret and environment are not on any command line' '
	SECRETISH=s3cr3t-value run -H 127.0.0.2 -x SECRETISH sh -c "ps -eo args; echo \$SECRETISH" >out &&
	test "$(grep -c s3cr3t-value out)" -eq 1 && grep -qx "\[0\] s3cr3t-value" out &&
	grep -q "dtrun-agent" out &&
	true
'

test_expect_success 'ranks run in the launcher'"'"'s directory' '
	mkdir -p sub && cd sub &&
	run -H 127.0.0.3 pwd >out && grep -qx "\[0\] $PWD" out
'

test_expect_success 'the %h prefix names each rank'"'"'s host' '
	run -H $H3 --prefix "%h/%r: " echo hi >out &&
	grep -qx "127.0.0.2/3: hi" out && grep -qx "127.0.0.3/4: hi" out &&
	test $(wc -l <out) -eq 6
'

test_expect_success 'output over ssh is packed, and arrives whole and in order, text or not' '
	run -vv -H 127.0.0.1:2,127.0.0.2:2 --prefix "" sh -c "seq -f \"\$RANK %g the quick brown fox jumps over the lazy dog\" 20000" >out 2>err &&
	for r in 0 1 2 3; do
		seq -f "$r %g the quick brown fox jumps over the lazy dog" 20000 >want.$r &&
		grep "^$r " out >got.$r &&
		cmp want.$r got.$r || return 1
	done &&
	test $(wc -l <out) -eq 80000 &&
	grep -E "127.0.0.1: done; its frames, [0-9]+ bytes so far, came in [0-9]+ bytes \(packed\)" err &&
	grep -E "127.0.0.2: done; .*\(packed\)" err &&
	od -An -v -tx1 -N 3000000 /dev/urandom >rnd &&
	run -H 127.0.0.2 --prefix "" cat rnd >got &&
	cmp rnd got
'

test_expect_success 'MASTER_PORT: with --store rank0 one port for all, free on rank 0'"'"'s host; else each host'"'"'s agent'"'"'s' '
	run -H $H3 --store rank0 --prefix "" sh -c "echo \$MASTER_PORT" >out &&
	test $(sort -u out | wc -l) -eq 1 && grep -qE "^[0-9]+\$" out &&
	run -H $H3 --prefix "" sh -c "echo \$DTRUN_NODE_RANK \$MASTER_ADDR:\$MASTER_PORT \$DTRUN_STORE" >out &&
	test $(wc -l <out) -eq 6 &&
	while read -r node addr store; do
		test "$addr" = "$store" && case $addr in 127.0.0.1:[0-9]*) ;; *) false ;; esac || return 1
	done <out &&
	test $(sort -u out | wc -l) -eq 3 && test $(cut -d" " -f2 out | sort -u | wc -l) -eq 3
'

test_expect_success 'fail-fast across hosts: the code, the report, no survivors' '
	test_expect_code 5 run -H $H3 sh -c "echo \$\$ >\$PWD/pid.\$RANK; sleep 300 & echo \$! >\$PWD/child.\$RANK; [ \$RANK = 4 ] && { sleep 0.5; exit 5; }; wait" 2>err &&
	grep -q "rank 4 on 127.0.0.3 (pid [0-9]*) exited with code 5; stopping 5 other ranks" err &&
	wait_gone 5 pid.* child.*
'

# libssh2 writes a packet and the next in two sends: with Nagle on, the
# second waits for the peer's delayed ACK (40 ms) at each step of the login.
test_expect_success 'the ssh connection has TCP_NODELAY' '
	dtrun "${SSH_ARGS[@]}" -H 127.0.0.2 sh -c "echo \$\$ >\$PWD/pid.nd; exec sleep 300" &
	d=$! &&
	wait_for 15 test -s pid.nd &&
	{ "$B/helpers/tcp-nodelay" $d $SSHD_PORT >nd; rc=$?; } &&
	kill $d && { wait $d || true; } &&
	if [ $rc = 77 ]; then skip_test "cannot borrow a socket (pidfd_getfd)"; fi &&
	test $rc = 0 &&
	grep -qx "nodelay=1" nd && ! grep -q "nodelay=0" nd
'

test_expect_success 'kill -9 of dtrun leaves no rank on any host' '
	dtrun "${SSH_ARGS[@]}" -H $H3 sh -c "echo \$\$ >\$PWD/pid.\$RANK; exec sleep 300" &
	d=$!
	wait_for 15 eval "[ \$(ls pid.* 2>/dev/null | wc -l) -eq 6 ]" &&
	kill -9 $d && { wait $d || true; } &&
	wait_gone 5 pid.*
'

# The agent dtrun -v names is the one that dies; its keeper, sshd's child,
# kills the daemon a rank started with setsid, which nothing else would.
test_expect_success 'kill -9 of an agent: exit 255, its ranks and daemons gone' '
	dtrun "${SSH_ARGS[@]}" -v -H 127.0.0.1,127.0.0.2 sh -c "echo \$\$ >\$PWD/pid.\$RANK; setsid sh -c \"echo \\\$\\\$ >\$PWD/daemon.\$RANK; exec sleep 300\" & wait" 2>err &
	d=$!
	wait_for 15 eval "[ \$(cat pid.* daemon.* 2>/dev/null | grep -cx \"[0-9][0-9]*\") -eq 4 ]" &&
	agent=$(sed -n "s/.*127.0.0.2: agent pid \([0-9]*\) on .* connected/\1/p" err) &&
	test -n "$agent" &&
	kill -9 $agent &&
	test_expect_code 255 wait $d &&
	grep -q "lost the agent on 127.0.0.2" err &&
	wait_gone 5 pid.* daemon.*
'

# A stopped agent answers nothing: dtrun gives its host up (255), and the
# agent's keeper, which the agent no longer beats to, kills what ran under
# it (the agent itself stays stopped, as whoever stopped it left it).
test_expect_success 'SIGSTOP of an agent: exit 255; its keeper kills its ranks, their children and daemons' '
	rm -f pid.* daemon.* &&
	dtrun "${SSH_ARGS[@]}" -v --heartbeat-timeout 1 -H 127.0.0.1,127.0.0.2 sh -c "echo \$\$ >\$PWD/pid.\$RANK; sleep 300 & echo \$! >\$PWD/child.\$RANK; setsid sh -c \"echo \\\$\\\$ >\$PWD/daemon.\$RANK; exec sleep 300\" & wait" 2>err &
	d=$!
	wait_for 15 eval "[ \$(cat pid.* child.* daemon.* 2>/dev/null | grep -cx \"[0-9][0-9]*\") -eq 6 ]" &&
	agent=$(sed -n "s/.*127.0.0.2: agent pid \([0-9]*\) on .* connected/\1/p" err) &&
	test -n "$agent" &&
	test_at_exit "kill -9 $agent 2>/dev/null" &&
	kill -STOP $agent &&
	test_expect_code 255 wait $d &&
	grep -q "lost the agent on 127.0.0.2" err &&
	wait_gone 30 pid.1 child.1 daemon.1 &&
	test "$(sed "s/.*) //" /proc/$agent/stat | cut -c1)" = T
'

# Over ssh the agent has a keeper of its own, sshd's child (keeper.c; on
# dtrun's own host dtrun keeps it). sbatch --signal without B: signals a
# whole step, keeper too: USR1 and USR2 leave it be.
test_expect_success 'an agent and its keeper that get USR1 themselves live on' '
	rm -f pid.* stop &&
	dtrun "${SSH_ARGS[@]}" -v -H 127.0.0.2 sh -c "echo \$\$ >\$PWD/pid.\$RANK; while [ ! -e \$PWD/stop ]; do sleep 0.05; done" 2>err &
	d=$!
	wait_for 15 test -s pid.0 &&
	agent=$(sed -n "s/.*127.0.0.2: agent pid \([0-9]*\) on .* connected/\1/p" err) &&
	keeper=$(ps -o ppid= -p $agent | tr -d " ") &&
	test "$(cat /proc/$keeper/comm)" = dtrun-agent &&
	kill -USR1 $agent $keeper &&
	kill -USR2 $agent $keeper &&
	touch stop &&
	wait $d
'

test_expect_success 'a killed keeper: the agent stops everything itself' '
	rm -f pid.* daemon.* &&
	dtrun "${SSH_ARGS[@]}" -v -H 127.0.0.2 sh -c "echo \$\$ >\$PWD/pid.\$RANK; setsid sh -c \"echo \\\$\\\$ >\$PWD/daemon.\$RANK; exec sleep 300\" & wait" 2>err &
	d=$!
	wait_for 15 eval "[ \$(cat pid.* daemon.* 2>/dev/null | grep -cx \"[0-9][0-9]*\") -eq 2 ]" &&
	agent=$(sed -n "s/.*127.0.0.2: agent pid \([0-9]*\) on .* connected/\1/p" err) &&
	keeper=$(ps -o ppid= -p $agent | tr -d " ") &&
	test "$(cat /proc/$keeper/comm)" = dtrun-agent &&
	kill -9 $keeper &&
	test_expect_code 255 wait $d &&
	# The agent says why, unless sshd, seeing its child gone, closed the
	# channel first: then the agent sees its link end. Either way it stops all.
	{ grep -q "the agent.s keeper (pid $keeper) was killed: stopping its ranks" err ||
	    grep -q "lost the agent on 127.0.0.2 (the ssh channel closed)" err || { cat err; exit 1; }; } &&
	wait_gone 5 pid.* daemon.*
'

test_expect_success 'Ctrl-C stops every host'"'"'s ranks' '
	dtrun "${SSH_ARGS[@]}" -H $H3 sh -c "echo \$\$ >\$PWD/pid.\$RANK; exec sleep 300" 2>err &
	d=$!
	wait_for 15 eval "[ \$(ls pid.* 2>/dev/null | wc -l) -eq 6 ]" &&
	kill -INT $d && test_expect_code 130 wait $d &&
	wait_gone 5 pid.*
'

test_expect_success 'an unreachable host: named, non-zero, nothing left running' '
	test_expect_code 255 run -H 127.0.0.1,127.0.0.2,127.0.0.9 sh -c "echo \$\$ >\$PWD/pid.\$RANK; exec sleep 300" 2>err &&
	grep -q "127.0.0.9: cannot connect to 127.0.0.9 port $SSHD_PORT: Connection refused" err &&
	! ls pid.* 2>/dev/null
'

test_expect_success 'a missing command on a host: exit 2, nothing started anywhere' '
	test_expect_code 2 run -H $H3 no-such-cmd-xyz 2>err &&
	grep -q "no-such-cmd-xyz: command not found in PATH" err
'

test_expect_success 'a wrong key: authentication failed, naming the keys tried' '
	ssh-keygen -q -t ed25519 -N "" -f wrongkey </dev/null &&
	test_expect_code 255 env HOME=$PWD dtrun --launcher ssh -p $SSHD_PORT -i "$PWD/wrongkey" --ssh-option UserKnownHostsFile=$SSH_KNOWN -H 127.0.0.2 true 2>err &&
	grep -q "127.0.0.2: authentication failed for user root (tried: $PWD/wrongkey)" err
'

test_expect_success 'an unknown host key is refused with StrictHostKeyChecking yes' '
	: >known &&
	test_expect_code 255 dtrun --launcher ssh -p $SSHD_PORT -i "$SSH_KEY" --ssh-option UserKnownHostsFile=$PWD/known -H 127.0.0.2 true 2>err &&
	grep -q "host key not known" err && grep -q "ssh-keyscan -p $SSHD_PORT 127.0.0.2" err
'

test_expect_success 'accept-new adds an unknown host key, then it is known' '
	: >known &&
	run --ssh-option UserKnownHostsFile=$PWD/known --ssh-option StrictHostKeyChecking=accept-new -H 127.0.0.2 true &&
	grep -q "^\[127.0.0.2\]:$SSHD_PORT ssh-ed25519 " known &&
	dtrun --launcher ssh -p $SSHD_PORT -i "$SSH_KEY" --ssh-agent-dir "$AGENTS" --ssh-option UserKnownHostsFile=$PWD/known -H 127.0.0.2 true
'

test_expect_success 'a changed host key is refused, even with accept-new' '
	ssh-keygen -q -t ed25519 -N "" -f otherhost </dev/null &&
	echo "[127.0.0.2]:$SSHD_PORT $(cat otherhost.pub)" >known &&
	test_expect_code 255 dtrun --launcher ssh -p $SSHD_PORT -i "$SSH_KEY" --ssh-option UserKnownHostsFile=$PWD/known --ssh-option StrictHostKeyChecking=accept-new -H 127.0.0.2 true 2>err &&
	grep -q "HOST KEY MISMATCH" err && grep -q "ssh-keygen -f $PWD/known -R" err
'

test_expect_success 'an ssh_config alias: HostName, Port, IdentityFile; ControlMaster warned' '
	cat >config <<-EOC &&
	Host node-b
	    HostName 127.0.0.2
	    Port $SSHD_PORT
	    IdentityFile $SSH_KEY
	    UserKnownHostsFile $SSH_KNOWN
	    ControlMaster auto
	EOC
	dtrun --ssh-agent-dir "$AGENTS" -F config -H node-b --prefix "%h " sh -c "echo \$SSH_CONNECTION | cut -d\" \" -f3,4" >out 2>err &&
	grep -qx "node-b 127.0.0.2 $SSHD_PORT" out &&
	grep -q "config:6: ControlMaster is not supported by dtrun" err
'

test_expect_success 'a hostfile with ranges and user@host' '
	printf "# two hosts\n127.0.0.[2-3] slots=2\nroot@127.0.0.1\n" >hosts &&
	run -H hosts --prefix "%h " sh -c "echo \$RANK" >out &&
	test $(wc -l <out) -eq 5 && grep -qx "127.0.0.1 4" out && grep -qx "127.0.0.3 3" out
'

test_expect_success '--ssh-fanout 1 still reaches every host' '
	run --ssh-fanout 1 -H $H3 true
'

# Three "hosts" that take the TCP connection and never answer it (no ssh
# banner), each logging what a connection's first bytes are. With a fan-out
# of 1 the first holds the only slot until its ConnectTimeout fails the job,
# so the others are never dialled; all at once, they would be at the start.
# A connection of ours (P) to each, after dtrun ends, is logged after any
# earlier one: it is what the test waits for.
cat >"$TRASH/mute-hosts.py" <<'EOS'
import os, select, socket, sys
socks = []
for i in range(3):
	s = socket.socket()
	s.bind(("127.0.0.%d" % (i + 1), 0))
	s.listen(16)
	socks.append(s)
# Its own pid first: python3 may be a shim that forks, so $! is not it.
print(os.getpid(), " ".join(str(s.getsockname()[1]) for s in socks), flush=True)
log, held = open(sys.argv[1], "a", buffering=1), []
while True:
	for s in select.select(socks, [], [])[0]:
		c = s.accept()[0]
		c.settimeout(5)
		try:
			b = c.recv(4)
		except OSError:
			b = b""
		log.write("%d %s\n" % (socks.index(s) + 1, b.decode("ascii", "replace")))
		held.append(c)
EOS

test_expect_success '--ssh-fanout 1: the next host is dialled only once one is done' '
	{ command -v python3 >/dev/null || skip_test "no python3"; } &&
	python3 "$TRASH/mute-hosts.py" dialled >ports &
	test_at_exit "kill \$(cut -d\" \" -f1 $PWD/ports) 2>/dev/null" &&
	wait_for 10 test -s ports &&
	set -- $(cut -d" " -f2- ports) &&
	printf "127.0.0.1 port=%s\n127.0.0.2 port=%s\n127.0.0.3 port=%s\n" "$@" >hosts &&
	test_expect_code 255 run -v --ssh-fanout 1 --ssh-option ConnectTimeout=2 -H hosts true 2>err &&
	cat err &&
	grep -q "127.0.0.1: timed out after 2 s" err &&
	printf P >/dev/tcp/127.0.0.2/$2 &&
	printf P >/dev/tcp/127.0.0.3/$3 &&
	wait_for 20 grep -qx "2 P" dialled &&
	wait_for 20 grep -qx "3 P" dialled &&
	cat dialled &&
	grep -qx "1 SSH-" dialled &&
	test "$(grep -c "^[23] " dialled)" = 2
'

# --max-restarts over ssh: attempt 0 sleeps on 3 hosts until the test
# kills 127.0.0.3's agent; attempt 1 runs without it, on 2 hosts (--min-np),
# and no rank of attempt 0 is alive when it starts.
RESTARTER='a=$DTRUN_RESTART_COUNT; for f in $PWD/pid.0.*; do [ $a = 0 ] && break; p=$(cat $f); grep -qv " [ZX] " /proc/$p/stat 2>/dev/null && echo $p >>$PWD/leftovers; done; echo $$ >$PWD/pid.$a.$RANK; echo "attempt $a world $WORLD_SIZE on $DTRUN_HOST"; [ $a = 0 ] && exec sleep 300; exit 0'

test_expect_success '--max-restarts: a lost host is dropped (--min-np), the job runs again without it' '
	dtrun "${SSH_ARGS[@]}" -v -H 127.0.0.1,127.0.0.2,127.0.0.3 -n 3 --min-np 2 --max-restarts 1 --restart-delay 0 sh -c "$RESTARTER" >out 2>err &
	d=$!
	wait_for 15 eval "[ \$(ls pid.0.* 2>/dev/null | wc -l) -eq 3 ]" &&
	agent=$(sed -n "s/.*127.0.0.3: agent pid \([0-9]*\) on .* connected/\1/p" err) &&
	test -n "$agent" &&
	kill -9 $agent &&
	wait $d &&
	grep -q "lost the agent on 127.0.0.3" err &&
	grep -q "dropped lost host 127.0.0.3: the next attempt runs 2 ranks on 2 hosts (--min-np)" err &&
	grep -q "attempt 0 at .* exit 255: lost the agent on 127.0.0.3.*(dropped 127.0.0.3)" err &&
	test "$(grep -c "attempt 1 world 2 on 127.0.0.[12]\$" out)" = 2 &&
	! grep -q "attempt 1 .* on 127.0.0.3" out &&
	test ! -e leftovers &&
	wait_gone 5 pid.*
'

# A rank that notes its agent (its parent) and any rank of attempt 0 still
# alive; rank 0 fails attempt 0 once every rank runs.
REUSER='a=$DTRUN_RESTART_COUNT; for f in $PWD/pid.0.*; do [ $a = 0 ] && break; p=$(cat $f); grep -qv " [ZX] " /proc/$p/stat 2>/dev/null && echo $p >>$PWD/leftovers; done; echo $$ >$PWD/pid.$a.$RANK; echo "attempt $a rank $RANK agent $PPID rdzv $DTRUN_RDZV_ADDR port $MASTER_PORT"; [ $a = 0 ] || exit 0; [ $RANK = 0 ] || exec sleep 300; while [ $(ls $PWD/pid.0.* | wc -l) -lt $WORLD_SIZE ]; do sleep 0.05; done; exit 3'

test_expect_success '--max-restarts keeps each host'"'"'s agent: the same pid, a fresh rendezvous socket and port, nothing of attempt 0 left' '
	rm -f pid.* leftovers &&
	dtrun "${SSH_ARGS[@]}" -H 127.0.0.1:2,127.0.0.2:2,127.0.0.3:2 --max-restarts 1 --restart-delay 0 --timeout 60 sh -c "$REUSER" >out 2>err &&
	for r in 0 1 2 3 4 5; do
		a0=$(sed -n "s/.*attempt 0 rank $r agent \([0-9]*\) .*/\1/p" out) &&
		a1=$(sed -n "s/.*attempt 1 rank $r agent \([0-9]*\) .*/\1/p" out) &&
		test -n "$a0" && test "$a0" = "$a1" || return 1
	done &&
	t0=$(sed -n "s/.*attempt 0 rank 0 .* rdzv \(unix:@[^ ]*\) .*/\1/p" out) &&
	t1=$(sed -n "s/.*attempt 1 rank 0 .* rdzv \(unix:@[^ ]*\) .*/\1/p" out) &&
	test -n "$t0" && test "$t0" != "$t1" &&
	p0=$(sed -n "s/.*attempt 0 rank 0 .* port //p" out) &&
	p1=$(sed -n "s/.*attempt 1 rank 0 .* port //p" out) &&
	test -n "$p0" && test "$p0" != "$p1" &&
	test ! -e leftovers &&
	wait_gone 5 pid.*
'

test_expect_success '--max-restarts without --min-np: a lost host that -n needs is kept' '
	dtrun "${SSH_ARGS[@]}" -v -H 127.0.0.1,127.0.0.2 -n 2 --max-restarts 1 --restart-delay 0 sh -c "$RESTARTER" >out 2>err &
	d=$!
	wait_for 15 eval "[ \$(ls pid.0.* 2>/dev/null | wc -l) -eq 2 ]" &&
	agent=$(sed -n "s/.*127.0.0.2: agent pid \([0-9]*\) on .* connected/\1/p" err) &&
	test -n "$agent" &&
	kill -9 $agent &&
	wait $d &&
	grep -q "keeping lost host 127.0.0.2 for the next attempt" err &&
	test "$(grep -c "attempt 1 world 2 on 127.0.0.[12]\$" out)" = 2 &&
	test ! -e leftovers &&
	wait_gone 5 pid.*
'

# A rank that records each USR1 in got.RANK and ends once "stop" exists.
cat >"$TRASH/sigrank" <<'EOF'
#!/bin/sh
trap 'echo usr1 >>got.$RANK' USR1
echo $$ >pid.$RANK
while [ ! -e stop ]; do sleep 0.05; done
EOF
chmod +x "$TRASH/sigrank"

test_expect_success 'USR1 reaches every rank on every host and the job goes on' '
	dtrun "${SSH_ARGS[@]}" -H $H3 --forward-signals USR1 "$TRASH/sigrank" 2>err &
	d=$!
	wait_for 15 eval "[ \$(ls pid.* 2>/dev/null | wc -l) -eq 6 ]" &&
	kill -USR1 $d &&
	wait_for 15 eval "[ \$(cat got.* 2>/dev/null | wc -l) -eq 6 ]" &&
	proc_alive $d &&
	touch stop &&
	wait $d &&
	test "$(cat got.* | sort -u)" = usr1
'

test_expect_success '--setup runs on each host; its variables reach that host'"'"'s ranks' '
	run -H $H3 --prefix "" --setup "echo HOSTVAR=node\$DTRUN_NODE_RANK; echo \$\$ >>setup-pids" \
	    sh -c "echo \$RANK \$HOSTVAR" >out &&
	sort -n out >got &&
	printf "0 node0\n1 node0\n2 node1\n3 node1\n4 node2\n5 node2\n" >want &&
	diff want got &&
	test $(sort -u setup-pids | wc -l) -eq 3
'

test_expect_success 'a setup failing on one host: exit 2, its stderr shown, the other setups killed, no rank started' '
	test_expect_code 2 run -H $H3 --setup "if [ \$DTRUN_NODE_RANK = 1 ]; then while [ ! -s s.0 ] || [ ! -s s.2 ]; do sleep 0.05; done; echo venv missing >&2; exit 4; fi; echo \$\$ >s.\$DTRUN_NODE_RANK; exec sleep 300" \
	    sh -c "touch started.\$RANK" 2>err &&
	test $(grep -c -- "--setup exited with 4, so no rank was started on any host" err) -eq 1 &&
	grep -q "setup: venv missing" err &&
	! ls started.* 2>/dev/null &&
	wait_gone 10 s.0 s.2
'

test_expect_success '-x PATTERN and --env-file carry variables to remote hosts' '
	printf "# cluster\nT3_FILE=from file\n" >cluster.env &&
	T3_NCCL_A=1 T3_NCCL_B=2 T3_OTHER=no run -H 127.0.0.2 --prefix "" -x "T3_NCCL_*" --env-file cluster.env \
	    sh -c "env | grep ^T3_ | sort" >out &&
	printf "T3_FILE=from file\nT3_NCCL_A=1\nT3_NCCL_B=2\n" >want &&
	diff want out
'

if /usr/bin/python3 -c "import torch.distributed" 2>/dev/null; then
	test_expect_success 'PyTorch DDP over ssh: 4 ranks on 2 hosts stay identical' '
		run -H 127.0.0.1:2,127.0.0.2:2 --seed 1 --timeout 120 /usr/bin/python3 "$SRC/examples/pytorch/ddp.py" >out 2>err &&
		grep -qE "^\[0\] 4 replicas identical after 5 steps" out
	'
else
	test_skip 'PyTorch DDP over ssh' 'no python3-torch'
fi

test_done
