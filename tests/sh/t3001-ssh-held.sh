#!/bin/bash
# t3001-ssh-held.sh -- the ssh launcher hears bytes that libssh2 read off
# the socket and kept, when nothing more comes to wake it. Every libssh2
# call reads the socket dry, a stderr read's and a write's too; at 64 hosts
# that happened in 2-3% of runs, which then stalled until the agent's next
# heartbeat, or for good with heartbeats off. tests/preload/sshhold.so
# makes it happen every time: it holds dtrun inside the named libssh2 call
# until the agent's next bytes are on the socket, so that call takes them.
# Heartbeats are off throughout, so nothing else would end a stall.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/sshd.sh"

if why=$(sshd_skip_reason); then
	test_skip 'bytes held inside libssh2' "$why"
	test_done
fi
sshd_start || { echo "could not start sshd"; exit 1; }
SSH_ARGS+=(--ssh-agent-dir "$TRASH/agents" --heartbeat-timeout 0)
# The first run uploads the agent, so that the runs below start it at once.
dtrun_ssh -H 127.0.0.2 true || { echo "could not start an agent over ssh"; exit 1; }

# held MODE -- the environment that holds dtrun in libssh2 call MODE
# (stderr, write) once, logging to $PWD/hold.log; an ASan build needs its
# runtime first, so the preload must not be refused for coming before it.
held() {
	echo "LD_PRELOAD=$B/preload/sshhold.so DT_TEST_SSH_HOLD=$1" \
	    "DT_TEST_SSH_HOLD_LOG=$PWD/hold.log" \
	    "ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
}

test_expect_success 'the agent'"'"'s HELLO, taken off the socket by a stderr read, is heard' '
	env $(held stderr) timeout -k 10 60 dtrun "${SSH_ARGS[@]}" \
	    --ssh-option ConnectTimeout=20 -H 127.0.0.2 echo hi >out 2>err &&
	grep -qx "held stderr" hold.log &&
	grep -qx "\[0\] hi" out
'

test_expect_success 'a running agent'"'"'s last frames, taken by a stderr read, are heard' '
	env $(held stderr) DT_TEST_SSH_HOLD_ARM=$PWD/armed timeout -k 10 60 \
	    dtrun "${SSH_ARGS[@]}" -H 127.0.0.2 sh -c \
	    "touch $PWD/armed; echo one; sleep 1; echo last" >out 2>err &&
	grep -qx "held stderr" hold.log &&
	grep -qx "\[0\] one" out && grep -qx "\[0\] last" out
'

test_expect_success 'frames taken by a write from outside the host'"'"'s turn (a signal) are heard' '
	{ env $(held write) DT_TEST_SSH_HOLD_ARM=$PWD/armed \
	    dtrun "${SSH_ARGS[@]}" --forward-signals USR1 -H 127.0.0.2 sh -c \
	    "touch $PWD/started; until grep -q holding $PWD/hold.log 2>/dev/null; do sleep 0.05; done; echo last" \
	    >out 2>err & pid=$!; } &&
	test_at_exit "kill -KILL $pid 2>/dev/null" &&
	wait_for 30 test -e started &&
	touch armed &&
	kill -USR1 $pid &&
	wait_for 60 eval "! proc_alive $pid" &&
	wait $pid &&
	grep -qx "held write" hold.log &&
	grep -qx "\[0\] last" out
'

test_done
