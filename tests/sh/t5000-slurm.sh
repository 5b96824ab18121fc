#!/bin/bash
# t5000-slurm.sh -- the Slurm launcher on a private one-node Slurm cluster:
# agents started by srun dial back to dtrun; env, fail-fast, PyTorch DDP and
# the ways starting can fail.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/slurm.sh"

if why=$(slurm_skip_reason); then
	test_skip 'Slurm launcher scenarios' "$why"
	test_done
fi
slurm_start || { echo "could not start the Slurm cluster"; exit 1; }

# One allocation (4 tasks, overcommitted on this small machine) serves most
# tests: dtrun runs with the environment salloc would give it, so a test can
# kill dtrun without Slurm cleaning up behind its back.
slurm_salloc dtrun-t5000 -O -N1 -n4 || exit 1
ALLOC=(env SLURM_JOB_ID=$JOB SLURM_JOB_NODELIST=localhost SLURM_TASKS_PER_NODE=4 SLURM_OVERCOMMIT=1)
in_alloc() { "${ALLOC[@]}" "$@"; }
unset SLURM_JOB_ID SLURM_JOBID

test_expect_success 'salloc: 4 ranks, their environment, agents started by srun' '
	salloc -O -N1 -n4 sh -c "echo \$SLURM_JOB_ID >jobid; exec dtrun --prefix \"\" sh -c \"echo \\\$RANK \\\$LOCAL_RANK \\\$WORLD_SIZE \\\$LOCAL_WORLD_SIZE \\\$NODE_RANK \\\$NNODES \\\$SLURM_JOB_ID \\\$SLURM_STEP_ID \\\${DTRUN_AGENT_TOKEN:-no-token} \\\$SLURM_PROCID \\\$SLURM_LOCALID \\\$SLURM_NTASKS \\\$SLURM_NODEID\"" >out 2>err &&
	j=$(cat jobid) &&
	grep -q "dtrun: inside Slurm job $j: using --launcher slurm" err &&
	sort -n out >got &&
	cat >want <<-EOW &&
	0 0 4 4 0 1 $j 0 no-token 0 0 4 0
	1 1 4 4 0 1 $j 0 no-token 1 1 4 0
	2 2 4 4 0 1 $j 0 no-token 2 2 4 0
	3 3 4 4 0 1 $j 0 no-token 3 3 4 0
	EOW
	diff want got
'

test_expect_success 'sbatch: dtrun in a batch script' '
	printf "#!/bin/sh\nexec dtrun --prefix \"%%r \" sh -c \"echo \\\$RANK of \\\$WORLD_SIZE\"\n" >job.sh &&
	id=$(sbatch --parsable -O -N1 -n2 -o "$PWD/job.out" -e "$PWD/job.err" job.sh) &&
	wait_for 30 eval "[ -z \"\$(squeue -h -j $id 2>/dev/null)\" ]" &&
	sort job.out >got && printf "0 0 of 2\n1 1 of 2\n" >want && diff want got
'

test_expect_success 'engine.yaml launcher: slurm, without the notice' '
	cat >engine.yaml <<-\EOY &&
	launcher: slurm
	commands:
	  - echo $RANK/$WORLD_SIZE
	prefix: ""
	EOY
	in_alloc dtrun -f engine.yaml >out 2>err &&
	sort out >got && printf "0/4\n1/4\n2/4\n3/4\n" >want && diff want got &&
	! grep -q "using --launcher slurm" err
'

# The real secret is read from srun's environment while the job runs (root
# may read any /proc/PID/environ), so the check does not depend on what else
# runs on the machine.
test_expect_success '--max-restarts keeps the step'"'"'s agents: the same agent runs attempt 1, nothing of attempt 0 left' '
	in_alloc dtrun --max-restarts 1 --restart-delay 0 --timeout 60 sh -c "echo \"attempt \$DTRUN_RESTART_COUNT rank \$RANK agent \$PPID\"; test \$DTRUN_RESTART_COUNT = 1 && exit 0; sleep 300 & echo \$! >\$PWD/sleep.\$RANK; test \$RANK = 1 && sleep 0.5 && exit 3; wait" >out 2>err &&
	a0=$(sed -n "s/.*attempt 0 rank 0 agent //p" out) &&
	test -n "$a0" &&
	test "$(sed -n "s/.*attempt 1 rank 0 agent //p" out)" = "$a0" &&
	test "$(grep -c "attempt 1 rank" out)" = 4 &&
	wait_gone 5 sleep.*
