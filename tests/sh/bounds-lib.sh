# bounds-lib.sh -- sourced by scenario tests (after lib.sh) that check that
# command lines and environments as big as execve takes reach every rank
# intact, whatever carries them.
#
#   big_args_ok DTRUN_ARGS...   2 ranks given 100,000 arguments
#   big_env_ok DTRUN_ARGS...    2 ranks given ten 120 KB -x values
# DTRUN_ARGS place the 2 ranks (-n 2, -H a,b...); each rank prints a checksum
# of what it got, which must be the one of what was given.

# Checksums of a rank's arguments, and of its BIG* variables.
cat >"$TRASH/sum-args.sh" <<'EOS'
#!/bin/sh
printf '%s\n' "$@" | md5sum
EOS
cat >"$TRASH/sum-env.sh" <<'EOS'
#!/bin/sh
env | grep '^BIG[0-9]=' | sort | md5sum
EOS
chmod +x "$TRASH/sum-args.sh" "$TRASH/sum-env.sh"

# both_ranks_got -- out has two lines, both the checksum in want.
both_ranks_got() {
	test $(wc -l <out) -eq 2 &&
	sort -u out >got &&
	cmp want got
}

big_args_ok() {
	seq 100000 | md5sum >want &&
	dtrun "$@" --prefix "" "$TRASH/sum-args.sh" $(seq 100000) >out &&
	both_ranks_got
}

big_env_ok() {
	v=$(head -c 122880 /dev/zero | tr "\0" a) &&
	for i in 0 1 2 3 4 5 6 7 8 9; do
		set -- "$@" -x "BIG$i=$v$i" || return 1
	done &&
	for i in 0 1 2 3 4 5 6 7 8 9; do
		echo "BIG$i=$v$i" || return 1
	done | md5sum >want &&
	dtrun "$@" --prefix "" "$TRASH/sum-env.sh" >out &&
	both_ranks_got
}
