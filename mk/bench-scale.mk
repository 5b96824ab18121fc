# The scale harness (bench/scale): N simulated hosts, each a real
# dtrun-agent behind the local launcher's link, optionally delayed.
# make bench-scale [SCALE_ARGS="--quick"]
SCALE_ARGS	?=
$(B)/bench/simrank: bench/scale/simrank.c $(B)/libdtcomm.so.0
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< -L$(B) -ldtcomm \
	    -Wl,-rpath,'$$ORIGIN/..'
$(B)/bench/lagged: bench/scale/lagged.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $<
$(B)/bench/measure: bench/local/measure.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $<
SCALE_BINS	:= $(B)/bench/simrank $(B)/bench/lagged $(B)/bench/measure
bench-scale: bench-deps all $(SCALE_BINS)
	bench/scale/run.sh $(B) $(SCALE_ARGS)
BENCH_TARGETS += bench-scale
.PHONY: bench-scale
check: $(SCALE_BINS)
