#!/bin/bash
# t0041-source.sh -- rules of the source tree that no compiler checks: no
# function over FUNC_MAX lines (past the known exceptions, which may only
# shrink), libraries never use the allocators that exit, secrets are
# wiped with explicit_bzero, never memset (which the compiler may drop),
# no type name means two things, each floor of src/ includes only the
# floors below it (and names them: "proto/phase.h"), no two modules need
# each other, and every function a header declares is used outside the
# file that defines it.
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

# The floors of src/, and what each may include besides itself. A library
# never reaches up into the binaries that use it; what the agent and the
# launcher share is src/host, so the launcher includes none of the agent's.
cat >"$TRASH/floors" <<'EOF'
common
util common
proto common
hostfile common
rendezvous common
store common rendezvous
comm common rendezvous
ncclprof common
host common
agent common proto host
launcher common util proto hostfile rendezvous store host
kill common util agent launcher host
EOF

# "FILE DIR HEADERDIR" for every #include "x.h" in src/ (x.h found by name:
# the first path that find lists with that last component). One awk pass;
# a find per include took most of this file's time.
src_includes() {
	(cd "$SRC" && find src -name "*.[ch]" | sort | xargs awk -v all="$(find src)" '
	BEGIN {
		n = split(all, p, "\n")
		for (i = 1; i <= n; i++) {
			b = p[i]
			sub(/.*\//, "", b)
			if (!(b in first))
				first[b] = p[i]
		}
	}
	FNR == 1 { split(FILENAME, d, "/") }
	/^#include ".*"/ {
		# What sed s/^#include "\(.*\)"/\1/ left, as read -r and basename see it.
		h = $0
		sub(/^#include "/, "", h)
		i = match(h, /"[^"]*$/)
		h = substr(h, 1, i - 1) substr(h, i + 1)
		gsub(/^[ \t]+|[ \t]+$/, "", h)
		sub(/\/+$/, "", h)
		sub(/.*\//, "", h)
		if (!(h in first))
			next
		split(first[h], hd, "/")
		print FILENAME, d[2], hd[2]
	}')
}

test_expect_success 'each floor of src/ includes only the floors below it' '
	src_includes >inc &&
	test $(wc -l <inc) -gt 300 &&
	awk "NR == FNR { for (i = 1; i <= NF; i++) ok[\$1 \" \" \$i] = 1; next }
	\$2 != \$3 && !((\$2 \" \" \$3) in ok) {
		printf \"%s includes a header of src/%s: src/%s may include only its own and the floors below (t0041)\n\", \$1, \$3, \$2
		bad = 1
	}
	END { exit bad }" "$TRASH/floors" inc
'

# The rooms of src/launcher (README's layout), each a folder, and the rooms
# each may include besides itself: cli < plan < job (the core: agents,
# phases, fail-fast, the job's end) < the backends and the features. main.c
# alone, above them all, may include any.
cat >"$TRASH/rooms" <<'EOF'
cli
plan cli
job cli plan
backend cli plan job
stacks cli plan job
output cli plan job stacks
watch cli plan job stacks
sync cli plan job backend
check cli plan job backend sync
store cli plan job
EOF
# "ROOM FILE": a file of src/launcher outside its rooms, or one over 1,000
# lines.
launcher_loose() {
	(cd "$SRC/src/launcher" && for f in *; do
		test "$f" = main.c || test -d "$f" ||
		    echo "src/launcher/$f: move it into the room it belongs to (README: Layout)"
	done
	wc -l *.c */*.[ch] | awk '$2 != "total" && $1 > 1000 {
		printf "src/launcher/%s has %d lines (over 1,000): split it by what it does\n", $2, $1 }')
}

test_expect_success 'src/launcher is its rooms and main.c; no file of it over 1,000 lines' '
	(cd "$SRC" && ls src/launcher) >top &&
	test $(grep -c . top) -ge 9 &&
	grep -qx main.c top &&
	launcher_loose >loose &&
	if test -s loose; then
		cat loose &&
		false
	fi
'

# "ROOM HEADERROOM FILE" for each #include "launcher/ROOM/x.h" in a room.
room_arrows() {
	(cd "$SRC" && grep -HoE '^#include "launcher/[a-z]+/' src/launcher/*/*.[ch]) |
	    sed 's,^src/launcher/\([a-z]*\)/\([^:]*\):#include "launcher/\([a-z]*\)/,\1 \3 \2,' |
	    sort -u
}

# Says which arrows go up.
room_check() {
	awk 'FILENAME ~ /rooms$/ { for (i = 1; i <= NF; i++) ok[$1 " " $i] = 1; next }
	$1 != $2 && !(($1 " " $2) in ok) {
		printf "src/launcher/%s/%s includes a header of %s/: %s/ may include only the rooms below it (t0041 rooms)\n", $1, $3, $2, $1
	}' "$TRASH/rooms" -
}

test_expect_success 'each room of src/launcher includes only the rooms below it' '
	room_arrows >arrows &&
	test $(wc -l <arrows) -gt 100 &&
	room_check <arrows >up &&
	if test -s up; then
		cat up &&
		false
	fi
'

# The features live on the core's hooks (job/hooks.h): each one defined
# is listed in main.c's job_features, and none reads a host's phase, the
# core's own (agents.h host_hello and host_done say what they may know).
test_expect_success 'every feature is on the hooks list; only the core reads a host phase' '
	(cd "$SRC" && grep -ho "^const struct job_feature [a-z_]*" src/launcher/*/*.c) |
	    sed "s/.* //" | sort >defined &&
	test $(wc -l <defined) -ge 5 &&
	sed -n "/^static const struct job_feature \*const job_features/,/^};/p" \
	    "$SRC/src/launcher/main.c" | grep -o "&[a-z_]*" | tr -d "&" | sort >listed &&
	comm -23 defined listed >unlisted &&
	if test -s unlisted; then
		sed "s/^/not in main.c job_features: /" unlisted &&
		false
	fi &&
	{ (cd "$SRC" && grep -n "\(->\|\.\)at\.\(phase\|hello\)" src/launcher/*/*.c) |
	    grep -v "^src/launcher/job/" || true; } >peek &&
	if test -s peek; then
		sed "s/\$/: use host_hello or host_done (agents.h)/" peek &&
		false
	fi
'

# "FILE HEADER" for every #include "x.h" without its folder, where some
# src/DIR/x.h exists: it should say "DIR/x.h", so a reader (and the floor
# rule above) sees where it comes from.
bare_includes() {
	(cd "$SRC" && find src tests/unit tests/helpers fuzz bench -name "*.[ch]" |
	    sort | xargs awk -v all="$(printf "%s\n" src/*/* src/launcher/*/*.h)" '
	BEGIN {
		# The first src/DIR/NAME of each NAME (src/launcher/ROOM/NAME:
		# DIR is launcher/ROOM), in the order of the globs.
		n = split(all, p, "\n")
		for (i = 1; i <= n; i++) {
			m = split(p[i], q, "/")
			d = q[2]
			for (j = 3; j < m; j++)
				d = d "/" q[j]
			if (!(q[m] in dir))
				dir[q[m]] = d
		}
	}
	/^#include "[^\/"]*"/ {
		# The name, and what follows its quote, as read -r sees them.
		h = $0
		sub(/^#include "/, "", h)
		sub(/"/, "", h)
		gsub(/^[ \t]+|[ \t]+$/, "", h)
		if (h in dir)
			print FILENAME " includes \"" h "\": write \"" dir[h] "/" h "\" (t0041)"
	}')
}

test_expect_success 'a header of src/ is included with its folder' '
	bare_includes >bare &&
	if test -s bare; then
		cat bare &&
		false
	fi
'

# "A B" for every x.c of src/ that includes y.h (modules by name).
module_edges() {
	(cd "$SRC" && find src -name "*.c" | xargs awk '
	FNR == 1 {
		a = FILENAME
		sub(/.*\//, "", a)
		sub(/\.c$/, "", a)
	}
	match($0, /^#include "(.*\/)?[^\/"]*\.h"/) {
		# The name of y.h, and what follows its quote, as read -r sees them.
		b = substr($0, 1, RLENGTH - 3)
		sub(/.*[\/"]/, "", b)
		b = b substr($0, RLENGTH + 1)
		gsub(/^[ \t]+|[ \t]+$/, "", b)
		if (a != b)
			print a, b
	}') | sort -u
}

test_expect_success 'no two modules of src/ need each other, however far round' '
	module_edges >edges &&
	test $(wc -l <edges) -gt 200 &&
	if ! tsort edges >/dev/null 2>loop; then
		echo "a circle of modules (x.c includes y.h, ... includes x.h): cut it with a callback struct or a lower module" &&
		cat loop &&
		false
	fi
'

# "HEADER FUNCTION DEFINER" for every function a header of src/ declares
# (dtcomm.h, the installed API, aside); DEFINER is "none" if no .c has it
# (the first .c, in find's order, with a line "FUNCTION(").
header_functions() {
	(cd "$SRC" && hs=$(find src -name "*.h" ! -path src/comm/dtcomm.h | sort) &&
	    awk 'FNR == 1 { k++ }
		/^[ \t]*#/ || /^(typedef|struct [a-z_0-9]+ \{|enum|union|extern|static)/ { next }
		/^[A-Za-z]/ && match($0, /[A-Za-z_][A-Za-z0-9_]*\(/) {
			n = substr($0, RSTART, RLENGTH - 1)
			if (n != "__attribute__") print k, FILENAME, n
		}' $hs | sort -k1,1n -k3,3 -u |
	    awk 'match($0, /^[A-Za-z0-9_]+\(/) && FILENAME != "-" {
			n = substr($0, 1, RLENGTH - 1)
			if (FILENAME ~ /\.h$/)
				inl[FILENAME, n] = 1
			else if (!(n in def))
				def[n] = FILENAME
			next
		}
		FILENAME == "-" && !(($2, $3) in inl) { print $2, $3, ($3 in def) ? def[$3] : "none" }
		' $(find src -name "*.c") $hs -)
}

# Says why each "HEADER FUNCTION DEFINER" line on stdin is wrong, if it is:
# no file of src, tests/unit, tests/helpers or fuzz but its definer and its
# header has its name as a word (what grep -w finds).
unused_functions() {
	(cd "$SRC" && awk 'FILENAME == "-" { h[NR] = $1; fn[NR] = $2; def[NR] = $3; want[$2] = 1; n = NR; next }
	{
		gsub(/[^A-Za-z0-9_]+/, " ")
		for (i = 1; i <= NF; i++)
			if (($i in want) && !(($i, FILENAME) in in_file)) {
				in_file[$i, FILENAME] = 1
				files[$i] = files[$i] SUBSEP FILENAME
			}
	}
	END {
		for (k = 1; k <= n; k++) {
			if (def[k] == "none") {
				print h[k] ": " fn[k] " is declared but defined nowhere: remove it"
				continue
			}
			m = split(substr(files[fn[k]], 2), f, SUBSEP)
			used = 0
			for (i = 1; i <= m; i++)
				if (f[i] != def[k] && f[i] != h[k])
					used = 1
			if (!used)
				print h[k] ": " fn[k] " is used only in " def[k] ": make it static there"
		}
	}' - $(find src tests/unit tests/helpers fuzz -type f -name "*.[ch]"))
}

test_expect_success 'every function a header declares is defined, and used outside its own file' '
	header_functions >fns &&
	test $(wc -l <fns) -gt 300 &&
	unused_functions <fns >unused &&
	if test -s unused; then
		cat unused &&
		false
	fi
'

# "FILE MODULE" for each .c of src/ that includes a private header
# (DIR/NAMEint.h, DIR/ROOM/NAMEint.h): the files that share one are one module, NAMEint, as
# tmux's files share tmux.h; they may call each other.
private_modules() {
	(cd "$SRC" && grep -HoE '#include "[a-z/]+/[a-z_]+int\.h"' $(find src -name "*.c") |
	    sed 's,^\([^:]*\):#include ".*/\([a-z_]*\)\.h",\1 \2,')
}

# "A B" for every x.c of src/ that calls a function a header declares and
# y.c defines (modules by name, or their private header's): the edges the
# include rule cannot see, where two modules share one header and call
# each other through it.
call_edges() {
	private_modules >"$TRASH/private" &&
	(cd "$SRC" && awk '
	FILENAME == "-" { def[$2] = $3; next }
	FILENAME ~ /private$/ { mod[$1] = $2; next }
	FNR == 1 { m = name(FILENAME) }
	/^[ \t]*(\/?\*|\/\/)/ { next }	# a comment line
	{
		gsub(/(->|\.)[A-Za-z_][A-Za-z0-9_]*/, "")	# a member, not a call
		n = split($0, w, /[^A-Za-z0-9_]+/)
		for (i = 1; i <= n; i++)
			if ((w[i] in def) && def[w[i]] != FILENAME) {
				d = name(def[w[i]])
				if (d != m) print m, d
			}
	}
	function name(f,	b) {
		if (f in mod)
			return mod[f]
		b = f; sub(/.*\//, "", b); sub(/\.c$/, "", b)
		return b
	}' - "$TRASH/private" $(find src -name "*.c" | sort)) | sort -u
}

test_expect_success 'no two modules of src/ call each other, even through one header' '
	header_functions >fns &&
	call_edges <fns >edges &&
	test $(wc -l <edges) -gt 200 &&
	if ! tsort edges >/dev/null 2>loop; then
		echo "a circle of calls (x.c calls a function of y.c, ... y.c one of x.c): cut it with a callback struct or a lower module" &&
		cat loop &&
		false
	fi
'

test_done
