#!/bin/bash
# t0061-crashloop.sh -- --max-restarts stops a crash loop: an attempt whose
# first failed rank fails as the last attempt's did (the same exit code or
# signal, exception and last frames) is not followed by another, unless
# --restart-on-same-failure; a flaky failure, a hang or a lost host still
# restarts. Every rank but the failing one waits to be stopped.
. "$(dirname "$0")/lib.sh"

# MODE picks what rank 1 does on attempt A (DTRUN_RESTART_COUNT):
#   same   raises the same ValueError at the same line (its number is A)
#   flaky  raises ValueError, then KeyError, then succeeds
#   file   as same, but says it only in its torch error file
cat >"$TRASH/crash.py" <<'EOS'
import json, os, sys, time

a = int(os.environ["DTRUN_RESTART_COUNT"])
mode = os.environ["MODE"]


def step(batch):
    if mode == "flaky" and a == 1:
        raise KeyError("batch %d" % batch)
    raise ValueError("bad batch %d" % batch)


def main():
    if mode == "flaky" and a >= 2:
        return
    if os.environ["RANK"] != "1":
        time.sleep(300)
    if mode == "file":
        tb = ('Traceback (most recent call last):\n  File "/x/fromfile.py", '
              'line 5, in load\nOSError: disk %d full\n' % a)
        with open(os.environ["TORCHELASTIC_ERROR_FILE"], "w") as f:
            json.dump({"message": {"message": "OSError", "extraInfo":
                      {"py_callstack": tb, "timestamp": "1"}}}, f)
        sys.exit(1)
    step(a + 7)


main()
EOS
C=$TRASH/crash.py

test_expect_success 'the same Python failure twice: stopped after two attempts, with the rank'"'"'s code' '
	{ command -v python3 >/dev/null || skip_test "no python3"; } &&
	test_expect_code 1 env MODE=same dtrun -n 2 --max-restarts 3 --restart-delay 0 --timeout 120 python3 "$C" >out 2>err &&
	grep -q "^dtrun: the same failure twice (rank 1: exit 1; ValueError: bad batch 8 at crash.py:10 in step): not restarting; --max-restarts budget left: 2 (--restart-on-same-failure restarts anyway)\$" err &&
	grep -q "^dtrun: 2 attempts (1 restart):" err &&
	grep -q "^dtrun:   attempt 0 at .* exit 1: rank 1 on localhost exited with code 1 first.* (ValueError: bad batch 7 at crash.py:10 in step)\$" err &&
	grep -q "^dtrun:   attempt 1 at .* (ValueError: bad batch 8 at crash.py:10 in step)\$" err &&
	! grep -q "restart 2 of 3" err
'

test_expect_success 'a flaky failure (another exception each time) restarts until it succeeds' '
	{ command -v python3 >/dev/null || skip_test "no python3"; } &&
	MODE=flaky dtrun -n 2 --max-restarts 3 --restart-delay 0 --timeout 120 python3 "$C" >out 2>err &&
	grep -q "^dtrun: 3 attempts (2 restarts):" err &&
	grep -q "^dtrun:   attempt 0 at .* (ValueError: bad batch 7 at crash.py:10 in step)\$" err &&
	grep -q "^dtrun:   attempt 1 at .* (KeyError: .batch 8. at crash.py:9 in step)\$" err &&
	grep -q "^dtrun:   attempt 2 at .* exit 0: every rank exited 0\$" err &&
	! grep -q "same failure" err
'

test_expect_success '--restart-on-same-failure restarts the same failure until the budget is gone' '
	{ command -v python3 >/dev/null || skip_test "no python3"; } &&
	test_expect_code 1 env MODE=same dtrun -n 2 --max-restarts 2 --restart-on-same-failure --restart-delay 0 --timeout 120 python3 "$C" >out 2>err &&
	grep -q "no restart left (--max-restarts 2): exit 1" err &&
	grep -q "^dtrun: 3 attempts (2 restarts):" err &&
	! grep -q "same failure" err
'

test_expect_success 'the traceback of the torch error file counts (what the rank wrote, not its stderr)' '
	{ command -v python3 >/dev/null || skip_test "no python3"; } &&
	test_expect_code 1 env MODE=file dtrun -n 2 --max-restarts 3 --restart-delay 0 --timeout 120 python3 "$C" >out 2>err &&
	grep -q "^dtrun: the same failure twice (rank 1: exit 1; OSError: disk 1 full at fromfile.py:5 in load): not restarting" err
'

test_expect_success 'a plain exit code, no traceback: the same code twice is stopped; another code restarts' '
	test_expect_code 3 dtrun -n 2 --max-restarts 3 --restart-delay 0 --timeout 60 \
	    sh -c "test \$RANK = 1 || exec sleep 300; echo oops >&2; exit 3" 2>err &&
	grep -q "^dtrun: the same failure twice (rank 1: exit 3): not restarting; --max-restarts budget left: 2 " err &&
	grep -q "^dtrun: 2 attempts (1 restart):" err &&
	test_expect_code 5 dtrun -n 2 --max-restarts 2 --restart-delay 0 --timeout 60 \
	    sh -c "test \$RANK = 1 || exec sleep 300; exit \$((3 + DTRUN_RESTART_COUNT))" 2>err &&
	grep -q "no restart left (--max-restarts 2): exit 5" err &&
	! grep -q "same failure" err
'

test_expect_success 'a rank killed by the same signal twice is stopped, exit 128+N' '
	test_expect_code 137 dtrun -n 2 --max-restarts 3 --restart-delay 0 --timeout 60 \
	    sh -c "test \$RANK = 1 || exec sleep 300; kill -9 \$\$" 2>err &&
	grep -q "^dtrun: the same failure twice (rank 1: signal 9 (SIGKILL)): not restarting; --max-restarts budget left: 2 " err &&
	grep -q "^dtrun: 2 attempts (1 restart):" err
'

test_expect_success 'killed by signal 9 and exit 9 are not the same failure' '
	dtrun -n 1 --max-restarts 2 --restart-delay 0 --timeout 60 \
	    sh -c "case \$DTRUN_RESTART_COUNT in 0) kill -9 \$\$ ;; 1) exit 9 ;; esac" 2>err &&
	grep -q "^dtrun: 3 attempts (2 restarts):" err &&
	! grep -q "same failure" err
'

test_expect_success 'a hang is never the same failure: two hangs in a row restart' '
	test_expect_code 123 dtrun -n 1 --max-restarts 1 --hang-timeout 1 --restart-delay 0 --timeout 120 \
	    sh -c "echo started; exec sleep 300" >out 2>err &&
	grep -q "no restart left (--max-restarts 1): exit 123" err &&
	grep -q "^dtrun: 2 attempts (1 restart):" err &&
	! grep -q "same failure" err
'

test_done
