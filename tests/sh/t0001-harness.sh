#!/bin/bash
# t0001-harness.sh -- the harness itself: a failing step anywhere in a body
# fails its test, a broken &&-chain is refused before it runs, and a skip is
# counted as skipped, never as passed. Each case runs in an inner script
# whose summary line is checked.
. "$(dirname "$0")/lib.sh"

# inner NAME BODY -- writes a one-test script running BODY with lib.sh.
inner() {
	cat >"$1" <<EOS
#!/bin/bash
. "$T_LIB/lib.sh"
test_expect_success 'inner' '
$2
'
test_done
EOS
}

# summary SCRIPT -- runs it and prints its closing line.
summary() { bash "$1" | tail -n 1; }

test_expect_success 'a failing step before a passing one fails the test' '
	inner t.sh "	false
	true" &&
	test "$(summary t.sh)" = "# 0 passed, 1 failed, 0 skipped"
'

test_expect_success 'test_at_exit in a body runs when the body ends, pass or fail' '
	inner t.sh "	test_at_exit \"echo ran >$PWD/hook.1\" &&
	false" &&
	test "$(summary t.sh)" = "# 0 passed, 1 failed, 0 skipped" &&
	test "$(cat hook.1)" = ran &&
	inner t.sh "	test_at_exit \"echo ran >$PWD/hook.2\"" &&
	test "$(summary t.sh)" = "# 1 passed, 0 failed, 0 skipped" &&
	test "$(cat hook.2)" = ran
'

test_expect_success 'a trailing "; true" hides nothing' '
	inner t.sh "	false; true" &&
	test "$(summary t.sh)" = "# 0 passed, 1 failed, 0 skipped"
'

test_expect_success 'a loop over ranks checks every rank, not only the last' '
	inner t.sh "	for r in 0 1 2; do test \$r != 1 || return 1; done" &&
	test "$(summary t.sh)" = "# 0 passed, 1 failed, 0 skipped" &&
	inner t.sh "	for r in 0 1 2; do test \$r != 1; done &&
	true" &&
	test_expect_code 1 bash t.sh >out &&
	test "$(tail -n 1 out)" = "# 0 passed, 1 failed, 0 skipped" &&
	grep -q "chain lint: .*for loop checks only its last iteration" out
'

test_expect_success 'a broken &&-chain is refused before it runs' '
	inner t.sh "	false && touch ran
	touch ran2" &&
	test_expect_code 1 bash t.sh >out &&
	test "$(tail -n 1 out)" = "# 0 passed, 1 failed, 0 skipped" &&
	grep -q "chain lint: body line .*broken &&-chain" out &&
	test ! -e "$TRASH"/*/ran2
'

test_expect_success 'a negated step in the middle is refused' '
	inner t.sh "	! true
	true" &&
	test "$(summary t.sh)" = "# 0 passed, 1 failed, 0 skipped"
'

test_expect_success 'a skip inside a body is counted as skipped, with why' '
	inner t.sh "	skip_test \"no widget here\"" &&
	bash t.sh >out &&
	grep -qx "ok 1 # skipped: inner (no widget here)" out &&
	test "$(tail -n 1 out)" = "# 0 passed, 0 failed, 1 skipped"
'

test_expect_success 'a chained body that passes still passes' '
	inner t.sh "	echo a >f &&
	for r in 0 1; do grep -q a f || return 1; done &&
	! grep -q b f" &&
	test "$(summary t.sh)" = "# 1 passed, 0 failed, 0 skipped"
'

# A fake tree for run-all.sh: copies of the two scripts beside a fake
# unit-tests and two tiny scenario files, never the real suite. The second
# file waits (at most 30 s) for "go", so its result can only come after the
# first file's has been shown, or not at all.
FAKE=$TRASH/fake
mkdir -p "$FAKE/tests/sh" "$FAKE/build"
cp "$SRC/tests/run-all.sh" "$FAKE/tests/"
cp "$SRC/tests/sh/run.sh" "$FAKE/tests/sh/"
printf '#!/bin/sh\necho "1 passed, 0 failed"\n' >"$FAKE/build/unit-tests"
chmod +x "$FAKE/build/unit-tests"
cat >"$FAKE/tests/sh/t0001-first.sh" <<'EOS'
echo $$ >>"$FAKE_PIDS"
echo "ok 1 - first"
echo "# 1 passed, 0 failed, 0 skipped"
EOS
cat >"$FAKE/tests/sh/t0002-second.sh" <<'EOS'
echo $$ >>"$FAKE_PIDS"
echo "ok 1 - second has begun"
i=0
while [ ! -e "$FAKE_GO" ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i + 1)); done
echo "# 1 passed, 0 failed, 0 skipped"
EOS

test_expect_success 'run-all.sh shows each scenario file'"'"'s result and time as it ends' '
	test "$(ls "$FAKE/tests/sh"/t*.sh | wc -l)" -eq 2 &&
	test_at_exit "touch $PWD/go; wait_gone 40 $PWD/all.pid $PWD/pids || kill \$(cat $PWD/all.pid $PWD/pids)" &&
	FAKE_PIDS=$PWD/pids FAKE_GO=$PWD/go sh "$FAKE/tests/run-all.sh" build >all.out 2>&1 &
	echo $! >all.pid &&
	wait_for 20 grep -qx -- "-- t0001-first.sh: 1 passed, 0 failed, 0 skipped in [0-9]* s" all.out &&
	wait_for 20 grep -qx "ok 1 - second has begun" all.out &&
	! grep -q "^-- t0002-second.sh: " all.out &&
	touch go &&
	wait_gone 40 all.pid &&
	grep -qx -- "-- t0002-second.sh: 1 passed, 0 failed, 0 skipped in [0-9]* s" all.out &&
	grep -qx "== all suites ([0-9]* s)" all.out &&
	test "$(tail -n 1 all.out)" = "3 passed, 0 failed"
'

test_done