# agent.mk -- the agent protocol's fuzz targets.
# make fuzz-agent [AGENT_FUZZ_RUNS=N]: libFuzzer on frame splitting and every
# launcher <-> agent decoder; seeds in fuzz/agent/corpus (fuzz/agent/mkcorpus.c).
# make fuzz-agent-conv [AGENT_CONV_RUNS=N]: whole conversations (JOB, CONT,
# RANK, PREPARE, START, STOP... and what happens to an agent meanwhile) fed
# to the agent's own frame handler, spawning stubbed; seeds in
# fuzz/agent/conversations. New inputs go to build-fuzz/agent-conv-corpus;
# "make fuzz-merge-agent-conv" folds the small new ones into the seeds.
AGENT_FUZZ_RUNS	?= 2000000
AGENT_CONV_RUNS	?= 2000000
AGENT_FUZZ_SRC	:= $(wildcard src/proto/*.c) src/common/wire.c src/common/err.c \
	    src/common/envfile.c src/common/environ.c src/common/iface.c \
	    src/common/pack.c src/common/strs.c
AGENT_FUZZ_CC	:= clang -g -O1 -fsanitize=fuzzer,address,undefined \
	    -fno-sanitize-recover=undefined -D_GNU_SOURCE -Isrc
$(FUZZ_B)/fuzz-agent: fuzz/agent/fuzz_agentproto.c $(AGENT_FUZZ_SRC)
	@mkdir -p $(dir $@)
	$(AGENT_FUZZ_CC) -o $@ $^ -levent_core -llz4
# agent.c, prepare.c and shutdown.c are compiled into the target (it
# includes them), with their spawning,
# link and records replaced by the target's stubs. PORTS may ask for 512
# ports, not 65536: else a few bytes of input take milliseconds, and the
# fuzzer spends its time there.
$(FUZZ_B)/fuzz-agent-conv: fuzz/agent/fuzz_conversation.c $(AGENT_FUZZ_SRC) \
    src/agent/agent.c src/agent/prepare.c src/agent/shutdown.c \
    src/agent/agentint.h src/proto/agentproto.h
	@mkdir -p $(dir $@)
	$(AGENT_FUZZ_CC) -DAP_MAX_PORTS=512 -o $@ \
	    fuzz/agent/fuzz_conversation.c $(AGENT_FUZZ_SRC) -levent_core -llz4
fuzz-agent: $(FUZZ_B)/fuzz-agent
	@mkdir -p $(FUZZ_B)/agent-corpus
	$(FUZZ_B)/fuzz-agent -runs=$(AGENT_FUZZ_RUNS) -max_len=4096 \
	    -print_final_stats=1 $(FUZZ_B)/agent-corpus fuzz/agent/corpus
fuzz-agent-conv: $(FUZZ_B)/fuzz-agent-conv
	@mkdir -p $(FUZZ_B)/agent-conv-corpus
	$(FUZZ_B)/fuzz-agent-conv -runs=$(AGENT_CONV_RUNS) -max_len=8192 \
	    -print_final_stats=1 $(FUZZ_B)/agent-conv-corpus \
	    fuzz/agent/conversations
fuzz-merge-agent-conv: $(FUZZ_B)/fuzz-agent-conv
	$(FUZZ_B)/fuzz-agent-conv -merge=1 -max_len=8192 \
	    fuzz/agent/conversations $(FUZZ_B)/agent-conv-corpus
FUZZ_TARGETS += fuzz-agent fuzz-agent-conv
.PHONY: fuzz-agent fuzz-agent-conv fuzz-merge-agent-conv
