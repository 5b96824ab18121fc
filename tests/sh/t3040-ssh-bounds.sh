#!/bin/bash
# t3040-ssh-bounds.sh -- over ssh: a remote command that prints a few bytes
# and hangs before the agent's HELLO hits ConnectTimeout and is named; and
# command lines and environments as big as execve takes reach the ranks.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/sshd.sh"
. "$(dirname "$0")/bounds-lib.sh"

if why=$(sshd_skip_reason); then
	test_skip 'ssh bounds scenarios' "$why"
	test_done
fi
# On 127.0.0.3 every command is replaced by two bytes and a wait for stdin
# (which ends when dtrun goes), or an exit while $TRASH/eof exists: a
# ForceCommand that is not the agent.
SSHD_EXTRA_CONFIG="Match LocalAddress 127.0.0.3
	ForceCommand printf ab; [ -e $TRASH/eof ] || exec cat >/dev/null"
sshd_start || { echo "could not start sshd"; exit 1; }
SSH_ARGS+=(--ssh-agent-dir "$TRASH/agents")

# (timeout only keeps a launcher that waits forever from hanging the suite.
# ConnectTimeout covers every step until HELLO: 5 s, not 1, so a loaded
# machine still reaches the HELLO phase before it runs out.)
test_expect_success 'two bytes then silence: ConnectTimeout names the host and the phase' '
	test_expect_code 255 timeout -k 5 120 dtrun "${SSH_ARGS[@]}" --ssh-option ConnectTimeout=5 -H 127.0.0.2,127.0.0.3 true 2>err &&
	grep -q "^dtrun: 127.0.0.3: timed out after 5 s waiting for the agent.s HELLO (ConnectTimeout); the remote command sent \"ab\" instead" err
'

test_expect_success 'two bytes then the end: the host named at once, not after ConnectTimeout' '
	touch "$TRASH/eof" &&
	test_expect_code 255 timeout -k 5 120 dtrun "${SSH_ARGS[@]}" --ssh-option ConnectTimeout=600 -H 127.0.0.2,127.0.0.3 true 2>err &&
	rm "$TRASH/eof" &&
	grep -q "^dtrun: 127.0.0.3: the ssh channel closed inside a frame, after \"ab\" (a login banner, or a ForceCommand?)" err
'

test_expect_success '100,000 arguments reach ranks on two hosts intact' '
	big_args_ok "${SSH_ARGS[@]}" -H 127.0.0.1,127.0.0.2
'

test_expect_success 'ten 120 KB -x values reach ranks on two hosts intact' '
	big_env_ok "${SSH_ARGS[@]}" -H 127.0.0.1,127.0.0.2
'

test_done
