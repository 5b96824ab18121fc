#!/bin/bash
# t3020-kill-ssh.sh -- dtrun-kill -H: stop jobs by id on other hosts, over
# ssh as dtrun connects. Each loopback "host" gets its own runtime dir (the
# sshd sets XDG_RUNTIME_DIR per address, and this machine's is the test's
# too), so it sees only its own records, as a real host would, and nothing
# outside this test is ever touched.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/sshd.sh"

if why=$(sshd_skip_reason); then
	test_skip 'dtrun-kill over ssh' "$why"
	test_done
fi
# dtrun-kill -H does the machine it runs on first: that one, too, gets a
# records dir of this test's own, or --all would stop other suites' jobs.
export XDG_RUNTIME_DIR=$TRASH/run.local
mkdir -p "$XDG_RUNTIME_DIR"
# A Match block's SetEnv replaces sshd.sh's SetEnv SHLVL=1 (sshd keeps one
# SetEnv list): without SHLVL=1 here each connection's shell reads
# ~/.bashrc (a root pyenv init), seconds of a loaded machine per ssh.
SSHD_EXTRA_CONFIG=
for n in 1 2 3; do
	mkdir -p "$TRASH/run.$n"
	SSHD_EXTRA_CONFIG="$SSHD_EXTRA_CONFIG
Match LocalAddress 127.0.0.$n
	SetEnv SHLVL=1 XDG_RUNTIME_DIR=$TRASH/run.$n"
done
sshd_start || { echo "could not start sshd"; exit 1; }
SSH_ARGS+=(--ssh-agent-dir "$TRASH/agents")
KILL_ARGS=(-p "$SSHD_PORT" -i "$SSH_KEY" --ssh-option UserKnownHostsFile="$SSH_KNOWN"
    --ssh-agent-dir "$TRASH/agents")
H3=127.0.0.1,127.0.0.2,127.0.0.3
# A job that notes its id and each rank's pid and child's pid, then sleeps.
SLEEPER='echo $DTRUN_JOB_ID >$PWD/id; echo $$ >$PWD/$TAG.pid.$RANK; sleep 300 & echo $! >$PWD/$TAG.child.$RANK; wait'

# start_job TAG HOSTS -- starts a sleeping job in the background and waits
# until every host recorded it; $job_pid is dtrun.
start_job() {
	mkdir -p "$1"
	(cd "$1" && TAG=$1 exec dtrun "${SSH_ARGS[@]}" -H "$2" -x TAG sh -c "$SLEEPER" 2>err) &
	job_pid=$!
	nh=$(echo "$2" | tr , "\n" | wc -l)
	wait_for 15 eval "[ \$(ls $1/$1.pid.* $1/$1.child.* 2>/dev/null | wc -l) -eq $((nh * 2)) ]" &&
	# The agents write their records just after starting the ranks.
	wait_for 5 eval "[ \$(grep -lx \"job \$(cat $1/id)\" $TRASH/run.*/dtrun/*[0-9] 2>/dev/null | wc -l) -eq $nh ]"
}

# stacks_until HOSTS DIR PATTERN -- asks for the stacks of DIR's job
# (dtrun-kill --stacks -H) until the latest report, in ./report, has a line
# matching PATTERN: a rank can be caught on its way into its loop. 0, or 1
# after 5 asks; ./out has the last dtrun-kill's output.
stacks_until() {
	for k in 1 2 3 4 5; do
		dtrun-kill --stacks -H "$1" "${KILL_ARGS[@]}" "$(cat "$2/id")" >out || return 1
		wait_for 60 grep -q "^dtrun: full stacks of every rank: .*stacks-$k.txt\$" "$2/err" || return 1
		sed -n "/^dtrun: stacks of/h; /^dtrun: stacks of/!H; \${x;p}" "$2/err" >report || return 1
		grep -q "$3" report && return 0
	done
	return 1
}

# Once one host's agent is stopped, the job's dtrun stops the others
# (fail-fast): a slower host may find its part already gone.
test_expect_success 'by id across 3 hosts: each host says what it did; dtrun says why' '
	start_job a $H3 && a=$job_pid &&
	dtrun-kill -H $H3 "${KILL_ARGS[@]}" "$(cat a/id)" >out &&
	cat out &&
	for h in 127.0.0.1 127.0.0.2 127.0.0.3; do
		grep -qx "$h: job $(cat a/id): \(stopped agent [0-9]* and 1 rank\|not running here\)" out || exit 1
	done &&
	grep -q "stopped agent" out &&
	test_expect_code 143 wait $a &&
	grep -q "the agent got SIGTERM (dtrun-kill" a/err &&
	wait_gone 5 a/a.pid.* a/a.child.*
'

test_expect_success 'other jobs are left alone' '
	start_job a 127.0.0.1,127.0.0.2 && a=$job_pid &&
	start_job b $H3 && b=$job_pid &&
	dtrun-kill -H $H3 "${KILL_ARGS[@]}" -q "$(cat a/id)" >out &&
	test ! -s out &&
	wait_gone 5 a/a.pid.* a/a.child.* &&
	for f in b/b.pid.* b/b.child.*; do proc_alive "$(cat $f)" || exit 1; done &&
	dtrun-kill -H $H3 "${KILL_ARGS[@]}" "$(cat b/id)" >out &&
	wait_gone 5 b/b.pid.* b/b.child.* &&
	test_expect_code 143 wait $a &&
	test_expect_code 143 wait $b
