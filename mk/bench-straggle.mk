# What the straggler watch costs dtrun and its agent: 100 local ranks
# printing a step line 10 times a second, watch on and off
# (bench/straggle/overhead.sh; its flood of lines is bench-logs' "watch off").
BENCH_TARGETS += bench-straggle
bench-straggle: bench-deps all
	bench/straggle/overhead.sh $(B)
.PHONY: bench-straggle
