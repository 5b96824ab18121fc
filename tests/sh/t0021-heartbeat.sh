#!/bin/bash
# t0021-heartbeat.sh -- heartbeats on a local agent's link: a peer that goes
# silent without closing (here: stopped with SIGSTOP) is given up after
# --heartbeat-timeout, by dtrun (exit 255, the host named) and by the agent
# (it stops its ranks). The real partition is in t3030-netns.sh. No test
# here measures time: each waits for an outcome, with a safety net far
# above the timeout.
. "$(dirname "$0")/lib.sh"

# A rank that records its pid, then sleeps.
cat >"$TRASH/rank.sh" <<'EOS'
#!/bin/sh
mkdir -p pids
echo $$ >pids/$RANK.pid
exec sleep 300
EOS
chmod +x "$TRASH/rank.sh"
R=$TRASH/rank.sh

# dtrun_pid PID -- PID if it is dtrun, else its child that is: bash may fork
# once more for a command it runs in the background.
dtrun_pid() {
	if [ "$(cat "/proc/$1/comm")" = dtrun ]; then
		echo "$1"
	else
		ps -o pid=,comm= --ppid "$1" | awk '$2 == "dtrun" { print $1 }'
	fi
}

# writer_blocked PID -- PID has slept writing a full pipe at five looks in
# a row (wchan), not only for a moment its reader was slow.
writer_blocked() {
	for i in 1 2 3 4 5; do
		grep -q pipe_write "/proc/$1/wchan" || return 1
		sleep 0.1
	done
}

# started N -- waits until N ranks have recorded their pid.
started() { wait_for 10 eval "[ \$(ls pids/*.pid 2>/dev/null | wc -l) -ge $1 ]"; }

