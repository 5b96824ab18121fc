#!/bin/bash
# t0011-output-attack.sh -- the output promise under attack: slow readers
# (locally, with --output-dir, over ssh), huge lines, a reader that goes
# away, progress bars, and many ranks holding unfinished lines at once.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/sshd.sh"

# check_ranks FILE NRANKS N -- each rank's lines in FILE are exactly 1..N,
# once each, in order, and FILE holds nothing else (no glued lines).
check_ranks() {
	test "$(wc -l <"$1")" -eq $(($2 * $3)) || {
		echo "$1: $(wc -l <"$1") lines, want $(($2 * $3))" >&2
		return 1
	}
	seq 1 "$3" >want.seq
	r=0
	while [ $r -lt "$2" ]; do
		grep "^\[$r\] " "$1" | cut -c5- >got.$r
		cmp got.$r want.seq || return 1
		r=$((r + 1))
	done
}

# The daemon lives as long as the script: its cleanup hook is set out here.
if ssh_why=$(sshd_skip_reason); then
	:
elif ! sshd_start >"$TRASH/sshd.out" 2>&1; then
	ssh_why="could not start sshd: $(cat "$TRASH/sshd.out")"
fi
export ssh_why

test_expect_success 'a slow reader gets every line once, in order, none glued' '
	dtrun -n 4 seq 300000 | slow_reader >out &&
	check_ranks out 4 300000
'

test_expect_success 'a slow reader with --output-dir: the same, and whole files' '
	dtrun -n 4 --output-dir o seq 300000 | slow_reader >out &&
	check_ranks out 4 300000 &&
	for r in 0 1 2 3; do
		cmp o/rank.$r/stdout want.seq || return 1
	done
'

test_expect_success 'a slow reader over ssh gets every line once, in order' '
	if [ -n "$ssh_why" ]; then skip_test "$ssh_why"; fi &&
	{ dtrun "${SSH_ARGS[@]}" --ssh-agent-dir "$PWD/agents" -H 127.0.0.1:2,127.0.0.2:2 seq 300000 2>err; echo $? >rc; } | slow_reader >out &&
	{ check_ranks out 4 300000 || { echo "dtrun exit $(cat rc)"; cat err; exit 1; }; } &&
	test "$(cat rc)" = 0
'

test_expect_success 'a 50 MiB line comes in 8 MiB pieces that add up to it exactly' '
	dtrun --output-dir o sh -c "head -c 52428800 /dev/zero | tr \"\\0\" x; echo" | slow_reader >out &&
	awk "{ print length(\$0) }" out >lens &&
	printf "%s\n" 8388612 8388612 8388612 8388612 8388612 8388612 2097156 >want &&
	cmp lens want &&
	test $(grep -c "^\[0\] x*\$" out) -eq 7 &&
	test "$(cut -c5- out | tr -d "\n" | wc -c)" -eq 52428800 &&
	test "$(tr -d x <o/rank.0/stdout | od -An -c | tr -d " ")" = "\n" &&
	test $(wc -c <o/rank.0/stdout) -eq 52428801
'

test_expect_success 'dtrun | head -1: the job stops as SIGPIPE would (141, said once)' '
	{ timeout 120 dtrun -n 2 yes 2>err && echo 0 >rc || echo $? >rc; } | head -n 1 >out &&
	test "$(cat rc)" = 141 &&
	grep -qx "\[[01]\] y" out &&
	grep -q "stdout was closed (its reader went away): stopping 2 ranks, as SIGPIPE would (exit 141)" err &&
	test $(wc -l <err) -eq 1
'

test_expect_success 'dtrun --output-dir | head -1: the job goes on, the files are whole' '
	{ timeout 120 dtrun -n 2 --output-dir o sh -c "seq 300000; echo end >&2" 2>err && echo 0 >rc || echo $? >rc; } | head -n 1 >out &&
	test "$(cat rc)" = 0 &&
	seq 1 300000 >want &&
	cmp o/rank.0/stdout want && cmp o/rank.1/stdout want &&
	grep -qx end o/rank.1/stderr &&
	test $(grep -c "stdout was closed (its reader went away): the job goes on, its output is still written to o" err) -eq 1 &&
	test $(grep -c "^\[[01]\] end\$" err) -eq 2 &&
	test $(wc -l <err) -eq 3
'

# No timing below: a rank waits for a file that the test makes only once it
# has seen the output it looks for (the rank's bound is only a safety net).
test_expect_success 'a progress bar ending in \r is forwarded before its newline' '
	dtrun --timeout 600 --output-dir o sh -c "printf \"50%%\\r\"; i=0; while [ ! -e seen ] && [ \$i -lt 6000 ]; do sleep 0.05; i=\$((i + 1)); done; echo done" >out 2>err & d=$! &&
	wait_for 60 grep -q "50%" out || { touch seen; wait $d; exit 1; } &&
	touch seen &&
	wait $d &&
	printf "[0] 50%%\r[0] done\n" >want &&
	cmp out want &&
	printf "50%%\rdone\n" >want.file &&
	cmp o/rank.0/stdout want.file
'

test_expect_success 'CRLF line ends stay one line end, even split between writes' '
	dtrun --prefix "> " sh -c "printf \"a\\r\\nb\\r\"; sleep 0.2; printf \"\\nc\\r\\n\"" >out &&
	printf "> a\r\n> b\r\n> c\r\n" >want &&
	cmp out want
'

test_expect_success 'unfinished lines of many ranks are cut once they hold 64 MiB' '
	dtrun --timeout 600 -n 9 sh -c "head -c 7864320 /dev/zero | tr \"\\0\" x; i=0; while [ ! -e go ] && [ \$i -lt 6000 ]; do sleep 0.05; i=\$((i + 1)); done; echo" >out 2>err & d=$! &&
	wait_for 60 test -s out || { touch go; wait $d; exit 1; } &&
	touch go &&
	wait $d &&
	test $(grep -cv "^\[[0-8]\] x*\$" out) -eq 0 &&
	for r in 0 1 2 3 4 5 6 7 8; do
		test "$(grep "^\[$r\] " out | cut -c5- | tr -d "\n" | wc -c)" -eq 7864320 || return 1
	done
'

test_done
