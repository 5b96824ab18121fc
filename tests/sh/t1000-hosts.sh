#!/bin/bash
# t1000-hosts.sh -- hostfiles, host lists, engine.yaml and placement through
# dtrun's command line (--dry-run, and real runs with the local launcher).
. "$(dirname "$0")/lib.sh"
EX=$SRC/examples

plan() { dtrun --dry-run "$@" | grep -v "^#"; }

test_expect_success 'ranks fill hosts in order, host-major' '
	plan -n 4 -H a:2,b:2 true >out &&
	printf "0 a 0 true\n1 a 1 true\n2 b 0 true\n3 b 1 true\n" >want &&
	diff want out
'

test_expect_success 'without -n every slot gets a rank' '
	plan -H "gpu[01-03]:2" hostname >out &&
	test $(wc -l <out) -eq 6 && grep -qx "5 gpu03 1 hostname" out
'

test_expect_success '--nproc-per-node overrides slots' '
	plan --nproc-per-node 3 -H a:8,b:8 true >out &&
	test $(wc -l <out) -eq 6 && grep -qx "3 b 0 true" out
'

test_expect_success 'more ranks than slots: exit 2 naming the slot count' '
	test_expect_code 2 dtrun --dry-run -n 5 -H a:2,b:2 true 2>err &&
	grep -q "4 slots" err && grep -q "oversubscribe" err
'

test_expect_success '--oversubscribe allows it' '
	plan -n 5 -H a:2,b:2 --oversubscribe true >out && test $(wc -l <out) -eq 5
'

test_expect_success 'more ranks than the 1024 local slots, without -H: the rule and the fix' '
	test_expect_code 2 dtrun --dry-run -n 1025 true 2>err &&
	grep -qx "dtrun: -n: 1025 ranks are more than this machine'"'"'s 1024 local slots; pass --oversubscribe to run them all here, or -H to spread them over hosts" err &&
	! grep -q -- "-H:1\|ssh port" err &&
	test_expect_code 2 dtrun --dry-run --nproc-per-node 1025 true 2>err &&
	grep -q "^dtrun: --nproc-per-node: 1025 ranks are more than" err &&
	plan -n 1025 --oversubscribe true >out && test $(wc -l <out) -eq 1025 &&
	grep -qx "1024 localhost 1024 true" out &&
	plan --nproc-per-node 1025 --oversubscribe true >out && test $(wc -l <out) -eq 1025 &&
	plan -n 1024 true >out && test $(wc -l <out) -eq 1024
'

