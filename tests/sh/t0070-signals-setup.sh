#!/bin/bash
# t0070-signals-setup.sh -- --forward-signals (the job goes on), --setup (a
# command per host whose NAME=VALUE lines reach the ranks; its failure
# starts nothing), --env-file and -x patterns. The ssh cases are in t3000.
. "$(dirname "$0")/lib.sh"

# A rank that writes its pid, records each USR1, USR2 and WINCH it gets in
# got.RANK, and ends once the file "stop" exists.
cat >"$TRASH/sigrank" <<'EOF'
#!/bin/sh
r=$DTRUN_RANK
trap 'echo usr1 >>got.$r' USR1
trap 'echo usr2 >>got.$r' USR2
trap 'echo winch >>got.$r' WINCH
echo $PPID >ppid.$r
echo $$ >pid.$r
while [ ! -e stop ]; do sleep 0.05; done
echo "rank $r done"
EOF
chmod +x "$TRASH/sigrank"
HOST=$(hostname)
cat >"$TRASH/sig.yaml" <<EOF
forwardSignals: [USR2, WINCH]
command: $TRASH/sigrank
EOF

test_expect_success 'USR1 reaches every rank, the job goes on and exits 0' '
	dtrun -n 3 --forward-signals USR1 "$TRASH/sigrank" >out 2>err & d=$! &&
	wait_for 10 eval "[ -s pid.0 ] && [ -s pid.1 ] && [ -s pid.2 ]" &&
	kill -USR1 $d &&
	wait_for 10 eval "[ -s got.0 ] && [ -s got.1 ] && [ -s got.2 ]" &&
	proc_alive $d &&
	touch stop &&
	wait $d &&
	for r in 0 1 2; do
		test "$(cat got.$r)" = usr1 || return 1
	done &&
	test $(grep -c "rank . done" out) -eq 3 &&
	grep -q "got SIGUSR1: passing it to 3 ranks" err
'

test_expect_success 'by default USR1 and USR2 are passed on; -v says which' '
	dtrun -v -n 2 "$TRASH/sigrank" >out 2>err & d=$! &&
	wait_for 10 eval "[ -s pid.0 ] && [ -s pid.1 ]" &&
	kill -USR2 $d &&
	wait_for 10 eval "[ -s got.0 ] && [ -s got.1 ]" &&
	kill -USR1 $d &&
	wait_for 10 eval "[ \$(cat got.0 got.1 | wc -l) -eq 4 ]" &&
	touch stop &&
	wait $d &&
	test "$(cat got.0)" = "$(printf "usr2\nusr1")" &&
	grep -q "signals passed to the ranks (--forward-signals): USR1,USR2" err
'

test_expect_success 'a signal left out of --forward-signals is ignored, said once' '
	dtrun -n 2 --forward-signals WINCH "$TRASH/sigrank" >out 2>err & d=$! &&
	wait_for 10 eval "[ -s pid.0 ] && [ -s pid.1 ]" &&
	kill -USR1 $d &&
	wait_for 10 grep -q "got SIGUSR1: not in --forward-signals, ignored" err &&
	kill -WINCH $d &&
	wait_for 10 eval "[ -s got.0 ] && [ -s got.1 ]" &&
	touch stop &&
	wait $d &&
	test "$(cat got.0 got.1)" = "$(printf "winch\nwinch")"
'

test_expect_success 'forwardSignals: in engine.yaml, the command line wins' '
	dtrun -v -n 1 -f "$TRASH/sig.yaml" >out 2>err & d=$! &&
	wait_for 10 test -s pid.0 &&
	kill -WINCH $d &&
	wait_for 10 test -s got.0 &&
	touch stop &&
	wait $d &&
	grep -q "(--forward-signals): USR2,WINCH" err &&
	dtrun -v -n 1 -f "$TRASH/sig.yaml" --forward-signals none sh -c true 2>err2 &&
	grep -q "(--forward-signals): none" err2 &&
	cat >bad.yaml <<-EOF &&
	forwardSignals: [USR1, TERM]
	command: true
	EOF
	test_expect_code 2 dtrun -f bad.yaml 2>err3 &&
	grep -q "bad.yaml:1:.*forwardSignals TERM: it stops the job" err3
'

