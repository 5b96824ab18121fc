#!/bin/sh
# pi-slice.sh -- one rank's share of pi by the midpoint rule over 4/(1+x^2).
# Each rank integrates every WORLD_SIZE-th strip, starting at its RANK.
: "${RANK:?run me with dtrun}" "${WORLD_SIZE:?run me with dtrun}"
awk -v r="$RANK" -v w="$WORLD_SIZE" -v n=2000000 'BEGIN {
	h = 1 / n; s = 0
	for (i = r; i < n; i += w) { x = h * (i + 0.5); s += 4 / (1 + x * x) }
	printf "rank %d of %d (local %d): partial sum %.12f\n", r, w, ENVIRON["LOCAL_RANK"], s * h
}'