'

test_expect_success '--all stops every job on each host, but not itself' '
	# A local job that restarts records its dtrun here, in this test only.
	dtrun --max-restarts 1 sh -c "echo \$\$ >c.pid; exec sleep 300" 2>c.err & c=$! &&
	test_at_exit "kill $c 2>/dev/null" &&
	start_job a 127.0.0.1,127.0.0.2 && a=$job_pid &&
	start_job b 127.0.0.3 && b=$job_pid &&
	{ wait_for 15 eval "grep -lx launcher \$XDG_RUNTIME_DIR/dtrun/*.$c" || { cat c.err; ls -l "$XDG_RUNTIME_DIR/dtrun"; exit 1; }; } &&
	dtrun-kill -H $H3 "${KILL_ARGS[@]}" --all >out &&
	cat out &&
	grep -qx "127.0.0.[12]: job $(cat a/id): stopped agent [0-9]* and 1 rank" out &&
	grep -qx "127.0.0.3: job $(cat b/id): stopped agent [0-9]* and 1 rank" out &&
	grep -qx "localhost: job [0-9a-f-]*: stopped dtrun $c (.*)" out &&
	! grep -v "stopped agent [0-9]* and 1 rank\|stopped dtrun $c \|^127.0.0.[12]: no dtrun jobs running\$" out &&
	test $(wc -l <out) -eq 4 &&
	wait_gone 5 a/a.pid.* a/a.child.* b/b.pid.* b/b.child.* c.pid &&
	test_expect_code 143 wait $a &&
	test_expect_code 143 wait $b &&
	test_expect_code 143 wait $c &&
	dtrun-kill -H $H3 "${KILL_ARGS[@]}" --all >out &&
	test "$(sort out)" = "$(printf "127.0.0.%s: no dtrun jobs running\n" 1 2 3)"
'

test_expect_success '--stacks -H: each host asks its agent, dtrun prints one merged report, the job goes on' '
	{ command -v gdb >/dev/null || command -v eu-stack >/dev/null || skip_test "neither gdb nor eu-stack is installed"; } &&
	mkdir -p s &&
	{ dtrun "${SSH_ARGS[@]}" -H $H3 --output-dir s/od -x DTRUN_TEST_DIR=$PWD/s sh -c "echo \$DTRUN_JOB_ID >\$DTRUN_TEST_DIR/id; cd \$DTRUN_TEST_DIR && exec $B/helpers/spin 1" >s/out 2>s/err & s=$!; } &&
	test_at_exit "kill $s 2>/dev/null" &&
	wait_for 30 eval "[ \"\$(grep -c spinning s/out 2>/dev/null)\" = 3 ]" &&
	wait_for 5 eval "[ \$(grep -lx \"job \$(cat s/id)\" $TRASH/run.*/dtrun/*[0-9] 2>/dev/null | wc -l) -eq 3 ]" &&
	stacks_until "$H3" s "^dtrun:   ranks 0,2 (2): spin_here <- main" &&
	for h in 127.0.0.1 127.0.0.2 127.0.0.3; do
		grep -q "^$h: job $(cat s/id): asked agent [0-9]* for its ranks. stacks; dtrun prints them on its stderr\$" out || return 1
	done &&
	grep -q "^dtrun:   ranks 0,2 (2): spin_here <- main" report &&
	grep -q "^dtrun:   rank 1 on 127.0.0.2, pid [0-9]* (1): .*nap_here <- main" report &&
	grep -q "^=== rank 2 on 127.0.0.3, pid [0-9]*" "$(sed -n "s/^dtrun: full stacks of every rank: //p" s/err | tail -1)" &&
	grep -q "^dtrun: full stacks of every rank: s/od/stacks/stacks-[0-9]*.txt\$" s/err &&
	proc_alive $s &&
	kill -TERM $s &&
	test_expect_code 143 wait $s &&
	wait_gone 5 s/pid.*
'

test_expect_success 'an unknown id: each host says so, exit 0' '
	dtrun-kill -H 127.0.0.2,127.0.0.3 "${KILL_ARGS[@]}" no-such-job >out &&
	grep -qx "127.0.0.2: job no-such-job: not running here" out &&
	grep -qx "127.0.0.3: job no-such-job: not running here" out
'

test_expect_success 'an unreachable host is named, exit 255' '
	test_expect_code 255 dtrun-kill -H 127.0.0.2,127.0.0.9 "${KILL_ARGS[@]}" no-such-job >out 2>err &&
	grep -q "127.0.0.9: cannot connect" err
'

test_expect_success 'ssh options without -H are a usage error' '
	test_expect_code 2 dtrun-kill -p 22 some-id 2>err &&
	grep -q "ssh options need -H" err
'

test_done
