#!/bin/bash
# t2010-rdzv-dtrun.sh -- dtrun's own rendezvous: every worker started by dtrun
# gets its rank and the NCCL unique id through libdtcomm.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/rdzv-lib.sh"

test_expect_success 'dtrun -n 8: 8 distinct ranks, one world, one local world' '
	dtrun -n 8 --prefix "" rdzv-probe -j >out &&
	test $(wc -l <out) -eq 8 &&
	for r in 0 1 2 3 4 5 6 7; do grep -qx "rank $r size 8 local $r node 0 nodes 1" out || return 1; done
'

if nccl_loadable; then
	test_expect_success 'dtrun -n 8: every rank gets rank 0'"'"'s NCCL id byte for byte' '
		dtrun -n 8 --prefix "" rdzv-probe -f >out &&
		test $(grep -c "^rank " out) -eq 8 &&
		test $(cut -d" " -f1-4 out | grep "^rank" | sort -u | wc -l) -eq 8 &&
		grep "^idfull " out | sort -u >ids &&
		test $(wc -l <ids) -eq 1 &&
		! grep -qE "^idfull 0+\$" ids
	'
else
	test_skip 'NCCL ids through dtrun' 'libnccl.so.2 not loadable here'
fi

test_expect_success 'placement from a hostfile reaches the rendezvous' '
	dtrun --launcher local -H a:2,b:3 --prefix "" rdzv-probe -j >out &&
	grep -qx "rank 1 size 5 local 1 node 0 nodes 2" out &&
	grep -qx "rank 4 size 5 local 2 node 1 nodes 2" out
'

test_expect_success 'a forged token is refused with a clear error, and fails the job' '
	test_expect_code 1 dtrun -n 3 sh -c "[ \$RANK = 1 ] && export DTRUN_RDZV_TOKEN=\$(printf %064d 0); exec rdzv-probe -j" 2>err >out &&
	grep -q "authentication failed" err &&
	grep -q "rank 1 on localhost (pid [0-9]*) exited with code 1" err &&
	! grep -q "^\[1\] rank" out
'

test_expect_success 'the job secret is on no command line' '
	dtrun -n 2 --prefix "" sh -c "echo \$DTRUN_RDZV_TOKEN >token.\$RANK; for f in /proc/[0-9]*/cmdline; do tr \"\\0\" \" \" <\$f 2>/dev/null; echo; done >cmd.\$RANK" &&
	test -s token.0 && cmp token.0 token.1 &&
	grep -q dtrun-agent cmd.0 &&
	! grep -q -F -f token.0 cmd.0 cmd.1
'

test_expect_success 'garbage sent to the rendezvous port does not stop the job' '
	dtrun -n 4 --prefix "" bash -c "if [ \$RANK = 0 ]; then head -c 4096 /dev/urandom >/dev/tcp/\${DTRUN_RDZV_ADDR%:*}/\${DTRUN_RDZV_ADDR#*:} 2>/dev/null; fi; exec rdzv-probe -j -b" >out &&
	test $(grep -c "^rank " out) -eq 4
'

test_expect_success 'a rank that never joins fails the job, named, after --start-timeout' '
	test_expect_code 125 dtrun -n 4 --start-timeout 1 sh -c "[ \$RANK = 2 ] && exec sleep 30; exec rdzv-probe -j -b" 2>err >out &&
	grep -q "1 of 4 ranks never joined: rank 2 on localhost" err &&
	grep -q "start-timeout 1" err
'

# Under an open-files limit of 64 (hard, so dtrun cannot raise it), the
# rank opens 60 connections to the rendezvous: dtrun, which has more open
# already, runs out first. It must say so and fail at once, not wait for
# --start-timeout with ranks that can never join (--timeout bounds a regression).
test_expect_success 'a rendezvous out of descriptors fails the job at once, saying so' '
	(ulimit -n 64 && test_expect_code 125 dtrun -n 1 --start-timeout 300 --timeout 30 --prefix "" bash -c "
		echo \$\$ >rank.pid
		for i in \$(seq 60); do
			exec {fd}<>/dev/tcp/\${DTRUN_RDZV_ADDR%:*}/\${DTRUN_RDZV_ADDR#*:} || break
		done
		exec sleep 300") 2>err &&
	grep -q "rendezvous: out of file descriptors at the open-files limit of 64 (hard limit 64): raise it" err &&
	grep -q "job failed: the rendezvous could not go on" err &&
	! any_alive rank.pid
'

test_expect_success 'workers that never use the rendezvous are not failed by it' '
	dtrun -n 2 --start-timeout 0.3 sleep 0.8
'

test_expect_success 'a worker blocked in a rendezvous wait learns the job is stopping' '
	test_expect_code 3 dtrun -n 3 --kill-grace 30 sh -c "[ \$RANK = 2 ] && { sleep 0.5; exit 3; }; trap \"\" TERM; exec rdzv-probe -j -b" 2>err &&
	grep -q "rank 2 on localhost (pid [0-9]*) exited with code 3" err
'

test_done
