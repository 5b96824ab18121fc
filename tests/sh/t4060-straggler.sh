#!/bin/bash
# t4060-straggler.sh -- the straggler watch: 8 local ranks, each a steady
# training loop (helpers/stepper, or a python3 one with dtrun_progress),
# one of them 15% slower a step. It is named once, with its pace against the
# median, from the rhythm of its lines or from the steps it reports; ranks
# that differ by noise alone are never named. --on-straggler shows its
# stack or stops the job (122).
. "$(dirname "$0")/lib.sh"

STEP=$B/helpers/stepper
# A runtime directory of its own: dtrun top sees this job's socket alone.
XDG_RUNTIME_DIR=$TRASH/run
mkdir -m 700 "$XDG_RUNTIME_DIR"
export XDG_RUNTIME_DIR
# steps_are N SECS -- dtrun top shows each of the job's 4 ranks at step N
# within SECS (one python3 asks again and again: each start costs).
steps_are() {
	python3 - "$1" "$2" <<-\EOF
	import json, subprocess, sys, time
	n, end = int(sys.argv[1]), time.monotonic() + float(sys.argv[2])
	while time.monotonic() < end:
	    p = subprocess.run(["dtrun", "top", "--json"], capture_output=True)
	    rs = json.loads(p.stdout)["ranks"] if p.returncode == 0 else []
	    if len(rs) == 4 and all(r["step"] == n for r in rs):
	        sys.exit(0)
	    time.sleep(0.2)
	print("steps seen:", [(r["rank"], r["step"]) for r in rs])
	sys.exit(1)
	EOF
}
# gone PID -- waits (10 s at most) until PID, not our child, is dead.
gone() {
	wait_for 10 eval "! proc_alive $1"
}
# A rank that reports steps 1..$1 (python: dtrun_progress), $2 a second
# (0: all at once) once the file go.start is there, then waits for go.end.
cat >"$TRASH/report.py" <<'EOF'
import os, sys, time
import dtrun_progress
n, rate = int(sys.argv[1]), float(sys.argv[2])
with open("prog.%s" % os.environ["RANK"], "w") as f:
    f.write(os.environ["DTRUN_PROGRESS"])
while not os.path.exists("go.start"):
    time.sleep(0.05)
t = time.monotonic()
for i in range(1, n + 1):
    if rate > 0:
        t += 1 / rate
        time.sleep(max(0, t - time.monotonic()))
    dtrun_progress.step(i)
while not os.path.exists("go.end"):
    time.sleep(0.05)
EOF
# The straggler lines of file $1.
named() {
	grep "^dtrun: straggler: " "$1" || true
}

# The straggler jobs of the tests below, each a second or so of CPU in 15
# to 30 s of steps, run at once, in a runtime directory of their own (not
# the one dtrun top looks at): each is judged with the others' noise, as
# the noise test wants (their ranks differ by noise alone). Each test then
# checks its own job's output, in $TRASH/NAME.
cat >"$TRASH/train.py" <<-\EOF
	import os, random, time
	import dtrun_progress
	rank = int(os.environ["RANK"])
	per = 0.1 * (1.15 if rank == 6 else 1.0)
	t = time.monotonic()
	for i in range(300):
	    t += per * random.uniform(0.97, 1.03)
	    time.sleep(max(0, t - time.monotonic()))
	    dtrun_progress.step(i)
	EOF
mkdir -m 700 "$TRASH/run-bg"
export XDG_RUNTIME_DIR=$TRASH/run-bg
bg_start lines dtrun -n 8 --on-straggler stop "$STEP" -p 0.1 -s 5 -n 1200
bg_start exact dtrun -n 8 --on-straggler stop "$STEP" -p 0.1 -c -s 2 -n 1200
bg_start python env PYTHONPATH="$SRC/python" dtrun -n 8 python3 "$TRASH/train.py"
bg_start noise-exact dtrun -n 8 "$STEP" -c -p 0.1 -n 250
bg_start noise-lines dtrun -n 8 "$STEP" -p 0.1 -n 250
bg_start stack dtrun -n 8 --on-straggler stack "$STEP" -p 0.1 -s 3 -n 250
export XDG_RUNTIME_DIR=$TRASH/run

test_expect_success 'zero-config: the rank whose lines come 15% slower is named, alone, from its lines' '
	bg_end lines 122 &&
	cd "$TRASH/lines" &&
	named err >got &&
	test $(wc -l <got) -eq 1 &&
	grep -q "^dtrun: straggler: rank 5 on localhost: 0\.1[01][0-9]* s per \"step # loss #\.#\" line vs median 0\.[01][0-9]* s (last [0-9]* lines)$" got &&
	grep -qx "dtrun: job failed: stopped for a straggler, rank 5 on localhost (--on-straggler stop); 8 ranks were stopped" err
'

test_expect_success 'reported steps (dtcomm_step): named in s/step' '
	bg_end exact 122 &&
	cd "$TRASH/exact" &&
	named err >got &&
	test $(wc -l <got) -eq 1 &&
	grep -q "^dtrun: straggler: rank 2 on localhost: 0\.1[01][0-9]* s/step vs median 0\.[01][0-9]* s (last [0-9]* steps)$" got
'

