# lib.sh -- sourced by every tNNNN-*.sh scenario test, in the style of git's t/.
#
#   test_expect_success 'what it does' 'commands'
#   test_skip 'what' 'why'             (a scenario this machine cannot run)
#   skip_test 'why'                    (inside a body)
#   test_done
#
# Each test runs in a fresh scratch directory under $TRASH. $B is the build
# directory with dtrun, dtrun-agent and the helper programs; PATH has it first.

set -u
: "${DTRUN_BUILD:=$(cd "$(dirname "$0")/../.." && pwd)/build}"
B=$DTRUN_BUILD
SRC=$(cd "$(dirname "$0")/../.." && pwd)
T_LIB=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
PATH=$B:$B/helpers:$PATH
export PATH B SRC
unset DTRUN_AGENT NO_COLOR
TRASH=$(mktemp -d "${TMPDIR:-/tmp}/dtrun-test.XXXXXX")
t_pass=0 t_fail=0 t_skip=0 t_n=0
# A pyenv shim runs bash scripts before each python3 it starts (a second of
# CPU, for each rank of a job): where this file runs python3, a link to the
# interpreter the shim starts in $TRASH comes first in PATH instead.
case $(command -v python3) in
*/shims/python3)
	if grep -q 'python3\|slow_reader' "$0" &&
	    t_py=$(cd "$TRASH" && python3 -c "import sys; print(sys.executable)") &&
	    mkdir "$TRASH/py" && ln -s "$t_py" "$TRASH/py/python3"; then
		PATH=$TRASH/py:$PATH
	fi ;;
esac

test_cleanup_hooks=""
# Runs at exit: the test's own cleanup (stop daemons by PID), then the scratch dir.
t_exit() {
	eval "$test_cleanup_hooks"
	rm -rf "$TRASH"
}
trap t_exit EXIT
# test_at_exit CMD -- runs CMD when the test ends (inside a body: when the
# body ends, pass or fail; outside: when the file ends). A body runs in a
# subshell, so its hooks go through a file, not a variable it would lose.
test_at_exit() {
	if [ -n "${t_in_body:-}" ]; then
		printf '%s\n' "$1" >>"$t_dir/.at_exit"
	else
		test_cleanup_hooks="$test_cleanup_hooks
$1"
	fi
}

# test_expect_success WHAT BODY -- runs BODY as a function, in a subshell,
# under errexit: any failing step fails the test, not only the last one. A
# body that breaks its &&-chain (chainlint.awk) fails before it runs.
test_expect_success() {
	t_n=$((t_n + 1))
	t_dir="$TRASH/$t_n"
	mkdir -p "$t_dir"
	t_lint=$(printf '%s\n' "$2" | awk -f "$T_LIB/chainlint.awk" 2>&1) ||
	    t_lint="chainlint.awk failed: $t_lint"
	if [ -n "$t_lint" ]; then
		echo "not ok $t_n - $1"
		echo "$t_lint" | sed 's/^/#   chain lint: body line /'
		t_fail=$((t_fail + 1))
		return
	fi
	eval "t_body() {
$2
}"
	# Not inside "if" or "&&": there the shell would ignore set -e.
	(t_in_body=1; set -e; cd "$t_dir"; t_body) >"$TRASH/out.$t_n" 2>&1
	t_rc=$?
	if [ -f "$t_dir/.at_exit" ]; then
		(cd "$t_dir" && . ./.at_exit) >/dev/null 2>&1
		rm -f "$t_dir/.at_exit"
	fi
	if [ $t_rc -eq 0 ] && [ -f "$t_dir/.skipped" ]; then
		echo "ok $t_n # skipped: $1 ($(cat "$t_dir/.skipped"))"
		t_skip=$((t_skip + 1))
	elif [ $t_rc -eq 0 ]; then
		echo "ok $t_n - $1"
		t_pass=$((t_pass + 1))
	else
		echo "not ok $t_n - $1 (exit $t_rc)"
		sed 's/^/#   /' "$TRASH/out.$t_n" | tail -n 40
		t_fail=$((t_fail + 1))
	fi
}

test_skip() {
	t_n=$((t_n + 1))
	echo "ok $t_n # skipped: $1 ($2)"
	t_skip=$((t_skip + 1))
}

# skip_test WHY -- inside a body: ends the test, counted as skipped, not passed.
skip_test() {
	echo "$*" >"$t_dir/.skipped"
	exit 0
}

