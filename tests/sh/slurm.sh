# slurm.sh -- sourced by Slurm scenario tests (after lib.sh): a private
# one-node Slurm cluster on 127.0.0.1 at high ports, with its own munged.
#
#   slurm_skip_reason   prints why the cluster cannot run here, if it cannot
#   slurm_start         starts munged, slurmctld and slurmd; waits for the
#                       node to be idle; sets SLURM_CONF and SLURM_DIR
#
# Everything lives in $TRASH/slurm and is stopped by PID when the test script
# exits. slurmd runs in a private mount namespace where $SLURM_HIDDEN is an
# empty tmpfs: a file put there exists for dtrun but not "on the node", as on
# a cluster without a shared filesystem.

slurm_skip_reason() {
	for p in /usr/sbin/slurmctld /usr/sbin/slurmd /usr/sbin/munged; do
		[ -x $p ] || { echo "slurm-wlm not installed (make deps installs slurm-wlm and munge)"; return 0; }
	done
	command -v mungekey >/dev/null || { echo "no mungekey (munge too old)"; return 0; }
	[ "$(id -u)" -eq 0 ] || { echo "slurmd needs root"; return 0; }
	return 1
}

# slurm_wait_idle SECS -- waits until sinfo shows the node idle.
slurm_wait_idle() {
	wait_for "$1" eval '[ "$(sinfo -h -o %T 2>/dev/null)" = idle ]'
}

# slurm_stop -- stops slurmd, slurmctld and munged by PID, in that order.
slurm_stop() {
	for p in ${SLURM_SLURMD:-} ${SLURM_CTLD:-} ${SLURM_MUNGED:-}; do
		kill $p 2>/dev/null
		wait_for 5 eval "! proc_alive $p"
	done
}

slurm_start() {
	SLURM_DIR=$TRASH/slurm
	SLURM_HIDDEN=$SLURM_DIR/hidden
	mkdir -p "$SLURM_DIR/state" "$SLURM_DIR/spool/localhost" "$SLURM_HIDDEN"
	mungekey -c -k "$SLURM_DIR/munge.key" || return 1
	/usr/sbin/munged -F -f --key-file="$SLURM_DIR/munge.key" \
	    --socket="$SLURM_DIR/munge.sock" --pid-file="$SLURM_DIR/munged.pid" \
	    --log-file="$SLURM_DIR/munged.log" --seed-file="$SLURM_DIR/munge.seed" \
	    >/dev/null 2>&1 &
	SLURM_MUNGED=$!
	test_at_exit slurm_stop
	wait_for 5 test -S "$SLURM_DIR/munge.sock" || { cat "$SLURM_DIR/munged.log"; return 1; }
	# Ports from the pid, away from the ephemeral range and from sshd.sh's.
	port=$((30000 + ($$ * 11) % 9000))
	cat >"$SLURM_DIR/slurm.conf" <<EOC
ClusterName=dtrun-test
SlurmctldHost=localhost
SlurmctldPort=$port
SlurmdPort=$((port + 1))
AuthType=auth/munge
AuthInfo=socket=$SLURM_DIR/munge.sock
CredType=cred/munge
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$SLURM_DIR/state
SlurmdSpoolDir=$SLURM_DIR/spool/%n
SlurmctldPidFile=$SLURM_DIR/slurmctld.pid
SlurmdPidFile=$SLURM_DIR/slurmd.pid
SlurmctldLogFile=$SLURM_DIR/slurmctld.log
SlurmdLogFile=$SLURM_DIR/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
MpiDefault=none
SwitchType=switch/none
MailProg=/bin/true
ReturnToService=2
KillWait=2
InactiveLimit=0
NodeName=localhost NodeAddr=127.0.0.1 CPUs=$(nproc) State=UNKNOWN
PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE State=UP
EOC
	SLURM_CONF=$SLURM_DIR/slurm.conf
	export SLURM_CONF SLURM_DIR SLURM_HIDDEN
	/usr/sbin/slurmctld -D >"$SLURM_DIR/slurmctld.out" 2>&1 &
	SLURM_CTLD=$!
	unshare -m --propagation private sh -c \
	    'mount -t tmpfs hidden "$SLURM_HIDDEN" && exec /usr/sbin/slurmd -D -N localhost' \
	    >"$SLURM_DIR/slurmd.out" 2>&1 &
	SLURM_SLURMD=$!
	slurm_wait_idle 30 || {
		tail -n 20 "$SLURM_DIR"/*.out "$SLURM_DIR"/*.log
		return 1
	}
}
