# store.mk -- the TCPStore-compatible store's extra rules: its fuzz target.

# make fuzz-store: libFuzzer on the decoder and store, two conns fed the
# same stream, for FUZZ_TIME seconds (or FUZZ_RUNS inputs; hostfile.mk
# sets both and the compiler flags). The seeds (fuzz/store/corpus) are the
# recorded torch 1.13 conversations of tests/data/store behind a plan byte.
STORE_FUZZ_SRC	:= fuzz/store/fuzz_store.c $(STORE_SRC) \
		   src/rendezvous/store.c src/common/err.c
$(FUZZ_B)/fuzz-store: $(STORE_FUZZ_SRC) $(wildcard src/store/*.h)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_FLAGS) -o $@ $(STORE_FUZZ_SRC)
fuzz-store: $(FUZZ_B)/fuzz-store
	@mkdir -p $(FUZZ_B)/corpus-store
	$(FUZZ_B)/fuzz-store -max_total_time=$(FUZZ_TIME) -runs=$(FUZZ_RUNS) \
	    -print_final_stats=1 -max_len=70000 $(FUZZ_ARGS) \
	    $(FUZZ_B)/corpus-store fuzz/store/corpus
FUZZ_TARGETS += fuzz-store
.PHONY: fuzz-store

# The init load: N simulated torch 1.13 ranks' init_process_group queries,
# over TCP (storeload) or as a stand-in agent's STORE channels (storeagent).
STORE_PLAY	:= bench/store/play.c
$(B)/bench/storeload: bench/store/storeload.c $(STORE_PLAY) \
    bench/store/play.h $(LIBCOMMON)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -Ibench/store -o $@ $(filter %.c %.a,$^) \
	    $(PKG_LIBS)
$(B)/bench/storeagent: bench/store/storeagent.c $(STORE_PLAY) \
    bench/store/play.h $(LIBPROTO) $(LIBCOMMON)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -Ibench/store -o $@ $(filter %.c %.a,$^) \
	    $(PKG_LIBS)

# make bench-store [STORE_NS="1024 4096 16384"] [STORE_GLOO_NS=64]: the
# store's init load on torch's TCPStore, storeserve and dtrun's agents, in
# one table (bench/store/run.sh).
STORE_NS	?= 1024 4096 16384
STORE_GLOO_NS	?= 64
bench-store: bench-deps all $(B)/bench/storeload $(B)/bench/storeagent \
    $(B)/bench/measure
	bench/store/run.sh $(B) "$(STORE_NS)" "$(STORE_GLOO_NS)"
BENCH_TARGETS += bench-store
.PHONY: bench-store
check: $(B)/bench/storeload
