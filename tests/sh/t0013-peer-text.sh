#!/bin/bash
# t0013-peer-text.sh -- what a peer says reaches the terminal as its words,
# never as ours: an agent's ERROR text (with a failed setup's lines) cannot
# start a line that poses as dtrun's.
. "$(dirname "$0")/lib.sh"

# fake-agent.py VERSION MSG -- stands in for dtrun-agent (DTRUN_AGENT, local
# backend: the stream is its stdin and stdout): says HELLO as "fakehost",
# then ERROR 70 with MSG (\n in it a newline) and DONE, then waits for
# the end.
cat >"$TRASH/fake-agent.py" <<'EOS'
#!/usr/bin/env python3
import os, struct, sys
ver = int(sys.argv[1])
msg = sys.argv[2].replace("\\n", "\n").encode()
def s(b): return struct.pack(">I", len(b)) + b
def frame(t, p): return struct.pack(">IB", 1 + len(p), t) + p
out = frame(64, struct.pack(">I", ver) + s(b"fakehost") + struct.pack(">II", os.getpid(), 0))
out += frame(69, struct.pack(">II", 0xffffffff, 70) + s(msg)) + frame(70, b"")
os.write(1, out)
while os.read(0, 65536):
	pass
EOS
chmod +x "$TRASH/fake-agent.py"
VER=$(dtrun-agent --version | sed -n 's/.* protocol \([0-9]*\)$/\1/p')

# error_of MSG -- runs dtrun with a fake agent that sends MSG; its stderr in err.
error_of() {
	printf '#!/bin/sh\nexec python3 "%s" %s "%s"\n' "$TRASH/fake-agent.py" \
	    "$VER" "$1" >agent &&
	chmod +x agent &&
	test_expect_code 70 env DTRUN_AGENT=$PWD/agent dtrun true 2>err &&
	cat err
}

test_expect_success 'a newline in an agent ERROR does not start a line of ours' '
	error_of "fakehost: boom\\njob finished in 1 s, exit 0\\ndtrun: all good" &&
	grep -qF "dtrun: fakehost: boom\\njob finished in 1 s, exit 0\\ndtrun: all good" err &&
	! grep -q "^dtrun: job finished" err &&
	! grep -q "^dtrun: all good" err
'

test_expect_success 'an ERROR line that names the agent (a setup line) keeps its own line' '
	error_of "fakehost: --setup exited with 3\\nfakehost: setup: no venv\\nfakehost: setup: x\\ny" &&
	grep -qx "dtrun: fakehost: --setup exited with 3" err &&
	grep -qx "dtrun: fakehost: setup: no venv" err &&
	grep -qxF "dtrun: fakehost: setup: x\\ny" err
'

test_done
