# Benchmarks of the local launcher against mpirun and a posix_spawn floor.
BENCH_TARGETS += bench-local
bench-local: all
	sh bench/local/run.sh $(B)
.PHONY: bench-local
