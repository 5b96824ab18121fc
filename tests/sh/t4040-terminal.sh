#!/bin/bash
# t4040-terminal.sh -- on a terminal: coloured prefixes and a status line
# while starting; never when piped. The summary line of a failed job.
. "$(dirname "$0")/lib.sh"

# on_tty CMD -- runs CMD with stdout and stderr on a pseudo-terminal; the
# terminal's bytes go to tty.out.
on_tty() { script -qfec "$*" /dev/null >tty.out 2>&1 </dev/null; }
ESC=$(printf '\033')
export TERM=xterm

if ! script -qfec true /dev/null >/dev/null 2>&1 </dev/null; then
	test_skip 'colour and status line on a terminal' 'no script(1) with a pty here'
else
	test_expect_success 'on a terminal: rank prefixes in colour, a status line cleared before output' '
		on_tty dtrun -n 2 sh -c "\"echo hi\"" &&
		grep -q "${ESC}\[36m\[0\] ${ESC}\[0mhi" tty.out &&
		grep -q "${ESC}\[32m\[1\] ${ESC}\[0mhi" tty.out &&
		grep -q "dtrun: starting: hosts [01]/1 connected, [01]/1 ready; ranks [0-2]/2 started${ESC}\[K" tty.out &&
		tr "\r" "\n" <tty.out | grep -v "^${ESC}\[K\$" | grep -v "starting:" >lines &&
		test $(grep -c hi lines) -eq 2 &&
		! grep -q "starting:" lines
	'

	test_expect_success 'NO_COLOR turns colours off, not the status line' '
		NO_COLOR=1 on_tty dtrun -n 2 sh -c "\"echo hi\"" &&
		! grep -q "${ESC}\[3[0-9]m" tty.out &&
		grep -q "\[1\] hi" tty.out &&
		grep -q "starting:" tty.out
	'

	test_expect_success 'TERM=dumb gets no colour' '
		TERM=dumb on_tty dtrun sh -c "\"echo hi\"" &&
		! grep -q "${ESC}\[3[0-9]m" tty.out
	'

	test_expect_success '-q shows no status line' '
		on_tty dtrun -q -n 2 true &&
		! grep -q "starting:" tty.out
	'

	test_expect_success 'a message of dtrun erases the status line first' '
		on_tty dtrun -v -n 2 true &&
		grep -q "started${ESC}\[K.${ESC}\[Kdtrun: started 2 ranks on 1 host" tty.out &&
		grep -q "${ESC}\[K.${ESC}\[Kdtrun: localhost: agent pid [0-9]* on .* connected" tty.out
	'
fi

test_expect_success '-v says which agent connected, from where' '
	dtrun -v true 2>err &&
	grep -q "^dtrun: localhost: agent pid [0-9]* on $(uname -n) connected\$" err
'

test_expect_success 'piped: no colour, no status line, even with a terminal elsewhere' '
	dtrun -n 2 sh -c "echo hi; echo err >&2" >out 2>err &&
	! grep -q "$ESC" out && ! grep -q "$ESC" err &&
	! grep -q "starting:" err
'

test_expect_success 'a failed job ends with a summary: who failed first, how, how many stopped' '
	test_expect_code 3 dtrun -n 4 sh -c "[ \$RANK = 2 ] && exit 3; exec sleep 30" 2>err &&
	test "$(tail -n 1 err)" = "dtrun: job failed: rank 2 on localhost exited with code 3 first; 3 other ranks were stopped"
'

test_expect_success 'the summary of a rank killed by a signal, alone' '
	test_expect_code 137 dtrun sh -c "kill -9 \$\$" 2>err &&
	test "$(tail -n 1 err)" = "dtrun: job failed: rank 0 on localhost was killed by signal 9 (Killed) first; no other rank was running"
'

test_expect_success 'the summary of a timeout and of Ctrl-C' '
	test_expect_code 124 dtrun -n 2 --timeout 0.3 sleep 30 2>err &&
	test "$(tail -n 1 err)" = "dtrun: job failed: timed out after 0.3 s (--timeout); 2 ranks were stopped" &&
	{ dtrun -n 3 sh -c "echo up; exec sleep 30" >out 2>err & d=$!; } &&
	wait_for 10 eval "[ \$(grep -c up out) -eq 3 ]" &&
	kill -INT $d && test_expect_code 130 wait $d &&
	test "$(tail -n 1 err)" = "dtrun: job stopped by SIGINT; 3 ranks were stopped"
'

# The agent waits a second before it starts: with START sent beside PREPARE, a
# quick agent may start both ranks within the 1 ms, and then they are stopped.
test_expect_success 'a timeout before any rank started: nothing said to be stopped' '
	printf "#!/bin/sh\nsleep 1\nexec \"%s\" \"\$@\"\n" "$B/dtrun-agent" >slow-agent &&
	chmod +x slow-agent &&
	test_expect_code 124 env DTRUN_AGENT=$PWD/slow-agent dtrun -n 2 --timeout 0.001 sleep 30 2>err &&
	grep -qx "dtrun: job timed out after 0.001 s (--timeout) before any rank started" err &&
	! grep -q "stopping 0 ranks" err &&
	test "$(tail -n 1 err)" = "dtrun: job failed: timed out after 0.001 s (--timeout); no rank had started"
'

test_expect_success 'an agent lost before its ranks started: none counted as stopped' '
	test_expect_code 255 env DTRUN_AGENT=/bin/false dtrun -n 2 true 2>err &&
	test "$(tail -n 1 err)" = "dtrun: job failed: never reached the agent on localhost (see above); no rank had started"
'

test_expect_success 'no summary when the job succeeds, or for a usage error' '
	dtrun -n 2 true 2>err && test ! -s err &&
	test_expect_code 2 dtrun -n 2 no-such-command-xyz 2>err &&
	test $(wc -l <err) -eq 1
'

test_expect_success 'a rank failing after its agent finished is not a lost agent' '
	for i in 1 2 3 4 5 6 7 8; do
		test_expect_code 3 dtrun sh -c "exit 3" 2>err &&
		! grep -q "lost the agent" err || exit 1
	done
'

test_done
