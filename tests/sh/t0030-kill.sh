#!/bin/bash
# t0030-kill.sh -- dtrun-kill finds a job by id on this host and stops it.
. "$(dirname "$0")/lib.sh"

export XDG_RUNTIME_DIR=$TRASH/run
mkdir -p "$XDG_RUNTIME_DIR"

test_expect_success 'the agent records its job while it runs, and removes it after' '
	dtrun -n 2 sh -c "until ls \$XDG_RUNTIME_DIR/dtrun | grep -qv tmp; do sleep 0.05; done; ls \$XDG_RUNTIME_DIR/dtrun >seen.\$RANK" &&
	grep -q "^[0-9a-f]*-[0-9a-f]*\.[0-9]*\$" seen.0 &&
	test -z "$(ls "$XDG_RUNTIME_DIR/dtrun")"
'

test_expect_success 'dtrun-kill JOBID stops that job, and dtrun says so' '
	dtrun -n 3 sh -c "echo \$DTRUN_JOB_ID >id; echo \$\$ >\$RANK.pid; sleep 300 & echo \$! >\$RANK.child; wait" 2>err & d=$! &&
	wait_for 10 eval "[ -s 0.pid ] && [ -s 1.pid ] && [ -s 2.pid ]" &&
	dtrun-kill "$(cat id)" >out &&
	grep -q "job $(cat id): stopped agent [0-9]* and 3 ranks" out &&
	test_expect_code 143 wait $d &&
	grep -q "the agent got SIGTERM (dtrun-kill" err &&
	! grep -q "killed by signal" err &&
	wait_gone 3 0.pid 1.pid 2.pid 0.child 1.child 2.child
'

test_expect_success 'dtrun-kill leaves other jobs alone' '
	dtrun sh -c "echo \$DTRUN_JOB_ID >a.id; echo \$\$ >a.pid; exec sleep 300" 2>/dev/null &
	a=$!
	dtrun sh -c "echo \$DTRUN_JOB_ID >b.id; echo \$\$ >b.pid; exec sleep 300" 2>/dev/null &
	b=$!
	wait_for 10 eval "[ -s a.pid ] && [ -s b.pid ]" &&
	dtrun-kill -q "$(cat a.id)" &&
	wait_gone 3 a.pid &&
	proc_alive "$(cat b.pid)" &&
	dtrun-kill --all >out && grep -q "job $(cat b.id)" out &&
	wait_gone 3 b.pid &&
	# Each job ends as its agent did: SIGTERM from dtrun-kill.
	test_expect_code 143 wait $a &&
	test_expect_code 143 wait $b
'

test_expect_success 'dtrun-kill of an unknown job says so and succeeds' '
	dtrun-kill no-such-job >out && grep -q "not running here" out
'

test_expect_success 'a job id with control characters is printed escaped' '
	dtrun-kill "$(printf "x\033[31m\ny")" >out &&
	grep -qx "localhost: job x\\\\x1b\[31m\\\\ny: not running here" out &&
	test $(wc -l <out) = 1
'

test_expect_success 'dtrun-kill without a job id is a usage error' '
	test_expect_code 2 dtrun-kill 2>err && grep -q "give a job id" err
'

test_done
