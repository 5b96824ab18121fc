#!/bin/bash
# t5002-slurm-listener.sh -- the Slurm launcher's agent listener under
# attack: idle connections that never authenticate cannot lock the agents
# out, and what an unauthenticated peer says reaches the terminal escaped.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/slurm.sh"

if why=$(slurm_skip_reason); then
	test_skip 'Slurm agent listener scenarios' "$why"
	test_done
fi
command -v python3 >/dev/null || {
	test_skip 'Slurm agent listener scenarios' 'no python3'
	test_done
}
slurm_start || { echo "could not start the Slurm cluster"; exit 1; }

slurm_salloc dtrun-t5002 -O -N1 -n2 || exit 1
ALLOC=(env SLURM_JOB_ID=$JOB SLURM_JOB_NODELIST=localhost SLURM_TASKS_PER_NODE=2 SLURM_OVERCOMMIT=1)
in_alloc() { "${ALLOC[@]}" "$@"; }
unset SLURM_JOB_ID SLURM_JOBID

# flood.py HOST:PORT DIR SRC:N... -- opens N idle connections from each
# source address, touches DIR/flooded, holds them until DIR/stop (or 120 s).
cat >"$TRASH/flood.py" <<'EOP'
import os, socket, sys, time
host, port = sys.argv[1].rsplit(":", 1)
socks = []
for spec in sys.argv[3:]:
    src, n = spec.split(":")
    for _ in range(int(n)):
        s = socket.socket()
        s.bind((src, 0))
        s.connect((host, int(port)))
        socks.append(s)
open(os.path.join(sys.argv[2], "flooded"), "w").close()
end = time.time() + 120
while not os.path.exists(os.path.join(sys.argv[2], "stop")) and time.time() < end:
    time.sleep(0.05)
EOP

# A stand-in for srun that starts the agents only once the flood is in.
srun_after_flood() {
	printf '#!/bin/sh\nn=0\nwhile [ ! -e %s/flooded ] && [ $n -lt 600 ]; do sleep 0.05; n=$((n + 1)); done\nexec srun "$@"\n' "$PWD" >srun &&
	chmod +x srun
}

test_expect_success '80 idle connections that never authenticate: the job still runs' '
	srun_after_flood &&
	in_alloc env DTRUN_SRUN=$PWD/srun timeout 60 dtrun -vv -n 2 --prefix "" sh -c "echo ok \$RANK" >out 2>err &
	d=$!
	wait_for 15 grep -q "agents connect to" err &&
	addr=$(sed -n "s/.*agents connect to //p" err) &&
	python3 "$TRASH/flood.py" $addr "$PWD" 127.0.0.1:40 127.0.0.2:40 &
	f=$!
	wait $d &&
	touch stop && wait $f &&
	sort out >got && printf "ok 0\nok 1\n" >want && diff want got &&
	test $(grep -c "connections that have not authenticated, .*: dropping the oldest" err) = 1
'

test_expect_success 'a node name from an unauthenticated peer is logged escaped' '
	in_alloc timeout 60 dtrun -vv -n 1 sh -c "while [ ! -e $PWD/go ]; do sleep 0.05; done" 2>err &
	d=$!
	wait_for 15 grep -q "agents connect to" err &&
	addr=$(sed -n "s/.*agents connect to //p" err) &&
	node=$(printf "evil\ndtrun: injected\033[31m") &&
	test_expect_code 1 env DTRUN_AGENT_TOKEN=$(printf "%064d" 0) SLURMD_NODENAME="$node" dtrun-agent --connect $addr 2>agent.err &&
	touch go && wait $d &&
	cat err &&
	grep -F "(node \"evil\\ndtrun: injected\\x1b[31m\") does not know the job'"'"'s agent secret" err &&
	! grep -q "^dtrun: injected" err &&
	! grep -q "$(printf "\033")" err
'

test_done
