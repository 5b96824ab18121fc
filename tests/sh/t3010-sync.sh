#!/bin/bash
# t3010-sync.sh -- --sync-dst-dir: rsync this directory to every host, then
# run there. The loopback "hosts" share one filesystem, so each test puts
# %h (the host) in the destination.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/sshd.sh"

if why=$(sshd_skip_reason); then
	test_skip 'directory sync scenarios' "$why"
	test_done
fi
if ! command -v rsync >/dev/null; then
	test_skip 'directory sync scenarios' 'no rsync (apt-get install rsync)'
	test_done
fi
sshd_start || { echo "could not start sshd"; exit 1; }
SSH_ARGS+=(--ssh-agent-dir "$TRASH/agents")
H2=127.0.0.2,127.0.0.3

# mksrc -- a source tree: two files, a subdirectory, and things to exclude.
mksrc() {
	mkdir -p src/sub src/.git src/data &&
	echo one >src/a.txt && echo two >src/sub/b.txt &&
	echo git >src/.git/HEAD && echo big >src/data/big.bin &&
	echo log >src/x.log
}

test_expect_success 'a fresh directory on 2 hosts: ranks see the files and run there' '
	mksrc && cd src &&
	dtrun "${SSH_ARGS[@]}" -H $H2 --sync-dst-dir "$PWD/../dst-%h/job" --prefix "%h " \
	    sh -c "pwd; cat a.txt sub/b.txt" >../out 2>../err &&
	cd .. &&
	for h in 127.0.0.2 127.0.0.3; do
		grep -qx "$h $PWD/dst-$h/job" out &&
		test "$(grep -c "^$h \(one\|two\)\$" out)" -eq 2 &&
		cmp src/sub/b.txt dst-$h/job/sub/b.txt || exit 1
	done &&
	grep -q "synced this directory to .* on 2 hosts" err
'

test_expect_success 'excludes are honoured (command line and engine.yaml together)' '
	mksrc &&
	cat >job.yaml <<-EOF &&
	command: ls -A
	hosts: [127.0.0.2]
	launcher: ssh
	sync:
	  dst: $PWD/dst-%h
	  exclude: [.git, "*.log"]
	EOF
	cd src && dtrun "${SSH_ARGS[@]}" -f ../job.yaml --sync-exclude data --prefix "" >../out &&
	cd .. && sort out >got && printf "a.txt\nsub\n" >want && diff want got &&
	test ! -e dst-127.0.0.2/.git && test ! -e dst-127.0.0.2/data
'

test_expect_success '--delete removes files the source no longer has' '
	mksrc && mkdir -p dst-127.0.0.3 && echo stale >dst-127.0.0.3/stale.txt &&
	cd src && dtrun "${SSH_ARGS[@]}" -H 127.0.0.3 --sync-dst-dir "$PWD/../dst-%h" true &&
	cd .. && test ! -e dst-127.0.0.3/stale.txt && test -e dst-127.0.0.3/a.txt &&
	rm src/a.txt && cd src &&
	dtrun "${SSH_ARGS[@]}" -H 127.0.0.3 --sync-dst-dir "$PWD/../dst-%h" true &&
	cd .. && test ! -e dst-127.0.0.3/a.txt
'

test_expect_success 'a failing sync names the host and rsync'"'"'s message; nothing starts' '
	mksrc && echo "not a dir" >blocked-127.0.0.3 &&
	cd src &&
	test_expect_code 2 dtrun "${SSH_ARGS[@]}" -H 127.0.0.1,$H2 --sync-dst-dir "$PWD/../blocked-%h/job" \
	    sh -c "touch $PWD/../ran.\$RANK; sleep 300" 2>../err &&
	cd .. && cat err &&
	grep -q "^dtrun: 127.0.0.3: sync to .*/blocked-%h/job failed (rsync exit [0-9]*): .*Not a directory" err &&
	! ls ran.* 2>/dev/null
'

# The agent's connection or the sync's, whichever fails first, names it.
test_expect_success 'an unreachable host: named, exit 255, nothing starts' '
	mksrc && cd src &&
	test_expect_code 255 dtrun "${SSH_ARGS[@]}" -H 127.0.0.2,127.0.0.9 --sync-dst-dir "$PWD/../d-%h" \
	    sh -c "touch $PWD/../ran.\$RANK" 2>../err &&
	cd .. && grep -q "^dtrun: 127.0.0.9: .*Connection refused" err &&
	! ls ran.* 2>/dev/null
'

test_expect_success 'quoting: spaces and quotes in the destination and the key path' '
	mksrc && mkdir "key dir" && cp "$SSH_KEY" "key dir/it'"'"'s key" &&
	cd src &&
	dtrun --launcher ssh -p "$SSHD_PORT" -i "$PWD/../key dir/it'"'"'s key" \
	    --ssh-option UserKnownHostsFile="$SSH_KNOWN" --ssh-agent-dir "$TRASH/agents" \
	    -H 127.0.0.2 --sync-dst-dir "$PWD/../we'"'"'re here \$HOME-%h" --prefix "" pwd >../out &&
	cd .. && grep -qx "$PWD/we'"'"'re here \$HOME-127.0.0.2" out &&
	test -e "we'"'"'re here \$HOME-127.0.0.2/sub/b.txt"
'

test_expect_success 'the ssh options come from the same resolution as dtrun'"'"'s own' '
	cat >config <<-EOC &&
	Host node-b
	    HostName 127.0.0.2
	    User root
	    Port $SSHD_PORT
	    IdentityFile $SSH_KEY
	    UserKnownHostsFile $SSH_KNOWN
	EOC
	mksrc && cd src &&
	dtrun --ssh-agent-dir "$TRASH/agents" -F ../config -H node-b --sync-dst-dir "$PWD/../d-%h" true &&
	cd .. && test -e d-node-b/a.txt
'

test_expect_success 'an unknown host key stops the sync too (StrictHostKeyChecking yes)' '
	mksrc && : >known && cd src &&
	test_expect_code 255 dtrun --launcher ssh -p "$SSHD_PORT" -i "$SSH_KEY" \
	    --ssh-option UserKnownHostsFile=$PWD/../known -H 127.0.0.2 \
	    --sync-dst-dir "$PWD/../d-%h" true 2>../err &&
	cd .. && test ! -e d-127.0.0.2/a.txt && grep -q "127.0.0.2" err
'

test_expect_success 'usage errors: excludes without a directory, a home directory' '
	test_expect_code 2 dtrun --sync-exclude x -H 127.0.0.2 true 2>err &&
	grep -q "needs --sync-dst-dir" err &&
	test_expect_code 2 dtrun --sync-dst-dir "~/" -H 127.0.0.2 true 2>err &&
	grep -q "refusing to sync into a root or home directory" err &&
	test_expect_code 2 dtrun --sync-dst-dir "$HOME" -H 127.0.0.2 true 2>err
'

test_expect_success 'the local launcher syncs too, and runs in the copy' '
	mksrc && cd src &&
	dtrun -n 2 --sync-dst-dir ../copy --sync-exclude data --prefix "" pwd >../out &&
	cd .. && test "$(sort -u out)" = "$PWD/copy" && test ! -e copy/data && test -e copy/a.txt
'

test_done
