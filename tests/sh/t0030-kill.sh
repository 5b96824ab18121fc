#!/bin/bash
# t0030-kill.sh -- dtrun-kill finds a job by id on this host and stops it.
. "$(dirname "$0")/lib.sh"

export XDG_RUNTIME_DIR=$TRASH/run
mkdir -p "$XDG_RUNTIME_DIR"

test_expect_success 'the agent records its job while it runs, and removes it after' '
	dtrun -n 2 sh -c "until ls \$XDG_RUNTIME_DIR/dtrun | grep -qv tmp; do sleep 0.05; done; ls \$XDG_RUNTIME_DIR/dtrun >seen.\$RANK" &&
	grep -q "^[0-9a-f]*-[0-9a-f]*\.[0-9]*\$" seen.0 &&
	test -z "$(ls "$XDG_RUNTIME_DIR/dtrun")"
'

test_expect_success 'a SIGKILLed agent leaves no record nor error file: dtrun, its keeper, removes them' '
	dtrun -v -n 2 sh -c "echo x >\$TORCHELASTIC_ERROR_FILE; echo \$\$ >k\$RANK.pid; exec sleep 300" 2>err & d=$! &&
	wait_for 10 eval "[ -s k0.pid ] && [ -s k1.pid ]" &&
	agent=$(sed -n "s/.*agent pid \([0-9]*\) on .* connected/\1/p" err) &&
	test -n "$agent" &&
	wait_for 5 eval "ls \$XDG_RUNTIME_DIR/dtrun | grep -q \"\\.$agent\$\"" &&
	ls "$XDG_RUNTIME_DIR/dtrun" | grep -q "\.$agent\.rank\.0\.json\$" &&
	ls "$XDG_RUNTIME_DIR/dtrun" | grep -q "\.$agent\.rank\.1\.json\$" &&
	kill -9 $agent &&
	test_expect_code 255 wait $d &&
	wait_gone 5 k0.pid k1.pid &&
	wait_for 5 eval "! ls \$XDG_RUNTIME_DIR/dtrun | grep -q \"\\.$agent\$\"" &&
	wait_for 5 eval "! ls \$XDG_RUNTIME_DIR/dtrun | grep -q \"\\.$agent\\.rank\\.\""
'

test_expect_success 'dtrun-kill JOBID stops that job, and dtrun says so' '
	dtrun -n 3 sh -c "echo \$DTRUN_JOB_ID >id; echo \$\$ >\$RANK.pid; sleep 300 & echo \$! >\$RANK.child; wait" 2>err & d=$! &&
	wait_for 10 eval "[ -s 0.pid ] && [ -s 1.pid ] && [ -s 2.pid ]" &&
	dtrun-kill "$(cat id)" >out &&
	grep -q "job $(cat id): stopped agent [0-9]* and 3 ranks" out &&
	test_expect_code 143 wait $d &&
	grep -q "the agent got SIGTERM (dtrun-kill" err &&
	! grep -q "killed by signal" err &&
	wait_gone 3 0.pid 1.pid 2.pid 0.child 1.child 2.child
'

test_expect_success 'dtrun-kill leaves other jobs alone' '
	dtrun sh -c "echo \$DTRUN_JOB_ID >a.id; echo \$\$ >a.pid; exec sleep 300" 2>/dev/null &
	a=$!
	dtrun sh -c "echo \$DTRUN_JOB_ID >b.id; echo \$\$ >b.pid; exec sleep 300" 2>/dev/null &
	b=$!
	wait_for 10 eval "[ -s a.pid ] && [ -s b.pid ]" &&
	dtrun-kill -q "$(cat a.id)" &&
	wait_gone 3 a.pid &&
	proc_alive "$(cat b.pid)" &&
	dtrun-kill --all >out && grep -q "job $(cat b.id)" out &&
	wait_gone 3 b.pid &&
	# Each job ends as its agent did: SIGTERM from dtrun-kill.
	test_expect_code 143 wait $a &&
	test_expect_code 143 wait $b
'

