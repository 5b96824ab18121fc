#!/bin/bash
# t4050-hang.sh -- when a job hangs: every rank's stack on demand (SIGQUIT,
# dtrun-kill --stacks) and on --hang-timeout, merged with the outliers first.
# Needs gdb or elfutils' eu-stack; Python frames need gdb and python3-dbg,
# the PyTorch job /usr/bin/python3 with python3-torch.
. "$(dirname "$0")/lib.sh"

PY=/usr/bin/python3

# have_stack_tool -- true if gdb or eu-stack is installed.
have_stack_tool() {
	command -v gdb >/dev/null || command -v eu-stack >/dev/null
}

# no_rank_stopped -- true if no pid.N here is a stopped (or traced) process.
no_rank_stopped() {
	for f in pid.*; do
		st=$(sed -n 's/^[0-9]* (.*) \([A-Za-z]\) .*/\1/p' "/proc/$(cat "$f")/stat") || return 1
		case "$st" in T|t) echo "rank of $f is stopped" >&2; return 1 ;; esac
	done
}

# What the PyTorch tests lack: python3-torch or gdb; empty when neither.
TORCH_GDB_LACK=
"$PY" -c "import torch.distributed" 2>/dev/null || TORCH_GDB_LACK="no python3-torch for $PY"
command -v gdb >/dev/null || TORCH_GDB_LACK="no gdb"

# need_torch_gdb -- skips the test without PyTorch or gdb.
need_torch_gdb() {
	[ -z "$TORCH_GDB_LACK" ] || skip_test "$TORCH_GDB_LACK"
}

# write_hang_py -- a 4-rank gloo job in which rank 2 sleeps before all_reduce.
write_hang_py() {
	cat >hang.py <<-\PYEOF
	import threading
	import time

	# A line a second while torch loads, so only the hang is quiet.
	loaded = threading.Event()


	def tick():
	    while not loaded.wait(1):
	        print("loading", flush=True)


	threading.Thread(target=tick, daemon=True).start()
	import torch  # noqa: E402
	import torch.distributed as dist  # noqa: E402


	def train_step(t, rank):
	    if rank == 2:
	        time.sleep(3600)
	    dist.all_reduce(t)


	dist.init_process_group("gloo")
	rank = dist.get_rank()
	loaded.set()
	print(f"rank {rank} ready", flush=True)
	train_step(torch.ones(4), rank)
	PYEOF
}

# The two PyTorch jobs (each 4 ranks loading torch, then one sleeping while
# the others wait in gloo allreduce) start here, in $TRASH/torch-hang and
# $TRASH/torch-run: they load and wait while the tests before theirs run.
if [ -z "$TORCH_GDB_LACK" ]; then
	for d in torch-hang torch-run; do
		mkdir "$TRASH/$d" && (cd "$TRASH/$d" && write_hang_py)
	done
	bg_start torch-hang timeout 300 dtrun -n 4 --hang-timeout 15 "$PY" hang.py
	bg_start torch-run timeout 300 dtrun -v -n 4 "$PY" hang.py
fi

# slow_stack_job -- a 1-rank spin job whose stack tool works for 22 s
# (slow/eu-stack): kill -QUIT once it spins, TERM once the stacks are out.
# Its 22 s pass in the background, while the tests before its own run.
slow_stack_job() {
	PATH=$PWD/slow:$PATH timeout 200 dtrun -n 1 spin >d.out 2>d.err &
	pid=$!
	trap "kill $pid 2>/dev/null" TERM
	wait_for 60 eval "[ \"\$(grep -c spinning d.out 2>/dev/null)\" = 1 ]" &&
	    kill -QUIT $pid &&
	    wait_for 150 grep -q "^dtrun: full stacks of every rank:" d.err
	kill -TERM $pid
	wait $pid
}
mkdir -p "$TRASH/slow/slow"
# Works for 22 s, then a stack: a little CPU each second says it works (the
# agent kills a tool that used none for 20 s) and leaves the cores to the
# tests that run meanwhile.
cat >"$TRASH/slow/slow/eu-stack" <<-\EOS
	#!/bin/bash
	end=$((SECONDS + 22))
	while [ $SECONDS -lt $end ]; do
		i=0
		while [ $i -lt 20000 ]; do i=$((i + 1)); done
		sleep 1
	done
	printf "PID %s - process\nTID %s:\n#0  0x0000000000401000 slow_frame\n#1  0x0000000000401100 main\n" "$2" "$2"
	EOS
