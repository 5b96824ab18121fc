#!/bin/bash
# t5001-slurm-nodes.sh -- the Slurm launcher across two nodes: node1 and
# node2, one slurmd each at 127.0.0.1 and 127.0.0.2. Agents are told apart
# by the node name they prove, not by where they connect from.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/slurm.sh"

if why=$(slurm_skip_reason); then
	test_skip 'Slurm launcher on two nodes' "$why"
	test_done
fi
slurm_start 2 || { echo "could not start the Slurm cluster"; exit 1; }
slurm_salloc dtrun-t5001 -O -N2 -n6 || exit 1
ALLOC=(env SLURM_JOB_ID=$JOB "SLURM_JOB_NODELIST=node[1-2]" "SLURM_TASKS_PER_NODE=3(x2)")
in_alloc() { "${ALLOC[@]}" "$@"; }
unset SLURM_JOB_ID SLURM_JOBID

test_expect_success '6 ranks on 2 nodes: each rank on its node, with its env' '
	in_alloc dtrun --store rank0 --prefix "" sh -c "echo \$RANK \$LOCAL_RANK \$NODE_RANK \$NNODES \$LOCAL_WORLD_SIZE \$SLURMD_NODENAME \$DTRUN_HOST \$MASTER_ADDR" >out &&
	sort -n out >got &&
	cat >want <<-EOW &&
	0 0 0 2 3 node1 node1 node1
	1 1 0 2 3 node1 node1 node1
	2 2 0 2 3 node1 node1 node1
	3 0 1 2 3 node2 node2 node1
	4 1 1 2 3 node2 node2 node1
	5 2 1 2 3 node2 node2 node1
	EOW
	diff want got &&
	in_alloc dtrun --prefix "" sh -c "echo \$RANK \$SLURMD_NODENAME \$MASTER_ADDR:\$MASTER_PORT \$DTRUN_STORE" >out &&
	test $(wc -l <out) -eq 6 &&
	while read -r r node addr store; do
		test "$addr" = "$store" && case $addr in 127.0.0.1:[0-9]*) ;; *) false ;; esac || return 1
	done <out &&
	test $(cut -d" " -f2,3 out | sort -u | wc -l) -eq 2
'

# (Over lo: node1, the name of rank 0's host, has no address here.)
test_expect_success '--check: a row per node, both reach node1; a command only node1 has is named on node2' '
	in_alloc dtrun --check --iface lo true >out 2>err &&
	grep -q "^node1  .*  ok  .*/true  " out && grep -q "^node2  .*  ok  .*/true  " out &&
	grep -qx "no problems on 2 hosts" out &&
	printf "#!/bin/sh\n" >"$SLURM_HIDDEN/job.sh" && chmod +x "$SLURM_HIDDEN/job.sh" &&
	test_expect_code 78 in_alloc dtrun --check --iface lo "$SLURM_HIDDEN/job.sh" >out 2>err &&
	grep -q "^node1  .*  $SLURM_HIDDEN/job.sh  " out &&
	grep -q "^node2  .*  MISSING  " out &&
	grep -qx "dtrun: check: node2: $SLURM_HIDDEN/job.sh: does not exist (check the path)" err &&
	! grep -q "dtrun: check: node1" err
'

test_expect_success '--check --deep: the agents measure node1 -> node2 and back' '
	in_alloc dtrun --check --deep --deep-bytes 16M --iface lo true >out 2>err &&
	grep -q "^node1  *node2  *ring  *[0-9.]* ms  *[0-9.]* [MG]bit/s  *-$" out &&
	grep -q "^node2  *node1  *ring  *[0-9.]* ms  *[0-9.]* [MG]bit/s  *-$" out &&
	grep -q "^deep: 2 pairs in 2 rounds: " out &&
	grep -qx "no problems on 2 hosts" out
'

test_expect_success 'fewer ranks: only the nodes used get an agent' '
	in_alloc dtrun -n 3 --prefix "" sh -c "echo \$SLURMD_NODENAME" >out &&
	test "$(sort -u out)" = node1
'

test_expect_success 'fail-fast across nodes: the code, no survivors on either' '
	test_expect_code 4 in_alloc dtrun sh -c "echo \$\$ >\$PWD/pid.\$RANK; [ \$RANK = 4 ] && { sleep 0.5; exit 4; }; exec sleep 300" 2>err &&
	grep -q "rank 4 on node2 (pid [0-9]*) exited with code 4; stopping 5 other ranks" err &&
	wait_gone 5 pid.*
'

test_expect_success 'the agent missing on one node: that node named, nothing left running' '
	cp "$B/dtrun-agent" "$SLURM_HIDDEN/dtrun-agent" &&
	test_expect_code 255 in_alloc env DTRUN_AGENT="$SLURM_HIDDEN/dtrun-agent" dtrun sh -c "echo \$\$ >\$PWD/pid.\$RANK; exec sleep 300" 2>err &&
	# The reason is slurmstepd'"'"'s execve error when srun passes it on in
	# time, else srun'"'"'s own line about node2'"'"'s task.
	grep -qE "dtrun: node2: its dtrun-agent ended before connecting to dtrun: .*(execve\(\): $SLURM_HIDDEN/dtrun-agent: No such file or directory|node2: task 1: Exited with exit code)" err &&
	! grep -q "dtrun: node1: " err &&
	wait_gone 5 pid.*
'

test_done