test_expect_success 'an agent that goes silent is lost: 255, named, no survivors' '
	timeout 60 dtrun -v --heartbeat-timeout 1 -n 2 "$R" 2>err & d=$! &&
	started 2 &&
	agent=$(sed -n "s/.*agent pid \([0-9]*\) on .* connected/\1/p" err) &&
	test -n "$agent" &&
	trap "kill -CONT $agent 2>/dev/null || :" EXIT &&
	kill -STOP $agent &&
	test_expect_code 255 wait $d &&
	grep -q "lost the agent on localhost (heard nothing from it for 1 s (--heartbeat-timeout)" err &&
	wait_gone 10 pids/*.pid
'

test_expect_success 'an agent that hears nothing from dtrun stops its ranks itself' '
	rm -rf pids &&
	# Not under timeout(1): it would stop itself and resume dtrun. The
	# trap is the safety net (the body runs in a subshell).
	dtrun --heartbeat-timeout 1 -n 2 "$R" 2>err & b=$! &&
	started 2 &&
	d=$(dtrun_pid $b) &&
	test -n "$d" &&
	trap "kill -CONT $d 2>/dev/null || :; kill $d 2>/dev/null || :" EXIT &&
	kill -STOP $d &&
	# dtrun is stopped, not gone: its link is open and silent.
	wait_gone 30 pids/*.pid &&
	proc_alive $d &&
	grep -q "heard nothing from dtrun for 1 s (its --heartbeat-timeout): stopping its ranks" err &&
	kill -CONT $d &&
	test_expect_code 255 wait $b
'

# A rank that writes lines for ever.
cat >"$TRASH/flood.sh" <<'EOS'
#!/bin/sh
mkdir -p pids
echo $$ >pids/$RANK.pid
exec yes 0123456789012345678901234567890123456789012345678901234567890123456789
EOS
chmod +x "$TRASH/flood.sh"

# Stopped (as dtrun-kill does) while dtrun is silent: the agent's last
# flush of what its rank wrote must not wait for ever.
test_expect_success 'an agent stopped with output queued for a silent dtrun gives up and exits' '
	rm -rf pids &&
	# 5 s, not 1: the rank must fill its pipe before the agent gives dtrun
	# up on its own, which on a loaded machine takes more than a second.
	dtrun -v --heartbeat-timeout 5 -n 1 "$TRASH/flood.sh" >/dev/null 2>err & b=$! &&
	started 1 &&
	d=$(dtrun_pid $b) &&
	test -n "$d" &&
	agent=$(sed -n "s/.*agent pid \([0-9]*\) on .* connected/\1/p" err) &&
	test -n "$agent" &&
	echo $agent >agent.pid &&
	trap "kill -CONT $d 2>/dev/null || :; kill $d 2>/dev/null || :" EXIT &&
	kill -STOP $d &&
	# Output queued: the rank blocks on its full pipe once the agent stops
	# reading it, which it does when its queue to dtrun is over the mark.
	# Before that, under load, the socket buffer may hold all there is.
	wait_for 30 writer_blocked $(cat pids/0.pid) &&
	kill -TERM $agent &&
	wait_gone 30 pids/*.pid agent.pid &&
	proc_alive $d &&
	grep -q "heard nothing from dtrun for 5 s (its --heartbeat-timeout) with [0-9]* bytes of output still to send: giving up" err &&
	kill -CONT $d &&
	test_expect_code 255 wait $b
'

test_expect_success 'an agent done early hears heartbeats while another host runs on' '
	# Host a finishes at once and waits for the others; b runs past
	# several timeouts. The agent on a must not give dtrun up meanwhile.
	timeout 60 dtrun --launcher local -H a:1,b:1 --heartbeat-timeout 1 \
	    sh -c "test \$RANK = 0 || sleep 4" 2>err &&
	! grep -q "heard nothing" err
'

# What dtrun sends its agent, kept by an agent wrapper (DTRUN_AGENT):
# capture.py relays dtrun's stream (its stdin and stdout) to a real agent
# on a socketpair of its own and copies what dtrun says into $CAP.
# frames.py FILE prints each frame's type. dtrun sends a HEARTBEAT (128)
# as soon as heartbeats are on, so its absence means they are off,
# whatever the period would have been.
cat >"$TRASH/capture.py" <<'EOS'
import os, select, socket, subprocess, sys
mine, its = socket.socketpair()
agent = subprocess.Popen([sys.argv[1]], stdin=its, stdout=its)
its.close()
cap = open(os.environ["CAP"], "ab")
up = socket.socket(fileno=os.dup(0))
up.setblocking(True)
ends = 0
while ends < 2:
	r, _, _ = select.select([up, mine], [], [])
	for s in r:
		b = s.recv(65536)
		if s is up:
			cap.write(b)
			cap.flush()
		if not b:
			ends += 1
			(mine if s is up else up).shutdown(socket.SHUT_WR)
			continue
		(mine if s is up else up).sendall(b)
sys.exit(agent.wait())
EOS
cat >"$TRASH/frames.py" <<'EOS'
import struct, sys
d = open(sys.argv[1], "rb").read()
i = 0
while i + 5 <= len(d):
	n, = struct.unpack(">I", d[i:i + 4])
	print(d[i + 4])
	i += 4 + n
EOS

test_expect_success '--heartbeat-timeout 0 turns heartbeats off; a job runs as ever' '
	{ command -v python3 >/dev/null || skip_test "no python3"; } &&
	printf "#!/bin/sh\nexec python3 \"%s\" \"%s\"\n" "$TRASH/capture.py" "$B/dtrun-agent" >agent &&
	chmod +x agent &&
	CAP=$PWD/on DTRUN_AGENT=$PWD/agent dtrun --heartbeat-timeout 1 -n 2 true &&
	CAP=$PWD/off DTRUN_AGENT=$PWD/agent dtrun --heartbeat-timeout 0 -n 2 true &&
	python3 "$TRASH/frames.py" on >on.types &&
	python3 "$TRASH/frames.py" off >off.types &&
	grep -qx 128 on.types &&
	grep -qx 4 off.types &&
	! grep -qx 128 off.types
'

test_expect_success '--heartbeat-timeout is checked: exit 2 naming the bounds' '
	test_expect_code 2 dtrun --heartbeat-timeout 0.2 true 2>err &&
	grep -q "heartbeat-timeout 0.2: want 1 to 86400 seconds" err &&
	test_expect_code 2 dtrun --heartbeat-timeout soon true 2>err &&
	grep -q "want seconds" err
'

test_expect_success 'engine.yaml heartbeatTimeout: used, and checked with its place' '
	printf "command: true\nheartbeatTimeout: 500ms\n" >job.yaml &&
	test_expect_code 2 dtrun -f job.yaml 2>err &&
	grep -q "job.yaml:2:[0-9]*: heartbeatTimeout 0.5: want 1 to 86400 seconds" err &&
	printf "command: true\nheartbeatTimeout: 2s\n" >job.yaml &&
	dtrun -f job.yaml &&
	dtrun -f job.yaml --heartbeat-timeout 0 --dry-run >/dev/null
'

test_done
