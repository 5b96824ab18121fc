# rdzv.mk -- the rendezvous area's extra rules: the symlink its helpers
# load libdtcomm through, the decoder's fuzz target, the load benchmark,
# and the CUDA example.

# The helpers (rpath $ORIGIN/..) load libdtcomm by its soname.
$(HELPERS): $(B)/libdtcomm.so.0

# The load generator: N authenticated workers joining and fetching the id.
$(B)/bench/rdzv-load: bench/rdzv/rdzv-load.c $(LIBRDZV) $(LIBCOMMON)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(PKG_LIBS)

# The load through agents: a stand-in agent that plays its ranks' channels.
$(B)/bench/agentload: bench/rdzv/agentload.c $(LIBPROTO) $(LIBRDZV) $(LIBCOMMON)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(PKG_LIBS)

# make bench-rdzv-agents [RDZV_HOSTS="256 768 1536"] [RDZV_PER_HOST=64]:
# dtrun's rendezvous with every rank through its host's agent.
RDZV_HOSTS	?= 320 768 1536
RDZV_PER_HOST	?= 64
bench-rdzv-agents: bench-deps all $(B)/bench/agentload $(B)/bench/measure
	bench/rdzv/agents.sh $(B) "$(RDZV_HOSTS)" $(RDZV_PER_HOST)
BENCH_TARGETS += bench-rdzv-agents
.PHONY: bench-rdzv-agents

# make bench-rdzv [RDZV_N=16384] [RDZV_TORCH_N=4096]: dtrun's rendezvous
# against PyTorch's TCPStore on this machine, with the ratio.
RDZV_N		?= 16384
RDZV_TORCH_N	?= 4096
bench-rdzv: bench-deps $(B)/bench/rdzv-load $(B)/helpers/rdzv-serve
	bench/rdzv/run.sh $(B) $(RDZV_N) $(RDZV_TORCH_N)
BENCH_TARGETS += bench-rdzv
.PHONY: bench-rdzv

# make fuzz-rdzv [RDZV_FUZZ_RUNS=N]: libFuzzer on the rendezvous decoder.
# The seeds (one frame per message type) are in fuzz/rdzv/corpus; what the
# fuzzer finds on the way goes to build-fuzz/rdzv-corpus.
RDZV_FUZZ_RUNS	?= 2000000
RDZV_FUZZ_SRC	:= fuzz/rdzv/fuzz_proto.c src/rendezvous/proto.c \
		   src/common/wire.c src/common/err.c
$(FUZZ_B)/fuzz-rdzv: $(RDZV_FUZZ_SRC) src/rendezvous/proto.h src/common/wire.h
	@mkdir -p $(dir $@)
	clang -g -O1 -fsanitize=fuzzer,address,undefined \
	    -fno-sanitize-recover=undefined -Isrc \
	    -o $@ $(RDZV_FUZZ_SRC)
fuzz-rdzv: $(FUZZ_B)/fuzz-rdzv
	@mkdir -p $(FUZZ_B)/rdzv-corpus
	$(FUZZ_B)/fuzz-rdzv -runs=$(RDZV_FUZZ_RUNS) -max_len=70000 \
	    -print_final_stats=1 $(FUZZ_B)/rdzv-corpus fuzz/rdzv/corpus
FUZZ_TARGETS += fuzz-rdzv
.PHONY: fuzz-rdzv

# The NCCL allreduce example, built only where CUDA is installed (it needs
# cuda_runtime.h and nccl.h, and links NCCL and the CUDA runtime itself).
ifneq ($(wildcard $(CUDA)/include/cuda_runtime.h),)
$(B)/examples/allreduce: examples/allreduce.c src/comm/dtcomm.h $(B)/libdtcomm.so.0
	@mkdir -p $(dir $@)
	$(CC) $(OPT) -std=gnu11 $(WARN) -Isrc/comm -isystem $(CUDA)/include -o $@ $< \
	    -L$(B) -ldtcomm -Wl,-rpath,'$$ORIGIN/..' -L$(CUDA)/lib64 \
	    -L$(CUDA)/lib -lnccl -lcudart
examples: $(B)/examples/allreduce
all: $(B)/examples/allreduce
endif
.PHONY: examples
