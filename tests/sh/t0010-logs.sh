#!/bin/bash
# t0010-logs.sh -- forwarded output: nothing lost, nothing mangled, whatever the load.
. "$(dirname "$0")/lib.sh"

test_expect_success '4 ranks x 20,000 lines arrive whole and in order' '
	dtrun -n 4 sh -c "seq -f \"line %g of rank \$RANK padding padding padding\" 1 20000" >out &&
	test $(wc -l <out) -eq 80000 &&
	for r in 0 1 2 3; do
		grep "^\[$r\] " out >r$r &&
		seq -f "[$r] line %g of rank $r padding padding padding" 1 20000 >want$r &&
		cmp r$r want$r || exit 1
	done
'

test_expect_success 'a 200 KiB line arrives intact' '
	head -c 204800 /dev/zero | tr "\0" x >line &&
	echo >>line &&
	dtrun -n 2 cat "$PWD/line" >out &&
	test $(wc -l <out) -eq 2 &&
	grep "^\[1\] " out | cut -c5- >got &&
	cmp got line
'

test_expect_success 'long lines from several ranks never interleave' '
	head -c 100000 /dev/zero | tr "\0" a >la && echo >>la &&
	dtrun -n 4 sh -c "for i in 1 2 3 4 5; do cat \"$PWD/la\"; done" >out &&
	test $(wc -l <out) -eq 20 &&
	awk "/^\[[0-3]\] a+\$/ && length(\$0) == 100004 { n++ } END { exit n != 20 }" out
'

test_expect_success 'everything written just before failing is delivered' '
	test_expect_code 7 dtrun -n 3 sh -c "[ \$RANK = 1 ] || exec sleep 30; seq 1 5000; exit 7" >out 2>/dev/null &&
	grep "^\[1\] " out | cut -c5- >r1 && seq 1 5000 >want && cmp r1 want
'

test_expect_success 'output of a rank that is killed is delivered up to its death' '
	test_expect_code 137 dtrun sh -c "seq 1 3000; kill -9 \$\$" >out 2>/dev/null &&
	test $(wc -l <out) -eq 3000 && tail -n 1 out | grep -qx "\[0\] 3000"
'

test_expect_success 'a slow reader loses nothing (back-pressure)' '
	dtrun -n 2 sh -c "seq 1 200000" | (sleep 2; cat) >out &&
	test $(wc -l <out) -eq 400000 &&
	grep "^\[1\] " out | cut -c5- >r1 && seq 1 200000 >want && cmp r1 want
'

# nbpipe.py CMD... -- runs CMD with its stdout a pipe already non-blocking
# (as an asyncio parent leaves it), read only after a second; passes it on.
cat >"$TRASH/nbpipe.py" <<'EOS'
import os, subprocess, sys, time
r, w = os.pipe()
os.set_blocking(w, False)
p = subprocess.Popen(sys.argv[1:], stdout=w)
os.close(w)
time.sleep(1)
sys.stdout.buffer.write(os.fdopen(r, "rb").read())
sys.exit(p.wait())
EOS

test_expect_success 'a stdout left non-blocking by the parent loses nothing either' '
	{ command -v python3 >/dev/null || skip_test "no python3"; } &&
	python3 "$TRASH/nbpipe.py" dtrun -n 2 sh -c "seq 1 100000" >out &&
	test $(wc -l <out) -eq 200000 &&
	grep "^\[1\] " out | cut -c5- >r1 && seq 1 100000 >want && cmp r1 want
'

test_expect_success 'a reader that goes away does not hang dtrun' '
	dtrun -n 2 sh -c "seq 1 100000" | head -n 3 >out &&
	test $(wc -l <out) -eq 3
'

test_expect_success 'binary and CRLF bytes pass through unchanged' '
	printf "a\r\nb\001c\n" >want.raw &&
	dtrun --prefix "" cat "$PWD/want.raw" >out &&
	cmp out want.raw
'

test_expect_success 'an empty prefix with 2 ranks still keeps lines whole' '
	dtrun -n 2 --prefix "" sh -c "seq 1 10000" >out &&
	test $(wc -l <out) -eq 20000 &&
	test $(grep -cvE "^[0-9]+\$" out) -eq 0
'

test_expect_success '--output-dir and forwarding together' '
	dtrun -n 2 --output-dir o sh -c "seq 1 1000; echo err >&2" >out 2>err &&
	seq 1 1000 >want && cmp o/rank.0/stdout want && cmp o/rank.1/stdout want &&
	test $(wc -l <out) -eq 2000 && test $(grep -c err err) -eq 2
'

# A pipe dtrun writes to holds 1 MiB (the usual 64 KiB has dtrun and its
# reader take turns 16 times as often); the reader looks once it has read all.
test_expect_success 'the pipes dtrun writes to are grown to 1 MiB, every line there' '
	dtrun -n 2 sh -c "seq 1000; seq 10 >&2" 2>&1 | python3 -c "import sys, fcntl; n = sum(1 for _ in sys.stdin); print(n, fcntl.fcntl(0, 1032))" >got &&
	echo "2020 1048576" >want &&
	diff want got
'

test_expect_success '--escape-output: no control character reaches the terminal' '
	printf "x\033[31my\nz\000w\n" >hostile &&
	dtrun -n 1 --escape-output --output-dir o cat hostile >out &&
	printf "[0] x\\\\x1b[31my\n[0] z\\\\x00w\n" >want &&
	cmp want out &&
	cmp hostile o/rank.0/stdout
'

test_expect_success 'dtrun-kill -H has dtrun escape the hosts'"'"' replies' '
	mkdir bin && cp "$B/dtrun-kill" bin/ &&
	printf "#!/bin/sh\necho \"\$@\" >%s/args\n" "$PWD" >bin/dtrun &&
	chmod +x bin/dtrun &&
	bin/dtrun-kill -H 127.0.0.1 some-job &&
	grep -q -- "--escape-output" args
'

test_done
