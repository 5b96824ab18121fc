#!/bin/bash
# t0020-failfast.sh -- stopping: the first failure, signals, --timeout, a dead
# launcher or agent; every time, no process may be left (checked by the PIDs
# the workers record, and /proc state, since PID 1 here reaps late).
. "$(dirname "$0")/lib.sh"

# A rank that records its pid and a background child's pid, then waits.
cat >"$TRASH/rank.sh" <<'EOS'
#!/bin/sh
mkdir -p pids
sleep 300 & echo $! >>pids/children
echo $$ >pids/$RANK.pid
case "$MODE" in
fail)	[ "$RANK" = 2 ] && { sleep 0.3; exit 3; } ;;
stubborn) trap '' TERM INT ;;
daemon)	setsid sh -c 'echo $$ >>pids/daemons; exec sleep 300' & ;;
esac
wait
EOS
chmod +x "$TRASH/rank.sh"
R=$TRASH/rank.sh

# started N -- waits until N ranks have recorded their pid.
started() { wait_for 10 eval "[ \$(ls pids/*.pid 2>/dev/null | wc -l) -ge $1 ]"; }

test_expect_success 'a failing rank stops the others, with its exit code' '
	test_expect_code 3 env MODE=fail dtrun -n 4 "$R" 2>err &&
	grep -q "rank 2 on localhost (pid [0-9]*) exited with code 3; stopping 3 other ranks" err &&
	wait_gone 3 pids/*.pid pids/children
'

test_expect_success 'Ctrl-C stops every rank and exits 130' '
	dtrun -n 4 "$R" 2>err & d=$! &&
	started 4 &&
	kill -INT $d && test_expect_code 130 wait $d &&
	wait_gone 3 pids/*.pid pids/children &&
	grep -q "got SIGINT: stopping 4 ranks" err
'

test_expect_success 'SIGTERM to dtrun is forwarded, exit 143' '
	dtrun -n 2 "$R" 2>/dev/null & d=$! &&
	started 2 && kill -TERM $d && test_expect_code 143 wait $d &&
	wait_gone 3 pids/*.pid pids/children
'

test_expect_success 'SIGHUP to dtrun is forwarded, exit 129' '
	dtrun -n 2 "$R" 2>/dev/null & d=$! &&
	started 2 && kill -HUP $d && test_expect_code 129 wait $d &&
	wait_gone 3 pids/*.pid pids/children
'

test_expect_success 'a second Ctrl-C kills ranks that ignore the first' '
	MODE=stubborn dtrun -n 2 --kill-grace 60 "$R" 2>err & d=$! &&
	started 2 &&
	kill -INT $d && sleep 0.3 && any_alive pids/*.pid &&
	kill -INT $d && test_expect_code 130 wait $d &&
	wait_gone 3 pids/*.pid pids/children &&
	grep -q "again: killing every rank now" err
'

test_expect_success 'ranks that ignore SIGTERM are killed after --kill-grace' '
	test_expect_code 124 env MODE=stubborn dtrun -n 2 --timeout 0.5 --kill-grace 0.5 "$R" 2>err &&
	wait_gone 3 pids/*.pid pids/children
'

test_expect_success '--timeout stops the job with 124' '
	test_expect_code 124 dtrun -n 3 --timeout 0.5 "$R" 2>err &&
	grep -q "timed out after 0.5 s" err &&
	wait_gone 3 pids/*.pid pids/children
'

test_expect_success 'kill -9 of dtrun leaves no rank behind' '
	dtrun -n 4 "$R" & d=$! &&
	started 4 &&
	kill -9 $d && wait $d || true
	wait_gone 3 pids/*.pid pids/children
'

# The agent's pid is the one dtrun -v names. On its own host dtrun keeps
# the agent (a child subreaper): what the agent's ranks left (setsid
# daemons) comes to dtrun when the agent is killed, and dtrun kills it.
# (The keeper that does this on other hosts: t3000-ssh.sh.)
test_expect_success 'a killed agent takes its ranks and their daemons with it' '
	MODE=daemon dtrun -v -n 3 "$R" 2>err & d=$! &&
	started 3 &&
	wait_for 10 eval "[ \$(wc -l <pids/daemons) -ge 3 ]" 2>/dev/null &&
	agent=$(sed -n "s/.*agent pid \([0-9]*\) on .* connected/\1/p" err) &&
	test -n "$agent" &&
	test "$(ps -o ppid= -p $agent | tr -d " ")" = "$d" &&
	kill -9 $agent &&
	test_expect_code 255 wait $d &&
	grep -q "lost the agent on localhost" err &&
	grep -q "^dtrun: job failed: lost the agent on localhost and its 3 running ranks; no other rank was running\$" err &&
	wait_gone 3 pids/*.pid pids/children pids/daemons
'

test_expect_success 'kill -9 of dtrun: the agent stops everything itself, daemons too' '
	MODE=daemon dtrun -n 2 "$R" 2>err & d=$! &&
	started 2 &&
	wait_for 10 eval "[ \$(wc -l <pids/daemons) -ge 2 ]" 2>/dev/null &&
	kill -9 $d && { wait $d || true; } &&
	wait_gone 3 pids/*.pid pids/children pids/daemons
'

test_expect_success 'a daemon a rank leaves behind is killed at the end' '
	dtrun sh -c "setsid sh -c \"echo \\\$\\\$ >daemon.pid; exec sleep 300\" & sleep 0.3; exit 0" &&
	test -s daemon.pid &&
	wait_gone 3 daemon.pid
'

test_expect_success 'SIGUSR1 is forwarded to the ranks' '
	dtrun -n 2 sh -c "trap \"echo got-usr1; exit 0\" USR1; echo \$\$ >\$RANK.pid; while :; do sleep 0.05; done" >out & d=$! &&
	wait_for 5 eval "[ -s 0.pid ] && [ -s 1.pid ]" &&
	kill -USR1 $d && wait $d &&
	test $(grep -c got-usr1 out) -eq 2
'

test_done
