#!/bin/bash
# t4060-straggler.sh -- the straggler watch: 8 local ranks, each a steady
# training loop (helpers/stepper, or a python3 one with dtrun_progress),
# one of them 15% slower a step. It is named once, with its pace against the
# median, from the rhythm of its lines or from the steps it reports; ranks
# that differ by noise alone are never named. --on-straggler shows its
# stack or stops the job (122).
. "$(dirname "$0")/lib.sh"

STEP=$B/helpers/stepper
# The straggler lines of file $1.
named() {
	grep "^dtrun: straggler: " "$1" || true
}

test_expect_success 'zero-config: the rank whose lines come 15% slower is named, alone, from its lines' '
	test_expect_code 122 dtrun -n 8 --on-straggler stop "$STEP" -p 0.1 -s 5 -n 1200 >out 2>err &&
	named err >got &&
	test $(wc -l <got) -eq 1 &&
	grep -q "^dtrun: straggler: rank 5 on localhost: 0\.1[01][0-9]* s per \"step # loss #\.#\" line vs median 0\.[01][0-9]* s (last [0-9]* lines)$" got &&
	grep -qx "dtrun: job failed: stopped for a straggler, rank 5 on localhost (--on-straggler stop); 8 ranks were stopped" err
'

test_expect_success 'reported steps (dtcomm_step): named in s/step' '
	test_expect_code 122 dtrun -n 8 --on-straggler stop "$STEP" -p 0.1 -c -s 2 -n 1200 >out 2>err &&
	named err >got &&
	test $(wc -l <got) -eq 1 &&
	grep -q "^dtrun: straggler: rank 2 on localhost: 0\.1[01][0-9]* s/step vs median 0\.[01][0-9]* s (last [0-9]* steps)$" got
'

test_expect_success 'reported steps (python: dtrun_progress.step): named, and the job goes on by default' '
	cat >train.py <<-\EOF &&
	import os, random, time
	import dtrun_progress
	rank = int(os.environ["RANK"])
	per = 0.1 * (1.15 if rank == 6 else 1.0)
	t = time.monotonic()
	for i in range(400):
	    t += per * random.uniform(0.97, 1.03)
	    time.sleep(max(0, t - time.monotonic()))
	    dtrun_progress.step(i)
	EOF
	PYTHONPATH=$SRC/python dtrun -n 8 python3 train.py >out 2>err &&
	named err >got &&
	test $(wc -l <got) -eq 1 &&
	grep -q "^dtrun: straggler: rank 6 on localhost: 0\.1[01][0-9]* s/step vs median 0\.[01][0-9]* s" got
'

test_expect_success 'ranks that differ by noise alone: never named, from lines or from steps' '
	# Both at once: the noise of one is the other one too.
	dtrun -n 8 "$STEP" -c -p 0.1 -n 250 >out2 2>err2 &
	dtrun -n 8 "$STEP" -p 0.1 -n 250 >out 2>err &&
	wait $! &&
	test $(grep -c "] step " out) -eq 2000 &&
	test -z "$(named err)" &&
	test -z "$(named err2)"
'

test_expect_success '--on-straggler stack: its stack, and only its, is shown; the job goes on' '
	dtrun -n 8 --on-straggler stack "$STEP" -p 0.1 -s 3 -n 250 >out 2>err &&
	grep -q "^dtrun: straggler: rank 3 on localhost: " err &&
	grep -q "^dtrun: stacks of 1 rank in 1 group" err &&
	grep -q "^dtrun:   rank 3 on localhost, pid [0-9]*" err &&
	test $(grep -c "] step " out) -eq 2000
'

test_expect_success '--straggler-threshold 0 turns the watch off; bad values exit 2' '
	dtrun -n 2 --straggler-threshold 0 sh -c "echo \${DTRUN_PROGRESS:-none}" >out 2>err &&
	test "$(sort -u out)" = "[0] none
[1] none" &&
	dtrun -n 1 --prefix "" sh -c "echo \$DTRUN_PROGRESS" >out &&
	grep -q "^unix:@dtrun-prog\." out &&
	dtrun -n 1 --straggler-threshold 25% true &&
	for v in -1 abc 11 5%%; do
		test_expect_code 2 dtrun -n 1 --straggler-threshold "$v" true 2>err || return 1
		grep -q "^dtrun: --straggler-threshold \"$v\": want a fraction from 0 (off) to 10, or a percentage" err || return 1
	done &&
	test_expect_code 2 dtrun -n 1 --on-straggler kill true 2>err &&
	grep -qx "dtrun: --on-straggler kill: want report, stack or stop" err
'

test_done
