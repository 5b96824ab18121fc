# Makefile -- dtrun: a launcher for distributed training.
#
#   make            build dtrun, dtrun-agent, dtrun-kill and libdtcomm
#   make deps       install the Debian packages the build and tests need
#   make demo       build and run a small real job with the local launcher
#   make test       run every test suite (unit + shell scenarios)
#   make install    PREFIX= DESTDIR= (default /usr/local as root, else ~/.local)
#   make asan       the unit and scenario tests under AddressSanitizer/UBSan
#   make fuzz       build and run the libFuzzer targets (clang)
#   make fuzz-build only build them, into FUZZ_B (the test suite does)

# Without PREFIX: /usr/local as root, else the user's own ~/.local (as
# pip install --user), whose bin Debian's ~/.profile puts on PATH.
ifeq ($(origin PREFIX),undefined)
ifeq ($(shell id -u),0)
PREFIX	:= /usr/local
else
PREFIX	:= $(HOME)/.local
USER_INSTALL := 1
endif
endif
# Where dtrun_progress.py goes: the system python3's own directory for
# PREFIX (Debian's python3 looks in /usr/local/lib/python3.X/dist-packages),
# or for ~/.local the user's site-packages, which it reads too.
ifdef USER_INSTALL
PYDIR		?= $(shell /usr/bin/python3 -c 'import site; \
	print(site.getusersitepackages())' 2>/dev/null)
endif
PYDIR		?= $(PREFIX)/lib/$(shell /usr/bin/python3 -c 'import sys; \
	print("python%d.%d" % sys.version_info[:2])' 2>/dev/null || echo python3)/dist-packages
DESTDIR	?=
CC	?= cc
OPT	?= -O2 -g
B	?= build
FUZZ_B	?= build-fuzz
VERSION	:= 0.1.0

PKGS	:= libevent yaml-0.1 libssh2 libcrypto liblz4
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   := $(shell pkg-config --libs $(PKGS) 2>/dev/null)

# NCCL is dlopen()ed at run time; its header is only needed for the CUDA example.
CUDA	?= /usr/local/cuda

WARN	:= -Wall -Wextra -Wshadow -Wpointer-arith -Wmissing-prototypes \
	   -Wstrict-prototypes -Wno-unused-parameter
CFLAGS	?=
CFLAGS	+= $(OPT) -std=gnu11 $(WARN) $(WERROR) -fPIC -D_GNU_SOURCE \
	   -DDT_VERSION='"$(VERSION)"' -Isrc $(PKG_CFLAGS)
LDFLAGS	?=

