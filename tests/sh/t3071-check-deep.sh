#!/bin/bash
# t3071-check-deep.sh -- dtrun --check --deep: the agents measure the network
# between the hosts (a ring, then the bisection; round trips, then bytes)
# and a slow host or link is named with its fix. Locally over simulated
# hosts (one agent per hostfile name), then over four network-namespace
# hosts on one bridge, where tc slows one host's link (root and ip netns;
# that part skips otherwise). Also there: a host with a small /dev/shm and a
# low open-files limit, each named.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/sshd.sh"
. "$(dirname "$0")/netns-lib.sh"
. "$(dirname "$0")/netns-star.sh"
Q="'"

printf 'h%d\n' 1 2 3 4 >"$TRASH/hosts4"
# dtrun over four simulated hosts, every agent on this machine.
sim() {
	dtrun --launcher local -H "$TRASH/hosts4" "$@"
}
# The rows of the pair table: FROM TO PAIRS RTT THROUGHPUT NOTE.
pairs() {
	awk '$1 == "FROM" && $2 == "TO" { on = 1; next } /^deep: / { on = 0 } on' "$1"
}

test_expect_success 'local: four hosts, eight pairs measured, each with a round trip and a throughput' '
	sim --check --deep --deep-bytes 8M >out 2>err &&
	grep -q "^FROM  *TO  *PAIRS  *RTT  *THROUGHPUT  *NOTE$" out &&
	pairs out >rows &&
	test $(wc -l <rows) -eq 8 &&
	for p in "h1 h2 ring" "h2 h3 ring" "h3 h4 ring" "h4 h1 ring" "h1 h3 bisection" "h2 h4 bisection" "h3 h1 bisection" "h4 h2 bisection"; do
		grep -q "^$(echo $p | sed "s/ /  */g")  *[0-9.]* ms  *[0-9.]* [MG]bit/s  *-$" rows || return 1
	done &&
	grep -q "^deep: 8 pairs in 4 rounds: the median round trip [0-9.]* ms, the median throughput [0-9.]* [MG]bit/s$" out &&
	grep -qx "deep: every host is this machine (the local launcher): the figures are its own, no pair is judged" out &&
	grep -qx "no problems on 4 hosts" out
'

test_expect_success 'local: one host has no pair to measure, and says so' '
	dtrun --check --deep -n 2 true >out 2>err &&
	grep -qx "deep: one host, no pair to measure" out &&
	grep -qx "no problems on 1 host" out
'

test_expect_success '--preflight=deep measures, then the job runs; bad spellings exit 2' '
	sim --preflight=deep --deep-bytes 1M sh -c "echo ran \$RANK" >out 2>err &&
	test $(grep -c "ran [0-3]$" out) -eq 4 &&
	test_expect_code 2 sim --preflight=shallow true 2>err &&
	grep -qx "dtrun: --preflight=shallow: want --preflight or --preflight=deep" err &&
	test_expect_code 2 dtrun --deep true 2>err &&
	grep -qx "dtrun: --deep measures the network for a check: give --check or --preflight with it" err &&
	for v in 0 1X -5 17G; do
		test_expect_code 2 dtrun --check --deep --deep-bytes "$v" 2>err || return 1
		grep -qx "dtrun: --deep-bytes \"$v\": want a size from 1 byte to 16 GiB (e.g. --deep-bytes 256M)" err || return 1
	done
'

test_expect_success 'GPUs: none here: skipped, said so' '
	dtrun --check --deep -n 1 true >out 2>err &&
	grep -qx "deep: GPUs: skipped: no GPU" out
'

