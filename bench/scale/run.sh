#!/bin/bash
# run.sh BUILDDIR [--quick] [--hosts "64 256 1024"] [--ranks "1 8"] [--lag-ms MS]
#
# The scale harness: N simulated hosts on this machine, each a real
# dtrun-agent behind the real link and protocol (dtrun's local launcher
# with a hostfile of N names starts one agent per name), with --lag-ms
# each message held that long each way (bench/scale/lagged.c, so a round
# trip costs 2 x MS). For each size, one run each of:
#   launch     every rank writes the clock as it starts: the last one, from
#              just before dtrun starts; against the floor, posix_spawn of
#              as many processes as the layout needs (agents + ranks)
#   fail-fast  rank 0 exits 1 once all run: its exit -> dtrun's exit;
#              against the floor, SIGTERM to as many sleeping processes
#              (agents + ranks) and reaping them (killfloor.c)
#   logs       every rank prints 80-byte lines (1,000,000 in all): lines/s
#              over the whole run, start included; none may be lost
#   rendezvous every rank joins (libdtcomm) and waits in one barrier: the
#              last rank's start -> the last rank through the barrier
#   dtrun's own CPU (schedstat) and peak RSS per host, from the launch run,
#   and its peak descriptors per host from the rendezvous run (every rank
#   connected), by bench/local/measure.c
# --quick: 64 and 256 hosts of one rank, under two minutes. The last line
# is "scale: hosts=H ranks=R launch_ms=... failfast_ms=... rdzv_ms=...
# cpu_ms_per_host=..." for the largest size.
# Numbers are this machine's, at this moment: compare ratios, not absolutes.
set -eu
for t in python3 cc; do
	command -v "$t" >/dev/null || { echo "bench-scale: skipped: no $t"; exit 0; }
done
B=$(cd "${1:-build}" && pwd)
shift || true
HOSTS="64 256 1024" RANKS="1 8" LAG=0
while [ $# -gt 0 ]; do
	case $1 in
	--quick) HOSTS="64 256" RANKS=1 ;;
	--hosts) HOSTS=$2; shift ;;
	--ranks) RANKS=$2; shift ;;
	--lag-ms) LAG=$2; shift ;;
	*) echo "usage: run.sh BUILDDIR [--quick] [--hosts LIST] [--ranks LIST] [--lag-ms MS]" >&2; exit 2 ;;
	esac
	shift
done
here=$(cd "$(dirname "$0")" && pwd)
for p in simrank lagged measure; do
	[ -x "$B/bench/$p" ] || { echo "bench-scale: $B/bench/$p missing: run make bench-scale" >&2; exit 2; }
done
W=$(mktemp -d /tmp/dtrun-scale.XXXXXX)
trap 'rm -rf "$W"' EXIT
cc -O2 -o "$W/spawnfloor" "$here/../local/spawnfloor.c"
cc -O2 -o "$W/killfloor" "$here/killfloor.c"
if [ "$LAG" != 0 ]; then
	export DTRUN_AGENT=$B/bench/lagged LAGGED_AGENT=$B/dtrun-agent LAGGED_MS=$LAG
fi

# field NAME FILE -- a NAME=VALUE of measure's line.
field() { sed -n "s/.*\<$1=\([-0-9.]*\).*/\1/p" "$2"; }
# newest PREFIX -- the largest ns in $W/d/PREFIX.*
newest() { cat "$W"/d/$1.* | sort -n | tail -1; }
ms() { python3 -c "import sys; print('%.1f' % ((int(sys.argv[1]) - int(sys.argv[2])) / 1e6))" "$1" "$2"; }
div() { python3 -c "import sys; print('%.${3:-2}f' % (float(sys.argv[1]) / float(sys.argv[2])))" "$1" "$2"; }
# run WHAT... -- dtrun over the simulated hosts, measured into $W/m.
run() {
	rm -rf "$W/d" && mkdir "$W/d"
	"$B/bench/measure" "$B/dtrun" -q --launcher local --oversubscribe \
	    -H "$W/hosts" "$B/bench/simrank" "$W/d" "$@" 2>"$W/m" >"$W/out" || true
}
# must COND WHY -- stops the harness when a run went wrong.
must() { eval "$1" || { echo "bench-scale: $2 (hosts=$h ranks/host=$r)" >&2; cat "$W/m" >&2; exit 1; }; }

echo "== scale: simulated hosts (real agents, local links$( [ "$LAG" != 0 ] && echo ", +$LAG ms each way")), one run each"
printf "%6s %5s %7s %10s %9s %7s %12s %9s %7s %10s %8s %12s %12s %9s\n" hosts r/h ranks launch_ms floor_ms ratio failfast_ms floor_ms ratio lines/s rdzv_ms cpu_ms/host rss_kb/host fds/host
last=""
for r in $RANKS; do
	for h in $HOSTS; do
		n=$((h * r))
		seq -f "sim%05g slots=$r" 1 "$h" >"$W/hosts"
		# The floor: the processes this layout starts, by posix_spawn.
		f0=$(date +%s%N); "$W/spawnfloor" $((n + h)) true; f1=$(date +%s%N)
		t0=$(date +%s%N)
		run start
		must '[ "$(field exit "$W/m")" = 0 ] && [ $(ls "$W/d" | wc -l) = $n ]' "not every rank started"
		launch=$(ms "$(newest start)" "$t0")
		floor=$(ms "$f1" "$f0")
		cpu=$(field cpu_ms "$W/m"); rss=$(field peak_rss_kb "$W/m")
		# Rank 0 fails once every rank runs (3x the launch, at least 0.5 s).
		wait_ms=$(python3 -c "print(max(500, int(3 * $launch)))")
		run fail "$wait_ms"
		must '[ "$(field exit "$W/m")" = 1 ] && [ -s "$W/d/fail" ] && [ $(ls "$W"/d/start.* | wc -l) = $n ]' "the fail-fast run did not fail as planned"
		failfast=$(ms "$(field end_ns "$W/m")" "$(cat "$W/d/fail")")
		kfloor=$("$W/killfloor" $((n + h)))
		per=$(( (1000000 + n - 1) / n ))
		run lines "$per"
		must '[ "$(field exit "$W/m")" = 0 ] && [ $(wc -l <"$W/out") = $((per * n)) ]' "lines were lost"
		lps=$(python3 -c "print('%.0f' % ($per * $n / ($(field wall_ms "$W/m") / 1000)))")
		run join
		must '[ "$(field exit "$W/m")" = 0 ] && [ $(ls "$W"/d/joined.* | wc -l) = $n ]' "not every rank joined"
		rdzv=$(ms "$(newest joined)" "$(newest start)")
		fds=$(field peak_fds "$W/m")	# with every rank at the rendezvous
		printf "%6s %5s %7s %10s %9s %7s %12s %9s %7s %10s %8s %12s %12s %9s\n" $h $r $n $launch $floor \
		    "$(div $launch $floor)" $failfast $kfloor "$(div $failfast $kfloor)" $lps $rdzv \
		    "$(div $cpu $h 3)" "$(div $rss $h 1)" "$(div $fds $h 1)"
		last="scale: hosts=$h ranks=$n launch_ms=$launch failfast_ms=$failfast rdzv_ms=$rdzv cpu_ms_per_host=$(div $cpu $h 3)"
	done
done
echo "$last"
