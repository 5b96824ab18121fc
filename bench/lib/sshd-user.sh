# sshd-user.sh -- sourced by the ssh benchmarks (bench/ssh, bench/logs): a
# private sshd on loopback hosts 127.0.0.1..N that lets in one user, whose
# login shell is /bin/sh. Root's shell start-up is slow here (pyenv in its
# .bashrc), and every ssh login pays it: timed as root, "ssh true" measures
# that, not the launcher.
#
#   bench_user_skip_reason  prints why the user cannot be had and returns 0;
#                           returns 1 when it can
#   bench_user_make         makes the user if missing; sets U and UHOME
#   bench_sshd_start DIR N  sshds on 127.0.0.1..N (one per 16 addresses), their
#                           keys and files in DIR; sets PORT, KEY (the user's private key) and
#                           KH (a known_hosts for every address)
#   bench_sshd_stop DIR     stops it (call it from the script's exit trap)
#
# The user is DTBENCH_USER, default dtbench. Its key is listed in DIR, not in
# its home, so two benchmarks at once do not replace each other's.

U=${DTBENCH_USER:-dtbench}

bench_user_skip_reason() {
	local t

	for t in /usr/sbin/sshd ssh-keygen; do
		command -v "$t" >/dev/null || { echo "no $t"; return 0; }
	done
	# Only root can make the user and run an sshd that logs in as another.
	[ "$(id -u)" -eq 0 ] || { echo "needs root to log in as $U"; return 0; }
	return 1
}

bench_user_make() {
	id "$U" >/dev/null 2>&1 || useradd -m -s /bin/sh "$U" || return 1
	# A locked account ("!") is refused by sshd without PAM; "*" is not.
	if getent shadow "$U" | cut -d: -f2 | grep -q '^!'; then
		usermod -p '*' "$U" || return 1
	fi
	UHOME=$(getent passwd "$U" | cut -d: -f6)
}

bench_sshd_start() {
	local dir=$1 n=$2 i k try nd

	# The user reads its authorized_keys in dir as itself.
	chmod 755 "$dir"
	ssh-keygen -q -t ed25519 -N "" -f "$dir/host_ed25519" </dev/null || return 1
	ssh-keygen -q -t ed25519 -N "" -f "$dir/id_ed25519" </dev/null || return 1
	install -m 644 "$dir/id_ed25519.pub" "$dir/authorized_keys" || return 1
	mkdir -p /run/sshd
	# One sshd listens on at most 16 addresses: sshd k serves
	# 127.0.0.(16k+1)..(16k+16), all on one port.
	nd=$(( (n + 15) / 16 ))
	# A port from the pid, below the ephemeral range (32768-) and the
	# tests' (20000-28999); the next one if it is taken.
	for try in 1 2 3 4 5; do
		PORT=$((29000 + ($$ * 7 + try * 131) % 3700))
		bench_sshd_stop "$dir"
		for k in $(seq 0 $((nd - 1))); do
			bench_sshd_one "$dir" "$k" $((k * 16 + 1)) \
			    $(( (k + 1) * 16 < n ? (k + 1) * 16 : n )) || continue 2
		done
		break
	done
	for k in $(seq 0 $((nd - 1))); do
		[ -s "$dir/sshd.$k.pid" ] || { cat "$dir"/sshd.*.log >&2; return 1; }
	done
	KH=$dir/known_hosts
	for i in $(seq 1 "$n"); do
		echo "[127.0.0.$i]:$PORT $(cat "$dir/host_ed25519.pub")"
	done >"$KH"
	KEY=$dir/id_ed25519
}

# bench_sshd_one DIR K FIRST LAST -- sshd number K on 127.0.0.FIRST..LAST, port PORT.
bench_sshd_one() {
	local dir=$1 k=$2 i

	{
		echo "Port $PORT"
		for i in $(seq "$3" "$4"); do echo "ListenAddress 127.0.0.$i"; done
		cat <<EOC
HostKey $dir/host_ed25519
PidFile $dir/sshd.$k.pid
AuthorizedKeysFile $dir/authorized_keys
AllowUsers $U
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
MaxStartups 400:30:800
MaxSessions 100
LogLevel ERROR
EOC
	} >"$dir/sshd.$k.config"
	rm -f "$dir/sshd.$k.pid"
	/usr/sbin/sshd -f "$dir/sshd.$k.config" -E "$dir/sshd.$k.log" || return 1
	for i in $(seq 1 50); do
		[ -s "$dir/sshd.$k.pid" ] && return 0
		sleep 0.1
	done
	return 1
}

bench_sshd_stop() {
	local f

	for f in "$1"/sshd.*.pid; do
		[ -s "$f" ] && kill "$(cat "$f")" 2>/dev/null
		rm -f "$f"
	done
	return 0
}
