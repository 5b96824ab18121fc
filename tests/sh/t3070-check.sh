#!/bin/bash
# t3070-check.sh -- dtrun --check and --preflight: every host reached as a
# run reaches it, one table, each problem with its fix, no rank started.
# Locally, over three loopback ssh hosts, and between two network
# namespaces where one host cannot reach rank 0's address (root and ip
# netns; that part skips otherwise).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/sshd.sh"
. "$(dirname "$0")/netns-lib.sh"
Q="'"

# The column of the table's row for host $2 under heading $1, from file $3.
col() {
	awk -v h="$1" -v host="$2" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == h) c = i; next }
	    $1 == host { print $c }' "$3"
}

test_expect_success 'local: --check -n 2 CMD prints one row, starts no rank, exits 0' '
	dtrun --check -n 2 sh -c "touch ran" >out 2>err &&
	head -n 1 out | grep -q "^HOST  *AGENT  *IFACE  *ADDRESS  *RANK0  *SKEW  *COMMAND  *PYTHON  *TORCH  *GPUS  *NCCL  *IFNAME$" &&
	test "$(col AGENT localhost out)" = "$(dtrun --version | cut -d" " -f2)" &&
	test "$(col IFACE localhost out)" = lo &&
	test "$(col ADDRESS localhost out)" = 127.0.0.1 &&
	test "$(col RANK0 localhost out)" = ok &&
	col SKEW localhost out | grep -q "^[-+][0-9]*\.[0-9]*s$" &&
	test "$(col COMMAND localhost out)" = "$(command -v sh)" &&
	grep -qx "no problems on 1 host" out &&
	test ! -e ran
'

test_expect_success 'local: no command is needed; -v adds every answer' '
	dtrun --check -v >out 2>err &&
	test "$(col COMMAND localhost out)" = - &&
	grep -q "^localhost: agent pid [0-9]* on .*; round trip [0-9]* ms, clock [-+][0-9]* ms" out &&
	grep -q "^localhost:   iface_why=the route to 127.0.0.1$" out &&
	grep -q "^localhost:   reach=127.0.0.1:[0-9]*$" out
'

# The agent (its shared-libc build: a static one takes no preload) runs
# with tests/preload/skewclock.so: its CLOCK_REALTIME (and
# nothing else, in no other process) reads DT_TEST_SKEW_MS off.
test_expect_success 'a host whose clock is off: its SKEW, a problem with the fix, exit 78' '
	cat >skewed-agent <<-EOS &&
	#!/bin/sh
	ASAN_OPTIONS=\${ASAN_OPTIONS:+\$ASAN_OPTIONS:}verify_asan_link_order=0 LD_PRELOAD=$B/preload/skewclock.so exec $B/preload/dtrun-agent "\$@"
	EOS
	chmod +x skewed-agent &&
	test_expect_code 78 env DTRUN_AGENT=$PWD/skewed-agent DT_TEST_SKEW_MS=-7000 dtrun --check >out 2>err &&
	col SKEW localhost out | grep -q "^-[67]\.[0-9]*s$" &&
	grep -q "^dtrun: check: localhost: its clock is [67]\.[0-9] s behind dtrun${Q}s: run NTP there (chrony, systemd-timesyncd)$" err &&
	test_expect_code 78 env DTRUN_AGENT=$PWD/skewed-agent DT_TEST_SKEW_MS=3000 dtrun --check >out 2>err &&
	grep -q "^dtrun: check: localhost: its clock is [23]\.[0-9] s ahead of dtrun${Q}s" err &&
	env DTRUN_AGENT=$PWD/skewed-agent DT_TEST_SKEW_MS=0 dtrun --check >out 2>err &&
	grep -qx "no problems on 1 host" out
'

test_expect_success 'a missing command: MISSING, a problem line with the fix, exit 78' '
	test_expect_code 78 dtrun --check -n 2 no-such-cmd-$$ >out 2>err &&
	test "$(col COMMAND localhost out)" = MISSING &&
	grep -qx "dtrun: check: localhost: no-such-cmd-$$: command not found in PATH (check the name, or give a path)" err &&
	grep -qx "dtrun: --check found 1 problem: see above" err
