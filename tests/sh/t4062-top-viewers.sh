#!/bin/bash
# t4062-top-viewers.sh -- dtrun top that does not lie: a killed dtrun's socket
# is removed, not counted; several jobs are listed one a line; the job id is
# said once on a terminal; an ended rank's CPU and memory read as unknown;
# idle and many viewers never make top say the job ended, or go unanswered.
. "$(dirname "$0")/lib.sh"

# A runtime directory of its own: no other job's socket is seen here.
XDG_RUNTIME_DIR=$TRASH/run
mkdir -m 700 "$XDG_RUNTIME_DIR"
export XDG_RUNTIME_DIR
RUN=$XDG_RUNTIME_DIR/dtrun
# start_job OUT ARGS... -- dtrun -v ARGS in the background, stderr in OUT;
# its pid in $JOB_PID and its id in $JOB_ID once it has started.
start_job() {
	out=$1
	shift
	dtrun -v "$@" >/dev/null 2>"$out" &
	JOB_PID=$!
	test_at_exit "kill $JOB_PID 2>/dev/null"
	wait_for 30 grep -q "^dtrun: started .*(job " "$out" &&
	JOB_ID=$(sed -n "s/^dtrun: started .*(job \([0-9a-f-]*\).*/\1/p" "$out") &&
	test -S "$RUN/$JOB_ID.top"
}
# stop PID... -- stops these jobs (SIGTERM) and waits for them, whatever
# their exit status.
stop() {
	kill "$@" 2>/dev/null
	wait "$@" || true
}
# in_background OUT CMD... -- CMD in the background, its output in OUT
# (stderr in OUT.err), its pid in $BG_PID, killed when the test ends.
in_background() {
	out=$1
	shift
	"$@" >"$out" 2>"$out.err" &
	BG_PID=$!
	test_at_exit "kill $BG_PID 2>/dev/null"
}

test_expect_success 'a SIGKILLed dtrun: its socket removed, never counted; plain dtrun top shows the one live job' '
	start_job a.err -n 2 sleep 300 && a=$JOB_PID && ida=$JOB_ID &&
	kill -KILL $a &&
	test_expect_code 137 wait $a &&
	test -S "$RUN/$ida.top" &&
	test_expect_code 1 dtrun top --once 2>err &&
	grep -q "^dtrun top: no job of yours runs here" err &&
	test ! -e "$RUN/$ida.top" &&
	start_job a.err -n 2 sleep 300 && a=$JOB_PID && ida=$JOB_ID &&
	kill -KILL $a &&
	start_job b.err -n 1 sleep 300 && b=$JOB_PID && idb=$JOB_ID &&
	dtrun top --once >view &&
	head -n 1 view | grep -qx "job $idb, attempt 0, 1 rank" &&
	test ! -e "$RUN/$ida.top" &&
	stop $b
'

test_expect_success 'two live jobs: listed one a line, with id, ranks, hosts, start and command' '
	start_job a.err -n 2 sleep 300 && a=$JOB_PID && ida=$JOB_ID &&
	start_job b.err -n 1 sleep 299 && b=$JOB_PID && idb=$JOB_ID &&
	test_expect_code 2 dtrun top --once 2>err &&
	grep -q "^JOB  *RANKS  *HOSTS  *STARTED  *COMMAND$" err &&
	grep -q "^$ida  *2  *localhost  *[0-9-]* [0-9:]*  *sleep 300$" err &&
	grep -q "^$idb  *1  *localhost  *[0-9-]* [0-9:]*  *sleep 299$" err &&
	grep -q "^dtrun top: 2 jobs run here (above): name one, dtrun top JOB$" err &&
	test $(wc -l <err) -eq 4 &&
	stop $a $b
'

test_expect_success 'the job id: once on a terminal, across restarts; not when piped' '
	if ! script -qfec true /dev/null >/dev/null 2>&1 </dev/null; then
		skip_test "no script(1) with a pty here"
	fi &&
	test_expect_code 1 script -qfec "dtrun --max-restarts 1 --restart-delay 0 -n 2 false" /dev/null >tty.out 2>&1 </dev/null &&
	test $(grep -c "job [0-9a-f]*-[0-9a-f]*; dtrun top shows it" tty.out) -eq 1 &&
	grep -q "restarting the job" tty.out &&
	dtrun -n 2 true >out 2>err &&
	! grep -q "job [0-9a-f]*-" out err