# Agent and its keeper both killed (on dtrun's host dtrun keeps it: it is
# stopped first, so it cannot clean up): the daemon went to init, out of
# every tree. It still carries the job's id in its environment, and
# "stopped" must mean it is gone.
test_expect_success 'dtrun-kill finds a daemon that escaped agent and keeper' '
	dtrun -v sh -c "echo \$DTRUN_JOB_ID >id; setsid sh -c \"echo \\\$\\\$ >daemon.pid; exec sleep 300\" & wait" 2>err & d=$! &&
	wait_for 10 eval "grep -qx \"[0-9][0-9]*\" daemon.pid" &&
	wait_for 5 eval "grep -lx \"job \$(cat id)\" \$XDG_RUNTIME_DIR/dtrun/*[0-9]" &&
	agent=$(sed -n "s/.*agent pid \([0-9]*\) on .* connected/\1/p" err) &&
	test "$(ps -o ppid= -p $agent | tr -d " ")" = "$d" &&
	kill -STOP $d && kill -9 $agent && kill -9 $d &&
	test_expect_code 137 wait $d &&
	proc_alive "$(cat daemon.pid)" &&
	dtrun-kill -w 1 "$(cat id)" >out &&
	cat out &&
	grep -q "job $(cat id): stopped agent $agent and 1 rank" out &&
	wait_gone 3 daemon.pid
'

# SIGKILL runs none of dtrun's code: its record and its dtrun top socket
# stay. dtrun-kill finds them dead and removes them, and says so: never
# "stopped dtrun PID" for a pid long gone.
test_expect_success 'a SIGKILLed dtrun'"'"'s record and top socket: found dead, removed' '
	dtrun --max-restarts 1 sh -c "echo \$DTRUN_JOB_ID >id; echo \$\$ >r.pid; exec sleep 300" 2>err & d=$! &&
	test_at_exit "kill -9 $d 2>/dev/null" &&
	wait_for 10 eval "[ -s id ] && [ -s r.pid ]" &&
	id=$(cat id) &&
	wait_for 5 test -S "$XDG_RUNTIME_DIR/dtrun/$id.top" &&
	wait_for 5 eval "grep -lx launcher \$XDG_RUNTIME_DIR/dtrun/\$id.[0-9]*" &&
	kill -9 $d &&
	test_expect_code 137 wait $d &&
	wait_gone 10 r.pid &&
	test -S "$XDG_RUNTIME_DIR/dtrun/$id.top" &&
	grep -lx launcher "$XDG_RUNTIME_DIR"/dtrun/$id.[0-9]* &&
	dtrun-kill -w 1 --all >out &&
	cat out &&
	grep -qx "localhost: job $id: dtrun $d is gone (killed?) and left nothing: removed its record" out &&
	grep -qx "localhost: job $id: its dtrun is gone (killed?): removed its socket $id.top" out &&
	! grep -q "stopped dtrun" out &&
	test -z "$(ls "$XDG_RUNTIME_DIR/dtrun")"
'

# An id of this run alone: the scan sees every process of ours.
LEFT_ID=left-$$-$(date +%s%N)
test_expect_success 'dtrun-kill finds a job'"'"'s leftovers even without its record' '
	DTRUN_JOB_ID=$LEFT_ID setsid sh -c "echo \$\$ >daemon.pid; exec sleep 300" &
	wait_for 10 eval "grep -qx \"[0-9][0-9]*\" daemon.pid" &&
	dtrun-kill -w 1 $LEFT_ID >out &&
	grep -qx "localhost: job $LEFT_ID: no record here; stopped its leftover processes" out &&
	wait_gone 3 daemon.pid
'