'

# What each needs was measured: 60 ranks of rdzv-probe -j, the agent held
# 196 descriptors (its pipes, relay and progress connections), dtrun 10;
# torch 1.13's ranks hold two more each on the agent's store
# (the rendezvous reaches it over the agents' links); --output-dir adds
# dtrun's two files a rank.
test_expect_success 'open-files limits below what the plan needs: the host and dtrun named, exit 78' '
	(ulimit -n 100 && test_expect_code 78 dtrun --check --oversubscribe -n 60 true >out 2>err) &&
	grep -q "localhost: its open-files limit is 100, below the 424 its agent needs for 60 ranks: raise it there" err &&
	! grep -q "dtrun (this machine)" err &&
	(ulimit -n 100 && test_expect_code 78 dtrun --check --oversubscribe --output-dir od -n 60 true >out 2>err) &&
	grep -q "dtrun (this machine): its open-files limit is 100, below the 186 it needs for 60 ranks on 1 host with --output-dir: raise it" err &&
	dtrun --check --oversubscribe --output-dir od -n 60 true >out 2>err &&
	! grep -q "open-files" err
'

# In a mount namespace of its own, the test gives the host a 16 MiB
# /dev/shm, then a job directory with 8 MiB free.
if command -v unshare >/dev/null && [ "$(id -u)" = 0 ]; then
	test_expect_success 'a small /dev/shm, or little room in the job directory: the host named, the fix, exit 78' '
		test_expect_code 78 unshare -m sh -c "mount -t tmpfs -o size=16m tmpfs /dev/shm && exec dtrun --check -n 2 true" >out 2>err &&
		grep -q "^dtrun: check: localhost: /dev/shm is 16 MiB: NCCL.s shared memory between its 2 ranks needs more" err &&
		mkdir -p small &&
		test_expect_code 78 unshare -m sh -c "mount -t tmpfs -o size=8m tmpfs small && cd small && exec dtrun --check -n 1 true" >out 2>err &&
		grep -q "^dtrun: check: localhost: only 8 MiB free in the job.s directory there" err &&
		dtrun --check -v -n 2 true >out 2>err &&
		grep -q "shm_mb=[0-9]" out && grep -q "disk_free_mb=[0-9]" out &&
		! grep -q "/dev/shm is\|MiB free" err
	'
else
	test_skip 'a small /dev/shm or job directory' 'needs root and unshare'
fi

# In a mount namespace of its own, the test gives the host an RDMA device
# (a tmpfs over /sys/class with infiniband/mlx5_0) and a strict
# overcommit (a file bound over /proc/sys/vm/overcommit_memory).
if command -v unshare >/dev/null && [ "$(id -u)" = 0 ]; then
	test_expect_success 'RDMA with a small locked-memory limit, strict overcommit: problems with the fix, exit 78' '
		echo 2 >oc &&
		ns="mount -t tmpfs tmpfs /sys/class && mkdir -p /sys/class/infiniband/mlx5_0" &&
		test_expect_code 78 unshare -m sh -c "$ns && ulimit -l 8192 && exec dtrun --check -v" >out 2>err &&
		grep -qx "localhost:   rdma=1" out &&
		grep -qx "dtrun: check: localhost: its locked-memory limit is 8192 KiB, and NCCL registers its buffers for the 1 RDMA device there against it: raise it there (ulimit -l unlimited where the agent starts, LimitMEMLOCK=infinity, or memlock in limits.conf)" err &&
		if (ulimit -l unlimited) 2>/dev/null; then
			unshare -m sh -c "$ns && ulimit -l unlimited && exec dtrun --check -v" >out 2>err &&
			grep -qx "localhost:   memlock=unlimited" out
		fi &&
		(ulimit -l 8192 && dtrun --check) >out 2>err &&
		test_expect_code 78 unshare -m sh -c "mount --bind $PWD/oc /proc/sys/vm/overcommit_memory && exec dtrun --check" >out 2>err &&
		grep -qx "dtrun: check: localhost: vm.overcommit_memory is 2 (strict): CUDA and PyTorch reserve large virtual ranges and fail there with out of memory: sysctl vm.overcommit_memory=0 (or 1)" err &&
		grep -qx "dtrun: --check found 1 problem: see above" err
	'
