# netns-star.sh -- several network namespaces (hosts) on one Linux bridge
# in a namespace of its own (the switch), for the scenario tests that need
# more than two hosts or one host's link slower than the others' (tbf) or
# further away (netem). Sourced after netns-lib.sh, whose netns_sshd and
# netns_dtrun work on these hosts too. Needs root, ip netns, and tc for
# netns_shape.

# netns_star WHAT NET NS... -- makes the switch namespace $NETNS_SW with the
# bridge br0 (up, no STP, forwarding at once), and each host namespace NSi
# (i = 1, 2, ...) with the address NET.i/24 on a veth, $(netns_star_dev i)
# inside NSi, whose other end is a port of br0; loopback up everywhere, and
# the directory $TRASH/ns (0700) for the hosts' daemons' files, as
# netns_pair. $NETNS_STAR holds the host namespaces, in order. When the test
# file ends, every daemon that wrote a pid file in $TRASH/ns is stopped, then
# every namespace goes. Skips the whole file (as WHAT) when namespaces
# cannot be made here.
netns_star() {
	local what=$1 net=$2 i=0 ns dev
	shift 2
	NETNS_SW=dtrun-sw-$$ NETNS_STAR="$*"
	if ! ip netns add "$NETNS_SW" 2>"$TRASH/ns.err"; then
		test_skip "$what" "ip netns add failed: $(head -n 1 "$TRASH/ns.err")"
		test_done
	fi
	mkdir -p "$TRASH/ns" /run/sshd && chmod 700 "$TRASH/ns"
	# Everything in the namespaces dies before they go.
	test_at_exit "for p in \"\$TRASH\"/ns/*.pid; do [ -s \"\$p\" ] && kill \"\$(cat \"\$p\")\" 2>/dev/null; done; sleep 0.2; for n in $NETNS_SW $NETNS_STAR; do ip netns del \$n 2>/dev/null; done"
	# forward_delay 0: ports forward as soon as they are up, not after 15 s.
	ip -n "$NETNS_SW" link set lo up &&
	ip -n "$NETNS_SW" link add br0 type bridge stp_state 0 forward_delay 0 &&
	ip -n "$NETNS_SW" link set br0 up ||
		{ echo "could not set up the switch namespace"; exit 1; }
	for ns in "$@"; do
		i=$((i + 1))
		dev=$(netns_star_dev $i)
		ip netns add "$ns" &&
		ip link add "$dev" netns "$ns" type veth peer name "p$i-$$" netns "$NETNS_SW" &&
		ip -n "$NETNS_SW" link set "p$i-$$" master br0 &&
		ip -n "$NETNS_SW" link set "p$i-$$" up &&
		ip -n "$ns" addr add "$net.$i/24" dev "$dev" &&
		ip -n "$ns" link set "$dev" up &&
		ip -n "$ns" link set lo up ||
			{ echo "could not set up host namespace $ns"; exit 1; }
	done
}

# netns_star_dev I -- the name of host I's veth (I = 1, 2, ... as given to
# netns_star), inside its namespace: what netns_shape and "ip link set ...
# down" take.
netns_star_dev() {
	echo "e$1-$$"
}

# netns_star_ns I -- the namespace of host I.
netns_star_ns() {
	set -- $1 $NETNS_STAR
	shift "$1"
	echo "$1"
}

# netns_shape NS DEV rate RATE -- DEV in NS sends at most RATE (tc units:
# 100mbit, 20mbit...) on average, through a token bucket: tbf with a 256 KB
# burst and 100 ms of queue (the goodput is 0.96 RATE, headers aside). Only
# what NS sends is slowed, but its ACKs wait in the same queue: while NS
# also sends, what it receives slows too (to 0.5-0.9 of its speed).
# netns_shape NS DEV uplink RATE -- the same rate on DEV, through htb, but
# with small packets (IP length < 128: ACKs) first, so what NS receives
# keeps its speed even while NS sends at RATE.
# netns_shape NS DEV delay TIME -- DEV in NS holds each packet it sends for
# TIME (20ms...), with netem: TIME is added to every round trip through DEV.
# Fails ("Specified qdisc kind is unknown") where the kernel has no
# sch_netem: a test should skip then.
# netns_shape NS DEV off -- removes any of these.
# A second call replaces the first.
netns_shape() {
	case $3 in
	rate) ip netns exec "$1" tc qdisc replace dev "$2" root tbf rate "$4" burst 256kb latency 100ms ;;
	uplink)
		netns_shape "$1" "$2" off
		# quantum: one full packet a turn, and no warnings about r2q.
		ip netns exec "$1" sh -c "tc qdisc add dev $2 root handle 1: htb default 20 &&
		    tc class add dev $2 parent 1: classid 1:1 htb rate $4 burst 64kb cburst 64kb quantum 1514 &&
		    tc class add dev $2 parent 1:1 classid 1:10 htb rate 1mbit ceil $4 prio 0 quantum 1514 &&
		    tc class add dev $2 parent 1:1 classid 1:20 htb rate $4 ceil $4 prio 1 quantum 1514 &&
		    tc qdisc add dev $2 parent 1:20 bfifo limit 256kb &&
		    tc filter add dev $2 parent 1: protocol ip prio 1 u32 match u16 0 0xff80 at 2 flowid 1:10" ;;
	delay) ip netns exec "$1" tc qdisc replace dev "$2" root netem delay "$4" limit 100000 ;;
	off) ip netns exec "$1" tc qdisc del dev "$2" root 2>/dev/null || true ;;
	*) echo "netns_shape: rate, uplink, delay or off, not '$3'" >&2; return 2 ;;
	esac
}
