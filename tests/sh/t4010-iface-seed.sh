#!/bin/bash
# t4010-iface-seed.sh -- the network interface (--iface, or chosen) and --seed.
. "$(dirname "$0")/lib.sh"

test_expect_success 'on one machine: loopback, exported for NCCL and Gloo' '
	env -u NCCL_SOCKET_IFNAME -u GLOO_SOCKET_IFNAME dtrun -n 2 --prefix "" sh -c \
	    "echo \$MASTER_ADDR \$NCCL_SOCKET_IFNAME \$GLOO_SOCKET_IFNAME" >out &&
	test "$(sort -u out)" = "127.0.0.1 lo lo"
'

test_expect_success '-v says which interface and why' '
	dtrun -v true 2>err &&
	grep -qx "dtrun: network: lo (127.0.0.1): every rank runs on this machine; MASTER_ADDR=127.0.0.1" err &&
	grep -qx "dtrun: rendezvous: PyTorch'"'"'s store is dtrun'"'"'s, each rank a client of its host'"'"'s agent (MASTER_ADDR=127.0.0.1, MASTER_PORT the agent'"'"'s)" err &&
	dtrun -v --store rank0 true 2>err &&
	grep -qE "^dtrun: rendezvous: MASTER_ADDR=127.0.0.1 MASTER_PORT=[0-9]+\$" err
'

test_expect_success 'the user'"'"'s NCCL_SOCKET_IFNAME and -x GLOO_SOCKET_IFNAME are kept' '
	NCCL_SOCKET_IFNAME=ib0 dtrun -x GLOO_SOCKET_IFNAME=eth9 -v --prefix "" sh -c \
	    "echo \$NCCL_SOCKET_IFNAME \$GLOO_SOCKET_IFNAME" >out 2>err &&
	test "$(cat out)" = "ib0 eth9" &&
	grep -q "NCCL_SOCKET_IFNAME is yours; GLOO_SOCKET_IFNAME is yours" err
'

test_expect_success '--iface lo is taken as given' '
	dtrun --iface lo -v --prefix "" sh -c "echo \$MASTER_ADDR \$GLOO_SOCKET_IFNAME" >out 2>err &&
	test "$(cat out)" = "127.0.0.1 lo" &&
	grep -q "lo (127.0.0.1): given with --iface" err
'

other=$(ip -4 -o addr show up 2>/dev/null | awk '$2 != "lo" { sub("/.*", "", $4); print $2, $4; exit }')
if [ -n "$other" ]; then
	set -- $other
	test_expect_success "--iface $1 gives its address as MASTER_ADDR (--store rank0; dtrun's store is the agent's, on 127.0.0.1)" '
		dtrun --iface '"$1"' --store rank0 --prefix "" sh -c "echo \$MASTER_ADDR \$NCCL_SOCKET_IFNAME" >out &&
		test "$(cat out)" = "'"$2 $1"'" &&
		dtrun --iface '"$1"' --prefix "" sh -c "echo \$MASTER_ADDR \$NCCL_SOCKET_IFNAME" >out &&
		test "$(cat out)" = "127.0.0.1 '"$1"'"
	'
else
	test_skip '--iface of a real interface' 'this machine has only loopback'
fi

test_expect_success 'an unknown --iface: exit 2, naming the interfaces' '
	test_expect_code 2 dtrun --iface nosuch0 true 2>err &&
	test $(wc -l <err) -eq 1 &&
	grep -q "^dtrun: --iface nosuch0: no such interface with an IPv4 address (interfaces: lo 127.0.0.1" err &&
	test_expect_code 2 dtrun --dry-run --iface nosuch0 true 2>err
'

test_expect_success '--seed: the job seed and a per-rank seed, the same every run' '
	dtrun -n 3 --seed 42 --prefix "" sh -c "echo \$RANK \$DTRUN_SEED \$DTRUN_RANK_SEED" >a &&
	dtrun -n 3 --seed 42 --prefix "" sh -c "echo \$RANK \$DTRUN_SEED \$DTRUN_RANK_SEED" >b &&
	sort a >sa && sort b >sb && cmp sa sb &&
	grep -qx "0 42 6839728766377637706" sa &&
	test $(cut -d" " -f3 sa | sort -u | wc -l) -eq 3
'

test_expect_success 'the rank seed is SplitMix64 as documented' '
	dtrun -n 2 --seed 7 --prefix "" sh -c "echo \$DTRUN_RANK \$DTRUN_RANK_SEED" | sort >got &&
	python3 -c "
M = (1 << 64) - 1
def seed(s, r):
    z = (s + (r + 1) * 0x9E3779B97F4A7C15) & M
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9 & M
    z = (z ^ (z >> 27)) * 0x94D049BB133111EB & M
    return (z ^ (z >> 31)) >> 1
for r in range(2): print(r, seed(7, r))" >want &&
	cmp got want
'

test_expect_success 'without --seed no seed is exported; a bad one is refused' '
	env -u DTRUN_SEED dtrun --prefix "" sh -c "echo \${DTRUN_SEED-unset} \${DTRUN_RANK_SEED-unset}" >out &&
	test "$(cat out)" = "unset unset" &&
	test_expect_code 2 dtrun --seed 1.5 true 2>err && grep -q "want a whole number" err
'

test_done
