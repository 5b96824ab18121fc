# store.mk -- the TCPStore-compatible store's extra rules: its fuzz target.

# make fuzz-store [STORE_FUZZ_RUNS=N]: libFuzzer on the decoder and store,
# two conns fed the same stream. The seeds (fuzz/store/corpus) are the
# recorded torch 1.13 conversations of tests/data/store behind a plan byte.
STORE_FUZZ_RUNS	?= 2000000
STORE_FUZZ_SRC	:= fuzz/store/fuzz_store.c $(STORE_SRC) \
		   src/rendezvous/store.c src/common/err.c
$(FUZZ_B)/fuzz-store: $(STORE_FUZZ_SRC) $(wildcard src/store/*.h)
	@mkdir -p $(dir $@)
	clang -g -O1 -fsanitize=fuzzer,address,undefined \
	    -fno-sanitize-recover=undefined -Isrc \
	    -o $@ $(STORE_FUZZ_SRC)
fuzz-store: $(FUZZ_B)/fuzz-store
	@mkdir -p $(FUZZ_B)/store-corpus
	$(FUZZ_B)/fuzz-store -runs=$(STORE_FUZZ_RUNS) -max_len=70000 \
	    -print_final_stats=1 $(FUZZ_B)/store-corpus fuzz/store/corpus
FUZZ_TARGETS += fuzz-store
.PHONY: fuzz-store
