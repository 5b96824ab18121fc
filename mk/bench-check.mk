# dtrun --check --deep over 4, 16 and 64 simulated hosts against the same
# check without --deep (bench/check/run.sh).
BENCH_TARGETS += bench-check
bench-check: bench-deps all
	bench/check/run.sh $(B)
.PHONY: bench-check
