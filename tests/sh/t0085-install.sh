#!/bin/bash
# t0085-install.sh -- installing as ML users do: `pip install .` from a clone
# into a fresh venv (offline, Debian's pip alone) puts dtrun, dtrun-kill and
# dtrun-agent on its PATH, dtrun_progress on its sys.path and libdtcomm
# where pkg-config finds it; `make install` as a user goes to ~/.local; the
# demo ends saying where dtrun is.
. "$(dirname "$0")/lib.sh"

# clone DIR -- a copy of the tree as a clone has it, with this build as its
# build/ (times kept, so make finds it up to date and builds nothing).
clone() {
	mkdir -p "$1" &&
	for f in Makefile mk src python man completions scripts examples pyproject.toml; do
		cp -a "$SRC/$f" "$1/" || return 1
	done &&
	cp -a "$B" "$1/build" &&
	rm -rf "$1/build/helpers" "$1/build/preload"
}

if ! /usr/bin/python3 -m venv "$TRASH/probe" >/dev/null 2>&1; then
	test_skip 'pip install . into a venv' "no python3-venv (sh scripts/deps.sh)"
else
	test_expect_success 'pip install . into a fresh venv: a 2-rank job, dtrun_progress, libdtcomm' '
		clone src &&
		/usr/bin/python3 -m venv v &&
		v/bin/pip install -q --no-index --no-cache-dir --no-build-isolation ./src &&
		test -x v/bin/dtrun && test -x v/bin/dtrun-kill && test -x v/bin/dtrun-agent &&
		env -u DTRUN_AGENT PATH="$PWD/v/bin:/usr/bin:/bin" dtrun -n 2 --prefix "" sh -c "echo \$RANK \$WORLD_SIZE" >out &&
		printf "0 2\n1 2\n" >want && sort out >got && diff want got &&
		(cd / && "$OLDPWD/v/bin/python" -c "import dtrun_progress, sys; print(dtrun_progress.__file__)") >where &&
		grep -q "^$PWD/v/lib/python3[.0-9]*/site-packages/dtrun_progress.py$" where &&
		printf "#include <dtcomm.h>\nint main(void) { return dtcomm_rank(0) == -99; }\n" >w.c &&
		cc -o w w.c $(PKG_CONFIG_PATH=$PWD/v/lib/pkgconfig pkg-config --cflags --libs dtcomm) &&
		LD_LIBRARY_PATH=$PWD/v/lib ldd ./w | grep -q "libdtcomm.so.0 => $PWD/v/lib/libdtcomm.so.0 " &&
		test -f v/share/man/man1/dtrun.1
	'

	test_expect_success 'pip install . with build isolation needs nothing from a registry' '
		clone src &&
		/usr/bin/python3 -m venv v &&
		v/bin/pip install -q --no-index --no-cache-dir ./src &&
		v/bin/dtrun -n 1 true
	'
fi

test_expect_success 'make install as a user, without PREFIX: into ~/.local' '
	D=$(mktemp -d /tmp/dtrun-XXXX) &&
	test_at_exit "rm -rf $D" &&
	chmod 755 "$D" &&
	clone "$D/src" &&
	mkdir "$D/home" && chown 65534:65534 "$D/home" &&
	setpriv --reuid=65534 --regid=65534 --clear-groups env HOME="$D/home" \
	    make -s -C "$D/src" install >out 2>&1 &&
	test -x "$D/home/.local/bin/dtrun" && test -x "$D/home/.local/bin/dtrun-agent" &&
	test -f "$D/home/.local/lib/pkgconfig/dtcomm.pc" &&
	test -f "$D/home/.local/include/dtcomm.h" &&
	setpriv --reuid=65534 --regid=65534 --clear-groups env HOME="$D/home" \
	    sh -c "cd / && /usr/bin/python3 -c \"import dtrun_progress; print(dtrun_progress.__file__)\"" >where &&
	grep -q "^$D/home/.local/lib/python3[.0-9]*/site-packages/dtrun_progress.py$" where &&
	setpriv --reuid=65534 --regid=65534 --clear-groups env -u DTRUN_AGENT HOME="$D/home" \
	    sh -c "cd / && $D/home/.local/bin/dtrun -n 2 true"
'

test_expect_success 'the demo ends saying where dtrun is and how to put it on PATH' '
	sh "$SRC/examples/demo.sh" "$B" >out 2>&1 &&
	grep -qx "dtrun is $B/dtrun. To type plain \"dtrun\", put it on your PATH:" out &&
	grep -qx "  export PATH=\"$B:\$PATH\"" out
'

test_done
