#!/bin/bash
# t0060-restart.sh -- --max-restarts: the whole job again after a failure,
# one budget, the last attempt's exit status, nothing of an attempt left
# when the next starts (checked by the PIDs ranks record), the attempt in
# the prefix and --output-dir, and signals or dtrun-kill between attempts.
. "$(dirname "$0")/lib.sh"

# A rank: records its pid and its child's under pids/A.RANK, where A is the
# attempt; on a later attempt it first notes any pid of an earlier attempt
# still alive (in leftovers). FAIL="RANK:ATTEMPTS" fails that rank with
# code 10+attempt on those attempts ("1:0 1:1"); others sleep until stopped
# or, once nothing fails, exit 0. HOLD=1 sleeps on the last attempt too.
cat >"$TRASH/rank.sh" <<'EOS'
#!/bin/bash
a=$DTRUN_RESTART_COUNT
mkdir -p pids
for f in pids/*; do
	[ -f "$f" ] || continue
	case "$f" in pids/$a.*) continue ;; esac
	while read -r p; do
		st=$(sed -n 's/^[0-9]* (.*) \([A-Za-z]\) .*/\1/p' /proc/$p/stat 2>/dev/null)
		[ -n "$st" ] && [ "$st" != Z ] && [ "$st" != X ] && echo "$f $p" >>leftovers
	done <"$f"
done
echo "$DTRUN_JOB_ID" >id
echo "rank $RANK attempt $a of $DTRUN_MAX_RESTARTS torch $TORCHELASTIC_RESTART_COUNT port $MASTER_PORT"
sleep 300 & echo $! >>pids/$a.$RANK
echo $$ >>pids/$a.$RANK
for f in $FAIL; do
	if [ "$f" = "$RANK:$a" ]; then
		# Fail only once every rank of this attempt runs.
		while [ $(ls pids/$a.* | wc -l) -lt $WORLD_SIZE ]; do sleep 0.05; done
		exit $((10 + a))
	fi
	case "$f" in *:$a) wait; exit 0 ;; esac
done
[ -n "${HOLD:-}" ] && wait
exit 0
EOS
chmod +x "$TRASH/rank.sh"
R=$TRASH/rank.sh

