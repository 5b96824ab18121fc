/*
 * simrank.c -- the scale harness's rank (bench/scale/run.sh):
 *
 *	simrank DIR start	write DIR/start.RANK (the wall clock, ns), exit 0
 *	simrank DIR join	start, then join the rendezvous (dtcomm_init) and
 *				wait in a barrier for every rank; then write
 *				DIR/joined.RANK and exit 0
 *	simrank DIR fail MS	start; rank 0 waits MS ms, writes DIR/fail and
 *				exits 1; every other rank sleeps until killed
 *	simrank DIR lines N	start, then print N lines of 80 bytes
 *
 * RANK comes from the environment dtrun gives every rank.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "comm/dtcomm.h"

/* Writes the wall clock in ns to DIR/name.RANK (or DIR/name without a rank). */
static void
stamp(const char *dir, const char *name, const char *rank)
{
	struct timespec	ts;
	char		path[4096], buf[32];
	int		fd, n;

	clock_gettime(CLOCK_REALTIME, &ts);
	n = snprintf(buf, sizeof(buf), "%lld\n",
	    (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec);
	snprintf(path, sizeof(path), "%s/%s%s%s", dir, name, rank ? "." : "",
	    rank ? rank : "");
	if ((fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644)) == -1 ||
	    write(fd, buf, n) != n)
		exit(70);
	close(fd);
}

int
main(int argc, char **argv)
{
	const char	*rank = getenv("RANK");
	struct dtcomm	*c;
	char		 line[128];
	long		 i, n;
	int		 rc;

	if (argc < 3 || rank == NULL) {
		fprintf(stderr, "usage: simrank DIR start|join|fail MS|lines N "
		    "(under dtrun)\n");
		return 2;
	}
	stamp(argv[1], "start", rank);
	if (strcmp(argv[2], "join") == 0) {
		if ((rc = dtcomm_init(&c)) != 0 || (rc = dtcomm_barrier(c)) != 0) {
			fprintf(stderr, "simrank: %s: %s\n", dtcomm_strerror(rc),
			    dtcomm_last_error());
			return 1;
		}
		stamp(argv[1], "joined", rank);
		dtcomm_free(c);
	} else if (strcmp(argv[2], "fail") == 0 && argc > 3) {
		if (atoi(rank) != 0)
			for (;;)
				pause();
		usleep((useconds_t)atol(argv[3]) * 1000);
		stamp(argv[1], "fail", NULL);
		return 1;
	} else if (strcmp(argv[2], "lines") == 0 && argc > 3) {
		n = atol(argv[3]);
		for (i = 0; i < n; i++) {
			snprintf(line, sizeof(line), "%06ld %s loss 0.4242 lr "
			    "3e-4 tokens/s 51234 ..............................",
			    i, rank);
			puts(line);
		}
	} else if (strcmp(argv[2], "start") != 0) {
		fprintf(stderr, "simrank: unknown mode %s\n", argv[2]);
		return 2;
	}
	return 0;
}
