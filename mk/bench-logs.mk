# The log path against its floor: 4 processes writing into one pipe, then
# dtrun locally, dtrun over loopback ssh and mpirun --tag-output (bench/logs).
BENCH_TARGETS += bench-logs
bench-logs: all
	bash bench/logs/run.sh $(B) 10
.PHONY: bench-logs

# How many terminal lines --collapse saves: 64 ranks, 50 steps (bench/logs/collapse.sh).
BENCH_TARGETS += bench-logs-collapse
bench-logs-collapse: all
	bash bench/logs/collapse.sh $(B) 64 50
.PHONY: bench-logs-collapse