'

test_expect_success 'ranks join the rendezvous through their agents' '
	in_alloc dtrun --prefix "" sh -c "echo \$DTRUN_RDZV_ADDR; exec $B/helpers/rdzv-probe -j" >out &&
	test $(grep -c "^unix:@dtrun-rdzv\." out) -eq 4 &&
	for r in 0 1 2 3; do
		grep -qx "rank $r size 4 local $r node 0 nodes 1" out || return 1
	done
'

test_expect_success 'the agent secret is on no command line and in no rank' '
	in_alloc dtrun -n 2 --prefix "" sh -c "ps -eo args >\$PWD/ps.\$RANK; cat /proc/[0-9]*/environ 2>/dev/null | tr \"\\0\" \"\\n\" | sed -n \"s/^DTRUN_AGENT_TOKEN=//p\" >\$PWD/tok.\$RANK; env" >env &&
	grep -q "dtrun-agent --connect 127.0.0.1:[0-9]*\$" ps.0 &&
	sort -u tok.0 tok.1 >tokens && test -s tokens && cat tokens &&
	! grep -qFf tokens ps.0 ps.1 env && ! grep -q DTRUN_AGENT_TOKEN env
'

test_expect_success 'fail-fast: the code, the report, no survivors' '
	test_expect_code 5 in_alloc dtrun sh -c "echo \$\$ >\$PWD/pid.\$RANK; sleep 300 & echo \$! >\$PWD/child.\$RANK; [ \$RANK = 2 ] && { sleep 0.5; exit 5; }; wait" 2>err &&
	grep -q "rank 2 on localhost (pid [0-9]*) exited with code 5; stopping 3 other ranks" err &&
	wait_gone 5 pid.* child.*
'

# Only a lower bound: the rank ignores SIGTERM, so its end proves the
# SIGKILL came, and no upper wall-clock bound can hold on a shared machine.
test_expect_success '--kill-grace: a rank that ignores SIGTERM is killed after it' '
	start=$(date +%s%N) &&
	test_expect_code 3 in_alloc dtrun -n 2 --kill-grace 1 sh -c "trap \"\" TERM; echo \$\$ >\$PWD/pid.\$RANK; if [ \$RANK = 1 ]; then until [ -s \$PWD/pid.0 ]; do sleep 0.05; done; exit 3; fi; while :; do sleep 0.1; done" 2>err &&
	ms=$((($(date +%s%N) - start) / 1000000)) &&
	echo "took $ms ms" && [ $ms -ge 900 ] &&
	wait_gone 5 pid.*
'

test_expect_success 'output is lossless and stays per line' '
	in_alloc dtrun -n 4 --prefix "%r " sh -c "seq 1 20000" >out &&
	for r in 0 1 2 3; do
		test "$(grep -c "^$r [0-9]*\$" out)" -eq 20000 || exit 1
	done &&
	test $(wc -l <out) -eq 80000
'

test_expect_success 'a slow reader gets every line once, in order' '
	in_alloc dtrun -n 4 --prefix "%r " seq 300000 | slow_reader >out &&
	test $(wc -l <out) -eq 1200000 &&
	seq 1 300000 >want &&
	for r in 0 1 2 3; do
		grep "^$r " out | cut -d" " -f2 >got.$r &&
		cmp got.$r want || exit 1
	done
'

test_expect_success 'kill -9 of dtrun leaves no rank behind' '
	"${ALLOC[@]}" dtrun sh -c "echo \$\$ >\$PWD/pid.\$RANK; exec sleep 300" &
	d=$!
	wait_for 15 eval "[ \$(ls pid.* 2>/dev/null | wc -l) -eq 4 ]" &&
	kill -9 $d && { wait $d || true; } &&
	wait_gone 10 pid.*
'

