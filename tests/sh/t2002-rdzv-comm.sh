#!/bin/bash
# t2002-rdzv-comm.sh -- dtcomm_nccl_comm makes a real NCCL communicator
# where there are GPUs, and fails clearly where there are none.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/rdzv-lib.sh"

# One rank per GPU; CUDA_VISIBLE_DEVICES gives each its own device 0.
run_comm() {
	serve_start -n "$1" -t 60 &&
	i=0 &&
	while [ $i -lt "$1" ]; do
		{ CUDA_VISIBLE_DEVICES=$i DTRUN_RANK=$i rdzv-probe -c >out.$i 2>err.$i; echo $? >rc.$i; } &
		i=$((i + 1))
	done &&
	serve_wait
}

if ! nccl_loadable; then
	test_skip 'NCCL communicator over the rendezvous' 'libnccl.so.2 not loadable'
elif ! have_gpu; then
	test_skip 'no GPU' 'dtcomm_nccl_comm needs one to make a communicator'
	test_expect_success 'without a GPU, dtcomm_nccl_comm fails with NCCL'"'"'s reason' '
		run_comm 2 &&
		wait_for 10 test -f rc.0 -a -f rc.1 &&
		cat err.* &&
		test "$(cat rc.0 rc.1)" = "4
4" &&
		grep -q "dtcomm_nccl_comm: NCCL call failed: ncclCommInitRank failed: " err.0
	'
else
	ngpu=$(nvidia-smi -L | grep -c GPU)
	test_expect_success "ncclCommInitRank over the rendezvous on $ngpu GPU(s)" '
		run_comm $ngpu &&
		wait_for 60 test -f rc.$((ngpu - 1)) &&
		cat out.* err.* &&
		test "$(grep -h "^comm ok" out.* | wc -l)" -eq $ngpu
	'
fi

test_done
