#!/bin/bash
# t4063-straggler-nccl.sh -- stragglers in lock-step training, from NCCL's
# collectives: the agent names dtrun's profiler plugin in
# NCCL_PROFILER_PLUGIN, each rank's NCCL reports when it enqueued each
# collective, and dtrun names the rank the others wait for. No GPU here:
# helpers/fakecoll drives the plugin as NCCL 2.28 does (make gpu-check
# runs the real thing on a GPU machine).
. "$(dirname "$0")/lib.sh"

# The ranks meet first (fakecoll's sync: files in the working directory),
# so a rank that a loaded machine starts late does not come last at the
# first collectives by that alone.
fresh_meet() { rm -f ready.* start; echo sync; }

test_expect_success 'a rank 20 ms late at every 50 ms collective is named, alone, with the reason' '
	dtrun -v -n 4 --prefix "" fakecoll 80 50 2 20 $(fresh_meet) >out 2>err &&
	test $(grep -c "collectives, plugin dtrun, mask 2\$" out) -eq 4 &&
	grep -Eq "^dtrun: straggler: rank 2 on localhost: last into [0-9]+ of the last [0-9]+ NCCL collectives, (19|2[01])(\.[0-9]*)? ms after the first rank on average \(" err &&
	test $(grep -c "^dtrun: straggler: " err) -eq 1 &&
	grep -q "^dtrun: straggler watch: 320 arrivals at NCCL collectives, 80 collectives complete" err
'

test_expect_success 'ranks in step: nobody named' '
	dtrun -v -n 4 --prefix "" fakecoll 80 50 -1 0 $(fresh_meet) >out 2>err &&
	test $(grep -c "collectives, plugin dtrun, mask 2\$" out) -eq 4 &&
	! grep -q "^dtrun: straggler: " err &&
	grep -q "^dtrun: straggler watch: 320 arrivals at NCCL collectives, 80 collectives complete" err
'

test_expect_success '--on-straggler stop: the job stops on it, exit 122' '
	test_expect_code 122 dtrun -n 4 --on-straggler stop --prefix "" fakecoll 400 50 1 20 $(fresh_meet) >out 2>err &&
	grep -q "^dtrun: straggler: rank 1 on localhost: last into" err
'

test_expect_success 'the user'"'"'s own NCCL_PROFILER_PLUGIN is kept; --no-nccl-profiler and a watch turned off load none' '
	dtrun -n 1 -x NCCL_PROFILER_PLUGIN=/their/plugin.so --prefix "" sh -c "echo \$NCCL_PROFILER_PLUGIN" >out &&
	test "$(cat out)" = /their/plugin.so &&
	for o in --no-nccl-profiler "--straggler-threshold 0"; do
		dtrun -n 1 $o --prefix "" fakecoll 1 1 -1 0 0 >out || test $? -eq 3 &&
		grep -qx "no plugin (NCCL_PROFILER_PLUGIN=)" out || return 1
	done
'

test_done
