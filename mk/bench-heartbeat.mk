# What heartbeats cost an idle job of 1,000 local ranks (bench/heartbeat).
BENCH_TARGETS += bench-heartbeat
bench-heartbeat: bench-deps all
	bench/heartbeat/run.sh $(B)
.PHONY: bench-heartbeat
