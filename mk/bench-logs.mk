# The log path against its floor: 4 and 64 processes writing into one pipe,
# then dtrun locally with every default on, with the straggler watch off,
# with each per-line feature on (--collapse, the stderr tail of
# --max-restarts), over loopback ssh, and mpirun --tag-output; each goal
# met or MISSED (bench/logs/run.sh).
BENCH_TARGETS += bench-logs
bench-logs: bench-deps all
	bench/logs/run.sh $(B) 10
.PHONY: bench-logs

# How many terminal lines --collapse saves: 64 ranks, 50 steps (bench/logs/collapse.sh).
BENCH_TARGETS += bench-logs-collapse
bench-logs-collapse: bench-deps all
	bench/logs/collapse.sh $(B) 64 50
.PHONY: bench-logs-collapse

# The log flood of a big job's start: 256 ranks up to 2 s apart, each
# printing a 2,000-line config dump; terminal lines without and with
# --collapse (goal 50x fewer), nothing lost (bench/logs/dump.sh).
BENCH_TARGETS += bench-logs-dump
bench-logs-dump: bench-deps all
	bench/logs/dump.sh $(B) 256 2000 2000 1
.PHONY: bench-logs-dump
