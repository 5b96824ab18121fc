#!/bin/bash
# t0062-spares.sh -- --spares N: the last N hosts get agents and no rank; a
# restart after a lost host puts a spare in its place (its ranks, NODE_RANK
# and local ranks) instead of shrinking, and the summary says so. The local
# launcher starts one agent per hostfile name, so a host is lost by killing
# its agent; the last test does it over loopback ssh.
. "$(dirname "$0")/lib.sh"

# A rank: records its pid under pids/A.RANK (A: the attempt), says where it
# runs, then sleeps until stopped in the attempts of SLEEP ("0 1"), or exits 0.
cat >"$TRASH/rank.sh" <<'EOS'
#!/bin/bash
a=$DTRUN_RESTART_COUNT
mkdir -p pids
echo $$ >>pids/$a.$RANK
echo "attempt $a rank $RANK node $NODE_RANK local $LOCAL_RANK host $DTRUN_HOST nnodes $NNODES world $WORLD_SIZE"
for s in $SLEEP; do
	[ "$s" = "$a" ] && exec sleep 300
done
exit 0
EOS
chmod +x "$TRASH/rank.sh"
R=$TRASH/rank.sh

# agent_of HOST -- the pid of HOST's agent, from -v's "connected" line in err.
agent_of() { sed -n "s/^dtrun: $1: agent pid \([0-9]*\) on .* connected.*/\1/p" err | head -n 1; }
# ranks_at A N -- waits until N ranks of attempt A have started.
ranks_at() { wait_for 20 eval "[ \$(ls pids/$1.* 2>/dev/null | wc -l) -eq $2 ]"; }
# lose HOST -- kills HOST's agent (as a host going down would end it).
lose() { ag=$(agent_of "$1") && test -n "$ag" && kill -9 "$ag" && echo "$ag" >>agents.lost; }
# agents_gone -- every agent dtrun started has exited.
agents_gone() {
	sed -n "s/^dtrun: [^ ]*: agent pid \([0-9]*\) on .* connected.*/\1/p" err >agents.all &&
	test -s agents.all &&
	wait_gone 5 agents.all
}

