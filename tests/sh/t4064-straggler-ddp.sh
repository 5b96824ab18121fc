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
	test_skip 'a rank whose DataLoader is slow: named, waiting on its own input; its stack and a waiting rank'"'"'s shown' 'no python3-torch'
	test_skip 'a rank that shares its core with busy hogs: named, short of CPU; no hog left' 'no python3-torch'
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

# One job, three phases by step count, some 15 s of steps each here (8
# ranks on 2 cores: ~0.47 s a step balanced, ~0.85 s all slow): nobody is
# named while the ranks are even, balanced or all slow (a stop then would
# end the job before rank 0 says "phase compute"); then rank 5 is, as
# computing: with 8 ranks on 2 cores it queues for a CPU longer than the
# others (it is runnable longer), yet a smaller share of its runnable time
# than theirs (measured: 68% against 79%), so it is not short of CPU.
# The threshold is 15%, not the default 10%: 8 ranks on 2 cores are
# noisy, and one CI run saw rank 5 waited for 11% of each step in the
# all-slow phase (named there, the job stopped before "phase compute");
# in the compute phase the others wait for it 19-21%.
test_expect_success 'balanced, then all slow, then rank 5 computes twice as long: named in the last phase alone' '
	test_expect_code 122 dtrun -n 8 --straggler-threshold 0.15 --on-straggler stop "$PY" "$DDP" \
	    --phases balanced:35,allslow:18,compute --steps 200 --factor 2 --slow-rank 5 >out 2>err &&
	said err &&
	grep -qx "\[0\] phase allslow" out &&
	grep -qx "\[0\] phase compute" out &&
	named_alone 8 5 "it is computing \(CPU [0-9]+%\)\$"
'

# The slow rank's DataLoader worker sleeps 1.5 steps a batch from step 40:
# its main thread polls the pipe the worker answers through. Report mode:
# the verdict asks for the stacks of the straggler and of the rank that
# waits for it most, and the job goes on until SIGTERM.
test_expect_success 'a rank whose DataLoader is slow: named, waiting on its own input; its stack and a waiting rank'"'"'s shown' '
	dtrun -n 4 "$PY" "$DDP" --mode input --steps 300 --factor 1.5 --slow-rank 1 >out 2>err & d=$! &&
	test_at_exit "kill $d; wait $d" &&
	wait_for 150 grep -q "^dtrun: stacks of 2 ranks" err &&
	kill -TERM $d &&
	test_expect_code 143 wait $d &&
	said err &&
	named_alone 4 1 "it waits on its own input \(poll on a pipe\)\$" &&
	grep -q "^dtrun: straggler rank 1 on localhost, and a rank that waits for it: asking every agent for its ranks'"'"' stacks (the job goes on)\$" err &&
	stack_ranks err >shown &&
	grep -qx 1 shown &&
	grep -qx "[023]" shown
'

# Rank 2 and 4 busy children pinned to one core, ranks 0 and 1 on the
# other: rank 2 is runnable but waits for its core (served some 26% of its
# runnable time against their 53%; the others wait for it half of each
# step). Two ranks, not three, on the other core: three there queue for it
# too (38%), and a busy host shrinks that margin further. Its hogs die
# with it. -v: the per-rank shares, for a failing run's log.
test_expect_success 'a rank that shares its core with busy hogs: named, short of CPU; no hog left' '
	test_expect_code 122 dtrun -v -n 3 --on-straggler stop "$PY" "$DDP" \
	    --mode cpu --steps 150 --hogs 4 --slow-rank 2 >out 2>err &&
	said err &&
	named_alone 3 2 "it is short of CPU \(runnable but not running [0-9]+% of the time\)\$" &&
	ps -eo pid=,args= | awk -v d="$DDP" "index(\$0, d) && /--mode cpu/ { print \$1 }" >left &&
	! any_alive left
'

fi

# Ranks the agent cannot look at: dtrun runs as nobody, and each rank makes
# itself non-dumpable, so its /proc/PID/syscall is root's. The watch says
# so once a job (not once a rank: a thousand would say the same), leaves
# them out, and the job is not hurt.
test_expect_success 'ranks the agent cannot read: said once, left out, the job exits 0' '
	D=$(mktemp -d /tmp/dtrun-XXXX) &&
	test_at_exit "rm -rf $D" &&
	cp "$B/dtrun" "$B/dtrun-agent" "$D/" &&
	cat >"$D/hidden.py" <<-\EOF &&
	import ctypes, time
	ctypes.CDLL(None).prctl(4, 0)  # PR_SET_DUMPABLE: /proc/PID/* is root'"'"'s
	time.sleep(3)
	EOF
	mkdir -m 700 "$D/run" && chown 65534:65534 "$D/run" &&
	chmod -R a+rX "$D" && chmod 755 "$D" &&
	setpriv --reuid=65534 --regid=65534 --clear-groups env XDG_RUNTIME_DIR="$D/run" \
	    sh -c "cd $D && ./dtrun -n 2 $PY hidden.py" >out 2>err &&
	said err &&
	test $(grep -c "^dtrun: warning: straggler watch: " err) -eq 1 &&
	grep -q "^dtrun: warning: straggler watch: where rank [01] on localhost waits is unknown (cannot read /proc/[0-9]*/syscall: .*): the lock-step watch leaves out it and any rank like it\$" err
'

test_done
