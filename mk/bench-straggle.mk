# What the straggler watch costs dtrun and its agent: 100 local ranks
# printing a step line 10 times a second, watch on and off
# (bench/straggle/overhead.sh; its flood of lines is bench-logs' "watch off");
# and what the NCCL profiler plugin costs a rank per collective
# (bench/straggle/ncclprof.c).
BENCH_TARGETS += bench-straggle
$(B)/bench/ncclprof: bench/straggle/ncclprof.c src/ncclprof/ncclabi.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -pthread -o $@ $< -ldl
bench-straggle: bench-deps all $(B)/bench/ncclprof
	bench/straggle/overhead.sh $(B)
	$(B)/bench/ncclprof $(B)/libdtrun-ncclprof.so
.PHONY: bench-straggle
