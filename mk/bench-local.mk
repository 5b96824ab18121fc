# Benchmarks of the local launcher against mpirun and a posix_spawn floor.
BENCH_TARGETS += bench-local
bench-local: bench-deps all
	bench/local/run.sh $(B)
.PHONY: bench-local
