#!/bin/bash
# t4061-top.sh -- dtrun top: a running job seen from another process through
# its socket (owner-only), as a table or JSON, a row per rank with its pace,
# CPU and memory; refreshed until the job ends. Locally and over loopback
# ssh hosts.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/sshd.sh"

STEP=$B/helpers/stepper
# A runtime directory of its own: no other job's socket is seen here.
XDG_RUNTIME_DIR=$TRASH/run
mkdir -m 700 "$XDG_RUNTIME_DIR"
export XDG_RUNTIME_DIR
# start_job ARGS... -- dtrun ARGS in the background; its pid in $JOB_PID,
# its id in $JOB_ID, once it answers dtrun top by that id (another job may
# run already). job.err is unlinked first: a job started before keeps its own.
start_job() {
	rm -f job.err
	dtrun -v "$@" >job.out 2>job.err &
	JOB_PID=$!
	test_at_exit "kill $JOB_PID 2>/dev/null"
	wait_for 20 eval "grep -q \"(job [^ )]*\" job.err" &&
	JOB_ID=$(sed -n "s/.*(job \([^ ;)]*\).*/\1/p" job.err | head -n 1) &&
	wait_for 20 sh -c "dtrun top --once $JOB_ID >/dev/null 2>&1"
}
# stop_job PID... -- ends these jobs and waits for them; their status is
# not the test's (a "|| true" in a body's chain would hide every step).
stop_job() {
	kill "$@" 2>/dev/null
	wait "$@" || :
}
rundir() {
	echo "$XDG_RUNTIME_DIR/dtrun"
}

# The --json test's job takes 15 s or more until its straggler is named: it
# runs from here, while the tests before it run, in a runtime directory of
# its own (each test sees its own jobs alone); the test ends it.
mkdir -m 700 "$TRASH/run-json"
bg_start json env XDG_RUNTIME_DIR="$TRASH/run-json" dtrun -v -n 4 \
    --straggler-threshold 10% "$STEP" -p 0.1 -c -s 3 -n 600

test_expect_success 'a table: a row per rank, its state, step, pace, CPU and memory; the socket is owner-only' '
	# Its ranks step until the file end is there (1000 steps at most).
	start_job -n 4 "$STEP" -p 0.1 -n 1000 -e "$PWD/end" &&
	# Until every rank has a pace (5 s of steps).
	wait_for 30 eval "dtrun top --once >view && [ \$(grep -c \"^[0-3]  *localhost  *running  *[0-9][0-9]*  *0\.[0-9]\" view) = 4 ]" &&
	head -n 1 view | grep -q "^job [0-9a-f-]*, attempt 0, 4 ranks$" &&
	sed -n 2p view | grep -q "^RANK  *HOST  *STATE  *STEP  *S/STEP  *LINE  *CPU%  *WAIT%  *RSS  *RESTARTS$" &&
	for r in 0 1 2 3; do
		grep -q "^$r  *localhost  *running  *[0-9][0-9]*  *0\.[0-9]*  *[0-9.]*s  *[0-9-]*  *[0-9-]*  *[0-9.]*M  *0$" view || return 1
	done &&
	# The ranks sleep between steps: where they wait is known by now.
	wait_for 10 eval "dtrun top --once >view && [ \$(grep -c \"^[0-3]  *localhost  *running  *[0-9][0-9]*  *0\.[0-9]*  *[0-9.]*s  *[0-9-]*  *[0-9][0-9]*  \" view) = 4 ]" &&
	test $(wc -l <view) -eq 6 &&
	id=$(sed -n "s/^job \([^,]*\),.*/\1/p" view) &&
	test "$(stat -c %a "$(rundir)/$id.top")" = 700 &&
	dtrun top "$id" --once >view2 &&
	head -n 1 view2 | grep -q "^job $id," &&
	touch end &&
	wait $JOB_PID &&
	test ! -e "$(rundir)/$id.top"
'

