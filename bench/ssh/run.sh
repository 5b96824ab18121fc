#!/bin/bash
# run.sh BUILDDIR -- the ssh launcher against pdsh and parallel-ssh, side by
# side, in one run, on loopback "hosts" 127.0.0.1..16 served by a private sshd:
#   launch      N hosts running true: dtrun vs pdsh -R ssh vs parallel-ssh (hyperfine)
#   fail-fast   the last host's rank exits 1, the others sleep: failing exit ->
#               dtrun's exit (goal: <= 50 ms on loopback)
# Every tool logs in as the same user with the same key, port and known_hosts:
# a user with /bin/sh as login shell (root's shell start-up is slow here),
# made if missing (DTBENCH_USER, default dtbench; needs root to create).
# Numbers are this machine's, at this moment: compare ratios, not absolutes.
set -eu
B=$(cd "${1:-build}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
U=${DTBENCH_USER:-dtbench}
RUNS=${RUNS:-10}
NHOSTS=16

for t in /usr/sbin/sshd ssh-keygen hyperfine python3 cc; do
	command -v "$t" >/dev/null || { echo "bench-ssh: skipped: no $t"; exit 0; }
done
if ! id "$U" >/dev/null 2>&1; then
	if [ "$(id -u)" -ne 0 ]; then
		echo "bench-ssh: skipped: user $U is missing and only root can make it"
		exit 0
	fi
	useradd -m -s /bin/sh "$U"
fi
# A locked account ("!") is refused by sshd without PAM; "*" is not.
if [ "$(id -u)" -eq 0 ] && getent shadow "$U" | cut -d: -f2 | grep -q '^!'; then
	usermod -p '*' "$U"
fi
UHOME=$(getent passwd "$U" | cut -d: -f6)
W=$(mktemp -d /tmp/dtrun-bench-ssh.XXXXXX)
chmod 755 "$W"
unset SSH_AUTH_SOCK
cleanup() {
	[ -s "$W/sshd.pid" ] && kill "$(cat "$W/sshd.pid")" 2>/dev/null
	rm -rf "$W"
}
trap cleanup EXIT

# Keys, the user's authorized_keys, known_hosts for every address.
ssh-keygen -q -t ed25519 -N "" -f "$W/host_ed25519" </dev/null
ssh-keygen -q -t ed25519 -N "" -f "$W/id_ed25519" </dev/null
install -d -m 700 -o "$U" "$UHOME/.ssh"
install -m 600 -o "$U" "$W/id_ed25519.pub" "$UHOME/.ssh/authorized_keys"
PORT=$((30000 + $$ % 5000))
{
	echo "Port $PORT"
	for i in $(seq 1 $NHOSTS); do echo "ListenAddress 127.0.0.$i"; done
	cat <<EOC
HostKey $W/host_ed25519
PidFile $W/sshd.pid
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
MaxStartups 400:30:800
MaxSessions 100
LogLevel ERROR
EOC
} >"$W/sshd_config"
mkdir -p /run/sshd
/usr/sbin/sshd -f "$W/sshd_config" -E "$W/sshd.log"
for i in $(seq 1 50); do [ -s "$W/sshd.pid" ] && break; sleep 0.1; done
[ -s "$W/sshd.pid" ] || { cat "$W/sshd.log"; exit 1; }
KH=$W/known_hosts
for i in $(seq 1 $NHOSTS); do
	echo "[127.0.0.$i]:$PORT $(cat "$W/host_ed25519.pub")"
done >"$KH"
KEY=$W/id_ed25519

hosts() { seq -f "127.0.0.%g" 1 "$1" | paste -sd, -; }
DTRUN="$B/dtrun -q --launcher ssh -p $PORT -i $KEY --ssh-option User=$U --ssh-option UserKnownHostsFile=$KH"
SSHOPTS="-F /dev/null -p $PORT -i $KEY -o UserKnownHostsFile=$KH -o StrictHostKeyChecking=yes -o BatchMode=yes"
export PDSH_SSH_ARGS_APPEND="$SSHOPTS"

mean() { python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['results'][0]['mean'])" "$1"; }
ratio() { python3 -c "import sys; print('%.2f' % (float(sys.argv[1])/float(sys.argv[2])))" "$1" "$2"; }
ms() { python3 -c "import sys; print('%.1f' % (float(sys.argv[1])*1000))" "$1"; }

# Each tool must work before it is timed (this also uploads dtrun's agent).
for n in 3 $NHOSTS; do
	$DTRUN -H "$(hosts $n)" true
	pdsh -R ssh -l "$U" -f 64 -w "$(hosts $n)" true
	parallel-ssh -H "$(hosts $n | tr , ' ')" -l "$U" -p 64 -x "$SSHOPTS" true >/dev/null
done

echo "== launch: true on N loopback hosts as $U (mean of $RUNS runs, hyperfine)"
printf "%6s %10s %10s %14s %12s %14s\n" N dtrun_ms pdsh_ms pssh_ms pdsh/dtrun pssh/dtrun
for n in 3 $NHOSTS; do
	h=$(hosts $n)
	hyperfine -N -w 2 -r "$RUNS" --export-json "$W/d.json" "$DTRUN -H $h true" >/dev/null 2>&1
	hyperfine -N -w 2 -r "$RUNS" --export-json "$W/p.json" "pdsh -R ssh -l $U -f 64 -w $h true" >/dev/null 2>&1
	# parallel-ssh takes its ssh options as one -x word: run it through sh.
	hyperfine -w 2 -r "$RUNS" --export-json "$W/s.json" \
	    "parallel-ssh -H '$(echo $h | tr , ' ')' -l $U -p 64 -x '$SSHOPTS' true" >/dev/null 2>&1
	d=$(mean "$W/d.json"); p=$(mean "$W/p.json"); s=$(mean "$W/s.json")
	printf "%6s %10s %10s %14s %12s %14s\n" "$n" "$(ms $d)" "$(ms $p)" "$(ms $s)" \
	    "$(ratio "$p" "$d")" "$(ratio "$s" "$d")"
done

echo
echo "== fail-fast: the last host's rank exits 1, the others sleep; failing exit -> dtrun's exit"
for p in failer measure; do
	cc -O2 -o "$W/$p" "$here/../local/$p.c"
done
install -d -m 777 "$W/t"
for n in 3 $NHOSTS; do
	vals=""
	for i in 1 2 3 4 5; do
		rm -f "$W/t/t"
		# failer fails on RANK 0: shift the ranks so the last host's is 0.
		"$W/measure" $DTRUN -H "$(hosts $n)" sh -c "RANK=\$((RANK - $n + 1)) exec $W/failer $W/t/t 0.3" \
		    2>"$W/m" >/dev/null || true
		end=$(sed -n 's/.*end_ns=\([0-9]*\).*/\1/p' "$W/m")
		vals="$vals $(python3 -c "import sys; print('%.1f' % ((int(sys.argv[1]) - int(open(sys.argv[2]).read())) / 1e6))" "$end" "$W/t/t")"
	done
	med=$(python3 -c "import sys,statistics; print(statistics.median(map(float, sys.argv[1:])))" $vals)
	printf "%2d hosts: median %6s ms  (runs:%s)\n" "$n" "$med" "$vals"
done
rm -rf "$UHOME/.cache/dtrun"
