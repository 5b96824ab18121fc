# sshd.sh -- sourced by ssh scenario tests (after lib.sh): a private sshd on
# 127.0.0.1, 127.0.0.2 and 127.0.0.3 at a high port, with fresh keys.
#
#   sshd_start          starts it; sets SSHD_PORT, SSH_KEY, SSH_KNOWN, SSH_DIR
#   dtrun_ssh ARGS...   dtrun with the ssh options that reach it
# SSHD_EXTRA_CONFIG, when set, is appended to its sshd_config (Match blocks).
# The daemon is stopped by its PID file when the test script exits.

sshd_skip_reason() {
	[ -x /usr/sbin/sshd ] || { echo "no /usr/sbin/sshd (apt-get install openssh-server)"; return 0; }
	command -v ssh-keygen >/dev/null || { echo "no ssh-keygen"; return 0; }
	return 1
}

sshd_start() {
	SSH_DIR=$TRASH/ssh
	mkdir -p "$SSH_DIR" /run/sshd
	chmod 700 "$SSH_DIR"
	ssh-keygen -q -t ed25519 -N "" -f "$SSH_DIR/host_ed25519" </dev/null || return 1
	ssh-keygen -q -t ed25519 -N "" -f "$SSH_DIR/id_ed25519" </dev/null || return 1
	cp "$SSH_DIR/id_ed25519.pub" "$SSH_DIR/authorized_keys"
	# SetEnv SHLVL=1: the user's shell, bash, runs each command of ours as a
	# nested shell, so it skips ~/.bashrc (bash reads it for sshd only at
	# level 1): a machine's dotfiles (a root pyenv init: 2 s of CPU) would
	# cost every connection, and the tests are of dtrun, not of them.
	# A port from the pid, away from the ephemeral range; retried on clashes.
	for try in 1 2 3 4 5; do
		SSHD_PORT=$((20000 + ($$ * 7 + try * 131) % 9000))
		cat >"$SSH_DIR/sshd_config" <<EOC
Port $SSHD_PORT
ListenAddress 127.0.0.1
ListenAddress 127.0.0.2
ListenAddress 127.0.0.3
HostKey $SSH_DIR/host_ed25519
PidFile $SSH_DIR/sshd.pid
AuthorizedKeysFile $SSH_DIR/authorized_keys
PermitRootLogin yes
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
MaxStartups 200:30:400
MaxSessions 100
LogLevel ERROR
AcceptEnv NONE
SetEnv SHLVL=1
${SSHD_EXTRA_CONFIG:-}
EOC
		rm -f "$SSH_DIR/sshd.pid"
		/usr/sbin/sshd -f "$SSH_DIR/sshd_config" -E "$SSH_DIR/sshd.log" || continue
		wait_for 5 test -s "$SSH_DIR/sshd.pid" || continue
		test_at_exit 'kill "$(cat "$SSH_DIR/sshd.pid" 2>/dev/null)" 2>/dev/null'
		break
	done
	[ -s "$SSH_DIR/sshd.pid" ] || { cat "$SSH_DIR/sshd.log"; return 1; }
	SSH_KNOWN=$SSH_DIR/known_hosts
	: >"$SSH_KNOWN"
	for a in 127.0.0.1 127.0.0.2 127.0.0.3; do
		echo "[$a]:$SSHD_PORT $(cat "$SSH_DIR/host_ed25519.pub")" >>"$SSH_KNOWN"
	done
	SSH_KEY=$SSH_DIR/id_ed25519
	export SSHD_PORT SSH_KEY SSH_KNOWN SSH_DIR
	# The options that reach it; "dtrun ${SSH_ARGS[@]} ..." keeps dtrun a
	# direct child when run in the background (a function would not).
	SSH_ARGS=(--launcher ssh -p "$SSHD_PORT" -i "$SSH_KEY"
	    --ssh-option UserKnownHostsFile="$SSH_KNOWN")
}

dtrun_ssh() {
	dtrun "${SSH_ARGS[@]}" "$@"
}
