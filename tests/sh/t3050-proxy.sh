#!/bin/bash
# t3050-proxy.sh -- hosts behind a jump host (ProxyJump, -J) or reached by a
# ProxyCommand. dtrun runs in one network namespace (10.79.0.1); the other
# (10.79.0.2) holds a jump sshd on its veth address and, on its own
# loopback, a second jump sshd (127.0.0.2) and the target sshd (127.0.0.5),
# which dtrun's namespace cannot reach but through a jump host. Needs root
# and ip netns; skips otherwise.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/sshd.sh"
. "$(dirname "$0")/netns-lib.sh"

if why=$(sshd_skip_reason); then
	test_skip 'hosts behind jump hosts' "$why"
	test_done
fi
ND=dtrun-pd-$$ NT=dtrun-pt-$$
netns_pair 'hosts behind jump hosts' "$ND" "$NT" 10.79.0
D=$TRASH/ns

# Three sshds; the jumps log what they forward.
netns_sshd "$NT" jump1 10.79.0.2 DEBUG1
netns_sshd "$NT" jump2 127.0.0.2 DEBUG1
netns_sshd "$NT" target 127.0.0.5 VERBOSE
AGENTS=$TRASH/agents
# dtrun ARGS... in dtrun's namespace.
nsrun() {
	netns_dtrun "$ND" "$@"
}
# Where the target's sshd saw the job's connection come from.
WHERE='echo $SSH_CONNECTION | cut -d" " -f3,4'

test_expect_success 'the target cannot be reached directly from dtrun'"'"'s namespace' '
	test_expect_code 255 nsrun -H 127.0.0.5 true 2>err &&
	grep -q "127.0.0.5: cannot connect to 127.0.0.5 port 22" err
'

test_expect_success '-J: the job runs on the target through the jump host, output and exit code back' '
	: >"$D/jump1.log" &&
	test_expect_code 3 nsrun -J 10.79.0.2 -H 127.0.0.5 --prefix "%h " sh -c "$WHERE; exit 3" >out &&
	grep -qx "127.0.0.5 127.0.0.5 22" out &&
	grep -q "server_request_direct_tcpip: .*target 127.0.0.5 port 22" "$D/jump1.log" &&
	wait_for 10 eval "! agents_alive"
'

test_expect_success 'ProxyJump in an ssh_config file, the jump host named by its own alias' '
	cat >config <<-EOC &&
	Host bastion
	    HostName 10.79.0.2
	    User root
	Host gpu
	    HostName 127.0.0.5
	    ProxyJump bastion
	EOC
	nsrun -F config -H gpu --prefix "%h " sh -c "$WHERE" >out &&
	grep -qx "gpu 127.0.0.5 22" out
'

test_expect_success 'a chain of two jump hosts: each forwards to the next' '
	: >"$D/jump1.log" && : >"$D/jump2.log" &&
	nsrun --ssh-option ProxyJump=root@10.79.0.2:22,127.0.0.2 -H 127.0.0.5 --prefix "" sh -c "$WHERE" >out &&
	grep -qx "127.0.0.5 22" out &&
	grep -q "target 127.0.0.2 port 22" "$D/jump1.log" &&
	grep -q "target 127.0.0.5 port 22" "$D/jump2.log" &&
	! grep -q "target 127.0.0.5 port 22" "$D/jump1.log"
'

test_expect_success 'ProxyCommand: %h %p expanded, the job runs, the command is reaped' '
	nsrun --ssh-option "ProxyCommand=ip netns exec $NT tcp-connect %h %p $PWD/proxy.pid" \
	    -H 127.0.0.5 --prefix "" sh -c "$WHERE" >out &&
	grep -qx "127.0.0.5 22" out &&
	test -s proxy.pid && wait_gone 10 proxy.pid
'

test_expect_success 'a wrong host key on the jump host is refused and the jump host named' '
	ssh-keygen -q -t ed25519 -N "" -f other </dev/null &&
	{ grep -v "^10.79.0.2 " "$D/known_hosts"; echo "10.79.0.2 $(cat other.pub)"; } >known &&
	test_expect_code 255 ip netns exec "$ND" "$B/dtrun" --launcher ssh -i "$D/id" \
	    --ssh-option UserKnownHostsFile="$PWD/known" --ssh-agent-dir "$AGENTS" -J 10.79.0.2 -H 127.0.0.5 true 2>err &&
	grep -q "127.0.0.5: jump host 10.79.0.2: HOST KEY MISMATCH" err
'

test_expect_success 'a wrong host key on the target behind the jump host is refused too' '
	ssh-keygen -q -t ed25519 -N "" -f other </dev/null &&
	{ grep -v "^127.0.0.5 " "$D/known_hosts"; echo "127.0.0.5 $(cat other.pub)"; } >known2 &&
	test_expect_code 255 ip netns exec "$ND" "$B/dtrun" --launcher ssh -i "$D/id" \
	    --ssh-option UserKnownHostsFile="$PWD/known2" --ssh-agent-dir "$AGENTS" -J 10.79.0.2 -H 127.0.0.5 true 2>err &&
	grep -q "127.0.0.5: HOST KEY MISMATCH: the key 127.0.0.5 offers" err
