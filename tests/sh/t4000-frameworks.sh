#!/bin/bash
# t4000-frameworks.sh -- --framework: each stack's variables reach the ranks.
. "$(dirname "$0")/lib.sh"

# Prints the rank's variables named by the pattern, sorted, on one line.
cat >"$TRASH/show" <<'EOS'
#!/bin/sh
env | grep -E "^($1)=" | sort | tr '\n' ' '
echo
EOS
chmod +x "$TRASH/show"
S=$TRASH/show

test_expect_success 'without --framework, PyTorch'"'"'s variables' '
	dtrun -n 2 --prefix "%r " "$S" "RANK|WORLD_SIZE|MASTER_ADDR|GROUP_WORLD_SIZE" >out &&
	grep -qx "0 GROUP_WORLD_SIZE=1 MASTER_ADDR=127.0.0.1 RANK=0 WORLD_SIZE=2 " out &&
	grep -qx "1 GROUP_WORLD_SIZE=1 MASTER_ADDR=127.0.0.1 RANK=1 WORLD_SIZE=2 " out
'

test_expect_success '--framework none exports only DTRUN_*' '
	env -u RANK -u MASTER_ADDR dtrun -n 2 --framework none --prefix "" sh -c \
	    "echo \${RANK-unset} \${MASTER_ADDR-unset} \${NCCL_SOCKET_IFNAME-unset} \$DTRUN_RANK \$DTRUN_WORLD_SIZE \$DTRUN_LOCAL_WORLD_SIZE" >out &&
	sort out >s && printf "unset unset unset 0 2 2\nunset unset unset 1 2 2\n" >want &&
	cmp s want
'

test_expect_success '--framework tensorflow: TF_CONFIG per rank, one free port each' '
	dtrun -n 3 --framework tensorflow --prefix "" sh -c "echo \$RANK-\$TF_CONFIG" >out &&
	sort out >s &&
	grep -q "^-{\"cluster\":{\"worker\":\[\"127.0.0.1:[0-9]*\",\"127.0.0.1:[0-9]*\",\"127.0.0.1:[0-9]*\"\]},\"task\":{\"type\":\"worker\",\"index\":0}}\$" s &&
	grep -q "\"index\":2}}\$" s &&
	test $(sed "s/,\"task.*//" s | sort -u | wc -l) -eq 1 &&
	test $(head -n 1 s | grep -o "127.0.0.1:[0-9]*" | sort -u | wc -l) -eq 3
'

test_expect_success '--framework mxnet: DMLC_* of a worker' '
	dtrun -n 2 --framework mxnet --prefix "%r " "$S" "DMLC_[A-Z_]*" >out &&
	grep -qE "^1 DMLC_INTERFACE=lo DMLC_NODE_HOST=127.0.0.1 DMLC_NUM_SERVER=0 DMLC_NUM_WORKER=2 DMLC_PS_ROOT_PORT=[0-9]+ DMLC_PS_ROOT_URI=127.0.0.1 DMLC_ROLE=worker DMLC_WORKER_ID=1 \$" out
'

test_expect_success '--framework horovod: HOROVOD_*' '
	dtrun -n 3 --framework horovod --prefix "%r " "$S" "HOROVOD_[A-Z_]*" >out &&
	grep -qx "2 HOROVOD_CROSS_RANK=0 HOROVOD_CROSS_SIZE=1 HOROVOD_HOSTNAME=localhost HOROVOD_LOCAL_RANK=2 HOROVOD_LOCAL_SIZE=3 HOROVOD_RANK=2 HOROVOD_SIZE=3 " out
'

test_expect_success '--framework mpi: OMPI_COMM_WORLD_* and PMI_*' '
	dtrun -n 2 --framework mpi --prefix "%r " "$S" "OMPI_[A-Z_]*|PMI_[A-Z]*|MPI_LOCAL[A-Z]*" >out &&
	grep -qx "1 MPI_LOCALNRANKS=2 MPI_LOCALRANKID=1 OMPI_COMM_WORLD_LOCAL_RANK=1 OMPI_COMM_WORLD_LOCAL_SIZE=2 OMPI_COMM_WORLD_NODE_RANK=1 OMPI_COMM_WORLD_RANK=1 OMPI_COMM_WORLD_SIZE=2 PMI_RANK=1 PMI_SIZE=2 " out
'

test_expect_success 'frameworks combine, by commas and by repeating' '
	dtrun --framework pytorch,mpi --framework horovod --prefix "" sh -c \
	    "echo \$RANK \$OMPI_COMM_WORLD_RANK \$HOROVOD_RANK \${TF_CONFIG-unset}" >out &&
	test "$(cat out)" = "0 0 0 unset"
'

test_expect_success '-x wins over a framework'"'"'s per-rank variable' '
	dtrun -n 2 --framework mpi -x OMPI_COMM_WORLD_RANK=7 --prefix "" sh -c "echo \$OMPI_COMM_WORLD_RANK" >out &&
	test "$(sort -u out)" = 7
'

test_expect_success 'an unknown framework: exit 2 with a suggestion' '
	test_expect_code 2 dtrun --framework pytorh true 2>err &&
	test "$(cat err)" = "dtrun: --framework \"pytorh\": unknown (did you mean pytorch?)" &&
	test_expect_code 2 dtrun --framework jax true 2>err &&
	grep -q "known: pytorch tensorflow mxnet horovod mpi none" err &&
	test_expect_code 2 dtrun --framework none,mpi true 2>err &&
	grep -q "cannot be combined" err
'

test_expect_success 'examples/tf_config.py reads TF_CONFIG as TensorFlow would' '
	dtrun -n 2 --framework tensorflow python3 "$SRC/examples/tf_config.py" >out &&
	grep -qx "\[0\] worker 0 of 2: me 127.0.0.1:[0-9]*, chief 127.0.0.1:[0-9]*" out &&
	grep -qx "\[1\] worker 1 of 2: me 127.0.0.1:[0-9]*, chief 127.0.0.1:[0-9]*" out
'

test_done