# proctrack/linuxproc finds a step's processes by parentage: a daemon that
# reparented to init is out of its sight. The agent's keeper, srun's task,
# kills it when the agent dies.
test_expect_success 'kill -9 of the agent: exit 255, its ranks and daemons gone' '
	"${ALLOC[@]}" dtrun -v -n 2 sh -c "echo \$\$ >\$PWD/pid.\$RANK; setsid sh -c \"echo \\\$\\\$ >\$PWD/daemon.\$RANK; exec sleep 300\" & wait" 2>err &
	d=$!
	wait_for 15 eval "[ \$(cat pid.* daemon.* 2>/dev/null | grep -cx \"[0-9][0-9]*\") -eq 4 ]" &&
	agent=$(sed -n "s/.*agent pid \([0-9]*\) on .* connected/\1/p" err) &&
	test -n "$agent" &&
	kill -9 $agent &&
	test_expect_code 255 wait $d &&
	grep -q "lost the agent on localhost" err &&
	wait_gone 10 pid.* daemon.*
'

test_expect_success 'Ctrl-C stops every rank; exit 130' '
	"${ALLOC[@]}" dtrun sh -c "echo \$\$ >\$PWD/pid.\$RANK; exec sleep 300" 2>err &
	d=$!
	wait_for 15 eval "[ \$(ls pid.* 2>/dev/null | wc -l) -eq 4 ]" &&
	kill -INT $d && test_expect_code 130 wait $d &&
	wait_gone 5 pid.*
'

# Heartbeats on the Slurm transport (TCP): a side that goes silent without
# closing (stopped with SIGSTOP) is given up after --heartbeat-timeout.
test_expect_success 'heartbeats: an agent that goes silent is lost, 255, named, no survivors' '
	"${ALLOC[@]}" dtrun -v -n 2 --heartbeat-timeout 1 sh -c "echo \$\$ >\$PWD/pid.\$RANK; exec sleep 300" 2>err &
	d=$!
	wait_for 15 eval "[ \$(ls pid.* 2>/dev/null | wc -l) -eq 2 ]" &&
	agent=$(sed -n "s/.*agent pid \([0-9]*\) on .* connected/\1/p" err) &&
	test -n "$agent" &&
	trap "kill -CONT $agent 2>/dev/null || :" EXIT &&
	kill -STOP $agent &&
	test_expect_code 255 wait $d &&
	grep -q "lost the agent on localhost (heard nothing from it for 1 s (--heartbeat-timeout)" err &&
	wait_gone 15 pid.*
'

test_expect_success 'heartbeats: an agent that hears nothing from dtrun stops its ranks itself' '
	"${ALLOC[@]}" dtrun -n 2 --heartbeat-timeout 1 sh -c "echo \$\$ >\$PWD/pid.\$RANK; exec sleep 300" 2>err &
	b=$!
	wait_for 15 eval "[ \$(ls pid.* 2>/dev/null | wc -l) -eq 2 ]" &&
	d=$(ps -o pid=,comm= --ppid $b | awk "\$2 == \"dtrun\" { print \$1 }") &&
	if [ "$(cat /proc/$b/comm)" = dtrun ]; then d=$b; fi &&
	test -n "$d" &&
	trap "kill -CONT $d 2>/dev/null || :; kill $d 2>/dev/null || :" EXIT &&
	kill -STOP $d &&
	wait_gone 30 pid.* &&
	proc_alive $d &&
	kill -CONT $d &&
	test_expect_code 255 wait $b &&
	grep -q "heard nothing from dtrun for 1 s (its --heartbeat-timeout): stopping its ranks" err
'

cat >"$TRASH/ddp.py" <<'EOF'
import os, torch, torch.distributed as dist
dist.init_process_group("gloo")
t = torch.tensor([float(dist.get_rank() + 1)])
dist.all_reduce(t)
print(f"rank {dist.get_rank()}/{dist.get_world_size()} sum {t.item():g}")
dist.destroy_process_group()
EOF
if /usr/bin/python3 -c 'import torch.distributed' 2>/dev/null; then
	test_expect_success 'PyTorch DDP: 2 ranks allreduce over gloo' '
		in_alloc dtrun -n 2 --prefix "" /usr/bin/python3 "$TRASH/ddp.py" >out &&
		sort out >got && printf "rank 0/2 sum 3\nrank 1/2 sum 3\n" >want &&
		diff want got
	'
else
	test_skip 'PyTorch DDP: 2 ranks allreduce over gloo' 'no torch for /usr/bin/python3'
fi

