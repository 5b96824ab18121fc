# hostfile.mk -- the hostfile library's fuzz targets and benchmark.
#
#   make fuzz-hostfile fuzz-range fuzz-yaml   build and run each libFuzzer
#                       target for FUZZ_TIME seconds (or FUZZ_RUNS inputs);
#                       FUZZ_ARGS=-fork=2 runs two processes
#   make bench-hostfile parse + place a generated 100,000-host file
#
# The fuzz builds cap range expansion at 20,000 names (not 1,000,000) so
# that an input of a few bytes cannot take seconds. New inputs go to build-fuzz/corpus-NAME; the seeds kept in the repository
# are fuzz/hostfile/NAME. "make fuzz-merge-hostfile" folds the new ones
# that add coverage back into the repository's corpus.

FUZZ_CC		?= clang
FUZZ_TIME	?= 60
FUZZ_RUNS	?= -1
FUZZ_ARGS	?=
FUZZ_FLAGS	:= -g -O1 -fsanitize=fuzzer,address,undefined \
		   -fno-sanitize-recover=undefined -std=gnu11 -D_GNU_SOURCE \
		   -Isrc -DHF_EXPAND_MAX=20000
HF_FUZZ_LIB	:= $(HOSTFILE_SRC) src/common/err.c src/common/editdist.c \
		   src/common/strs.c
HF_FUZZ		:= hostfile range yaml

$(FUZZ_B)/fuzz-%: fuzz/hostfile/fuzz_%.c $(HF_FUZZ_LIB) \
    $(wildcard src/hostfile/*.h)
	@mkdir -p $(FUZZ_B)
	$(FUZZ_CC) $(FUZZ_FLAGS) -o $@ $< $(HF_FUZZ_LIB) -lyaml -lm

$(addprefix fuzz-,$(HF_FUZZ)): fuzz-%: $(FUZZ_B)/fuzz-%
	@mkdir -p $(FUZZ_B)/corpus-$*
	$(FUZZ_B)/fuzz-$* -max_total_time=$(FUZZ_TIME) -runs=$(FUZZ_RUNS) \
	    -print_final_stats=1 -max_len=4096 $(FUZZ_ARGS) \
	    $(FUZZ_B)/corpus-$* fuzz/hostfile/$*

fuzz-merge-hostfile: $(addprefix $(FUZZ_B)/fuzz-,$(HF_FUZZ))
	for t in $(HF_FUZZ); do \
	    $(FUZZ_B)/fuzz-$$t -merge=1 fuzz/hostfile/$$t \
	        $(FUZZ_B)/corpus-$$t || exit 1; \
	done

FUZZ_TARGETS	+= $(addprefix fuzz-,$(HF_FUZZ))

$(B)/bench-hostfile: bench/hostfile/bench.c $(LIBHOSTFILE) $(LIBCOMMON)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(PKG_LIBS) -lm

bench-hostfile: bench-deps $(B)/bench-hostfile
	bench/hostfile/run.sh $(B)

BENCH_TARGETS	+= bench-hostfile

.PHONY: $(addprefix fuzz-,$(HF_FUZZ)) fuzz-merge-hostfile bench-hostfile