else
	test_skip 'RDMA with a small locked-memory limit, strict overcommit' 'needs root and unshare'
fi

# listen_port PID -- the port of PID's IPv4 TCP listener (its first).
listen_port() {
	for f in /proc/$1/fd/*; do
		readlink "$f"
	done | sed -n 's/^socket:\[\([0-9]*\)\]$/\1/p' | while read -r i; do
		awk -v i="$i" '$4 == "0A" && $10 == i { split($2, a, ":"); print a[2] }' /proc/net/tcp
	done | head -n 1
}

# The PROBE listener of an agent out of descriptors: its open-files limit
# lowered to 3 (prlimit) while a fake interpreter holds the GATHER, and a
# connection waiting. A level-triggered listener that only returns on
# EMFILE is woken again at once: thousands of accept4 a second (strace
# counts them); resting, it tries 10 times a second, and takes the
# connection once the limit is back.
if [ "$(id -u)" = 0 ] && command -v strace >/dev/null && command -v prlimit >/dev/null; then
	test_expect_success 'the PROBE listener out of descriptors rests, never spins, and comes back' '
		mkdir fake &&
		printf "#!/bin/sh\necho \$PPID >$PWD/py.ppid\nn=0\nwhile [ ! -f $PWD/go ] && [ \$n -lt 600 ]; do sleep 0.1; n=\$((n + 1)); done\n" >fake/python3 &&
		chmod +x fake/python3 &&
		test_at_exit "touch go; [ ! -f dtrun.pid ] || { kill \$(cat dtrun.pid) 2>/dev/null; wait_for 10 eval \"! proc_alive \$(cat dtrun.pid)\"; }" &&
		{ dtrun --check -n 1 "$PWD/fake/python3" x.py >out 2>err & } &&
		echo $! >dtrun.pid &&
		wait_for 30 test -s py.ppid &&
		A=$(cat py.ppid) &&
		until case $(readlink /proc/$A/exe) in */dtrun-agent) true ;; *) false ;; esac; do
			A=$(awk "{ print \$4 }" /proc/$A/stat) &&
			test "$A" -gt 1 || return 1
		done &&
		port=$((0x$(listen_port $A))) &&
		hard=$(prlimit --pid $A --nofile --raw --noheadings -o HARD) &&
		soft=$(prlimit --pid $A --nofile --raw --noheadings -o SOFT) &&
		prlimit --pid $A --nofile=3:$hard &&
		exec 7<>/dev/tcp/127.0.0.1/$port &&
		test_expect_code 124 timeout -s INT 1 strace -qq -e trace=accept4 -o acc -p $A &&
		grep -c EMFILE acc >n &&
		test $(cat n) -ge 1 &&
		test $(cat n) -lt 100 &&
		prlimit --pid $A --nofile=$soft:$hard &&
		timeout 10 cat <&7 &&
		touch go &&
		{ wait $(cat dtrun.pid) || true; } &&
		grep -q "^localhost " out
	'
else
	test_skip 'the PROBE listener out of descriptors' 'needs root, strace and prlimit'
fi

test_expect_success 'NCCL_SOCKET_IFNAME naming an interface the host lacks: a problem (env or -x)' '
	test_expect_code 78 env NCCL_SOCKET_IFNAME=nosuch0 dtrun --check true >out 2>err &&
	test "$(col IFNAME localhost out)" = NONE &&
	grep -q "^dtrun: check: localhost: NCCL_SOCKET_IFNAME=nosuch0 selects no interface that is up here (.*lo.*): pass one it has (-x NCCL_SOCKET_IFNAME=IFACE)" err &&
	test_expect_code 78 dtrun --check -x GLOO_SOCKET_IFNAME=lo,nosuch1 -x NCCL_SOCKET_IFNAME=^lo,eth,ens,en,ib,bond,docker,veth,wl,br true 2>err &&
	grep -q "^dtrun: check: localhost: NCCL_SOCKET_IFNAME=^lo,eth,.*selects no interface" err &&
	! grep -q GLOO_SOCKET_IFNAME err