test_expect_success 'every peer hostfile format in examples/hostfiles is read' '
	for f in "$EX"/hostfiles/*.hosts; do
		dtrun --dry-run -H "$f" true >/dev/null || { echo "failed: $f"; exit 1; }
	done
'

test_expect_success 'a bad hostfile: exit 2, file, line and the fix' '
	printf "# ok\nnode1 slots=2\ngpu[5-2]\n" >hosts &&
	test_expect_code 2 dtrun --dry-run -H hosts true 2>err &&
	test $(wc -l <err) -eq 1 &&
	grep -q "^dtrun: hosts:3:" err && grep -q "gpu\[5-2\]" err
'

test_expect_success 'a host listed twice is merged, and -v says so' '
	printf "a slots=2\nb\na\n" >hosts &&
	dtrun -v --dry-run -H hosts true >out 2>err &&
	test $(grep -c "^[0-9]* a " out) -eq 3 &&
	grep -q "listed again" err
'

test_expect_success 'Open MPI repeats: a bare line adds a slot and keeps max_slots' '
	printf "n1 slots=1 max_slots=2\nn1\n" >hosts &&
	plan -H hosts true >out &&
	test $(wc -l <out) -eq 2 &&
	test_expect_code 2 dtrun --dry-run --oversubscribe -n 3 -H hosts true \
		2>err &&
	grep -q "max_slots" err &&
	printf "n1 slots=2\nn1 slots=2\n" >hosts &&
	test_expect_code 2 dtrun --dry-run -H hosts true 2>err &&
	grep -q "^dtrun: hosts:2:1: host \"n1\" listed again with a slot count" err &&
	printf "n1 max_slots=4\n" >hosts &&
	plan -H hosts true >out &&
	test $(wc -l <out) -eq 4
'

test_expect_success '--include and --exclude in DeepSpeed syntax' '
	plan -H a:4,b:4,c:4 --include "a:0,1@c" true >out &&
	test $(wc -l <out) -eq 6 && ! grep -q " b " out &&
	plan -H a:4,b:4 --exclude b true >out &&
	test $(wc -l <out) -eq 4 && ! grep -q " b " out
'

test_expect_success '--include/--exclude device ids reach the ranks as CUDA_VISIBLE_DEVICES' '
	env -u CUDA_VISIBLE_DEVICES dtrun --launcher local -H w:8,v:2 \
		--include "w:3,2@v" --prefix "%h " \
		sh -c "echo \$LOCAL_RANK \${CUDA_VISIBLE_DEVICES-unset}" >out &&
	sort out >got &&
	printf "v 0 unset\nv 1 unset\nw 0 2,3\nw 1 2,3\n" >want &&
	diff want got &&
	env -u CUDA_VISIBLE_DEVICES dtrun --launcher local -H w:4 \
		--exclude w:1 --prefix "" \
		sh -c "echo \$LOCAL_RANK \$CUDA_VISIBLE_DEVICES" >out &&
	sort out >got &&
	printf "0 0,2,3\n1 0,2,3\n2 0,2,3\n" >want &&
	diff want got &&
	env -u CUDA_VISIBLE_DEVICES dtrun --launcher local -H w:4 \
		--include w:1 -x CUDA_VISIBLE_DEVICES=9 --prefix "" \
		sh -c "echo \$CUDA_VISIBLE_DEVICES" >out &&
	test "$(cat out)" = 9
'

test_expect_success '-s: -x DMLC_PS_ROOT_* reaches servers and the scheduler too' '
	dtrun --launcher local -H localhost:1 -s 1 -x DMLC_PS_ROOT_PORT=9555 \
		-x DMLC_PS_ROOT_URI=127.0.0.1 --prefix "" \
		sh -c "echo \$DMLC_ROLE \$DMLC_PS_ROOT_URI \$DMLC_PS_ROOT_PORT" >out &&
	sort out >got &&
	printf "scheduler 127.0.0.1 9555\nserver 127.0.0.1 9555\nworker 127.0.0.1 9555\n" >want &&
	diff want got
'

test_expect_success '--launcher local with hosts runs one agent per host here' '
	dtrun --launcher local -H a:2,b:1 --prefix "%h " sh -c "echo \$RANK \$NODE_RANK \$LOCAL_RANK \$LOCAL_WORLD_SIZE \$NNODES \$DTRUN_HOST" >out &&
	grep -qx "a 0 0 0 2 2 a" out && grep -qx "a 1 0 1 2 2 a" out &&
	grep -qx "b 2 1 0 1 2 b" out
'

test_expect_success 'MXNet parameter servers and scheduler with -s' '
	plan -H a:2,b:2 -s 2 true >out &&
	grep -q "^server:0 a " out && grep -q "^server:1 b " out &&
	grep -q "^scheduler a " out &&
	dtrun --launcher local -H a:1,b:1 -s 1 --prefix "" sh -c "echo \$DMLC_ROLE \${RANK:-none} \$DMLC_NUM_WORKER \$DMLC_NUM_SERVER" >out &&
	test $(grep -c "^worker [01] 2 1\$" out) -eq 2 &&
	grep -qx "server none 2 1" out && grep -qx "scheduler none 2 1" out
'

cat >"$TRASH/job.yaml" <<'EOY'
apiVersion: "3.0.0"
numGPUs: 3
commands:
  - echo first $RANK
  - echo second $GREETING
environment:
  GREETING: hello
launcher: local
prefix: "<%r> "
EOY

test_expect_success 'engine.yaml: commands in order, numGPUs, environment, prefix' '
	dtrun -f "$TRASH/job.yaml" >out &&
	test $(wc -l <out) -eq 6 &&
	grep -qx "<2> first 2" out && grep -qx "<0> second hello" out
'

test_expect_success 'the command line overrides engine.yaml' '
	dtrun -f "$TRASH/job.yaml" -n 1 --prefix "" -x GREETING=bye sh -c "echo \$GREETING" >out &&
	test "$(cat out)" = bye
'

test_expect_success 'engine.yaml errors: exit 2 with file:line:col and a did-you-mean' '
	printf "apiVersion: \"3.0.0\"\ncomand: true\n" >bad.yaml &&
	test_expect_code 2 dtrun -f bad.yaml 2>err &&
	grep -q "^dtrun: bad.yaml:2:1: " err && grep -q "command" err
'

test_expect_success 'a bad prefix in engine.yaml is reported at its line' '
	printf "apiVersion: \"3.0.0\"\ncommand: true\nprefix: \"%%q\"\n" >bad.yaml &&
	test_expect_code 2 dtrun -f bad.yaml 2>err &&
	grep -q "^dtrun: bad.yaml:3:9: bad --prefix" err
'

test_expect_success 'every example engine.yaml is accepted by --dry-run' '
	for f in "$EX"/engine-*.yaml; do
		case $f in *template*) continue ;; esac
		# launcher: slurm plans only inside an allocation: give it one.
		alloc=
		if grep -q "^launcher: slurm" "$f"; then
			alloc="SLURM_JOB_ID=1 SLURM_JOB_NODELIST=n[1-2] SLURM_TASKS_PER_NODE=2(x2)"
		fi
		env $alloc dtrun --dry-run -f "$f" --template "$EX/engine-template.yaml" >/dev/null 2>err ||
		env $alloc dtrun --dry-run -f "$f" >/dev/null 2>err || { echo "$f"; cat err; exit 1; }
	done
'

test_expect_success '--template merges under the config' '
	printf "apiVersion: \"3.0.0\"\nenvironment:\n  A: from-template\n  B: from-template\nlauncher: local\n" >t.yaml &&
	printf "apiVersion: \"3.0.0\"\ncommand: echo \$A \$B\nenvironment:\n  B: from-config\n" >c.yaml &&
	dtrun -f c.yaml --template t.yaml --prefix "" >out &&
	test "$(cat out)" = "from-template from-config"
'

test_expect_success '--template without -f is a usage error' '
	test_expect_code 2 dtrun --template t.yaml true 2>err && grep -q "needs an engine.yaml" err
'

# This machine's names are reached here, not by ssh: port 1 is closed, so
# any ssh connection would fail the job (as --launcher ssh shows).
test_expect_success 'a localhost hostfile and -H localhost run here with no ssh' '
	printf "localhost slots=4\n" >lh &&
	dtrun -p 1 -H lh --prefix "" sh -c "echo \$RANK \$LOCAL_RANK \$DTRUN_HOST" >out 2>err &&
	printf "0 0 localhost\n1 1 localhost\n2 2 localhost\n3 3 localhost\n" >want &&
	sort out >got && diff want got &&
	dtrun -p 1 -H localhost,localhost,localhost,localhost --prefix "" sh -c "echo \$RANK" >out &&
	test "$(sort out | tr "\n" " ")" = "0 1 2 3 " &&
	dtrun -p 1 -H localhost:4 true &&
	! grep -q "cannot connect" err
'

test_expect_success '--launcher ssh still means ssh to localhost; an agent never reached is not "lost"' '
	test_expect_code 255 dtrun --launcher ssh -p 1 -H localhost:2 true 2>err &&
	grep -qx "dtrun: localhost: cannot connect to localhost port 1: Connection refused" err &&
	test "$(tail -n 1 err)" = "dtrun: job failed: never reached the agent on localhost (see above); no rank had started" &&
	! grep -q "lost the agent" err
'

test_expect_success 'every name of this machine is one host, as in Open MPI' '
	dtrun --dry-run -H localhost,127.0.0.1,"$(hostname)" true >out &&
	grep -q "^# dtrun plan: job .*, 3 processes (3 workers) on 1 host, launcher local$" out &&
	test "$(grep -v "^#" out | cut -d" " -f2 | sort -u)" = localhost
'

test_expect_success 'too many ranks here: the 1 host has N slots, and how to simulate hosts' '
	test_expect_code 2 dtrun -H localhost,localhost -n 3 true 2>err &&
	grep -q "3 processes asked for, but the 1 host has 2 slots; " err &&
	grep -q "to simulate several hosts here, give them names of their own with --launcher local (-H a:2,b:2 --launcher local)" err &&
	printf "localhost slots=2\n127.0.0.1 slots=2\n" >lh2 &&
	test_expect_code 2 dtrun -H lh2 true 2>err &&
	grep -q "^dtrun: lh2:2:1: host \"127.0.0.1\" names this machine as \"localhost\" does with a slot count (first at lh2:1); .*--launcher local (-H a:2,b:2 --launcher local)$" err
'

test_expect_success 'hosts elsewhere use ssh; this machine among them does not' '
	test_expect_code 255 dtrun -vv -p 1 -H localhost:1,0.0.0.1:1 true 2>err &&
	grep -q "^dtrun: debug: started agent pid [0-9]* for localhost$" err &&
	grep -q "^dtrun: debug: 0.0.0.1: ssh root@0.0.0.1 port 1$" err &&
	! grep -q "ssh [a-z]*@localhost" err
'

# One limit on a host's ranks: what Slurm gave a node is used, as a local
# host takes 4,000 ranks with --oversubscribe.
test_expect_success 'SLURM_TASKS_PER_NODE above 1024: every task a rank, as locally' '
	plan -n 4000 --oversubscribe true >out && test $(wc -l <out) -eq 4000 &&
	env SLURM_JOB_ID=1 SLURM_JOB_NODELIST="n[1-2]" SLURM_TASKS_PER_NODE=4000,2 \
	    dtrun --dry-run true >out 2>err &&
	grep -q "^# dtrun plan: job .*, 4002 processes (4002 workers) on 2 hosts, launcher slurm$" out &&
	grep -qx "3999 n1 3999 true" out && grep -qx "4001 n2 1 true" out &&
	env SLURM_JOB_ID=1 SLURM_JOB_NODELIST="n[1-2]" SLURM_TASKS_PER_NODE=4000,2 \
	    dtrun --dry-run --exclude n1:3 true >out 2>err &&
	grep -qx "3998 n1 3998 true" out && grep -qx "3999 n2 0 true" out
'

test_expect_success 'three bracket groups come in scontrol'"'"'s order' '
	plan -H "p[1-2]x[1-2][0]" true >out &&
	printf "0 p1x10 0 true\n1 p2x10 0 true\n2 p1x20 0 true\n3 p2x20 0 true\n" >want &&
	diff want out &&
	env SLURM_JOB_ID=1 SLURM_JOB_NODELIST="p[1-2]x[1-2][0]" dtrun --dry-run true >out 2>err &&
	grep -v "^#" out | cut -d" " -f2 | tr "\n" " " >got &&
	test "$(cat got)" = "p1x10 p2x10 p1x20 p2x20 "
'

test_done