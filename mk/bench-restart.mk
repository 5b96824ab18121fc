# --max-restarts: a failure to every rank of the next attempt running, 16
# local ranks and 3 loopback ssh hosts (goal <= 100 ms plus --restart-delay).
BENCH_TARGETS += bench-restart
bench-restart: bench-deps all
	bench/restart/run.sh $(B) 5
.PHONY: bench-restart