'

test_expect_success 'NCCL syntax: a prefix, = exact and ^ exclusion that leave an interface are fine' '
	dtrun --check true >out &&
	test "$(col IFNAME localhost out)" = - &&
	env NCCL_SOCKET_IFNAME=l dtrun --check true >out &&
	test "$(col IFNAME localhost out)" = ok &&
	dtrun --check -x NCCL_SOCKET_IFNAME==lo -x GLOO_SOCKET_IFNAME=lo true >out &&
	env NCCL_SOCKET_IFNAME=^nosuch dtrun --check true >out &&
	test_expect_code 78 env NCCL_SOCKET_IFNAME==l dtrun --check true >out
'

test_expect_success 'a python command: the interpreter and torch versions (torch: /usr/bin/python3)' '
	/usr/bin/python3 -c "import torch" 2>/dev/null || skip_test "torch is not importable by /usr/bin/python3"
	py=$(/usr/bin/python3 -c "import platform; print(platform.python_version())") &&
	torch=$(/usr/bin/python3 -c "import torch; print(torch.__version__)") &&
	dtrun --check -n 2 /usr/bin/python3 train.py >out &&
	test "$(col PYTHON localhost out)" = "$py" &&
	test "$(col TORCH localhost out)" = "$torch"
'

test_expect_success 'a script that imports torch, where the interpreter has none: a problem naming it, exit 78' '
	mkdir bin && printf "#!/bin/sh\nexec /usr/bin/python3 -S \"\$@\"\n" >bin/python3 &&
	chmod +x bin/python3 &&
	! bin/python3 -c "import torch" 2>/dev/null &&
	printf "import os\nfrom torch import nn\n" >uses.py &&
	test_expect_code 78 env PATH="$PWD/bin:$PATH" dtrun --check -n 2 python3 uses.py >out 2>err &&
	grep -q "localhost: the script imports torch, but $PWD/bin/python3 there has none (ModuleNotFoundError" err &&
	test_expect_code 78 env PATH="$PWD/bin:$PATH" dtrun --check python3 -u -c "import torch" >out 2>err &&
	grep -q "imports torch" err &&
	printf "import os\n# import torch\ntorchvision = 1\n" >plain.py &&
	env PATH="$PWD/bin:$PATH" dtrun --check python3 plain.py >out 2>err &&
	! grep -q "imports torch" err
'

test_expect_success 'GPUs: the lines of nvidia-smi -L where it exists; a failing one is a problem' '
	mkdir ok bad &&
	printf "#!/bin/sh\necho \"GPU 0: Fake H100 (UUID: GPU-0)\"\necho \"GPU 1: Fake H100 (UUID: GPU-1)\"\n" >ok/nvidia-smi &&
	printf "#!/bin/sh\necho \"NVIDIA-SMI has failed because it could not communicate with the NVIDIA driver.\"\nexit 9\n" >bad/nvidia-smi &&
	chmod +x ok/nvidia-smi bad/nvidia-smi &&
	dtrun --check -v -x PATH="$PWD/ok:$PATH" true >out &&
	test "$(col GPUS localhost out)" = 2 &&
	grep -qx "localhost:   gpu=GPU 1: Fake H100 (UUID: GPU-1)" out &&
	test_expect_code 78 dtrun --check -x PATH="$PWD/bad:$PATH" true >out 2>err &&
	test "$(col GPUS localhost out)" = FAILED &&
	grep -qx "dtrun: check: localhost: nvidia-smi -L failed: NVIDIA-SMI has failed because it could not communicate with the NVIDIA driver.: check its NVIDIA driver (a reboot after an upgrade, or nvidia-smi there, says more)" err
'

