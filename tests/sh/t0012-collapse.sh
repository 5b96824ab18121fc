#!/bin/bash
# t0012-collapse.sh -- --collapse: a line several ranks say at once reaches
# the terminal once, behind their rank ranges; the files stay each rank's.
. "$(dirname "$0")/lib.sh"

# The ranks meet at a barrier of files in $PWD first, so that what they say
# next comes within the window even on a loaded machine.
cat >"$TRASH/warn.sh" <<'EOS'
touch "ready.$RANK"
while [ "$(ls ready.* | wc -l)" -lt "$WORLD_SIZE" ]; do sleep 0.05; done
echo "UserWarning: this API is deprecated"
echo "loss $RANK step 1"
echo "loss $RANK step 2"
echo "same on both" >&2
EOS

test_expect_success 'with --collapse a warning of 8 ranks is one [0-7] line, each loss line stays' '
	dtrun -n 8 --collapse sh "$TRASH/warn.sh" >out 2>err &&
	test $(grep -c UserWarning out) -eq 1 &&
	head -n 1 out | grep -qx "\[0-7\] UserWarning: this API is deprecated" &&
	test $(wc -l <out) -eq 17 &&
	for r in 0 1 2 3 4 5 6 7; do
		grep -e "UserWarning" -e "^\[$r\] " out >r$r &&
		printf "%s\n" "[0-7] UserWarning: this API is deprecated" \
		    "[$r] loss $r step 1" "[$r] loss $r step 2" >want$r &&
		cmp r$r want$r || return 1
	done
'

cat >"$TRASH/dup.sh" <<'EOS'
touch "ready.$RANK"
while [ "$(ls ready.* | wc -l)" -lt "$WORLD_SIZE" ]; do sleep 0.05; done
echo dup
echo dup
echo dup
EOS

test_expect_success 'dup said three times by 8 ranks is three [0-7] lines' '
	dtrun -n 8 --collapse sh "$TRASH/dup.sh" >out 2>err &&
	printf "%s\n" "[0-7] dup" "[0-7] dup" "[0-7] dup" >want &&
	cmp out want
'

test_expect_success 'on a terminal 8 ranks collapse by default; --no-collapse keeps each copy' '
	script -qfec true /dev/null >/dev/null 2>&1 </dev/null ||
	    skip_test "no script(1) with a pty here" &&
	mkdir a b &&
	(cd a && script -qfec "NO_COLOR=1 dtrun -n 8 sh $TRASH/dup.sh" /dev/null >out </dev/null) &&
	test $(grep -c "dup" a/out) -eq 3 &&
	(cd b && script -qfec "NO_COLOR=1 dtrun -n 8 --no-collapse sh $TRASH/dup.sh" /dev/null >out </dev/null) &&
	test $(grep -c "dup" b/out) -eq 24
'

# Before each shared line, each rank says something of its own: a line, a
# progress segment, a line too long to be matched.
# Only builtins after the barrier: a burst, even on a loaded machine.
cat >"$TRASH/own.sh" <<'EOS'
long=$(head -c 5000 /dev/zero | tr "\0" "$RANK")
touch "ready.$RANK"
while [ "$(ls ready.* | wc -l)" -lt "$WORLD_SIZE" ]; do sleep 0.05; done
echo "rank $RANK starting"
echo "config: a"
printf "rank %s 50%%\r" "$RANK"
echo "config: b"
echo "$long"
echo "config: c"
EOS

test_expect_success 'a shared line after a rank'"'"'s own line, segment or long line collapses' '
	dtrun -n 8 --collapse --output-dir logs sh "$TRASH/own.sh" >out 2>err &&
	tr "\r" "\n" <out >lines &&
	for l in a b c; do
		test $(grep -c "config: $l\$" lines) -eq 1 &&
		grep -qx "\[0-7\] config: $l" lines || return 1
	done &&
	for r in 0 1 2 3 4 5 6 7; do
		sed -n "s/^\[$r\] //p; s/^\[0-7\] //p" lines >r$r &&
		tr "\r" "\n" <logs/rank.$r/stdout >want$r &&
		cmp r$r want$r || return 1
	done
'

test_expect_success 'without --collapse every rank prints its own copy' '
	dtrun -n 8 sh "$TRASH/warn.sh" >out 2>err &&
	test $(grep -c "^\[[0-7]\] UserWarning: this API is deprecated\$" out) -eq 8 &&
	test $(wc -l <out) -eq 24 &&
	test $(grep -c "^\[[0-7]\] same on both\$" err) -eq 8
'

test_expect_success 'stdout and stderr collapse apart, each on its own stream' '
	dtrun -n 8 --collapse sh "$TRASH/warn.sh" >out 2>err &&
	test "$(cat err)" = "[0-7] same on both" &&
	! grep -q "same on both" out
'

test_expect_success '--output-dir files are what each rank wrote, byte for byte' '
	dtrun -n 8 --collapse --output-dir logs sh "$TRASH/warn.sh" >out 2>err &&
	test $(grep -c UserWarning out) -eq 1 &&
	for r in 0 1 2 3 4 5 6 7; do
		printf "%s\n" "UserWarning: this API is deprecated" \
		    "loss $r step 1" "loss $r step 2" >want &&
		cmp logs/rank.$r/stdout want &&
		echo "same on both" >want &&
		cmp logs/rank.$r/stderr want || return 1
	done
'

test_expect_success 'ranks starting 1.5 s apart still print a shared line once' '
	dtrun -n 2 --collapse sh -c "[ \$RANK = 0 ] || sleep 1.5; echo late or not" >out &&
	echo "[0-1] late or not" >want &&
	cmp out want
'

test_expect_success 'a custom prefix shows the ranges where %r stands' '
	dtrun -n 8 --collapse --prefix "%r|%s: " sh "$TRASH/warn.sh" >out 2>err &&
	head -n 1 out | grep -qx "0-7|out: UserWarning: this API is deprecated" &&
	test "$(cat err)" = "0-7|err: same on both"
'

test_expect_success 'a prefix that names the host turns --collapse off, and says so' '
	dtrun -n 4 --collapse --prefix "%h:%r " sh "$TRASH/warn.sh" >out 2>err &&
	test $(grep -c UserWarning out) -eq 4 &&
	grep -q "collapse is off" err
'

test_expect_success 'engine.yaml collapse: true does what --collapse does' '
	printf "%s\n" "collapse: true" >job.yaml &&
	dtrun -n 8 -f job.yaml sh "$TRASH/warn.sh" >out 2>err &&
	head -n 1 out | grep -qx "\[0-7\] UserWarning: this API is deprecated"
'

test_expect_success 'held lines of a failing rank come before dtrun says it failed' '
	test_expect_code 3 dtrun -n 4 --collapse sh -c "echo bye >&2; [ \$RANK = 2 ] || exec sleep 30; echo last words >&2; exit 3" 2>err &&
	grep -n -e "^\[2\] last words\$" -e "rank 2 .* exited with code 3" err >lines &&
	awk -F: "/last words/ { b = \$1 } /exited/ && !x { x = \$1 } END { exit !(b && x && b < x) }" lines
'

test_done