test_expect_success 'a failed attempt is followed by a fresh one that succeeds' '
	FAIL="1:0" dtrun -n 2 --max-restarts 2 --restart-delay 0 --timeout 60 "$R" >out 2>err &&
	grep -q "^\[1\] rank 1 attempt 0 of 2 torch 0 " out &&
	grep -q "^\[1\] rank 1 attempt 1 of 2 torch 1 " out &&
	grep -q "^\[0\] rank 0 attempt 1 of 2 torch 1 " out &&
	grep -q "restarting the job (restart 1 of 2) in 0 s" err &&
	grep -q "^dtrun: 2 attempts (1 restart):" err &&
	grep -q "^dtrun:   attempt 0 at [0-9:]*, [0-9.]* s, exit 10: rank 1 on localhost exited with code 10 first" err &&
	grep -q "^dtrun:   attempt 1 at [0-9:]*, [0-9.]* s, exit 0: every rank exited 0" err &&
	p0=$(sed -n "s/^\[0\] rank 0 attempt 0 .* port //p" out) &&
	p1=$(sed -n "s/^\[0\] rank 0 attempt 1 .* port //p" out) &&
	test -n "$p0" && test "$p0" != "$p1" &&
	test ! -e leftovers &&
	wait_gone 3 pids/*
'

test_expect_success 'nothing of an attempt is left when the next starts' '
	FAIL="0:0 1:1" dtrun -n 4 --max-restarts 2 --restart-delay 0 --timeout 60 "$R" >out 2>err &&
	test $(ls pids/0.* | wc -l) -eq 4 &&
	test $(ls pids/1.* | wc -l) -eq 4 &&
	test $(ls pids/2.* | wc -l) -eq 4 &&
	test ! -e leftovers &&
	wait_gone 3 pids/*
'

# Rank 1 fails only once rank 0 has said its line: else a fast rank 1 could
# have rank 0 stopped before it says anything.
test_expect_success 'a restart keeps the agent (the ranks'"'"' parent): one agent for every attempt' '
	dtrun -n 2 --max-restarts 2 --restart-on-same-failure --restart-delay 0 --timeout 60 \
	    sh -c "echo \"attempt \$DTRUN_RESTART_COUNT agent \$PPID\"; : >r\$RANK.\$DTRUN_RESTART_COUNT; while [ ! -e r0.\$DTRUN_RESTART_COUNT ]; do sleep 0.01; done; test \$RANK = 0 || test \$DTRUN_RESTART_COUNT = 2" >out 2>err &&
	test "$(sed -n "s/.*attempt [0-2] agent //p" out | sort -u | wc -l)" = 1 &&
	grep -q "^\[0\] attempt 0 agent " out &&
	grep -q "^\[0\] attempt 1 agent " out &&
	test "$(grep -c "attempt 2 agent " out)" = 2
'

test_expect_success 'a restart delay longer than --heartbeat-timeout keeps the agent alive (heartbeats go on)' '
	dtrun -n 1 --heartbeat-timeout 1 --max-restarts 1 --restart-delay 3 --timeout 60 \
	    sh -c "echo \"attempt \$DTRUN_RESTART_COUNT agent \$PPID\"; test \$DTRUN_RESTART_COUNT = 1" >out 2>err &&
	a0=$(sed -n "s/.*attempt 0 agent //p" out) &&
	test -n "$a0" &&
	test "$(sed -n "s/.*attempt 1 agent //p" out)" = "$a0" &&
	! grep -q "went silent" err
'

# A file of each rank's: the rank stopped by the first one's failure may be
# stopped between opening its file and writing it.
test_expect_success 'an agent killed during the restart delay is replaced by a new one' '
	rm -f ag.* &&
	dtrun -n 2 --max-restarts 1 --restart-delay 3 --timeout 60 \
	    sh -c "echo \"attempt \$DTRUN_RESTART_COUNT agent \$PPID\"; test \$DTRUN_RESTART_COUNT = 1 || { echo \$PPID >ag.\$RANK; exit 3; }" >out 2>err &
	d=$!
	wait_for 15 grep -q "restarting the job" err &&
	ag=$(cat ag.* | head -n 1) && test -n "$ag" &&
	kill -9 "$ag" &&
	wait $d &&
	a0=$(sed -n "s/.*attempt 0 agent //p" out | sort -u) &&
	a1=$(sed -n "s/.*attempt 1 agent //p" out | sort -u) &&
	test -n "$a1" && test "$a0" != "$a1" &&
	! proc_alive "$a0"
'

test_expect_success 'the budget is for the whole job: the last attempt sets the exit status' '
	test_expect_code 12 env FAIL="1:0 0:1 1:2" dtrun -n 2 --max-restarts 2 --restart-delay 0 "$R" >out 2>err &&
	grep -q "no restart left (--max-restarts 2): exit 12" err &&
	grep -q "^dtrun: 3 attempts (2 restarts):" err &&
	grep -q "attempt 1 at .* exit 11: rank 0 on localhost" err &&
	grep -q "attempt 2 at .* exit 12: rank 1 on localhost" err &&
	test ! -e leftovers &&
	wait_gone 3 pids/*
'

test_expect_success 'without --max-restarts nothing restarts, and nothing changes' '
	test_expect_code 10 env FAIL="1:0" dtrun -n 2 "$R" >out 2>err &&
	grep -q "attempt 0 of 0 torch 0" out &&
	! grep -q "attempt 1" out &&
	! grep -q "attempts" err
'

test_expect_success 'a command that cannot start is not retried' '
	test_expect_code 2 dtrun -n 2 --max-restarts 3 --restart-delay 0 ./no-such-command 2>err &&
	grep -q "no-such-command: does not exist" err &&
	! grep -q restarting err
'

test_expect_success '%a in --prefix is the attempt' '
	FAIL="0:0" dtrun -n 2 --max-restarts 1 --restart-delay 0 --prefix "[%r.%a] " "$R" >out 2>err &&
	grep -q "^\[0.0\] rank 0 attempt 0 " out &&
	grep -q "^\[1.1\] rank 1 attempt 1 " out
'

test_expect_success '--output-dir: the first attempt in DIR/rank.N, restart K in DIR/attempt.K/rank.N' '
	FAIL="1:0 1:1" dtrun -n 2 --max-restarts 2 --restart-delay 0 --output-dir logs "$R" >out 2>err &&
	grep -q "^rank 1 attempt 0 " logs/rank.1/stdout &&
	grep -q "^rank 1 attempt 1 " logs/attempt.1/rank.1/stdout &&
	grep -q "^rank 0 attempt 2 " logs/attempt.2/rank.0/stdout &&
	! test -e logs/attempt.0 &&
	test $(cat logs/rank.0/stdout logs/attempt.*/rank.0/stdout | wc -l) -eq 3