test_expect_success '-v: the system'"'"'s answers (kernel, glibc, limits, memory), also with --preflight' '
	dtrun --check -v >out 2>err &&
	grep -qx "localhost:   kernel=$(uname -r)" out &&
	grep -q "^localhost:   glibc=[0-9][0-9.]*$" out &&
	grep -q "^localhost:   memlock=\(unlimited\|[0-9]*\)$" out &&
	grep -q "^localhost:   rdma=[0-9]*$" out &&
	grep -qx "localhost:   overcommit=$(cat /proc/sys/vm/overcommit_memory)" out &&
	if test -r /sys/kernel/mm/transparent_hugepage/enabled; then
		grep -q "^localhost:   thp=\(always\|madvise\|never\)$" out
	fi &&
	grep -q "^localhost:   hugepages=[0-9]*$" out &&
	(ulimit -l 1024 && dtrun --check -v) >out 2>err &&
	grep -qx "localhost:   memlock=1024" out &&
	dtrun --preflight -v --launcher local -H a,b true >out 2>err &&
	grep -qx "b:   kernel=$(uname -r)" out &&
	! grep -q "torch\|nccl" out
'

test_expect_success 'the driver from nvidia-smi, the NCCL version from the name libnccl.so resolves to' '
	mkdir -p drv lib &&
	printf "#!/bin/sh\ncase \$1 in -L) echo \"GPU 0: Fake H100 (UUID: GPU-0)\" ;; --query-gpu=driver_version) echo 550.54.15 ;; esac\n" >drv/nvidia-smi &&
	chmod +x drv/nvidia-smi &&
	: >lib/libnccl.so.2.21.5 && ln -s libnccl.so.2.21.5 lib/libnccl.so.2 && ln -s libnccl.so.2 lib/libnccl.so &&
	dtrun --check -v -x PATH="$PWD/drv:$PATH" -x LD_LIBRARY_PATH="$PWD/lib" >out 2>err &&
	grep -qx "localhost:   driver=550.54.15" out &&
	grep -qx "localhost:   nccl=$PWD/lib/libnccl.so" out &&
	grep -qx "localhost:   nccl_version=2.21.5" out &&
	rm lib/libnccl.so.2 lib/libnccl.so.2.21.5 && : >lib/libnccl.so.2 &&
	dtrun --check -v -x LD_LIBRARY_PATH="$PWD/lib" >out 2>err &&
	grep -qx "localhost:   nccl=$PWD/lib/libnccl.so" out &&
	! grep -q nccl_version= out
'

# Simulated hosts (the local launcher starts an agent per name of -H):
# the first $ODD agents to start find odd/nvidia-smi (one A100, driver
# 535.1), the others even/ (two H100s, 550.2). Which names those are is
# the start's order: the tests read them from the table.
odd_agents() {
	mkdir odd even &&
	printf "#!/bin/sh\ncase \$1 in -L) echo \"GPU 0: Fake A100 (UUID: GPU-0)\" ;; --query-gpu=driver_version) echo 535.1 ;; esac\n" >odd/nvidia-smi &&
	printf "#!/bin/sh\ncase \$1 in -L) echo \"GPU 0: Fake H100 (UUID: GPU-0)\"; echo \"GPU 1: Fake H100 (UUID: GPU-1)\" ;; --query-gpu=driver_version) echo 550.2 ;; esac\n" >even/nvidia-smi &&
	chmod +x odd/nvidia-smi even/nvidia-smi &&
	cat >agent <<-EOS &&
	#!/bin/sh
	d=even
	for k in \$(seq 1 \$ODD); do mkdir $PWD/lock.\$k 2>/dev/null && { d=odd; break; }; done
	PATH=$PWD/\$d:\$PATH exec $B/dtrun-agent "\$@"
	EOS
	chmod +x agent
}

test_expect_success 'drift: the host that differs from the majority, named with the value most have' '
	odd_agents &&
	test_expect_code 78 env ODD=1 DTRUN_AGENT=$PWD/agent dtrun --launcher local -H a,b,c --check >out 2>err &&
	h=$(awk "\$10 == 1 { print \$1 }" out) &&
	test -n "$h" &&
	grep -qx "dtrun: check: driver on $h is 535.1, 2 of 3 hosts have 550.2: install the same NVIDIA driver everywhere" err &&
	grep -qx "dtrun: check: gpu_count on $h is 1, 2 of 3 hosts have 2: a GPU missing has usually fallen off the bus (nvidia-smi -L, dmesg there): fix it, or leave those hosts out" err &&
	grep -qx "dtrun: check: gpu_model on $h is Fake A100, 2 of 3 hosts have Fake H100: run on hosts of one GPU model: the slowest sets every step${Q}s pace" err &&
	grep -qx "dtrun: --check found 3 problems: see above" err
