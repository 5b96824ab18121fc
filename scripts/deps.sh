#!/bin/sh
# deps.sh [bench] -- installs the Debian packages that dtrun's build and tests need,
# only those missing. As root it runs apt-get; otherwise it prints the line.
set -u

# build: compiler, libc6-dev (libc.a too: dtrun-agent is linked whole),
#        pkg-config, the three libraries, OpenSSL's libcrypto and LZ4
# install: python3-venv and python3-pip for `pip install .` into a venv (the
#        wheel is built by scripts/dtrun_build.py with the standard library:
#        no setuptools or wheel needed)
# tests: sshd and ssh for the loopback hosts, rsync for sync, PyTorch for
#        framework checks, procps/iproute2 for process and namespace checks,
#        slurm-wlm and munge for a private one-node Slurm cluster
# fuzz: clang (libFuzzer)
# stacks (dtrun's "when a job hangs", on every host): gdb and elfutils
#        (eu-stack) for native frames, python3-dbg for Python frames (gdb
#        reads them with the interpreter's gdb extension and debug symbols)
PKGS="gcc libc6-dev make pkg-config libevent-dev libyaml-dev libssh2-1-dev libssl-dev liblz4-dev
openssh-server openssh-client rsync python3 python3-venv python3-pip python3-torch
procps iproute2 clang
slurm-wlm munge gdb elfutils python3-dbg"

# deps.sh bench: also the peers the benchmarks compare against, and hyperfine.
[ "${1:-}" = bench ] && PKGS="$PKGS hyperfine openmpi-bin pdsh pssh"

missing=""
for p in $PKGS; do
	st=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)
	case "$st" in
	*" installed") ;;
	*) missing="$missing $p" ;;
	esac
done
[ -z "$missing" ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
	echo "dtrun: these packages are missing; install them with:" >&2
	echo "  sudo apt-get install -y$missing" >&2
	exit 1
fi
echo "deps: installing$missing" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -q >&2 || exit 1
apt-get install -y -q --no-install-recommends $missing >&2