test_expect_success 'reported steps (python: dtrun_progress.step): named, and the job goes on by default' '
	bg_end python 0 &&
	cd "$TRASH/python" &&
	named err >got &&
	test $(wc -l <got) -eq 1 &&
	grep -q "^dtrun: straggler: rank 6 on localhost: 0\.1[01][0-9]* s/step vs median 0\.[01][0-9]* s" got
'

test_expect_success 'ranks that differ by noise alone: never named, from lines or from steps' '
	# Both at once (with the other jobs): the noise of one is the others too.
	bg_end noise-exact 0 &&
	bg_end noise-lines 0 &&
	cd "$TRASH" &&
	test $(grep -c "] step " noise-lines/out) -eq 2000 &&
	test -z "$(named noise-lines/err)" &&
	test -z "$(named noise-exact/err)"
'

test_expect_success '--on-straggler stack: its stack, and only its, is shown; the job goes on' '
	bg_end stack 0 &&
	cd "$TRASH/stack" &&
	grep -q "^dtrun: straggler: rank 3 on localhost: " err &&
	grep -q "^dtrun: stacks of 1 rank in 1 group" err &&
	grep -q "^dtrun:   rank 3 on localhost, pid [0-9]*" err &&
	test $(grep -c "] step " out) -eq 2000
'

# A second of 4 ranks stepping 50 times a second, all arriving while the
# agent reads nothing: a datagram queue held 10 (net.unix.max_dgram_qlen).
test_expect_success 'a second of steps of 4 ranks at 50/s, at once: not one is lost' '
	PYTHONPATH=$SRC/python dtrun -n 4 python3 "$TRASH/report.py" 50 0 >out 2>err &
	job=$! &&
	test_at_exit "touch go.start go.end; kill $job 2>/dev/null; gone $job" &&
	wait_for 30 eval "[ \$(ls prog.* 2>/dev/null | wc -l) -eq 4 ]" &&
	touch go.start &&
	steps_are 50 30 &&
	touch go.end &&
	wait $job
'

# Another user who floods the agent's progress socket (its name is in
# /proc/net/unix for all to see) with datagrams and connections.
cat >"$TRASH/flood.py" <<'EOF'
import os, socket, sys
addr = "\0" + sys.argv[1][len("unix:@"):]
open(os.path.join(sys.argv[2], "flooding"), "w").close()
d = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
d.setblocking(False)
while True:
    try:
        d.sendto(b"0 999999", addr)
    except OSError:
        pass
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.setblocking(False)
    try:
        s.connect(addr)
        s.send(b"0 999999\n" * 64)
    except OSError:
        pass
    s.close()
EOF

test_expect_success 'another user flooding the progress socket does not silence the watch' '
	# The stranger runs the system python (a root pyenv is not its).
	if [ "$(id -u)" != 0 ] || ! setpriv --reuid=65534 --regid=65534 \
	    --clear-groups /usr/bin/python3 -c "" 2>/dev/null; then
		echo "needs root, setpriv and a /usr/bin/python3 others can run" >.skipped && return 0
	fi
	# What the stranger runs, where it can reach it (the suite may be in
	# a 0700 directory), and a place it may write.
	sdir=$(mktemp -d /tmp/dtrun-XXXX) &&
	test_at_exit "rm -rf $sdir" &&
	chmod 755 "$sdir" &&
	cp "$TRASH/flood.py" "$sdir/" &&
	mkdir -m 777 "$sdir/out" &&
	{ PYTHONPATH=$SRC/python dtrun -n 4 python3 "$TRASH/report.py" 40 20 >out 2>err & } &&
	job=$! &&
	test_at_exit "touch go.start go.end; kill $job 2>/dev/null; gone $job" &&
	wait_for 30 eval "[ \$(ls prog.* 2>/dev/null | wc -l) -eq 4 ]" &&
	{ setpriv --reuid=65534 --regid=65534 --clear-groups /usr/bin/python3 "$sdir/flood.py" "$(cat prog.0)" "$sdir/out" & } &&
	flood=$! &&
	test_at_exit "kill $flood 2>/dev/null; gone $flood" &&
	wait_for 10 test -e "$sdir/out/flooding" &&
	touch go.start &&
	steps_are 40 30 &&
	kill $flood && { wait $flood || :; } &&
	touch go.end &&
	wait $job
'

test_expect_success '--straggler-threshold 0 turns the watch off; bad values exit 2' '
	dtrun -n 2 --straggler-threshold 0 sh -c "echo \${DTRUN_PROGRESS:-none}" >out 2>err &&
	test "$(sort -u out)" = "[0] none
[1] none" &&
	dtrun -n 1 --prefix "" sh -c "echo \$DTRUN_PROGRESS" >out &&
	grep -q "^unix:@dtrun-prog\." out &&
	dtrun -n 1 --straggler-threshold 25% true &&
	for v in -1 abc 11 5%%; do
		test_expect_code 2 dtrun -n 1 --straggler-threshold "$v" true 2>err || return 1
		grep -q "^dtrun: --straggler-threshold \"$v\": want a fraction from 0 (off) to 10, or a percentage" err || return 1
	done &&
	test_expect_code 2 dtrun -n 1 --on-straggler kill true 2>err &&
	grep -qx "dtrun: --on-straggler kill: want report, stack or stop" err
'

test_done