'

test_expect_success 'drift: two against two is no majority: each value with its hosts' '
	odd_agents &&
	test_expect_code 78 env ODD=2 DTRUN_AGENT=$PWD/agent dtrun --launcher local -H a,b,c,d --check >out 2>err &&
	o=$(awk "\$10 == 1 { print \$1 }" out | paste -sd " ") &&
	e=$(awk "\$10 == 2 { print \$1 }" out | paste -sd " ") &&
	set -- $o $e &&
	test $# -eq 4 &&
	if test "$1" = a; then
		grep -qx "dtrun: check: driver differs, with no majority: 535.1 on $1 and $2; 550.2 on $3 and $4: install the same NVIDIA driver everywhere" err
	else
		grep -qx "dtrun: check: driver differs, with no majority: 550.2 on $3 and $4; 535.1 on $1 and $2: install the same NVIDIA driver everywhere" err
	fi &&
	grep -q "^dtrun: check: gpu_count differs, with no majority: " err
'

test_expect_success '24 hosts: the hosts with problems first, one row for the healthy rest; 16 or -v: every row' '
	odd_agents &&
	printf "h%d\n" $(seq 1 24) >hf &&
	test_expect_code 78 env ODD=10 DTRUN_AGENT=$PWD/agent dtrun --launcher local -H hf --iface h17=nosuch0 --check >out 2>err &&
	head -n 1 out | grep -q "^HOST  *AGENT  *IFACE  *ADDRESS  *RANK0  *SKEW  *COMMAND" &&
	sed -n "/^HOST/,\$p" out >table &&
	n=$(awk "NR > 1 && \$1 ~ /^h[0-9]*$/" table | wc -l) &&
	test $n -ge 10 && test $n -le 11 &&
	test $(wc -l <table) -eq $((n + 2)) &&
	tail -n 1 table | grep -q "^$((24 - n)) more hosts  *0\.1\.0  *lo  *127\.0\.0\.1  *ok  *[-+][0-9.]*s\(\.\.[-+][0-9.]*s\)\{0,1\}  *-  *-  *-  *2  " &&
	sed -n "2,$((n + 1))p" table | grep -q "^h17 " &&
	test $(sed -n "2,$((n + 1))p" table | awk "\$(NF - 2) == 1" | wc -l) -eq 10 &&
	grep -q "^dtrun: check: h17: no interface to choose" err &&
	grep -q "^dtrun: check: gpu_count on h[0-9]*, \(h[0-9]*, \)\{6\}h[0-9]* and 2 more is 1, 14 of 24 hosts have 2: " err &&
	env ODD=10 DTRUN_AGENT=$PWD/agent dtrun --launcher local -H hf --check -v >out 2>err || test $? = 78 &&
	test $(grep -c "^h[0-9]*  " out) -eq 24 &&
	printf "h%d\n" $(seq 1 16) >hf16 &&
	dtrun --launcher local -H hf16 --check >out 2>err &&
	test $(wc -l <out) -eq 18 &&
	grep -qx "no problems on 16 hosts" out
'

test_expect_success '--setup runs first: its PATH finds the command (as the ranks would); nothing it started is left' '
	mkdir -p venv/bin && printf "#!/bin/sh\n" >venv/bin/mytool && chmod +x venv/bin/mytool &&
	test_expect_code 78 dtrun --check mytool >out 2>err &&
	test "$(col COMMAND localhost out)" = MISSING &&
	dtrun --check --setup "sleep 300 & echo \$! >setup.pid; echo PATH=\$PWD/venv/bin:\$PATH" mytool >out 2>err &&
	test "$(col COMMAND localhost out)" = "$PWD/venv/bin/mytool" &&
	grep -qx "no problems on 1 host" out &&
	wait_gone 5 setup.pid &&
	dtrun --check --setup "echo PATH=/nowhere" -x PATH=$PWD/venv/bin:$PATH mytool >out 2>err &&
	test "$(col COMMAND localhost out)" = "$PWD/venv/bin/mytool"
