#!/bin/bash
# t4064-straggler-ddp.sh -- the lock-step straggler watch on real gloo DDP
# jobs (tests/sh/ddp-straggle.py, Debian's python3-torch): the agent samples
# where each rank's main thread waits, and dtrun names the rank the others
# wait for, with why (its compute, its own input, its CPU), once. Each job
# stops on the verdict (--on-straggler stop, exit 122), so a job lasts as
# long as the watch needs; --steps bounds it (2-4 times what the watch
# needs here) where nobody is named. doc/peerwait-samples.md has what each mode
# looks like in /proc on this kind of machine.
. "$(dirname "$0")/lib.sh"

PY=/usr/bin/python3
DDP=$SRC/tests/sh/ddp-straggle.py

if ! "$PY" -c 'import torch.distributed' 2>/dev/null; then
	test_skip 'balanced, then all slow, then rank 5 computes twice as long: named in the last phase alone' 'no python3-torch'
	test_skip 'a rank whose DataLoader is slow: named, waiting on its own input' 'no python3-torch'
	test_skip 'a rank that shares its core with busy hogs: named, short of CPU; no hog left' 'no python3-torch'
	test_skip 'report mode: the straggler and a rank that waits for it show their stacks' 'no python3-torch'
else

# The straggler lines of file $1.
named() {
	grep "^dtrun: straggler: " "$1" || true
}
# named_alone N RANK WHY -- err names RANK once, and nobody else, as the
# rank the other N-1 wait for, for the reason WHY (an ERE).
named_alone() {
	named err >said &&
	test $(wc -l <said) -eq 1 &&
	grep -Eq "^dtrun: straggler: rank $2 on localhost: the other $(($1 - 1)) ranks wait for it [0-9]+% of each step \(it waits [0-9]+%\); $3" said
}
# What dtrun said in file $1 (for a failing test's log).
said() {
	grep -v "^\[" "$1" | tail -n 12 >&2 || :
}
# The ranks whose stacks the first report of file $1 shows, one a line
# ("dtrun:   ranks 4-5 (2): ..." or "dtrun:   rank 2 (1): ...").
stack_ranks() {
	sed -n "/^dtrun: stacks of /,/^dtrun: full stacks /p" "$1" | awk '
	$2 ~ /^ranks?$/ {
		n = split($3, p, ",")
		for (i = 1; i <= n; i++) {
			if (split(p[i], q, "-") == 1)
				q[2] = q[1]
			for (r = q[1] + 0; r <= q[2] + 0; r++)
				print r
		}
	}'
}

# One job, three phases by step count, each about 20 s of steps here (8
# ranks on 2 cores: ~0.47 s a step balanced, ~0.85 s all slow): nobody is
# named while the ranks are even, balanced or all slow (a stop then would
# end the job before rank 0 says "phase compute"); then rank 5 is.
# Its reason here is "computing" or "short of CPU": with 8 ranks on 2
# cores every rank gets ~a quarter of a core while runnable, and the rule
# (runnable-not-running time over wall time, against the others' median)
# counts the slow rank's longer runnable time as CPU shortage (measured:
# rank 5 delay 0.57 of wall, others 0.47-0.54; yet running 32% of its
# runnable time, the others 21%).
test_expect_success 'balanced, then all slow, then rank 5 computes twice as long: named in the last phase alone' '
	test_expect_code 122 dtrun -n 8 --on-straggler stop "$PY" "$DDP" \
	    --phases balanced:45,allslow:25,compute --steps 200 --factor 2 --slow-rank 5 >out 2>err &&
	said err &&
	grep -qx "\[0\] phase allslow" out &&
	grep -qx "\[0\] phase compute" out &&
	named_alone 8 5 "it is (computing \(CPU|short of CPU \(runnable but not running) [0-9]+%"
'

