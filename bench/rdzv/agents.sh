#!/bin/bash
# agents.sh BUILD "HOSTS..." PER_HOST -- dtrun's rendezvous with every rank
# reaching it through its host's agent, at HOSTS x PER_HOST ranks (320 x 64
# is 20,480, 768 x 64 49,152, 1,536 x 64 98,304). Each simulated host is one
# bench/rdzv/agentload process on a real local link, playing its ranks'
# channels (JOIN, then a waiting GET of the NCCL id) as a real agent relays
# them. Reports, per size: the rendezvous (the first JOIN sent to the last
# id received, over all hosts), ranks per second, and dtrun's own CPU, peak
# RSS and descriptors for the whole job (start included), beside the
# open-files limit. Numbers are this machine's, at this moment.
set -eu
for t in python3; do
	command -v "$t" >/dev/null || { echo "bench-rdzv-agents: skipped: no $t"; exit 0; }
done
B=$(cd "${1:-build}" && pwd)
HOSTS=${2:-320 768 1536}
PER=${3:-64}
W=$(mktemp -d /tmp/dtrun-rdzv-agents.XXXXXX)
trap 'rm -rf "$W"' EXIT
field() { sed -n "s/.*\<$1=\([-0-9.]*\).*/\1/p" "$2"; }

echo "== rendezvous through agents: $PER ranks per host, one run each (open-files limit $(ulimit -Hn))"
printf "%6s %8s %9s %12s %12s %10s %10s %9s\n" hosts ranks rdzv_ms ranks/s job_wall_ms cpu_ms rss_kb fds
for h in $HOSTS; do
	n=$((h * PER))
	seq -f "sim%05g slots=$PER" 1 "$h" >"$W/hosts"
	rm -rf "$W/d" && mkdir "$W/d"
	DTRUN_AGENT=$B/bench/agentload LOAD_DIR=$W/d "$B/bench/measure" \
	    "$B/dtrun" -q --launcher local --oversubscribe --start-timeout 120 \
	    -H "$W/hosts" true 2>"$W/m" >/dev/null || true
	if [ "$(field exit "$W/m")" != 0 ] || [ $(ls "$W/d" | wc -l) != $h ]; then
		echo "bench-rdzv-agents: the run at $h hosts failed:" >&2
		cat "$W/m" >&2
		exit 1
	fi
	read first last total < <(cat "$W"/d/agent.* | awk '
	    NR == 1 || $1 < f { f = $1 } $2 > l { l = $2 } { t += $3 }
	    END { printf "%s %s %d\n", f, l, t }')
	[ "$total" = $n ] || { echo "bench-rdzv-agents: $total of $n ranks got the id" >&2; exit 1; }
	ms=$(python3 -c "print('%.1f' % (($last - $first) / 1e6))")
	printf "%6s %8s %9s %12s %12s %10s %10s %9s\n" $h $n $ms \
	    "$(python3 -c "print('%.0f' % ($n / (($last - $first) / 1e9)))")" \
	    "$(field wall_ms "$W/m")" "$(field cpu_ms "$W/m")" \
	    "$(field peak_rss_kb "$W/m")" "$(field peak_fds "$W/m")"
done
