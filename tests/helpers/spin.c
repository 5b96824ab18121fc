/*
 * spin.c -- a rank that never ends, for stack captures: it prints "spinning"
 * and spins in spin_here() (a busy loop); with an argument N, rank N (from
 * DTRUN_RANK) sleeps in nap_here() instead, an outlier; with "nap" every
 * rank does (as many ranks as a benchmark wants, on few cores). Each writes its
 * pid to ./pid.RANK first.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

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
	char		 path[64];
	FILE		*f;

	snprintf(path, sizeof(path), "pid.%s", r != NULL ? r : "x");
	if ((f = fopen(path, "w")) != NULL) {
		fprintf(f, "%d\n", (int)getpid());
		fclose(f);
	}
	printf("spinning\n");
	fflush(stdout);
	if (argc > 1 && (strcmp(argv[1], "nap") == 0 ||
	    (r != NULL && atoi(argv[1]) == atoi(r))))
		nap_here();
	spin_here();
	return 0;
}
