#!/bin/bash
# t2001-rdzv-faults.sh -- forged tokens, garbage on the port, missing ranks.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/rdzv-lib.sh"

port_of() { echo "${DTRUN_RDZV_ADDR##*:}"; }

test_expect_success 'a forged token is refused with a clear error, no rank, no id' '
	serve_start -n 2 -t 30 &&
	test_expect_code 1 env DTRUN_RANK=0 \
	    DTRUN_RDZV_TOKEN=00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff \
	    rdzv-probe -j >forged.out 2>forged.err &&
	cat forged.err &&
	grep -q "dtcomm_init: authentication failed: rendezvous server: authentication failed: the worker.s DTRUN_RDZV_TOKEN is not this job.s secret" forged.err &&
	test ! -s forged.out &&
	test_expect_code 1 env DTRUN_RANK=0 DTRUN_RDZV_TOKEN=secret rdzv-probe -j 2>bad.err &&
	grep -q "DTRUN_RDZV_TOKEN: rendezvous token is not a hex string" bad.err &&
	test_expect_code 1 env DTRUN_RANK=0 DTRUN_RDZV_TOKEN=0011 rdzv-probe -j 2>short.err &&
	grep -q "too short (16 bits, need at least 128)" short.err &&
	for i in 0 1; do DTRUN_RANK=$i rdzv-probe -j >out.$i & done &&
	serve_wait &&
	cat serve.err &&
	grep -q "2 of 2 joined, 3 accepted, 1 auth failed" serve.err &&
	test "$(cat out.* | wc -l)" -eq 2
'

# The probe holds the token and sleeps before it joins, so the server and
# it are both alive while every command line is read, however slow that is;
# then it is killed, and a second probe lets the server finish.
test_expect_success 'the token is on no command line' '
	serve_start -n 1 -t 60 &&
	{ DTRUN_RANK=0 rdzv-probe -j -d 300 >out & } &&
	probe=$! &&
	echo $probe >>"$TRASH/pids" &&
	wait_for 10 grep -q rdzv-probe /proc/$probe/cmdline &&
	echo "$DTRUN_RDZV_TOKEN" >pattern &&
	for f in /proc/[0-9]*/cmdline; do { tr "\0" " " <$f; echo; } 2>/dev/null || :; done >cmdlines &&
	grep -q "rdzv-serve -o env -n 1" cmdlines &&
	grep -q "rdzv-probe -j -d 300" cmdlines &&
	! grep -q -F -f pattern cmdlines &&
	kill $probe &&
	DTRUN_RANK=0 rdzv-probe -j >out &&
	test "$(stat -c %a env)" = 600 &&
	serve_wait
'

test_expect_success 'garbage, oversized frames and silent peers do not stop the job' '
	serve_start -n 4 -i 1 -t 30 &&
	port=$(port_of) &&
	for i in 0 1; do DTRUN_RANK=$i rdzv-probe -f -b >out.$i 2>err.$i & done &&
	{ head -c 65536 /dev/urandom >/dev/tcp/127.0.0.1/$port 2>/dev/null || :; } &&
	{ printf "\377\377\377\377\001" >/dev/tcp/127.0.0.1/$port || :; } &&
	{ printf "\000\000\000\005\001abcd" >/dev/tcp/127.0.0.1/$port || :; } &&
	exec 3<>/dev/tcp/127.0.0.1/$port &&
	for i in 2 3; do DTRUN_RANK=$i rdzv-probe -f -b >out.$i 2>err.$i & done &&
	serve_wait &&
	exec 3>&- &&
	cat serve.err err.* &&
	test "$(grep -h ^rank out.* | wc -l)" -eq 4 &&
	test "$(grep -h ^idfull out.* | sort -u | wc -l)" -eq 1 &&
	grep -q "4 of 4 joined, 8 accepted, 0 auth failed, 4 dropped" serve.err
'

test_expect_success 'a missing rank times out, naming the rank and its host' '
	serve_start -n 4 -H hostA,hostB -t 1 &&
	for i in 0 1 2; do DTRUN_RANK=$i rdzv-probe -j -b >out.$i 2>err.$i & done &&
	test_expect_code 3 serve_wait &&
	cat serve.err &&
	grep -q "rendezvous timed out after 1 s: 1 of 4 ranks never joined: rank 3 on hostB (local rank 1)" serve.err &&
	wait_for 5 eval "test \$(cat err.* | grep -c \"dtcomm_barrier: aborted: the job is aborting: rendezvous timed out\") -eq 3" &&
	grep -q "rank 3 on hostB" err.0
'

test_expect_success 'without a plan, a timeout names the hosts that did come' '
	serve_start -n 3 -P -t 1 &&
	{ DTRUN_HOST=gpu7 LOCAL_RANK=0 rdzv-probe -j 2>err & } &&
	test_expect_code 3 serve_wait &&
	grep -q "2 of 3 ranks never joined (no rank plan: ranks are given by host once all have joined; joined so far: gpu7 x1)" serve.err
'

test_done
