#!/bin/bash
# t2031-store-dtrun.sh -- PyTorch's env:// store served by dtrun: every
# rank, rank 0 too, a TCPStore client of its own host's agent
# (MASTER_ADDR=127.0.0.1, the agent's port), which carries the connection
# to dtrun's store (store/storefeat.c). Real torch 1.13 ranks init and
# all_reduce over gloo, locally, over two agents and over ssh; a restart
# gets a fresh store; a rank killed mid-init fails the job at once; a
# stranger's connection and an oversized value harm nobody.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/sshd.sh"

PY=/usr/bin/python3
JOB=$SRC/tests/sh/store-job.py
RAW=$SRC/tests/sh/store-raw.py

if ! "$PY" -c 'import torch.distributed' 2>/dev/null; then
	test_skip 'the store dtrun serves, with real PyTorch' 'no python3-torch'
	test_done
fi

# sums_ok N ATTEMPT -- every one of N ranks printed its line for ATTEMPT,
# with the sum of 1..N, through the agent store, from 127.0.0.1.
sums_ok() {
	r=0
	while [ $r -lt "$1" ]; do
		grep -Eq "^attempt $2 rank $r of $1 sum $(($1 * ($1 + 1) / 2)) agent-store True at 127\.0\.0\.1:[0-9]+ fresh [01]\$" out ||
		    { echo "rank $r: no line"; cat out err; return 1; }
		r=$((r + 1))
	done
}

test_expect_success '4 gloo ranks on two agents init and all_reduce through dtrun'"'"'s one store, rank 0 a client like the rest' '
	dtrun -v --launcher local -H a:2,b:2 --timeout 120 --prefix "" "$PY" "$JOB" >out 2>err &&
	sums_ok 4 0 &&
	test $(grep -Eo "at 127\.0\.0\.1:[0-9]+" out | sort -u | wc -l) -eq 2 &&
	test $(grep -c "^dtrun: store: " err) -eq 1 &&
	grep -Eq "^dtrun: store: [1-9][0-9]* queries served" err
'

test_expect_success 'a restart re-inits through a fresh store (no key of the last attempt)' '
	dtrun -v -n 2 --max-restarts 1 --restart-delay 0.1 --timeout 180 --prefix "" \
	    "$PY" "$JOB" restart >out 2>err &&
	sums_ok 2 0 && sums_ok 2 1 &&
	grep -q "^attempt 0 rank 0 .* fresh 1\$" out &&
	grep -q "^attempt 1 rank 0 .* fresh 1\$" out &&
	test $(grep -c "^dtrun: store: " err) -eq 2
'

test_expect_success 'a rank killed mid-init, the others waiting in the store: the job fails at once, named' '
	test_expect_code 137 dtrun -n 3 --timeout 120 "$PY" "$JOB" die >out 2>err &&
	grep -q "^dtrun: job failed: rank 2 on localhost was killed by signal 9 (Killed) first; 2 other ranks were stopped" err
'

# A copy another user can read, whatever the clone's directory allows.
SHARED=$(mktemp -d /tmp/dtrun-XXXXXX)
chmod 755 "$SHARED" && cp "$RAW" "$SHARED/raw.py" && chmod 644 "$SHARED/raw.py"
test_at_exit "rm -rf $SHARED"

test_expect_success 'another user'"'"'s connection to the agent'"'"'s store is closed unheard; the job goes on' '
	rm -f go &&
	dtrun -n 1 --timeout 60 --prefix "" sh -c "echo port \$MASTER_PORT; while [ ! -e go ]; do sleep 0.05; done; python3 $SHARED/raw.py add \$MASTER_PORT k" >out 2>err &
	job=$! &&
	test_at_exit "kill $job 2>/dev/null" &&
	wait_for 30 grep -q "^port " out &&
	port=$(sed -n "s/^port //p" out) &&
	setpriv --reuid=65534 --regid=65534 --clear-groups python3 "$SHARED/raw.py" add "$port" k >stranger &&
	grep -qx closed stranger &&
	python3 "$SHARED/raw.py" add "$port" k >ours &&
	grep -qx "answered 1" ours &&
	touch go &&
	wait $job &&
	grep -qx "answered 2" out
'

test_expect_success 'a value over the limit: that connection is closed, dtrun says why, the rank goes on' '
	dtrun -n 1 --timeout 60 --prefix "" sh -c "python3 $RAW big \$MASTER_PORT; python3 $RAW add \$MASTER_PORT k" >out 2>err &&
	test "$(cat out)" = "closed
answered 1" &&
	grep -q "^dtrun: warning: store: a rank'"'"'s connection on localhost (channel 1) closed: a value of 1073741824 bytes (at most 67108864)" err
'

if why=$(sshd_skip_reason); then
	test_skip 'over ssh: 4 ranks on two hosts through their agents' "$why"
else
	sshd_start || { echo "could not start sshd"; exit 1; }
	test_expect_success 'over ssh: 4 ranks on two hosts init and all_reduce through their agents' '
		dtrun_ssh --ssh-agent-dir "$TRASH/agents" -H 127.0.0.1:2,127.0.0.2:2 --timeout 120 \
		    --prefix "" "$PY" "$JOB" >out 2>err &&
		sums_ok 4 0 &&
		test $(grep -Eo "at 127\.0\.0\.1:[0-9]+" out | sort -u | wc -l) -eq 2
	'
fi

test_done
