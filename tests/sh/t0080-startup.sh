#!/bin/bash
# t0080-startup.sh -- what a run loads. A local run maps neither libssh2 nor
# the libcrypto it pulls in (dlopen()ed at the first ssh host), nor the
# libraries linked in (libevent, libyaml, lz4); its agent maps only libc.
# Checked in /proc/PID/maps of the running processes, never by time. That
# ssh runs still work is t3000's and the other t3* tests' to say.
. "$(dirname "$0")/lib.sh"

# Libraries a local run must not map: the pattern for grep -E.
NOT_LOCAL='/lib(ssh2|crypto|event|yaml|lz4)[-.][^/]*$'

# A rank that says it is up (with its agent's pid), then waits for go.
cat >"$TRASH/hold.sh" <<'EOS'
#!/bin/sh
echo $PPID >agent.pid
while [ ! -e go ]; do sleep 0.05; done
EOS
chmod +x "$TRASH/hold.sh"

test_expect_success 'a local run maps no ssh, crypto or linked-in library' '
	dtrun -n 1 "$TRASH/hold.sh" & d=$! &&
	wait_for 10 test -s agent.pid &&
	cp /proc/$d/maps dtrun.maps &&
	cp /proc/$(cat agent.pid)/maps agent.maps &&
	touch go && wait $d &&
	grep -q "/dtrun$" dtrun.maps &&
	! grep -E "$NOT_LOCAL" dtrun.maps &&
	grep -q "/dtrun-agent$" agent.maps &&
	! grep -E "$NOT_LOCAL" agent.maps
'

# A flood of output puts the log path's heap on transparent huge pages
# (common/sys.c dt_heap_fed): a mapping advised MADV_HUGEPAGE ("hg" in
# smaps' VmFlags) in dtrun and in its agent once 128 KiB went through;
# none in a run that prints nothing (a 2 MiB page would cost it more).
hg() {
	grep -q "^VmFlags:.* hg" "$1"
}
if ldd "$(command -v dtrun)" 2>/dev/null | grep -q libasan; then
	test_skip 'a flood of output: dtrun and its agent advise their heap onto huge pages; a quiet run does not' 'a sanitizer build: its allocator is not the heap advised'
elif [ -r /sys/kernel/mm/transparent_hugepage/enabled ]; then
	test_expect_success 'a flood of output: dtrun and its agent advise their heap onto huge pages; a quiet run does not' '
		cat >flood.sh <<-\EOS &&
		#!/bin/sh
		echo $PPID >agent.pid
		head -c 1000000 /dev/zero | tr "\0" x | fold -w 79
		echo
		echo flooded
		while [ ! -e go ]; do sleep 0.05; done
		EOS
		chmod +x flood.sh &&
		test_at_exit "touch go" &&
		{ dtrun -n 1 ./flood.sh >out & } && d=$! &&
		wait_for 20 grep -q "^\[0\] flooded" out &&
		cp /proc/$d/smaps dtrun.smaps &&
		cp /proc/$(cat agent.pid)/smaps agent.smaps &&
		touch go && wait $d &&
		hg dtrun.smaps && hg agent.smaps &&
		rm -f go agent.pid &&
		{ dtrun -n 1 "$TRASH/hold.sh" & } && d=$! &&
		wait_for 10 test -s agent.pid &&
		cp /proc/$d/smaps dtrun.smaps &&
		cp /proc/$(cat agent.pid)/smaps agent.smaps &&
		touch go && wait $d &&
		! hg dtrun.smaps && ! hg agent.smaps
	'
else
	test_skip 'a flood of output: dtrun and its agent advise their heap onto huge pages; a quiet run does not' 'no transparent huge pages in this kernel'
fi

test_expect_success 'dtrun --version needs no library but libc' '
	LD_DEBUG=libs dtrun --version 2>libs >/dev/null &&
	grep -q "calling init: .*/libc\.so" libs &&
	! grep -E "calling init: .*$NOT_LOCAL" libs
'

# A libssh2.so.1 that dlopen finds first and cannot load.
mkdir -p "$TRASH/badlib" && echo "not a library" >"$TRASH/badlib/libssh2.so.1"

test_expect_success 'a local run starts where libssh2 cannot be loaded' '
	LD_LIBRARY_PATH=$TRASH/badlib dtrun -n 2 echo hi >out &&
	grep -q "^\[1\] hi" out
'

test_expect_success 'an ssh host without a loadable libssh2 names the library and package' '
	test_expect_code 2 env LD_LIBRARY_PATH=$TRASH/badlib \
	    dtrun --launcher ssh -H 127.0.0.2 true 2>err &&
	grep -q "libssh2\.so\.1" err &&
	grep -q "apt-get install libssh2-1" err
'

test_done