COMMON_SRC	:= $(wildcard src/common/*.c)
UTIL_SRC	:= $(wildcard src/util/*.c)
HOSTFILE_SRC	:= $(wildcard src/hostfile/*.c)
RDZV_SRC	:= $(wildcard src/rendezvous/*.c)
STORE_SRC	:= $(wildcard src/store/*.c)
COMM_SRC	:= $(wildcard src/comm/*.c)
PROTO_SRC	:= $(wildcard src/proto/*.c)
AGENT_SRC	:= $(wildcard src/agent/*.c)
# What the agent and the launcher share: spawning, job records, the
# dial-back handshake (linked into libdtagent.a with the agent's pieces).
HOST_SRC	:= $(wildcard src/host/*.c)
LAUNCHER_SRC	:= $(wildcard src/launcher/*/*.c)
KILL_SRC	:= $(wildcard src/kill/*.c)
UNIT_SRC	:= $(wildcard tests/unit/*.c)
HELPER_SRC	:= $(wildcard tests/helpers/*.c)

obj = $(patsubst %.c,$(B)/%.o,$(1))

# The agent's own pieces, shared with the launcher (protocol codec, spawning).
AGENT_LIB_SRC	:= $(filter-out src/agent/main.c,$(AGENT_SRC)) $(HOST_SRC)

LIBCOMMON	:= $(B)/libdtcommon.a
# What only the binaries link: allocators that exit, string vectors. The
# libraries (and the agent, which links none of it) return DT_ERR_NOMEM.
LIBUTIL		:= $(B)/libdtutil.a
LIBHOSTFILE	:= $(B)/libdthostfile.a
LIBRDZV		:= $(B)/libdtrdzv.a
# A TCPStore-compatible key-value store for PyTorch's ranks (no I/O; its
# table is the rendezvous store's, so it links after libdtstore).
LIBSTORE	:= $(B)/libdtstore.a
# The launcher <-> agent protocol: codec, limits, phases and the table of
# which frame is legal when (no I/O); both ends and the fuzzers link it.
LIBPROTO	:= $(B)/libdtproto.a
LIBAGENT	:= $(B)/libdtagent.a
# In link order: a library before the floors it uses (util uses common).
LIBS_ALL	:= $(LIBAGENT) $(LIBPROTO) $(LIBHOSTFILE) $(LIBSTORE) $(LIBRDZV) \
	   $(LIBUTIL) $(LIBCOMMON)

BINS	:= $(B)/dtrun $(B)/dtrun-agent $(B)/dtrun-kill $(B)/libdtcomm.so \
	   $(B)/libdtcomm.so.0 $(B)/libdtrun-ncclprof.so
HELPERS	:= $(patsubst tests/helpers/%.c,$(B)/helpers/%,$(HELPER_SRC))
# LD_PRELOAD libraries for tests (tests/preload): a slow name server, a
# host's clock set wrong.
PRELOADS := $(patsubst tests/preload/%.c,$(B)/preload/%.so,$(wildcard tests/preload/*.c)) \
	   $(B)/preload/dtrun-agent

all: $(BINS) $(HELPERS) $(PRELOADS)

$(B)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -MMD -MP -c -o $@ $<

-include $(shell find $(B) -name '*.d' 2>/dev/null)

$(LIBCOMMON): $(call obj,$(COMMON_SRC))
$(LIBUTIL): $(call obj,$(UTIL_SRC))
$(LIBHOSTFILE): $(call obj,$(HOSTFILE_SRC))
$(LIBRDZV): $(call obj,$(RDZV_SRC))
$(LIBSTORE): $(call obj,$(STORE_SRC))
$(LIBPROTO): $(call obj,$(PROTO_SRC))
$(LIBAGENT): $(call obj,$(AGENT_LIB_SRC))
$(B)/%.a:
	@mkdir -p $(dir $@)
	rm -f $@
	ar rcs $@ $^

# Every run of dtrun pays for each library it maps: libevent, libyaml and
# lz4 are linked in, and libssh2 (with the libcrypto it pulls in) is
# dlopen()ed at the first ssh host (src/launcher/backend/ssh2lib.c), so a local
# run maps libc alone.
DTRUN_LIBS := -Wl,-Bstatic -levent_core -lyaml -llz4 -Wl,-Bdynamic
$(B)/dtrun: $(call obj,src/launcher/main.c $(LAUNCHER_SRC)) $(LIBS_ALL)
	$(CC) $(CFLAGS) $(LDFLAGS) -pthread -o $@ $^ $(DTRUN_LIBS)

# The agent is copied to hosts that have nothing installed, and every job
# execs it on its critical path: it is linked whole, libc too (static-pie:
# still at a random address), so it needs no library on a host and starts
# without the dynamic loader, about 1-2 ms of each local job here. The
# linker warns that getaddrinfo needs glibc's NSS modules: its only lookup
# is --connect's address, a number from dtrun, and glibc's static files and
# DNS lookups are built in. AGENT_STATIC= links it against the shared libc
# (sanitizer builds: make asan).
AGENT_STATIC ?= -static-pie
AGENT_SHARED := -Wl,-Bstatic -levent_core -llz4 -Wl,-Bdynamic
AGENT_LIBS := $(if $(AGENT_STATIC),$(AGENT_STATIC) -levent_core -llz4,\
	$(AGENT_SHARED))
AGENT_OBJS = $(call obj,src/agent/main.c) $(LIBAGENT) $(LIBPROTO) $(LIBCOMMON)
$(B)/dtrun-agent: $(AGENT_OBJS)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(AGENT_LIBS)

# The same against the shared libc, for tests that LD_PRELOAD into an
# agent (a host's clock set wrong: t3070), which a static one ignores.
$(B)/preload/dtrun-agent: $(AGENT_OBJS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(AGENT_SHARED)

# dtrun-kill takes -H and the ssh options from dtrun's option table.
$(B)/dtrun-kill: $(call obj,$(KILL_SRC) src/launcher/cli/opttable.c) $(LIBS_ALL)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(PKG_LIBS) -lm

# Workers link libdtcomm: it exports dtcomm_* alone (src/comm/dtcomm.map)
# and pulls in only the rendezvous client's objects (HMAC in plain C), so
# it needs just libc and libdl.
$(B)/libdtcomm.so: $(call obj,$(COMM_SRC)) $(LIBRDZV) $(LIBCOMMON) src/comm/dtcomm.map
	$(CC) $(CFLAGS) $(LDFLAGS) -shared -Wl,-soname,libdtcomm.so.0 \
	    -Wl,--version-script,src/comm/dtcomm.map -Wl,--no-undefined -o $@ \
	    $(call obj,$(COMM_SRC)) $(LIBRDZV) $(LIBCOMMON) -ldl

# Programs linked with -ldtcomm look for its soname at run time.
$(B)/libdtcomm.so.0: $(B)/libdtcomm.so
	ln -sf libdtcomm.so $@

# The NCCL profiler plugin the agent names in NCCL_PROFILER_PLUGIN: NCCL
# dlopens it; it needs libc alone (and common's sock.c, linked in) and no
# NCCL header (src/ncclprof).
NCCLPROF_SRC	:= $(wildcard src/ncclprof/*.c)
$(B)/libdtrun-ncclprof.so: $(call obj,$(NCCLPROF_SRC)) $(LIBCOMMON)
	$(CC) $(CFLAGS) $(LDFLAGS) -shared -Wl,--no-undefined -Wl,--exclude-libs,ALL \
	    -pthread -o $@ $^

$(B)/helpers/%: tests/helpers/%.c $(LIBS_ALL) $(B)/libdtcomm.so
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< -L$(B) -ldtcomm \
	    -Wl,-rpath,'$$ORIGIN/..' $(LIBS_ALL) $(PKG_LIBS) -lm

$(B)/preload/%.so: tests/preload/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -shared -o $@ $< -ldl

$(B)/unit-tests: $(call obj,$(UNIT_SRC) $(LAUNCHER_SRC) $(NCCLPROF_SRC)) $(LIBS_ALL)
	$(CC) $(CFLAGS) $(LDFLAGS) -Itests/unit -pthread -o $@ $^ $(PKG_LIBS) -lm -ldl

# Each area may add its own rules in mk/AREA.mk (fuzz targets, benchmarks):
# FUZZ_TARGETS += name, BENCH_TARGETS += name. A fuzz target fuzz-NAME
# runs the binary $(FUZZ_B)/fuzz-NAME, which its area's rules build.
FUZZ_TARGETS :=
BENCH_TARGETS :=
include $(wildcard mk/*.mk)

# What only a machine with NVIDIA GPUs can check (scripts/gpu-check.sh);
# elsewhere it says "skipped: no GPU".
gpu-check: all
	@bash scripts/gpu-check.sh $(B)
.PHONY: gpu-check

fuzz: $(FUZZ_TARGETS)
fuzz-build: $(patsubst fuzz-%,$(FUZZ_B)/fuzz-%,$(FUZZ_TARGETS))
bench: bench-deps all $(BENCH_TARGETS)

# Each bench-NAME first installs the benchmarks' tools when it can (as
# root); without one, a benchmark says "skipped: no TOOL" and exits 0.
bench-deps:
	@sh scripts/deps.sh bench || echo "bench: tools missing (above): a benchmark that needs one is skipped"

deps:
	@sh scripts/deps.sh

# test and demo first install what is missing, then rebuild in a fresh make
# so pkg-config sees the new packages.
# The build on every core (serial, it is most of a minute of CI's time
# here); the tests then from a make without -j, so none inherits its
# jobserver.
NPROC	:= $(shell nproc 2>/dev/null || echo 1)
test: deps
	@$(MAKE) --no-print-directory -j$(NPROC) all $(B)/unit-tests
	@$(MAKE) --no-print-directory check

check: all $(B)/unit-tests
	@sh tests/run-all.sh $(B)

demo: deps
	@$(MAKE) --no-print-directory -j$(NPROC) all
	@sh examples/demo.sh $(B)

asan:
	@$(MAKE) --no-print-directory B=build-asan \
	    OPT="-O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer" \
	    LDFLAGS="-fsanitize=address,undefined" AGENT_STATIC= check

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib/pkgconfig \
	    $(DESTDIR)$(PREFIX)/include $(DESTDIR)$(PREFIX)/share/man/man1 \
	    $(DESTDIR)$(PREFIX)/share/man/man5 $(DESTDIR)$(PREFIX)/share/man/man3 \
	    $(DESTDIR)$(PREFIX)/share/bash-completion/completions \
	    $(DESTDIR)$(PREFIX)/share/zsh/site-functions \
	    $(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d
	install -m 755 $(B)/dtrun $(B)/dtrun-agent $(B)/dtrun-kill $(DESTDIR)$(PREFIX)/bin/
	install -m 755 $(B)/libdtcomm.so $(DESTDIR)$(PREFIX)/lib/libdtcomm.so.0
	install -d $(DESTDIR)$(PREFIX)/lib/dtrun
	install -m 755 $(B)/libdtrun-ncclprof.so $(DESTDIR)$(PREFIX)/lib/dtrun/
	ln -sf libdtcomm.so.0 $(DESTDIR)$(PREFIX)/lib/libdtcomm.so
	install -m 644 src/comm/dtcomm.h $(DESTDIR)$(PREFIX)/include/
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|$(VERSION)|' \
	    src/comm/dtcomm.pc.in > $(DESTDIR)$(PREFIX)/lib/pkgconfig/dtcomm.pc
	for m in man/*.1; do [ -f "$$m" ] && install -m 644 $$m $(DESTDIR)$(PREFIX)/share/man/man1/; done; true
	for m in man/*.3; do [ -f "$$m" ] && install -m 644 $$m $(DESTDIR)$(PREFIX)/share/man/man3/; done; true
	for m in man/*.5; do [ -f "$$m" ] && install -m 644 $$m $(DESTDIR)$(PREFIX)/share/man/man5/; done; true
	install -m 644 completions/dtrun.bash $(DESTDIR)$(PREFIX)/share/bash-completion/completions/dtrun
	install -m 644 completions/_dtrun $(DESTDIR)$(PREFIX)/share/zsh/site-functions/_dtrun
	install -m 644 completions/dtrun.fish $(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d/dtrun.fish
	install -d $(DESTDIR)$(PYDIR)
	install -m 644 python/dtrun_progress.py $(DESTDIR)$(PYDIR)/

clean:
	rm -rf $(B) build-asan $(FUZZ_B)

.PHONY: all deps test check demo asan install clean fuzz fuzz-build bench \
	bench-deps