'

test_expect_success 'SIGTERM during the restart delay ends the job at once, exit 143' '
	FAIL="1:0" dtrun -n 2 --max-restarts 3 --restart-delay 600 "$R" >out 2>err & d=$! &&
	wait_for 20 grep -q "restarting the job (restart 1 of 3) in 600 s" err &&
	kill -TERM $d &&
	timeout 30 tail --pid=$d -f /dev/null &&
	test_expect_code 143 wait $d &&
	grep -q "got SIGTERM while waiting to restart: stopping" err &&
	! test -e pids/1.0 && ! test -e pids/1.1 &&
	wait_gone 3 pids/*
'

test_expect_success 'SIGINT while an attempt runs stops the job: no restart, exit 130' '
	HOLD=1 dtrun -n 2 --max-restarts 3 --restart-delay 0 "$R" >out 2>err & d=$! &&
	wait_for 20 eval "[ \$(ls pids/0.* 2>/dev/null | wc -l) -eq 2 ]" &&
	kill -INT $d && test_expect_code 130 wait $d &&
	! grep -q restarting err &&
	wait_gone 3 pids/*
'

test_expect_success 'a lost agent restarts the job' '
	FAIL="1:1" HOLD=1 dtrun -v -n 2 --max-restarts 1 --restart-delay 0 "$R" >out 2>err & d=$! &&
	wait_for 20 eval "[ \$(ls pids/0.* 2>/dev/null | wc -l) -eq 2 ]" &&
	agent=$(sed -n "s/.*localhost: agent pid \([0-9]*\) on .* connected/\1/p" err | head -1) &&
	test -n "$agent" &&
	kill -9 $agent &&
	test_expect_code 11 wait $d &&
	grep -q "attempt 0 at .* exit 255: lost the agent on localhost" err &&
	test ! -e leftovers &&
	wait_gone 3 pids/*
'

test_expect_success 'dtrun-kill during the restart delay stops dtrun: nothing is left' '
	FAIL="1:0" dtrun -n 2 --max-restarts 3 --restart-delay 600 "$R" >out 2>err & d=$! &&
	wait_for 20 grep -q "restarting the job" err &&
	jid=$(cat id) &&
	dtrun-kill "$jid" >kout &&
	grep -q "job $jid: stopped dtrun $d (its restarts, and every host" kout &&
	test_expect_code 143 wait $d &&
	! test -e pids/1.0 &&
	wait_gone 3 pids/*
'

test_expect_success 'dtrun-kill while an attempt runs: no restart, nothing left' '
	HOLD=1 dtrun -n 3 --max-restarts 3 --restart-delay 0 "$R" >out 2>err & d=$! &&
	wait_for 20 eval "[ \$(ls pids/0.* 2>/dev/null | wc -l) -eq 3 ]" &&
	jid=$(cat id) &&
	dtrun-kill "$jid" >kout &&
	grep -q "stopped dtrun $d" kout &&
	test_expect_code 143 wait $d &&
	! grep -q restarting err &&
	! test -e pids/1.0 &&
	wait_gone 3 pids/*
'

test_expect_success 'engine.yaml: preemptible: true restarts 3 times; maxRestarts wins' '
	printf "preemptible: true\nrestartDelay: 0\ncommand: %s\n" "$R" >pre.yaml &&
	test_expect_code 13 env FAIL="0:0 0:1 0:2 0:3" dtrun -n 1 -f pre.yaml >out 2>err &&
	grep -q "^dtrun: 4 attempts (3 restarts):" err &&
	printf "preemptible: true\nmaxRestarts: 1\nrestartDelay: 0s\ncommand: %s\n" "$R" >one.yaml &&
	test_expect_code 11 env FAIL="0:0 0:1 0:2 0:3" dtrun -n 1 -f one.yaml >out 2>err &&
	grep -q "^dtrun: 2 attempts (1 restart):" err
'

test_expect_success '--max-restarts, --restart-delay and --min-np check their values' '
	test_expect_code 2 dtrun --max-restarts -1 true 2>err &&
	grep -q "max-restarts -1: need at least 0" err &&
	test_expect_code 2 dtrun --restart-delay x true 2>err &&
	grep -q "restart-delay \"x\": want seconds" err &&
	test_expect_code 2 dtrun --min-np 0 true 2>err &&
	grep -q "min-np 0: need at least 1" err
'

test_done
