# netns-lib.sh -- two network namespaces joined by a veth pair, for the
# tests whose hosts must not share a network stack (t3030, t3050, t3070),
# and sshds inside them. Needs root and ip netns.

# netns_pair WHAT NS1 NS2 NET -- makes namespaces NS1 (NET.1/24) and NS2
# (NET.2/24) joined by a veth ($NETNS_V1 in NS1, $NETNS_V2 in NS2),
# loopback up in both, and the directory
# $TRASH/ns (0700) for their daemons' files. When the test file ends, every
# daemon that wrote a pid file there is stopped, then the namespaces go.
# Skips the whole file (as WHAT) when namespaces cannot be made here.
netns_pair() {
	if ! ip netns add "$2" 2>"$TRASH/ns.err"; then
		test_skip "$1" "ip netns add failed: $(head -n 1 "$TRASH/ns.err")"
		test_done
	fi
	NETNS_V1=v1$$ NETNS_V2=v2$$
	mkdir -p "$TRASH/ns" /run/sshd && chmod 700 "$TRASH/ns"
	# Everything in the namespaces dies before they go.
	test_at_exit "for p in \"\$TRASH\"/ns/*.pid; do [ -s \"\$p\" ] && kill \"\$(cat \"\$p\")\" 2>/dev/null; done; sleep 0.2; ip netns del $2 2>/dev/null; ip netns del $3 2>/dev/null"
	ip netns add "$3" &&
	ip link add "$NETNS_V1" netns "$2" type veth peer name "$NETNS_V2" netns "$3" &&
	ip -n "$2" addr add "$4.1/24" dev "$NETNS_V1" && ip -n "$2" link set "$NETNS_V1" up &&
	ip -n "$3" addr add "$4.2/24" dev "$NETNS_V2" && ip -n "$3" link set "$NETNS_V2" up &&
	ip -n "$2" link set lo up && ip -n "$3" link set lo up ||
		{ echo "could not set up the namespaces"; exit 1; }
}

# netns_sshd NS NAME ADDR [LOGLEVEL] -- starts an sshd in namespace NS,
# listening on ADDR port 22, its files in $TRASH/ns named after NAME
# (sshd_config.NAME, sshd.NAME.pid, NAME.log); one host key ($TRASH/ns/host)
# and one user key ($TRASH/ns/id) serve every sshd, made on first use, and
# ADDR goes into $TRASH/ns/known_hosts. Ends the test file if it fails.
# $NETNS_SSHD, when set, is run instead of /usr/sbin/sshd (with its
# arguments): a wrapper that gives one host a limit or a mount of its own.
# SetEnv SHLVL=1 keeps the login shell off ~/.bashrc, as in sshd.sh.
netns_sshd() {
	if [ ! -s "$TRASH/ns/host" ]; then
		ssh-keygen -q -t ed25519 -N "" -f "$TRASH/ns/host" </dev/null &&
		ssh-keygen -q -t ed25519 -N "" -f "$TRASH/ns/id" </dev/null &&
		cp "$TRASH/ns/id.pub" "$TRASH/ns/authorized_keys" &&
		: >"$TRASH/ns/known_hosts" || { echo "could not make ssh keys"; exit 1; }
	fi
	cat >"$TRASH/ns/sshd_config.$2" <<EOC
Port 22
ListenAddress $3
HostKey $TRASH/ns/host
PidFile $TRASH/ns/sshd.$2.pid
AuthorizedKeysFile $TRASH/ns/authorized_keys
PermitRootLogin yes
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
LogLevel ${4:-ERROR}
SetEnv SHLVL=1
EOC
	ip netns exec "$1" "${NETNS_SSHD:-/usr/sbin/sshd}" -f "$TRASH/ns/sshd_config.$2" -E "$TRASH/ns/$2.log" ||
		{ cat "$TRASH/ns/$2.log"; exit 1; }
	wait_for 5 test -s "$TRASH/ns/sshd.$2.pid" || { echo "sshd $2 did not start"; exit 1; }
	echo "$3 $(cat "$TRASH/ns/host.pub")" >>"$TRASH/ns/known_hosts"
}

# netns_dtrun NS ARGS... -- dtrun --launcher ssh inside namespace NS, with
# netns_sshd's user key and known_hosts, agents cached in $TRASH/agents
# (agents_alive's $AGENTS).
netns_dtrun() {
	local ns=$1
	shift
	ip netns exec "$ns" "$B/dtrun" --launcher ssh -i "$TRASH/ns/id" \
	    --ssh-option UserKnownHostsFile="$TRASH/ns/known_hosts" \
	    --ssh-agent-dir "$TRASH/agents" "$@"
}
