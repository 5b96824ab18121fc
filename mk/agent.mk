# agent.mk -- the agent protocol's fuzz target.
# make fuzz-agent [AGENT_FUZZ_RUNS=N]: libFuzzer on frame splitting and every
# launcher <-> agent decoder; seeds in fuzz/agent/corpus (fuzz/agent/mkcorpus.c).
AGENT_FUZZ_RUNS	?= 2000000
AGENT_FUZZ_SRC	:= src/agent/agentproto.c src/common/wire.c src/common/err.c
build-fuzz/fuzz-agent: fuzz/agent/fuzz_agentproto.c $(AGENT_FUZZ_SRC)
	@mkdir -p $(dir $@)
	clang -g -O1 -fsanitize=fuzzer,address,undefined \
	    -fno-sanitize-recover=undefined -Isrc/common -Isrc/agent -o $@ $^
fuzz-agent: build-fuzz/fuzz-agent
	@mkdir -p build-fuzz/agent-corpus
	build-fuzz/fuzz-agent -runs=$(AGENT_FUZZ_RUNS) -max_len=4096 \
	    -print_final_stats=1 build-fuzz/agent-corpus fuzz/agent/corpus
FUZZ_TARGETS += fuzz-agent
.PHONY: fuzz-agent