test_expect_success 'the spare gets an agent and no rank; a lost host'"'"'s place goes to it' '
	printf "ha slots=2\nhb slots=2\nhc slots=2\n" >hosts &&
	SLEEP=0 dtrun -v --launcher local -H hosts --spares 1 --max-restarts 1 \
	    --restart-delay 0 --timeout 60 --prefix "" "$R" >out 2>err & d=$! &&
	ranks_at 0 4 &&
	test -n "$(agent_of hc)" &&
	lose hb &&
	wait $d &&
	! grep -q "attempt 0 .* host hc " out &&
	grep -qx "attempt 0 rank 2 node 1 local 0 host hb nnodes 2 world 4" out &&
	grep -qx "attempt 1 rank 0 node 0 local 0 host ha nnodes 2 world 4" out &&
	grep -qx "attempt 1 rank 1 node 0 local 1 host ha nnodes 2 world 4" out &&
	grep -qx "attempt 1 rank 2 node 1 local 0 host hc nnodes 2 world 4" out &&
	grep -qx "attempt 1 rank 3 node 1 local 1 host hc nnodes 2 world 4" out &&
	test "$(grep -c "^attempt 1 " out)" = 4 &&
	grep -q "spare hc takes the place of lost host hb" err &&
	grep -q "the next attempt runs 4 ranks on 2 hosts" err &&
	grep -q "^dtrun:   attempt 1: hb was lost; spare hc took its place$" err &&
	grep -q "^dtrun:   attempt 1 at .* exit 0: every rank exited 0" err &&
	! grep -q "dropped" err &&
	wait_gone 5 pids/* &&
	agents_gone
'

# A spare is checked as the others are: its agent's death is said when it
# happens (not found out when a restart needs it); the job goes on.
test_expect_success 'an idle spare whose agent dies is reported lost; the job goes on' '
	printf "ha\nhb\nhc\n" >hosts &&
	dtrun -v --launcher local -H hosts --spares 1 --timeout 60 --prefix "" \
	    sh -c "echo \$\$ >r.\$RANK; until [ -e go ]; do sleep 0.05; done" >out 2>err & d=$! &&
	test_at_exit "touch go" &&
	wait_for 20 eval "[ -s r.0 ] && [ -s r.1 ]" &&
	test -n "$(agent_of hc)" &&
	! grep -q "spare hc" err &&
	lose hc &&
	wait_for 10 grep -q "^dtrun: warning: spare hc: lost its agent (.*): a restart will not count on it$" err &&
	touch go &&
	wait $d &&
	agents_gone
'

test_expect_success 'the first host lost: the first spare becomes node 0, the other stays a spare' '
	printf "ha\nhb\nhc\nhd\n" >hosts &&
	SLEEP=0 dtrun -v --launcher local -H hosts --spares 2 --max-restarts 1 \
	    --restart-delay 0 --timeout 60 --prefix "" "$R" >out 2>err & d=$! &&
	ranks_at 0 2 &&
	test -n "$(agent_of hc)" && test -n "$(agent_of hd)" &&
	lose ha &&
	wait $d &&
	! grep -q "^attempt 0 .* host h[cd] " out &&
	grep -qx "attempt 1 rank 0 node 0 local 0 host hc nnodes 2 world 2" out &&
	grep -qx "attempt 1 rank 1 node 1 local 0 host hb nnodes 2 world 2" out &&
	! grep -q "host hd " out &&
	grep -q "^dtrun:   attempt 1: ha was lost; spare hc took its place$" err &&
	wait_gone 5 pids/* &&
	agents_gone
'

test_expect_success 'no spare left: the next loss shrinks the job as before (--min-np)' '
	printf "ha\nhb\nhc\n" >hosts &&
	SLEEP="0 1" dtrun -v --launcher local -H hosts --spares 1 --min-np 1 \
	    --max-restarts 2 --restart-delay 0 --timeout 60 --prefix "" "$R" >out 2>err & d=$! &&
	ranks_at 0 2 &&
	lose hb &&
	ranks_at 1 2 &&
	lose hc &&
	wait $d &&
	grep -qx "attempt 1 rank 1 node 1 local 0 host hc nnodes 2 world 2" out &&
	grep -qx "attempt 2 rank 0 node 0 local 0 host ha nnodes 1 world 1" out &&
	test "$(grep -c "^attempt 2 " out)" = 1 &&
	grep -q "dropped lost host hc (no spare left): the next attempt runs 1 rank on 1 host (--min-np)" err &&
	grep -q "^dtrun:   attempt 1: hb was lost; spare hc took its place$" err &&
	grep -q "^dtrun:   attempt 1 at .* exit 255: .*(dropped hc)" err &&
	wait_gone 5 pids/* &&
	agents_gone
'

test_expect_success 'a spare runs nothing when nothing is lost; --dry-run names it' '
	printf "ha\nhb\nhc\n" >hosts &&
	dtrun --launcher local -H hosts --spares 1 --prefix "" "$R" >out 2>err &&
	test "$(grep -c "^attempt 0 " out)" = 2 &&
	! grep -q "host hc " out &&
	dtrun --launcher local -H hosts --spares 1 --dry-run true >plan &&
	grep -qx "# spare hc: an agent, no rank" plan &&
	grep -q "2 processes (2 workers) on 2 hosts" plan &&
	! grep -q "^[0-9]* hc " plan
'

test_expect_success 'engine.yaml spares: N, and --spares wins over it' '
	printf "ha\nhb\nhc\n" >hosts &&
	printf "hostfile: hosts\nspares: 1\n" >job.yaml &&
	dtrun --launcher local -f job.yaml --dry-run true >plan &&
	grep -qx "# spare hc: an agent, no rank" plan &&
	dtrun --launcher local -f job.yaml --spares 2 --dry-run true >plan &&
	grep -qx "# spare hb: an agent, no rank" plan &&
	grep -qx "# spare hc: an agent, no rank" plan &&
	printf "hostfile: hosts\nspares: 3\n" >bad.yaml &&
	test_expect_code 2 dtrun --launcher local -f bad.yaml true 2>err &&
	grep -q "spares 3 leaves no host for the ranks" err
'

test_expect_success 'bad --spares values are usage errors (exit 2) that name the fix' '
	printf "ha\nhb\n" >hosts &&
	test_expect_code 2 dtrun --launcher local -H hosts --spares 2 true 2>err &&
	grep -q "^dtrun: --spares 2 leaves no host for the ranks (2 hosts in all; the spares are the last of the list): give fewer spares or more hosts" err &&
	test_expect_code 2 dtrun --launcher local -H hosts --spares 5 true 2>err &&
	grep -q "spares 5 leaves no host" err &&
	test_expect_code 2 dtrun --spares 1 true 2>err &&
	grep -q "^dtrun: --spares 1: this machine is the only host; name the hosts, spares last" err &&
	test_expect_code 2 dtrun --launcher local -H hosts --spares x true 2>err &&
	grep -q "spares \"x\": not a number" err &&
	test_expect_code 2 dtrun --launcher local -H hosts --spares -1 true 2>err &&
	grep -q "spares -1: need at least 0" err &&
	dtrun --launcher local -H hosts --spares 0 --prefix "" "$R" >out &&
	test "$(grep -c "^attempt 0 " out)" = 2
'

# Over loopback ssh: 127.0.0.3 is the spare; 127.0.0.2's agent is killed.
. "$(dirname "$0")/sshd.sh"
if why=$(sshd_skip_reason); then
	test_skip 'over ssh: a lost host'"'"'s place goes to the spare' "$why"
	test_done
fi
sshd_start || { echo "could not start sshd"; exit 1; }
AGENTS=$TRASH/agents
SSH_ARGS+=(--ssh-agent-dir "$AGENTS")

test_expect_success 'over ssh: a lost host'"'"'s place goes to the spare' '
	SLEEP=0 dtrun "${SSH_ARGS[@]}" -x SLEEP -v -H 127.0.0.1,127.0.0.2,127.0.0.3 --spares 1 \
	    --max-restarts 1 --restart-delay 0 --timeout 60 --prefix "" "$R" >out 2>err & d=$! &&
	ranks_at 0 2 &&
	test -n "$(agent_of 127.0.0.3)" &&
	lose 127.0.0.2 &&
	wait $d &&
	! grep -q "^attempt 0 .* host 127.0.0.3 " out &&
	grep -qx "attempt 1 rank 0 node 0 local 0 host 127.0.0.1 nnodes 2 world 2" out &&
	grep -qx "attempt 1 rank 1 node 1 local 0 host 127.0.0.3 nnodes 2 world 2" out &&
	grep -q "^dtrun:   attempt 1: 127.0.0.2 was lost; spare 127.0.0.3 took its place$" err &&
	wait_gone 5 pids/* &&
	wait_for 5 eval "! agents_alive"
'

test_done
