#!/bin/bash
# collapse.sh BUILD [NP] [STEPS] -- what --collapse saves on a terminal: NP
# ranks (default 64, --oversubscribe) of a Python "training" script that
# meet at a start barrier (as init_process_group would), then keep in step
# on a 100 ms clock (as their collectives would); each prints its own loss
# line every step on stdout, and 3 warnings on stderr at steps 0, 10, 20...
# as Python's warnings module would. Counts the terminal's lines with and
# without --collapse, checks no loss line is lost, prints the ratio.
set -eu
B=$(cd "${1:-build}" && pwd)
NP=${2:-64}
STEPS=${3:-50}
command -v python3 >/dev/null || { echo "bench-logs-collapse: skipped: no python3"; exit 0; }
W=$(mktemp -d /tmp/dtrun-bench-collapse.XXXXXX)
trap 'rm -rf "$W"' EXIT
cat >"$W/train.py" <<'EOP'
import os, sys, time
rank, world, steps, bar = (int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"]),
    int(sys.argv[1]), sys.argv[2])
open(os.path.join(bar, str(rank)), "w").close()
while len(os.listdir(bar)) < world:
	time.sleep(0.05)
t0 = os.stat(bar).st_mtime + 1.0	# the same start for every rank
warns = ["UserWarning: torch.cuda.amp.GradScaler(args...) is deprecated",
    "UserWarning: TypedStorage is deprecated",
    "FutureWarning: `resume_download` is deprecated and will be removed"]
for step in range(steps):
	time.sleep(max(0.0, t0 + step * 0.1 - time.time()))
	if step % 10 == 0:
		for w in warns:
			print(w, file=sys.stderr, flush=True)
	print("step %d loss %.4f" % (step, 2.0 / (1 + step) + rank * 1e-4), flush=True)
EOP

# run NAME FLAGS... -- one job; prints its terminal line count.
run() {
	name=$1
	shift
	rm -rf "$W/bar" && mkdir "$W/bar"
	"$B/dtrun" -n "$NP" --oversubscribe "$@" python3 "$W/train.py" "$STEPS" "$W/bar" \
	    >"$W/$name.out" 2>"$W/$name.err"
	loss=$(grep -c " loss " "$W/$name.out")
	[ "$loss" = $((NP * STEPS)) ] || { echo "$name: $loss loss lines, want $((NP * STEPS))" >&2; exit 1; }
	cat "$W/$name.out" "$W/$name.err" | wc -l
}
plain=$(run plain)
coll=$(run collapse --collapse)
merged=$(grep -c '^\[[0-9]*[-,]' "$W/collapse.err" || true)
echo "ranks $NP, steps $STEPS: terminal lines $plain without --collapse, $coll with"
echo "(stderr: $(wc -l <"$W/plain.err") -> $(wc -l <"$W/collapse.err") lines, $merged of them merged)"
python3 -c "print('reduction: %.2fx fewer lines' % ($plain / $coll))"
