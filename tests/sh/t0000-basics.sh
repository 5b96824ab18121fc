#!/bin/bash
# t0000-basics.sh -- the local launcher: environment, prefixes, exit codes, bad input.
. "$(dirname "$0")/lib.sh"

test_expect_success 'four ranks get their own environment' '
	dtrun -n 4 --prefix "" sh -c "echo \$RANK \$WORLD_SIZE \$LOCAL_RANK \$LOCAL_WORLD_SIZE \$NODE_RANK \$NNODES \$MASTER_ADDR \$DTRUN_JOB_ID" >out &&
	sort out >sorted &&
	test $(wc -l <sorted) -eq 4 &&
	for r in 0 1 2 3; do grep -q "^$r 4 $r 4 0 1 127.0.0.1 [0-9a-f-]*\$" sorted || return 1; done &&
	test $(cut -d" " -f8 sorted | sort -u | wc -l) -eq 1
'

test_expect_success 'MASTER_PORT is a number and the same for every rank' '
	dtrun -n 3 --prefix "" sh -c "echo \$MASTER_PORT" >out &&
	test $(sort -u out | wc -l) -eq 1 &&
	grep -qE "^[0-9]+\$" out
'

test_expect_success 'CUDA_VISIBLE_DEVICES is left alone' '
	env -u CUDA_VISIBLE_DEVICES dtrun -n 2 --prefix "" sh -c "echo x\${CUDA_VISIBLE_DEVICES-unset}" >out &&
	test "$(sort -u out)" = xunset
'

test_expect_success 'each job gets a different DTRUN_JOB_ID' '
	dtrun --prefix "" sh -c "echo \$DTRUN_JOB_ID" >a &&
	dtrun --prefix "" sh -c "echo \$DTRUN_JOB_ID" >b &&
	! cmp -s a b
'

test_expect_success '-x passes variables, by value and from the environment' '
	FOO=bar dtrun -n 2 -x FOO -x BAZ=qu=ux --prefix "" sh -c "echo \$FOO \$BAZ" >out &&
	test "$(sort -u out)" = "bar qu=ux"
'

test_expect_success '-x of an unset variable warns and runs (as mpirun; t4022)' '
	env -u NOPE_NOT_SET dtrun -x NOPE_NOT_SET true 2>err &&
	grep -q "NOPE_NOT_SET: not set here" err
'

test_expect_success 'the default prefix is the rank' '
	dtrun -n 2 sh -c "echo hi" >out &&
	grep -qx "\[0\] hi" out && grep -qx "\[1\] hi" out
'

test_expect_success '--prefix placeholders' '
	dtrun -n 2 --prefix "%r/%l@%h:%s%% " sh -c "echo o; echo e >&2" >out 2>err &&
	grep -qx "0/0@localhost:out% o" out &&
	grep -qx "1/1@localhost:err% e" err
'

test_expect_success 'stdout stays stdout and stderr stays stderr' '
	dtrun -n 3 sh -c "echo to-out; echo to-err >&2" >out 2>err &&
	test $(grep -c to-out out) -eq 3 && ! grep -q to-err out &&
	test $(grep -c to-err err) -eq 3 && ! grep -q to-out err
'

test_expect_success 'a last line without newline is delivered' '
	dtrun -n 2 printf "no newline" >out &&
	grep -qx "\[0\] no newline" out && grep -qx "\[1\] no newline" out
'

test_expect_success '--timestamp puts a time first' '
	dtrun --timestamp sh -c "echo hi" >out &&
	grep -qE "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}\.[0-9]{3} \[0\] hi\$" out
'

test_expect_success '--output-dir keeps every rank byte for byte' '
	dtrun -n 2 --output-dir logs sh -c "printf \"a\\nb\"; echo e >&2" >/dev/null 2>&1 &&
	printf "a\nb" >want &&
	cmp logs/rank.0/stdout want && cmp logs/rank.1/stdout want &&
	echo e >want.err && cmp logs/rank.1/stderr want.err
'

test_expect_success 'exit status is 0 when every rank succeeds' '
	dtrun -n 4 true
'

test_expect_success 'exit status is the failing rank'"'"'s code' '
	test_expect_code 3 dtrun -n 4 sh -c "[ \$RANK = 2 ] && exit 3; sleep 30" 2>err &&
	grep -q "rank 2 on localhost (pid [0-9]*) exited with code 3; stopping 3 other ranks" err
'

test_expect_success 'a rank killed by a signal gives 128+N' '
	test_expect_code 137 dtrun -n 2 sh -c "[ \$RANK = 1 ] && kill -9 \$\$; sleep 30" 2>err &&
	grep -q "rank 1 on localhost (pid [0-9]*) was killed by signal 9" err
'

test_expect_success '--dry-run prints the plan and starts nothing' '
	dtrun --dry-run -n 3 sh -c "touch ran" >out &&
	! test -e ran &&
	grep -q "^# RANK HOST LOCAL_RANK COMMAND" out &&
	grep -qx "2 localhost 2 sh -c '"'"'touch ran'"'"'" out &&
	test $(grep -vc "^#" out) -eq 3
'

test_expect_success '--nproc-per-node sets the local rank count' '
	dtrun --nproc-per-node 3 --prefix "" sh -c "echo \$RANK" >out &&
	test $(wc -l <out) -eq 3
'

test_expect_success '--version and --help' '
	dtrun --version | grep -q "^dtrun [0-9]" &&
	dtrun --help | grep -q "^usage: dtrun"
'

# Bad input: one line naming the problem and the fix, exit 2, nothing started.
bad() {
	test_expect_code 2 dtrun "$@" 2>err &&
	test $(wc -l <err) -eq 1 &&
	grep -q "^dtrun: " err
}

test_expect_success '-n 0 is refused' '
	bad -n 0 true && grep -q "need at least 1" err
'
test_expect_success '-n with a non-number is refused' '
	bad -n four true && grep -q "not a number" err
'
test_expect_success 'no command is refused' '
	bad -n 2 && grep -q "no command given" err
'
test_expect_success 'an unknown option is refused' '
	bad --frobnicate true && grep -q "unknown option --frobnicate" err
'
test_expect_success 'an unknown short option is refused' '
	bad -Z true && grep -q "unknown option -Z" err
'
test_expect_success 'a bad --prefix is refused' '
	bad --prefix "%q" true && grep -q "unknown placeholder %q" err &&
	bad --prefix "50%" true && grep -q "lone %" err
'
test_expect_success 'a bad --timeout is refused' '
	bad --timeout soon true && grep -q "want seconds" err
'
test_expect_success 'a missing command is refused before anything starts' '
	bad -n 2 no-such-command-xyz && grep -q "no-such-command-xyz: command not found in PATH" err
'
test_expect_success 'a non-executable command is refused' '
	echo "touch ran" >script.sh &&
	bad -n 2 ./script.sh && grep -q "not executable (chmod +x it)" err &&
	! test -e ran
'
test_expect_success 'a script without #! cannot start: exit 126, said once' '
	printf "echo hi\n" >nohashbang.sh && chmod +x nohashbang.sh &&
	test_expect_code 126 dtrun -n 2 ./nohashbang.sh 2>err &&
	grep -q "^dtrun: rank [01] on localhost could not start: Exec format error; stopping" err &&
	test $(grep -c "could not start: Exec format error;" err) -eq 1
'

test_expect_success 'a directory as command is refused' '
	mkdir d && bad ./d && grep -q "is a directory" err
'
test_expect_success 'an option missing its value is refused' '
	test_expect_code 2 dtrun --timeout 2>err && grep -q "needs a value" err
'

test_done