# Locally dtrun keeps its agent (no keeper process between them); the
# keeper of other hosts gets the same: t3000-ssh.sh.
test_expect_success 'an agent that gets USR1 itself (sbatch --signal without B:) lives on' '
	dtrun -n 1 "$TRASH/sigrank" >out 2>err & d=$! &&
	wait_for 10 test -s pid.0 &&
	agent=$(cat ppid.0) &&
	test "$(sed "s/.*) . \([0-9]*\) .*/\1/" /proc/$agent/stat)" = $d &&
	kill -USR1 $agent &&
	kill -USR2 $agent &&
	touch stop &&
	wait $d &&
	! test -e got.0
'

test_expect_success 'INT, TERM, HUP cannot be forwarded; unknown names are refused' '
	test_expect_code 2 dtrun --forward-signals USR1,TERM true 2>err &&
	grep -q "TERM: it stops the job" err &&
	test_expect_code 2 dtrun --forward-signals KILL true 2>err &&
	grep -q "cannot pass it on" err &&
	test_expect_code 2 dtrun --forward-signals USR9 true 2>err &&
	grep -q "\"USR9\": not a signal name" err
'

test_expect_success '--setup: its NAME=VALUE lines reach every rank, other lines are shown' '
	dtrun -n 2 --prefix "" --setup "echo SETUP_VAR=from-setup; echo activating; echo careful >&2; echo TWO=\\\"a b\\\"" \
	    sh -c "echo \$DTRUN_RANK \$SETUP_VAR \$TWO" >out 2>err &&
	sort out >got &&
	printf "0 from-setup \"a b\"\n1 from-setup \"a b\"\n" >want &&
	diff want got &&
	grep -q "$HOST: setup: activating" err &&
	grep -q "$HOST: setup: careful" err &&
	! grep -q "SETUP_VAR" err
'

test_expect_success '--setup runs once a host, in the job directory, seeing its DTRUN_* variables' '
	mkdir sub &&
	(cd sub && dtrun -n 3 --prefix "" --setup "echo x >>../setup-runs; echo SEEN=\$DTRUN_NODE_RANK:\$DTRUN_WORLD_SIZE:\$(pwd)" \
	    sh -c "echo \$SEEN") >out &&
	test $(wc -l <setup-runs) -eq 1 &&
	test "$(sort -u out)" = "0:3:$PWD/sub"
'

test_expect_success 'dtrun variables and -x win over what a setup prints' '
	dtrun -n 1 --prefix "" -x MINE=cli --setup "echo MINE=setup; echo DTRUN_RANK=99; echo PATH=/setup/bin:\$PATH" \
	    sh -c "echo \$MINE \$DTRUN_RANK; echo \$PATH" >out &&
	test "$(sed -n 1p out)" = "cli 0" &&
	sed -n 2p out | grep -q "^/setup/bin:"
'

test_expect_success 'setup: in engine.yaml' '
	cat >engine.yaml <<-EOF &&
	setup: echo FROM_YAML=yes
	command: echo \$FROM_YAML
	EOF
	dtrun -f engine.yaml --prefix "" >out &&
	test "$(cat out)" = yes
'

test_expect_success 'a failing setup names the host, shows its stderr, exits 2, starts nothing, leaves nothing' '
	test_expect_code 2 dtrun -n 2 --setup "sleep 300 & echo \$! >bg.pid; echo \$\$ >sh.pid; echo first >&2; echo no module named venv >&2; exit 3" \
	    sh -c "touch started.\$DTRUN_RANK" >out 2>err &&
	grep -q "^dtrun: $HOST: --setup exited with 3, so no rank was started on any host; its stderr ends:" err &&
	grep -q "^dtrun: $HOST: setup: first" err &&
	grep -q "^dtrun: $HOST: setup: no module named venv" err &&
	! ls started.* 2>/dev/null &&
	test -s bg.pid &&
	wait_gone 10 bg.pid sh.pid
'

# Each stderr line comes back under the host's name: 1,500 short ones
# were once an ERROR over the protocol's limit, and the agent was cut off.
test_expect_success 'a failing setup with many short stderr lines: its last lines, exit 2' '
	test_expect_code 2 dtrun --setup "i=0; while [ \$i -lt 1500 ]; do echo x\$i >&2; i=\$((i + 1)); done; exit 3" true 2>err &&
	grep -q "^dtrun: $HOST: --setup exited with 3, so no rank was started on any host; its stderr ends:" err &&
	grep -qx "dtrun: $HOST: setup: x1499" err &&
	! grep -q "protocol error\|bad ERROR" err
