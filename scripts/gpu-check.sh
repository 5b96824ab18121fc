#!/bin/bash
# gpu-check.sh [BUILDDIR] -- what only a machine with NVIDIA GPUs can
# check, ready to run there (make gpu-check): dtrun's local launcher, one
# rank per GPU,
#   dtcomm    libdtcomm makes a NCCL communicator over dtrun's rendezvous
#             (helpers/rdzv-probe -c)
#   example   examples/allreduce: a NCCL allreduce through libdtcomm
#   torch     the python3 that has torch: init_process_group("nccl") and
#             an all_reduce on the GPUs, then 4 gloo ranks, both through
#             the store dtrun serves (its TCPStore clients, whatever
#             torch's version), and a restart through a fresh store
#   plugin    NCCL loads dtrun's profiler plugin (NCCL_PROFILER_PLUGIN)
#             and every collective's arrival reaches dtrun; 5,000 small
#             all_reduces timed with it and with --no-nccl-profiler
# NCCL is found by ldconfig, under CUDA, or in the nvidia-nccl wheel of
# that python3. Ends with "N passed, N failed"; a check whose tool is
# missing says "skipped: <why>". Logs go to $OUT (or a temporary
# directory).
set -u
B=$(cd "${1:-build}" && pwd)
top=$(cd "$(dirname "$0")/.." && pwd)
L=${OUT:-$(mktemp -d /tmp/dtrun-gpu.XXXXXX)}
pass=0 fail=0 skip=0
PY=$(command -v python3)
for p in /opt/torch/.venv/bin/python3 /usr/bin/python3 "$PY"; do
	[ -x "$p" ] && "$p" -c 'import torch' 2>/dev/null && { PY=$p; break; }
done

ok() { echo "ok - $1"; pass=$((pass + 1)); }
bad() { echo "not ok - $1"; sed -n '1,40p' "$2" | sed 's/^/#   /'; fail=$((fail + 1)); }
skip() { echo "skipped: $1: $2"; skip=$((skip + 1)); }

if ! command -v nvidia-smi >/dev/null || ! nvidia-smi -L >"$L/gpus" 2>&1; then
	echo "skipped: no GPU (nvidia-smi)"
	echo "0 passed, 0 failed, 1 skipped"
	exit 0
fi
cat "$L/gpus"
n=$(grep -c "^GPU" "$L/gpus")

