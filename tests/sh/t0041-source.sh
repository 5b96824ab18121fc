#!/bin/bash
# t0041-source.sh -- rules of the source tree that no compiler checks: no
# function over FUNC_MAX lines (past the known exceptions, which may only
# shrink), libraries never use the allocators that exit, secrets are
# wiped with explicit_bzero, never memset (which the compiler may drop),
# and no type name means two things.
. "$(dirname "$0")/lib.sh"

FUNC_MAX=120

# Functions still over FUNC_MAX, with the most lines each may have. Split
# one and lower (or drop) its line; never raise one or add a new one.
# (None left: sshc_step, job_run and job_host_frame were split.)
: >"$TRASH/known-long"

test_expect_success "no function in src/ is over $FUNC_MAX lines, past the known ones" '
	(cd "$SRC" && find src -name "*.c" | sort | xargs awk -f tests/sh/funclen.awk) >len &&
	test $(wc -l <len) -gt 500 &&
	awk -v max=$FUNC_MAX "
	FILENAME == ARGV[1] { known[\$1 \" \" \$2] = \$3; next }
	{
		k = \$2 \" \" \$3
		if (k in known) {
			if (\$1 > known[k]) {
				printf \"%s: %s has %d lines, more than the %d it had: split it, do not grow it\n\", \$2, \$3, \$1, known[k]
				bad = 1
			} else if (\$1 <= max)
				printf \"note: %s: %s is down to %d lines: drop it from t0041-source.sh known-long\n\", \$2, \$3, \$1
			else if (\$1 < known[k])
				printf \"note: %s: %s is down to %d lines: lower its number in t0041-source.sh known-long\n\", \$2, \$3, \$1
		} else if (\$1 > max) {
			printf \"%s: %s has %d lines (over %d): split it into functions that each do one thing\n\", \$2, \$3, \$1, max
			bad = 1
		}
	}
	END { exit bad }" "$TRASH/known-long" len
'

# The libraries: src/common, src/hostfile, src/rendezvous, src/comm,
# src/proto, and
# the agent's pieces that dtrun links too (all of src/agent but main.c).
lib_files() {
	(cd "$SRC" && ls src/common/*.[ch] src/hostfile/*.[ch] src/rendezvous/*.[ch] \
	    src/comm/*.[ch] src/proto/*.[ch] src/agent/*.[ch] | grep -v "^src/agent/main\.c$")
}

test_expect_success 'library code never uses the allocators that exit (xmalloc.h, strv.h)' '
	lib_files >libs &&
	test $(wc -l <libs) -gt 40 &&
	(cd "$SRC" && grep -nE "\<x(malloc|calloc|realloc|reallocarray|strdup|strndup|asprintf)\(|#include \"(xmalloc|strv)\.h\"|struct strv\>" $(cat "$OLDPWD/libs")) >found || true &&
	if test -s found; then
		echo "library code must return DT_ERR_NOMEM, not exit: use malloc and friends here" &&
		cat found &&
		false
	fi
'

test_expect_success 'secrets are wiped with explicit_bzero, never memset' '
	(cd "$SRC" && grep -rnE "memset\([^,]*(secret|tok|key|pad|want|inner|mac|nonce)[^,]*, *0" src) >found || true &&
	if test -s found; then
		echo "use explicit_bzero: a memset before free or return may be optimized away" &&
		cat found &&
		false
	fi
'

test_expect_success 'one name per thing: no struct, union or enum tag is defined twice in src/' '
	(cd "$SRC" && grep -rhoE "^(struct|union|enum) [A-Za-z_0-9]+ \{" src) | sort | uniq -d >twice &&
	if test -s twice; then
		echo "defined in two places (rename one, or share one definition):" &&
		cat twice &&
		false
	fi
'

test_done
