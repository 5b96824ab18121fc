# resolve.mk -- the LD_PRELOAD stand-in for a slow name server that
# t3002-resolve.sh uses to show lookups do not stall the event loop.
$(B)/preload/slowdns.so: tests/preload/slowdns.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -shared -o $@ $< -ldl
all: $(B)/preload/slowdns.so