chmod +x "$TRASH/slow/slow/eu-stack"
bg_start slow slow_stack_job

test_expect_success 'a hang: the C rank that sleeps is named first, the spinning ones grouped (--hang-timeout, exit 123)' '
	have_stack_tool || skip_test "neither gdb nor eu-stack is installed" &&
	test_expect_code 123 timeout 120 dtrun -n 4 --hang-timeout 2 --output-dir od spin 2 >out 2>err &&
	grep -q "^dtrun: no rank has written a line for 2 s (--hang-timeout)" err &&
	grep -A1 "^dtrun: stacks of 4 ranks in 2 groups, outliers first:" err >report &&
	grep -q "^dtrun:   rank 2 on localhost, pid [0-9]* (1): .*nap_here <- main" report &&
	grep -q "^dtrun:   ranks 0-1,3 (3): spin_here <- main" err &&
	grep -q "^dtrun: full stacks of every rank: od/stacks/stacks-1.txt\$" err &&
	grep -q "^=== rank 3 on localhost, pid [0-9]*" od/stacks/stacks-1.txt &&
	grep -q "^dtrun: job failed: hung, no rank wrote a line for 2 s (--hang-timeout); 4 ranks were stopped\$" err
'

test_expect_success 'hangTimeout: in engine.yaml does the same' '
	have_stack_tool || skip_test "neither gdb nor eu-stack is installed" &&
	printf "hangTimeout: 1s\n" >engine.yaml &&
	test_expect_code 123 timeout 120 dtrun -f engine.yaml -n 2 spin >out 2>err &&
	grep -q "^dtrun:   ranks 0-1 (2): spin_here <- main" err
'

test_expect_success 'kill -QUIT: the stacks are shown, no rank is left stopped, the job goes on' '
	have_stack_tool || skip_test "neither gdb nor eu-stack is installed" &&
	{ timeout 120 dtrun -n 3 spin >out 2>err & pid=$!; } &&
	test_at_exit "kill $pid 2>/dev/null" &&
	wait_for 60 eval "[ \"\$(grep -c spinning out 2>/dev/null)\" = 3 ] && [ \$(ls pid.* | wc -l) = 3 ]" &&
	kill -QUIT $pid &&
	wait_for 90 grep -q "^dtrun: full stacks of every rank: /.*/dtrun-.*-stacks-1.txt\$" err &&
	grep -q "^dtrun:   ranks 0-2 (3): spin_here <- main" err &&
	proc_alive $pid &&
	no_rank_stopped &&
	kill -TERM $pid &&
	test_expect_code 143 wait $pid
'

test_expect_success '--on-hang report: the stacks are shown and the job keeps running' '
	have_stack_tool || skip_test "neither gdb nor eu-stack is installed" &&
	{ timeout 120 dtrun -n 2 --hang-timeout 1 --on-hang report spin >out 2>err & pid=$!; } &&
	test_at_exit "kill $pid 2>/dev/null" &&
	wait_for 90 grep -q "^dtrun: full stacks of every rank:" err &&
	grep -q "^dtrun:   ranks 0-1 (2): spin_here <- main" err &&
	proc_alive $pid &&
	# The ranks stay quiet: it asks again each second, and a rank may be
	# traced by the next ask at any moment; none is left stopped.
	wait_for 10 no_rank_stopped &&
	kill -TERM $pid &&
	test_expect_code 143 wait $pid
'

# The clock runs from the ranks' start: the others get 5 s to start and
# join on a loaded machine.
test_expect_success 'a rank that never joins: --start-timeout shows its stack, then 125' '
	have_stack_tool || skip_test "neither gdb nor eu-stack is installed" &&
	test_expect_code 125 timeout 120 dtrun -n 4 --start-timeout 5 sh -c "[ \$RANK = 2 ] && exec spin 2; exec rdzv-probe -j -b" >out 2>err &&
	grep -q "1 of 4 ranks never joined: rank 2 on localhost (local rank 2) (--start-timeout 5)" err &&
	grep -A1 "^dtrun: stacks of 1 rank in 1 group, outliers first:" err >report &&
	grep -q "^dtrun:   rank 2 on localhost, pid [0-9]* (1): .*nap_here <- main" report &&
	grep -q "^=== rank 2 on localhost, pid [0-9]*" "$(sed -n "s/^dtrun: full stacks of every rank: //p" err)" &&
	grep -q "^dtrun: job failed: 1 rank never joined the rendezvous within 5 s (--start-timeout); " err &&
	wait_gone 10 pid.2
