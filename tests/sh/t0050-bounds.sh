#!/bin/bash
# t0050-bounds.sh -- what must not wrap or be cut: a --kill-grace (or
# killGrace) over 2^32 milliseconds, and command lines and environments as
# big as execve takes, carried to every rank intact; beyond what can be
# carried, a usage error that names the limit.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/bounds-lib.sh"

# A rank that notes each SIGTERM/SIGINT it gets and carries on.
cat >"$TRASH/stubborn.sh" <<'EOS'
#!/bin/sh
trap 'echo got >>got' TERM INT
echo $$ >pid
while :; do sleep 0.1; done
EOS
chmod +x "$TRASH"/*.sh

# A failed test must not leave a rank that waits 49 days for its SIGKILL.
test_at_exit 'for p in $(cat "$TRASH"/leftover 2>/dev/null); do kill -9 $p 2>/dev/null; done'

# stop_waits -- with dtrun ($d) running stubborn.sh: Ctrl-C must leave the
# rank alive well after the grace a 32-bit wrap would give (0.7 s); a
# second Ctrl-C then kills it.
stop_waits() {

	wait_for 10 test -s pid &&
	cat pid >>"$TRASH/leftover" &&
	kill -INT $d &&
	wait_for 10 test -s got &&
	sleep 3 &&
	proc_alive "$(cat pid)" &&
	kill -INT $d &&
	test_expect_code 130 wait $d &&
	wait_gone 5 pid
}

test_expect_success '--kill-grace 4294968 (over 2^32 ms) does not wrap to 0.7 s' '
	dtrun -n 1 --kill-grace 4294968 "$TRASH/stubborn.sh" 2>err & d=$! &&
	echo $d >>"$TRASH/leftover" &&
	stop_waits &&
	grep -q "again: killing every rank now" err
'

# Not in the body: "a && dtrun &" would put the whole list in the background.
printf "launcher: local\nkillGrace: 4294968s\n" >"$TRASH/grace.yaml"

test_expect_success 'killGrace: 4294968s in engine.yaml does not wrap either' '
	dtrun -f "$TRASH/grace.yaml" -n 1 "$TRASH/stubborn.sh" 2>err & d=$! &&
	echo $d >>"$TRASH/leftover" &&
	stop_waits
'

test_expect_success 'engine.yaml takes its flag'"'"'s bounds: hangTimeout past a year is refused where written' '
	printf "command: true\nhangTimeout: 10000000000\n" >job.yaml &&
	test_expect_code 2 dtrun -f job.yaml 2>err &&
	grep -qx "dtrun: job.yaml:2:14: hangTimeout 10000000000: want 0 to 31536000 seconds" err &&
	test_expect_code 2 dtrun --hang-timeout 10000000000 true 2>err &&
	grep -qx "dtrun: --hang-timeout 10000000000: want 0 to 31536000 seconds" err
'

test_expect_success '100,000 arguments reach every rank intact' '
	big_args_ok -n 2
'

test_expect_success 'ten 120 KB -x values reach every rank intact' '
	big_env_ok -n 2
'

test_expect_success 'a variable too big to carry: exit 2 naming the limit' '
	v=$(head -c 307200 /dev/zero | tr "\\0" a) &&
	printf "launcher: local\nenvironment:\n  HUGE: %s\n" "$v" >big.yaml &&
	test_expect_code 2 dtrun -f big.yaml -n 1 true 2>err &&
	test $(wc -l <err) -eq 1 &&
	grep -q "too big to carry: at most 1048576 strings of 256 KiB each, 16 MiB in all" err
'

test_done