'

test_expect_success 'a --setup that fails: a problem with its stderr'"'"'s last line, exit 78' '
	test_expect_code 78 dtrun --check --setup "echo first >&2; echo no venv here >&2; exit 3" true >out 2>err &&
	grep -qx "dtrun: check: localhost: --setup failed there: exited with 3: no venv here: fix it (a run would stop there, exit 2, before any rank)" err &&
	dtrun --check --setup "touch setup-ran" true >out 2>err &&
	test -e setup-ran
'

test_expect_success 'bad input fails as a run does: exit 2, no agent' '
	test_expect_code 2 dtrun --check -n 0 true 2>err &&
	grep -q "^dtrun: -n 0: need at least 1" err &&
	test_expect_code 2 dtrun --check --iface "" 2>err &&
	grep -q "^dtrun: --iface needs an interface name" err
'

if why=$(sshd_skip_reason); then
	test_skip 'three loopback ssh hosts' "$why"
	test_skip 'two network-namespace hosts' "$why"
	test_done
fi
sshd_start || { echo "could not start sshd"; exit 1; }
H3=127.0.0.1,127.0.0.2,127.0.0.3
AGENTS=$TRASH/agents

test_expect_success 'ssh: three hosts, a row each, every one reaches rank 0 on 127.0.0.1' '
	dtrun "${SSH_ARGS[@]}" --ssh-agent-dir "$AGENTS" --check -H $H3 /usr/bin/python3 x.py >out 2>err &&
	test $(wc -l <out) -eq 5 &&
	for h in 127.0.0.1 127.0.0.2 127.0.0.3; do
		test "$(col RANK0 $h out)" = ok &&
		test "$(col ADDRESS $h out)" = 127.0.0.1 &&
		test "$(col COMMAND $h out)" = /usr/bin/python3 || return 1
	done &&
	grep -qx "no problems on 3 hosts" out &&
	wait_for 10 eval "! agents_alive"
'

test_expect_success 'ssh: ./CMD is found where the job would run, not in the home directory' '
	printf "#!/bin/sh\n" >job.sh && chmod +x job.sh &&
	dtrun "${SSH_ARGS[@]}" --ssh-agent-dir "$AGENTS" --check -H 127.0.0.2 ./job.sh >out 2>err &&
	test "$(col COMMAND 127.0.0.2 out)" = "$PWD/job.sh"
'

test_expect_success 'ssh: --setup runs on each host, in the job'"'"'s directory' '
	mkdir -p venv2/bin && printf "#!/bin/sh\n" >venv2/bin/tool2 && chmod +x venv2/bin/tool2 &&
	dtrun "${SSH_ARGS[@]}" --ssh-agent-dir "$AGENTS" --check -H $H3 --setup "echo PATH=\$PWD/venv2/bin:\$PATH" tool2 >out 2>err &&
	for h in 127.0.0.1 127.0.0.2 127.0.0.3; do
		test "$(col COMMAND $h out)" = "$PWD/venv2/bin/tool2" || return 1
	done
'

test_expect_success 'ssh: a command missing everywhere names every host, exit 78' '
	test_expect_code 78 dtrun "${SSH_ARGS[@]}" --ssh-agent-dir "$AGENTS" --check -H $H3 no-such-cmd-$$ >out 2>err &&
	test $(grep -c "^dtrun: check: 127.0.0.[123]: no-such-cmd-$$: command not found in PATH" err) -eq 3
'

test_expect_success 'ssh: a host that cannot be reached fails as in a run: 255, named, nothing left' '
	test_expect_code 255 dtrun "${SSH_ARGS[@]}" --ssh-agent-dir "$AGENTS" --check -H 127.0.0.1,127.0.0.9 true >out 2>err &&
	grep -q "^dtrun: 127.0.0.9: " err &&
	wait_for 10 eval "! agents_alive"
'

test_expect_success 'ssh: --preflight finds nothing wrong and the job runs' '
	dtrun "${SSH_ARGS[@]}" --ssh-agent-dir "$AGENTS" -v --preflight -H $H3 --prefix "%h " sh -c "echo ran" >out 2>err &&
	test $(grep -c " ran$" out) -eq 3 &&
	grep -q "^dtrun: --preflight: no problems on 3 hosts" err