test_expect_success 'refreshing until the job ends; no job, a wrong one, two jobs: said, with the exit status' '
	start_job -n 2 "$STEP" -p 0.1 -n 40 &&
	dtrun top >views &&
	test $(grep -c "^job .*, attempt 0, 2 ranks$" views) -ge 1 &&
	tail -n 1 views | grep -qx "job ended" &&
	test_expect_code 1 dtrun top 2>err &&
	grep -q "^dtrun top: no job of yours runs here" err &&
	test_expect_code 1 dtrun top nosuch-job 2>err &&
	grep -q "^dtrun top: .*/nosuch-job.top: no job answers there" err &&
	start_job -n 1 sleep 30 && a=$JOB_PID &&
	start_job -n 1 sleep 30 && b=$JOB_PID &&
	test_expect_code 2 dtrun top --once 2>err &&
	grep -q "^dtrun top: 2 jobs run here (above): name one, dtrun top JOB$" err &&
	stop_job $a $b &&
	test_expect_code 2 dtrun top --bad 2>err &&
	grep -qx "dtrun top: --bad: usage: dtrun top \[--json\] \[--once\] \[JOB\]" err
'

# True once dtrun top --json (into view.json) shows every rank's pace.
json_paced() {
	dtrun top --json >view.json &&
	    python3 -c 'import json; v = json.load(open("view.json")); assert all(r["secs_per_step"] for r in v["ranks"])' 2>/dev/null
}

test_expect_success '--json: one object, parsed; the straggler first' '
	cd "$TRASH/json" &&
	export XDG_RUNTIME_DIR=$TRASH/run-json &&
	wait_for 60 grep -q "^dtrun: straggler: rank 3 " err &&
	# Until every rank has its pace in the view too (each row its own clock).
	wait_for 30 json_paced &&
	python3 -c "
import json, sys
v = json.load(open(\"view.json\"))
rs = v[\"ranks\"]
assert v[\"attempt\"] == 0 and len(rs) == 4, v
assert sorted(r[\"rank\"] for r in rs) == [0, 1, 2, 3], rs
assert rs[0][\"rank\"] == 3 and rs[0][\"straggler\"], rs[0]
for r in rs:
    assert r[\"host\"] == \"localhost\" and r[\"state\"] == \"running\", r
    assert r[\"steps_reported\"] and r[\"step\"] > 0 and r[\"secs_per_step\"] > 0, r
    assert r[\"rss_kib\"] > 0 and r[\"cpu_percent\"] is not None, r
    assert r[\"wait_percent\"] is not None and not r[\"suspect\"], r
" &&
	kill "$(cat pid)" &&
	bg_end json 143
'

if why=$(sshd_skip_reason); then
	test_skip 'ssh: a job on three loopback hosts' "$why"
	test_done
fi
sshd_start || { echo "could not start sshd"; exit 1; }
AGENTS=$TRASH/agents

test_expect_success 'ssh: a job on three loopback hosts, a row per rank with its host' '
	dtrun_ssh --ssh-agent-dir "$AGENTS" -H 127.0.0.1,127.0.0.2,127.0.0.3 "$STEP" -p 0.1 -n 1200 -e "$PWD/end" >job.out 2>job.err &
	JOB_PID=$! &&
	test_at_exit "kill $JOB_PID 2>/dev/null" &&
	# Until every rank has a pace (5 s of steps); then the ranks end.
	wait_for 60 eval "dtrun top --once >view && [ \$(grep -c \"^[0-2]  *127.0.0.[1-3]  *running  *[0-9][0-9]*  *[0-9]\" view) = 3 ]" &&
	for h in 1 2 3; do
		grep -q "^$((h - 1))  *127.0.0.$h  *running  *[0-9][0-9]*  *[0-9.]*  *[0-9.]*s  *[0-9-]*  *[0-9-]*  *[0-9.]*M  *0$" view || return 1
	done &&
	touch end &&
	wait $JOB_PID
'

test_done