'

test_expect_success 'dtcomm_heartbeat() keeps a quiet rank alive for --hang-timeout' '
	timeout 120 dtrun -n 2 --hang-timeout 1 rdzv-probe -j -h 4 >out 2>err &&
	test "$(grep -c "^\[[01]\] rank [01] size 2" out)" = 2 &&
	! grep -q "hang-timeout" err
'

test_expect_success 'a stack tool that works slowly (busy host) is not cut off at 20 s' '
	bg_end slow 143 &&
	cd "$TRASH/slow" &&
	grep -q "^dtrun: full stacks of every rank:" d.err &&
	grep -q "^dtrun:   rank 0 on localhost, pid [0-9]* (1): slow_frame <- main\$" d.err
'

# job_id -- the job id dtrun -v said it started (in err).
job_id() {
	sed -n 's/^dtrun: started .* (job \([^;)]*\).*/\1/p' err
}

# stacks_until N PATTERN -- asks for stacks (dtrun-kill --stacks) until
# report number N or a later one has a line matching PATTERN: a rank can be
# caught on its way into the call the pattern names. 0, or 1 after 5 asks.
stacks_until() {
	for k in 1 2 3 4 5; do
		dtrun-kill --stacks "$(job_id)" >kill.out || return 1
		grep -q "^localhost: job $(job_id): asked agent [0-9]* for its ranks. stacks" kill.out || return 1
		wait_for 120 grep -q "^dtrun: full stacks of every rank: .*-stacks-$1.txt\$" err || return 1
		if [ "$1" = 1 ]; then cat err; else sed -n "/-stacks-$(($1 - 1)).txt\$/,\$p" err; fi |
		    grep -q "$2" && return 0
		set -- $(($1 + 1)) "$2"
	done
	return 1
}

test_expect_success 'dtrun-kill --stacks: the running job prints its stacks and goes on' '
	have_stack_tool || skip_test "neither gdb nor eu-stack is installed" &&
	{ timeout 120 dtrun -v -n 3 spin 1 >out 2>err & pid=$!; } &&
	test_at_exit "kill $pid 2>/dev/null" &&
	wait_for 60 eval "[ \"\$(grep -c spinning out 2>/dev/null)\" = 3 ] && [ -n \"\$(job_id)\" ]" &&
	stacks_until 1 "^dtrun:   ranks 0,2 (2): spin_here <- main" &&
	grep -q "^dtrun:   rank 1 on localhost, pid [0-9]* (1): .*nap_here <- main" err &&
	proc_alive $pid &&
	no_rank_stopped &&
	test_expect_code 1 dtrun-kill --stacks no-such-job >kill.out &&
	grep -q "^localhost: job no-such-job: not running here\$" kill.out &&
	kill -TERM $pid &&
	test_expect_code 143 wait $pid
'

test_expect_success 'PyTorch (gloo): dtrun-kill --stacks while it runs shows rank 2 apart, the others said to wait in gloo allreduce' '
	need_torch_gdb &&
	cd "$TRASH/torch-run" &&
	pid=$(cat pid) &&
	wait_for 240 eval "[ \"\$(grep -c ready out 2>/dev/null)\" = 4 ]" &&
	stacks_until 1 "^dtrun:   ranks 0-1,3 (3): waiting in a collective (gloo allreduce) <- train_step (hang.py:21) <- <module> (hang.py:28)\$" &&
	grep -q "^dtrun:   rank 2 on localhost, pid [0-9]* (1): train_step (hang.py:20) <- <module> (hang.py:28)\$" err &&
	proc_alive $pid &&
	kill -TERM $pid &&
	bg_end torch-run 143
'

test_expect_success 'PyTorch (gloo): --hang-timeout names rank 2 and its Python line, the others said to wait in gloo allreduce' '
	need_torch_gdb &&
	bg_end torch-hang 123 300 &&
	cd "$TRASH/torch-hang" &&
	grep -A1 "^dtrun: stacks of 4 ranks in 2 groups, outliers first:" err >report &&
	grep -q "^dtrun:   rank 2 on localhost, pid [0-9]* (1): train_step (hang.py:20) <- <module> (hang.py:28)\$" report &&
	grep -q "^dtrun:   ranks 0-1,3 (3): waiting in a collective (gloo allreduce) <- train_step (hang.py:21) <- <module> (hang.py:28)\$" err
'

test_done
