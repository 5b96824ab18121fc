#!/bin/bash
# t3060-iface-hosts.sh -- per-host network interfaces (--iface lists and
# HOST=IFACE pairs, or each host's route to rank 0's address). Two hosts
# that are network namespaces joined by a veth whose ends have different
# names (ia<pid> in the first, 10.78.0.1; ib<pid> in the second,
# 10.78.0.2), each with its own sshd; dtrun runs in the first, which also
# has an sshd on its loopback. Needs root and ip netns; skips otherwise.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/sshd.sh"
. "$(dirname "$0")/netns-lib.sh"

test_expect_success 'a bad --iface list is a usage error before anything starts' '
	for bad in "eth0,,eth1" "=eth0" "gpu01=" "a=b=c"; do
		test_expect_code 2 dtrun --iface "$bad" true 2>err || return 1
		grep -q "^dtrun: --iface: bad item .*: give IFACE or HOST=IFACE, comma-separated" err || return 1
	done
'

test_expect_success 'on one machine, only the bare items or localhost= count' '
	dtrun --iface gpu07=nosuch0,lo --prefix "" sh -c "echo \$NCCL_SOCKET_IFNAME" >out &&
	test "$(cat out)" = lo &&
	dtrun --iface nosuch0,localhost=lo --prefix "" sh -c "echo \$NCCL_SOCKET_IFNAME" >out &&
	test "$(cat out)" = lo
'

if why=$(sshd_skip_reason); then
	test_skip 'hosts with different interface names' "$why"
	test_done
fi
NA=dtrun-ia-$$ NB=dtrun-ib-$$
netns_pair 'hosts with different interface names' "$NA" "$NB" 10.78.0
IA=ia$$ IB=ib$$
ip -n "$NA" link set "$NETNS_V1" down && ip -n "$NA" link set "$NETNS_V1" name "$IA" &&
ip -n "$NA" link set "$IA" up &&
ip -n "$NB" link set "$NETNS_V2" down && ip -n "$NB" link set "$NETNS_V2" name "$IB" &&
ip -n "$NB" link set "$IB" up ||
	{ echo "could not rename the veth ends"; exit 1; }
netns_sshd "$NA" a 10.78.0.1
netns_sshd "$NB" b 10.78.0.2
netns_sshd "$NA" alo 127.0.0.1
H2=10.78.0.1,10.78.0.2
AGENTS=$TRASH/agents
# dtrun ARGS... inside the first namespace, reaching both hosts.
nsrun() {
	netns_dtrun "$NA" "$@"
}
SHOW='echo $RANK ${NCCL_SOCKET_IFNAME-unset} ${GLOO_SOCKET_IFNAME-unset}'

test_expect_success 'each host exports its own interface: its route to rank 0'"'"'s address' '
	nsrun -v -H $H2 --prefix "" sh -c "$SHOW" >out 2>err &&
	sort out >got && printf "0 $IA $IA\n1 $IB $IB\n" >want && diff want got &&
	grep -qx "dtrun: host 10.78.0.1: $IA (10.78.0.1): the route to 10.78.0.1" err &&
	grep -qx "dtrun: host 10.78.0.2: $IB (10.78.0.2): the route to 10.78.0.1" err
'

test_expect_success 'rank 1'"'"'s interface is the one its kernel reaches MASTER_ADDR by (--store rank0)' '
	nsrun -H $H2 --store rank0 --prefix "" sh -c "[ \$RANK = 1 ] && ip -o route get \$MASTER_ADDR | grep -o \"dev [^ ]*\"; echo \$RANK \$NCCL_SOCKET_IFNAME" >out &&
	grep -qx "dev $IB" out && grep -qx "1 $IB" out
'

test_expect_success 'HOST=IFACE pairs: each host takes its own' '
	nsrun -v -H $H2 --iface 10.78.0.1=$IA,10.78.0.2=lo --prefix "" sh -c "$SHOW" >out 2>err &&
	sort out >got && printf "0 $IA $IA\n1 lo lo\n" >want && diff want got &&
	grep -qx "dtrun: host 10.78.0.2: lo (127.0.0.1): given with --iface" err