'

test_expect_success 'ssh: --preflight stops a job whose command is missing before any rank starts' '
	test_expect_code 78 dtrun "${SSH_ARGS[@]}" --ssh-agent-dir "$AGENTS" --preflight -H $H3 no-such-cmd-$$ >out 2>err &&
	grep -q "^dtrun: preflight: 127.0.0.2: no-such-cmd-$$: command not found" err &&
	grep -q "^dtrun: --preflight found 3 problems: no rank was started" err &&
	test ! -s out
'

# Two hosts in network namespaces, joined by a veth (10.78.0.1, 10.78.0.2).
# Rank 0's host is named by 10.99.0.1, an address of the first namespace's
# loopback: that is the address its agent chooses (its route to itself).
# The second namespace routes 10.99.0.0/24 through 10.78.0.3, which does
# not exist: it has an interface and a route, but no connection gets there.
NA=dtrun-ca-$$ NB=dtrun-cb-$$
netns_pair 'two network-namespace hosts' "$NA" "$NB" 10.78.0
D=$TRASH/ns
ip -n "$NA" addr add 10.99.0.1/32 dev lo &&
ip -n "$NB" route add 10.99.0.0/24 via 10.78.0.3 ||
	{ echo "could not set up the addresses"; exit 1; }
netns_sshd "$NA" a 10.99.0.1
netns_sshd "$NB" b 10.78.0.2
HN=10.99.0.1,10.78.0.2
# dtrun ARGS... inside the first namespace.
nsrun() {
	ip netns exec "$NA" "$B/dtrun" --launcher ssh -i "$D/id" \
	    --ssh-option UserKnownHostsFile="$D/known_hosts" --ssh-agent-dir "$AGENTS" "$@"
}
# A job whose rank 1 connects to rank 0 at MASTER_ADDR:MASTER_PORT (rank 0
# listening there itself: --store rank0).
cat >"$TRASH/master.py" <<'EOP'
import os, socket, sys
r, a, p = int(os.environ["RANK"]), os.environ["MASTER_ADDR"], int(os.environ["MASTER_PORT"])
open(sys.argv[1] + "/ran.%d" % r, "w").close()
if r == 0:
    s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((a, p)); s.listen(1); s.accept()
else:
    socket.create_connection((a, p), timeout=60)
EOP

test_expect_success 'netns: --check names the pair that cannot connect, with the fix' '
	test_expect_code 78 nsrun --check -H $HN /usr/bin/python3 x.py >out 2>err &&
	test "$(col ADDRESS 10.99.0.1 out)" = 10.99.0.1 &&
	test "$(col RANK0 10.99.0.1 out)" = ok &&
	test "$(col IFACE 10.78.0.2 out)" = "$NETNS_V2" &&
	test "$(col RANK0 10.78.0.2 out)" = FAILED &&
	grep -q "^dtrun: check: 10.78.0.2 cannot reach rank 0${Q}s host 10.99.0.1 at its address 10.99.0.1 (lo): 10.99.0.1:[0-9]*: .*: choose an interface on 10.99.0.1 that every host reaches (--iface 10.99.0.1=IFACE), or let TCP through between them$" err &&
	test $(grep -c "^dtrun: check: " err) -eq 1
'

test_expect_success 'netns: the job fails without --preflight; with it, no rank starts (exit 78)' '
	test_expect_code 1 nsrun --store rank0 -H $HN python3 "$TRASH/master.py" "$PWD" 2>err1 &&
	test -e ran.0 && test -e ran.1 && rm ran.* &&
	test_expect_code 78 nsrun --store rank0 --preflight -H $HN python3 "$TRASH/master.py" "$PWD" 2>err &&
	grep -q "^dtrun: preflight: 10.78.0.2 cannot reach rank 0${Q}s host 10.99.0.1" err &&
	grep -q "^dtrun: --preflight found 1 problem: no rank was started" err &&
	test ! -e ran.0 && test ! -e ran.1 &&
	wait_for 10 eval "! agents_alive"
'

test_done