test_done() {
	echo "# $t_pass passed, $t_fail failed, $t_skip skipped"
	[ $t_fail -eq 0 ]
	exit $?
}

# test_expect_code CODE CMD... -- runs CMD, fails unless it exits with CODE.
test_expect_code() {
	want=$1
	shift
	set +e
	"$@"
	got=$?
	set -e
	if [ "$got" -ne "$want" ]; then
		echo "exit code $got, want $want: $*" >&2
		return 1
	fi
}

# proc_alive PID -- true if PID exists and is not a zombie (PID 1 here reaps late).
proc_alive() {
	st=$(sed -n 's/^[0-9]* (.*) \([A-Za-z]\) .*/\1/p' "/proc/$1/stat" 2>/dev/null)
	[ -n "$st" ] && [ "$st" != Z ] && [ "$st" != X ]
}

# any_alive FILE... -- true if any PID listed in the files (one per line) is alive.
any_alive() {
	for f in "$@"; do
		[ -f "$f" ] || continue
		while read -r pid _; do
			[ -n "$pid" ] && proc_alive "$pid" && { echo "still alive: $pid ($(tr '\0' ' ' </proc/$pid/cmdline))" >&2; return 0; }
		done <"$f"
	done
	return 1
}

# agents_alive [DIR] -- true while a dtrun-agent run from DIR (default
# $AGENTS, a test's --ssh-agent-dir) is alive, in any namespace.
agents_alive() {
	for p in /proc/[0-9]*; do
		case $(readlink "$p/exe" 2>/dev/null) in
		"${1:-$AGENTS}"/*) proc_alive "${p#/proc/}" && return 0 ;;
		esac
	done
	return 1
}

# wait_for SECS CMD... -- retries CMD every 50 ms until it succeeds or SECS pass.
wait_for() {
	n=$(($1 * 20))
	shift
	while [ $n -gt 0 ]; do
		"$@" && return 0
		sleep 0.05
		n=$((n - 1))
	done
	return 1
}

# wait_gone SECS PIDFILE... -- waits until no PID in the files is alive.
wait_gone() {
	s=$1
	shift
	wait_for "$s" eval "! any_alive $* 2>/dev/null" || { any_alive "$@"; return 1; }
}

# bg_start NAME CMD... -- starts CMD (outside a body) in $TRASH/NAME, its
# stdout in out and stderr in err there, and its exit code in rc once it
# ends: a file's slow jobs that mostly wait can run at once, each checked
# by its own test (bg_end). The file's end stops the ones still running.
bg_start() {
	bg_d=$TRASH/$1
	shift
	mkdir -p "$bg_d"
	(cd "$bg_d" && { "$@" >out 2>err & echo $! >pid; wait $!; echo $? >rc.new; mv rc.new rc; }) &
	test_at_exit "bg_stop $bg_d $!"
	wait_for 10 test -s "$bg_d/pid"
}

# bg_stop DIR SUBSHELL -- stops the job of DIR (by its PID) unless it ended.
bg_stop() {
	[ -f "$1/rc" ] || kill "$(cat "$1/pid")" 2>/dev/null
	wait_for 30 eval "! proc_alive $(cat "$1/pid")"
	wait "$2"
}

# bg_end NAME CODE [SECS] -- waits (SECS, 180 by default) for job NAME
# (bg_start) to end; fails unless it exited with CODE.
bg_end() {
	wait_for "${3:-180}" test -f "$TRASH/$1/rc" || {
		echo "job $1 still running" >&2
		return 1
	}
	[ "$(cat "$TRASH/$1/rc")" = "$2" ] || {
		echo "job $1: exit code $(cat "$TRASH/$1/rc"), want $2" >&2
		return 1
	}
}

# slow_reader -- copies its stdin to its stdout once the writer has been
# held up: the pipe's unread bytes unchanged for 1 s (60 s at most). A
# reader that comes late, as late as a check of it needs and no later.
slow_reader() {
	python3 -c '
import fcntl, shutil, struct, sys, termios, time
last, since = -1, time.monotonic()
end = since + 60
while time.monotonic() < end:
    n = struct.unpack("i", fcntl.ioctl(0, termios.FIONREAD, b"    "))[0]
    if n != last:
        last, since = n, time.monotonic()
    elif n > 0 and time.monotonic() - since >= 1:
        break
    time.sleep(0.05)
shutil.copyfileobj(sys.stdin.buffer, sys.stdout.buffer)
'
}
