#!/bin/sh
# demo.sh BUILDDIR -- a real job with the local launcher: 4 ranks compute pi
# together, then a job whose rank 2 fails shows fail-fast.
B=${1:-build}
here=$(cd "$(dirname "$0")" && pwd)
set -e
echo "== dtrun -n 4 examples/pi-slice.sh"
"$B/dtrun" -n 4 "$here/pi-slice.sh" | tee /tmp/dtrun-demo.$$
awk '{ s += $NF } END { printf "pi ~= %.10f (sum of the 4 partial sums)\n", s }' /tmp/dtrun-demo.$$
rm -f /tmp/dtrun-demo.$$
echo
echo "== fail-fast: rank 2 exits 3 while the others sleep"
set +e
"$B/dtrun" -n 4 --prefix '[rank %r] ' sh -c 'echo started; [ "$RANK" = 2 ] && exit 3; exec sleep 60'
echo "dtrun exited with $? (rank 2's code), the other ranks were stopped at once"

# Where dtrun is, and how to type plain "dtrun" as the README does.
bin=$(cd "$B" && pwd)
echo
echo "dtrun is $bin/dtrun. To type plain \"dtrun\", put it on your PATH:"
echo "  export PATH=\"$bin:\$PATH\""
echo "or install it: make install (~/.local/bin, or /usr/local/bin as root),"
echo "or pip install --no-build-isolation . (into the active venv)."