'

test_expect_success 'a candidate list: each host takes the first it has' '
	nsrun -v -H $H2 --iface nosuch0,$IB,$IA --prefix "" sh -c "$SHOW" >out 2>err &&
	sort out >got && printf "0 $IA $IA\n1 $IB $IB\n" >want && diff want got &&
	grep -qx "dtrun: host 10.78.0.1: $IA (10.78.0.1): the first of --iface nosuch0,$IB,$IA that is up here" err &&
	grep -q "^dtrun: host 10.78.0.2: $IB (10.78.0.2): the first of" err
'

test_expect_success 'a host'"'"'s own pair wins over the bare items; -x and the environment win over all' '
	nsrun -H $H2 --iface $IA,10.78.0.2=$IB -x NCCL_SOCKET_IFNAME=mine0 --prefix "" sh -c "$SHOW" >out &&
	sort out >got && printf "0 mine0 $IA\n1 mine0 $IB\n" >want && diff want got &&
	GLOO_SOCKET_IFNAME=mine1 nsrun -v -H $H2 --prefix "" sh -c "$SHOW" >out 2>err &&
	sort out >got && printf "0 $IA unset\n1 $IB unset\n" >want && diff want got &&
	grep -q "GLOO_SOCKET_IFNAME is yours" err
'

test_expect_success 'MXNet: DMLC_INTERFACE is each host'"'"'s own' '
	nsrun -H $H2 --framework mxnet --prefix "" sh -c "echo \$DMLC_WORKER_ID \$DMLC_INTERFACE" >out &&
	sort out >got && printf "0 $IA\n1 $IB\n" >want && diff want got
'

test_expect_success 'a host with none of the candidates: exit 2, named with its interfaces and the fix, nothing started' '
	test_expect_code 2 nsrun -H $H2 --iface 10.78.0.2=nosuch0,10.78.0.2=nosuch1 \
	    sh -c "echo \$\$ >$PWD/pid.\$RANK; exec sleep 300" 2>err &&
	grep -qx "dtrun: 10.78.0.2: no network interface to use: --iface nosuch0,nosuch1: none is up with an IPv4 address here (interfaces: lo 127.0.0.1, $IB 10.78.0.2); give this host its own with --iface 10.78.0.2=IFACE" err &&
	! grep -q "10.78.0.1: no network interface" err &&
	test_expect_code 2 nsrun -H $H2 --iface $IA sh -c "echo \$\$ >$PWD/pid.\$RANK" 2>err &&
	grep -q "^dtrun: 10.78.0.2: no network interface to use: --iface $IA: no such interface with an IPv4 address (interfaces: lo 127.0.0.1, $IB 10.78.0.2); give this host its own with --iface 10.78.0.2=IFACE" err &&
	! ls pid.* 2>/dev/null &&
	wait_for 10 eval "! agents_alive"
'

test_expect_success 'a HOST= item naming no host of the job is warned about' '
	nsrun -H $H2 --iface 10.78.0.9=lo true 2>err &&
	grep -q "^dtrun: warning: --iface 10.78.0.9=lo: no host of this job is named 10.78.0.9" err
'

test_expect_success 'rank 0 on this machine by its loopback name: MASTER_ADDR is this machine'"'"'s address (--store rank0)' '
	nsrun -v -H 127.0.0.1,10.78.0.2 --store rank0 --prefix "" sh -c "echo \$RANK \$MASTER_ADDR \$NCCL_SOCKET_IFNAME" >out 2>err &&
	sort out >got && printf "0 10.78.0.1 $IA\n1 10.78.0.1 $IB\n" >want && diff want got &&
	grep -qx "dtrun: host 10.78.0.2: $IB (10.78.0.2): the route to 10.78.0.1" err
'

test_done