'

test_expect_success 'a rank that ended: its CPU%, WAIT% and RSS unknown (-, null), not a wrapped count' '
	cat >ranks.sh <<-\EOF &&
	# Rank 1 spins until told to end; rank 0 goes on.
	if [ "$RANK" = 1 ]; then
		while [ ! -e go ]; do :; done
		exit 0
	fi
	exec sleep 300
	EOF
	start_job j.err -n 2 sh ranks.sh &&
	cat >busy1.py <<-\EOF &&
	import json, sys
	r = [r for r in json.load(sys.stdin)["ranks"] if r["rank"] == 1][0]
	assert r["cpu_percent"] is not None and r["cpu_percent"] > 1, r
	EOF
	wait_for 30 sh -c "dtrun top --json | python3 busy1.py" &&
	touch go &&
	wait_for 30 sh -c "dtrun top --once | grep -q \"^1  *localhost  *ended \"" &&
	for i in 1 2 3 4 5 6 7 8; do
		dtrun top --once >view.$i &&
		dtrun top --json >view.$i.json &&
		sleep 0.5 || return 1
	done &&
	for i in 1 2 3 4 5 6 7 8; do
		grep -q "^1  *localhost  *ended  *-  *-  *[0-9.s-]*  *-  *-  *-  *0$" view.$i &&
		python3 -c "
import json, sys
rs = {r[\"rank\"]: r for r in json.load(open(sys.argv[1]))[\"ranks\"]}
assert rs[1][\"state\"] == \"ended\", rs[1]
assert rs[1][\"cpu_percent\"] is None and rs[1][\"rss_kib\"] is None, rs[1]
assert rs[1][\"wait_percent\"] is None, rs[1]
assert rs[0][\"state\"] == \"running\" and rs[0][\"rss_kib\"] > 0, rs[0]
" view.$i.json || return 1
	done &&
	stop $JOB_PID
'

test_expect_success '1,000 viewers, 16 of them idle: --once still answers, a live top never says the job ended' '
	cat >flood.py <<-\EOF &&
	# flood.py SOCK: holds 16 idle connections (reopened when closed) and
	# opens 984 more at a time that ask and never read; rounds in ./rounds.
	import resource, socket, sys, time
	path = sys.argv[1]
	soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
	resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
	def conn(req):
	    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
	    s.setblocking(False)
	    try:
	        s.connect(path)
	        if req:
	            s.send(req)
	    except OSError:
	        s.close()
	        return None
	    return s
	def closed(s):
	    try:
	        return s.recv(1, socket.MSG_PEEK) == b""
	    except BlockingIOError:
	        return False
	    except OSError:
	        return True
	idle, burst, rounds = [], [], 0
	while True:
	    for s in [s for s in idle if closed(s)]:
	        idle.remove(s)
	        s.close()
	    while len(idle) < 16:
	        s = conn(None)
	        if s is None:
	            break
	        idle.append(s)
	    for s in burst:
	        s.close()
	    burst = [s for s in (conn(b"table\n") for _ in range(984)) if s]
	    rounds += 1
	    with open("rounds", "w") as f:
	        f.write("%d\n" % rounds)
	    time.sleep(0.2)
	EOF
	start_job j.err -n 2 sleep 300 &&
	in_background live dtrun top &&
	live=$BG_PID &&
	wait_for 30 grep -q "^job " live &&
	in_background flood.out python3 flood.py "$RUN/$JOB_ID.top" &&
	flood=$BG_PID &&
	wait_for 60 sh -c "test \$(cat rounds 2>/dev/null || echo 0) -ge 3" &&
	for i in 1 2 3 4 5; do
		dtrun top --once >view.$i 2>err.$i &&
		head -n 1 view.$i | grep -qx "job $JOB_ID, attempt 0, 2 ranks" &&
		grep -q "^1  *localhost  *running " view.$i || return 1
	done &&
	dtrun top --json >view.json &&
	python3 -c "import json; assert len(json.load(open(\"view.json\"))[\"ranks\"]) == 2" &&
	r=$(cat rounds) &&
	wait_for 60 sh -c "test \$(cat rounds) -ge $((r + 3))" &&
	proc_alive $live &&
	! grep -q "job ended" live &&
	stop $flood &&
	stop $JOB_PID &&
	wait $live &&
	tail -n 1 live | grep -qx "job ended"
'

test_done
