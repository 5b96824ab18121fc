# The ssh launcher's wake-ups under stress: 64 loopback hosts, 200 runs,
# heartbeats off; any stall over 1 s or hang fails it.
BENCH_TARGETS += bench-ssh-stress
bench-ssh-stress: all
	bash bench/ssh-stress/run.sh $(B)
.PHONY: bench-ssh-stress
