#!/bin/bash
# t2030-store.sh -- dtrun's TCPStore-compatible store (storeserve) serving
# real torch 1.13 ranks as torchrun's agent store does: every rank a client
# (TCPStore(host, port, 4, False) under PrefixStore("/worker/attempt_0")),
# init_process_group over gloo and an all_reduce; a rank writing a value
# past the limit gets an error and the store goes on; a stranger speaking
# garbage, or never reading, harms no one else. A torch >= 2.2 client,
# written from PyTorch's source (store-client2.py), runs every query.
# The benchmark's load generator (bench/store/storeload) plays torch 1.13's
# init at a small size, and fails when the store answers what torch would
# not take. No timing is checked: the numbers are the benchmark's.
. "$(dirname "$0")/lib.sh"

PY=/usr/bin/python3

# store_start ARGS... -- starts storeserve ARGS; $store_pid, $store_port.
# Its PID goes to $TRASH/pids for the file's cleanup, and the body's own
# cleanup stops it and waits until it is gone.
store_start() {
	rm -f port
	storeserve -o port "$@" >serve.out 2>serve.err &
	store_pid=$!
	echo "$store_pid" >>"$TRASH/pids"
	test_at_exit "kill $store_pid; wait_for 10 eval '! proc_alive $store_pid'"
	wait_for 10 test -s port || { cat serve.err; return 1; }
	store_port=$(cat port)
}

# store_stop -- stops storeserve, waits for it and shows its stderr.
store_stop() {
	kill "$store_pid"
	wait "$store_pid" || true
	cat serve.err
}

# ranks N -- runs N torch ranks against $store_port, each bounded by 120 s
# so a hang fails the test, and waits for them; true when every one of
# them printed its sum.
ranks() {
	i=0 rank_pids=
	while [ $i -lt "$1" ]; do
		timeout 120 "$PY" "$SRC/tests/sh/store-rank.py" "$store_port" \
		    $i "$1" >out.$i 2>err.$i &
		rank_pids="$rank_pids $!"
		i=$((i + 1))
	done
	for p in $rank_pids; do
		wait "$p" || true
	done
	cat out.* err.*
	test "$(cat out.* | grep -c "^rank [0-9]* ok $(($1 * ($1 + 1) / 2))")" -eq "$1"
}

# write_stranger -- writes stranger.py PORT WHAT: an HTTP request ("http"),
# a SET claiming a 4 GiB key ("huge"), both waiting to be cut off, or a
# client asking for a 16 MiB value 100 times without reading ("hog").
write_stranger() {
	cat >stranger.py <<-\EOS
	import socket, struct, sys, time
	port, what = int(sys.argv[1]), sys.argv[2]
	s = socket.create_connection(("127.0.0.1", port), timeout=30)
	if what == "http":
	    s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	elif what == "huge":   # a legacy SET whose key claims 4 GiB
	    s.sendall(b"\x00" + struct.pack("<Q", 4 << 30) + b"k" * 100)
	else:   # "hog": a 16 MiB value, asked for 100 times, never read
	    key = struct.pack("<Q", 3) + b"big"
	    s.sendall(b"\x00" + key + struct.pack("<Q", 16 << 20) + b"x" * (16 << 20))
	    s.sendall((b"\x02" + key) * 100)
	    print("asked", flush=True)
	    time.sleep(120)
	print("cut off" if s.recv(1) == b"" else "answered")
	EOS
}

# stranger WHAT -- stranger.py WHAT in the background (stdout: WHAT.out).
stranger() {
	timeout 60 python3 stranger.py "$store_port" "$1" >"$1.out" 2>&1 &
	stranger_pid=$!
	echo $! >>"$TRASH/pids"
}

test_at_exit 'for p in $(cat "$TRASH/pids" 2>/dev/null); do kill "$p" 2>/dev/null; done'

# No torch >= 2.2 here: a client written from its source, any python3.
test_expect_success 'a torch >= 2.2 client: every query, a wait cancelled, QUEUE_PUSH refused' '
	store_start &&
	timeout 60 python3 "$SRC/tests/sh/store-client2.py" "$store_port" >c2.out 2>&1 ||
	    { cat c2.out; false; } &&
	cat c2.out &&
	test "$(grep -c "^ok " c2.out)" -eq 15 &&
	tail -n 1 c2.out | grep -qx "cut off" &&
	store_stop >stop.err &&
	cat stop.err &&
	grep -q "closed: QUEUE_PUSH (opcode 14 of a torch >= 2.2 client) is not served" stop.err
'

