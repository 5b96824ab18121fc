#!/bin/bash
# t0040-docs.sh -- the man pages and the bash, zsh and fish completions
# offer exactly the options of dtrun's option table (and dtrun-kill's),
# each with a value where the table says it takes one; make install puts
# everything in place.
. "$(dirname "$0")/lib.sh"

# The option tables (src/launcher/cli/opttable.c; dtrun-kill's own and the
# rows it takes from dtrun's) as "OPTION value|none", one line per
# spelling, short letters too. -np and -npernode are dtrun's -n with "p" or
# "pernode" glued on (cli.c), so the docs name them and the table does not.
table_opts() {
	"$1" --list-options | awk '{ print $1, $3; if ($2 != "-") print $2, $3 }
	    END { if (p == "dtrun") { print "-np value"; print "-npernode value" } }' p="$1" | sort
}

# What DOC offers for PROG, as "OPTION value|none" (tests/sh/docopts.awk).
doc_opts() {
	awk -v kind="$1" -v prog="$3" -v fn="$(echo "$3" | tr - _)" \
	    -f "$SRC/tests/sh/docopts.awk" "$SRC/$2" | sort
}

# Compares DOC's options for PROG with the table; prints what differs.
check_doc() {
	table_opts "$3" >want &&
	doc_opts "$1" "$2" "$3" >got &&
	if test "$1" = bash && test "$3" = dtrun-kill; then
		# Its list is long options only, and says nothing of values.
		grep -- "^--" want | cut -d" " -f1 >w && cut -d" " -f1 got >g &&
		mv w want && mv g got
	fi &&
	diff want got >d || {
		echo "$2 disagrees with $3 --list-options (< only in the table, > only in $2):"
		grep "^[<>]" d
		return 1
	}
}

dtrun --list-options >"$TRASH/opts"

test_expect_success '--list-options lists the table at all' '
	test $(wc -l <"$TRASH/opts") -ge 60 &&
	test $(dtrun-kill --list-options | wc -l) -ge 12 &&
	grep -qx -- "--ssh-port -p value ssh.port" "$TRASH/opts" &&
	dtrun-kill --list-options | grep -qx -- "--ssh-port -p value ssh.port"
'

for doc in man:man/dtrun.1 bash:completions/dtrun.bash zsh:completions/_dtrun fish:completions/dtrun.fish; do
	test_expect_success "${doc#*:} offers exactly dtrun's options, values where they take one" '
		check_doc ${doc%%:*} ${doc#*:} dtrun
	'
done

for doc in man:man/dtrun-kill.1 bash:completions/dtrun.bash zsh:completions/_dtrun fish:completions/dtrun.fish; do
	test_expect_success "${doc#*:} offers exactly dtrun-kill's options" '
		check_doc ${doc%%:*} ${doc#*:} dtrun-kill
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

test_expect_success '--help names dtrun top and dtrun-kill' '
	dtrun --help >out &&
	grep -q "^ *dtrun top" out && grep -q "^ *dtrun-kill" out
'

test_expect_success 'the man page and --help give -n the same default' '
	dtrun --help | grep -q -- "--np N.*default: every slot; 1 locally" &&
	sed -n "/^\.It Fl n Ar N , Fl -np/,/^\.It/p" "$SRC/man/dtrun.1" >n &&
	grep -q "default: every slot of the hosts; 1 without hosts" n
'

test_expect_success 'the man pages refer only to pages that exist, each once in SEE ALSO' '
	for m in "$SRC"/man/*.[0-9]; do
		grep -o "^\.Xr \(dtrun\|dtcomm\)[^ ]* [0-9]" "$m" | sort -u | while read -r xr name sec; do
			test -f "$SRC/man/$name.$sec" || { echo "$m: no $name($sec)"; exit 1; }
		done || return 1
		sed -n "/^\.Sh SEE ALSO/,/^\.Sh/p" "$m" | grep "^\.Xr" | sort | uniq -d >dup &&
		{ test ! -s dup || { echo "$m: twice: $(cat dup)"; return 1; }; }
	done
'

test_expect_success 'DTRUN_PROGRESS and DTRUN_RDZV_ADDR are listed with the DTRUN_ variables, not Horovod'"'"'s' '
	sed -n "/^what horovodrun gives each process/,/^\.El/p" "$SRC/man/dtrun.1" >hvd &&
	grep -q HOROVOD_RANK hvd && ! grep -q "DTRUN_" hvd &&
	sed -n "/^\.It Ev DTRUN_RANK\$/,/^\.El/p" "$SRC/man/dtrun.1" >own &&
	grep -q "^\.It Ev DTRUN_PROGRESS" own && grep -q "^\.It Ev DTRUN_RDZV_ADDR" own
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
