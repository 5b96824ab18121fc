#!/bin/bash
# t3002-resolve.sh -- host names are looked up without stalling the ssh
# launcher's event loop. tests/preload/slowdns.c plays a name server that
# holds one name's answer until the test opens a gate; the other host must
# get connected meanwhile, which it never would if the lookup blocked the loop.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/sshd.sh"

if why=$(sshd_skip_reason); then
	test_skip 'name lookups off the event loop' "$why"
	test_done
fi
sshd_start || { echo "could not start sshd"; exit 1; }
SSH_ARGS+=(--ssh-agent-dir "$TRASH/agents")
# slow.test is 127.0.0.3 once its lookup returns; it has its own known_hosts line.
echo "[slow.test]:$SSHD_PORT $(cat "$SSH_DIR/host_ed25519.pub")" >>"$SSH_KNOWN"
export SLOWDNS_NAME=slow.test SLOWDNS_ADDR=127.0.0.3
# An ASan build wants its runtime first; the stand-in comes before it.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
PRELOAD=$B/preload/slowdns.so

test_expect_success 'a slow lookup does not hold up the other hosts' '
	export SLOWDNS_GATE=$PWD/gate &&
	LD_PRELOAD=$PRELOAD dtrun "${SSH_ARGS[@]}" -v -H slow.test,127.0.0.2 --prefix "%h " hostname >out 2>err &
	d=$! ok=no
	# Open the gate whatever was seen, so dtrun ends; then judge.
	if wait_for 30 grep -q "127.0.0.2: agent pid [0-9]* on .* connected" err &&
	    ! grep -q "slow.test: agent" err && kill -0 $d && ! test -s out
	then
		ok=yes
	fi
	touch gate && wait $d && test $ok = yes &&
	grep -q "^slow.test " out && grep -q "^127.0.0.2 " out
'

# (timeout only keeps a launcher that blocks in the lookup from hanging the suite.)
test_expect_success 'ConnectTimeout covers a lookup that never answers' '
	export SLOWDNS_GATE=$PWD/never &&
	test_expect_code 255 timeout -k 5 60 env LD_PRELOAD=$PRELOAD dtrun "${SSH_ARGS[@]}" --ssh-option ConnectTimeout=1 -H 127.0.0.2,slow.test true 2>err &&
	grep -q "slow.test.*timed out after 1 s looking up the name (ConnectTimeout)" err
'

test_expect_success 'a name that does not exist: the host and the reason' '
	test_expect_code 255 dtrun "${SSH_ARGS[@]}" -H 127.0.0.2,no-such-host.invalid true 2>err &&
	grep -q "no-such-host.invalid.*cannot resolve no-such-host.invalid: " err
'

test_done