# A fake nvidia-smi with two GPUs, the second with 3 uncorrected ECC
# errors, and a fake dcgmi whose quick diagnostic fails.
test_expect_success 'GPUs: uncorrected ECC errors, and with --deep a failed DCGM diagnostic: named, exit 78' '
	mkdir fake &&
	cat >fake/nvidia-smi <<-\EOS &&
	#!/bin/sh
	case $1 in
	-L) echo "GPU 0: Fake H100 (UUID: GPU-0)"; echo "GPU 1: Fake H100 (UUID: GPU-1)" ;;
	--query-gpu=driver_version) echo 550.54.15 ;;
	--query-gpu=index,ecc.errors.uncorrected.volatile.total) printf "0, 0\n1, 3\n" ;;
	esac
	EOS
	printf "#!/bin/sh\necho \"| Memory | Fail - GPU 1: a page could not be written |\"\nexit 226\n" >fake/dcgmi &&
	chmod +x fake/nvidia-smi fake/dcgmi &&
	test_expect_code 78 env PATH=$PWD/fake:$PATH dtrun --check -n 1 true >out 2>err &&
	grep -qx "dtrun: check: localhost: GPU 1 has 3 uncorrected ECC errors since its driver loaded: drain the host and reset the GPU (nvidia-smi -r -i 1), or leave it out (--exclude localhost:1)" err &&
	! grep -q dcgmi err &&
	test_expect_code 78 env PATH=$PWD/fake:$PATH dtrun --check --deep -n 1 true >out 2>err &&
	grep -qx "dtrun: check: localhost: dcgmi diag -r 1 failed: | Memory | Fail - GPU 1: a page could not be written |: run dcgmi diag -r 2 there for the details, and leave the host out (--exclude localhost) until it passes" err &&
	test $(grep -c "^dtrun: check: " err) -eq 2 &&
	grep -qx "deep: GPUs: nvidia-smi${Q}s health and DCGM${Q}s quick diagnostic; the NCCL all-reduce is not measured: TCP figures only" out
'

# Another user watches /proc/net/tcp and opens 300 idle connections to
# every listener that appears (deep-crowd.py, copied where it can read it);
# in a network namespace of the test's own, so no other listener on this
# machine is crowded. Its connections prove nothing and are shed first:
# every pair is measured. It is killed by PID, and ends by itself in 60 s.
cat >"$TRASH/crowd.sh" <<'EOS'
ip link set lo up || exit 3
setpriv --reuid=65534 --regid=65534 --clear-groups "$3" "$1/deep-crowd.py" 60 300 >crowd.out 2>crowd.err &
pid=$!
echo $pid >crowd.pid
n=0
until grep -q "^watching$" crowd.out || [ $n -ge 400 ]; do sleep 0.05; n=$((n + 1)); done
dtrun --launcher local -H "$2" --check --deep --deep-bytes 8M >out 2>err
rc=$?
kill $pid
wait $pid
exit $rc
EOS
# Another user's python: not one under root's home.
PY=$(PATH=/usr/local/bin:/usr/bin:/bin command -v python3)
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null && command -v unshare >/dev/null &&
    command -v ip >/dev/null && [ -n "$PY" ]; then
	test_expect_success 'a stranger crowding the pair listeners with idle connections changes no pair: exit 0' '
		x=$(mktemp -d /tmp/dtrun-XXXX) &&
		test_at_exit "rm -rf $x" &&
		test_at_exit "[ ! -f crowd.pid ] || { kill \$(cat crowd.pid) 2>/dev/null; wait_for 10 eval \"! proc_alive \$(cat crowd.pid)\"; }" &&
		cp "$SRC/tests/sh/deep-crowd.py" "$x/" &&
		chmod 755 "$x" "$x/deep-crowd.py" &&
		unshare --net sh "$TRASH/crowd.sh" "$x" "$TRASH/hosts4" "$PY" &&
		test $(grep -c "^crowd 127\.0\.0\.1:[0-9]* 300$" crowd.out) -ge 4 &&
		pairs out >rows &&
		test $(wc -l <rows) -eq 8 &&
		! grep -q FAILED rows &&
		grep -qx "no problems on 4 hosts" out &&
		! proc_alive $(cat crowd.pid)
	'
else
	test_skip 'a stranger crowding the pair listeners' 'needs root, setpriv, unshare, ip and a python3 in /usr'
fi

if [ "$(id -u)" != 0 ] || why=$(sshd_skip_reason); then
	test_skip 'four network-namespace hosts' "${why:-needs root}"
	test_done
fi