# play BACKEND N KEYS -- storeload's N simulated ranks run their init on a
# fresh store, every one through with the right values (rank 0's unique id
# byte for byte, gloo's every address), and leave KEYS keys.
play() {
	store_start &&
	timeout 120 "$B/bench/storeload" -p "$store_port" -t 100 -b "$1" \
	    -n "$2" >load.out 2>&1 ||
	    { cat load.out; false; } &&
	cat load.out &&
	grep -q "^storeload: $1 $2 ranks in [0-9.]* ms" load.out &&
	store_stop >stop.err &&
	cat stop.err &&
	grep -q "$2 accepted, 0 cut off, [0-9]* queries, $3 keys" stop.err
}

if ! test -x "$B/bench/storeload"; then
	test_skip 'storeload: 64 nccl ranks' "$B/bench/storeload is not built (make check builds it)"
	test_skip 'storeload: 16 gloo ranks' "$B/bench/storeload is not built"
	test_skip 'storeload: a second job on the same store' "$B/bench/storeload is not built"
else
test_expect_success 'storeload: 64 nccl ranks, one id for all, the barrier reaches 64' '
	play nccl 64 3
'

test_expect_success 'storeload: 16 gloo ranks, every pair of addresses, the sequence number' '
	play gloo 16 35
'

test_expect_success 'storeload: a second job on the same store sees the barrier past 64, and fails' '
	store_start &&
	timeout 120 "$B/bench/storeload" -p "$store_port" -b nccl -n 64 >load.out 2>&1 &&
	! timeout 120 "$B/bench/storeload" -p "$store_port" -t 100 -b nccl \
	    -n 64 >load2.out 2>&1 &&
	cat load2.out &&
	n=$(sed -n "s/.*barrier count out of range (\([0-9]*\))$/\1/p" load2.out) &&
	test "$n" -gt 64 &&
	store_stop
'
fi

if ! "$PY" -c 'import torch.distributed' 2>/dev/null; then
	test_skip '4 torch ranks init gloo and all_reduce through the store' 'no torch'
	test_skip 'a value past the limit is an error for its rank alone' 'no torch'
	test_skip 'a stranger speaking garbage is cut off; the job completes' 'no torch'
	test_skip 'a client that never reads its replies costs one value, not 100' 'no torch'
	test_done
fi

test_expect_success '4 torch ranks init gloo and all_reduce through the store' '
	store_start &&
	ranks 4 &&
	proc_alive $store_pid &&
	store_stop >stop.err &&
	cat stop.err &&
	! grep -q "closed:" stop.err &&
	grep -q "8 accepted, 0 cut off" stop.err
'

test_expect_success 'a value past the limit is an error for its rank alone' '
	store_start &&
	cat >big.py <<-\EOS &&
	import datetime, sys, torch.distributed as dist
	s = dist.TCPStore("127.0.0.1", int(sys.argv[1]), 1, False,
	                  timeout=datetime.timedelta(seconds=20))
	s.set("small", b"ok")
	try:
	    s.set("big", b"x" * (65 << 20))
	    s.get("small")
	except Exception as e:
	    print("refused:", type(e).__name__, e)
	    sys.exit(0)
	print("accepted a 65 MiB value")
	sys.exit(1)
	EOS
	timeout 60 "$PY" big.py "$store_port" >big.out 2>&1 ||
	    { cat big.out; false; } &&
	cat big.out &&
	grep -q "^refused: " big.out &&
	ranks 4 &&
	store_stop >stop.err &&
	cat stop.err &&
	grep -q "closed: a value of 68157440 bytes (at most 67108864)" stop.err
'

test_expect_success 'a stranger speaking garbage is cut off; the job completes' '
	store_start &&
	write_stranger &&
	stranger http &&
	stranger huge &&
	ranks 4 &&
	wait_for 30 grep -q "cut off" http.out &&
	wait_for 30 grep -q "cut off" huge.out &&
	store_stop >stop.err &&
	cat stop.err &&
	grep -q "closed: opcode 71 is no TCPStore query" stop.err &&
	grep -q "closed: a key of 4294967296 bytes" stop.err
'

test_expect_success 'a client that never reads its replies costs one value, not 100' '
	store_start &&
	write_stranger &&
	stranger hog &&
	wait_for 60 grep -q asked hog.out &&
	ranks 4 &&
	hwm=$(grep "^VmHWM:" /proc/$store_pid/status | tr -dc 0-9) &&
	echo "storeserve peak: $hwm kB" &&
	kill $stranger_pid &&
	{ wait $stranger_pid || true; } &&
	store_stop &&
	test "$hwm" -lt $((300 * 1024))
'

test_done
