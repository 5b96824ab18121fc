# Benchmarks of the ssh launcher against pdsh and parallel-ssh on loopback hosts.
BENCH_TARGETS += bench-ssh
bench-ssh: bench-deps all
	bench/ssh/run.sh $(B)
.PHONY: bench-ssh
