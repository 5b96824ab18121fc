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
# How fast the lock-step watch names a slower rank of real gloo DDP (8
# ranks, 20% more compute, 3 runs) and whether a balanced job of 120 s
# names anyone (bench/straggle/ddp.sh; minutes: torch's import per run).
BENCH_TARGETS += bench-straggle-ddp
bench-straggle-ddp: bench-deps all
	bench/straggle/ddp.sh $(B) 8 1.2 3 120
.PHONY: bench-straggle-ddp
