# rdzv.mk -- the rendezvous area's extra rules: the symlink its helpers
# load libdtcomm through, the decoder's fuzz target, the load benchmark,
# and the CUDA example.

# libdtcomm.so's soname is libdtcomm.so.0: programs linked with -ldtcomm
# (the helpers, with rpath $ORIGIN/..) look for that name at run time.
$(B)/libdtcomm.so.0: $(B)/libdtcomm.so
	ln -sf libdtcomm.so $@
$(HELPERS): $(B)/libdtcomm.so.0

# The load generator: N authenticated workers joining and fetching the id.
$(B)/bench/rdzv-load: bench/rdzv/rdzv-load.c $(LIBRDZV) $(LIBCOMMON)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(PKG_LIBS)

# make bench-rdzv [RDZV_N=16384] [RDZV_TORCH_N=4096]: dtrun's rendezvous
# against PyTorch's TCPStore on this machine, with the ratio.
RDZV_N		?= 16384
RDZV_TORCH_N	?= 4096
bench-rdzv: $(B)/bench/rdzv-load $(B)/helpers/rdzv-serve
	@sh bench/rdzv/run.sh $(B) $(RDZV_N) $(RDZV_TORCH_N)
BENCH_TARGETS += bench-rdzv
.PHONY: bench-rdzv
