#!/bin/bash
# run.sh BUILD ["N..."] ["GLOO_N..."] [PER_HOST] -- the store's init load:
# N simulated torch 1.13 ranks running init_process_group's TCPStore
# queries (bench/store/play.c: nccl at every N, gloo's N^2 exchange at the
# small GLOO_N) against (a) PyTorch's own TCPStore server (torchserve.py,
# /usr/bin/python3), (b) dtrun's store on a TCP port (storeserve), both
# driven by storeload, one connection a rank; and (c) dtrun itself, every
# rank's connection through its host's agent: storeagent stand-ins, PER_HOST
# ranks a host, under the real dtrun local launcher, at every N and at
# 98,304 (1,536 hosts of 64). Each time runs from the first byte sent to
# the last rank through; a run past STORE_TIMEOUT seconds (default 60)
# prints "timeout". Prints one table, with dtrun's peak RSS per rank for
# the agents runs (its whole run, start included) and its CPU within the
# init (sampled about every 100 ms, from before its start to after its end;
# "-" where no sample brackets it: a short run), and the bounds of issue
# 34. Not a test: timings are this machine's, at this moment.
set -u
B=$(cd "${1:-build}" && pwd)
NS=${2:-1024 4096 16384}
GNS=${3:-64}
PER=${4:-64}
TMO=${STORE_TIMEOUT:-60}
BIG=${STORE_BIG:-98304}
here=$(cd "$(dirname "$0")" && pwd)
for t in awk seq; do
	command -v $t >/dev/null || { echo "bench-store: skipped: no $t"; exit 0; }
done
W=$(mktemp -d /tmp/dtrun-store-bench.XXXXXX)
sp=
trap '[ -n "$sp" ] && kill $sp 2>/dev/null; rm -rf "$W"' EXIT
torch=1
/usr/bin/python3 -c 'import torch.distributed' 2>/dev/null || {
	echo "bench-store: torch skipped: /usr/bin/python3 has no torch"; torch=; }

# serve CMD...: starts a server that writes its port to $W/port; sets sp.
serve() {
	rm -f "$W/port"
	"$@" >/dev/null 2>"$W/serve.err" &
	sp=$!
	for i in $(seq 600); do
		[ -s "$W/port" ] && return 0
		kill -0 $sp 2>/dev/null || break
		sleep 0.05
	done
	echo "bench-store: $1 did not start:" >&2; cat "$W/serve.err" >&2
	return 1
}

# direct BACKEND N CMD...: storeload against the server CMD; prints ms,
# "timeout" or "failed".
direct() {
	local be=$1 n=$2 out
	shift 2
	serve "$@" || { echo failed; return; }
	out=$("$B/bench/storeload" -p "$(cat "$W/port")" -b "$be" -n "$n" \
	    -t "$TMO" 2>&1)
	case $? in
	0) echo "$out" | sed -n 's/.* ranks in \([0-9.]*\) ms.*/\1/p' ;;
	2) echo timeout ;;
	*) echo "bench-store: $be $n against $1: $out" >&2; echo failed ;;
	esac
	kill $sp 2>/dev/null; wait $sp 2>/dev/null; sp=
}

# cpu_of PID: samples "NS TICKS" (its CPU so far) every 100 ms while it runs.
cpu_of() {
	while [ -r "/proc/$1/stat" ] && [ "$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null)" != Z ]; do
		echo "$(date +%s%N) $(awk '{ print $14 + $15 }' "/proc/$1/stat" 2>/dev/null)"
		sleep 0.1
	done
}

