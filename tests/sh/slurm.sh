# slurm.sh -- sourced by Slurm scenario tests (after lib.sh): a private
# one-node Slurm cluster on 127.0.0.1 at high ports, with its own munged.
#
#   slurm_skip_reason   prints why the cluster cannot run here, if it cannot
#   slurm_start [N]     starts munged, slurmctld and a slurmd per node; waits
#                       for the nodes to be idle; sets SLURM_CONF, SLURM_DIR,
#                       SLURM_NODES (their names) and SLURM_HIDDEN
#   slurm_salloc NAME ARGS...  an allocation without a shell (salloc
#                       --no-shell -J NAME ARGS...); sets JOB to its id
#
# One node is "localhost"; N > 1 nodes are node1..nodeN at 127.0.0.1..N, one
# slurmd each on its own port. Everything lives in $TRASH/slurm and is
# stopped by PID when the test script exits. The last node's slurmd runs in a
# private mount namespace where $SLURM_HIDDEN is an empty tmpfs: a file put
# there exists for dtrun but not on that node, as on a cluster without a
# shared filesystem.

slurm_skip_reason() {
	for p in /usr/sbin/slurmctld /usr/sbin/slurmd /usr/sbin/munged; do
		[ -x $p ] || { echo "slurm-wlm not installed (make deps installs slurm-wlm and munge)"; return 0; }
	done
	command -v mungekey >/dev/null || { echo "no mungekey (munge too old)"; return 0; }
	[ "$(id -u)" -eq 0 ] || { echo "slurmd needs root"; return 0; }
	return 1
}

# slurm_wait_idle SECS -- waits until sinfo shows every node idle.
slurm_wait_idle() {
	wait_for "$1" eval '[ "$(sinfo -h -N -o %T 2>/dev/null | sort -u)" = idle ]'
}

# slurm_stop -- stops slurmd, slurmctld and munged by PID, in that order.
slurm_stop() {
	for p in ${SLURM_SLURMDS:-} ${SLURM_CTLD:-} ${SLURM_MUNGED:-}; do
		kill $p 2>/dev/null
		wait_for 5 eval "! proc_alive $p"
	done
}

slurm_start() {
	nn=${1:-1}
	SLURM_DIR=$TRASH/slurm
	SLURM_HIDDEN=$SLURM_DIR/hidden
	mkdir -p "$SLURM_DIR/state" "$SLURM_HIDDEN"
	mungekey -c -k "$SLURM_DIR/munge.key" || return 1
	/usr/sbin/munged -F -f --key-file="$SLURM_DIR/munge.key" \
	    --socket="$SLURM_DIR/munge.sock" --pid-file="$SLURM_DIR/munged.pid" \
	    --log-file="$SLURM_DIR/munged.log" --seed-file="$SLURM_DIR/munge.seed" \
	    >/dev/null 2>&1 &
	SLURM_MUNGED=$!
	test_at_exit slurm_stop
	wait_for 5 test -S "$SLURM_DIR/munge.sock" || { cat "$SLURM_DIR/munged.log"; return 1; }
	# Ports from the pid, below the ephemeral range (32768-) and sshd.sh's
	# (20000-); the next ones if something already listens there.
	for try in 1 2 3 4 5 6 7 8; do
		port=$((11000 + ($$ * 11 + try * 97) % 8000))
		busy=
		for p in $(seq "$port" $((port + nn))); do
			[ -n "$(ss -Htln "sport = :$p" 2>/dev/null)" ] && busy=1
		done
		[ -z "$busy" ] && break
	done
	cat >"$SLURM_DIR/slurm.conf" <<EOC
ClusterName=dtrun-test
SlurmctldHost=localhost
SlurmctldPort=$port
AuthType=auth/munge
AuthInfo=socket=$SLURM_DIR/munge.sock
CredType=cred/munge
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$SLURM_DIR/state
SlurmdSpoolDir=$SLURM_DIR/spool/%n
SlurmctldPidFile=$SLURM_DIR/slurmctld.pid
SlurmdPidFile=$SLURM_DIR/slurmd-%n.pid
SlurmctldLogFile=$SLURM_DIR/slurmctld.log
SlurmdLogFile=$SLURM_DIR/slurmd-%n.log
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
EOC
	SLURM_NODES=localhost
	[ "$nn" -gt 1 ] && SLURM_NODES=$(seq -f "node%g" 1 "$nn")
	i=0
	for n in $SLURM_NODES; do
		i=$((i + 1))
		mkdir -p "$SLURM_DIR/spool/$n"
		echo "NodeName=$n NodeAddr=127.0.0.$i Port=$((port + i)) CPUs=$(nproc) State=UNKNOWN"
	done >>"$SLURM_DIR/slurm.conf"
	echo "PartitionName=debug Nodes=$(echo $SLURM_NODES | tr " " ,) Default=YES MaxTime=INFINITE State=UP" >>"$SLURM_DIR/slurm.conf"
	SLURM_CONF=$SLURM_DIR/slurm.conf
	export SLURM_CONF SLURM_DIR SLURM_HIDDEN SLURM_NODES
	/usr/sbin/slurmctld -D >"$SLURM_DIR/slurmctld.out" 2>&1 &
	SLURM_CTLD=$!
	SLURM_SLURMDS=
	last=$(echo $SLURM_NODES | awk '{ print $NF }')
	for n in $SLURM_NODES; do
		if [ "$n" = "$last" ]; then
			SLURM_NODE=$n unshare -m --propagation private sh -c \
			    'mount -t tmpfs hidden "$SLURM_HIDDEN" && exec /usr/sbin/slurmd -D -N "$SLURM_NODE"' \
			    >"$SLURM_DIR/slurmd-$n.out" 2>&1 &
		else
			/usr/sbin/slurmd -D -N "$n" >"$SLURM_DIR/slurmd-$n.out" 2>&1 &
		fi
		SLURM_SLURMDS="$! $SLURM_SLURMDS"
	done
	slurm_wait_idle 30 || {
		tail -n 20 "$SLURM_DIR"/*.out "$SLURM_DIR"/*.log
		return 1
	}
}

slurm_salloc() {
	name=$1
	shift
	salloc --no-shell -J "$name" "$@" >"$TRASH/salloc.out" 2>&1
	JOB=$(sed -n 's/.*Granted job allocation \([0-9]*\).*/\1/p' "$TRASH/salloc.out")
	[ -n "$JOB" ] || { cat "$TRASH/salloc.out"; return 1; }
}