# Where libnccl.so.2 is, for libdtcomm's dlopen and the example.
nccl=$("$PY" -c 'import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], "lib"))' 2>/dev/null)
for d in "$nccl" /usr/local/cuda/lib64 /usr/local/cuda/lib /usr/local/cuda/targets/x86_64-linux/lib; do
	[ -n "$d" ] && [ -d "$d" ] && LD_LIBRARY_PATH=$d${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
done
cudart=$("$PY" -c 'import nvidia.cuda_runtime, os; print(os.path.join(list(nvidia.cuda_runtime.__path__)[0], "lib"))' 2>/dev/null)
[ -n "$cudart" ] && [ -d "$cudart" ] && LD_LIBRARY_PATH=$cudart:$LD_LIBRARY_PATH
export LD_LIBRARY_PATH
echo "LD_LIBRARY_PATH=$LD_LIBRARY_PATH; python: $PY ($("$PY" -c 'import torch; print(torch.__version__, torch.version.cuda, torch.cuda.nccl.version() if torch.cuda.is_available() else None)' 2>&1 | tail -1))"
D="$B/dtrun"
cd "$L" || exit 1

# dtcomm: each rank its own GPU (device 0 of its CUDA_VISIBLE_DEVICES).
if timeout 120 "$D" -n "$n" --prefix "%r " sh -c 'CUDA_VISIBLE_DEVICES=$LOCAL_RANK exec "$0" -c' \
    "$B/helpers/rdzv-probe" >dtcomm.out 2>&1 &&
    [ "$(grep -c " comm ok" dtcomm.out)" -eq "$n" ]; then
	ok "dtcomm: a NCCL communicator of $n rank(s) over dtrun's rendezvous"
else
	bad "dtcomm: a NCCL communicator of $n rank(s) over dtrun's rendezvous" dtcomm.out
fi

if [ ! -x "$B/examples/allreduce" ]; then
	skip "example" "examples/allreduce not built (no CUDA where it was built)"
elif timeout 120 "$D" -n "$n" --prefix "" "$B/examples/allreduce" >ex.out 2>&1 &&
    [ "$(grep -c "^rank [0-9]* of $n: allreduce of" ex.out)" -eq "$n" ]; then
	ok "example: examples/allreduce on $n GPU(s)"
else
	bad "example: examples/allreduce on $n GPU(s)" ex.out
fi

if ! "$PY" -c 'import torch' 2>/dev/null; then
	skip "torch" "no python3 with torch"
else
	cat >nccl.py <<'EOP'
import os, time, torch, torch.distributed as dist
dist.init_process_group("nccl")
r = dist.get_rank()
torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
t = torch.ones(1024, device="cuda") * (r + 1)
dist.all_reduce(t)
torch.cuda.synchronize()
print("nccl rank %d of %d sum %d store %s at %s:%s" % (r, dist.get_world_size(),
      int(t[0].item()), os.environ.get("TORCHELASTIC_USE_AGENT_STORE"),
      os.environ["MASTER_ADDR"], os.environ["MASTER_PORT"]), flush=True)
# Small all_reduces, timed: what the profiler plugin adds to each.
x = torch.ones(16, device="cuda")
for i in range(200):
    dist.all_reduce(x)
torch.cuda.synchronize()
t0 = time.perf_counter()
for i in range(5000):
    dist.all_reduce(x)
torch.cuda.synchronize()
print("nccl rank %d: %.2f us per all_reduce, plugin %s" % (r,
      (time.perf_counter() - t0) / 5000 * 1e6,
      os.environ.get("NCCL_PROFILER_PLUGIN", "none")), flush=True)
dist.destroy_process_group()
EOP
	if timeout 180 "$D" -v -n "$n" -x NCCL_DEBUG=INFO -x NCCL_DEBUG_SUBSYS=INIT \
	    -x DTRUN_NCCLPROF_DEBUG=1 --prefix "" "$PY" nccl.py >nccl.out 2>&1 &&
	    [ "$(grep -c "^nccl rank [0-9]* of $n sum $((n * (n + 1) / 2)) store True at 127.0.0.1:" nccl.out)" -eq "$n" ]; then
		ok "torch: init_process_group(\"nccl\") and all_reduce on $n GPU(s) through dtrun's store"
	else
		bad "torch: init_process_group(\"nccl\") and all_reduce on $n GPU(s) through dtrun's store" nccl.out
	fi
	if grep -q "PROFILER/Plugin: Loaded dtrun (v5)" nccl.out &&
	    [ "$(grep -c "^dtrun-ncclprof: rank [0-9]*: .* comm of $n rank(s)" nccl.out)" -ge "$n" ]; then
		ok "plugin: NCCL loaded dtrun's profiler plugin (v5) and opened a communicator of $n in it"
	else
		bad "plugin: NCCL loaded dtrun's profiler plugin (v5) and opened a communicator of $n in it" nccl.out
	fi
	# NCCL reports no collective of a one-rank communicator (it copies).
	a=$(sed -n "s/^dtrun: straggler watch: \([0-9]*\) arrivals at NCCL collectives.*/\1/p" nccl.out)
	if [ "$n" -lt 2 ]; then
		skip "plugin: every collective's arrival reaches dtrun" "one GPU: NCCL reports nothing for a one-rank communicator"
	elif [ "${a:-0}" -ge $((5201 * n)) ]; then
		ok "plugin: every collective's arrival reaches dtrun (${a})"
	else
		bad "plugin: every collective's arrival reaches dtrun (${a:-none})" nccl.out
	fi
	if timeout 180 "$D" -n "$n" --no-nccl-profiler --prefix "" "$PY" nccl.py >nccl-off.out 2>&1 &&
	    grep -q "plugin none\$" nccl-off.out; then
		ok "plugin: --no-nccl-profiler loads none ($(grep -o "[0-9.]* us per all_reduce" nccl.out | head -1) with it, $(grep -o "[0-9.]* us per all_reduce" nccl-off.out | head -1) without)"
	else
		bad "plugin: --no-nccl-profiler loads none" nccl-off.out
	fi
	if timeout 180 "$D" -v -n 4 --prefix "" "$PY" "$top/tests/sh/store-job.py" >gloo.out 2>&1 &&
	    [ "$(grep -c "^attempt 0 rank [0-9] of 4 sum 10 agent-store True at 127.0.0.1:[0-9]* fresh [01]$" gloo.out)" -eq 4 ]; then
		ok "torch: 4 gloo ranks through dtrun's store"
	else
		bad "torch: 4 gloo ranks through dtrun's store" gloo.out
	fi
	if timeout 240 "$D" -v -n 2 --max-restarts 1 --restart-delay 0.1 --prefix "" "$PY" \
	    "$top/tests/sh/store-job.py" restart >restart.out 2>&1 &&
	    grep -q "^attempt 1 rank 0 of 2 sum 3 agent-store True .* fresh 1$" restart.out &&
	    grep -q "^attempt 1 rank 1 of 2 sum 3 " restart.out; then
		ok "torch: a restart re-inits through a fresh store"
	else
		bad "torch: a restart re-inits through a fresh store" restart.out
	fi
fi
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