# agents BACKEND N: through dtrun's agents; prints "ms cpu_ms rss_per_rank":
# the init's time, dtrun's CPU within it, dtrun's peak RSS over N.
agents() {
	local be=$1 n=$2 h=$(( ($2 + PER - 1) / PER )) r mp mq dp= hz
	seq -f "sim%05g slots=$PER" 1 "$h" >"$W/hosts"
	rm -rf "$W/d" && mkdir "$W/d"
	DTRUN_AGENT=$B/bench/storeagent LOAD_DIR=$W/d timeout $((TMO + 120)) \
	    "$B/bench/measure" "$B/dtrun" -q --launcher local --oversubscribe \
	    --framework pytorch --start-timeout 120 -x STORE_BACKEND=$be \
	    -n "$n" -H "$W/hosts" true 2>"$W/m" >/dev/null &
	mp=$!
	for i in $(seq 200); do		# timeout, measure, then dtrun
		mq=$(pgrep -P $mp -x measure | head -n 1)
		[ -n "$mq" ] && dp=$(pgrep -P "$mq" -x dtrun | head -n 1)
		[ -n "$dp" ] && break
		sleep 0.02
	done
	: >"$W/cpu"
	[ -n "$dp" ] && cpu_of "$dp" >"$W/cpu"
	wait $mp
	hz=$(getconf CLK_TCK)
	r=$(cat "$W"/d/agent.* 2>/dev/null | awk -v n="$n" '
	    NR == 1 || $1 < f { f = $1 } $2 > l { l = $2 } { t += $3 }
	    END { if (t == n) printf "%.1f %.0f %.0f", (l - f) / 1e6, f, l; else print "failed" }')
	if [ "$r" = failed ] || ! grep -q 'exit=0 ' "$W/m"; then
		echo "bench-store: $be $n through agents failed:" >&2
		cat "$W/m" >&2
		echo "failed - -"
		return
	fi
	set -- $r
	echo "$1 $(awk -v f="$2" -v l="$3" -v hz="$hz" '
	    $2 == "" { next } $1 <= f { a = $2; ha = 1 } $1 >= l && !hb { b = $2; hb = 1 }
	    END { if (ha && hb) printf "%.0f", (b - a) * 1000 / hz; else print "-" }' \
	    "$W/cpu" 2>/dev/null || echo -) \
	    $(sed -n 's/.*peak_rss_kb=\([0-9]*\).*/\1/p' "$W/m" |
	    awk -v n="$n" '{ printf "%.0f", $1 * 1024 / n }')"
}

ratio() {
	awk -v a="$1" -v b="$2" 'BEGIN {
	    if (a + 0 > 0 && b + 0 > 0) printf "%.1fx", a / b; else print "-" }'
}

echo "== torch 1.13 init_process_group's store queries, N ranks ($(nproc) cores, timeout ${TMO} s a run)"
fmt="%6s %-7s %10s %13s %10s %12s %11s %12s %10s\n"
printf "$fmt" N backend torch_ms storeserve_ms agents_ms dtrun_cpu_ms torch/serve torch/agents rss_B/rank
: >"$W/rows"
for row in $(for n in $GNS; do echo gloo:$n; done; for n in $NS; do echo nccl:$n; done; echo nccl:$BIG); do
	be=${row%%:*} n=${row#*:}
	t=- s=- a=- cpu=- rss=-
	if [ "$n" -le 16384 ]; then
		[ -n "$torch" ] && t=$(direct "$be" "$n" /usr/bin/python3 "$here/torchserve.py" "$W/port")
		s=$(direct "$be" "$n" "$B/helpers/storeserve" -o "$W/port")
	fi
	read a cpu rss < <(agents "$be" "$n")
	printf "$fmt" "$n" "$be" "$t" "$s" "$a" "$cpu" "$(ratio "$t" "$s")" \
	    "$(ratio "$t" "$a")" "$rss"
	echo "$n $be $t $a $rss" >>"$W/rows"
done
awk -v big=$BIG '
	$2 == "nccl" && $3 + 0 > 0 && $4 + 0 > 0 && $1 + 0 > tn { tn = $1; r = $3 / $4 }
	$1 == big { ms = $4; rss = $5 }
	END {
		printf "bounds: %d ranks through agents in %s ms (<= 3000: %s); ", big, ms,
		    (ms + 0 > 0 && ms <= 3000 ? "met" : "MISSED")
		if (tn) printf "torch/agents at N=%d, the largest torch completed: %.1fx (>= 30x: %s); ", tn, r, (r >= 30 ? "met" : "MISSED")
		else printf "torch completed no N; "
		printf "dtrun peak RSS %s B a rank at %d (<= 2048: %s)\n", rss, big,
		    (rss + 0 > 0 && rss <= 2048 ? "met" : "MISSED")
	}' "$W/rows"
