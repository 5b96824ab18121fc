# Benchmarks of the ssh launcher against pdsh and parallel-ssh on loopback hosts.
BENCH_TARGETS += bench-ssh
bench-ssh: all
	bash bench/ssh/run.sh $(B)
.PHONY: bench-ssh