'

test_expect_success 'a ProxyCommand that fails is named, with its stderr under the host' '
	test_expect_code 255 nsrun --ssh-option "ProxyCommand=sh -c \"echo no route today >&2; exit 3\"" \
	    -H 127.0.0.5 true 2>err &&
	grep -q "127.0.0.5: ProxyCommand: no route today" err &&
	grep -q "127.0.0.5: the ProxyCommand .* exited with status 3" err
'

test_expect_success 'a ProxyCommand that dies mid-job loses its host, named, and the ranks stop' '
	(nsrun --ssh-option "ProxyCommand=ip netns exec $NT tcp-connect %h %p $PWD/proxy.pid" \
	    -H 127.0.0.5 sh -c "echo \$\$ >$PWD/rank.pid; exec sleep 300" 2>err && echo 0 >rc ||
	    echo $? >rc) &
	wait_for 20 test -s rank.pid &&
	kill "$(cat proxy.pid)" &&
	wait_for 20 test -s rc &&
	test "$(cat rc)" = 255 &&
	grep -q "lost the agent on 127.0.0.5 (the ProxyCommand .* was killed by signal 15" err &&
	wait_gone 20 rank.pid
'

test_expect_success 'a jump host that cannot reach the target says so' '
	test_expect_code 255 nsrun -J 10.79.0.2 -H 127.0.0.9 true 2>err &&
	grep -q "127.0.0.9: jump host 10.79.0.2: cannot reach 127.0.0.9 port 22 from there" err
'

test_expect_success 'fail-fast through a jump host: the other rank stops, nothing is left' '
	test_expect_code 3 nsrun -J 10.79.0.2 -H 127.0.0.5:2 --prefix "" sh -c "
		echo \$\$ >pid.\$RANK
		if [ \$RANK = 1 ]; then
			while [ ! -s pid.0 ]; do sleep 0.05; done; exit 3
		fi
		exec sleep 300" &&
	test -s pid.0 && wait_gone 20 pid.0 pid.1 &&
	wait_for 10 eval "! agents_alive"
'

test_expect_success 'a ProxyCommand still running when its host ends is killed, with its group' '
	cat >proxy.sh <<-EOS &&
	echo \$\$ >"\$3/sh.pid"
	ip netns exec $NT tcp-connect "\$1" "\$2" "\$3/proxy.pid"
	sleep 300 &
	echo \$! >"\$3/sleep.pid"
	wait
	EOS
	nsrun --ssh-option "ProxyCommand=sh $PWD/proxy.sh %h %p $PWD" -H 127.0.0.5 true &&
	test -s sh.pid && wait_gone 10 sh.pid proxy.pid sleep.pid
'

test_expect_success '-J wins over a ProxyCommand given with it' '
	rm -f proxy.pid &&
	nsrun --ssh-option "ProxyCommand=ip netns exec $NT tcp-connect %h %p $PWD/proxy.pid" \
	    -J 10.79.0.2 -H 127.0.0.5 true &&
	! test -e proxy.pid
'

test_expect_success '--sync-dst-dir rsyncs through the same chain of jump hosts, and a ProxyCommand' '
	command -v rsync >/dev/null || skip_test "no rsync"
	: >"$D/jump2.log" &&
	mkdir src && echo data >src/f &&
	(cd src && nsrun -J 10.79.0.2,root@127.0.0.2 -H 127.0.0.5 --sync-dst-dir "$PWD/../dst" --prefix "" cat f) >out &&
	grep -qx data out && test -f dst/f &&
	test $(grep -c "server_request_direct_tcpip: .*target 127.0.0.5 port 22" "$D/jump2.log") -ge 2 &&
	(cd src && nsrun --ssh-option "ProxyCommand=ip netns exec $NT tcp-connect %h %p" -H 127.0.0.5 \
	    --sync-dst-dir "$PWD/../dst2" --prefix "" cat f) >out2 &&
	grep -qx data out2 && test -f dst2/f
'

test_expect_success 'dtrun-kill -H -J reaches the host through the jump host' '
	: >"$D/jump1.log" &&
	ip netns exec "$ND" "$B/dtrun-kill" -J 10.79.0.2 -H 127.0.0.5 -i "$D/id" \
	    --ssh-option UserKnownHostsFile="$D/known_hosts" --ssh-agent-dir "$AGENTS" \
	    0123abcd-0123456789ab >out &&
	grep -qx "127.0.0.5: job 0123abcd-0123456789ab: not running here" out &&
	grep -q "server_request_direct_tcpip: .*target 127.0.0.5 port 22" "$D/jump1.log"
'

test_done