# srun ends once its tasks have: here each agent lingers 1 s after its
# job. dtrun waits for that on srun's pidfd (one poll), not by looking at
# its exit every 10 ms (a hundred polls). strace sees dtrun's own thread.
test_expect_success 'srun ending after the job: dtrun waits on its exit, not polling every 10 ms' '
	{ command -v strace >/dev/null || skip_test "no strace"; } &&
	printf "#!/bin/sh\n\"%s\" \"\$@\"\nsleep 1\n" "$B/dtrun-agent" >agent && chmod +x agent &&
	in_alloc env DTRUN_AGENT=$PWD/agent strace -qq -e trace=poll -o trace dtrun -n 2 true 2>err &&
	polls=$(grep -c "^poll(.*, 10)" trace || :) &&
	echo "$polls polls of 10 ms" &&
	test "$polls" -lt 10 || { tail -5 trace; exit 1; }
'

test_expect_success 'an agent missing on the node: srun'"'"'s error, named, exit 255' '
	cp "$B/dtrun-agent" "$SLURM_HIDDEN/dtrun-agent" &&
	test_expect_code 255 in_alloc env DTRUN_AGENT="$SLURM_HIDDEN/dtrun-agent" dtrun -n 2 true 2>err &&
	grep -q "execve(): $SLURM_HIDDEN/dtrun-agent: No such file or directory" err &&
	grep -q "dtrun: localhost: its dtrun-agent ended before connecting to dtrun: .*execve(): $SLURM_HIDDEN/dtrun-agent: No such file or directory" err
'

test_expect_success 'an agent that never connects: --start-timeout names the node' '
	printf "#!/bin/sh\necho \$\$ >$PWD/agent.pid\nexec sleep 300\n" >agent && chmod +x agent &&
	test_expect_code 255 in_alloc env DTRUN_AGENT=$PWD/agent dtrun -n 2 --start-timeout 1 true 2>err &&
	grep -q "dtrun: localhost: its dtrun-agent did not connect to dtrun at 127.0.0.1:[0-9]* within 1 s (--start-timeout)" err &&
	wait_gone 10 agent.pid
'

# (timeout only keeps a launcher that waits forever from hanging the suite.)
test_expect_success 'an agent that connects but never says HELLO: --start-timeout names the node' '
	test_expect_code 255 timeout -k 5 120 env "${ALLOC[@]}" DTRUN_AGENT="$B/helpers/agent-mute" dtrun -n 2 --start-timeout 1 true 2>err &&
	grep -q "dtrun: localhost: its dtrun-agent connected but did not say HELLO within 1 s (--start-timeout)" err
'

test_expect_success 'agents that cannot reach dtrun: the agent'"'"'s own reason' '
	test_expect_code 255 in_alloc env DTRUN_CONNECT_ADDR=no-such-host.invalid dtrun -n 2 true 2>err &&
	grep -q "dtrun: localhost: its dtrun-agent ended before connecting to dtrun: dtrun-agent: localhost: cannot resolve no-such-host.invalid" err
'

test_expect_success 'srun itself failing: its message, exit 255' '
	test_expect_code 255 env SLURM_JOB_ID=999999 SLURM_JOB_NODELIST=localhost SLURM_TASKS_PER_NODE=2 dtrun true 2>err &&
	grep -q "dtrun: localhost: srun exited with code 1 before this node'"'"'s dtrun-agent connected: .*999999" err
'

test_expect_success 'no srun: a clear error, exit 2' '
	test_expect_code 2 in_alloc env DTRUN_SRUN=/nonexistent/srun dtrun true 2>err &&
	grep -q "cannot run /nonexistent/srun: No such file or directory" err
'

test_expect_success '--launcher slurm outside an allocation: exit 2' '
	test_expect_code 2 dtrun --launcher slurm true 2>err &&
	grep -q "not inside a Slurm allocation (run dtrun under salloc or in an sbatch script)" err
'

test_expect_success 'a connection without the secret is dropped; the job goes on' '
	"${ALLOC[@]}" dtrun -vv -n 1 sh -c "while [ ! -e $PWD/go ]; do sleep 0.05; done" 2>err &
	d=$!
	wait_for 15 grep -q "agents connect to" err &&
	addr=$(sed -n "s/.*agents connect to //p" err) &&
	test_expect_code 1 env DTRUN_AGENT_TOKEN=$(printf "%064d" 0) SLURMD_NODENAME=localhost dtrun-agent --connect $addr 2>agent.err &&
	grep -q "closed the connection during the handshake" agent.err &&
	grep -q "does not know the job'"'"'s agent secret: dropped" err &&
	touch go && wait $d
'

test_done
