#!/bin/bash
# t4051-hang-wrappers.sh -- the hang doctor sees through wrappers: a rank
# that is a shell running Python (no exec), or a Python process whose child
# is the one stuck, is reported by the Python line of the process doing the
# work, and the full stacks list every process of the rank.
# Needs gdb and python3-dbg (Debian's /usr/bin/python3, for Python frames).
. "$(dirname "$0")/lib.sh"

PY=/usr/bin/python3

# need_py_gdb -- skips the test without gdb or the interpreter's gdb extension.
need_py_gdb() {
	command -v gdb >/dev/null || skip_test "no gdb"
	[ -x "$PY" ] || skip_test "no $PY"
	ls "/usr/share/gdb/auto-load$(readlink -f "$PY")"-gdb.py >/dev/null 2>&1 ||
	    skip_test "no gdb extension for $PY (install python3-dbg)"
}

# write_spin_py -- spin.py: says it runs, then spins in spin() at line 6.
write_spin_py() {
	cat >spin.py <<-\PYEOF
	# spin() spins at line 6.


	def spin():
	    print("spinning", flush=True)
	    while True: pass


	spin()
	PYEOF
}

# check_report N WHAT -- each of the N ranks' line in err names WHAT, from a
# process other than the rank's own; the stacks file lists every process.
check_report() {
	grep -q "^dtrun: stacks of $1 ranks in 1 group, outliers first:" err &&
	grep -q "^dtrun:   ranks 0-$(($1 - 1)) ($1): $2\$" err &&
	f=$(sed -n "s/^dtrun: full stacks of every rank: //p" err) &&
	for r in $(seq 0 $(($1 - 1))); do
		sed -n "/^=== rank $r on /,/^=== rank /p" "$f" >rank.txt &&
		pid=$(sed -n "1s/^=== rank $r on localhost, pid \([0-9]*\) .*/\1/p" rank.txt) &&
		grep -q "^signature (process [0-9]*): $2\$" rank.txt &&
		! grep -q "^signature (process $pid):" rank.txt &&
		grep -q "^== process $pid, parent [0-9]*, state .: " rank.txt &&
		test "$(grep -c "^== process [0-9]*, parent [0-9]*, state .: " rank.txt)" -ge 2 ||
		return 1
	done
}

test_expect_success 'a bash script running python3 (no exec): the Python line, not bash in wait4' '
	need_py_gdb &&
	write_spin_py &&
	printf "#!/bin/bash\n%s spin.py\necho done\n" "$PY" >train.sh &&
	chmod +x train.sh &&
	test_expect_code 123 timeout 120 dtrun -n 2 --hang-timeout 2 ./train.sh >out 2>err &&
	check_report 2 "spin (spin.py:6) <- <module> (spin.py:9)" &&
	f=$(sed -n "s/^dtrun: full stacks of every rank: //p" err) &&
	grep -q "^== process [0-9]*, parent [0-9]*, state .: /bin/bash ./train.sh\$" "$f" &&
	grep -q "^== process [0-9]*, parent [0-9]*, state R: $PY spin.py\$" "$f"
'

test_expect_success 'sh -c "python3 spin.py; true" (no exec): the Python line' '
	need_py_gdb &&
	write_spin_py &&
	test_expect_code 123 timeout 120 dtrun -n 2 --hang-timeout 2 sh -c "$PY spin.py; true" >out 2>err &&
	check_report 2 "spin (spin.py:6) <- <module> (spin.py:9)"
'

test_expect_success 'a DataLoader-like worker (multiprocessing) spins while its parent waits on a queue: the worker'"'"'s line' '
	need_py_gdb &&
	cat >dl.py <<-\PYEOF &&
	import multiprocessing as mp


	def worker(q):
	    print("spinning", flush=True)
	    while True: pass


	if __name__ == "__main__":
	    q = mp.Queue()
	    mp.Process(target=worker, args=(q,), daemon=True).start()
	    print(q.get())
	PYEOF
	test_expect_code 123 timeout 120 dtrun -n 2 --hang-timeout 2 "$PY" dl.py >out 2>err &&
	check_report 2 "worker (dl.py:6) <- run (process.py:[0-9]*) <- .*"
'

test_expect_success 'a child (subprocess) asleep in a Python loop while its parent reads its pipe: the child'"'"'s line' '
	need_py_gdb &&
	cat >child.py <<-\PYEOF &&
	import time


	def stuck():
	    print("stuck", flush=True)
	    while True: time.sleep(60)


	stuck()
	PYEOF
	cat >parent.py <<-PYEOF &&
	import subprocess


	def feed():
	    p = subprocess.Popen(["$PY", "child.py"], stdout=subprocess.PIPE)
	    for line in p.stdout:
	        print(line.decode(), end="", flush=True)


	feed()
	PYEOF
	test_expect_code 123 timeout 120 dtrun -n 2 --hang-timeout 2 "$PY" parent.py >out 2>err &&
	check_report 2 "stuck (child.py:6) <- <module> (child.py:9)"
'

test_done