'

test_expect_success 'a setup killed by a signal, or printing over 1 MiB, fails the same way' '
	test_expect_code 2 dtrun --setup "kill -9 \$\$" true 2>err &&
	grep -q "$HOST: --setup was killed by signal 9" err &&
	test_expect_code 2 dtrun --setup "yes A=1" true 2>err &&
	grep -q "$HOST: --setup wrote over 1 MiB on stdout" err
'

test_expect_success '--timeout during a setup kills it' '
	test_expect_code 124 dtrun --timeout 1 --setup "echo \$\$ >s.pid; exec sleep 300" true 2>err &&
	test -s s.pid &&
	wait_gone 10 s.pid
'

test_expect_success 'SIGINT during a setup kills it and what it started' '
	dtrun --setup "echo \$\$ >t.pid; sleep 300 & echo \$! >t2.pid; wait" true 2>err2 & d=$! &&
	wait_for 10 eval "[ -s t.pid ] && [ -s t2.pid ]" &&
	kill -INT $d &&
	test_expect_code 130 wait $d &&
	wait_gone 10 t.pid t2.pid
'

test_expect_success '--env-file: NAME=VALUE lines, comments and blanks skipped, values literal' '
	printf "# NCCL for this cluster\nNCCL_DEBUG=INFO\n\n  # indented\nQUOTED=\"a b\"\r\nEMPTY=\nEQ=a=b\n" >.deepspeed_env &&
	printf "NCCL_DEBUG=WARN\n" >later.env &&
	dtrun -n 1 --prefix "" --env-file .deepspeed_env sh -c "echo \$NCCL_DEBUG \$QUOTED [\$EMPTY] \$EQ" >out &&
	test "$(cat out)" = "INFO \"a b\" [] a=b" &&
	dtrun -n 1 --prefix "" --env-file .deepspeed_env --env-file later.env -x EQ=x sh -c "echo \$NCCL_DEBUG \$EQ" >out &&
	test "$(cat out)" = "WARN x"
'

test_expect_success '--env-file errors name file:line and the fix' '
	printf "A=1\nexport B=2\n" >bad.env &&
	test_expect_code 2 dtrun --env-file bad.env true 2>err &&
	grep -q "^dtrun: bad.env:2: \"export B=2\": drop \"export \"" err &&
	printf "A=1\n\nNCCL DEBUG=INFO\n" >bad2.env &&
	test_expect_code 2 dtrun --env-file bad2.env true 2>err &&
	grep -q "^dtrun: bad2.env:3: \"NCCL DEBUG\": not a variable name" err &&
	printf "just words\n" >bad3.env &&
	test_expect_code 2 dtrun --env-file bad3.env true 2>err &&
	grep -q "^dtrun: bad3.env:1: \"just words\": not NAME=VALUE" err &&
	test_expect_code 2 dtrun --env-file missing.env true 2>err &&
	grep -q "^dtrun: missing.env: No such file or directory" err
'

# Locally the ranks inherit dtrun's environment anyway: what -x adds shows
# where a variable is set otherwise too (engine.yaml here; remote hosts in t3000).
test_expect_success '-x PATTERN exports every matching variable of dtrun'"'"'s environment' '
	cat >env.yaml <<-EOF &&
	environment:
	  T70_NCCL_A: yaml
	  T70_NCCL_B: yaml
	  T70_OTHER: yaml
	command: env
	EOF
	T70_NCCL_A=1 T70_NCCL_B="two words" T70_OTHER=no \
	    dtrun -n 1 --prefix "" -f env.yaml -x "T70_NCCL_*" | grep ^T70_ | sort >out &&
	printf "T70_NCCL_A=1\nT70_NCCL_B=two words\nT70_OTHER=yaml\n" >want &&
	diff want out &&
	dtrun -n 1 -x "T70_NOTHING_*" true &&
	test_expect_code 2 dtrun -x "T70 *" true 2>err &&
	grep -q "not a variable name or a pattern" err
'

test_done
