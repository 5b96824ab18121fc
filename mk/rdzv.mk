# rdzv.mk -- the rendezvous area's extra rules: the symlink its helpers
# load libdtcomm through, the decoder's fuzz target, the load benchmark,
# and the CUDA example.

# libdtcomm.so's soname is libdtcomm.so.0: programs linked with -ldtcomm
# (the helpers, with rpath $ORIGIN/..) look for that name at run time.
$(B)/libdtcomm.so.0: $(B)/libdtcomm.so
	ln -sf libdtcomm.so $@
$(HELPERS): $(B)/libdtcomm.so.0
