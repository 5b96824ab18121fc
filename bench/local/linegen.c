/*
 * linegen.c -- writes N lines of exactly 80 bytes ("RRRR NNNNNNNNN xxx...\n")
 * to stdout, for the log throughput benchmark. The rank comes from RANK or
 * OMPI_COMM_WORLD_RANK so the same binary serves dtrun and mpirun. With
 * LINEGEN_NOISE set, the 64 bytes after the number are random hex, which
 * LZ4 cannot shrink: the worst case for a link that packs its output.
 * With LINEGEN_STDERR set, the lines go to stderr instead.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int
main(int argc, char **argv)
{
	const char	*r = getenv("RANK"), *hex = "0123456789abcdef";
	char		 buf[80 * 512], *p, text[65];
	unsigned long	 x;
	long		 n, i;
	int		 rank, k, j, noise = getenv("LINEGEN_NOISE") != NULL;
	int		 fd = getenv("LINEGEN_STDERR") != NULL ? 2 : 1;

	if (r == NULL)
		r = getenv("OMPI_COMM_WORLD_RANK");
	rank = r ? atoi(r) : 0;
	n = argc > 1 ? atol(argv[1]) : 250000;
	x = 88172645463325252UL + (unsigned long)rank;
	strcpy(text, "the quick brown fox jumps over the lazy dog 0123456789");
	for (i = 0; i < n;) {
		p = buf;
		for (k = 0; k < 512 && i < n; k++, i++) {
			for (j = 0; noise && j < 64; j++) {
				x ^= x << 13;	/* xorshift64 */
				x ^= x >> 7;
				x ^= x << 17;
				text[j] = hex[x & 15];
			}
			snprintf(p, 81, "%04d %09ld %-64s\n", rank, i, text);
			p += 80;
		}
		if (write(fd, buf, p - buf) != p - buf)
			return 1;
	}
	return 0;
}
