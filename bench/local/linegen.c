/*
 * linegen.c -- writes N lines of exactly 80 bytes ("RRRR NNNNNNNNN xxx...\n")
 * to stdout, for the log throughput benchmark. The rank comes from RANK or
 * OMPI_COMM_WORLD_RANK so the same binary serves dtrun and mpirun.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int
main(int argc, char **argv)
{
	const char	*r = getenv("RANK");
	char		 buf[80 * 512], *p;
	long		 n, i;
	int		 rank, k;

	if (r == NULL)
		r = getenv("OMPI_COMM_WORLD_RANK");
	rank = r ? atoi(r) : 0;
	n = argc > 1 ? atol(argv[1]) : 250000;
	for (i = 0; i < n;) {
		p = buf;
		for (k = 0; k < 512 && i < n; k++, i++) {
			snprintf(p, 81, "%04d %09ld %-64s\n", rank, i,
			    "the quick brown fox jumps over the lazy dog 0123456789");
			p += 80;
		}
		if (write(1, buf, p - buf) != p - buf)
			return 1;
	}
	return 0;
}
