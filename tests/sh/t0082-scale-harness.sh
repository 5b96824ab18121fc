#!/bin/bash
# t0082-scale-harness.sh -- bench/scale/run.sh at a small size: every
# simulated host's agent runs its ranks, fails fast, forwards every line
# and joins the rendezvous (the harness itself stops on any of these),
# with and without the lagged transport, and ends with its one-line
# summary. No timing is checked: the numbers are the benchmark's.
. "$(dirname "$0")/lib.sh"

# The summary line's numbers, one per line: launch, failfast, rdzv, cpu.
summary_numbers() {
	sed -n 's/^scale: hosts=\([0-9]*\) ranks=\([0-9]*\) launch_ms=\([0-9.]*\) failfast_ms=\([0-9.]*\) rdzv_ms=\([0-9.]*\) cpu_ms_per_host=\([0-9.]*\)$/\1 \2 \3 \4 \5 \6/p' "$1"
}

if ! test -x "$B/bench/simrank"; then
	test_skip 'the scale harness' "$B/bench/simrank is not built (make check builds it)"
	test_done
fi

test_expect_success 'the harness runs 8 hosts of 1 and 2 ranks and sums up the largest' '
	bash "$SRC/bench/scale/run.sh" "$B" --hosts "4 8" --ranks "1 2" >out 2>err &&
	test $(grep -cE "^ +[48] +[12] +[0-9]+ +[0-9.]+ " out) -eq 4 &&
	summary_numbers out >nums &&
	read h n launch ff rdzv cpu <nums &&
	test "$h $n" = "8 16" &&
	for v in $launch $ff $rdzv $cpu; do
		python3 -c "import sys; sys.exit(not float(sys.argv[1]) > 0)" $v || return 1
	done
'

test_expect_success 'through the lagged transport every round trip is slower, and all still works' '
	bash "$SRC/bench/scale/run.sh" "$B" --hosts 4 --ranks 1 --lag-ms 20 >out 2>err &&
	summary_numbers out >nums &&
	read h n launch ff rdzv cpu <nums &&
	test "$h $n" = "4 4" &&
	python3 -c "import sys; sys.exit(not float(sys.argv[1]) >= 40)" $launch
'

test_expect_success 'the harness leaves no process behind' '
	! pgrep -f "$B/bench/simrank" >/dev/null &&
	! pgrep -f "$B/bench/lagged" >/dev/null
'

test_done
