# rdzv-lib.sh -- shared by the t2000-rdzv-*.sh tests: a stand-alone
# rendezvous (rdzv-serve) and libdtcomm probes, until dtrun hosts it.

# serve_start ARGS... -- starts rdzv-serve ARGS in the background, waits for
# its env file and exports DTRUN_RDZV_ADDR/TOKEN; $serve_pid is its PID.
serve_start() {
	rm -f env
	rdzv-serve -o env "$@" 2>serve.err &
	serve_pid=$!
	echo "$serve_pid" >>"$TRASH/pids"
	wait_for 10 test -f env || { cat serve.err; return 1; }
	set -a
	. ./env
	set +a
}

# serve_wait -- waits for rdzv-serve to exit and returns its exit code.
serve_wait() {
	set +e
	wait "$serve_pid"
	rc=$?
	set -e
	return $rc
}

# nccl_loadable -- true if this host can dlopen NCCL and make an id.
nccl_loadable() {
	ldconfig -p 2>/dev/null | grep -q 'libnccl\.so\.2' ||
	    [ -n "${DTRUN_NCCL_LIBRARY:-}" ]
}

# have_gpu -- true if a CUDA GPU is visible.
have_gpu() {
	command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null | grep -q GPU
}

# nobody_dir -- prints a fresh directory every user may enter (mode 755)
# holding a copy of rdzv-probe and the libdtcomm it loads ($ORIGIN/..):
# what a test runs as another user must not live in the build, which may
# sit under a directory only we can enter (a clone in a 0700 home).
nobody_dir() {
	nd=$(mktemp -d /tmp/dtrun-XXXX) &&
	chmod 755 "$nd" &&
	mkdir -m 755 "$nd/helpers" &&
	cp "$B/helpers/rdzv-probe" "$nd/helpers/" &&
	cp -L "$B/libdtcomm.so.0" "$nd/" &&
	chmod 755 "$nd/helpers/rdzv-probe" "$nd/libdtcomm.so.0" &&
	echo "$nd"
}

test_at_exit 'for p in $(cat "$TRASH/pids" 2>/dev/null); do kill "$p" 2>/dev/null; done'
