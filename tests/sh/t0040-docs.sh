#!/bin/bash
# t0040-docs.sh -- --help, the man page and the bash, zsh and fish completions
# name the same long options; make install puts everything in place.
. "$(dirname "$0")/lib.sh"

# torchrun's spellings have underscores (--nproc_per_node).
dtrun --help | grep -oE -- "--[a-z][a-z_-]+" | sort -u >"$TRASH/opts"

test_expect_success '--help lists options at all' '
	test $(wc -l <"$TRASH/opts") -ge 14
'

for doc in man/dtrun.1 completions/dtrun.bash completions/_dtrun completions/dtrun.fish; do
	test_expect_success "every --help option is in $doc" '
		missing=
		while read -r o; do
			case $doc in
			*.1) pat="Fl -${o#--}( |\$)" ;;
			*.fish) pat="-l ${o#--}( |\$)" ;;
			*) pat="(^|[^a-z_-])$o([^a-z_-]|\$)" ;;
			esac
			grep -qE -- "$pat" "$SRC/$doc" || missing="$missing $o"
		done <"$TRASH/opts"
		test -z "$missing" || { echo "missing:$missing"; false; }
	'
done

test_expect_success 'the bash completion loads and offers options' '
	bash -c ". \"$SRC/completions/dtrun.bash\"; COMP_WORDS=(dtrun --la); COMP_CWORD=1; _dtrun; echo \${COMPREPLY[@]}" >out &&
	grep -qx -- "--launcher" out
'

test_expect_success 'the bash completion offers --framework values, also after a comma' '
	bash -c ". \"$SRC/completions/dtrun.bash\"; COMP_WORDS=(dtrun --framework pytorch,te); COMP_CWORD=2; _dtrun; echo \${COMPREPLY[@]}" >out &&
	grep -qx -- "pytorch,tensorflow" out
'

test_expect_success 'every --framework value is in the completions and the man page' '
	for f in $(dtrun --framework zzzzzzzzzz true 2>&1 | sed -n "s/.*known: \(.*\))/\1/p"); do
		grep -q "$f" "$SRC/completions/dtrun.bash" &&
		grep -q "$f" "$SRC/completions/_dtrun" &&
		grep -q "$f" "$SRC/completions/dtrun.fish" &&
		grep -q "^\.Cm $f" "$SRC/man/dtrun.1" || { echo "missing $f"; exit 1; }
	done
'

test_expect_success 'every promise in the README names tests that exist' '
	sed -n "/^## What dtrun promises/,/^## /p" "$SRC/README.md" >promises &&
	test $(grep -c "^[0-9]*\. \*\*" promises) -ge 10 &&
	grep -o "t[0-9][0-9][0-9][0-9]" promises | sort -u >named &&
	test -s named &&
	while read -r t; do
		ls "$SRC"/tests/sh/$t-*.sh >/dev/null || { echo "no $t"; return 1; }
	done <named &&
	# Every promise names at least one test.
	awk "/^[0-9]+\. /{ if (n && p !~ /t[0-9][0-9][0-9][0-9]/) bad = bad p; p = \"\"; n++ } n { p = p \$0 } END { if (p !~ /t[0-9][0-9][0-9][0-9]/) bad = bad p; if (bad != \"\") { print bad; exit 1 } }" promises
'

test_expect_success 'make install puts binaries, man pages and completions in place' '
	make -s -C "$SRC" B="$B" install PREFIX=/usr DESTDIR="$PWD/root" >/dev/null &&
	for f in bin/dtrun bin/dtrun-agent bin/dtrun-kill share/man/man1/dtrun.1 \
	    share/man/man1/dtrun-kill.1 share/bash-completion/completions/dtrun \
	    share/zsh/site-functions/_dtrun share/fish/vendor_completions.d/dtrun.fish \
	    lib/libdtcomm.so.0 include/dtcomm.h lib/pkgconfig/dtcomm.pc; do
		test -e "root/usr/$f" || { echo "missing $f"; exit 1; }
	done &&
	root/usr/bin/dtrun -n 2 true
'

test_done
