/*
 * dump.c -- one rank of a job that prints its config at start, as a
 * torchtitan rank does: sleeps a random 0..SKEW ms (seeded by SEED and the
 * rank: the same run twice is the same run), then prints LINES lines of
 * "key: value" in sections, with blank lines and rules between them (the
 * same text many times over), all the same on every rank but three that
 * name the rank. "dump LINES SKEW SEED"; SKEW 0 prints at once (what the
 * benchmark checks each rank's output against).
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

int
main(int argc, char **argv)
{
	const char	*r = getenv("RANK");
	long		 lines = argc > 1 ? atol(argv[1]) : 2000, i;
	long		 skew = argc > 2 ? atol(argv[2]) : 2000;
	unsigned long	 x = argc > 3 ? strtoul(argv[3], NULL, 10) : 1;
	int		 rank = r ? atoi(r) : 0, k;
	struct timespec	 ts;

	x = x * 6364136223846793005UL + (unsigned long)rank * 1442695040888963407UL + 1;
	for (k = 0; k < 4; k++)
		x = x * 6364136223846793005UL + 1442695040888963407UL;
	if (skew > 0) {
		ts.tv_sec = (x >> 33) % skew / 1000;
		ts.tv_nsec = (long)((x >> 33) % skew % 1000) * 1000000;
		nanosleep(&ts, NULL);
	}
	for (i = 0; i < lines; i++) {
		if (i == 1)
			printf("rank: %d\n", rank);
		else if (i == 2)
			printf("local_rank: %d\n", rank % 8);
		else if (i == lines / 2)
			printf("seed: %d\n", 1234 + rank);
		else if (i % 50 == 0)
			printf("[section_%ld]\n", i / 50);
		else if (i % 50 == 48)
			printf("\n");
		else if (i % 50 == 49)
			printf("------------------------------------------------\n");
		else
			printf("  section_%ld.key_%ld: %ld\n", i / 50, i % 50,
			    i * 7919 % 10007);
	}
	return 0;
}
