/*
 * spin.c -- a rank that never ends, for stack captures: it prints "spinning"
 * and spins in spin_here() (a busy loop); with an argument N, rank N (from
 * DTRUN_RANK) sleeps in nap_here() instead, an outlier.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

volatile unsigned long	spin_count;

/* Loops forever without a system call. */
static __attribute__((noinline)) void
spin_here(void)
{
	for (;;)
		spin_count++;
}

/* Sleeps forever. */
static __attribute__((noinline)) void
nap_here(void)
{
	struct timespec	ts = { 3600, 0 };

	for (;;)
		nanosleep(&ts, NULL);
}

int
main(int argc, char **argv)
{
	const char	*r = getenv("DTRUN_RANK");

	printf("spinning\n");
	fflush(stdout);
	if (argc > 1 && r != NULL && atoi(argv[1]) == atoi(r))
		nap_here();
	spin_here();
	return 0;
}
