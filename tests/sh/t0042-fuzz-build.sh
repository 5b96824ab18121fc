#!/bin/bash
# t0042-fuzz-build.sh -- every libFuzzer target (mk/*.mk, FUZZ_TARGETS) still
# compiles and links. Their stubs stand in for functions of the real code
# (fuzz/agent/fuzz_conversation.c compiles agent.c in), so a new function or
# field there can break them while the rest builds; nothing else would notice
# until the next "make fuzz". This builds them only: no fuzzing.
. "$(dirname "$0")/lib.sh"

test_expect_success 'every fuzz target builds and links with make fuzz-build' '
	if ! command -v clang >/dev/null; then
		skip_test "no clang"
	fi &&
	# A fresh directory, so nothing is stale and a "make fuzz" in the
	# tree is left alone. MAKEFLAGS from an outer "make test" or "make
	# asan" (B=, OPT=, a jobserver) are not for this make.
	env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL \
	    make -C "$SRC" -j2 FUZZ_B="$PWD/fz" fuzz-build >make.out 2>&1 ||
	    { tail -n 30 make.out; exit 1; } &&
	ls fz | grep -c "^fuzz-" >n &&
	test $(cat n) -ge 6 &&
	for f in fz/fuzz-*; do
		test -x "$f" || return 1
	done
'

test_done
