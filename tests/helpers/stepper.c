/*
 * stepper.c -- a training loop's shape, for the straggler tests:
 *
 *	stepper [-c] [-s SLOWRANK] [-f FACTOR] [-p SECS] [-n STEPS] [-e FILE]
 *
 * Each rank takes SECS a step (default 0.2; rank SLOWRANK FACTOR times
 * that), give or take 3%, on a steady clock, for STEPS steps (default
 * 200), or until FILE exists (looked for before each step): a test ends
 * the job once it has seen what it waits for. With -c it joins the
 * rendezvous (dtcomm_init) and reports each step with dtcomm_step(),
 * printing nothing; else it prints
 * "step N loss 0.NNNN" per step. Errors: "stepper: CALL: NAME: DETAIL",
 * exit 1.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "comm/dtcomm.h"

static double
now(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int
main(int argc, char **argv)
{
	struct dtcomm	*c = NULL;
	const char	*r = getenv("DTRUN_RANK"), *end = NULL;
	double		 per = 0.2, factor = 1.15, t, d;
	long		 steps = 200, i;
	int		 ch, comm = 0, slow = -1, rank = r != NULL ? atoi(r) : 0, rc;

	while ((ch = getopt(argc, argv, "cs:f:p:n:e:")) != -1) {
		switch (ch) {
		case 'c': comm = 1; break;
		case 's': slow = atoi(optarg); break;
		case 'f': factor = atof(optarg); break;
		case 'p': per = atof(optarg); break;
		case 'n': steps = atol(optarg); break;
		case 'e': end = optarg; break;
		default:
			fprintf(stderr, "usage: stepper [-c] [-s RANK] [-f FACTOR] "
			    "[-p SECS] [-n STEPS] [-e FILE]\n");
			return 2;
		}
	}
	if (comm && (rc = dtcomm_init(&c)) != 0) {
		fprintf(stderr, "stepper: dtcomm_init: %s: %s\n",
		    dtcomm_strerror(rc), dtcomm_last_error());
		return 1;
	}
	if (rank == slow)
		per *= factor;
	srand(rank + 1);
	for (i = 0, t = now(); i < steps; i++) {
		if (end != NULL && access(end, F_OK) == 0)
			break;
		t += per * (0.97 + (rand() % 61) / 1000.0);
		if ((d = t - now()) > 0)
			usleep((useconds_t)(d * 1e6));
		if (comm)
			dtcomm_step(c, i);
		else
			printf("step %ld loss 0.%04d\n", i, rand() % 10000);
		fflush(stdout);
	}
	dtcomm_free(c);
	return 0;
}
