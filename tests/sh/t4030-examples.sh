#!/bin/bash
# t4030-examples.sh -- the examples/ that need no GPU run as documented.
. "$(dirname "$0")/lib.sh"

test_expect_success 'ci-smoke.sh passes a good job and keeps its logs' '
	"$SRC/examples/ci-smoke.sh" -n 3 -o logs -- sh -c "echo step \$RANK; echo warn \$RANK >&2" >out 2>err &&
	grep -qx "ci-smoke: 3 ranks passed" out &&
	grep -qx "\[2\] step 2" out &&
	test "$(cat logs/rank.1/stdout)" = "step 1" &&
	test "$(cat logs/rank.1/stderr)" = "warn 1"
'

test_expect_success 'ci-smoke.sh without a command checks the environment (or runs DDP)' '
	"$SRC/examples/ci-smoke.sh" -n 2 -t 120 >out 2>err &&
	grep -qx "ci-smoke: 2 ranks passed" out
'

test_expect_success 'ci-smoke.sh fails with the rank'"'"'s code and shows its stderr' '
	test_expect_code 4 "$SRC/examples/ci-smoke.sh" -n 3 -o logs -- sh -c \
	    "[ \$RANK = 1 ] && { echo boom from \$RANK >&2; exit 4; }; exec sleep 30" >out 2>err &&
	grep -q "ci-smoke: FAILED with exit code 4" err &&
	grep -qx -- "--- logs/rank.1/stderr" err && grep -qx "boom from 1" err
'

test_expect_success 'ci-smoke.sh turns a hang into exit 124' '
	test_expect_code 124 "$SRC/examples/ci-smoke.sh" -n 2 -t 0.5 -- sleep 30 >out 2>err
'

test_expect_success 'tf_config.py prints the whole TF_CONFIG with -v' '
	dtrun -n 2 --framework tensorflow --prefix "" python3 "$SRC/examples/tf_config.py" -v >out &&
	grep -q "\"type\": \"worker\"" out &&
	test_expect_code 1 env -u TF_CONFIG python3 "$SRC/examples/tf_config.py" 2>err &&
	grep -q "TF_CONFIG is not set" err
'

test_expect_success 'the demo runs' '
	sh "$SRC/examples/demo.sh" "$B" >out 2>&1 &&
	grep -q "^pi ~= 3.14159" out
'

test_done
