# slurm.mk -- the Slurm launcher's benchmark: dtrun under Slurm against
# plain "srun -K" (bench/slurm/run.sh; RUNS=N, NS="4 16" to change it).
BENCH_TARGETS += bench-slurm
bench-slurm: bench-deps all
	bench/slurm/run.sh $(B)
.PHONY: bench-slurm
