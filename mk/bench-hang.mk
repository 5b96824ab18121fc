# Time from kill -QUIT to the merged stack report, 64 local ranks (goal <= 2 s).
BENCH_TARGETS += bench-hang
bench-hang: bench-deps all
	bench/hang/run.sh $(B) 64
	bench/hang/run.sh $(B) 16 gdb
.PHONY: bench-hang