# The slow rank's DataLoader worker sleeps 1.5 steps a batch from step 40:
# its main thread polls the pipe the worker answers through.
test_expect_success 'a rank whose DataLoader is slow: named, waiting on its own input' '
	test_expect_code 122 dtrun -n 4 --on-straggler stop "$PY" "$DDP" \
	    --mode input --steps 150 --factor 1.5 --slow-rank 1 >out 2>err &&
	said err &&
	named_alone 4 1 "it waits on its own input \(poll on a pipe\)\$"
'

# Rank 3 and 4 busy children pinned to one core, the other ranks on the
# other: rank 3 is runnable but waits for its core. Its hogs die with it.
test_expect_success 'a rank that shares its core with busy hogs: named, short of CPU; no hog left' '
	test_expect_code 122 dtrun -n 4 --on-straggler stop "$PY" "$DDP" \
	    --mode cpu --steps 150 --hogs 4 --slow-rank 3 >out 2>err &&
	said err &&
	named_alone 4 3 "it is short of CPU \(runnable but not running [0-9]+% of the time\)\$" &&
	ps -eo pid=,args= | awk -v d="$DDP" "index(\$0, d) && /--mode cpu/ { print \$1 }" >left &&
	! any_alive left
'

# Report mode: the verdict asks for the stacks of the straggler and of the
# rank that waits for it most; the job goes on until SIGTERM. The reason
# is not checked: here it reads "computing" or "short of CPU" from run to
# run (see the first test).
test_expect_success 'report mode: the straggler and a rank that waits for it show their stacks' '
	dtrun -n 4 "$PY" "$DDP" --mode compute --factor 2.5 --slow-rank 2 >out 2>err & d=$! &&
	test_at_exit "kill $d; wait $d" &&
	wait_for 150 grep -q "^dtrun: stacks of 2 ranks" err &&
	kill -TERM $d &&
	test_expect_code 143 wait $d &&
	said err &&
	named_alone 4 2 "it is " &&
	grep -q "^dtrun: straggler rank 2 on localhost, and a rank that waits for it: asking every agent for its ranks'"'"' stacks (the job goes on)\$" err &&
	stack_ranks err >shown &&
	grep -qx 2 shown &&
	grep -qx "[013]" shown
'
fi

# Ranks the agent cannot look at: dtrun runs as nobody, and each rank makes
# itself non-dumpable, so its /proc/PID/syscall is root's. The watch says
# so once for each, leaves them out, and the job is not hurt. Rank 1 hides
# 2 s after rank 0, so their first frames differ: two ranks that an agent
# reports unreadable in one frame are said for the first alone (known bug:
# peerwait_take returns one index a call, and the agent says it once).
test_expect_success 'a rank the agent cannot read: said once, left out, the job exits 0' '
	D=$(mktemp -d /tmp/dtrun-XXXX) &&
	test_at_exit "rm -rf $D" &&
	cp "$B/dtrun" "$B/dtrun-agent" "$D/" &&
	cat >"$D/hidden.py" <<-\EOF &&
	import ctypes, os, time
	time.sleep(2 * int(os.environ["RANK"]))
	ctypes.CDLL(None).prctl(4, 0)  # PR_SET_DUMPABLE: /proc/PID/* is root'"'"'s
	time.sleep(3)
	EOF
	mkdir -m 700 "$D/run" && chown 65534:65534 "$D/run" &&
	chmod -R a+rX "$D" && chmod 755 "$D" &&
	setpriv --reuid=65534 --regid=65534 --clear-groups env XDG_RUNTIME_DIR="$D/run" \
	    sh -c "cd $D && ./dtrun -n 2 $PY hidden.py" >out 2>err &&
	said err &&
	for r in 0 1; do
		test $(grep -c "^dtrun: warning: straggler watch: rank $r on localhost: where it waits is unknown (cannot read /proc/[0-9]*/syscall: .*): the lock-step watch leaves it out\$" err) -eq 1 || return 1
	done
'

test_done
