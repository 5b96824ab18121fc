# The ssh launcher's wake-ups under stress: 64 loopback hosts, 200 runs,
# heartbeats off; a stall (a run more than 1 s over the median of the 5
# about it), a hang or a failure fails it; prints what a host costs.
BENCH_TARGETS += bench-ssh-stress
bench-ssh-stress: bench-deps all
	bench/ssh-stress/run.sh $(B)
.PHONY: bench-ssh-stress
