#!/bin/bash
# t4022-torchrun-habits.sh -- torchrun's and mpirun's options as their users
# type them, with the meaning they have there (issue 32, item 3).
. "$(dirname "$0")/lib.sh"

PY=/usr/bin/python3

test_expect_success '--nproc-per-node cpu and auto (no GPU here) run one rank per core' '
	cores=$(getconf _NPROCESSORS_ONLN) &&
	for w in cpu cpu_again auto; do
		env -u CUDA_VISIBLE_DEVICES dtrun --nproc-per-node ${w%_again} --prefix "" sh -c "echo \$WORLD_SIZE" >out &&
		test $(wc -l <out) -eq $cores &&
		test "$(sort -u out)" = "$cores" || return 1
	done
'

test_expect_success '--nproc-per-node gpu with no GPU, or auto on other hosts, says what to give' '
	if test -d /proc/driver/nvidia/gpus; then skip_test "this machine has GPUs"; fi &&
	test_expect_code 2 dtrun --nproc-per-node gpu true 2>err &&
	grep -q "shows no GPU" err &&
	test_expect_code 2 dtrun -H a,b --nproc-per-node auto true 2>err &&
	grep -q "give a number" err
'

test_expect_success '--log-dir and --log_dir are --output-dir' '
	for o in --log-dir --log_dir; do
		rm -rf logs &&
		dtrun -n 2 $o logs sh -c "echo hi\$RANK" >out &&
		test "$(cat logs/rank.1/stdout)" = hi1 || return 1
	done
'

test_expect_success '--redirects 3: ranks'"'"' output only in the files, -t/--tee 2 brings stderr back' '
	dtrun -n 2 --redirects 3 --log-dir logs sh -c "echo o\$RANK; echo e\$RANK >&2" >out 2>err &&
	! grep -q "[oe][01]" out err &&
	test "$(cat logs/rank.0/stdout logs/rank.1/stderr)" = "$(printf "o0\ne1")" &&
	rm -rf logs &&
	dtrun -n 2 -r 3 -t 2 --log-dir logs sh -c "echo o\$RANK; echo e\$RANK >&2" >out 2>err &&
	! grep -q o out && grep -q "e0" err && grep -q "e1" err &&
	test "$(cat logs/rank.1/stdout)" = o1
'

test_expect_success '--redirects per local rank, and without a --log-dir it is refused' '
	dtrun -n 2 --redirects 1:1 --log-dir logs --prefix "%r " sh -c "echo o\$RANK" >out &&
	test "$(cat out)" = "0 o0" && test "$(cat logs/rank.1/stdout)" = o1 &&
	test_expect_code 2 dtrun -n 2 --redirects 3 true 2>err &&
	grep -q -- "--log-dir" err &&
	test_expect_code 2 dtrun -n 2 --redirects 4 --log-dir l true 2>err &&
	grep -q "0 (none), 1 (stdout)" err
'

test_expect_success '--local-ranks-filter shows only these ranks; the files keep every rank' '
	dtrun -n 4 --local-ranks-filter 0,2-3 --log-dir logs --prefix "%r " sh -c "echo x\$RANK" >out &&
	test "$(sort out | tr "\n" " ")" = "0 x0 2 x2 3 x3 " &&
	test "$(cat logs/rank.1/stdout)" = x1 &&
	dtrun -n 2 --local_ranks_filter 1 --prefix "" sh -c "echo x\$RANK" >out &&
	test "$(cat out)" = x1 &&
	test_expect_code 2 dtrun --local-ranks-filter 1-0 true 2>err &&
	grep -q "list of ranks" err
'

test_expect_success '--monitor-interval is taken, with a note' '
	dtrun -n 1 --monitor-interval 5 --monitor_interval 0.1 true 2>err &&
	grep -q "monitor-interval: ignored" err
'

test_expect_success '--role sets ROLE_NAME' '
	dtrun -n 2 --role trainer --prefix "" sh -c "echo \$ROLE_NAME" >out &&
	test "$(sort -u out)" = trainer
'