# Records are only as safe as what they name. Forged ones run in a pid
# namespace of their own, so even a dtrun-kill that does kill(-1) (as
# before) could only hit this test's processes.
cat >"$TRASH/forge.sh" <<'EOS'
set -eu
export XDG_RUNTIME_DIR=$PWD/run
mkdir -p run/dtrun && chmod 700 run/dtrun
sleep 300 & mine=$!
setpriv --reuid=nobody --regid=nogroup --clear-groups sleep 300 & theirs=$!
sleep 0.2
# start PID -- field 22 of /proc/PID/stat
start() { sed 's/^.*) //' /proc/$1/stat | cut -d" " -f20; }
# forge JOB LINE... -- writes a record
forge() { j=$1; shift; printf "dtrun-job 1\njob %s\nhost h\n" "$j" >run/dtrun/$j.100; printf "%s\n" "$@" >>run/dtrun/$j.100; }
# refused JOB WHY -- dtrun-kill refuses the record, says why, signals nothing
refused() {
	dtrun-kill -w 0 "$1" >out 2>err && { echo "exit 0 for $1"; exit 1; }
	cat err
	grep -q "run/dtrun/$1.100: $2: not a record an agent writes; left alone (remove the file)" err
	kill -0 $mine && kill -0 $theirs
	rm run/dtrun/$1.100
}
forge a1 "agent 1 $(start 1)"
refused a1 "line 4 names pid 1 (init)"
forge r1 "agent $mine 1" "rank 0 1 $(start 1)"
refused r1 "line 5 names pid 1 (init)"
forge r0 "agent $mine 1" "rank 0 0 $(start 1)"
refused r0 "line 5 names pid 0 (the caller.s own process group)"
forge rn "agent $mine 1" "rank 0 -5 $(start 1)"
refused rn "line 5 names a negative pid (a process group)"
forge rg "agent $mine 1" "rank 0 -$mine $(start $mine)"
refused rg "line 5 names a negative pid (a process group)"
# Not the recorded processes (another start time): gone, said so, removed.
forge st "agent $mine $(($(start $mine) + 1))" "rank 0 $mine $(($(start $mine) + 1))"
dtrun-kill -w 0 st >out
cat out
grep -qx "localhost: job st: agent $mine is gone (killed?) and left nothing: removed its record" out
! test -e run/dtrun/st.100
# Another user's, as recorded: left alone, never said to be stopped.
forge ow "agent $theirs $(start $theirs)" "rank 0 $theirs $(start $theirs)"
dtrun-kill -w 0 ow >out && { echo "exit 0 for ow"; exit 1; }
cat out
grep -qx "localhost: job ow: left alone: not ours: agent $theirs (uid 65534), rank 0 pid $theirs (uid 65534)" out
! grep -q stopped out
kill -0 $mine && kill -0 $theirs
kill $mine $theirs
echo forged-ok
EOS

test_expect_success 'forged records: pid 1, 0, groups refused; others'"'"' pids never hit' '
	{ unshare --pid --fork --mount-proc true 2>/dev/null ||
	    skip_test "no pid namespace here (unshare needs root or user namespaces)"; } &&
	{ id nobody >/dev/null 2>&1 || skip_test "no user nobody"; } &&
	{ unshare --pid --fork --mount-proc bash "$TRASH/forge.sh" >log 2>&1 || { cat log; exit 1; }; } &&
	grep -q forged-ok log
'

# Another user (here: nobody) who makes the directory first, or a mode
# that lets others in, must not silently turn job records off.
test_expect_success 'a record directory not ours, or not 0700, is refused and named' '
	mkdir -p open/dtrun && chmod 755 open/dtrun &&
	XDG_RUNTIME_DIR=$PWD/open dtrun true 2>err &&
	cat err &&
	grep -q "warning: .*$PWD/open/dtrun has mode 0755, not 0700: job records are off, as others could change them (chmod 700 $PWD/open/dtrun)" err &&
	test -z "$(ls open/dtrun)" &&
	test_expect_code 1 env XDG_RUNTIME_DIR=$PWD/open dtrun-kill --all >out 2>err &&
	grep -q "open/dtrun has mode 0755, not 0700" err &&
	mkdir -p theirs/dtrun && chmod 700 theirs/dtrun && chown nobody theirs/dtrun &&
	XDG_RUNTIME_DIR=$PWD/theirs dtrun true 2>err &&
	grep -q "warning: .*$PWD/theirs/dtrun belongs to uid $(id -u nobody), not to you (uid 0)" err &&
	test_expect_code 1 env XDG_RUNTIME_DIR=$PWD/theirs dtrun-kill some-job >out 2>err &&
	grep -q "theirs/dtrun belongs to uid" err &&
	grep -q "job some-job: not running here" out
'

test_expect_success 'dtrun-kill of an unknown job says so and succeeds' '
	dtrun-kill no-such-job >out && grep -q "not running here" out
'

test_expect_success 'a job id with control characters is printed escaped' '
	dtrun-kill "$(printf "x\033[31m\ny")" >out &&
	grep -qx "localhost: job x\\\\x1b\[31m\\\\ny: not running here" out &&
	test $(wc -l <out) = 1
'

test_expect_success 'dtrun-kill without a job id is a usage error' '
	test_expect_code 2 dtrun-kill 2>err && grep -q "give a job id" err
'

test_done