# Four hosts on a bridge, 10.91.0.1 to .4, an sshd each; dtrun runs in the
# first. The fourth host's agents get a 16 MiB /dev/shm (a mount of their
# own) and an open-files limit of 120.
NA=dtrun-da-$$ NB=dtrun-db-$$ NC=dtrun-dc-$$ ND=dtrun-dd-$$
netns_star 'four network-namespace hosts' 10.91.0 "$NA" "$NB" "$NC" "$ND"
D=$TRASH/ns
cat >"$D/small-sshd" <<'EOS'
#!/bin/sh
ulimit -n 120 && mount -t tmpfs -o size=16m tmpfs /dev/shm && exec /usr/sbin/sshd "$@"
EOS
chmod +x "$D/small-sshd"
netns_sshd "$NA" a 10.91.0.1
netns_sshd "$NB" b 10.91.0.2
netns_sshd "$NC" c 10.91.0.3
NETNS_SSHD=$D/small-sshd netns_sshd "$ND" d 10.91.0.4
H4=10.91.0.1,10.91.0.2,10.91.0.3,10.91.0.4
AGENTS=$TRASH/agents
nsrun() {
	netns_dtrun "$NA" "$@"
}
# shape_all RATE [HOST RATE] -- every host's link sends at RATE, HOST's
# (1 to 4) at its own; ACKs first, so a slow sender still receives at speed.
shape_all() {
	for i in 1 2 3 4; do
		netns_shape "$(netns_star_ns $i)" "$(netns_star_dev $i)" uplink "$1" || return 1
	done
	[ $# -lt 3 ] || netns_shape "$(netns_star_ns $2)" "$(netns_star_dev $2)" uplink "$3"
}
unshape_all() {
	for i in 1 2 3 4; do
		netns_shape "$(netns_star_ns $i)" "$(netns_star_dev $i)" off || return 1
	done
}

test_expect_success 'netns: no shaping: every pair measured, no problem, exit 0' '
	nsrun --check --deep -H $H4 >out 2>err &&
	test $(pairs out | wc -l) -eq 8 &&
	! pairs out | grep -q "SLOW\|FAILED" &&
	grep -qx "no problems on 4 hosts" out
'

test_expect_success 'netns: every link at 400 Mbit/s: still no problem' '
	shape_all 400mbit &&
	test_at_exit unshape_all &&
	nsrun --check --deep --deep-bytes 16M -H $H4 >out 2>err &&
	grep -qx "no problems on 4 hosts" out &&
	grep -q "^deep: 8 pairs in [0-9]* rounds: .* the median throughput [1-4][0-9][0-9] Mbit/s$" out
'

test_expect_success 'netns: one host sends at a tenth: exactly that host named, its interface in the fix, exit 78' '
	shape_all 400mbit 3 40mbit &&
	test_at_exit unshape_all &&
	test_expect_code 78 nsrun --check --deep --deep-bytes 16M -H $H4 >out 2>err &&
	grep -q "^dtrun: check: 10.91.0.3: slow to send: [34][0-9] Mbit/s to 10.91.0.4, [34][0-9] Mbit/s to 10.91.0.1; the median pair [1-4][0-9][0-9] Mbit/s: check its link there (ethtool $(netns_star_dev 3): speed, duplex and errors; tc qdisc show dev $(netns_star_dev 3); its cable and switch port), or leave the host out (--exclude)$" err &&
	test $(grep -c "^dtrun: check: " err) -eq 1 &&
	grep -qx "dtrun: --check found 1 problem: see above" err &&
	test $(pairs out | grep -c SLOW) -eq 2 &&
	pairs out | grep SLOW | awk "{ print \$1 }" | sort -u | grep -qx 10.91.0.3
'

test_expect_success 'netns: one host 20 ms further away: its round trips named, exit 78' '
	if ! netns_shape "$NC" "$(netns_star_dev 3)" delay 20ms 2>tcerr; then
		skip_test "no netem here: $(head -n 1 tcerr)"
	fi &&
	test_at_exit unshape_all &&
	test_expect_code 78 nsrun --check --deep --deep-bytes 1M -H $H4 >out 2>err &&
	grep -q "^dtrun: check: 10.91.0.3: slow round trips with every peer: 2[0-9]\.[0-9] ms to 10.91.0.4" err &&
	test $(grep -c "^dtrun: check: " err) -eq 1
'

test_expect_success 'netns: a small /dev/shm and a low open-files limit: that host named for each' '
	test_expect_code 78 nsrun --check --oversubscribe -n 200 -H $H4 true >out 2>err &&
	grep -q "^dtrun: check: 10.91.0.4: /dev/shm is 16 MiB: NCCL${Q}s shared memory between its 50 ranks needs more" err &&
	grep -q "^dtrun: check: 10.91.0.4: its open-files limit is 120, below the 364 its agent needs for 50 ranks: raise it there" err &&
	test $(grep -c "^dtrun: check: " err) -eq 2 &&
	wait_for 10 eval "! agents_alive"
'

test_done