test_expect_success '-m and --module run python3 -m MODULE, --no-python runs the command, both together refused' '
	mkdir pkg && echo "import os; print(\"mod\", os.environ[\"RANK\"])" >pkg/hello.py &&
	(cd pkg && dtrun -n 2 --prefix "" -m hello) >out &&
	test "$(sort out | tr "\n" " ")" = "mod 0 mod 1 " &&
	(cd pkg && dtrun -n 1 --prefix "" --module hello) >out &&
	test "$(cat out)" = "mod 0" &&
	dtrun -n 1 --no-python --prefix "" echo plain >out &&
	test "$(cat out)" = plain &&
	test_expect_code 2 dtrun -m --no-python x 2>err &&
	grep -q "together" err
'

test_expect_success '--tag-output prefixes lines as mpirun does' '
	dtrun -n 2 --tag-output sh -c "echo hi; echo oops >&2" >out 2>err &&
	grep -qx "\[1,0\]<stdout>:hi" out && grep -qx "\[1,1\]<stdout>:hi" out &&
	grep -qx "\[1,1\]<stderr>:oops" err
'

test_expect_success 'a command that is a .py file: the hint names the interpreter' '
	echo "print(1)" >train.py &&
	test_expect_code 2 dtrun -n 1 train.py 2>err &&
	test_expect_code 2 dtrun -n 1 ./train.py 2>err2 &&
	grep -q "name the interpreter: dtrun ... python3 train.py" err &&
	grep -q "name the interpreter" err2
'

# What the installed torch's torchrun agent sets, where there is one.
agent=$("$PY" -c "import torch.distributed.elastic.agent.server.local_elastic_agent as m; print(m.__file__)" 2>/dev/null) || agent=

test_expect_success 'TORCH_NCCL_ASYNC_ERROR_HANDLING and NCCL_ASYNC_ERROR_HANDLING are 1 as torchrun sets them; a value the user set wins' '
	if test -n "$agent"; then
		grep -q "NCCL_ASYNC_ERROR_HANDLING\", str(1)" "$agent" || return 1
	fi &&
	env -u TORCH_NCCL_ASYNC_ERROR_HANDLING -u NCCL_ASYNC_ERROR_HANDLING \
	    dtrun -n 2 --prefix "" sh -c "echo \$TORCH_NCCL_ASYNC_ERROR_HANDLING/\$NCCL_ASYNC_ERROR_HANDLING" >out &&
	test "$(sort -u out)" = 1/1 &&
	NCCL_ASYNC_ERROR_HANDLING=0 dtrun -n 1 -x TORCH_NCCL_ASYNC_ERROR_HANDLING=3 --prefix "" sh -c "echo \$TORCH_NCCL_ASYNC_ERROR_HANDLING/\$NCCL_ASYNC_ERROR_HANDLING" >out &&
	test "$(cat out)" = 3/0 &&
	env -u NCCL_ASYNC_ERROR_HANDLING dtrun -n 1 --framework none --prefix "" sh -c "echo \${NCCL_ASYNC_ERROR_HANDLING-unset}" >out &&
	test "$(cat out)" = unset
'

test_expect_success '-x of an unset variable warns and goes on, as mpirun' '
	env -u NOPE_NOT_SET dtrun -n 1 -x NOPE_NOT_SET --prefix "" sh -c "echo \${NOPE_NOT_SET-unset}" >out 2>err &&
	test "$(cat out)" = unset &&
	grep -q "NOPE_NOT_SET: not set here" err
'

test_expect_success 'a peer'"'"'s option dtrun lacks is refused naming what dtrun does instead' '
	for w in "--rdzv_conf a=b:--start-timeout" "--start-method spawn:leave it out" \
	    "--map-by core:host by host" "-mca btl tcp:OMPI_MCA_NAME" "--host a,b:-H a,b" \
	    "-N 2:--nproc-per-node N" "-hostfile h:--hostfile FILE" "-ppn 2:--nproc-per-node" \
	    "--output-filename d:--output-dir"; do
		test_expect_code 2 dtrun ${w%%:*} true 2>err &&
		grep -q "is not dtrun'"'"'s: .*${w#*:}" err || { cat err; return 1; }
	done &&
	test_expect_code 2 dtrun --frobnicate true 2>err &&
	grep -q "unknown option --frobnicate" err &&
	dtrun -n 1 sh -c "echo \$1" sh -host >out &&
	test "$(cat out)" = "[0] -host"
'

test_done
