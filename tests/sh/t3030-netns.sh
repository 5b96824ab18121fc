#!/bin/bash
# t3030-netns.sh -- the ssh launcher between two hosts that are network
# namespaces joined by a veth pair (10.77.0.1 and 10.77.0.2), each with its
# own sshd. dtrun runs in the first. Unlike loopback, the hosts do not share
# a network stack: ranks see only their own address, and one host reaches
# the other only over the veth. Needs root and ip netns; skips otherwise.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/sshd.sh"
. "$(dirname "$0")/netns-lib.sh"

if why=$(sshd_skip_reason); then
	test_skip 'two network-namespace hosts' "$why"
	test_done
fi
NA=dtrun-a-$$ NB=dtrun-b-$$
netns_pair 'two network-namespace hosts' "$NA" "$NB" 10.77.0

# One sshd per namespace, on its own address; one key, one known_hosts.
netns_sshd "$NA" a 10.77.0.1
netns_sshd "$NB" b 10.77.0.2
D=$TRASH/ns
H2=10.77.0.1,10.77.0.2
# dtrun ARGS... inside the first namespace, reaching both hosts.
nsrun() {
	netns_dtrun "$NA" "$@"
}

test_expect_success 'each rank runs in its own host'"'"'s namespace, reached over the veth' '
	nsrun -H $H2 --prefix "%h " sh -c "readlink /proc/self/ns/net; ip -o -4 addr show scope global | awk \"{print \\\$4}\"" >out &&
	grep -qx "10.77.0.1 10.77.0.1/24" out && grep -qx "10.77.0.2 10.77.0.2/24" out &&
	test $(grep "net:" out | cut -d" " -f2 | sort -u | wc -l) -eq 2
'

test_expect_success 'a rank on the second host reaches MASTER_ADDR:MASTER_PORT on the first (--store rank0)' '
	command -v python3 >/dev/null || skip_test "no python3"
	nsrun -H $H2 --store rank0 --prefix "" python3 -c "
import os, socket, time
r, a, p = int(os.environ[\"RANK\"]), os.environ[\"MASTER_ADDR\"], int(os.environ[\"MASTER_PORT\"])
if r == 0:
    s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((a, p)); s.listen(1); c, peer = s.accept()
    print(\"rank 0 got\", c.recv(64).decode(), \"from\", peer[0])
else:
    for i in range(100):
        try:
            c = socket.create_connection((a, p)); break
        except OSError:
            time.sleep(0.05)
    c.sendall(b\"hello\")
" >out &&
	grep -qx "rank 0 got hello from 10.77.0.2" out
'

test_expect_success 'fail-fast across namespaces: code, report, no survivors' '
	test_expect_code 3 nsrun -H $H2 sh -c "echo \$\$ >$PWD/pid.\$RANK; [ \$RANK = 1 ] && { sleep 0.3; exit 3; }; exec sleep 300" 2>err &&
	grep -q "rank 1 on 10.77.0.2 (pid [0-9]*) exited with code 3" err &&
	wait_gone 5 pid.*
'

test_expect_success 'the link to a host goes down: its agent stops its ranks' '
	# ip netns exec execs dtrun, so $! is dtrun.
	ip netns exec "$NA" "$B/dtrun" --launcher ssh -i "$D/id" \
	    --ssh-option UserKnownHostsFile="$D/known_hosts" --ssh-agent-dir "$TRASH/agents" \
	    -H $H2 sh -c "echo \$\$ >$PWD/pid.\$RANK; exec sleep 300" 2>err &
	d=$!
	wait_for 15 eval "[ -s pid.0 ] && [ -s pid.1 ]" &&
	ip -n "$NB" link set "$NETNS_V2" down &&
	kill -9 $d && { wait $d || true; } &&
	wait_gone 10 pid.0 &&
	# Back up, the other host hears the retransmitted FIN and stops its rank.
	ip -n "$NB" link set "$NETNS_V2" up &&
	wait_gone 15 pid.1
'

ip -n "$NB" link set "$NETNS_V2" up

# A partition: the link is down, not closed, so no FIN or RST reaches either
# side, and TCP would take many minutes to give up. Heartbeats must do it:
# the link stays down until dtrun has exited and the cut-off host's rank is
# gone. timeout(1) is only a safety net against a hang.
test_expect_success 'a host cut off (link down, not closed): lost within --heartbeat-timeout, no survivors' '
	timeout 300 ip netns exec "$NA" "$B/dtrun" --launcher ssh -i "$D/id" \
	    --ssh-option UserKnownHostsFile="$D/known_hosts" --ssh-agent-dir "$TRASH/agents" \
	    --heartbeat-timeout 3 -H $H2 sh -c "echo \$\$ >$PWD/pid.\$RANK; exec sleep 300" 2>err &
	d=$!
	wait_for 15 eval "[ -s pid.0 ] && [ -s pid.1 ]" &&
	ip -n "$NB" link set "$NETNS_V2" down &&
	test_expect_code 255 wait $d &&
	grep -q "lost the agent on 10.77.0.2 (heard nothing from it for 3 s (--heartbeat-timeout)" err &&
	# The agent on 10.77.0.2 heard nothing either and stopped its rank itself.
	wait_gone 60 pid.0 pid.1 &&
	ip -n "$NB" link show "$NETNS_V2" | grep -q "state DOWN" &&
	ip -n "$NB" link set "$NETNS_V2" up
'

# Up again, and forget the neighbours the partition left unreachable.
ip -n "$NB" link set "$NETNS_V2" up
ip -n "$NA" neigh flush dev "$NETNS_V1"
ip -n "$NB" neigh flush dev "$NETNS_V2"

test_expect_success '--sync-dst-dir copies to the other host'"'"'s namespace and runs there' '
	command -v rsync >/dev/null || skip_test "no rsync (apt-get install rsync)"
	mkdir src && echo data >src/f && cd src &&
	ip netns exec "$NA" "$B/dtrun" --launcher ssh -i "$D/id" \
	    --ssh-option UserKnownHostsFile="$D/known_hosts" --ssh-agent-dir "$TRASH/agents" \
	    -H 10.77.0.2 --sync-dst-dir "$PWD/../copy" --prefix "" sh -c "pwd; cat f" >../out &&
	cd .. && printf "%s\ndata\n" "$PWD/copy" >want && diff want out
'

test_expect_success 'ranks on both hosts join the rendezvous through their agents' '
	nsrun -H $H2 --prefix "" sh -c "echo \$DTRUN_RDZV_ADDR; exec \"$B/helpers/rdzv-probe\" -j" >out &&
	test $(grep -c "^unix:@dtrun-rdzv\." out) -eq 2 &&
	grep -qx "rank 0 size 2 local 0 node 0 nodes 2" out &&
	grep -qx "rank 1 size 2 local 0 node 1 nodes 2" out
'

test_expect_success 'TF_CONFIG: each host'"'"'s agent picks its workers'"'"' ports' '
	nsrun -v -H 10.77.0.1:1,10.77.0.2:2 --framework tensorflow --prefix "" python3 -c "
import json, os, socket
tf = json.loads(os.environ[\"TF_CONFIG\"])
me = tf[\"cluster\"][\"worker\"][tf[\"task\"][\"index\"]]
host, port = me.rsplit(\":\", 1)
s = socket.socket(); s.bind((host, int(port)))
print(\"bound\", me)
" >out 2>err &&
	test $(grep -c "^bound 10.77.0.2:" out) -eq 2 && grep -q "^bound 10.77.0.1:" out &&
	grep -q "10.77.0.2: its agent chose 2 free ports for TF_CONFIG" err
'

test_done
