#!/bin/bash
# t2000-rdzv-ids.sh -- every worker gets a distinct rank and rank 0's NCCL id.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/rdzv-lib.sh"

if ! nccl_loadable; then
	test_skip '8 probes get 8 ranks and one NCCL id' 'libnccl.so.2 not loadable'
else
test_expect_success '8 probes get 8 distinct ranks and 8 identical non-zero ids' '
	serve_start -n 8 -t 30 &&
	for i in 7 6 5 4 3 2 1 0; do
		DTRUN_RANK=$i rdzv-probe -f -b >out.$i 2>err.$i &
	done &&
	serve_wait &&
	cat out.* err.* &&
	[ "$(grep -h ^rank out.* | awk "{print \$2}" | sort -n | tr "\n" " ")" = "0 1 2 3 4 5 6 7 " ] &&
	[ "$(grep -h ^rank out.* | awk "{print \$4}" | uniq)" = 8 ] &&
	[ "$(grep -h ^idfull out.* | wc -l)" -eq 8 ] &&
	[ "$(grep -h ^idfull out.* | sort -u | wc -l)" -eq 1 ] &&
	! grep -q "^idfull 0*$" out.0
'
fi

test_expect_success 'without a plan, ranks follow (host, local rank) whatever the start order' '
	serve_start -n 6 -P -t 30 &&
	for hl in c:0 a:1 b:1 a:0 c:1 b:0; do
		DTRUN_HOST=${hl%:*} LOCAL_RANK=${hl#*:} rdzv-probe -j -b >out.$hl 2>&1 &
	done &&
	serve_wait &&
	cat out.* &&
	for hl in a:0 a:1 b:0 b:1 c:0 c:1; do cat out.$hl || return 1; done >all &&
	test "$(awk "{print \$2}" all | tr "\n" " ")" = "0 1 2 3 4 5 " &&
	test "$(awk "{print \$8}" all | tr "\n" " ")" = "0 0 1 1 2 2 " &&
	test "$(awk "{print \$10}" all | uniq)" = 3
'

test_expect_success 'the launcher plan places ranks by DTRUN_HOST and local rank too' '
	serve_start -n 4 -H n1,n2 -t 30 &&
	for hl in n2:1 n1:0 n2:0 n1:1; do
		DTRUN_HOST=${hl%:*} DTRUN_LOCAL_RANK=${hl#*:} rdzv-probe -j >out.$hl 2>&1 &
	done &&
	serve_wait &&
	test "$(awk "{print \$2}" out.n1:0 out.n1:1 out.n2:0 out.n2:1 | tr "\n" " ")" = "0 1 2 3 "
'

test_expect_success 'without NCCL, rank 0 says so and the others learn it instead of waiting' '
	serve_start -n 3 -t 30 &&
	for i in 0 1 2; do
		DTRUN_NCCL_LIBRARY=/nonexistent/libnccl.so.2 DTRUN_RANK=$i \
		    rdzv-probe >out.$i 2>err.$i &
	done &&
	serve_wait &&
	cat err.* &&
	grep -q "dtcomm_nccl_id: NCCL cannot be loaded: cannot load NCCL (/nonexistent/libnccl.so.2)" err.0 &&
	grep -q "rank 0 could not make NCCL id 0: cannot load NCCL" err.1 &&
	grep -q "rank 0 could not make NCCL id 0" err.2
'

test_expect_success 'a worker outside dtrun gets a clear error' '
	test_expect_code 1 env -u DTRUN_RDZV_ADDR -u DTRUN_RDZV_TOKEN DTRUN_RANK=0 rdzv-probe 2>err &&
	grep "DTRUN_RDZV_ADDR is not set: start this program with dtrun" err
'

test_done
